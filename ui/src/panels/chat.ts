// The chat: the user's messages, the assistant's reply streaming in as Markdown, each tool call
// as a compact card that opens it in the inspector, and a guard that stopped the turn said in
// plain words.

import type { AgentEvent, AgentEventOf, Form } from "../ipc/types";
import { type CallRecord, STATUS_LABELS, statusOf } from "../lib/calls";
import { button, clear, h } from "../lib/dom";
import { describeContext, describeEvaluated, summarizeArgs } from "../lib/format";
import { renderMarkdown } from "../lib/markdown";
import { MentionMenu, type MentionSources } from "./mentions";

/** A message's form (how Lantern read what it asks) in the words `Form::describe` gives the command line. */
const FORM_LABELS: Record<Form, string> = {
  change: "a change or a command",
  where: "where something is",
  how_many_files: "how many files there are",
  explain: "an explanation",
  look_up: "a fact of the project",
  chat: "a general question",
};

export interface ChatActions {
  send: (message: string) => void;
  stop: () => void;
  selectCall: (key: string) => void;
  newChat: () => void;
  showChats: () => void;
  /** Where `@` mentions are completed from. */
  mentions: MentionSources;
}

export type ChatAvailability =
  | { ready: true }
  | { ready: false; reason: string };

/** Offered before a folder's files are known. */
const GENERAL_EXAMPLES = ["What files are in this folder?"];

export class ChatPanel {
  private readonly log = h("div", { class: "chat-log", attrs: { "aria-live": "polite" } });
  private readonly input = h("textarea", {
    class: "chat-input",
    attrs: { rows: "3", placeholder: "Ask about this project…  (Enter sends, Shift+Enter for a new line)", "aria-label": "message" },
  });
  private readonly sendButton: HTMLButtonElement;
  private readonly stopButton: HTMLButtonElement;
  private readonly hint = h("div", { class: "chat-hint muted small" });
  /** How full the model's context is after the last step; hidden until a step says. */
  private readonly meterBar = h("div", { class: "context-meter-fill" });
  private readonly meterText = h("span", { class: "context-meter-text" });
  /** How many prompt tokens the last step evaluated: the rest came from the model's cache. */
  private readonly meterEvaluated = h("span", {
    class: "context-evaluated",
    attrs: { title: "Prompt tokens the model evaluated for the last step; the rest came from its cache." },
  });
  private readonly meter = h(
    "div",
    { class: "context-meter muted small hidden", attrs: { role: "meter", "aria-label": "context used" } },
    h("div", { class: "context-meter-bar" }, this.meterBar),
    h("span", {}, this.meterText, this.meterEvaluated),
  );
  private readonly newChatButton: HTMLButtonElement;
  private readonly mentions: MentionMenu;
  private reply: HTMLElement | null = null;
  private segment: { element: HTMLElement; text: string } | null = null;
  private renderQueued = false;
  private busy = false;
  private thinkingTimer: ReturnType<typeof setInterval> | null = null;
  private availability: ChatAvailability = { ready: false, reason: "" };
  private examples: string[] = GENERAL_EXAMPLES;

  constructor(
    readonly root: HTMLElement,
    private readonly actions: ChatActions,
  ) {
    root.classList.add("chat-panel");
    this.sendButton = button("Send", () => this.submit(), { class: "primary send-button" });
    this.stopButton = button("Stop", () => actions.stop(), { class: "danger stop-button hidden", title: "Stop the assistant" });
    this.mentions = new MentionMenu(this.input, actions.mentions);
    this.input.addEventListener("keydown", (event) => {
      if (this.mentions.key(event)) return;
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.submit();
      }
    });
    this.newChatButton = button("New chat", actions.newChat, { class: "small new-chat", title: "Start a new conversation; this one stays saved" });
    const header = h("div", { class: "chat-header" }, this.newChatButton, button("Chats…", actions.showChats, { class: "small show-chats", title: "This folder's saved conversations" }));
    root.append(header, this.log, h("div", { class: "chat-compose" }, this.mentions.root, this.input, h("div", { class: "chat-buttons" }, this.sendButton, this.stopButton)), this.meter, this.hint);
    this.renderEmpty();
  }

  setAvailability(availability: ChatAvailability): void {
    this.availability = availability;
    this.refreshControls();
  }

  setBusy(busy: boolean): void {
    this.busy = busy;
    this.refreshControls();
  }

  private refreshControls(): void {
    const ready = this.availability.ready;
    this.sendButton.disabled = !ready || this.busy;
    this.newChatButton.disabled = this.busy;
    this.sendButton.classList.toggle("hidden", this.busy);
    this.stopButton.classList.toggle("hidden", !this.busy);
    this.hint.textContent = this.availability.ready ? "" : this.availability.reason;
  }

  private submit(): void {
    const text = this.input.value.trim();
    if (!text || this.busy || !this.availability.ready) return;
    this.input.value = "";
    this.actions.send(text);
  }

  /** Shows a saved conversation as it went: `apply` turns each event into its call record. */
  replay(events: AgentEvent[], apply: (event: AgentEvent) => CallRecord | null): void {
    this.reset();
    for (const event of events) {
      if (event.event === "turn_started") this.startTurn(event.message);
      this.event(event, apply(event));
    }
    this.stopThinkingTimer();
    this.reply?.querySelector(".thinking")?.remove();
    this.reply = null;
    this.flushText();
  }

  /** What the empty chat offers to ask (made from the open project). */
  setSuggestions(examples: string[]): void {
    this.examples = examples;
    const empty = this.log.querySelector(".chat-empty");
    if (empty) {
      empty.remove();
      this.renderEmpty();
    }
  }

  reset(): void {
    clear(this.log);
    this.meter.classList.add("hidden");
    this.reply = null;
    this.segment = null;
    this.renderEmpty();
  }

  private renderEmpty(): void {
    this.log.append(
      h(
        "div",
        { class: "empty-state chat-empty" },
        h("p", { text: "Ask about the open folder. The assistant reads, searches and edits it with tools you can see." }),
        h("div", { class: "examples" }, ...this.examples.map((example) => button(example, () => {
          this.input.value = example;
          this.input.focus();
        }, { class: "chip" }))),
      ),
    );
  }

  /** The user's message, and an empty reply that the turn's events fill. */
  startTurn(message: string): void {
    this.log.querySelector(".chat-empty")?.remove();
    this.log.append(h("div", { class: "msg user" }, h("div", { class: "msg-body", text: message })));
    const thinking = h("div", { class: "thinking", text: "Thinking…" });
    this.reply = h("div", { class: "msg assistant" }, thinking);
    this.segment = null;
    this.log.append(this.reply);
    this.scroll();
    // A small model on a busy CPU can take a while before its first word: show it is alive.
    const started = Date.now();
    this.stopThinkingTimer();
    this.thinkingTimer = setInterval(() => {
      const seconds = Math.round((Date.now() - started) / 1000);
      if (seconds >= 2) thinking.textContent = `Thinking… ${seconds} s`;
    }, 1000);
  }

  private stopThinkingTimer(): void {
    if (this.thinkingTimer !== null) clearInterval(this.thinkingTimer);
    this.thinkingTimer = null;
  }

  event(event: AgentEvent, call: CallRecord | null): void {
    const reply = this.reply;
    if (!reply) return;
    switch (event.event) {
      case "turn_started":
        if (event.form) this.showReading(event.form);
        break;
      case "context_attached":
        this.showAttachments(event);
        break;
      case "step_started":
        reply.querySelector(".thinking")?.classList.remove("streaming");
        // Each reply's text apart, so a refused reply's text can go with it.
        this.flushText();
        this.segment = null;
        break;
      case "text_delta":
        this.appendText(event.text);
        break;
      case "call_rejected":
        // A refused reply is not an answer: what it streamed (often a mangled call) leaves the
        // chat, and its card (with the whole reply in the inspector) takes its place.
        this.segment?.element.remove();
        this.segment = null;
        if (call) this.insertBeforeThinking(this.card(call));
        break;
      case "call_parsed":
        if (call) {
          this.flushText();
          this.segment = null;
          this.insertBeforeThinking(this.card(call));
        }
        break;
      case "response_finished":
        if (event.context_used !== null && event.context_size !== null) this.showContext(event.context_used, event.context_size, event.tokens_evaluated);
        if (event.thinking) this.showThought(event.thinking);
        break;
      case "context_compacted":
        this.showCompacted(event);
        break;
      case "context_trimmed":
        this.showTrimmed(event);
        break;
      case "answer_cut":
        // What streamed holds the repeats; the answer is the text before them.
        if (this.segment) {
          this.segment.text = event.text;
          this.flushText();
        }
        this.note("The answer began repeating itself and was ended here; the repeats are left out.", "answer-cut");
        break;
      case "answer_paths_given": {
        // What streamed names the files by their names alone; the answer gives their paths.
        if (this.segment) {
          this.segment.text = event.text;
          this.flushText();
        }
        const given = event.paths.map((p) => `${p.name} is ${p.path}`).join(", ");
        this.note(`Files the answer named by their names alone are given by the paths the tool results showed: ${given}.`, "answer-paths");
        break;
      }
      case "answer_noted":
        this.showNotes(event);
        break;
      case "turn_finished":
        this.finishReply(reply, event);
        break;
      default:
        break;
    }
    this.scroll();
  }

  /** The user's message of the turn under way. */
  private lastUserMessage(): Element | undefined {
    return [...this.log.querySelectorAll(".msg.user")].at(-1);
  }

  /** How Lantern read the user's message, in a line of its own beneath it. */
  private showReading(form: Form): void {
    this.lastUserMessage()?.after(h("div", { class: "msg-reading muted small", text: `Read as ${FORM_LABELS[form]}` }));
  }

  /** Chips under the user's message: what it attached, and what it could not. */
  private showAttachments(event: AgentEventOf<"context_attached">): void {
    const message = this.lastUserMessage();
    if (!message) return;
    const chips = h("div", { class: "attachments" });
    for (const a of event.attachments) {
      chips.append(h("span", { class: "chip attachment-chip", text: `@${a.mention}`, title: `${a.path}, lines ${a.start_line}-${a.end_line}${a.cut ? " (cut to its limit)" : ""}` }));
    }
    for (const problem of event.problems) chips.append(h("span", { class: "muted small", text: problem }));
    message.append(chips);
  }

  /** A note of Lantern's in the reply, before the "thinking" line. */
  private note(text: string, kind = ""): void {
    this.insertBeforeThinking(h("div", { class: `note muted small ${kind}`.trim(), text }));
  }

  /** What was left out or cut so that the conversation fits the context. */
  private showTrimmed(event: AgentEventOf<"context_trimmed">): void {
    if (event.messages_dropped > 0) this.note(`Older messages were left out to fit the model's context (${event.messages_dropped}).`);
    if (event.results_cut > 0) this.note(`A tool result was too long for the model's context and was cut in what it was shown (${event.results_cut} cut); the transcript keeps it whole.`);
  }

  /** What was shortened or summarised so that the conversation fits the context. */
  private showCompacted(event: AgentEventOf<"context_compacted">): void {
    if (event.results_shortened > 0) {
      this.note(`Earlier tool results were shortened to one line each to fit the model's context (${event.results_shortened}); the transcript keeps them whole.`);
    }
    if (event.messages_summarised > 0) {
      this.insertBeforeThinking(
        h(
          "details",
          { class: "note muted small summarised" },
          h("summary", { text: `Earlier steps were summarised to fit the model's context (${event.messages_summarised} messages); the transcript keeps them whole.` }),
          h("div", { class: "thought-text", text: event.summary ?? "" }),
        ),
      );
    }
  }

  /**
   * The model's words stay as they streamed; what the results say follows them, marked as read
   * from the results rather than written by the model.
   */
  private showNotes(event: AgentEventOf<"answer_noted">): void {
    this.flushText();
    for (const note of event.notes) {
      const element = h("div", { class: `answer-note markdown answer-note-${note.kind}` });
      // Written like the answer, with names in backticks, and shown the same way.
      element.innerHTML = renderMarkdown(`From the tool results: ${note.text}`);
      this.insertBeforeThinking(element);
    }
  }

  /** The turn's end: why it stopped when that was not an answer, or why an answer is empty. */
  private finishReply(reply: HTMLElement, event: AgentEventOf<"turn_finished">): void {
    this.flushText();
    this.stopThinkingTimer();
    reply.querySelector(".thinking")?.remove();
    if (event.reason !== "answer") {
      const detail = event.reason === "error" && event.text ? ` ${event.text}` : "";
      reply.append(h("div", { class: `guard guard-${event.reason}`, text: `${event.explanation}${detail}` }));
    } else if (!event.text.trim() && !reply.querySelector(".msg-text")?.textContent?.trim()) {
      // A reply with no text (ended at once, or only blank lines): say why, not nothing.
      reply.append(h("div", { class: "muted small", text: event.explanation }));
    }
    this.reply = null;
    this.segment = null;
  }

  private showContext(used: number, size: number, evaluated: number | null): void {
    const { text, fraction } = describeContext(used, size);
    this.meterText.textContent = text;
    this.meterEvaluated.textContent = evaluated === null ? "" : ` · ${describeEvaluated(evaluated)}`;
    this.meterBar.style.width = `${(fraction * 100).toFixed(1)}%`;
    this.meter.classList.toggle("context-meter-high", fraction >= 0.8);
    this.meter.setAttribute("aria-valuenow", String(used));
    this.meter.setAttribute("aria-valuemax", String(size));
    this.meter.classList.remove("hidden");
  }

  /** A turn that could not start (no model, busy, …). */
  failTurn(message: string): void {
    const reply = this.reply;
    this.stopThinkingTimer();
    if (reply) {
      reply.querySelector(".thinking")?.remove();
      reply.append(h("div", { class: "guard guard-error", text: message }));
    } else {
      this.log.append(h("div", { class: "guard guard-error", text: message }));
    }
    this.reply = null;
    this.segment = null;
    this.scroll();
  }

  /** Refreshes the card of a call whose status changed. */
  updateCall(call: CallRecord): void {
    const card = this.log.querySelector(`.call-card[data-key="${CSS.escape(call.key)}"]`);
    card?.replaceWith(this.card(call));
  }

  private card(call: CallRecord): HTMLElement {
    const status = statusOf(call);
    const summary = call.valid === false ? (call.validationMessage ?? "") : summarizeArgs(call.args);
    return h(
      "button",
      {
        class: `call-card status-${status}`,
        data: { key: call.key },
        title: "Open in the inspector",
        on: { click: () => this.actions.selectCall(call.key) },
      },
      h("span", { class: "call-icon", text: "⚙" }),
      h("span", { class: "mono call-tool", text: call.valid === false ? "invalid call" : call.tool }),
      h("span", { class: "call-summary", text: summary }),
      h("span", { class: `status-chip status-${status}`, text: STATUS_LABELS[status] }),
    );
  }

  private insertBeforeThinking(element: HTMLElement): void {
    const reply = this.reply!;
    const thinking = reply.querySelector(".thinking");
    if (thinking) reply.insertBefore(element, thinking);
    else reply.append(element);
  }

  /** A reasoning model's thinking, collapsed, before the reply it led to. */
  private showThought(thinking: string): void {
    const thought = h("details", { class: "thought small" }, h("summary", { class: "muted", text: "Thought" }), h("div", { class: "thought-text", text: thinking }));
    if (this.segment) this.segment.element.before(thought);
    else this.insertBeforeThinking(thought);
  }

  private appendText(text: string): void {
    if (!this.segment) {
      if (!text.trim()) return;
      const element = h("div", { class: "msg-text markdown" });
      this.insertBeforeThinking(element);
      this.segment = { element, text: "" };
    }
    this.reply?.querySelector(".thinking")?.classList.add("streaming");
    this.segment.text += text;
    // Markdown is re-rendered once per frame, not once per token.
    if (!this.renderQueued) {
      this.renderQueued = true;
      requestAnimationFrame(() => this.flushText());
    }
  }

  private flushText(): void {
    this.renderQueued = false;
    if (this.segment) this.segment.element.innerHTML = renderMarkdown(this.segment.text.trim());
  }

  private scroll(): void {
    this.log.scrollTop = this.log.scrollHeight;
  }
}
