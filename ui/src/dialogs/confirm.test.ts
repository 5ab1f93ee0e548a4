import { afterEach, describe, expect, it } from "vitest";
import type { Answer, PermissionRequest, PreviewKind } from "../ipc/types";
import { ConfirmationDialog, MODEL_SOURCE } from "./confirm";
import { folderGlob, scopeChoices } from "./scope";

function writeRequest(path: string, callId = "call-1"): PermissionRequest {
  return {
    call_id: callId,
    tool: "write_file",
    args: { path, content: "new\n" },
    reasoning: "The price was wrong",
    risk: "write",
    paths: [path],
    command: null,
    rule: "default: writes ask first",
    unpointed: [],
    drops: [],
    preview_kind: "diff",
    preview: {
      path,
      created: false,
      lines_added: 1,
      lines_removed: 1,
      unified: `--- a/${path}\n+++ b/${path}\n@@ -1 +1 @@\n-old\n+new\n`,
      old_content: "old\n",
    },
  };
}

function setup() {
  const host = document.createElement("div");
  document.body.append(host);
  const answers: [number, Answer][] = [];
  const dialog = new ConfirmationDialog(host, async (id, answer) => {
    answers.push([id, answer]);
  });
  return { host, dialog, answers };
}

function key(key: string, target: EventTarget = document.activeElement ?? document.body) {
  target.dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true }));
}

const settle = () => new Promise((r) => setTimeout(r, 0));

afterEach(() => {
  document.body.replaceChildren();
});

describe("ConfirmationDialog", () => {
  it("names the MCP server a tool comes from, how it is reached and where it runs", () => {
    const { host, dialog } = setup();
    dialog.enqueue(
      1,
      {
        ...writeRequest("x"),
        tool: "time.get_current_time",
        args: { timezone: "Asia/Tokyo" },
        risk: "remote",
        paths: [],
        rule: "default: tools of MCP servers ask first",
        preview_kind: "none",
        preview: null,
        source: { server: "time", transport: "stdio", sandbox: "sandboxed" },
      },
      MODEL_SOURCE,
    );
    expect(host.querySelector(".confirm-source")?.textContent).toBe("A tool of the MCP server time · stdio · sandboxed");
    expect(host.textContent).toContain("Asia/Tokyo");
    expect(host.textContent).toContain("every time.get_current_time call");
    expect(host.textContent).toContain("every tool of the MCP server time");
  });

  it("shows the tool, the reasoning and the diff, and focuses Allow once", () => {
    const { host, dialog } = setup();
    dialog.enqueue(1, writeRequest("src/cart.ts"), MODEL_SOURCE);
    const text = host.textContent ?? "";
    expect(text).toContain("write_file");
    expect(text).toContain("The price was wrong");
    expect(host.querySelector(".diff-removed")?.textContent).toBe("-old");
    expect(host.querySelector(".diff-added")?.textContent).toBe("+new");
    expect((document.activeElement as HTMLElement).dataset.action).toBe("once");
  });

  it("says when a call was written by hand rather than by the model", () => {
    const { host, dialog } = setup();
    dialog.enqueue(5, { ...writeRequest("a.txt"), reasoning: null }, "manual-1");
    expect(host.querySelector(".confirm-reasoning")?.textContent).toContain("You wrote this call by hand.");
  });

  it("denies on Escape", async () => {
    const { host, dialog, answers } = setup();
    dialog.enqueue(4, writeRequest("a.txt"), MODEL_SOURCE);
    key("Escape");
    await settle();
    expect(answers).toEqual([[4, { answer: "deny", message: null }]]);
    expect(host.querySelector(".confirm-dialog")).toBeNull();
  });

  it("denies with the typed message on Enter in the message field", async () => {
    const { host, dialog, answers } = setup();
    dialog.enqueue(2, writeRequest("a.txt"), MODEL_SOURCE);
    const input = host.querySelector<HTMLInputElement>(".deny-message")!;
    input.focus();
    input.value = "use b.txt instead";
    key("o", input); // typing is not a shortcut
    key("Enter", input);
    await settle();
    expect(answers).toEqual([[2, { answer: "deny", message: "use b.txt instead" }]]);
  });

  it("queues requests and answers them in order with the keyboard", async () => {
    const { host, dialog, answers } = setup();
    dialog.enqueue(1, writeRequest("src/a.ts", "call-1"), MODEL_SOURCE);
    dialog.enqueue(2, writeRequest("src/b.ts", "call-2"), MODEL_SOURCE);
    expect(host.querySelector(".confirm-queue")?.textContent).toBe("1 more waiting");
    key("o");
    await settle();
    expect(host.querySelector(".confirm-paths")?.textContent).toContain("src/b.ts");
    key("s");
    await settle();
    expect(answers).toEqual([
      [1, { answer: "allow_once" }],
      [2, { answer: "allow_session", scope: { kind: "path", value: "src/b.ts" } }],
    ]);
    expect(host.querySelector(".confirm-dialog")).toBeNull();
  });

  it("grants always for an edited folder glob", async () => {
    const { host, dialog, answers } = setup();
    dialog.enqueue(9, writeRequest("src/lib/x.ts"), MODEL_SOURCE);
    const glob = host.querySelector<HTMLInputElement>(".scope-glob")!;
    expect(glob.value).toBe("src/lib/**");
    glob.value = "src/**";
    glob.dispatchEvent(new Event("input"));
    host.querySelector<HTMLButtonElement>("[data-action=always]")!.click();
    await settle();
    expect(answers).toEqual([[9, { answer: "allow_always", scope: { kind: "glob", value: "src/**" } }]]);
  });

  it("closing with × is a deny", async () => {
    const { host, dialog, answers } = setup();
    dialog.enqueue(3, writeRequest("a.txt"), MODEL_SOURCE);
    host.querySelector<HTMLButtonElement>(".dialog-header .icon-button")!.click();
    await settle();
    expect(answers).toEqual([[3, { answer: "deny", message: null }]]);
  });

  it("drops what a cancelled run left waiting", () => {
    const { host, dialog } = setup();
    dialog.enqueue(1, writeRequest("a.txt"), MODEL_SOURCE);
    dialog.enqueue(2, writeRequest("b.txt"), "manual-1");
    dialog.dropSource(MODEL_SOURCE);
    expect(host.querySelector(".confirm-paths")?.textContent).toContain("b.txt");
    expect(host.querySelector(".confirm-queue")?.textContent).toBe("");
  });
});

describe("scopes", () => {
  it("offers the file, its folder and the tool for a write", () => {
    expect(scopeChoices(writeRequest("src/a.ts")).map((c) => [c.kind, c.value])).toEqual([
      ["path", "src/a.ts"],
      ["glob", "src/**"],
      ["tool", ""],
    ]);
    expect(folderGlob("top.txt")).toBe("**");
  });

  it("offers only the exact command for a command", () => {
    const request = { ...commandRequest("npm test") };
    expect(scopeChoices(request).map((c) => c.kind)).toEqual(["command"]);
  });
});

function commandRequest(command: string): PermissionRequest {
  return {
    call_id: "call-1",
    tool: "run_command",
    args: { command },
    reasoning: "Run the tests",
    risk: "exec",
    paths: [],
    command,
    rule: "default: commands ask first",
    unpointed: [],
    drops: [],
    preview_kind: "command",
    preview: {
      command,
      cwd: "/home/u/shop",
      timeout_s: 30,
      sandboxed: true,
      sandbox: "bubblewrap: network off, only the workspace writable",
    },
  };
}

describe("a write to a file nobody named", () => {
  it("says so above everything else", () => {
    const { host, dialog } = setup();
    dialog.enqueue(1, { ...writeRequest("package.json"), unpointed: ["package.json"] }, MODEL_SOURCE);
    const warning = host.querySelector(".confirm-unpointed");
    expect(warning?.textContent).toContain("You did not name package.json");
    expect(warning?.textContent).toContain("the model chose this file on its own");
    expect(host.querySelector(".dialog-body")?.firstElementChild).toBe(warning);
  });

  it("is not flagged when the user pointed at the file", () => {
    const { host, dialog } = setup();
    dialog.enqueue(1, writeRequest("notes.md"), MODEL_SOURCE);
    expect(host.querySelector(".confirm-unpointed")).toBeNull();
  });
});

describe("a write that drops lines of a file", () => {
  it("says how many lines would be lost, above the diff", () => {
    const { host, dialog } = setup();
    const drops = [{ path: "notes.md", dropped: 4, of: 5, lost: 4, asked_to_keep: false }];
    dialog.enqueue(1, { ...writeRequest("notes.md"), drops }, MODEL_SOURCE);
    const warning = host.querySelector(".confirm-drops");
    expect(warning?.textContent).toContain("Lines would be lost: 4 of the 5 non-blank lines of notes.md.");
    expect(warning?.getAttribute("role")).toBe("alert");
    expect(host.querySelector(".dialog-body")?.firstElementChild).toBe(warning);
  });

  it("says how many lines it writes over that the user did not ask to change", () => {
    const { host, dialog } = setup();
    const drops = [{ path: ".gitignore", dropped: 1, of: 3, lost: 1, asked_to_keep: true }];
    dialog.enqueue(1, { ...writeRequest(".gitignore"), drops }, MODEL_SOURCE);
    expect(host.querySelector(".confirm-drops")?.textContent).toContain(
      "1 of the 3 non-blank lines of .gitignore (1 written over, though you asked to change nothing there).",
    );
  });

  it("is not flagged when the write keeps every line", () => {
    const { host, dialog } = setup();
    dialog.enqueue(1, writeRequest("notes.md"), MODEL_SOURCE);
    expect(host.querySelector(".confirm-drops")).toBeNull();
  });
});

describe("a command's confirmation", () => {
  it("shows the command and whether it is sandboxed, without a diff", () => {
    const { host, dialog } = setup();
    dialog.enqueue(1, commandRequest("git status && rm -rf ~"), MODEL_SOURCE);
    const text = host.textContent ?? "";
    expect(text).toContain("run_command");
    expect(host.querySelector(".confirm-command code")?.textContent).toBe("git status && rm -rf ~");
    expect(host.querySelector(".confirm-sandbox")?.textContent).toContain("network off");
    expect(host.querySelector(".diff-added")).toBeNull();
    const scopes = [...host.querySelectorAll<HTMLInputElement>("input[name=confirm-scope]")].map((r) => r.value);
    expect(scopes).toEqual(["command"]);
  });
});

describe("a preview is shown by the kind its tool declares", () => {
  it("shows no diff when the tool declares none, whatever the preview holds", () => {
    const { host, dialog } = setup();
    dialog.enqueue(1, { ...writeRequest("a.txt"), preview_kind: "none" }, MODEL_SOURCE);
    expect(host.querySelector(".diff")).toBeNull();
    expect(host.querySelector(".confirm-preview")).toBeNull();
  });

  it("shows a preview of an unknown kind as JSON rather than guessing a diff", () => {
    const { host, dialog } = setup();
    // A kind this window does not know yet, from a newer backend.
    const kind = "hologram" as unknown as PreviewKind;
    dialog.enqueue(1, { ...writeRequest("a.txt"), preview_kind: kind }, MODEL_SOURCE);
    expect(host.querySelector(".diff")).toBeNull();
    expect(host.querySelector(".confirm-preview pre")?.textContent).toContain('"unified"');
  });

  it("shows a declared diff that lacks the diff's fields as JSON too", () => {
    const { host, dialog } = setup();
    dialog.enqueue(1, { ...writeRequest("a.txt"), preview: { note: "no diff here" } }, MODEL_SOURCE);
    expect(host.querySelector(".diff")).toBeNull();
    expect(host.querySelector(".confirm-preview pre")?.textContent).toContain("no diff here");
  });

  it("notes where unsandboxed checkers would run", () => {
    const { host, dialog } = setup();
    const request: PermissionRequest = {
      ...commandRequest("x"),
      tool: "get_diagnostics",
      command: null,
      preview: { sandboxed: false, sandbox: "not sandboxed: bwrap is missing", notice: "checkers run project code" },
      preview_kind: "sandbox",
    };
    dialog.enqueue(1, request, MODEL_SOURCE);
    expect(host.querySelector(".confirm-sandbox")?.textContent).toContain("bwrap is missing");
    expect(host.querySelector(".confirm-preview")).toBeNull();
  });
});
