import { EditorView } from "@codemirror/view";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { SavedFile, TextFile } from "../ipc/types";
import { EditorPanel } from "./editor";

/** A workspace on disk, as the backend would serve it. */
function fakeDisk(files: Record<string, string>) {
  const saves: [string, string][] = [];
  return {
    files,
    saves,
    backend: {
      readFile: async (path: string): Promise<TextFile> => {
        if (!(path in files)) throw { code: "not_found", message: `Not found: ${path}`, details: null };
        return { path, content: files[path]! };
      },
      saveFile: async (path: string, content: string): Promise<SavedFile> => {
        files[path] = content;
        saves.push([path, content]);
        return { path, bytes_written: content.length, created: false };
      },
    },
  };
}

function setup(files: Record<string, string>) {
  const disk = fakeDisk(files);
  const root = document.createElement("div");
  document.body.append(root);
  const notes: string[] = [];
  let dirty: string[] = [];
  let active: string | null = null;
  const editor = new EditorPanel(root, {
    backend: disk.backend,
    notify: (m) => notes.push(m),
    confirmDiscard: async () => true,
    onDirtyChange: (paths) => (dirty = paths),
    onActiveChange: (path) => (active = path),
  });
  return { disk, root, editor, notes, dirty: () => dirty, active: () => active };
}

function type(root: HTMLElement, text: string) {
  // Edits go through the view, as typing would.
  const view = EditorView.findFromDOM(root.querySelector(".editor-surface")!.shadowRoot!.querySelector(".cm-editor") as HTMLElement);
  expect(view).not.toBeNull();
  view!.dispatch({ changes: { from: view!.state.doc.length, insert: text } });
}

// jsdom does no layout and has no editing commands; CodeMirror measures text ranges and, in a
// shadow root, asks for the selection through an editing command. These stand in.
beforeAll(() => {
  document.execCommand = () => false;
  const empty = () => Object.assign([], { item: () => null }) as unknown as DOMRectList;
  Range.prototype.getClientRects = empty;
  Range.prototype.getBoundingClientRect = () => new DOMRect();
});

afterEach(() => document.body.replaceChildren());

describe("EditorPanel", () => {
  it("opens files in tabs and marks unsaved edits", async () => {
    const { root, editor, dirty, active } = setup({ "src/a.ts": "const a = 1;\n", "b.md": "# B\n" });
    await editor.open("src/a.ts");
    await editor.open("b.md");
    expect([...root.querySelectorAll(".tab")].map((t) => t.getAttribute("title"))).toEqual(["src/a.ts", "b.md"]);
    expect(root.querySelector(".tab.active")?.getAttribute("title")).toBe("b.md");
    expect(active()).toBe("b.md");
    type(root, "more\n");
    expect(root.querySelector(".tab.dirty")?.getAttribute("title")).toBe("b.md");
    expect(dirty()).toEqual(["b.md"]);
    await editor.close("b.md");
    expect(active()).toBe("src/a.ts");
    await editor.close("src/a.ts");
    expect(active()).toBeNull();
    expect(root.querySelector(".editor-empty")).not.toBeNull();
  });

  it("saves with Ctrl+S", async () => {
    const { disk, root, editor } = setup({ "a.txt": "one\n" });
    await editor.open("a.txt");
    type(root, "two\n");
    document.dispatchEvent(new KeyboardEvent("keydown", { key: "s", ctrlKey: true, bubbles: true, cancelable: true }));
    await new Promise((r) => setTimeout(r, 0));
    expect(disk.saves).toEqual([["a.txt", "one\ntwo\n"]]);
    expect(root.querySelector(".tab.dirty")).toBeNull();
  });

  it("reloads a clean file the assistant changed", async () => {
    const { disk, root, editor } = setup({ "a.txt": "old\n" });
    await editor.open("a.txt");
    disk.files["a.txt"] = "new\n";
    await editor.changedOnDisk("a.txt");
    expect(editor.contentOf("a.txt")).toBe("new\n");
    expect(root.querySelector(".tab.dirty")).toBeNull();
  });

  it("keeps unsaved edits and warns when the file changes underneath", async () => {
    const { disk, root, editor } = setup({ "a.txt": "old\n" });
    await editor.open("a.txt");
    type(root, "mine\n");
    disk.files["a.txt"] = "theirs\n";
    await editor.changedOnDisk("a.txt");
    expect(editor.contentOf("a.txt")).toBe("old\nmine\n");
    const banner = root.querySelector(".editor-banner")!;
    expect(banner.classList.contains("hidden")).toBe(false);
    expect(banner.textContent).toContain("changed on disk");
    banner.querySelector("button")!.click();
    expect(editor.contentOf("a.txt")).toBe("theirs\n");
    expect(root.querySelector(".tab.dirty")).toBeNull();
    expect(banner.classList.contains("hidden")).toBe(true);
  });

  it("says so when a file cannot be opened", async () => {
    const { root, editor, notes } = setup({});
    await editor.open("missing.txt");
    expect(notes[0]).toContain("Cannot open missing.txt");
    expect(root.querySelectorAll(".tab")).toHaveLength(0);
  });
});
