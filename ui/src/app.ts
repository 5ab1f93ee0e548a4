// The window: the layout, the panels in it, and the parts that drive them (the open folder, the
// model, the assistant's turns, manual calls, settings) wired together; then start-up. The
// panels are built before the parts they call, so those calls go through `Parts`, filled in
// once the parts exist (no panel calls back before the constructor ends).

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

/** The parts that drive the panels, each made after the panels whose callbacks call it. */
interface Parts {
  folder: Folder;
  model: ModelControl;
  turns: Turns;
  manual: ManualCalls;
  settings: SettingsControl;
  chats: Chats;
}

/** The shared pieces every part of the window is built with. */
interface Shared {
  layout: Layout;
  calls: CallLog;
  catalog: ToolCatalog;
  toasts: Toasts;
  parts: Parts;
}

/** The panels of the window, their callbacks going to the parts. */
interface Panels {
  tree: FileTreePanel;
  editor: EditorPanel;
  inspector: InspectorPanel;
  chat: ChatPanel;
  modelPanel: ModelPanel;
  settingsPanel: SettingsPanel;
  dialog: ConfirmationDialog;
}

export class App {
  private readonly startupParts: StartupParts;

  constructor(root: HTMLElement) {
    const parts = {} as Parts;
    const layout: Layout = new Layout(root, {
      pickFolder: () => void parts.folder.pick(),
      toggleTheme: () => theme.toggle(),
      pageShown: (page) => {
        if (page === "settings") void parts.settings.refreshLists();
      },
    });
    const theme = new ThemeSwitch(layout.themeButton);
    const shared: Shared = { layout, calls: new CallLog(), catalog: new ToolCatalog(), toasts: new Toasts(layout.toastHost), parts };
    const panels = makePanels(shared);
    Object.assign(parts, makeParts(shared, panels));
    shared.calls.subscribe((call) => panels.chat.updateCall(call));
    parts.turns.refreshAvailability();
    this.startupParts = {
      toasts: shared.toasts,
      settings: panels.settingsPanel,
      folder: parts.folder,
      model: parts.model,
      modelPanel: panels.modelPanel,
      setTools: (tools) => shared.catalog.set(tools),
    };
  }

  start(): Promise<void> {
    return startUp(this.startupParts);
  }
}

function makePanels({ layout, calls, toasts, parts }: Shared): Panels {
  const tree = new FileTreePanel(layout.treeArea, {
    open: (path) => void editor.open(path),
    refresh: () => void parts.folder.refreshTree(),
    openFolder: () => void parts.folder.pick(),
  });
  const editor: EditorPanel = new EditorPanel(layout.editorArea, {
    backend,
    notify: (message, kind) => toasts.show(message, kind),
    confirmDiscard: (path) => confirmDiscard(layout.modalHost, path),
    onDirtyChange: (paths) => tree.setDirty(paths),
    onActiveChange: (path) => tree.setActive(path),
    onCheck: (path) => void parts.manual.run("get_diagnostics", { file: path }),
  });
  const inspector = new InspectorPanel(layout.inspectorArea, calls, {
    rerun: (call) => void parts.manual.run(call.tool, call.args),
    edit: (call) => void parts.manual.write({ tool: call.tool, args: call.args }),
    writeCall: () => void parts.manual.write(),
    exportTranscript: () => void parts.manual.exportTranscript(),
    copy: (text) => void parts.manual.copy(text),
    stop: () => void parts.turns.stop(),
  });
  const chat = new ChatPanel(layout.pages.chat, {
    send: (message) => void parts.turns.send(message),
    stop: () => void parts.turns.stop(),
    selectCall: (key) => inspector.select(key),
    newChat: () => void parts.chats.newChat(),
    showChats: () => void parts.chats.show(),
    mentions: {
      files: () => tree.files(),
      symbols: (prefix) => backend.completeSymbols(prefix),
    },
  });
  const modelPanel = new ModelPanel(layout.pages.model, {
    load: (path) => void parts.model.load(path),
    pick: () => void parts.model.pick(),
    probe: () => void parts.model.probe(),
    refreshList: () => void parts.model.refreshList(),
    listModels: (form) => backend.serverModels(form),
    test: (form) => backend.testServer(form),
    connect: (form) => parts.model.connect(form),
  });
  const settingsPanel = new SettingsPanel(layout.pages.settings, {
    save: async (values) => {
      const error = await parts.settings.save(values);
      // The map's size is a setting: the Model page shows the map at the new one.
      if (error === null) void parts.model.refreshContext();
      return error;
    },
    reloadModel: () => void parts.model.load(parts.model.loadedPath),
    revoke: (id) => void parts.settings.revoke(id),
    undo: (id) => void parts.settings.undo(id),
    refresh: () => void parts.settings.refreshLists(),
    mcp: {
      change: (name, scope, edit) => parts.settings.changeMcp(name, scope, edit),
      restart: () => void parts.settings.restartMcp(),
    },
  });
  const dialog = new ConfirmationDialog(layout.modalHost, (id, answer) =>
    backend.answerConfirmation(id, answer).catch((error: unknown) => {
      toasts.show(AppError.from(error).message, "error");
    }),
  );
  return { tree, editor, inspector, chat, modelPanel, settingsPanel, dialog };
}

function makeParts({ layout, calls, catalog, toasts, parts }: Shared, panels: Panels): Parts {
  const { tree, editor, inspector, chat, modelPanel, settingsPanel, dialog } = panels;
  const refreshLists = () => void parts.settings.refreshLists();
  const refreshTools = () =>
    void backend
      .listTools()
      .then((tools) => catalog.set(tools))
      .catch(() => undefined);
  const folder = new Folder({
    button: layout.folderButton,
    toasts,
    calls,
    tree,
    editor,
    inspector,
    chat,
    confirmDiscard: (paths) => confirmDiscard(layout.modalHost, paths),
    turnRunning: () => parts.turns.running,
    opened: () => {
      // The folder's own MCP servers bring their tools, its own instructions their cost.
      refreshTools();
      void parts.model.refreshContext();
      refreshLists();
      parts.turns.refreshAvailability();
    },
  });
  const model = new ModelControl({ chip: layout.modelChip, panel: modelPanel, toasts, changed: () => parts.turns.refreshAvailability() });
  const turns = new Turns({
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
  const manual = new ManualCalls({
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
  const settings = new SettingsControl({
    panel: settingsPanel,
    toasts,
    modalHost: layout.modalHost,
    editor,
    folderOpen: () => folder.isOpen,
    refreshTree: () => folder.refreshTree(),
    toolsChanged: refreshTools,
  });
  const chats = new Chats({ chat, calls, inspector, toasts, modalHost: layout.modalHost, turnRunning: () => turns.running });
  return { folder, model, turns, manual, settings, chats };
}
