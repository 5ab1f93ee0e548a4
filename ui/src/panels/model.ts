// The model panel: which model is in use and what it is, and where the next one comes from — a
// local GGUF (loading with progress, and the probe that says how well it suits Lantern) or a
// model server (the server form).

import type { CodeMapInfo, LoadProgress, ModelInfo, ModelList, ProbeReport, RulesInfo, ServerConfig } from "../ipc/types";
import { button, clear, h } from "../lib/dom";
import { describeOpening, formatBytes, formatCount, formatDuration } from "../lib/format";
import { type ServerActions, ServerFormView } from "./server-form";

export interface ModelActions extends ServerActions {
  load: (path: string | null) => void;
  pick: () => void;
  probe: () => void;
  refreshList: () => void;
}

type Provider = "local" | "server";

export type ModelState =
  | { kind: "none"; reason: string }
  | { kind: "loading"; path: string; progress: LoadProgress }
  | { kind: "ready"; info: ModelInfo }
  | { kind: "error"; message: string };

export type ProbeState =
  | { kind: "idle" }
  | { kind: "running"; started: number }
  | { kind: "done"; report: ProbeReport }
  | { kind: "error"; message: string };

export class ModelPanel {
  private state: ModelState = { kind: "none", reason: "" };
  private list: ModelList | null = null;
  private probe: ProbeState = { kind: "idle" };
  private readonly current = h("div", { class: "model-current" });
  private readonly available = h("div", { class: "model-list" });
  private readonly probeBox = h("div", { class: "probe" });
  private readonly server: ServerFormView;
  private readonly localPart: HTMLElement;
  private readonly serverPart: HTMLElement;
  private readonly rules = h("div", { class: "rules" });
  private readonly codeMap = h("div", { class: "code-map" });
  private readonly switcher = h("div", { class: "provider-switch", attrs: { role: "tablist", "aria-label": "where the model runs" } });
  private provider: Provider = "local";

  constructor(
    readonly root: HTMLElement,
    private readonly actions: ModelActions,
  ) {
    root.classList.add("model-panel", "side-page");
    this.server = new ServerFormView(actions);
    this.localPart = h(
      "div",
      { class: "provider-local" },
      h("section", {}, h("h3", { text: "Models" }), this.available),
      h("section", {}, h("h3", { text: "Probe" }), h("p", { class: "muted small", text: "Checks the prompt fits, calibrates when to call a tool, tries three quick questions and measures speed. Takes a little while." }), this.probeBox),
    );
    this.serverPart = h("div", { class: "provider-server" }, h("section", {}, h("h3", { text: "Model server" }), this.server.root));
    root.append(
      h("section", {}, h("h3", { text: "Model in use" }), this.current),
      h("section", { class: "rules-section" }, h("h3", { text: "The project's instructions" }), this.rules),
      h("section", { class: "code-map-section" }, h("h3", { text: "Map of the project's code" }), this.codeMap),
      this.switcher,
      this.localPart,
      this.serverPart,
    );
    this.showProvider("local");
    this.render();
  }

  /** Shows the local models or the server form. */
  showProvider(provider: Provider): void {
    this.provider = provider;
    clear(this.switcher);
    for (const [kind, label] of [["local", "Local GGUF"], ["server", "Server"]] as const) {
      const tab = button(label, () => this.showProvider(kind), { class: `small provider-tab${kind === provider ? " selected" : ""}`, data: { provider: kind } });
      tab.setAttribute("role", "tab");
      tab.setAttribute("aria-selected", String(kind === provider));
      this.switcher.append(tab);
    }
    this.localPart.hidden = provider !== "local";
    this.serverPart.hidden = provider !== "server";
  }

  /** Fills the server form with the server used last. */
  fillServer(config: ServerConfig | null): void {
    this.server.fill(config);
  }

  setState(state: ModelState): void {
    this.state = state;
    if (state.kind !== "ready") this.probe = { kind: "idle" };
    if (state.kind === "ready" && state.info.kind !== this.provider) this.showProvider(state.info.kind);
    this.render();
  }

  /** The open project's AGENTS.md (or the like), what it costs, or why it is not shown. */
  setRules(rules: RulesInfo | null | string): void {
    clear(this.rules);
    if (typeof rules === "string") {
      this.rules.append(h("p", { class: "muted small", text: rules }));
      return;
    }
    if (rules === null) {
      this.rules.append(h("p", { class: "muted small", text: "None: the project has no AGENTS.md, CLAUDE.md, .cursorrules or .github/copilot-instructions.md." }));
      return;
    }
    const cost = rules.tokens === null ? `${rules.chars} characters` : `${rules.tokens} tokens (${rules.chars} characters)`;
    this.rules.append(
      h("p", { class: "small rules-summary" }, h("code", { text: rules.path }), ` · ${cost} of the context, given at the start of each conversation${rules.cut ? " (cut to its limit)" : ""}. Instructions only: they cannot change the tools or what is allowed.`),
      h("details", { class: "rules-text" }, h("summary", { text: "What the model is given" }), h("pre", { class: "mono small", text: rules.text })),
    );
  }

  /** The map of the project's code a conversation opens with, what it costs, or why it is not shown. */
  setCodeMap(map: CodeMapInfo | string): void {
    clear(this.codeMap);
    if (typeof map === "string") {
      this.codeMap.append(h("p", { class: "muted small", text: map }));
      return;
    }
    if (map.text === "") {
      this.codeMap.append(h("p", { class: "muted small", text: "Empty: the code defines nothing in a language the index reads (Rust, Python, JavaScript, TypeScript, Go)." }));
      return;
    }
    const cost = map.tokens === null ? `${map.chars} characters` : `${map.tokens} tokens (${map.chars} characters)`;
    const summary = map.given
      ? `${cost} of the context, given at the start of each conversation (at most ${map.budget} characters; Settings changes it). Its most used definitions by file, ranked toward what the message names.`
      : `Not given to this model (Settings gives it a size). As a model on a server gets it (at most ${map.budget} characters), it would cost ${cost}.`;
    this.codeMap.append(
      h("p", { class: "small code-map-summary", text: summary }),
      h("details", { class: "code-map-text" }, h("summary", { text: map.given ? "What the model is given" : "What it would be" }), h("pre", { class: "mono small", text: map.text })),
    );
  }

  setList(list: ModelList): void {
    this.list = list;
    this.renderList();
  }

  setProbe(probe: ProbeState): void {
    this.probe = probe;
    this.renderProbe();
  }

  private render(): void {
    this.renderCurrent();
    this.renderList();
    this.renderProbe();
  }

  private renderCurrent(): void {
    clear(this.current);
    const s = this.state;
    switch (s.kind) {
      case "none":
        this.current.append(h("p", { class: "muted", text: s.reason || "No model loaded." }));
        break;
      case "loading": {
        const name = s.path.split("/").pop() ?? s.path;
        const bar = h("progress", { class: "load-progress", attrs: { max: "100", "aria-label": "loading" } });
        if (s.progress.stage === "reading") {
          bar.value = Math.round(s.progress.fraction * 100);
          this.current.append(h("p", {}, "Loading ", h("span", { class: "mono", text: name }), ` — ${Math.round(s.progress.fraction * 100)}%`), bar);
        } else if (s.progress.stage === "connecting") {
          this.current.append(h("p", {}, "Connecting to ", h("span", { class: "mono", text: s.path }), " and asking how it takes tool calls…"), bar);
        } else {
          // No value: an indeterminate bar, since calibration reports no fraction.
          this.current.append(
            h("p", {}, "Calibrating ", h("span", { class: "mono", text: name }), ": measuring when it should call a tool."),
            bar,
            h("p", { class: "muted small", text: "Once per model; the result is saved, so the next start is quick." }),
          );
        }
        break;
      }
      case "error":
        this.current.append(h("p", { class: "error-text", text: s.message }));
        break;
      case "ready":
        this.current.append(...describeModel(s.info));
        break;
    }
  }

  private renderList(): void {
    clear(this.available);
    const loading = this.state.kind === "loading";
    const loadedPath = this.state.kind === "ready" && this.state.info.kind === "local" ? this.state.info.facts.path : null;
    const buttons = h(
      "div",
      { class: "button-row" },
      button("Choose a GGUF file…", this.actions.pick, { class: "small" }),
      button("Load the default model", () => this.actions.load(this.list?.default_model ?? null), { class: "small" }),
      button("↻", this.actions.refreshList, { class: "icon-button", title: "Look for models again" }),
    );
    buttons.querySelectorAll("button").forEach((b) => (b.disabled = loading));
    this.available.append(buttons);
    if (!this.list) return;
    if (!this.list.default_model_exists) {
      this.available.append(h("p", { class: "warn-text small", text: `The default model is not downloaded: run bash scripts/fetch-model.sh (npm start does it).` }));
    }
    if (this.list.models.length === 0) {
      this.available.append(h("p", { class: "muted small", text: `No GGUF files in ${this.list.models_dir}.` }));
      return;
    }
    for (const model of this.list.models) {
      const isLoaded = model.path === loadedPath;
      const row = h(
        "div",
        { class: `model-row${isLoaded ? " loaded" : ""}` },
        h("span", { class: "mono", text: model.name }),
        h("span", { class: "muted small", text: formatBytes(model.size_bytes) }),
        h("span", { class: "spacer" }),
        isLoaded ? h("span", { class: "status-chip status-ok", text: "loaded" }) : button("Load", () => this.actions.load(model.path), { class: "small" }),
      );
      row.querySelector("button")?.toggleAttribute("disabled", loading);
      this.available.append(row);
    }
  }

  private renderProbe(): void {
    clear(this.probeBox);
    const ready = this.state.kind === "ready" && this.state.info.kind === "local";
    const p = this.probe;
    const run = button(p.kind === "running" ? "Probing…" : "Probe the model", this.actions.probe, { class: "small probe-button" });
    run.disabled = !ready || p.kind === "running";
    this.probeBox.append(run);
    if (p.kind === "error") this.probeBox.append(h("p", { class: "error-text", text: p.message }));
    if (p.kind !== "done") return;
    const r = p.report;
    const calibration = (name: string, c: ProbeReport["calibration"]["first_step"]) =>
      h("li", { text: `${name}: threshold ${c.threshold.toFixed(2)} nats${c.prior_weight > 0 ? ` (score + ${c.prior_weight.toFixed(1)} when the word-based rule marks the message)` : ""}, AUC ${c.auc.toFixed(2)}, accuracy ${Math.round(c.probe_accuracy * 100)}%${c.trusted ? "" : " — not trusted, a fallback rule decides"}` });
    this.probeBox.append(
      h("p", { class: "probe-verdict", text: r.verdict }),
      h("ul", { class: "small" },
        h("li", { text: `System prompt: ${r.system_prompt_tokens} of ${r.context} tokens${r.fits ? "" : " — too large; load with a larger context"}` }),
        calibration("Call decision, first step", r.calibration.first_step),
        calibration("Call decision, after a result", r.calibration.follow_up),
        h("li", { text: `Speed: prompt ${Math.round(r.prompt_tokens_per_second)} tok/s, generation ${Math.round(r.generation_tokens_per_second)} tok/s` }),
      ),
      h(
        "table",
        { class: "probe-tasks small" },
        h("thead", {}, h("tr", {}, h("th", { text: "Question" }), h("th", { text: "Did" }), h("th", { text: "Right?" }))),
        h("tbody", {}, ...r.tasks.map((t) => h("tr", {}, h("td", { text: t.question }), h("td", { class: "mono", text: t.outcome }), h("td", { class: t.decision_right ? "ok-text" : "error-text", text: t.decision_right ? "yes" : "no" })))),
      ),
    );
  }
}

/** Facts the tests and styles find by class. */
const FACT_CLASSES: Record<string, string> = { "Tool calls": "tool-calls-path", Opening: "opening", Attention: "attention" };

/** The facts of the model in use, as a list (and, for a local model, its file). */
export function describeModel(info: ModelInfo): HTMLElement[] {
  let rows: [string, string][];
  let footer: string;
  if (info.kind === "local") {
    const f = info.facts;
    rows = [
      ["Name", f.name],
      ["Architecture", f.architecture],
      ["Parameters", formatCount(f.parameters)],
      ["File", `${formatBytes(f.size_bytes)}${info.is_default ? " · the default model" : ""}`],
      ["Context", `${f.context} tokens (trained for ${f.trained_context}; the default is the trained context, up to 8192)`],
      ["Threads", String(f.threads)],
      ["Attention", f.flash_attention ? "flash attention (on the GPU)" : "plain (flash attention is slower on the CPU)"],
      ["Chat template", f.chat_template],
      ["Tool calls", f.call_path_why],
      ["Loaded in", formatDuration(f.load_seconds * 1000)],
      ["Opening", describeOpening(info.opening)],
    ];
    footer = f.path;
  } else {
    const server = info.server;
    rows = [
      ["Model", server.model],
      ["Server", server.base_url],
      ["Tool calls", `${server.calls === "native" ? "native" : "text protocol"} — ${server.why}`],
      ["API key", server.has_key ? "sent (kept apart from the settings)" : "none"],
    ];
    footer = "Runs on the server; Lantern sends it the conversation and the tools.";
  }
  return [
    h("dl", { class: "facts" }, ...rows.flatMap(([k, v]) => [h("dt", { text: k }), h("dd", { class: FACT_CLASSES[k] ?? "", text: v })])),
    h("p", { class: "muted small mono path", text: footer }),
  ];
}
