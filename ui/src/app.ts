// The window: builds the layout, starts up (folder, settings, model), and routes what the
// backend streams — agent events to the call log, the chat and the editor, confirmations to
// the dialog.

import { AppError, backend } from "./ipc";
import type { AgentEvent, ModelInfo, Settings, ToolResult, ToolSpec, Update, WorkspaceInfo } from "./ipc/types";
import { ConfirmationDialog, MODEL_SOURCE } from "./dialogs/confirm";
import { openManualCall } from "./dialogs/manual-call";
import { openModal } from "./dialogs/modal";
import { renderUndoConflict, undoConflictOf } from "./dialogs/undo-conflict";
import { CallLog } from "./lib/calls";
import { button, h } from "./lib/dom";
import { makeSplitter } from "./lib/layout";
import { applyTheme, currentTheme, initialTheme } from "./lib/theme";
import { Toasts } from "./lib/toasts";
import { ChatPanel } from "./panels/chat";
import { EditorPanel } from "./panels/editor";
import { FileTreePanel } from "./panels/filetree";
import { InspectorPanel } from "./panels/inspector";
import { ModelPanel, type ModelState } from "./panels/model";
import { SettingsPanel } from "./panels/settings";

type SidePage = "chat" | "model" | "settings";

/** How long to wait for a run's last streamed event after its command has returned. */
const LAST_EVENT_GRACE_MS = 1000;

export class App {
  private readonly calls = new CallLog();
  private readonly toasts: Toasts;
  private readonly modalHost = h("div", { class: "modal-host" });
  private readonly tree: FileTreePanel;
  private readonly editor: EditorPanel;
  private readonly inspector: InspectorPanel;
  private readonly chat: ChatPanel;
  private readonly model: ModelPanel;
  private readonly settings: SettingsPanel;
  private readonly dialog: ConfirmationDialog;
  private readonly folderButton = button("Open folder…", () => void this.pickFolder(), { class: "folder-button", title: "Open another project folder" });
  private readonly modelChip = button("No model", () => this.showPage("model"), { class: "model-chip" });
  private readonly themeButton = button("", () => this.toggleTheme(), { class: "icon-button theme-button", title: "Switch between dark and light" });
  private readonly pages: Record<SidePage, HTMLElement>;
  private readonly pageTabs: Record<SidePage, HTMLButtonElement>;
  private workspace: WorkspaceInfo | null = null;
  private modelState: ModelState = { kind: "none", reason: "" };
  private turnRunning = false;
  private tools: ToolSpec[] = [];

  constructor(root: HTMLElement) {
    applyTheme(initialTheme());
    this.renderThemeButton();
    const treeArea = h("aside", { class: "tree-area" });
    const editorArea = h("div", { class: "editor-area" });
    const inspectorArea = h("div", { class: "inspector-area" });
    this.pages = {
      chat: h("div", { class: "side-page-host", data: { page: "chat" } }),
      model: h("div", { class: "side-page-host hidden", data: { page: "model" } }),
      settings: h("div", { class: "side-page-host hidden", data: { page: "settings" } }),
    };
    this.pageTabs = {
      chat: button("Chat", () => this.showPage("chat"), { class: "side-tab active", data: { page: "chat" } }),
      model: button("Model", () => this.showPage("model"), { class: "side-tab", data: { page: "model" } }),
      settings: button("Settings", () => this.showPage("settings"), { class: "side-tab", data: { page: "settings" } }),
    };
    const splitTree = h("div", { class: "splitter splitter-x" });
    const splitSide = h("div", { class: "splitter splitter-x" });
    const splitInspector = h("div", { class: "splitter splitter-y" });
    const toastHost = h("div", { class: "toasts" });
    root.append(
      h(
        "div",
        { class: "app" },
        h(
          "header",
          { class: "toolbar" },
          h("div", { class: "brand" }, h("span", { class: "brand-mark", text: "◆" }), "Lantern"),
          this.folderButton,
          h("span", { class: "spacer" }),
          this.modelChip,
          this.themeButton,
        ),
        h(
          "main",
          { class: "workbench" },
          treeArea,
          splitTree,
          h("section", { class: "center" }, editorArea, splitInspector, inspectorArea),
          splitSide,
          h("aside", { class: "side" }, h("nav", { class: "side-tabs" }, ...Object.values(this.pageTabs)), h("div", { class: "side-content" }, ...Object.values(this.pages))),
        ),
        toastHost,
        this.modalHost,
      ),
    );
    makeSplitter(splitTree, { variable: "--tree-width", axis: "x", min: 160, max: 520 });
    makeSplitter(splitSide, { variable: "--side-width", axis: "x", min: 300, max: 760, inverted: true });
    makeSplitter(splitInspector, { variable: "--inspector-height", axis: "y", min: 120, max: 700, inverted: true });

    this.toasts = new Toasts(toastHost);
    this.tree = new FileTreePanel(treeArea, {
      open: (path) => void this.editor.open(path),
      refresh: () => void this.refreshTree(),
      openFolder: () => void this.pickFolder(),
    });
    this.editor = new EditorPanel(editorArea, {
      backend,
      notify: (message, kind) => this.toasts.show(message, kind),
      confirmDiscard: (path) => this.confirmDiscard(path),
      onDirtyChange: (paths) => this.tree.setDirty(paths),
      onActiveChange: (path) => this.tree.setActive(path),
      onCheck: (path) => void this.runManual("get_diagnostics", { file: path }),
    });
    this.inspector = new InspectorPanel(inspectorArea, this.calls, {
      rerun: (call) => void this.runManual(call.tool, call.args),
      edit: (call) => void this.writeCall({ tool: call.tool, args: call.args }),
      writeCall: () => void this.writeCall(),
      exportTranscript: () => void this.exportTranscript(),
      copy: (text) => void this.copy(text),
    });
    this.chat = new ChatPanel(this.pages.chat, {
      send: (message) => void this.send(message),
      stop: () => void this.stop(),
      selectCall: (key) => this.inspector.select(key),
    });
    this.model = new ModelPanel(this.pages.model, {
      load: (path) => void this.loadModel(path),
      pick: () => void this.pickModel(),
      probe: () => void this.probe(),
      refreshList: () => void this.refreshModels(),
    });
    this.settings = new SettingsPanel(this.pages.settings, {
      save: (settings) => this.saveSettings(settings),
      reloadModel: () => void this.loadModel(this.modelState.kind === "ready" ? this.modelState.info.facts.path : null),
      revoke: (id) => void this.revoke(id),
      undo: (id) => void this.undo(id),
      refresh: () => void this.refreshSettingsLists(),
    });
    this.dialog = new ConfirmationDialog(this.modalHost, (id, answer) =>
      backend.answerConfirmation(id, answer).catch((error: unknown) => {
        this.toasts.show(AppError.from(error).message, "error");
      }),
    );
    this.calls.subscribe((call) => this.chat.updateCall(call));
    this.refreshAvailability();
  }

  async start(): Promise<void> {
    let startup;
    try {
      startup = await backend.startup();
    } catch (error) {
      this.toasts.show(`Lantern could not start: ${AppError.from(error).message}`, "error");
      return;
    }
    document.title = `Lantern ${startup.version}`;
    this.settings.setSettings(startup.settings);
    if (startup.workspace) {
      await this.workspaceOpened(startup.workspace);
    } else if (startup.workspace_error) {
      this.toasts.show(startup.workspace_error, "error");
    }
    markInteractive();
    void this.refreshModels();
    void backend.listTools().then((tools) => (this.tools = tools));
    if (startup.model) {
      this.setModelState({ kind: "ready", info: startup.model });
    } else if (startup.model_to_load_exists) {
      await this.loadModel(null, startup.model_to_load);
    } else {
      this.setModelState({ kind: "none", reason: `No model yet: ${startup.model_to_load} is not downloaded. Run bash scripts/fetch-model.sh, or choose a GGUF file.` });
    }
  }

  // ---- folder and files ----

  private async pickFolder(): Promise<void> {
    if (this.turnRunning) {
      this.toasts.show("Wait for the assistant to finish (or press Stop) before opening another folder.", "error");
      return;
    }
    const unsaved = this.editor.dirtyPaths;
    if (unsaved.length && !(await this.confirmDiscard(unsaved.join(", ")))) return;
    try {
      const info = await backend.pickWorkspace();
      if (info) await this.workspaceOpened(info);
    } catch (error) {
      this.toasts.show(AppError.from(error).message, "error");
    }
  }

  private async workspaceOpened(info: WorkspaceInfo): Promise<void> {
    this.workspace = info;
    this.folderButton.textContent = info.name;
    this.folderButton.title = `${info.root} — open another folder`;
    this.editor.reset();
    this.calls.clear();
    this.inspector.reset();
    this.chat.reset();
    this.tree.reset();
    if (info.policy_warning) this.toasts.show(info.policy_warning, "error");
    await this.refreshTree();
    void this.refreshSettingsLists();
    this.refreshAvailability();
  }

  private async refreshTree(): Promise<void> {
    if (!this.workspace) return;
    try {
      this.tree.setTree(await backend.listTree(), this.workspace.name);
    } catch (error) {
      this.toasts.show(`Cannot list the files: ${AppError.from(error).message}`, "error");
    }
  }

  private confirmDiscard(path: string): Promise<boolean> {
    return new Promise((resolve) => {
      openModal(this.modalHost, {
        title: "Discard unsaved changes?",
        body: h("p", {}, "Close ", h("code", { text: path }), " and lose the edits you have not saved?"),
        actions: [
          { label: "Keep editing", run: () => resolve(false) },
          { label: "Discard", kind: "danger", run: () => resolve(true) },
        ],
        onCancel: () => resolve(false),
      });
    });
  }

  // ---- the assistant ----

  private refreshAvailability(): void {
    const m = this.modelState;
    if (!this.workspace) this.chat.setAvailability({ ready: false, reason: "Open a folder to start." });
    else if (m.kind === "loading") this.chat.setAvailability({ ready: false, reason: "The model is loading…" });
    else if (m.kind !== "ready") this.chat.setAvailability({ ready: false, reason: "No model is loaded — see the Model tab." });
    else this.chat.setAvailability({ ready: true });
    this.chat.setBusy(this.turnRunning);
  }

  private async send(message: string): Promise<void> {
    this.turnRunning = true;
    this.refreshAvailability();
    this.chat.startTurn(message);
    let lastEvent: () => void = () => {};
    const delivered = new Promise<void>((resolve) => (lastEvent = resolve));
    try {
      const finished = await backend.sendMessage(message, (update) => {
        this.onUpdate(update, MODEL_SOURCE);
        if (update.type === "agent" && update.event.event === "turn_finished") lastEvent();
      });
      // The command can return before its last streamed events are delivered.
      await Promise.race([delivered, new Promise((r) => setTimeout(r, LAST_EVENT_GRACE_MS))]);
      this.chat.event(finished, null);
    } catch (error) {
      this.chat.failTurn(AppError.from(error).message);
    } finally {
      this.turnRunning = false;
      this.dialog.dropSource(MODEL_SOURCE);
      this.refreshAvailability();
      void this.refreshSettingsLists();
    }
  }

  private async stop(): Promise<void> {
    try {
      await backend.cancel();
      this.dialog.dropSource(MODEL_SOURCE);
    } catch (error) {
      this.toasts.show(AppError.from(error).message, "error");
    }
  }

  /** One streamed update from the model's turn (`MODEL_SOURCE`) or a manual call (its key). */
  private onUpdate(update: Update, source: string): void {
    if (update.type === "confirm") {
      this.dialog.enqueue(update.id, update.request, source);
      return;
    }
    const event = update.event;
    const call = this.calls.apply(event, source === MODEL_SOURCE ? undefined : source);
    if (source === MODEL_SOURCE) this.chat.event(event, call);
    if (event.event === "tool_finished" && event.success) {
      this.afterWrite(event);
      if (event.tool === "get_diagnostics") this.editor.showDiagnostics(event.result.data);
    }
  }

  /** A write changed a file: the editor reloads it, the tree and the undo list refresh. */
  private afterWrite(event: Extract<AgentEvent, { event: "tool_finished" }>): void {
    if (event.tool !== "write_file") return;
    const data = event.result.data as { path?: string; created?: boolean } | null;
    if (!data?.path) return;
    void this.editor.changedOnDisk(data.path);
    if (data.created) void this.refreshTree();
    void this.refreshSettingsLists();
  }

  // ---- manual calls ----

  private async writeCall(initial?: { tool: string; args: unknown }): Promise<void> {
    if (!this.tools.length) {
      try {
        this.tools = await backend.listTools();
      } catch (error) {
        this.toasts.show(AppError.from(error).message, "error");
        return;
      }
    }
    openManualCall(this.modalHost, this.tools, (tool, args) => void this.runManual(tool, args), initial);
  }

  private async runManual(tool: string, args: unknown): Promise<void> {
    const key = this.calls.startManual(tool, args);
    this.inspector.select(key);
    try {
      const result: ToolResult = await backend.runCall(tool, args, (update) => this.onUpdate(update, key));
      this.calls.finishManual(key, result);
    } catch (error) {
      this.calls.abandonManual(key);
      this.inspector.reset();
      this.toasts.show(AppError.from(error).message, "error");
    } finally {
      this.dialog.dropSource(key);
      void this.refreshSettingsLists();
    }
  }

  private async exportTranscript(): Promise<void> {
    try {
      const exported = await backend.exportTranscript();
      if (exported) this.toasts.show(`Exported ${exported.events} events to ${exported.path}`);
    } catch (error) {
      this.toasts.show(AppError.from(error).message, "error");
    }
  }

  private async copy(text: string): Promise<void> {
    try {
      await navigator.clipboard.writeText(text);
      this.toasts.show("Copied the call as JSON.");
    } catch {
      this.toasts.show("The clipboard is not available here.", "error");
    }
  }

  // ---- model ----

  private setModelState(state: ModelState): void {
    this.modelState = state;
    this.model.setState(state);
    switch (state.kind) {
      case "ready":
        this.modelChip.textContent = state.info.facts.name;
        this.modelChip.title = `${state.info.facts.path} — ${state.info.facts.context} tokens of context`;
        break;
      case "loading":
        this.modelChip.textContent =
          state.progress.stage === "reading" ? `Loading ${Math.round(state.progress.fraction * 100)}%` : "Calibrating…";
        break;
      case "error":
        this.modelChip.textContent = "Model failed to load";
        break;
      case "none":
        this.modelChip.textContent = "No model";
        break;
    }
    this.modelChip.dataset.state = state.kind;
    this.refreshAvailability();
  }

  private async loadModel(path: string | null, shownPath?: string): Promise<ModelInfo | null> {
    const label = path ?? shownPath ?? "model";
    this.setModelState({ kind: "loading", path: label, progress: { stage: "reading", fraction: 0 } });
    try {
      const info = await backend.loadModel(path, (progress) => this.setModelState({ kind: "loading", path: label, progress }));
      this.setModelState({ kind: "ready", info });
      void this.refreshModels();
      return info;
    } catch (error) {
      this.setModelState({ kind: "error", message: AppError.from(error).message });
      return null;
    }
  }

  private async pickModel(): Promise<void> {
    try {
      const path = await backend.pickModelFile();
      if (path) await this.loadModel(path);
    } catch (error) {
      this.toasts.show(AppError.from(error).message, "error");
    }
  }

  private async refreshModels(): Promise<void> {
    try {
      this.model.setList(await backend.listModels());
    } catch (error) {
      this.toasts.show(AppError.from(error).message, "error");
    }
  }

  private async probe(): Promise<void> {
    this.model.setProbe({ kind: "running", started: Date.now() });
    try {
      this.model.setProbe({ kind: "done", report: await backend.probeModel() });
    } catch (error) {
      this.model.setProbe({ kind: "error", message: AppError.from(error).message });
    }
  }

  // ---- settings, grants, undo ----

  private async saveSettings(settings: Settings): Promise<string | null> {
    try {
      this.settings.setSettings(await backend.updateSettings(settings));
      return null;
    } catch (error) {
      return AppError.from(error).message;
    }
  }

  private async refreshSettingsLists(): Promise<void> {
    if (!this.workspace) return;
    const [grants, checkpoints] = await Promise.allSettled([backend.listGrants(), backend.listCheckpoints()]);
    this.settings.setGrants(grants.status === "fulfilled" ? grants.value : AppError.from(grants.reason).message);
    this.settings.setCheckpoints(checkpoints.status === "fulfilled" ? checkpoints.value : AppError.from(checkpoints.reason).message);
  }

  private async revoke(id: string): Promise<void> {
    try {
      const grant = await backend.revokeGrant(id);
      this.toasts.show(`Revoked: ${grant.tool} grant ${grant.id}`);
    } catch (error) {
      this.toasts.show(AppError.from(error).message, "error");
    }
    await this.refreshSettingsLists();
  }

  private async undo(id: string): Promise<void> {
    try {
      const outcome = await backend.undo(id);
      this.toasts.show(`Undid ${outcome.undone}: ${outcome.path} ${outcome.action === "deleted" ? "removed (the write had created it)" : "restored"}.`);
      await this.editor.changedOnDisk(outcome.path);
      if (outcome.action === "deleted") await this.refreshTree();
    } catch (error) {
      const appError = AppError.from(error);
      const conflict = undoConflictOf(appError);
      if (conflict) {
        openModal(this.modalHost, {
          title: "Undo refused: the file changed since",
          body: renderUndoConflict(conflict),
          actions: [{ label: "Close", kind: "primary", run: () => undefined }],
          className: "undo-conflict-dialog",
        });
      } else {
        this.toasts.show(appError.message, "error");
      }
    }
    await this.refreshSettingsLists();
  }

  // ---- chrome ----

  private showPage(page: SidePage): void {
    for (const [name, element] of Object.entries(this.pages)) element.classList.toggle("hidden", name !== page);
    for (const [name, tab] of Object.entries(this.pageTabs)) tab.classList.toggle("active", name === page);
    if (page === "settings") void this.refreshSettingsLists();
  }

  private toggleTheme(): void {
    applyTheme(currentTheme() === "dark" ? "light" : "dark");
    this.renderThemeButton();
  }

  private renderThemeButton(): void {
    this.themeButton.textContent = currentTheme() === "dark" ? "☀" : "☾";
  }
}

/** Records when the window first shows the folder and can be used (the model may still be
 * loading): epoch milliseconds, after the next frame is painted. scripts/bench-app.mjs reads it
 * through WebDriver to time start to interactive. */
function markInteractive(): void {
  requestAnimationFrame(() =>
    setTimeout(() => {
      (window as unknown as { lanternInteractiveAt: number }).lanternInteractiveAt = performance.timeOrigin + performance.now();
    }, 0),
  );
}
