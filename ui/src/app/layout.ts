// The window's frame: the toolbar, the file tree, the editor over the call inspector, and the
// side pages (chat, model, settings) behind tabs, with splitters between them. The panels fill
// the areas it makes; the end-to-end tests find their way by its class names and data-page.

import { button, h } from "../lib/dom";
import { makeSplitter } from "../lib/layout";

export type SidePage = "chat" | "model" | "settings";

export interface LayoutActions {
  pickFolder: () => void;
  toggleTheme: () => void;
  /** A side page was brought to the front. */
  pageShown: (page: SidePage) => void;
}

export class Layout {
  readonly folderButton: HTMLButtonElement;
  readonly modelChip: HTMLButtonElement;
  readonly themeButton: HTMLButtonElement;
  readonly treeArea = h("aside", { class: "tree-area" });
  readonly editorArea = h("div", { class: "editor-area" });
  readonly inspectorArea = h("div", { class: "inspector-area" });
  readonly pages: Record<SidePage, HTMLElement> = {
    chat: h("div", { class: "side-page-host", data: { page: "chat" } }),
    model: h("div", { class: "side-page-host hidden", data: { page: "model" } }),
    settings: h("div", { class: "side-page-host hidden", data: { page: "settings" } }),
  };
  readonly toastHost = h("div", { class: "toasts" });
  readonly modalHost = h("div", { class: "modal-host" });
  private readonly pageTabs: Record<SidePage, HTMLButtonElement>;

  constructor(
    root: HTMLElement,
    private readonly actions: LayoutActions,
  ) {
    this.folderButton = button("Open folder…", () => actions.pickFolder(), { class: "folder-button", title: "Open another project folder" });
    this.modelChip = button("No model", () => this.showPage("model"), { class: "model-chip" });
    this.themeButton = button("", () => actions.toggleTheme(), { class: "icon-button theme-button", title: "Switch between dark and light" });
    this.pageTabs = {
      chat: button("Chat", () => this.showPage("chat"), { class: "side-tab active", data: { page: "chat" } }),
      model: button("Model", () => this.showPage("model"), { class: "side-tab", data: { page: "model" } }),
      settings: button("Settings", () => this.showPage("settings"), { class: "side-tab", data: { page: "settings" } }),
    };
    const splitTree = h("div", { class: "splitter splitter-x" });
    const splitSide = h("div", { class: "splitter splitter-x" });
    const splitInspector = h("div", { class: "splitter splitter-y" });
    root.append(
      h(
        "div",
        { class: "app" },
        h(
          "header",
          { class: "toolbar" },
          h("div", { class: "brand" }, h("span", { class: "brand-mark", text: "◆" }), "Lantern"),
          this.folderButton,
          h("span", { class: "spacer" }),
          this.modelChip,
          this.themeButton,
        ),
        h(
          "main",
          { class: "workbench" },
          this.treeArea,
          splitTree,
          h("section", { class: "center" }, this.editorArea, splitInspector, this.inspectorArea),
          splitSide,
          h("aside", { class: "side" }, h("nav", { class: "side-tabs" }, ...Object.values(this.pageTabs)), h("div", { class: "side-content" }, ...Object.values(this.pages))),
        ),
        this.toastHost,
        this.modalHost,
      ),
    );
    makeSplitter(splitTree, { variable: "--tree-width", axis: "x", min: 160, max: 520 });
    makeSplitter(splitSide, { variable: "--side-width", axis: "x", min: 300, max: 760, inverted: true });
    makeSplitter(splitInspector, { variable: "--inspector-height", axis: "y", min: 120, max: 700, inverted: true });
  }

  showPage(page: SidePage): void {
    for (const [name, element] of Object.entries(this.pages)) element.classList.toggle("hidden", name !== page);
    for (const [name, tab] of Object.entries(this.pageTabs)) tab.classList.toggle("active", name === page);
    this.actions.pageShown(page);
  }
}
