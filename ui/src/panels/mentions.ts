// `@` mentions in the chat input: while the word at the caret starts with `@`, a menu offers the
// project's files and the names its code defines that match; choosing one writes it in. The
// backend attaches what a sent message mentions (a file, or a definition's lines).

import { h } from "../lib/dom";

export interface MentionSources {
  /** The project's files, as the tree lists them. */
  files: () => readonly string[];
  /** Names the project's code defines that begin with `prefix`. */
  symbols: (prefix: string) => Promise<string[]>;
}

/** The most choices the menu shows. */
const MAX_CHOICES = 8;

/** The `@` word the caret is at the end of in `text`: where it starts (at the `@`) and what
 * follows the `@`; null when the caret is not in one. */
export function mentionAt(text: string, caret: number): { start: number; prefix: string } | null {
  const before = text.slice(0, caret);
  const match = /(^|[\s([{"'`])@([^\s@]*)$/.exec(before);
  if (!match) return null;
  return { start: caret - match[2]!.length - 1, prefix: match[2]! };
}

/** Files whose path holds `prefix` (ignoring case), those whose name starts with it first. */
export function matchingFiles(files: readonly string[], prefix: string): string[] {
  const lower = prefix.toLowerCase();
  const name = (path: string) => path.slice(path.lastIndexOf("/") + 1).toLowerCase();
  return files
    .filter((path) => path.toLowerCase().includes(lower))
    .sort((a, b) => Number(!name(a).startsWith(lower)) - Number(!name(b).startsWith(lower)) || a.length - b.length)
    .slice(0, MAX_CHOICES);
}

export class MentionMenu {
  readonly root = h("div", { class: "mention-menu hidden", attrs: { role: "listbox", "aria-label": "mentions" } });
  private choices: { text: string; kind: "file" | "symbol" }[] = [];
  private active = 0;
  private at: { start: number; prefix: string } | null = null;
  private asked = 0;

  constructor(
    private readonly input: HTMLTextAreaElement,
    private readonly sources: MentionSources,
  ) {
    input.addEventListener("input", () => void this.update());
    input.addEventListener("blur", () => setTimeout(() => this.close(), 150));
  }

  get open(): boolean {
    return !this.root.classList.contains("hidden");
  }

  /** Handles a key while the menu is open; true when it was the menu's. */
  key(event: KeyboardEvent): boolean {
    if (!this.open) return false;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      const step = event.key === "ArrowDown" ? 1 : this.choices.length - 1;
      this.active = (this.active + step) % this.choices.length;
      this.render();
    } else if (event.key === "Enter" || event.key === "Tab") {
      this.choose(this.active);
    } else if (event.key === "Escape") {
      this.close();
    } else {
      return false;
    }
    event.preventDefault();
    return true;
  }

  private async update(): Promise<void> {
    const at = mentionAt(this.input.value, this.input.selectionStart ?? this.input.value.length);
    this.at = at;
    if (!at) return this.close();
    const asked = ++this.asked;
    const files = matchingFiles(this.sources.files(), at.prefix);
    let symbols: string[] = [];
    if (at.prefix.length > 0 && !at.prefix.includes("/")) {
      symbols = await this.sources.symbols(at.prefix).catch(() => []);
    }
    // A later keystroke asked again: its answer counts, not this one.
    if (asked !== this.asked) return;
    this.choices = [
      ...files.map((text) => ({ text, kind: "file" as const })),
      ...symbols.filter((s) => !files.includes(s)).map((text) => ({ text, kind: "symbol" as const })),
    ].slice(0, MAX_CHOICES);
    this.active = 0;
    if (this.choices.length === 0) return this.close();
    this.root.classList.remove("hidden");
    this.render();
  }

  private render(): void {
    this.root.replaceChildren(
      ...this.choices.map((choice, i) =>
        h(
          "div",
          {
            class: `mention-choice${i === this.active ? " active" : ""}`,
            data: { kind: choice.kind },
            attrs: { role: "option", "aria-selected": String(i === this.active) },
            on: { mousedown: (e) => (e.preventDefault(), this.choose(i)) },
          },
          h("span", { class: "mono", text: choice.text }),
          h("span", { class: "muted small", text: choice.kind === "file" ? "file" : "definition" }),
        ),
      ),
    );
  }

  private choose(i: number): void {
    const choice = this.choices[i];
    const at = this.at;
    if (!choice || !at) return this.close();
    const value = this.input.value;
    const end = at.start + 1 + at.prefix.length;
    this.input.value = `${value.slice(0, at.start)}@${choice.text} ${value.slice(end)}`;
    const caret = at.start + choice.text.length + 2;
    this.input.setSelectionRange(caret, caret);
    this.close();
  }

  close(): void {
    this.root.classList.add("hidden");
    this.choices = [];
  }
}
