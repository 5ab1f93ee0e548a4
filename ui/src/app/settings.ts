// The settings page: saving the settings, and the lists of grants and of writes with their
// revoke and undo. An undo the file's later changes block explains itself in a dialog.

import { AppError, backend } from "../ipc";
import type { McpEdit, McpScope, Settings } from "../ipc/types";
import { openModal } from "../dialogs/modal";
import { renderUndoConflict, undoConflictOf } from "../dialogs/undo-conflict";
import type { Toasts } from "../lib/toasts";
import type { EditorPanel } from "../panels/editor";
import type { SettingsPanel } from "../panels/settings";

export interface SettingsDeps {
  panel: SettingsPanel;
  toasts: Toasts;
  modalHost: HTMLElement;
  editor: EditorPanel;
  folderOpen: () => boolean;
  refreshTree: () => Promise<void>;
  /** The tools changed (an MCP server came or went). */
  toolsChanged: () => void;
}

export class SettingsControl {
  constructor(private readonly deps: SettingsDeps) {}

  /** Null when saved, else why not (the form shows it). */
  async save(settings: Settings): Promise<string | null> {
    try {
      this.deps.panel.setSettings(await backend.updateSettings(settings));
      return null;
    } catch (error) {
      return AppError.from(error).message;
    }
  }

  /** Grants and writes belong to the open folder; each list shows its own failure. */
  async refreshLists(): Promise<void> {
    if (!this.deps.folderOpen()) return;
    const { panel } = this.deps;
    const [grants, checkpoints] = await Promise.allSettled([backend.listGrants(), backend.listCheckpoints()]);
    panel.setGrants(grants.status === "fulfilled" ? grants.value : AppError.from(grants.reason).message);
    await this.refreshMcp();
    panel.setCheckpoints(checkpoints.status === "fulfilled" ? checkpoints.value : AppError.from(checkpoints.reason).message);
  }

  async refreshMcp(): Promise<void> {
    try {
      this.deps.panel.setMcp(await backend.mcpServers());
    } catch (error) {
      this.deps.panel.setMcp(AppError.from(error).message);
    }
  }

  /** Null when done, else why not (the section shows it). */
  async changeMcp(name: string, scope: McpScope, edit: McpEdit): Promise<string | null> {
    try {
      this.deps.panel.setMcp(await backend.changeMcp(name, scope, edit));
      this.deps.toolsChanged();
      return null;
    } catch (error) {
      return AppError.from(error).message;
    }
  }

  async restartMcp(): Promise<void> {
    try {
      this.deps.panel.setMcp(await backend.restartMcp());
      this.deps.toolsChanged();
    } catch (error) {
      this.deps.toasts.show(AppError.from(error).message, "error");
    }
  }

  async revoke(id: string): Promise<void> {
    const { toasts } = this.deps;
    try {
      const grant = await backend.revokeGrant(id);
      toasts.show(`Revoked: ${grant.tool} grant ${grant.id}`);
    } catch (error) {
      toasts.show(AppError.from(error).message, "error");
    }
    await this.refreshLists();
  }

  async undo(id: string): Promise<void> {
    const { toasts, editor } = this.deps;
    try {
      const outcome = await backend.undo(id);
      toasts.show(`Undid ${outcome.undone}: ${outcome.path} ${outcome.action === "deleted" ? "removed (the write had created it)" : "restored"}.`);
      await editor.changedOnDisk(outcome.path);
      if (outcome.action === "deleted") await this.deps.refreshTree();
    } catch (error) {
      const appError = AppError.from(error);
      const conflict = undoConflictOf(appError);
      if (conflict) {
        openModal(this.deps.modalHost, {
          title: "Undo refused: the file changed since",
          body: renderUndoConflict(conflict),
          actions: [{ label: "Close", kind: "primary", run: () => undefined }],
          className: "undo-conflict-dialog",
        });
      } else {
        toasts.show(appError.message, "error");
      }
    }
    await this.refreshLists();
  }
}
