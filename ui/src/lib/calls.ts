// Every tool call of the session, assembled from the agent's events: what the inspector lists
// and the chat's call cards show. Pure data, no DOM.

import type {
  AgentEvent,
  AgentEventOf,
  AnswerKind,
  CallPath,
  Dialect,
  DroppedLines,
  ErrorType,
  Problem,
  Span,
  ToolResult,
} from "../ipc/types";

export type CallStatus = "invalid" | "waiting" | "running" | "denied" | "ok" | "failed";

export interface CallRecord {
  /** Unique in the log; the backend's call id when there is one. */
  key: string;
  callId: string | null;
  /** The model's call, one written by hand, or what the user attached with `@` (no tool ran). */
  origin: "model" | "manual" | "context";
  step: number | null;
  tool: string;
  args: unknown;
  reasoning: string | null;
  dialect: Dialect | null;
  /** Whether the call came as text or as the server's native tool call. */
  via: CallPath | null;
  /** The native tool-call pieces the server streamed for it, raw. */
  nativeDeltas: unknown[];
  /** What a reasoning model thought before the reply that made it. */
  thinking: string | null;
  constrained: boolean | null;
  confidence: number | null;
  /** Why the backend made the step a call (the local engine says), e.g. "call (lexical prior)". */
  whyACall: string | null;
  /** The call's exact text, and the whole response it sits in. */
  raw: string | null;
  response: string | null;
  /** Where `raw` sits in `response` (UTF-8 bytes), when the parser reported it. */
  span: Span | null;
  problems: Problem[];
  /** Schema validation: null until known (a manual call before it returns). */
  valid: boolean | null;
  validationMessage: string | null;
  /** The policy's decision and the rule or grant that made it. */
  decision: "allow" | "deny" | null;
  rule: string | null;
  asked: boolean;
  askRule: string | null;
  /** What the confirmation warned of: the files it writes that nobody pointed at… */
  unpointed: string[];
  /** …and the lines of existing files it drops. */
  drops: DroppedLines[];
  answer: AnswerKind | null;
  denyMessage: string | null;
  result: ToolResult | null;
  errorType: ErrorType | null;
  startedAt: number;
  finishedAt: number | null;
}

export function statusOf(call: CallRecord): CallStatus {
  if (call.valid === false) return "invalid";
  if (call.decision === "deny") return "denied";
  if (call.result) return call.result.success ? "ok" : "failed";
  if (call.asked && call.decision === null) return "waiting";
  return "running";
}

export const STATUS_LABELS: Record<CallStatus, string> = {
  invalid: "invalid",
  waiting: "waiting for you",
  running: "running",
  denied: "denied",
  ok: "ok",
  failed: "failed",
};

function blank(key: string, origin: CallRecord["origin"], tool: string, args: unknown): CallRecord {
  return {
    key,
    callId: null,
    origin,
    step: null,
    tool,
    args,
    reasoning: null,
    dialect: null,
    via: null,
    nativeDeltas: [],
    thinking: null,
    constrained: null,
    confidence: null,
    whyACall: null,
    raw: null,
    response: null,
    span: null,
    problems: [],
    valid: null,
    validationMessage: null,
    decision: null,
    rule: null,
    asked: false,
    askRule: null,
    unpointed: [],
    drops: [],
    answer: null,
    denyMessage: null,
    result: null,
    errorType: null,
    startedAt: Date.now(),
    finishedAt: null,
  };
}

/** The tool a rejected call names, if its raw text shows one. */
function toolNamed(raw: string | null): string {
  if (!raw) return "?";
  const match = /"(?:tool|name)"\s*:\s*"([^"]+)"/.exec(raw) ?? /<function=([\w-]+)>/.exec(raw);
  return match?.[1] ?? "?";
}

export class CallLog {
  private readonly calls: CallRecord[] = [];
  private readonly byCallId = new Map<string, CallRecord>();
  private manualCount = 0;
  private contextCount = 0;
  private rejectedCount = 0;
  /** What the last reply carried besides its text, until the call it makes is parsed. */
  private lastReply: { step: number; raw: string; deltas: unknown[]; thinking: string | null; decision: string | null } | null = null;
  private readonly listeners = new Set<(changed: CallRecord) => void>();

  /** Forgets every call (another folder was opened). */
  clear(): void {
    this.calls.splice(0);
    this.byCallId.clear();
  }

  all(): readonly CallRecord[] {
    return this.calls;
  }

  get(key: string): CallRecord | undefined {
    return this.calls.find((c) => c.key === key);
  }

  /** Called with each record that changes. */
  subscribe(listener: (changed: CallRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(call: CallRecord): CallRecord {
    for (const listener of this.listeners) listener(call);
    return call;
  }

  /** A call written by hand, before the backend has seen it. Returns its key. */
  startManual(tool: string, args: unknown): string {
    this.manualCount += 1;
    const call = blank(`manual-${this.manualCount}`, "manual", tool, args);
    this.calls.push(call);
    this.changed(call);
    return call.key;
  }

  /** Removes a manual call the backend never ran (it was busy, or the folder is gone). */
  abandonManual(key: string): void {
    const index = this.calls.findIndex((c) => c.key === key);
    if (index >= 0) this.calls.splice(index, 1);
  }

  /** A manual call's result; a call refused before any event (bad arguments) ends here too. */
  finishManual(key: string, result: ToolResult): void {
    const call = this.get(key);
    if (!call) return;
    if (call.valid === null) {
      const refusedUpFront = !result.success && result.error_type === "validation_failed" && !call.callId;
      call.valid = !refusedUpFront;
      if (refusedUpFront) call.validationMessage = result.error_message;
    }
    if (call.valid !== false && call.decision !== "deny") call.result = call.result ?? result;
    call.errorType = result.success ? null : result.error_type;
    call.finishedAt = call.finishedAt ?? Date.now();
    this.changed(call);
  }

  /** The reply of `step` of the turn under way: the one event that carries it is the step's `response_finished`. */
  private replyOf(step: number) {
    return this.lastReply?.step === step ? this.lastReply : null;
  }

  /** Applies one agent event; `manualKey` names the manual call whose channel it came from. */
  apply(event: AgentEvent, manualKey?: string): CallRecord | null {
    switch (event.event) {
      case "context_attached":
        return this.attached(event);
      case "response_finished":
        this.lastReply = {
          step: event.step,
          raw: event.raw,
          deltas: event.native_deltas ?? [],
          thinking: event.thinking ?? null,
          decision: event.decision ?? null,
        };
        return null;
      case "call_parsed":
        return this.parsed(event);
      case "call_rejected":
        return this.rejected(event);
      case "permission_asked":
        return this.update(event.call_id, manualKey, (call) => asked(call, event));
      case "permission_answered":
        return this.update(event.call_id, manualKey, (call) => answered(call, event));
      case "tool_finished":
        return this.update(event.call_id, manualKey, (call) => finished(call, event));
      default:
        return null;
    }
  }

  /** What the user gave with the message, listed with the calls as context they gave. */
  private attached(event: AgentEventOf<"context_attached">): CallRecord {
    this.contextCount += 1;
    const summary = Object.fromEntries(event.attachments.map((a) => [`@${a.mention}`, `${a.path} lines ${a.start_line}-${a.end_line}${a.cut ? " (cut)" : ""}`]));
    const call = blank(`context-${this.contextCount}`, "context", "@context", summary);
    call.valid = true;
    call.finishedAt = Date.now();
    call.result = {
      success: true,
      data: { attached: event.attachments, not_attached: event.problems },
      error_message: null,
      error_type: "none",
      metadata: { execution_time_ms: 0, data_size_bytes: 0, timestamp: Date.now() },
    };
    this.calls.push(call);
    return this.changed(call);
  }

  private parsed(event: AgentEventOf<"call_parsed">): CallRecord {
    const call = blank(event.call_id, "model", event.tool, event.args);
    const reply = this.replyOf(event.step);
    Object.assign(call, {
      callId: event.call_id,
      step: event.step,
      reasoning: event.reasoning,
      dialect: event.dialect,
      via: event.via,
      nativeDeltas: reply?.deltas ?? [],
      thinking: reply?.thinking ?? null,
      whyACall: reply?.decision ?? null,
      constrained: event.constrained,
      confidence: event.call_confidence,
      raw: event.raw,
      response: reply?.raw ?? null,
      span: event.span,
      problems: event.problems,
      valid: true,
    });
    this.calls.push(call);
    this.byCallId.set(event.call_id, call);
    return this.changed(call);
  }

  private rejected(event: AgentEventOf<"call_rejected">): CallRecord {
    this.rejectedCount += 1;
    // A server's call through its API comes typed; a call in text is named from its text.
    const server = event.server_call ?? null;
    const call = blank(`rejected-${this.rejectedCount}`, "model", server?.tool ?? toolNamed(event.raw), server?.args ?? null);
    Object.assign(call, {
      callId: server?.call_id ?? null,
      step: event.step,
      raw: event.raw,
      response: this.replyOf(event.step)?.raw ?? null,
      valid: false,
      validationMessage: event.message,
      errorType: event.error_type,
      finishedAt: Date.now(),
    });
    this.calls.push(call);
    return this.changed(call);
  }

  /** Changes the known call `callId` (or the manual call `manualKey` names) with `change`. */
  private update(callId: string, manualKey: string | undefined, change: (call: CallRecord) => void): CallRecord | null {
    const call = this.callFor(callId, manualKey);
    if (!call) return null;
    change(call);
    return this.changed(call);
  }

  private callFor(callId: string, manualKey?: string): CallRecord | undefined {
    const known = this.byCallId.get(callId);
    if (known) return known;
    // The first event of a manual call tells us the id the backend gave it.
    const manual = manualKey ? this.get(manualKey) : undefined;
    if (manual && manual.callId === null) {
      manual.callId = callId;
      manual.valid = true;
      this.byCallId.set(callId, manual);
    }
    return manual;
  }
}

export interface CallFilter {
  tool: string | null;
  status: CallStatus | null;
}

export function matches(call: CallRecord, filter: CallFilter): boolean {
  return (
    (filter.tool === null || call.tool === filter.tool) &&
    (filter.status === null || statusOf(call) === filter.status)
  );
}

/** A call as one JSON object, for the clipboard. */
export function callAsJson(call: CallRecord): string {
  return JSON.stringify(
    {
      call_id: call.callId,
      origin: call.origin,
      step: call.step,
      tool: call.tool,
      args: call.args,
      reasoning: call.reasoning,
      dialect: call.dialect,
      via: call.via,
      native_deltas: call.nativeDeltas.length ? call.nativeDeltas : undefined,
      constrained: call.constrained,
      call_confidence: call.confidence,
      raw: call.raw,
      valid: call.valid,
      validation_message: call.validationMessage,
      decision: call.decision,
      rule: call.rule,
      asked: call.asked,
      unpointed: call.unpointed.length ? call.unpointed : undefined,
      drops: call.drops.length ? call.drops : undefined,
      answer: call.answer,
      deny_message: call.denyMessage,
      status: statusOf(call),
      result: call.result,
    },
    null,
    2,
  );
}

function asked(call: CallRecord, event: AgentEventOf<"permission_asked">): void {
  call.asked = true;
  call.askRule = event.rule;
  call.unpointed = event.unpointed ?? [];
  call.drops = event.drops ?? [];
}

function answered(call: CallRecord, event: AgentEventOf<"permission_answered">): void {
  call.decision = event.decision;
  call.rule = event.rule;
  call.answer = event.answer;
  call.denyMessage = event.message ?? null;
  if (event.decision === "deny") {
    call.errorType = "permission_denied";
    call.finishedAt = Date.now();
  }
}

function finished(call: CallRecord, event: AgentEventOf<"tool_finished">): void {
  call.result = event.result;
  call.errorType = event.success ? null : event.error_type;
  call.finishedAt = Date.now();
}
