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
