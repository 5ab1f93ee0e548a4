import { diagnosticCount, forEachDiagnostic } from "@codemirror/lint";
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

  it("goes to a name's definition from F12 on it, selecting the line", async () => {
    const { disk, root, editor, notes } = setup({
      "src/app.ts": "import { total } from './cart';\nconsole.log(total([]));\n",
      "src/cart.ts": "// Cart.\n\nexport function total(items: number[]) {\n  return 0;\n}\n",
    });
    const asked: string[] = [];
    Object.assign(disk.backend, {
      goToDefinition: async (name: string) => {
        asked.push(name);
        return name === "total" ? [{ path: "src/cart.ts", line: 3, kind: "function", signature: "export function total(items: number[]) {" }] : [];
      },
    });
    await editor.open("src/app.ts");
    const view = EditorView.findFromDOM(root.querySelector(".editor-surface")!.shadowRoot!.querySelector(".cm-editor") as HTMLElement)!;
    const at = view.state.doc.toString().indexOf("total([])") + 2;
    view.dispatch({ selection: { anchor: at } });
    view.contentDOM.dispatchEvent(new KeyboardEvent("keydown", { key: "F12", bubbles: true, cancelable: true }));
    await new Promise((r) => setTimeout(r, 0));
    await new Promise((r) => setTimeout(r, 0));
    expect(asked).toEqual(["total"]);
    expect(root.querySelector(".tab.active")?.getAttribute("title")).toBe("src/cart.ts");
    const shown = EditorView.findFromDOM(root.querySelector(".editor-surface")!.shadowRoot!.querySelector(".cm-editor") as HTMLElement)!;
    const selection = shown.state.selection.main;
    expect(shown.state.sliceDoc(selection.from, selection.to)).toBe("export function total(items: number[]) {");
    // A name nothing defines says so and stays put.
    shown.dispatch({ selection: { anchor: 3 } });
    await editor.goToDefinitionAt(shown.state, 3);
    expect(notes.at(-1)).toBe("No definition of Cart in the code index.");
  });

  it("lists what the file defines in its outline, and a choice selects that line", async () => {
    const { disk, root, editor } = setup({
      "src/cart.ts": "// Cart.\n\nexport class Cart {\n  total() {\n    return 0;\n  }\n}\n",
    });
    Object.assign(disk.backend, {
      fileOutline: async (path: string) =>
        path === "src/cart.ts"
          ? [
              { name: "Cart", kind: "class", parent: null, line: 3, end_line: 7 },
              { name: "total", kind: "method", parent: "Cart", line: 4, end_line: 6 },
            ]
          : [],
    });
    await editor.open("src/cart.ts");
    await new Promise((r) => setTimeout(r, 0));
    const menu = root.querySelector<HTMLSelectElement>(".editor-outline")!;
    expect([...menu.options].map((o) => o.textContent)).toEqual(["Outline (2)", "class Cart · 3", "  method Cart.total · 4"]);
    menu.value = "4";
    menu.dispatchEvent(new Event("change"));
    const shown = EditorView.findFromDOM(root.querySelector(".editor-surface")!.shadowRoot!.querySelector(".cm-editor") as HTMLElement)!;
    const selection = shown.state.selection.main;
    expect(shown.state.sliceDoc(selection.from, selection.to)).toBe("  total() {");
  });

  it("says so when a file cannot be opened", async () => {
    const { root, editor, notes } = setup({});
    await editor.open("missing.txt");
    expect(notes[0]).toContain("Cannot open missing.txt");
    expect(root.querySelectorAll(".tab")).toHaveLength(0);
  });
});

describe("diagnostics", () => {
  const view = (root: HTMLElement) =>
    EditorView.findFromDOM(root.querySelector(".editor-surface")!.shadowRoot!.querySelector(".cm-editor") as HTMLElement)!;
  const result = (diagnostics: unknown[], file?: string) => ({ diagnostics, errors: diagnostics.length, ...(file ? { file } : {}) });
  const finding = (path: string, line: number, column: number) => ({
    path,
    line,
    column,
    end_line: null,
    end_column: null,
    severity: "error",
    code: "E0308",
    message: "mismatched types",
    source: "cargo",
  });

  it("marks a get_diagnostics finding in the open file, and clears it after a clean check", async () => {
    const { root, editor } = setup({ "src/lib.rs": "fn a() {\n    let x: String = 5;\n}\n" });
    await editor.open("src/lib.rs");
    editor.showDiagnostics(result([finding("src/lib.rs", 2, 21), finding("src/other.rs", 1, 1)]));
    const state = view(root).state;
    expect(diagnosticCount(state)).toBe(1);
    const seen: string[] = [];
    forEachDiagnostic(state, (d, from, to) => seen.push(`${d.severity} ${state.doc.sliceString(from, to)} ${d.source}`));
    expect(seen).toEqual(["error 5 cargo E0308"]);
    expect(root.querySelector(".editor-surface")!.shadowRoot!.querySelector(".cm-gutter-lint")).not.toBeNull();
    expect(root.querySelector(".editor-findings")?.textContent).toBe("1 error");
    editor.showDiagnostics(result([]));
    expect(diagnosticCount(view(root).state)).toBe(0);
    expect(root.querySelector(".editor-findings")).toBeNull();
  });

  it("a Check button asks for the file shown", async () => {
    const disk = fakeDisk({ "a.py": "x\n" });
    const root = document.createElement("div");
    document.body.append(root);
    const checked: string[] = [];
    const editor = new EditorPanel(root, {
      backend: disk.backend,
      notify: () => {},
      confirmDiscard: async () => true,
      onCheck: (path) => checked.push(path),
    });
    await editor.open("a.py");
    root.querySelector<HTMLButtonElement>(".editor-check")!.click();
    expect(checked).toEqual(["a.py"]);
  });

  it("keeps findings for files opened later and across tab switches", async () => {
    const { root, editor } = setup({ "a.py": "x = y\n", "b.py": "ok = 1\n" });
    editor.showDiagnostics(result([finding("a.py", 1, 5)]));
    await editor.open("a.py");
    expect(diagnosticCount(view(root).state)).toBe(1);
    await editor.open("b.py");
    expect(diagnosticCount(view(root).state)).toBe(0);
    // A check narrowed to b.py leaves a.py's findings alone.
    editor.showDiagnostics(result([], "b.py"));
    await editor.open("a.py");
    expect(diagnosticCount(view(root).state)).toBe(1);
    expect(editor.diagnosticsOf("a.py")).toBe(1);
  });

  it("ignores other results", async () => {
    const { root, editor } = setup({ "a.py": "x\n" });
    await editor.open("a.py");
    editor.showDiagnostics({ content: "x" });
    expect(diagnosticCount(view(root).state)).toBe(0);
  });
});
