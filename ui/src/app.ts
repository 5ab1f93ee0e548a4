// The window: the layout, the panels in it, and the parts that drive them (the open folder, the
// model, the assistant's turns, manual calls, settings) wired together; then start-up. The
// panels are built before the parts they call, so those calls go through closures.

import { Chats } from "./app/chats";
import { AppError, backend } from "./ipc";
import { ConfirmationDialog } from "./dialogs/confirm";
import { confirmDiscard } from "./dialogs/discard";
import { CallLog } from "./lib/calls";
import { Toasts } from "./lib/toasts";
import { ToolCatalog } from "./lib/tool-catalog";
import { ChatPanel } from "./panels/chat";
import { EditorPanel } from "./panels/editor";
import { FileTreePanel } from "./panels/filetree";
import { InspectorPanel } from "./panels/inspector";
import { ModelPanel } from "./panels/model";
import { SettingsPanel } from "./panels/settings";
import { Folder } from "./app/folder";
import { Layout } from "./app/layout";
import { ManualCalls } from "./app/manual-calls";
import { ModelControl } from "./app/model";
import { SettingsControl } from "./app/settings";
import { startUp, type StartupParts } from "./app/startup";
import { ThemeSwitch } from "./app/theme";
import { Turns } from "./app/turns";

export class App {
  private readonly startupParts: StartupParts;

  constructor(root: HTMLElement) {
    const calls = new CallLog();
    const catalog = new ToolCatalog();
    const layout = new Layout(root, {
      pickFolder: () => void folder.pick(),
      toggleTheme: () => theme.toggle(),
      pageShown: (page) => {
        if (page === "settings") void settings.refreshLists();
      },
    });
    const theme = new ThemeSwitch(layout.themeButton);
    const toasts = new Toasts(layout.toastHost);
    const refreshLists = () => void settings.refreshLists();
    const refreshTools = () =>
      void backend
        .listTools()
        .then((tools) => catalog.set(tools))
        .catch(() => undefined);

    const tree = new FileTreePanel(layout.treeArea, {
      open: (path) => void editor.open(path),
      refresh: () => void folder.refreshTree(),
      openFolder: () => void folder.pick(),
    });
    const editor = new EditorPanel(layout.editorArea, {
      backend,
      notify: (message, kind) => toasts.show(message, kind),
      confirmDiscard: (path) => confirmDiscard(layout.modalHost, path),
      onDirtyChange: (paths) => tree.setDirty(paths),
      onActiveChange: (path) => tree.setActive(path),
      onCheck: (path) => void manual.run("get_diagnostics", { file: path }),
    });
    const inspector = new InspectorPanel(layout.inspectorArea, calls, {
      rerun: (call) => void manual.run(call.tool, call.args),
      edit: (call) => void manual.write({ tool: call.tool, args: call.args }),
      writeCall: () => void manual.write(),
      exportTranscript: () => void manual.exportTranscript(),
      copy: (text) => void manual.copy(text),
      stop: () => void turns.stop(),
    });
    const chat = new ChatPanel(layout.pages.chat, {
      send: (message) => void turns.send(message),
      stop: () => void turns.stop(),
      selectCall: (key) => inspector.select(key),
      newChat: () => void chats.newChat(),
      showChats: () => void chats.show(),
      mentions: {
        files: () => tree.files(),
        symbols: (prefix) => backend.completeSymbols(prefix),
      },
    });
    const chats: Chats = new Chats({ chat, calls, inspector, toasts, modalHost: layout.modalHost, turnRunning: () => turns.running });
    const modelPanel = new ModelPanel(layout.pages.model, {
      load: (path) => void model.load(path),
      pick: () => void model.pick(),
      probe: () => void model.probe(),
      refreshList: () => void model.refreshList(),
      listModels: (form) => backend.serverModels(form),
      test: (form) => backend.testServer(form),
      connect: (form) => model.connect(form),
    });
    const settingsPanel: SettingsPanel = new SettingsPanel(layout.pages.settings, {
      save: async (values) => {
        const error = await settings.save(values);
        // The map's size is a setting: the Model page shows the map at the new one.
        if (error === null) void model.refreshContext();
        return error;
      },
      reloadModel: () => void model.load(model.loadedPath),
      revoke: (id) => void settings.revoke(id),
      undo: (id) => void settings.undo(id),
      refresh: refreshLists,
      mcp: {
        change: (name, scope, edit) => settings.changeMcp(name, scope, edit),
        restart: () => void settings.restartMcp(),
      },
    });
    const dialog = new ConfirmationDialog(layout.modalHost, (id, answer) =>
      backend.answerConfirmation(id, answer).catch((error: unknown) => {
        toasts.show(AppError.from(error).message, "error");
      }),
    );

    // Typed explicitly: their closures refer to one another, which defeats inference.
    const folder: Folder = new Folder({
      button: layout.folderButton,
      toasts,
      calls,
      tree,
      editor,
      inspector,
      chat,
      confirmDiscard: (paths) => confirmDiscard(layout.modalHost, paths),
      turnRunning: () => turns.running,
      opened: () => {
        // The folder's own MCP servers bring their tools, its own instructions their cost.
        refreshTools();
        void model.refreshContext();
        refreshLists();
        turns.refreshAvailability();
      },
    });
    const model: ModelControl = new ModelControl({ chip: layout.modelChip, panel: modelPanel, toasts, changed: () => turns.refreshAvailability() });
    const turns: Turns = new Turns({
      catalog,
      calls,
      chat,
      dialog,
      toasts,
      editor,
      refreshTree: () => void folder.refreshTree(),
      refreshLists,
      folderOpen: () => folder.isOpen,
      modelState: () => model.state,
    });
    const manual: ManualCalls = new ManualCalls({
      modalHost: layout.modalHost,
      calls,
      inspector,
      dialog,
      toasts,
      catalog,
      route: (update, key) => turns.route(update, key),
      whileRunning: (work) => turns.whileCallRuns(work),
      refreshLists,
    });
    const settings: SettingsControl = new SettingsControl({
      panel: settingsPanel,
      toasts,
      modalHost: layout.modalHost,
      editor,
      folderOpen: () => folder.isOpen,
      refreshTree: () => folder.refreshTree(),
      toolsChanged: refreshTools,
    });

    calls.subscribe((call) => chat.updateCall(call));
    turns.refreshAvailability();
    this.startupParts = { toasts, settings: settingsPanel, folder, model, modelPanel, setTools: (tools) => catalog.set(tools) };
  }

  start(): Promise<void> {
    return startUp(this.startupParts);
  }
}
