// The assistant's turns: sending a message, stopping, whether the chat can send, and routing
// what the backend streams — for a turn and for a manual call alike — to the call log, the
// chat, the confirmation dialog and the editor.

import { AppError, backend } from "../ipc";
import type { AgentEvent, ResultKind, Update } from "../ipc/types";
import { type ConfirmationDialog, MODEL_SOURCE } from "../dialogs/confirm";
import type { CallLog } from "../lib/calls";
import type { Toasts } from "../lib/toasts";
import type { ToolCatalog } from "../lib/tool-catalog";
import type { ChatAvailability, ChatPanel } from "../panels/chat";
import type { EditorPanel } from "../panels/editor";
import type { ModelState } from "../panels/model";

/** How long to wait for a run's last streamed event after its command has returned. */
const LAST_EVENT_GRACE_MS = 1000;

type ToolFinished = Extract<AgentEvent, { event: "tool_finished" }>;

/** Whether the chat can send, and if not, what the user has to do first. */
export function availabilityOf(folderOpen: boolean, model: ModelState): ChatAvailability {
  if (!folderOpen) return { ready: false, reason: "Open a folder to start." };
  if (model.kind === "loading") return { ready: false, reason: "The model is loading…" };
  if (model.kind !== "ready") return { ready: false, reason: "No model is loaded — see the Model tab." };
  return { ready: true };
}

/** What a call's result can change besides the call log. */
export interface ResultTargets {
  editor: Pick<EditorPanel, "changedOnDisk" | "showDiagnostics">;
  refreshTree: () => void;
  /** The grants and writes lists. */
  refreshLists: () => void;
}

/** Where a successful result goes besides the call log, decided by the result kind its tool
 * declares (`kind`, from the tool list): a write reloads the file in the editor, refreshes the
 * tree when it created the file, and refreshes the writes list; diagnostics go on the open
 * files. Every other kind, and a tool the list does not name, stays in the call log. */
export function routeResult(event: ToolFinished, kind: ResultKind | undefined, targets: ResultTargets): void {
  if (!event.success) return;
  switch (kind) {
    case "write": {
      const data = event.result.data as { path?: string; created?: boolean } | null;
      if (data?.path) {
        void targets.editor.changedOnDisk(data.path);
        if (data.created) targets.refreshTree();
        targets.refreshLists();
      }
      break;
    }
    case "diagnostics":
      targets.editor.showDiagnostics(event.result.data);
      break;
  }
}

export interface TurnDeps extends ResultTargets {
  /** The tools' declared kinds, which decide how a preview and a result are shown. */
  catalog: Pick<ToolCatalog, "resultKind">;
  calls: CallLog;
  chat: ChatPanel;
  dialog: ConfirmationDialog;
  toasts: Toasts;
  folderOpen: () => boolean;
  modelState: () => ModelState;
}

export class Turns {
  private turnRunning = false;
  private callsRunning = 0;

  constructor(private readonly deps: TurnDeps) {}

  /** A turn or a hand-written call holds the conversation. */
  get running(): boolean {
    return this.turnRunning || this.callsRunning > 0;
  }

  refreshAvailability(): void {
    const { chat } = this.deps;
    chat.setAvailability(availabilityOf(this.deps.folderOpen(), this.deps.modelState()));
    chat.setBusy(this.running);
  }

  /** Runs a hand-written call: while it runs, the chat's Stop stops it as it stops a turn. */
  async whileCallRuns<T>(work: () => Promise<T>): Promise<T> {
    this.callsRunning += 1;
    this.refreshAvailability();
    try {
      return await work();
    } finally {
      this.callsRunning -= 1;
      this.refreshAvailability();
    }
  }

  async send(message: string): Promise<void> {
    const { chat, dialog } = this.deps;
    this.turnRunning = true;
    this.refreshAvailability();
    chat.startTurn(message);
    let lastEvent: () => void = () => {};
    const delivered = new Promise<void>((resolve) => (lastEvent = resolve));
    try {
      const finished = await backend.sendMessage(message, (update) => {
        this.route(update, MODEL_SOURCE);
        if (update.type === "agent" && update.event.event === "turn_finished") lastEvent();
      });
      // The command can return before its last streamed events are delivered.
      await Promise.race([delivered, new Promise((r) => setTimeout(r, LAST_EVENT_GRACE_MS))]);
      chat.event(finished, null);
    } catch (error) {
      chat.failTurn(AppError.from(error).message);
    } finally {
      this.turnRunning = false;
      dialog.dropSource(MODEL_SOURCE);
      this.refreshAvailability();
      this.deps.refreshLists();
    }
  }

  async stop(): Promise<void> {
    try {
      await backend.cancel();
      this.deps.dialog.dropSource(MODEL_SOURCE);
    } catch (error) {
      this.deps.toasts.show(AppError.from(error).message, "error");
    }
  }

  /** One streamed update from the model's turn (`MODEL_SOURCE`) or a manual call (its key). */
  route(update: Update, source: string): void {
    const { calls, chat, dialog, catalog } = this.deps;
    if (update.type === "confirm") {
      // The request says what its preview holds, so nothing waits for the tool catalog.
      dialog.enqueue(update.id, update.request, source);
      return;
    }
    const event = update.event;
    const call = calls.apply(event, source === MODEL_SOURCE ? undefined : source);
    if (source === MODEL_SOURCE) chat.event(event, call);
    if (event.event === "tool_finished") routeResult(event, catalog.resultKind(event.tool), this.deps);
  }
}
