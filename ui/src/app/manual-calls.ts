// What the call inspector asks for: calls written by hand, edited or re-run (their updates
// routed like a turn's, under the call's own key), exporting the transcript, copying a call.

import { AppError, backend } from "../ipc";
import type { ToolResult, Update } from "../ipc/types";
import type { ConfirmationDialog } from "../dialogs/confirm";
import { openManualCall } from "../dialogs/manual-call";
import type { CallLog } from "../lib/calls";
import type { Toasts } from "../lib/toasts";
import type { ToolCatalog } from "../lib/tool-catalog";
import type { InspectorPanel } from "../panels/inspector";

export interface ManualCallDeps {
  modalHost: HTMLElement;
  calls: CallLog;
  inspector: InspectorPanel;
  dialog: ConfirmationDialog;
  toasts: Toasts;
  /** The tools a call can be written for. */
  catalog: ToolCatalog;
  /** Routes a streamed update from the call whose key is `source`. */
  route: (update: Update, source: string) => void;
  /** Runs the call with the chat's Stop standing by. */
  whileRunning: (work: () => Promise<ToolResult>) => Promise<ToolResult>;
  /** The grants and writes lists. */
  refreshLists: () => void;
}

export class ManualCalls {
  constructor(private readonly deps: ManualCallDeps) {}

  /** Opens the dialog to write a call, filled with `initial` when editing one. */
  async write(initial?: { tool: string; args: unknown }): Promise<void> {
    const { catalog } = this.deps;
    if (!catalog.specs.length) {
      try {
        catalog.set(await backend.listTools());
      } catch (error) {
        this.deps.toasts.show(AppError.from(error).message, "error");
        return;
      }
    }
    openManualCall(this.deps.modalHost, catalog.specs, (tool, args) => void this.run(tool, args), initial);
  }

  async run(tool: string, args: unknown): Promise<void> {
    const { calls, inspector, dialog, toasts } = this.deps;
    const key = calls.startManual(tool, args);
    inspector.select(key);
    try {
      const result = await this.deps.whileRunning(() => backend.runCall(tool, args, (update) => this.deps.route(update, key)));
      calls.finishManual(key, result);
    } catch (error) {
      calls.abandonManual(key);
      inspector.reset();
      toasts.show(AppError.from(error).message, "error");
    } finally {
      dialog.dropSource(key);
      this.deps.refreshLists();
    }
  }

  async exportTranscript(): Promise<void> {
    const { toasts } = this.deps;
    try {
      const exported = await backend.exportTranscript();
      if (exported) toasts.show(`Exported ${exported.events} events to ${exported.path}`);
    } catch (error) {
      toasts.show(AppError.from(error).message, "error");
    }
  }

  async copy(text: string): Promise<void> {
    const { toasts } = this.deps;
    try {
      await navigator.clipboard.writeText(text);
      toasts.show("Copied the call as JSON.");
    } catch {
      toasts.show("The clipboard is not available here.", "error");
    }
  }
}
