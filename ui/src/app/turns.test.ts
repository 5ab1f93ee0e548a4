import { describe, expect, it } from "vitest";
import type { AgentEvent, ModelInfo } from "../ipc/types";
import { availabilityOf, routeResult, type TurnDeps, Turns } from "./turns";

const info = { facts: { path: "/models/m.gguf", name: "m" }, is_default: true } as ModelInfo;

function finished(tool: string, success: boolean, data: unknown): Extract<AgentEvent, { event: "tool_finished" }> {
  return {
    event: "tool_finished",
    call_id: "call-1",
    tool,
    success,
    error_type: success ? "none" : "io_error",
    execution_time_ms: 1,
    result: { success, data, error_message: null, error_type: success ? "none" : "io_error", metadata: { execution_time_ms: 1, data_size_bytes: 0, timestamp: 0 } },
  };
}

function targets() {
  const seen: string[] = [];
  return {
    seen,
    editor: {
      changedOnDisk: async (path: string) => void seen.push(`reload ${path}`),
      showDiagnostics: (data: unknown) => void seen.push(`diagnostics ${JSON.stringify(data)}`),
    },
    refreshTree: () => void seen.push("tree"),
    refreshLists: () => void seen.push("lists"),
  };
}

describe("whether the chat can send", () => {
  it("needs a folder first, then a loaded model", () => {
    expect(availabilityOf(false, { kind: "ready", info })).toEqual({ ready: false, reason: "Open a folder to start." });
    expect(availabilityOf(true, { kind: "loading", path: "m", progress: { stage: "calibrating" } })).toEqual({ ready: false, reason: "The model is loading…" });
    expect(availabilityOf(true, { kind: "error", message: "bad file" })).toEqual({ ready: false, reason: "No model is loaded — see the Model tab." });
    expect(availabilityOf(true, { kind: "none", reason: "" })).toEqual({ ready: false, reason: "No model is loaded — see the Model tab." });
    expect(availabilityOf(true, { kind: "ready", info })).toEqual({ ready: true });
  });
});

describe("results routed by the kind their tool declares", () => {
  it("reloads a written file, and lists a created one in the tree", () => {
    const t = targets();
    routeResult(finished("write_file", true, { path: "src/a.ts", created: false }), "write", t);
    expect(t.seen).toEqual(["reload src/a.ts", "lists"]);
    t.seen.length = 0;
    routeResult(finished("write_file", true, { path: "src/b.ts", created: true }), "write", t);
    expect(t.seen).toEqual(["reload src/b.ts", "tree", "lists"]);
  });

  it("puts diagnostics on the open files", () => {
    const t = targets();
    routeResult(finished("get_diagnostics", true, { findings: [] }), "diagnostics", t);
    expect(t.seen).toEqual(['diagnostics {"findings":[]}']);
  });

  it("goes by the kind, not the name: any tool that declares a write reloads its file", () => {
    const t = targets();
    routeResult(finished("append_note", true, { path: "notes.md", created: false }), "write", t);
    expect(t.seen).toEqual(["reload notes.md", "lists"]);
  });

  it("leaves failed calls, writes without a path, other kinds and unknown tools alone", () => {
    const t = targets();
    routeResult(finished("write_file", false, { path: "src/a.ts" }), "write", t);
    routeResult(finished("get_diagnostics", false, null), "diagnostics", t);
    routeResult(finished("write_file", true, null), "write", t);
    routeResult(finished("read_file", true, { path: "src/a.ts" }), "file_content", t);
    routeResult(finished("write_file", true, { path: "src/a.ts", created: true }), undefined, t);
    expect(t.seen).toEqual([]);
  });
});

describe("a call written by hand", () => {
  function turnsSeen() {
    const busy: boolean[] = [];
    const deps = { chat: { setAvailability: () => {}, setBusy: (on: boolean) => void busy.push(on) }, folderOpen: () => true, modelState: () => ({ kind: "ready", info }) };
    return { busy, turns: new Turns(deps as unknown as TurnDeps) };
  }

  it("holds the conversation while it runs, so the chat offers Stop, and frees it after", async () => {
    const { busy, turns } = turnsSeen();
    let finish: (value: string) => void = () => {};
    const running = turns.whileCallRuns(() => new Promise<string>((resolve) => (finish = resolve)));
    expect([turns.running, busy.at(-1)]).toEqual([true, true]);
    finish("done");
    expect(await running).toBe("done");
    expect([turns.running, busy.at(-1)]).toEqual([false, false]);
  });

  it("frees the conversation when the call fails", async () => {
    const { busy, turns } = turnsSeen();
    await expect(turns.whileCallRuns(() => Promise.reject(new Error("refused")))).rejects.toThrow("refused");
    expect([turns.running, busy.at(-1)]).toEqual([false, false]);
  });
});
