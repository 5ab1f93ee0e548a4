// The Model page's server form: where a model server is (base URL and, when it wants one, an
// API key), which of its models to use, how tool calls travel, a connection test that says what
// the server supports, and connecting. The key typed here goes to the backend, which keeps it
// apart from the settings; it is never shown again.

import { AppError } from "../ipc";
import type { CallMode, ServerConfig, ServerForm, ServerReport } from "../ipc/types";
import { button, clear, h } from "../lib/dom";

export interface ServerActions {
  listModels: (form: ServerForm) => Promise<string[]>;
  test: (form: ServerForm) => Promise<ServerReport>;
  connect: (form: ServerForm) => Promise<void>;
}

/** The usual API roots of local servers, offered as suggestions. */
const DEFAULT_SERVER = "http://127.0.0.1:8080/v1";
const KNOWN_SERVERS = [
  DEFAULT_SERVER,
  "http://127.0.0.1:11434/v1",
  "http://127.0.0.1:1234/v1",
  "http://127.0.0.1:8000/v1",
];

const CALL_MODES: [CallMode, string][] = [
  ["auto", "Auto: native when the server returns tool calls"],
  ["native", "Native tool calls (the server's tools API)"],
  ["text", "Lantern's text protocol"],
];

export type ServerStatus =
  | { kind: "idle" }
  | { kind: "busy"; doing: string }
  | { kind: "report"; report: ServerReport }
  | { kind: "error"; message: string };

/** One line for what a test found. */
export function describeReport(report: ServerReport): string {
  const models = `${report.models.length} model${report.models.length === 1 ? "" : "s"} listed`;
  if (!report.model_listed) return `${models}. ${report.why}`;
  const path = report.calls === "native" ? "native tool calls" : "Lantern's text protocol";
  return `${models}; tool calls: ${path} — ${report.why}.`;
}

export class ServerFormView {
  readonly root = h("form", { class: "server-form", attrs: { "aria-label": "model server" } });
  private readonly baseUrl = h("input", { class: "server-url", attrs: { type: "url", list: "known-servers", placeholder: DEFAULT_SERVER, spellcheck: "false" } });
  private readonly apiKey = h("input", { class: "server-key", attrs: { type: "password", autocomplete: "off", placeholder: "none, or the one saved for this server" } });
  private readonly model = h("input", { class: "server-model", attrs: { list: "server-models", placeholder: "the model's name on the server", spellcheck: "false" } });
  private readonly modelList = h("datalist", { attrs: { id: "server-models" } });
  private readonly calls = h("select", { class: "server-calls", attrs: { "aria-label": "tool calls" } });
  private readonly status = h("p", { class: "server-status small", attrs: { role: "status" } });
  private readonly buttons: HTMLButtonElement[];

  constructor(private readonly actions: ServerActions) {
    for (const [mode, label] of CALL_MODES) this.calls.append(h("option", { text: label, attrs: { value: mode } }));
    this.baseUrl.value = DEFAULT_SERVER;
    const list = button("List models", () => void this.listModels(), { class: "small" });
    const test = button("Test connection", () => void this.test(), { class: "small server-test" });
    const connect = button("Connect", () => void this.connect(), { class: "small primary server-connect" });
    this.buttons = [list, test, connect];
    this.root.addEventListener("submit", (e) => {
      e.preventDefault();
      void this.connect();
    });
    this.root.append(
      h("datalist", { attrs: { id: "known-servers" } }, ...KNOWN_SERVERS.map((url) => h("option", { attrs: { value: url } }))),
      this.modelList,
      field("Base URL", this.baseUrl, "llama-server, Ollama, LM Studio or vLLM: the API root, ending in /v1."),
      field("API key", this.apiKey, "Sent as a bearer token; kept in Lantern's config folder, readable by you alone, never in a transcript."),
      field("Model", this.model, null),
      field("Tool calls", this.calls, null),
      h("div", { class: "button-row" }, list, test, connect),
      this.status,
    );
  }

  /** Fills the form with the server used last (its key stays in the backend). */
  fill(config: ServerConfig | null): void {
    if (!config) return;
    this.baseUrl.value = config.base_url;
    this.model.value = config.model;
    this.calls.value = config.calls;
  }

  form(): ServerForm {
    const key = this.apiKey.value.trim();
    return {
      base_url: this.baseUrl.value.trim() || DEFAULT_SERVER,
      model: this.model.value.trim(),
      api_key: key === "" ? null : key,
      calls: this.calls.value as CallMode,
    };
  }

  private show(status: ServerStatus): void {
    this.buttons.forEach((b) => (b.disabled = status.kind === "busy"));
    this.status.className = `server-status small${status.kind === "error" ? " error-text" : ""}`;
    clear(this.status);
    if (status.kind === "busy") this.status.textContent = status.doing;
    if (status.kind === "error") this.status.textContent = status.message;
    if (status.kind === "report") this.status.textContent = describeReport(status.report);
  }

  private offer(models: string[]): void {
    clear(this.modelList);
    this.modelList.append(...models.map((m) => h("option", { attrs: { value: m } })));
    const first = models[0];
    if (!this.model.value && first !== undefined) this.model.value = first;
  }

  private async listModels(): Promise<void> {
    this.show({ kind: "busy", doing: "Asking the server for its models…" });
    try {
      const models = await this.actions.listModels(this.form());
      this.offer(models);
      this.show({ kind: "idle" });
      this.status.textContent = models.length ? `The server offers: ${models.join(", ")}.` : "The server lists no models.";
    } catch (error) {
      this.show({ kind: "error", message: messageOf(error) });
    }
  }

  private async test(): Promise<void> {
    this.show({ kind: "busy", doing: "Testing the connection…" });
    try {
      const report = await this.actions.test(this.form());
      this.offer(report.models);
      if (report.model_listed) this.model.value = report.model;
      this.show({ kind: "report", report });
    } catch (error) {
      this.show({ kind: "error", message: messageOf(error) });
    }
  }

  private async connect(): Promise<void> {
    if (!this.model.value.trim()) {
      this.show({ kind: "error", message: "Name the model to use: List models shows what the server offers." });
      return;
    }
    this.show({ kind: "busy", doing: "Connecting…" });
    try {
      await this.actions.connect(this.form());
      this.apiKey.value = "";
      this.show({ kind: "idle" });
    } catch (error) {
      this.show({ kind: "error", message: messageOf(error) });
    }
  }
}

function field(label: string, input: HTMLElement, hint: string | null): HTMLElement {
  return h("label", { class: "form-field" }, h("span", { class: "field-label", text: label }), input, hint ? h("span", { class: "muted small", text: hint }) : null);
}

function messageOf(error: unknown): string {
  return AppError.from(error).message;
}
