import { afterEach, describe, expect, it } from "vitest";
import type { Checkpoint } from "../ipc/types";
import { SettingsPanel } from "./settings";

function checkpoint(id: string, state: Partial<Checkpoint> = {}): Checkpoint {
  return {
    id,
    path: "src/main.ts",
    before: "aaa",
    after: "bbb",
    origin: "write_file",
    time_ms: 0,
    undone: false,
    evicted: false,
    ...state,
  };
}

afterEach(() => document.body.replaceChildren());

describe("SettingsPanel writes", () => {
  it("offers undo only for writes that can still be undone", () => {
    const root = document.createElement("div");
    document.body.append(root);
    const undone: string[] = [];
    const panel = new SettingsPanel(root, {
      save: async () => null,
      reloadModel: () => {},
      revoke: () => {},
      undo: (id) => undone.push(id),
      refresh: () => {},
      mcp: { change: async () => null, restart: () => {} },
    });
    panel.setCheckpoints([
      checkpoint("cp-1", { evicted: true }),
      checkpoint("cp-2", { undone: true }),
      checkpoint("cp-3"),
    ]);
    const rows = [...root.querySelectorAll<HTMLElement>(".write-row")];
    expect(rows.map((r) => r.dataset.id)).toEqual(["cp-3", "cp-2", "cp-1"]);
    expect(rows.map((r) => r.querySelector(".undo-button") !== null)).toEqual([true, false, false]);
    expect(rows[1]!.textContent).toContain("undone");
    expect(rows[2]!.textContent).toContain("not kept");
    rows[0]!.querySelector<HTMLButtonElement>(".undo-button")!.click();
    expect(undone).toEqual(["cp-3"]);
  });
});

describe("SettingsPanel form", () => {
  it("saves the map of the code's budget, and an empty field as the default", async () => {
    const root = document.createElement("div");
    document.body.append(root);
    const saved: (number | null)[] = [];
    const panel = new SettingsPanel(root, {
      save: async (settings) => {
        saved.push(settings.repo_map);
        return null;
      },
      reloadModel: () => {},
      revoke: () => {},
      undo: () => {},
      refresh: () => {},
      mcp: { change: async () => null, restart: () => {} },
    });
    panel.setSettings({ max_steps: 10, grammar: true, temperature: 0, context: null, tool_choice: "auto", thinking_budget: 512, repo_map: 3000 });
    const map = root.querySelector<HTMLInputElement>('input[name="repo_map"]')!;
    expect(map.value).toBe("3000");
    map.value = "";
    map.dispatchEvent(new Event("change"));
    await new Promise((r) => setTimeout(r, 0));
    map.value = "0";
    map.dispatchEvent(new Event("change"));
    await new Promise((r) => setTimeout(r, 0));
    expect(saved).toEqual([null, 0]);
  });
});
