// The tool-call inspector: every call of the session in order, filterable by tool and status,
// and for the selected one everything that happened to it — the raw text (highlighted in the
// whole response), dialect, parsed arguments, schema validation, grammar, the policy's decision
// and rule, the user's answer, the result, error type, timing and size. Calls can be copied as
// JSON, re-run, or written by hand.

import { type CallFilter, type CallLog, type CallRecord, type CallStatus, callAsJson, matches, STATUS_LABELS, statusOf } from "../lib/calls";
import { button, clear, h } from "../lib/dom";
import { describeMatch, formatBytes, formatDuration, formatTime, summarizeArgs } from "../lib/format";
import { pretty, shorten } from "../lib/json";
import { splitAround, splitAtSpan } from "../lib/spans";
import { lossList } from "../lib/warnings";

export interface InspectorActions {
  rerun: (call: CallRecord) => void;
  edit: (call: CallRecord) => void;
  writeCall: () => void;
  exportTranscript: () => void;
  copy: (text: string) => void;
  /** Stops what is running: the turn, or the call written by hand. */
  stop: () => void;
}

const ANSWER_WORDS: Record<string, string> = {
  once: "allowed once",
  session: "allowed for this session",
  always: "always allowed",
  deny: "denied",
};

export class InspectorPanel {
  private selected: string | null = null;
  private filter: CallFilter = { tool: null, status: null };
  private readonly list = h("div", { class: "inspector-list", attrs: { role: "listbox", "aria-label": "tool calls" } });
  private readonly detail = h("div", { class: "inspector-detail" });
  private readonly toolFilter = h("select", { class: "filter-tool", attrs: { "aria-label": "filter by tool" } });
  private readonly statusFilter = h("select", { class: "filter-status", attrs: { "aria-label": "filter by status" } });
  private readonly count = h("span", { class: "muted small" });

  constructor(
    readonly root: HTMLElement,
    private readonly log: CallLog,
    private readonly actions: InspectorActions,
  ) {
    root.classList.add("inspector-panel");
    this.statusFilter.append(h("option", { text: "any status", attrs: { value: "" } }));
    for (const [status, label] of Object.entries(STATUS_LABELS)) {
      this.statusFilter.append(h("option", { text: label, attrs: { value: status } }));
    }
    this.toolFilter.addEventListener("change", () => {
      this.filter.tool = this.toolFilter.value || null;
      this.renderList();
    });
    this.statusFilter.addEventListener("change", () => {
      this.filter.status = (this.statusFilter.value || null) as CallStatus | null;
      this.renderList();
    });
    root.append(
      h(
        "div",
        { class: "panel-header" },
        h("span", { class: "panel-title", text: "Tool calls" }),
        this.count,
        h("span", { class: "spacer" }),
        this.toolFilter,
        this.statusFilter,
        button("Write a call…", actions.writeCall, { class: "small write-call" }),
        button("Export transcript…", actions.exportTranscript, { class: "small" }),
      ),
      h("div", { class: "inspector-body" }, this.list, this.detail),
    );
    log.subscribe((call) => {
      this.renderList();
      if (call.key === this.selected) this.renderDetail();
    });
    this.renderList();
    this.renderDetail();
  }

  select(key: string): void {
    this.selected = key;
    this.renderList();
    this.renderDetail();
    this.list.querySelector(".selected")?.scrollIntoView({ block: "nearest" });
  }

  /** Forgets the selection and filters (another folder was opened and the log cleared). */
  reset(): void {
    this.selected = null;
    this.filter = { tool: null, status: null };
    this.statusFilter.value = "";
    this.renderList();
    this.renderDetail();
  }

  private renderList(): void {
    const calls = this.log.all();
    const tools = [...new Set(calls.map((c) => c.tool))].sort();
    const chosenTool = this.filter.tool;
    clear(this.toolFilter);
    this.toolFilter.append(h("option", { text: "any tool", attrs: { value: "" } }));
    for (const tool of tools) this.toolFilter.append(h("option", { text: tool, attrs: { value: tool } }));
    this.toolFilter.value = chosenTool ?? "";
    const shown = calls.filter((c) => matches(c, this.filter));
    this.count.textContent = calls.length ? `${shown.length} of ${calls.length}` : "";
    clear(this.list);
    if (calls.length === 0) {
      this.list.append(h("div", { class: "empty-state" }, h("p", { class: "muted", text: "No calls yet. The assistant's tool calls appear here, and you can write one by hand." })));
      return;
    }
    if (shown.length === 0) {
      this.list.append(h("div", { class: "empty-state" }, h("p", { class: "muted", text: "No call matches the filter." })));
      return;
    }
    shown.forEach((call) => {
      const status = statusOf(call);
      const index = calls.indexOf(call) + 1;
      this.list.append(
        h(
          "div",
          {
            class: `call-row status-${status}${call.key === this.selected ? " selected" : ""}`,
            data: { key: call.key },
            attrs: { role: "option", "aria-selected": String(call.key === this.selected), tabindex: "0" },
            on: {
              click: () => this.select(call.key),
              keydown: (e) => e.key === "Enter" && this.select(call.key),
            },
          },
          h("span", { class: "call-index muted", text: `#${index}` }),
          h("span", { class: "mono call-tool", text: call.tool }),
          h("span", { class: "call-summary", text: call.valid === false ? (call.validationMessage ?? "") : summarizeArgs(call.args) }),
          call.origin === "manual" ? h("span", { class: "origin-chip", text: "by hand" }) : null,
          call.origin === "context" ? h("span", { class: "origin-chip", text: "you attached" }) : null,
          h("span", { class: `status-chip status-${status}`, text: STATUS_LABELS[status] }),
        ),
      );
    });
  }

  private renderDetail(): void {
    clear(this.detail);
    const call = this.selected ? this.log.get(this.selected) : undefined;
    if (!call) {
      this.detail.append(h("div", { class: "empty-state" }, h("p", { class: "muted", text: "Select a call to see everything about it." })));
      return;
    }
    const status = statusOf(call);
    const rerunnable = call.valid !== false || call.tool !== "?";
    const header = h(
      "div",
      { class: "detail-header" },
      h("span", { class: "mono detail-tool", text: call.tool }),
      h("span", { class: `status-chip status-${status}`, text: STATUS_LABELS[status] }),
      h("span", { class: "muted small", text: [call.callId, call.origin === "manual" ? "written by hand" : call.step !== null ? `step ${call.step}` : null].filter(Boolean).join(" · ") }),
      h("span", { class: "spacer" }),
      h(
        "span",
        { class: "detail-actions" },
        status === "running" ? button("Stop", () => this.actions.stop(), { class: "small danger stop-call", title: "Stop this call (and the turn it is part of)" }) : null,
        button("Copy as JSON", () => this.actions.copy(callAsJson(call)), { class: "small" }),
        rerunnable ? button("Re-run", () => this.actions.rerun(call), { class: "small", title: "Run the same call again (through validation, sandbox and permissions)" }) : null,
        button("Edit and run…", () => this.actions.edit(call), { class: "small" }),
      ),
    );
    // What was decided on the left, what was said and returned on the right.
    const columns = h(
      "div",
      { class: "detail-columns" },
      h("div", {}, ...present([this.facts(call), this.policySection(call), call.reasoning ? section("Reasoning", h("p", { text: call.reasoning })) : null, call.thinking ? section("Thinking", h("details", { class: "thought" }, h("summary", { text: "What the model thought first" }), h("p", { text: call.thinking }))) : null])),
      h("div", {}, ...present([this.rawSection(call), this.deltasSection(call), section("Arguments (parsed)", h("pre", { class: "json", text: pretty(call.args) })), this.exchangeSection(call), this.resultSection(call)])),
    );
    const parts: (HTMLElement | null)[] = [header, columns];
    this.detail.append(...parts.filter((p): p is HTMLElement => p !== null));
  }

  private facts(call: CallRecord): HTMLElement {
    const validation =
      call.valid === null ? "pending" : call.valid ? "valid against the tool's schema" : `invalid: ${call.validationMessage ?? ""}`;
    const rows: [string, string][] = [
      ["Validation", validation],
      ["Came as", viaLabel(call)],
    ];
    // A server's native call was never written as text, so it has no written form and no grammar
    // of Lantern's; a local model's native call was written, in its own form.
    if (!fromServerApi(call)) {
      rows.push(["Dialect", call.dialect ?? (call.origin === "manual" ? "— (written by hand)" : "—")]);
      rows.push(["Grammar", call.constrained === null ? "—" : call.constrained ? "constrained by the grammar" : "not constrained"]);
    }
    if (call.confidence !== null) rows.push(["Call confidence", `${call.confidence.toFixed(2)} (log-probability)`]);
    if (call.whyACall) rows.push(["Why a call", call.whyACall]);
    if (call.errorType) rows.push(["Error type", call.errorType]);
    const matched = call.result?.success ? describeMatch(call.result.data) : null;
    if (matched) rows.push(["Old text found", matched]);
    const exchange = exchangeOf(call);
    if (exchange) rows.push(["MCP server", `${exchange.server} · ${exchange.transport} · ${exchange.sandbox}`]);
    if (call.result) {
      rows.push(["Time", formatDuration(call.result.metadata.execution_time_ms)]);
      rows.push(["Size", formatBytes(call.result.metadata.data_size_bytes)]);
      rows.push(["Finished", formatTime(call.result.metadata.timestamp)]);
    }
    return h(
      "dl",
      { class: "facts" },
      ...rows.flatMap(([k, v]) => [h("dt", { text: k }), h("dd", { class: k === "Validation" && call.valid === false ? "error-text" : "", text: v })]),
    );
  }

  private rawSection(call: CallRecord): HTMLElement | null {
    if (call.response === null && call.raw === null) return null;
    const response = call.response ?? call.raw ?? "";
    // A server's own call came beside the reply's text, never in it: shown after the text.
    const apiCall: [string, string, string] | null = call.dialect === "api" ? [call.response ?? "", call.raw ?? "", ""] : null;
    const parts = apiCall ?? (call.span ? splitAtSpan(response, call.span) : call.raw ? splitAround(response, call.raw) : null);
    const discarded = call.problems.some((p) => p.kind === "trailing_text" || p.kind === "extra_call");
    const pre = h("pre", { class: "raw-response" });
    if (parts) {
      const [before, inside, after] = parts;
      pre.append(before, h("mark", { class: "raw-call", text: inside }), after ? h("span", { class: discarded ? "discarded" : "", text: after }) : "");
    } else {
      pre.append(response);
    }
    const notes = call.problems.map((p) => h("li", { text: p.message }));
    return section(
      "Raw response (the call highlighted)",
      pre,
      notes.length ? h("ul", { class: "problems small" }, ...notes) : null,
    );
  }

  /** The server's native tool-call pieces, as they arrived. */
  private deltasSection(call: CallRecord): HTMLElement | null {
    if (call.nativeDeltas.length === 0) return null;
    return section(
      "Native tool call (raw pieces)",
      h("details", { class: "native-deltas" }, h("summary", { text: `${call.nativeDeltas.length} pieces streamed by the server` }), h("pre", { class: "json", text: call.nativeDeltas.map((d) => JSON.stringify(d)).join("\n") })),
    );
  }

  private policySection(call: CallRecord): HTMLElement | null {
    if (call.valid === false) return null;
    const rows: HTMLElement[] = [];
    if (call.decision) {
      rows.push(h("p", {}, h("strong", { text: call.decision === "allow" ? "Allowed" : "Denied" }), ` — ${call.rule ?? ""}`));
    } else {
      rows.push(h("p", { class: "muted", text: call.asked ? "Waiting for your answer." : "Not decided yet." }));
    }
    if (call.asked) {
      rows.push(h("p", { class: "small", text: `You were asked (${call.askRule ?? "the policy asks"}). Your answer: ${call.answer ? ANSWER_WORDS[call.answer] : "—"}.` }));
    } else if (call.decision) {
      rows.push(h("p", { class: "small muted", text: "Decided by the policy without asking." }));
    }
    rows.push(...warningsOf(call));
    if (call.denyMessage) rows.push(h("p", { class: "small", text: `Told the model: ${call.denyMessage}` }));
    return section("Permission", ...rows);
  }

  /** What went to an MCP server and came back, as it went. */
  private exchangeSection(call: CallRecord): HTMLElement | null {
    const exchange = exchangeOf(call);
    if (!exchange) return null;
    return section(
      `MCP exchange with ${exchange.server}`,
      h("div", { class: "label", text: "Request" }),
      h("pre", { class: "json mcp-request", text: pretty(exchange.request) }),
      h("div", { class: "label", text: "Response" }),
      h("pre", { class: "json mcp-response", text: pretty(shorten(exchange.response).value) }),
    );
  }

  private resultSection(call: CallRecord): HTMLElement | null {
    const result = call.result;
    if (!result) return null;
    const body = result.success ? result.data : { error_type: result.error_type, error_message: result.error_message, hint: result.error_hint };
    const { value, cut } = shorten(body);
    return section(
      result.success ? "Result" : "Error",
      h("pre", { class: `json${result.success ? "" : " error-text"}`, text: pretty(value) }),
      cut ? h("details", { class: "full-result" }, h("summary", { text: "Show the full result" }), h("pre", { class: "json", text: pretty(body) })) : null,
    );
  }
}

/** What an MCP tool's call exchanged with its server, as the backend recorded it. */
interface McpExchange {
  server: string;
  transport: string;
  sandbox: string;
  request: unknown;
  response: unknown;
}

export function exchangeOf(call: CallRecord): McpExchange | null {
  const exchange = call.result?.metadata.exchange;
  if (typeof exchange !== "object" || exchange === null || !("server" in exchange)) return null;
  return exchange as McpExchange;
}

/** How the call reached Lantern. */
export function viaLabel(call: CallRecord): string {
  if (call.origin === "manual") return "— (written by hand)";
  if (call.origin === "context") return "— (context you attached with @; no tool ran)";
  if (fromServerApi(call)) return "native tool call (the server's tool_calls)";
  if (call.via === "native") return "native tool call (the model's own form, through its chat template)";
  if (call.via === "text") return "text (the <TOOL_CALL> protocol)";
  return "—";
}

/** A native call the server's API returned as `tool_calls`, rather than text the model wrote. */
function fromServerApi(call: CallRecord): boolean {
  return call.dialect === "api" || (call.via === "native" && call.nativeDeltas.length > 0);
}

function present(elements: (HTMLElement | null)[]): HTMLElement[] {
  return elements.filter((e): e is HTMLElement => e !== null);
}

/** What the confirmation warned of when it asked, kept with the call after it is answered. */
function warningsOf(call: CallRecord): HTMLElement[] {
  const rows: HTMLElement[] = [];
  if (call.unpointed.length) {
    rows.push(
      h(
        "p",
        { class: "small call-warning call-unpointed" },
        h("strong", { text: "Not named by you, shown by no result: " }),
        ...call.unpointed.flatMap((path, i) => [i ? ", " : "", h("code", { text: path })]),
      ),
    );
  }
  if (call.drops.length) {
    rows.push(
      h(
        "p",
        { class: "small call-warning call-drops" },
        h("strong", { text: "Lines it drops: " }),
        ...lossList(call.drops),
      ),
    );
  }
  return rows;
}

function section(title: string, ...content: (Node | null)[]): HTMLElement {
  return h("section", { class: "detail-section" }, h("h3", { text: title }), ...content);
}
