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
