// The open project folder: choosing another one, what opening it clears and reloads, and the
// file tree's listing of it.

import { AppError, backend } from "../ipc";
import type { IndexStatus, WorkspaceInfo } from "../ipc/types";
import type { CallLog } from "../lib/calls";
import type { Toasts } from "../lib/toasts";
import { suggestionsFor } from "../lib/suggestions";
import type { ChatPanel } from "../panels/chat";
import type { EditorPanel } from "../panels/editor";
import type { FileTreePanel } from "../panels/filetree";
import type { InspectorPanel } from "../panels/inspector";

/** How often the code index's progress is asked for while it is built. */
const INDEX_POLL_MS = 400;

export interface FolderDeps {
  /** The toolbar button that names the open folder. */
  button: HTMLButtonElement;
  toasts: Toasts;
  calls: CallLog;
  tree: FileTreePanel;
  editor: EditorPanel;
  inspector: InspectorPanel;
  chat: ChatPanel;
  confirmDiscard: (paths: string) => Promise<boolean>;
  turnRunning: () => boolean;
  /** A folder was opened and its files listed: what depends on the folder catches up. */
  opened: () => void;
}

export class Folder {
  private info: WorkspaceInfo | null = null;

  constructor(private readonly deps: FolderDeps) {}

  get isOpen(): boolean {
    return this.info !== null;
  }

  async pick(): Promise<void> {
    const { toasts, editor } = this.deps;
    if (this.deps.turnRunning()) {
      toasts.show("Wait for the assistant to finish (or press Stop) before opening another folder.", "error");
      return;
    }
    const unsaved = editor.dirtyPaths;
    if (unsaved.length && !(await this.deps.confirmDiscard(unsaved.join(", ")))) return;
    try {
      const info = await backend.pickWorkspace();
      if (info) await this.open(info);
    } catch (error) {
      toasts.show(AppError.from(error).message, "error");
    }
  }

  /** Shows a folder the backend has opened; everything about the previous one is forgotten. */
  async open(info: WorkspaceInfo): Promise<void> {
    const { button, editor, calls, inspector, chat, tree, toasts } = this.deps;
    this.info = info;
    button.textContent = info.name;
    button.title = `${info.root} — open another folder`;
    editor.reset();
    calls.clear();
    inspector.reset();
    chat.reset();
    tree.reset();
    if (info.policy_warning) toasts.show(info.policy_warning, "error");
    await this.refreshTree();
    this.deps.opened();
    void this.followCodeIndex(info);
  }

  /** Shows the code index's progress under the tree until it is built (or fails), while this
   * folder stays open. */
  private async followCodeIndex(info: WorkspaceInfo): Promise<void> {
    for (;;) {
      if (this.info !== info) return;
      let status: IndexStatus;
      try {
        status = await backend.codeIndexStatus();
      } catch {
        return;
      }
      if (this.info !== info) return;
      this.deps.tree.setIndexStatus(status);
      if (status.state === "ready" || status.state === "failed") return;
      await new Promise((resolve) => setTimeout(resolve, INDEX_POLL_MS));
    }
  }

  async refreshTree(): Promise<void> {
    if (!this.info) return;
    try {
      const tree = await backend.listTree();
      this.deps.tree.setTree(tree, this.info.name);
      this.deps.chat.setSuggestions(suggestionsFor(tree.files));
    } catch (error) {
      this.deps.toasts.show(`Cannot list the files: ${AppError.from(error).message}`, "error");
    }
  }
}
