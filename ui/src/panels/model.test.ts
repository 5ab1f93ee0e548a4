import { afterEach, describe, expect, it } from "vitest";
import { ModelPanel } from "./model";

afterEach(() => document.body.replaceChildren());

function panel(): ModelPanel {
  const root = document.createElement("div");
  document.body.append(root);
  return new ModelPanel(root, {
    load: () => {},
    pick: () => {},
    probe: () => {},
    refreshList: () => {},
    listModels: async () => [],
    test: async () => ({ models: [], model: "", model_listed: false, calls: null, why: "" }),
    connect: async () => {},
  });
}

describe("ModelPanel's project instructions", () => {
  it("names the file and its cost in tokens, or in characters when none can be counted", () => {
    const p = panel();
    p.setRules({ path: "AGENTS.md", text: "Run make check.", cut: false, chars: 120, tokens: 31 });
    const summary = document.querySelector(".rules-summary")!.textContent!;
    expect(summary).toContain("AGENTS.md");
    expect(summary).toContain("31 tokens (120 characters)");
    expect(document.querySelector(".rules-text pre")!.textContent).toBe("Run make check.");
    p.setRules({ path: "CLAUDE.md", text: "x", cut: true, chars: 4096, tokens: null });
    expect(document.querySelector(".rules-summary")!.textContent).toContain("4096 characters of the context");
    expect(document.querySelector(".rules-summary")!.textContent).toContain("cut to its limit");
    p.setRules(null);
    expect(document.querySelector(".rules")!.textContent).toContain("no AGENTS.md");
  });
});

describe("ModelPanel's map of the code", () => {
  it("says whether conversations open with it, and what it costs", () => {
    const p = panel();
    const text = "MAP OF THE PROJECT'S CODE\nsrc/cart.ts\n  export function total(cart)\n";
    p.setCodeMap({ given: true, budget: 4096, text, chars: 61, tokens: 17 });
    const summary = () => document.querySelector(".code-map-summary")!.textContent!;
    expect(summary()).toContain("17 tokens (61 characters) of the context, given at the start of each conversation");
    expect(summary()).toContain("at most 4096 characters");
    expect(document.querySelector(".code-map-text pre")!.textContent).toBe(text);
    p.setCodeMap({ given: false, budget: 6000, text, chars: 61, tokens: null });
    expect(summary()).toContain("Not given to this model");
    expect(summary()).toContain("61 characters");
    p.setCodeMap({ given: true, budget: 4096, text: "", chars: 0, tokens: 0 });
    expect(document.querySelector(".code-map")!.textContent).toContain("defines nothing");
    p.setCodeMap("No folder is open.");
    expect(document.querySelector(".code-map")!.textContent).toBe("No folder is open.");
  });
});
