// The confirmation dialog: what the call wants to do (its preview, shown by the kind its tool
// declares: for a write, the diff), why the model wants it, and the user's answer.
// Keyboard-driven: O once, S session, A always, D or Esc deny; Enter in the message field
// denies with that message. Closing it is a deny. Requests that arrive while one is open wait
// in a queue.

import type { Answer, DroppedLines, PermissionRequest, PreviewKind, WritePreview } from "../ipc/types";
import { diffLines } from "../lib/diff";
import { describeMatch } from "../lib/format";
import { lossList } from "../lib/warnings";
import { button, h } from "../lib/dom";
import { ConfirmationQueue, type PendingConfirmation } from "./queue";
import { scopeChoices, toScope, type ScopeChoice } from "./scope";

/** The source of confirmations the model's turn raises; any other source is a manual call. */
export const MODEL_SOURCE = "turn";

export type AnswerSender = (id: number, answer: Answer) => Promise<void>;

/** Whether a preview declared a diff has the diff's shape, so that a malformed one is shown as
 * data rather than breaking the dialog. */
function isWritePreview(value: unknown): value is WritePreview {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { unified?: unknown }).unified === "string" &&
    typeof (value as { path?: unknown }).path === "string"
  );
}

/** For a command, or checkers that would run unsandboxed: where and how the programs run (the
 * sandbox, or why there is none). */
function sandboxNote(kind: PreviewKind | undefined, preview: unknown): string | null {
  if (kind !== "command" && kind !== "sandbox") return null;
  if (typeof preview !== "object" || preview === null) return null;
  const p = preview as { sandbox?: unknown; cwd?: unknown; timeout_s?: unknown };
  if (typeof p.sandbox !== "string") return null;
  const parts = [p.sandbox];
  if (typeof p.cwd === "string") parts.push(`in ${p.cwd}`);
  if (typeof p.timeout_s === "number") parts.push(`stopped after ${p.timeout_s} s`);
  return parts.join(" · ");
}

/** The diff of a write: a summary line and the coloured unified diff. */
export function renderDiff(preview: WritePreview): HTMLElement {
  const matched = describeMatch(preview);
  const summary = preview.created
    ? `new file · ${preview.lines_added} lines`
    : `+${preview.lines_added} −${preview.lines_removed}${matched ? ` · old text found ${matched}` : ""}`;
  const lines = diffLines(preview.unified).filter((l) => l.kind !== "header");
  return h(
    "div",
    { class: "diff" },
    h("div", { class: "diff-title" }, h("span", { class: "mono", text: preview.path }), h("span", { class: "diff-summary", text: summary })),
    h(
      "pre",
      { class: "diff-body" },
      ...lines.map((line) => h("div", { class: `diff-line diff-${line.kind}`, text: line.text || " " })),
    ),
  );
}

/** The preview shown in the dialog's body: the diff of a `diff` preview; for a kind this window
 * does not know (its tool is not in the list yet, or the backend is newer), the preview as
 * JSON — shown, never guessed at. */
function renderPreview(kind: PreviewKind | undefined, preview: unknown): HTMLElement | null {
  if (preview === null || preview === undefined) return null;
  switch (kind) {
    case "none":
    case "command":
    case "sandbox":
      return null;
    case "diff":
      if (isWritePreview(preview)) return renderDiff(preview);
      break;
  }
  return h(
    "details",
    { class: "confirm-preview" },
    h("summary", { text: "Preview (JSON)" }),
    h("pre", { class: "json", text: JSON.stringify(preview, null, 2) }),
  );
}

export class ConfirmationDialog {
  private readonly queue = new ConfirmationQueue();
  private root: HTMLElement | null = null;
  private shownId: number | null = null;
  private choice: ScopeChoice | null = null;
  private message: HTMLInputElement | null = null;
  private answering = false;

  constructor(
    private readonly host: HTMLElement,
    private readonly send: AnswerSender,
  ) {
    // On the document, in the capture phase: the dialog's keys work wherever focus is, and
    // nothing under the dialog sees them.
    document.addEventListener("keydown", (event) => this.root?.isConnected && this.onKey(event, this.root), true);
  }

  /** Queues a request; its `preview_kind` (what its tool declares) decides how the preview shows. */
  enqueue(id: number, request: PermissionRequest, source: string): void {
    this.queue.push({ id, request, source });
    this.render();
  }

  /** Drops what a finished or cancelled run left waiting (the backend has denied them). */
  dropSource(source: string): void {
    this.queue.dropSource(source);
    this.render();
  }

  /** Answers the request on screen. */
  async answer(answer: Answer): Promise<void> {
    const current = this.queue.current();
    if (!current || this.answering) return;
    this.answering = true;
    try {
      await this.send(current.id, answer);
    } finally {
      // Answered, or no longer waiting on the backend's side: either way it is done here.
      this.queue.remove(current.id);
      this.answering = false;
      this.render();
    }
  }

  allowOnce(): Promise<void> {
    return this.answer({ answer: "allow_once" });
  }

  allowSession(): Promise<void> {
    return this.answer({ answer: "allow_session", scope: toScope(this.currentChoice()) });
  }

  allowAlways(): Promise<void> {
    return this.answer({ answer: "allow_always", scope: toScope(this.currentChoice()) });
  }

  deny(): Promise<void> {
    const text = this.message?.value.trim() ?? "";
    return this.answer({ answer: "deny", message: text || null });
  }

  private currentChoice(): ScopeChoice {
    const current = this.queue.current();
    return this.choice ?? scopeChoices(current!.request)[0]!;
  }

  private render(): void {
    const current = this.queue.current();
    if (!current) {
      this.root?.remove();
      this.root = null;
      this.shownId = null;
      return;
    }
    if (this.shownId === current.id && this.root) {
      this.updateQueueNote();
      return;
    }
    this.root?.remove();
    this.shownId = current.id;
    this.choice = null;
    this.root = this.build(current);
    this.host.append(this.root);
    this.root.querySelector<HTMLButtonElement>("[data-action=once]")?.focus();
  }

  private updateQueueNote(): void {
    const note = this.root?.querySelector(".confirm-queue");
    if (note) note.textContent = this.queueText();
  }

  private queueText(): string {
    const waiting = this.queue.size - 1;
    return waiting > 0 ? `${waiting} more waiting` : "";
  }

  private build({ request, source }: PendingConfirmation): HTMLElement {
    const choices = scopeChoices(request);
    this.choice = choices[0]!;
    const scopeRadios = choices.map((choice, i) => this.scopeRadio(choice, i === 0));
    this.message = h("input", {
      class: "deny-message",
      attrs: { type: "text", placeholder: "Message to the model (optional)", "aria-label": "message to the model" },
    });
    const root = h(
      "div",
      { class: "overlay", attrs: { role: "presentation" } },
      h(
        "div",
        { class: "dialog confirm-dialog", attrs: { role: "dialog", "aria-modal": "true", "aria-label": `Allow ${request.tool}?` } },
        h(
          "header",
          { class: "dialog-header" },
          h("h2", {}, `Allow `, h("span", { class: "mono tool-name", text: request.tool }), `?`),
          h("span", { class: `risk risk-${request.risk}`, text: request.risk }),
          h("span", { class: "confirm-queue", text: this.queueText() }),
          button("×", () => void this.deny(), { class: "icon-button", title: "Close (deny)", attrs: { "aria-label": "Close and deny" } }),
        ),
        this.body(request, source, scopeRadios),
        h(
          "footer",
          { class: "dialog-footer" },
          button("Allow once", () => void this.allowOnce(), { class: "primary", data: { action: "once" }, title: "O" }),
          button("Allow for this session", () => void this.allowSession(), { data: { action: "session" }, title: "S" }),
          button("Always allow", () => void this.allowAlways(), { data: { action: "always" }, title: "A" }),
          h("span", { class: "spacer" }),
          this.message,
          button("Deny", () => void this.deny(), { class: "danger", data: { action: "deny" }, title: "D or Esc" }),
        ),
        h("div", { class: "keys muted small", text: "O allow once · S this session · A always · D or Esc deny · Enter in the message denies with it" }),
      ),
    );
    return root;
  }

  /** What the call would do and why it is asked, and the choice of what a standing yes covers. */
  private body(request: PendingConfirmation["request"], source: PendingConfirmation["source"], scopeRadios: HTMLElement[]): HTMLElement {
    const sandbox = sandboxNote(request.preview_kind, request.preview);
    const args = h("pre", { class: "json", text: JSON.stringify(request.args, null, 2) });
    const reasoning = request.reasoning?.trim();
    return h(
      "div",
      { class: "dialog-body" },
      unpointedWarning(request.unpointed),
      dropsWarning(request.drops),
      request.source
        ? h("p", { class: "confirm-source" }, "A tool of the MCP server ", h("code", { text: request.source.server }), ` · ${request.source.transport} · ${request.source.sandbox}`)
        : null,
      request.paths.length
        ? h("p", { class: "confirm-paths" }, "Touches ", ...request.paths.map((p) => h("code", { text: p })))
        : null,
      request.command ? h("p", { class: "confirm-command" }, "Runs ", h("code", { text: request.command })) : null,
      sandbox ? h("p", { class: "confirm-sandbox muted small", text: sandbox }) : null,
      h(
        "div",
        { class: "confirm-reasoning" },
        h("div", { class: "label", text: source === MODEL_SOURCE ? "The model's reasoning" : "Origin" }),
        h("p", {
          class: reasoning ? "" : "muted",
          text: reasoning || (source === MODEL_SOURCE ? "(no reasoning given)" : "You wrote this call by hand."),
        }),
      ),
      renderPreview(request.preview_kind, request.preview),
      // A tool of an MCP server has no preview: its arguments are what there is to judge.
      h("details", { class: "confirm-args", attrs: request.source ? { open: "" } : {} }, h("summary", { text: "Arguments (JSON)" }), args),
      h("p", { class: "muted small", text: `Asked because: ${request.rule}` }),
      h("fieldset", { class: "scope" }, h("legend", { text: "A standing yes covers" }), ...scopeRadios),
    );
  }

  /** One choice of what a standing yes covers; an editable glob selects its choice as it is typed. */
  private scopeRadio(choice: ScopeChoice, first: boolean): HTMLElement {
    const radio = h("input", { attrs: { type: "radio", name: "confirm-scope", value: choice.kind } });
    radio.checked = first;
    const glob = choice.editable
      ? h("input", { class: "scope-glob mono", attrs: { type: "text", value: choice.value, "aria-label": "glob" } })
      : null;
    glob?.addEventListener("input", () => {
      choice.value = glob.value;
      radio.checked = true;
      this.choice = choice;
    });
    radio.addEventListener("change", () => (this.choice = choice));
    return h(
      "label",
      { class: "scope-choice" },
      radio,
      h("span", { text: choice.label }),
      choice.value && !choice.editable ? h("span", { class: "mono", text: choice.value }) : null,
      glob,
    );
  }

  private onKey(event: KeyboardEvent, root: HTMLElement): void {
    const target = event.target as HTMLElement;
    const typing = target instanceof HTMLInputElement && target.type === "text";
    if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      void this.deny();
      return;
    }
    if (event.key === "Tab") {
      this.trapFocus(event, root);
      return;
    }
    if (typing) {
      if (event.key === "Enter" && target === this.message) {
        event.preventDefault();
        event.stopPropagation();
        void this.deny();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const actions: Record<string, () => Promise<void>> = {
      o: () => this.allowOnce(),
      s: () => this.allowSession(),
      a: () => this.allowAlways(),
      d: () => this.deny(),
    };
    const action = actions[event.key.toLowerCase()];
    if (action) {
      event.preventDefault();
      event.stopPropagation();
      void action();
    }
  }

  /** Keeps Tab inside the dialog. */
  private trapFocus(event: KeyboardEvent, root: HTMLElement): void {
    const focusable = [...root.querySelectorAll<HTMLElement>("button, input, summary")].filter(
      (e) => !(e as HTMLButtonElement).disabled,
    );
    const first = focusable[0];
    const last = focusable.at(-1);
    if (!first || !last) return;
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first.focus();
    }
  }
}

/** Says plainly how many lines of each existing file a write would not keep. */
function dropsWarning(drops: DroppedLines[]): HTMLElement | null {
  if (!drops.length) return null;
  return h(
    "p",
    { class: "confirm-unpointed confirm-drops", attrs: { role: "alert" } },
    h("strong", { text: "Lines would be lost: " }),
    ...lossList(drops),
    ". The new content leaves them out; allow it only if you meant to remove them.",
  );
}

/** Says plainly that the model chose the files it would write: the user named none of them and
 * no result of the conversation showed them. */
function unpointedWarning(unpointed: string[]): HTMLElement | null {
  if (!unpointed.length) return null;
  return h(
    "p",
    { class: "confirm-unpointed", attrs: { role: "alert" } },
    h("strong", { text: "You did not name " }),
    ...unpointed.map((p) => h("code", { text: p })),
    " and no result showed it: the model chose this file on its own. Check the diff before you allow it.",
  );
}
