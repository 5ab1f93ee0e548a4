// The folder's conversations: a new chat, and the saved ones (from their transcripts) to read,
// take up again or delete.

import { AppError, backend } from "../ipc";
import type { ChatSummary } from "../ipc/types";
import { openModal } from "../dialogs/modal";
import { CallLog } from "../lib/calls";
import { button, clear, h } from "../lib/dom";
import type { Toasts } from "../lib/toasts";
import { ChatPanel } from "../panels/chat";
import type { InspectorPanel } from "../panels/inspector";

export interface ChatsDeps {
  chat: ChatPanel;
  calls: CallLog;
  inspector: InspectorPanel;
  toasts: Toasts;
  modalHost: HTMLElement;
  turnRunning: () => boolean;
}

/** "12 Nov, 14:03" for a time in milliseconds. */
export function describeWhen(ms: number): string {
  return new Date(ms).toLocaleString([], { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" });
}

export class Chats {
  constructor(private readonly deps: ChatsDeps) {}

  private busy(): boolean {
    if (!this.deps.turnRunning()) return false;
    this.deps.toasts.show("Wait for the assistant to finish (or press Stop) first.", "error");
    return true;
  }

  /** Starts a new conversation; the one before stays saved. */
  async newChat(): Promise<void> {
    if (this.busy()) return;
    try {
      await backend.newChat();
      this.forget();
    } catch (error) {
      this.deps.toasts.show(AppError.from(error).message, "error");
    }
  }

  /** The list of saved conversations, in a dialog. */
  async show(): Promise<void> {
    let chats: ChatSummary[];
    try {
      chats = await backend.listChats();
    } catch (error) {
      this.deps.toasts.show(AppError.from(error).message, "error");
      return;
    }
    const list = h("div", { class: "chat-list", attrs: { role: "list" } });
    const modal = openModal(this.deps.modalHost, { title: "Chats in this folder", body: list, actions: [{ label: "Close", run: () => {} }], className: "chats-dialog" });
    const render = (items: ChatSummary[]) => {
      clear(list);
      if (items.length === 0) {
        list.append(h("p", { class: "muted", text: "No saved conversations yet: each chat is saved as you go." }));
        return;
      }
      for (const chat of items) {
        list.append(
          h(
            "div",
            { class: "chat-row", attrs: { role: "listitem" }, data: { path: chat.path } },
            h("div", { class: "chat-row-text" }, h("div", { class: "chat-first", text: chat.first_message }), h("div", { class: "muted small", text: `${describeWhen(chat.modified_ms)} · ${chat.turns} message${chat.turns === 1 ? "" : "s"} · ${chat.model}` })),
            button("Read", () => void this.read(chat), { class: "small chat-read" }),
            button("Continue", () => void this.continueChat(chat).then((done) => done && modal.close()), { class: "small primary chat-continue" }),
            button("Delete", () => void this.remove(chat).then(async () => render(await backend.listChats())), { class: "small danger chat-delete" }),
          ),
        );
      }
    };
    render(chats);
  }

  /** A saved conversation, read-only, in a dialog of its own. */
  private async read(summary: ChatSummary): Promise<void> {
    try {
      const events = await backend.openChat(summary.path);
      const host = h("div", { class: "chat-readonly" });
      const view = new ChatPanel(host, {
        send: () => {},
        stop: () => {},
        selectCall: () => {},
        newChat: () => {},
        showChats: () => {},
        mentions: { files: () => [], symbols: async () => [] },
      });
      const log = new CallLog();
      view.replay(events, (event) => log.apply(event));
      openModal(this.deps.modalHost, {
        title: summary.first_message,
        body: host,
        className: "chat-read-dialog",
        actions: [
          { label: "Close", run: () => {} },
          { label: "Continue this chat", kind: "primary", run: () => void this.continueChat(summary) },
        ],
      });
    } catch (error) {
      this.deps.toasts.show(AppError.from(error).message, "error");
    }
  }

  /** Takes a saved conversation up again; true when it is now the chat. */
  private async continueChat(summary: ChatSummary): Promise<boolean> {
    if (this.busy()) return false;
    try {
      const opened = await backend.continueChat(summary.path);
      this.forget();
      const { chat, calls } = this.deps;
      chat.replay(opened.events, (event) => calls.apply(event));
      return true;
    } catch (error) {
      this.deps.toasts.show(AppError.from(error).message, "error");
      return false;
    }
  }

  private async remove(summary: ChatSummary): Promise<void> {
    try {
      await backend.deleteChat(summary.path);
    } catch (error) {
      this.deps.toasts.show(AppError.from(error).message, "error");
    }
  }

  /** The chat, the calls and the inspector of the conversation before. */
  private forget(): void {
    this.deps.calls.clear();
    this.deps.inspector.reset();
    this.deps.chat.reset();
  }
}
