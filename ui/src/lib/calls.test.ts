import { describe, expect, it } from "vitest";
import type { AgentEvent, ToolResult } from "../ipc/types";
import { CallLog, callAsJson, matches, statusOf } from "./calls";

function result(success: boolean, data: unknown = null, error_type: ToolResult["error_type"] = "none"): ToolResult {
  return {
    success,
    data,
    error_message: success ? null : "went wrong",
    error_type,
    metadata: { execution_time_ms: 3, data_size_bytes: 120, timestamp: 1 },
  };
}

const parsed: AgentEvent = {
  event: "call_parsed",
  step: 1,
  call_id: "call-1",
  tool: "write_file",
  args: { path: "src/a.ts", content: "x" },
  reasoning: "fix the bug",
  dialect: "lantern",
  constrained: true,
  call_confidence: -0.4,
  raw: '<TOOL_CALL>{"tool":"write_file"}</TOOL_CALL>',
  span: { start: 5, end: 46 },
  problems: [],
  via: "text",
};

const byCall = (log: CallLog, callId: string) => log.all().find((c) => c.callId === callId);

describe("CallLog", () => {
  it("follows a model call from parse through confirmation to result", () => {
    const log = new CallLog();
    const changes: string[] = [];
    log.subscribe((c) => changes.push(statusOf(c)));
    log.apply(parsed);
    log.apply({ event: "permission_asked", call_id: "call-1", tool: "write_file", args: {}, reasoning: null, rule: "default: writes ask first", preview: null });
    const call = byCall(log, "call-1")!;
    expect(statusOf(call)).toBe("waiting");
    log.apply({ event: "permission_answered", call_id: "call-1", decision: "allow", answer: "once", rule: "the user allowed this call once" });
    expect(statusOf(call)).toBe("running");
    log.apply({ event: "tool_finished", call_id: "call-1", tool: "write_file", success: true, error_type: "none", execution_time_ms: 3, result: result(true, { path: "src/a.ts" }) });
    expect(statusOf(call)).toBe("ok");
    expect(call).toMatchObject({ dialect: "lantern", constrained: true, valid: true, asked: true, answer: "once", askRule: "default: writes ask first" });
    expect(changes).toEqual(["running", "waiting", "running", "ok"]);
  });

  it("keeps the server's native pieces with the call they made, and only that call", () => {
    const log = new CallLog();
    const pieces = [{ index: 0, function: { name: "write_file", arguments: "" } }, { index: 0, function: { arguments: "{}" } }];
    log.apply({ event: "response_finished", step: 1, raw: "", constrained: false, call_confidence: null, tokens_evaluated: null, tokens_generated: null, context_used: null, context_size: null, native_deltas: pieces });
    log.apply({ ...parsed, via: "native" } as AgentEvent);
    expect(byCall(log, "call-1")).toMatchObject({ via: "native", nativeDeltas: pieces });
    expect(JSON.parse(callAsJson(byCall(log, "call-1")!)).native_deltas).toEqual(pieces);
    log.apply({ event: "response_finished", step: 2, raw: "", constrained: false, call_confidence: null, tokens_evaluated: null, tokens_generated: null, context_used: null, context_size: null });
    log.apply({ ...parsed, step: 2, call_id: "call-2" } as AgentEvent);
    expect(byCall(log, "call-2")).toMatchObject({ via: "text", nativeDeltas: [] });
  });

  it("shows a call inside the whole reply of its step, which only the step's response_finished carries", () => {
    const log = new CallLog();
    const reply = 'Okay <TOOL_CALL>{"tool":"write_file"}</TOOL_CALL>';
    log.apply({ event: "response_finished", step: 1, raw: reply, constrained: true, call_confidence: -0.4, tokens_evaluated: null, tokens_generated: null, context_used: null, context_size: null });
    log.apply(parsed);
    expect(byCall(log, "call-1")).toMatchObject({ response: reply, raw: '<TOOL_CALL>{"tool":"write_file"}</TOOL_CALL>' });
    log.apply({ ...parsed, step: 2, call_id: "call-2" } as AgentEvent);
    expect(byCall(log, "call-2")?.response).toBeNull();
  });

  it("keeps why the backend made the step a call with the call of that step", () => {
    const log = new CallLog();
    const why = "call (the message names a file of the workspace)";
    log.apply({ event: "response_finished", step: 1, raw: "", constrained: true, call_confidence: -0.4, tokens_evaluated: null, tokens_generated: null, context_used: null, context_size: null, decision: why });
    log.apply(parsed);
    expect(byCall(log, "call-1")?.whyACall).toBe(why);
    log.apply({ event: "response_finished", step: 2, raw: "", constrained: false, call_confidence: null, tokens_evaluated: null, tokens_generated: null, context_used: null, context_size: null });
    log.apply({ ...parsed, step: 2, call_id: "call-2" } as AgentEvent);
    expect(byCall(log, "call-2")?.whyACall).toBeNull();
  });

  it("records a denial with the user's message", () => {
    const log = new CallLog();
    log.apply(parsed);
    log.apply({ event: "permission_answered", call_id: "call-1", decision: "deny", answer: "deny", rule: "the user denied this call", message: "not that file" });
    const call = byCall(log, "call-1")!;
    expect(statusOf(call)).toBe("denied");
    expect(call.errorType).toBe("permission_denied");
    expect(call.denyMessage).toBe("not that file");
  });

  it("lists invalid calls with the validator's message and the tool they name", () => {
    const log = new CallLog();
    const call = log.apply({
      event: "call_rejected",
      step: 2,
      error_type: "validation_failed",
      message: "missing field path",
      feedback: "TOOL_ERROR: …",
      raw: '<TOOL_CALL>{"tool": "read_file", "args": {}}</TOOL_CALL>',
    })!;
    expect(call.tool).toBe("read_file");
    expect(statusOf(call)).toBe("invalid");
    expect(call.validationMessage).toBe("missing field path");
  });

  it("shows a refused call a server made through its API with its id, tool and arguments", () => {
    const log = new CallLog();
    const call = log.apply({
      event: "call_rejected",
      step: 1,
      error_type: "validation_failed",
      message: "missing field path",
      feedback: "missing field path. Call a tool again with corrected arguments, or answer in plain words.",
      raw: '{"name":"read_file","arguments":{"file":"a.txt"}}',
      server_call: { call_id: "srv-1", tool: "read_file", args: { file: "a.txt" } },
    })!;
    expect([call.callId, call.tool, call.args]).toEqual(["srv-1", "read_file", { file: "a.txt" }]);
    expect(statusOf(call)).toBe("invalid");
  });

  it("ties a manual call's events to it and keeps its result", () => {
    const log = new CallLog();
    const key = log.startManual("read_file", { path: "package.json" });
    log.apply({ event: "permission_answered", call_id: "call-7", decision: "allow", answer: null, rule: "default: reading inside the workspace is allowed" }, key);
    log.apply({ event: "tool_finished", call_id: "call-7", tool: "read_file", success: true, error_type: "none", execution_time_ms: 1, result: result(true, { content: "{}" }) }, key);
    log.finishManual(key, result(true, { content: "{}" }));
    const call = log.get(key)!;
    expect(call.callId).toBe("call-7");
    expect(call.origin).toBe("manual");
    expect(statusOf(call)).toBe("ok");
    expect(call.rule).toContain("reading inside the workspace");
  });

  it("marks a manual call refused before it ran as invalid", () => {
    const log = new CallLog();
    const key = log.startManual("read_file", {});
    log.finishManual(key, { ...result(false, null, "validation_failed"), error_message: "missing field path" });
    const call = log.get(key)!;
    expect(statusOf(call)).toBe("invalid");
    expect(call.validationMessage).toBe("missing field path");
  });

  it("filters by tool and status and copies a call as JSON", () => {
    const log = new CallLog();
    log.apply(parsed);
    const manual = log.startManual("read_file", { path: "a" });
    log.finishManual(manual, result(false, null, "not_found"));
    const [write, read] = log.all();
    expect(matches(write!, { tool: "write_file", status: null })).toBe(true);
    expect(matches(read!, { tool: "write_file", status: null })).toBe(false);
    expect(matches(read!, { tool: null, status: "failed" })).toBe(true);
    const copied = JSON.parse(callAsJson(write!));
    expect(copied).toMatchObject({ call_id: "call-1", tool: "write_file", dialect: "lantern", status: "running" });
  });

  it("forgets everything on clear", () => {
    const log = new CallLog();
    log.apply(parsed);
    log.clear();
    expect(log.all()).toHaveLength(0);
    expect(byCall(log, "call-1")).toBeUndefined();
  });
});
