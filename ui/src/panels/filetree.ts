// The file tree: what the tools can see of the workspace (ignored files and the .git folder
// left out), folders collapsible, open and unsaved files marked.

import type { IndexStatus, Tree } from "../ipc/types";
import { button, clear, h } from "../lib/dom";
import { ancestors, buildTree, type TreeFolder } from "../lib/tree";

export class FileTreePanel {
  private tree: Tree | null = null;
  private readonly expanded = new Set<string>();
  private active: string | null = null;
  private dirty = new Set<string>();
  private index: IndexStatus | null = null;
  private readonly list = h("div", { class: "tree-list", attrs: { role: "tree" } });
  private readonly footer = h("div", { class: "tree-footer muted small" });
  private readonly title = h("span", { class: "panel-title", text: "Files" });

  constructor(
    readonly root: HTMLElement,
    private readonly actions: { open: (path: string) => void; refresh: () => void; openFolder: () => void },
  ) {
    root.classList.add("tree-panel");
    root.append(
      h("div", { class: "panel-header" }, this.title, h("span", { class: "spacer" }), button("↻", actions.refresh, { class: "icon-button", title: "Refresh the file list" })),
      this.list,
      this.footer,
    );
    this.render();
  }

  setTree(tree: Tree | null, folderName?: string): void {
    this.tree = tree;
    this.title.textContent = folderName ?? "Files";
    // Top-level folders start open in a small project, closed in a large one.
    if (tree && this.expanded.size === 0 && tree.files.length <= 200) {
      for (const folder of buildTree(tree.files).folders) this.expanded.add(folder.path);
    }
    this.render();
  }

  /** The files listed, for `@` mentions. */
  files(): readonly string[] {
    return this.tree?.files ?? [];
  }

  setActive(path: string | null): void {
    this.active = path;
    if (path) for (const folder of ancestors(path)) this.expanded.add(folder);
    this.render();
  }

  setDirty(paths: string[]): void {
    this.dirty = new Set(paths);
    this.render();
  }

  /** Where the folder's code index stands: shown under the tree. */
  setIndexStatus(status: IndexStatus | null): void {
    this.index = status;
    this.render();
  }

  reset(): void {
    this.index = null;
    this.expanded.clear();
    this.active = null;
    this.dirty.clear();
    this.setTree(null);
  }

  private render(): void {
    clear(this.list);
    clear(this.footer);
    if (!this.tree) {
      this.list.append(
        h("div", { class: "empty-state" }, h("p", { text: "No folder open." }), button("Open folder…", this.actions.openFolder, { class: "primary" })),
      );
      return;
    }
    if (this.tree.files.length === 0) {
      this.list.append(h("div", { class: "empty-state" }, h("p", { class: "muted", text: "This folder has no files the tools can see." })));
    } else {
      this.renderFolder(buildTree(this.tree.files), 0);
    }
    const notes = [`${this.tree.total} files`];
    if (this.tree.skipped) notes.push(`${this.tree.skipped} ignored`);
    if (this.tree.truncated) notes.push(`showing the first ${this.tree.files.length}`);
    const index = indexNote(this.index);
    if (index) notes.push(index);
    this.footer.textContent = notes.join(" · ");
  }

  private renderFolder(folder: TreeFolder, depth: number): void {
    for (const child of folder.folders) {
      const open = this.expanded.has(child.path);
      this.list.append(
        h(
          "div",
          {
            class: "tree-row tree-folder",
            data: { path: child.path },
            attrs: { role: "treeitem", "aria-expanded": String(open) },
            on: {
              click: () => {
                if (open) this.expanded.delete(child.path);
                else this.expanded.add(child.path);
                this.render();
              },
            },
          },
          this.indent(depth),
          h("span", { class: "twisty", text: open ? "▾" : "▸" }),
          h("span", { class: "tree-name", text: child.name }),
        ),
      );
      if (open) this.renderFolder(child, depth + 1);
    }
    for (const file of folder.files) {
      const classes = ["tree-row", "tree-file"];
      if (file.path === this.active) classes.push("active");
      if (this.dirty.has(file.path)) classes.push("dirty");
      this.list.append(
        h(
          "div",
          { class: classes.join(" "), data: { path: file.path }, title: file.path, attrs: { role: "treeitem" }, on: { click: () => this.actions.open(file.path) } },
          this.indent(depth),
          h("span", { class: "twisty" }),
          h("span", { class: "tree-name", text: file.name }),
          h("span", { class: "dirty-dot", text: "●" }),
        ),
      );
    }
  }

  /** Indentation as elements, not inline styles, so the strict style policy holds. */
  private indent(depth: number): HTMLElement {
    return h("span", { class: "indent" }, ...Array.from({ length: depth }, () => h("span", { class: "indent-step" })));
  }
}

/** What the footer says of the code index: its progress while it is built, then what it holds. */
export function indexNote(status: IndexStatus | null): string | null {
  if (!status) return null;
  switch (status.state) {
    case "building":
      return status.total > 0 ? `indexing code ${status.done}/${status.total}…` : "indexing code…";
    case "ready":
      return `code index: ${status.files} files, ${status.definitions} definitions`;
    case "failed":
      return `code index failed: ${status.error ?? "unknown error"}`;
    default:
      return null;
  }
}
