import { afterEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "../ipc/types";
import { CallLog, type CallRecord, callAsJson } from "../lib/calls";
import { InspectorPanel } from "./inspector";

afterEach(() => document.body.replaceChildren());

// jsdom lays nothing out, so it has no scrolling to do.
Element.prototype.scrollIntoView ??= () => {};

const noActions = { rerun: () => {}, edit: () => {}, writeCall: () => {}, exportTranscript: () => {}, copy: () => {}, stop: () => {} };

const writeCall: AgentEvent = {
  event: "call_parsed",
  step: 1,
  call_id: "call-1",
  tool: "write_file",
  args: { path: "notes.md", content: "one line\n" },
  reasoning: null,
  dialect: "lantern",
  constrained: true,
  call_confidence: -0.4,
  raw: "",
  span: { start: 0, end: 0 },
  problems: [],
  via: "text",
};

function asked(extra: Partial<Extract<AgentEvent, { event: "permission_asked" }>>): AgentEvent {
  return { event: "permission_asked", call_id: "call-1", tool: "write_file", args: {}, reasoning: null, rule: "default: writes ask first", preview: null, ...extra };
}

function firstCall(log: CallLog): CallRecord {
  const call = log.all()[0];
  if (!call) throw new Error("no call logged");
  return call;
}

function inspect(log: CallLog): HTMLElement {
  const root = document.createElement("div");
  document.body.append(root);
  const panel = new InspectorPanel(root, log, noActions);
  panel.select(firstCall(log).key);
  return root;
}

describe("a call's permission in the inspector", () => {
  it("keeps what the confirmation warned of after the user answered", () => {
    const log = new CallLog();
    log.apply(writeCall);
    log.apply(asked({ unpointed: ["notes.md"], drops: [{ path: "notes.md", dropped: 4, of: 5, lost: 1, asked_to_keep: true }] }));
    log.apply({ event: "permission_answered", call_id: "call-1", decision: "deny", answer: "deny", rule: "the user denied this call" });
    const root = inspect(log);
    expect(root.querySelector(".call-unpointed")?.textContent).toBe("Not named by you, shown by no result: notes.md");
    expect(root.querySelector(".call-drops")?.textContent).toBe("Lines it drops: 4 of the 5 non-blank lines of notes.md (3 of them only changed; 1 written over, though you asked to change nothing there)");
    const copied = JSON.parse(callAsJson(firstCall(log)));
    expect(copied.unpointed).toEqual(["notes.md"]);
    expect(copied.drops).toEqual([{ path: "notes.md", dropped: 4, of: 5, lost: 1, asked_to_keep: true }]);
  });

  it("shows no warning for a write the user pointed at that keeps every line", () => {
    const log = new CallLog();
    log.apply(writeCall);
    log.apply(asked({}));
    const root = inspect(log);
    expect(root.querySelector(".call-warning")).toBeNull();
    expect(JSON.parse(callAsJson(firstCall(log))).unpointed).toBeUndefined();
  });
});
