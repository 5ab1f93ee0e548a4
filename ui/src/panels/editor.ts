// The editor: tabs over CodeMirror, one editor state per open file (so each keeps its own undo
// history), dirty markers, Ctrl/Cmd+S to save. When the assistant writes an open file it is
// reloaded; if the user has unsaved edits in it, they are kept and a warning offers the new
// version instead of overwriting them. Findings of get_diagnostics calls are shown on the open
// files: gutter markers and underlines (@codemirror/lint), kept per file across tab switches.

import { setDiagnostics } from "@codemirror/lint";
import { EditorState } from "@codemirror/state";
import { EditorView } from "@codemirror/view";
import type { Backend } from "../ipc";
import type { OutlineEntry } from "../ipc/types";
import { AppError } from "../ipc";
import { DiagnosticsStore, reportFromResult, toCodeMirror } from "../lib/diagnostics";
import { button, clear, h } from "../lib/dom";
import { languageOf } from "../lib/languages";
import { baseExtensions, languageFor } from "./codemirror";

interface Tab {
  path: string;
  state: EditorState;
  /** The content on disk as last read or saved. */
  saved: string;
  dirty: boolean;
  /** The file changed on disk while the user had unsaved edits. */
  changedOnDisk: boolean;
}

export interface EditorDeps {
  backend: Pick<Backend, "readFile" | "saveFile"> & Partial<Pick<Backend, "goToDefinition" | "fileOutline">>;
  notify: (message: string, kind?: "info" | "error") => void;
  /** Asks whether to drop unsaved edits; resolves true to discard. */
  confirmDiscard: (path: string) => Promise<boolean>;
  onDirtyChange?: (dirtyPaths: string[]) => void;
  /** The file shown changed (null: none). */
  onActiveChange?: (path: string | null) => void;
  /** The user asked to check the file shown (runs get_diagnostics on it). */
  onCheck?: (path: string) => void;
}

export class EditorPanel {
  private readonly tabs: Tab[] = [];
  private active: Tab | null = null;
  private view: EditorView | null = null;
  private readonly tabBar = h("div", { class: "tabs", attrs: { role: "tablist" } });
  private readonly banner = h("div", { class: "editor-banner hidden" });
  private readonly surface = h("div", { class: "editor-surface" });
  /** CodeMirror lives in a shadow root: there its styles are constructed style sheets, which
   * the strict style policy allows, where in the document it would need inline <style>. */
  private readonly editorRoot: ShadowRoot;
  private readonly editorParent = h("div");
  private readonly status = h("div", { class: "editor-status" });
  private readonly diagnostics = new DiagnosticsStore();
  /** What the file shown defines, from the code index (empty for a language it does not read). */
  private outline: { path: string; entries: OutlineEntry[] } | null = null;

  constructor(
    readonly root: HTMLElement,
    private readonly deps: EditorDeps,
  ) {
    root.classList.add("editor-panel");
    this.editorRoot = this.surface.attachShadow({ mode: "open" });
    this.editorParent.style.height = "100%";
    this.editorRoot.append(this.editorParent);
    root.append(this.tabBar, this.banner, this.surface, this.status);
    // Ctrl/Cmd+S also works while focus is on the tabs or the tree.
    document.addEventListener("keydown", (event) => {
      const shortcut = (event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "s";
      if (shortcut && !event.defaultPrevented && this.root.isConnected) {
        event.preventDefault();
        void this.save();
      }
    });
    this.render();
  }

  get dirtyPaths(): string[] {
    return this.tabs.filter((t) => t.dirty).map((t) => t.path);
  }

  /** The text in the editor for `path` (unsaved edits included). */
  contentOf(path: string): string | null {
    const tab = this.find(path);
    if (!tab) return null;
    return (tab === this.active && this.view ? this.view.state : tab.state).doc.toString();
  }

  private find(path: string): Tab | undefined {
    return this.tabs.find((t) => t.path === path);
  }

  private newState(path: string, content: string): EditorState {
    return EditorState.create({
      doc: content,
      extensions: [
        baseExtensions(
          () => {
            void this.save();
            return true;
          },
          (view, pos) => {
            void this.goToDefinitionAt(view.state, pos);
            return true;
          },
        ),
        languageFor(path),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) this.refreshDirty(path, update.state);
        }),
      ],
    });
  }

  private refreshDirty(path: string, state: EditorState): void {
    const tab = this.find(path);
    if (!tab) return;
    const dirty = state.doc.toString() !== tab.saved;
    if (dirty !== tab.dirty) {
      tab.dirty = dirty;
      if (!dirty) tab.changedOnDisk = false;
      this.renderTabs();
      this.renderStatus();
      this.renderBanner();
      this.deps.onDirtyChange?.(this.tabs.filter((t) => t.dirty).map((t) => t.path));
    }
  }

  /** Opens `path` in a tab (or switches to it). */
  async open(path: string): Promise<void> {
    const existing = this.find(path);
    if (existing) {
      this.activate(existing);
      return;
    }
    let content: string;
    try {
      content = (await this.deps.backend.readFile(path)).content;
    } catch (error) {
      this.deps.notify(`Cannot open ${path}: ${AppError.from(error).message}`, "error");
      return;
    }
    const again = this.find(path);
    if (again) {
      this.activate(again);
      return;
    }
    const fresh = this.newState(path, content);
    const state = fresh.update(setDiagnostics(fresh, toCodeMirror(fresh.doc, this.diagnostics.for(path)))).state;
    const tab: Tab = { path, state, saved: content, dirty: false, changedOnDisk: false };
    this.tabs.push(tab);
    this.activate(tab);
  }

  private activate(tab: Tab): void {
    if (this.active && this.view) this.active.state = this.view.state;
    this.active = tab;
    if (!this.view) {
      this.view = new EditorView({ state: tab.state, parent: this.editorParent, root: this.editorRoot });
    } else {
      this.view.setState(tab.state);
    }
    this.render();
    this.view.focus();
    this.deps.onActiveChange?.(tab.path);
    void this.loadOutline(tab.path);
  }

  /** Asks the code index what `path` defines, and shows it in the status bar's outline. */
  async loadOutline(path: string): Promise<void> {
    if (!this.deps.backend.fileOutline) return;
    let entries: OutlineEntry[];
    try {
      entries = await this.deps.backend.fileOutline(path);
    } catch {
      entries = [];
    }
    if (this.active?.path !== path) return;
    this.outline = { path, entries };
    this.renderStatus();
  }

  /** Opens where the name at `pos` is defined (F12, or Ctrl/Cmd+click on it): the surest of
   * the code index's definitions, its line selected. */
  async goToDefinitionAt(state: EditorState, pos: number): Promise<void> {
    const word = state.wordAt(pos);
    if (!this.deps.backend.goToDefinition || !word) return;
    const name = state.sliceDoc(word.from, word.to);
    let places;
    try {
      places = await this.deps.backend.goToDefinition(name);
    } catch (error) {
      this.deps.notify(`Cannot look up ${name}: ${AppError.from(error).message}`, "error");
      return;
    }
    const place = places[0];
    if (!place) {
      this.deps.notify(`No definition of ${name} in the code index.`);
      return;
    }
    await this.open(place.path);
    this.revealLine(place.path, place.line);
    if (places.length > 1) this.deps.notify(`${name}: ${places.length} definitions; showing ${place.path}:${place.line}.`);
  }

  /** Selects line `line` (1-based) of the file shown, if it is `path`, and scrolls to it. */
  revealLine(path: string, line: number): void {
    if (!this.view || this.active?.path !== path) return;
    const doc = this.view.state.doc;
    const at = doc.line(Math.min(Math.max(line, 1), doc.lines));
    this.view.dispatch({ selection: { anchor: at.from, head: at.to }, scrollIntoView: true });
    this.view.focus();
  }

  /** Saves `path` (default: the active tab). */
  async save(path?: string): Promise<void> {
    const tab = path ? this.find(path) : this.active;
    if (!tab) return;
    const content = this.contentOf(tab.path) ?? "";
    try {
      await this.deps.backend.saveFile(tab.path, content);
    } catch (error) {
      this.deps.notify(`Cannot save ${tab.path}: ${AppError.from(error).message}`, "error");
      return;
    }
    tab.saved = content;
    void this.loadOutline(tab.path);
    tab.changedOnDisk = false;
    this.refreshDirty(tab.path, tab === this.active && this.view ? this.view.state : tab.state);
    this.render();
    this.deps.notify(`Saved ${tab.path}`);
  }

  async close(path: string): Promise<void> {
    const tab = this.find(path);
    if (!tab) return;
    if (tab.dirty && !(await this.deps.confirmDiscard(path))) return;
    const index = this.tabs.indexOf(tab);
    this.tabs.splice(index, 1);
    if (this.active === tab) {
      this.active = null;
      const next = this.tabs[Math.min(index, this.tabs.length - 1)];
      if (next) {
        this.activate(next);
      } else {
        this.view?.destroy();
        this.view = null;
        this.deps.onActiveChange?.(null);
      }
    }
    this.render();
    this.deps.onDirtyChange?.(this.tabs.filter((t) => t.dirty).map((t) => t.path));
  }

  /** The file changed on disk (the assistant wrote it, or a write was undone). */
  async changedOnDisk(path: string): Promise<void> {
    const tab = this.find(path);
    if (!tab) return;
    let content: string;
    try {
      content = (await this.deps.backend.readFile(path)).content;
    } catch (error) {
      const e = AppError.from(error);
      if (e.code === "not_found") {
        // An undone creation removed the file: keep the text, it is now unsaved work.
        tab.saved = "";
        tab.changedOnDisk = tab.dirty;
        this.refreshDirty(path, this.currentState(tab));
        this.deps.notify(`${path} no longer exists on disk; its text is still in the editor.`);
        this.render();
      } else {
        this.deps.notify(`Cannot reload ${path}: ${e.message}`, "error");
      }
      return;
    }
    if (content === tab.saved) return;
    if (tab.dirty) {
      tab.changedOnDisk = true;
      tab.saved = content;
      this.render();
      return;
    }
    this.replaceContent(tab, content);
  }

  /** Shows the findings of a get_diagnostics result (its `data`) on the open files. */
  showDiagnostics(data: unknown): void {
    const report = reportFromResult(data);
    if (!report) return;
    for (const path of this.diagnostics.apply(report)) {
      const tab = this.find(path);
      if (tab) this.applyDiagnostics(tab);
    }
    this.renderStatus();
  }

  /** How many findings the open file `path` shows. */
  diagnosticsOf(path: string): number {
    return this.diagnostics.for(path).length;
  }

  private applyDiagnostics(tab: Tab): void {
    const state = this.currentState(tab);
    const spec = setDiagnostics(state, toCodeMirror(state.doc, this.diagnostics.for(tab.path)));
    if (tab === this.active && this.view) {
      this.view.dispatch(spec);
    } else {
      tab.state = state.update(spec).state;
    }
  }

  private currentState(tab: Tab): EditorState {
    return tab === this.active && this.view ? this.view.state : tab.state;
  }

  /** Puts `content` in the tab as the saved text, as one undoable change. */
  private replaceContent(tab: Tab, content: string): void {
    tab.saved = content;
    tab.changedOnDisk = false;
    const state = this.currentState(tab);
    const change = { changes: { from: 0, to: state.doc.length, insert: content } };
    if (tab === this.active && this.view) {
      this.view.dispatch(change);
    } else {
      tab.state = state.update(change).state;
      this.refreshDirty(tab.path, tab.state);
    }
    this.render();
  }

  /** Closes everything (another folder was opened). */
  reset(): void {
    this.tabs.splice(0);
    this.diagnostics.clear();
    this.active = null;
    this.view?.destroy();
    this.view = null;
    this.render();
  }

  private render(): void {
    this.renderTabs();
    this.renderBanner();
    this.renderStatus();
    this.surface.classList.toggle("hidden", !this.active);
    const empty = this.root.querySelector(".editor-empty");
    if (!this.active && !empty) {
      this.root.insertBefore(
        h("div", { class: "empty-state editor-empty" }, h("p", { text: "No file open." }), h("p", { class: "muted", text: "Pick a file in the tree, or let the assistant point you to one." })),
        this.status,
      );
    } else if (this.active && empty) {
      empty.remove();
    }
  }

  private renderTabs(): void {
    clear(this.tabBar);
    for (const tab of this.tabs) {
      const name = tab.path.split("/").pop() ?? tab.path;
      const element = h(
        "div",
        {
          class: `tab${tab === this.active ? " active" : ""}${tab.dirty ? " dirty" : ""}`,
          title: tab.path,
          data: { path: tab.path },
          attrs: { role: "tab", "aria-selected": String(tab === this.active) },
          on: { click: () => this.activate(tab), auxclick: (e) => e.button === 1 && void this.close(tab.path) },
        },
        h("span", { class: "tab-name", text: name }),
        h("span", { class: "dirty-dot", title: "Unsaved changes", text: "●" }),
        button("×", () => void this.close(tab.path), { class: "tab-close", title: "Close", attrs: { "aria-label": `Close ${name}` } }),
      );
      element.querySelector(".tab-close")?.addEventListener("click", (e) => e.stopPropagation());
      this.tabBar.append(element);
    }
  }

  private renderBanner(): void {
    const tab = this.active;
    clear(this.banner);
    this.banner.classList.toggle("hidden", !tab?.changedOnDisk);
    if (!tab?.changedOnDisk) return;
    this.banner.append(
      h("span", { text: `${tab.path} changed on disk while you have unsaved edits. Your edits are kept.` }),
      button("Load the version on disk", () => this.replaceContent(tab, tab.saved), { class: "small" }),
      button("Keep mine", () => {
        tab.changedOnDisk = false;
        this.renderBanner();
      }, { class: "small" }),
    );
  }

  private renderStatus(): void {
    const tab = this.active;
    clear(this.status);
    if (!tab) return;
    const parts: (HTMLElement | null)[] = [
      h("span", { class: "mono", text: tab.path }),
      this.outlineMenu(tab.path),
      h("span", { class: "spacer" }),
      this.findingsText(tab.path),
      h("span", { text: languageOf(tab.path) }),
      h("span", { class: tab.dirty ? "warn-text" : "muted", text: tab.dirty ? "Unsaved · Ctrl+S saves" : "Saved" }),
      this.deps.onCheck
        ? button("Check", () => this.deps.onCheck?.(tab.path), {
            class: "small editor-check",
            title: "Run the project's checkers on this file (get_diagnostics)",
          })
        : null,
    ];
    this.status.append(...parts.filter((p): p is HTMLElement => p !== null));
  }

  /** The file's definitions as a menu: choosing one selects its line. */
  private outlineMenu(path: string): HTMLElement | null {
    const entries = this.outline?.path === path ? this.outline.entries : [];
    if (entries.length === 0) return null;
    const menu = h("select", { class: "editor-outline small", attrs: { "aria-label": "outline", title: "What this file defines (from the code index)" } });
    menu.append(h("option", { text: `Outline (${entries.length})`, attrs: { value: "" } }));
    for (const entry of entries) {
      const label = `${entry.parent ? "  " : ""}${entry.kind} ${entry.parent ? `${entry.parent}.` : ""}${entry.name} · ${entry.line}`;
      menu.append(h("option", { text: label, attrs: { value: String(entry.line) } }));
    }
    menu.addEventListener("change", () => {
      const line = Number(menu.value);
      menu.value = "";
      if (line > 0) this.revealLine(path, line);
    });
    return menu;
  }

  /** "2 errors · 1 warning" for the file's findings, or nothing. */
  private findingsText(path: string): HTMLElement | null {
    const findings = this.diagnostics.for(path);
    if (!findings.length) return null;
    const errors = findings.filter((f) => f.severity === "error").length;
    const others = findings.length - errors;
    const parts = [];
    if (errors) parts.push(`${errors} error${errors === 1 ? "" : "s"}`);
    if (others) parts.push(`${others} warning${others === 1 ? "" : "s"}`);
    return h("span", { class: `editor-findings ${errors ? "error-text" : "warn-text"}`, text: parts.join(" · ") });
  }
}
