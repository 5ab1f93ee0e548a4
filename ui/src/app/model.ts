// The model: its state (loading with progress, ready, failed, none) shown on the model page and
// the toolbar chip, loading another, the list of models, and the probe.

import { AppError, backend } from "../ipc";
import type { ServerConfig, ServerForm } from "../ipc/types";
import type { Toasts } from "../lib/toasts";
import type { ModelPanel, ModelState } from "../panels/model";

export interface ModelDeps {
  /** The toolbar chip that shows the model's state. */
  chip: HTMLButtonElement;
  panel: ModelPanel;
  toasts: Toasts;
  /** The state changed (whether the chat can send depends on it). */
  changed: () => void;
}

/** The chip's text for a state, and its tooltip where the state has one (otherwise the chip
 * keeps the tooltip it had). */
export function chipLabel(state: ModelState): { text: string; title?: string } {
  switch (state.kind) {
    case "ready": {
      const info = state.info;
      if (info.kind === "server") return { text: info.server.model, title: `${info.server.base_url} — tool calls: ${info.server.calls}` };
      return { text: info.facts.name, title: `${info.facts.path} — ${info.facts.context} tokens of context` };
    }
    case "loading":
      switch (state.progress.stage) {
        case "reading":
          return { text: `Loading ${Math.round(state.progress.fraction * 100)}%` };
        case "calibrating":
          return { text: "Calibrating…" };
        case "connecting":
          return { text: "Connecting…" };
      }
    case "error":
      return { text: "Model failed to load" };
    case "none":
      return { text: "No model" };
  }
}

export class ModelControl {
  private current: ModelState = { kind: "none", reason: "" };

  constructor(private readonly deps: ModelDeps) {}

  get state(): ModelState {
    return this.current;
  }

  /** The loaded local model's file; null (the default model) when none is loaded. */
  get loadedPath(): string | null {
    return this.current.kind === "ready" && this.current.info.kind === "local" ? this.current.info.facts.path : null;
  }

  set(state: ModelState): void {
    const { chip, panel } = this.deps;
    this.current = state;
    panel.setState(state);
    const label = chipLabel(state);
    chip.textContent = label.text;
    if (label.title !== undefined) chip.title = label.title;
    chip.dataset.state = state.kind;
    this.deps.changed();
    // A loaded model counts the instructions' and the map's tokens in its own tokenizer.
    if (state.kind === "ready") void this.refreshContext();
  }

  /** What the open project gives a conversation at its start, on the Model page: its
   * instructions and the map of its code; nothing without a folder. */
  async refreshContext(): Promise<void> {
    const why = (error: unknown): string => {
      const appError = AppError.from(error);
      return appError.code === "no_workspace" ? "No folder is open." : appError.message;
    };
    const [rules, map] = await Promise.allSettled([backend.projectRules(), backend.codeMap()]);
    this.deps.panel.setRules(rules.status === "fulfilled" ? rules.value : why(rules.reason));
    this.deps.panel.setCodeMap(map.status === "fulfilled" ? map.value : why(map.reason));
  }

  /** Loads `path`, or the default model when it is null; `shownPath` names the default while it
   * loads. */
  async load(path: string | null, shownPath?: string): Promise<void> {
    const label = path ?? shownPath ?? "model";
    this.set({ kind: "loading", path: label, progress: { stage: "reading", fraction: 0 } });
    try {
      const info = await backend.loadModel(path, (progress) => this.set({ kind: "loading", path: label, progress }));
      this.set({ kind: "ready", info });
      void this.refreshList();
    } catch (error) {
      this.set({ kind: "error", message: AppError.from(error).message });
    }
  }

  /** Makes a server's model the one in use; a failure is shown where the form is, and the
   * model in use stays. */
  async connect(form: ServerForm): Promise<void> {
    const before = this.current;
    this.set({ kind: "loading", path: form.base_url, progress: { stage: "connecting" } });
    try {
      this.set({ kind: "ready", info: await backend.connectServer(form) });
    } catch (error) {
      this.set(before);
      throw error;
    }
  }

  /** Connects at start to the server used last; a failure says so and leaves no model. */
  async reconnect(config: ServerConfig): Promise<void> {
    try {
      await this.connect({ ...config, api_key: null });
    } catch (error) {
      this.set({ kind: "error", message: AppError.from(error).message });
    }
  }

  async pick(): Promise<void> {
    try {
      const path = await backend.pickModelFile();
      if (path) await this.load(path);
    } catch (error) {
      this.deps.toasts.show(AppError.from(error).message, "error");
    }
  }

  async refreshList(): Promise<void> {
    try {
      this.deps.panel.setList(await backend.listModels());
    } catch (error) {
      this.deps.toasts.show(AppError.from(error).message, "error");
    }
  }

  async probe(): Promise<void> {
    const { panel } = this.deps;
    panel.setProbe({ kind: "running", started: Date.now() });
    try {
      panel.setProbe({ kind: "done", report: await backend.probeModel() });
    } catch (error) {
      panel.setProbe({ kind: "error", message: AppError.from(error).message });
    }
  }
}
