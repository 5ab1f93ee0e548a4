import { afterEach, describe, expect, it } from "vitest";
import { Layout, type SidePage } from "./layout";

function setup() {
  const root = document.createElement("div");
  document.body.append(root);
  const shown: SidePage[] = [];
  const clicked: string[] = [];
  const layout = new Layout(root, {
    pickFolder: () => clicked.push("folder"),
    toggleTheme: () => clicked.push("theme"),
    pageShown: (page) => shown.push(page),
  });
  return { root, layout, shown, clicked };
}

const visiblePages = (root: HTMLElement) => [...root.querySelectorAll<HTMLElement>(".side-page-host:not(.hidden)")].map((e) => e.dataset.page);
const activeTabs = (root: HTMLElement) => [...root.querySelectorAll<HTMLElement>(".side-tab.active")].map((e) => e.dataset.page);

afterEach(() => document.body.replaceChildren());

describe("the window's layout", () => {
  it("puts the toolbar, the workbench areas and the hosts in order", () => {
    const { root } = setup();
    const app = root.querySelector(".app")!;
    expect([...app.children].map((e) => e.className)).toEqual(["toolbar", "workbench", "toasts", "modal-host"]);
    expect([...root.querySelector(".toolbar")!.children].map((e) => e.className)).toEqual(["brand", "folder-button", "spacer", "model-chip", "icon-button theme-button"]);
    expect([...root.querySelector(".workbench")!.children].map((e) => e.className)).toEqual(["tree-area", "splitter splitter-x", "center", "splitter splitter-x", "side"]);
    expect([...root.querySelector(".center")!.children].map((e) => e.className)).toEqual(["editor-area", "splitter splitter-y", "inspector-area"]);
    expect([...root.querySelectorAll<HTMLElement>(".side-tab")].map((e) => e.dataset.page)).toEqual(["chat", "model", "settings"]);
    expect(visiblePages(root)).toEqual(["chat"]);
    expect(activeTabs(root)).toEqual(["chat"]);
  });

  it("switches side pages from the tabs and the model chip", () => {
    const { root, shown } = setup();
    root.querySelector<HTMLButtonElement>('.side-tab[data-page="settings"]')!.click();
    expect(visiblePages(root)).toEqual(["settings"]);
    expect(activeTabs(root)).toEqual(["settings"]);
    root.querySelector<HTMLButtonElement>(".model-chip")!.click();
    expect(visiblePages(root)).toEqual(["model"]);
    expect(activeTabs(root)).toEqual(["model"]);
    expect(shown).toEqual(["settings", "model"]);
  });

  it("hands the folder and theme buttons' clicks on", () => {
    const { root, clicked } = setup();
    root.querySelector<HTMLButtonElement>(".folder-button")!.click();
    root.querySelector<HTMLButtonElement>(".theme-button")!.click();
    expect(clicked).toEqual(["folder", "theme"]);
  });
});
