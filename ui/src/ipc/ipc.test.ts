import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AppError, backend, COMMANDS } from "./index";

const rustCommandList = readFileSync(resolve(__dirname, "../../../src-tauri/src/command_list.rs"), "utf8");

afterEach(() => clearMocks());

describe("the IPC module", () => {
  it("knows exactly the commands the backend registers", () => {
    const rust = [...rustCommandList.matchAll(/^\s+"([a-z_]+)",$/gm)].map((m) => m[1]);
    expect([...COMMANDS].sort()).toEqual(rust.sort());
  });

  it("offers no command the window does not use", () => {
    const sources = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) return path.endsWith("ipc") ? [] : sources(path);
        return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [readFileSync(path, "utf8")] : [];
      });
    const window = sources(resolve(__dirname, "..")).join("\n");
    const unused = Object.keys(backend).filter((method) => !window.includes(`backend.${method}(`));
    expect(unused).toEqual([]);
  });

  it("calls every command, with the argument names the backend expects", async () => {
    const seen = new Map<string, Record<string, unknown>>();
    mockIPC((cmd, payload) => {
      seen.set(cmd, (payload ?? {}) as Record<string, unknown>);
      return null;
    });
    const noop = () => {};
    await backend.startup();
    await backend.pickWorkspace();
    await backend.listTree();
    await backend.codeIndexStatus();
    await backend.goToDefinition("total");
    await backend.readFile("a.ts");
    await backend.saveFile("a.ts", "x");
    await backend.sendMessage("hi", noop);
    await backend.cancel();
    await backend.answerConfirmation(3, { answer: "allow_once" });
    await backend.listModels();
    await backend.pickModelFile();
    await backend.loadModel(null, noop);
    await backend.probeModel();
    const form = { base_url: "http://127.0.0.1:8080/v1", model: "m", api_key: null, calls: "auto" as const };
    await backend.serverModels(form);
    await backend.testServer(form);
    await backend.connectServer(form);
    await backend.listTools();
    await backend.runCall("read_file", { path: "a" }, noop);
    await backend.listGrants();
    await backend.revokeGrant("g-1");
    await backend.listCheckpoints();
    await backend.undo(null);
    await backend.exportTranscript();
    await backend.newChat();
    await backend.listChats();
    await backend.openChat("/t/a.jsonl");
    await backend.continueChat("/t/a.jsonl");
    await backend.deleteChat("/t/a.jsonl");
    await backend.updateSettings({ max_steps: 5, grammar: true, temperature: 0, context: null, tool_choice: "auto", thinking_budget: 512, repo_map: null });
    await backend.projectRules();
    await backend.codeMap();
    await backend.fileOutline("src/a.ts");
    await backend.completeSymbols("Ca");
    await backend.mcpServers();
    await backend.changeMcp("time", "workspace", { kind: "enable", enabled: false });
    await backend.restartMcp();
    expect([...seen.keys()].sort()).toEqual([...COMMANDS].sort());
    // Tauri maps camelCase keys to the Rust parameters' snake_case names.
    expect(Object.keys(seen.get("send_message")!).sort()).toEqual(["message", "onUpdate"]);
    expect(Object.keys(seen.get("run_call")!).sort()).toEqual(["args", "onUpdate", "tool"]);
    expect(Object.keys(seen.get("load_model")!).sort()).toEqual(["onProgress", "path"]);
    expect(seen.get("save_file")).toEqual({ path: "a.ts", content: "x" });
    expect(seen.get("answer_confirmation")).toEqual({ id: 3, answer: { answer: "allow_once" } });
    expect(seen.get("undo")).toEqual({ checkpoint: null });
    expect(seen.get("connect_server")).toEqual({ form });
    expect(seen.get("continue_chat")).toEqual({ path: "/t/a.jsonl" });
    expect(seen.get("change_mcp")).toEqual({ name: "time", scope: "workspace", edit: { kind: "enable", enabled: false } });
  });

  it("turns the backend's error into an AppError", async () => {
    mockIPC(() => {
      throw { code: "busy", message: "The assistant is working.", details: null };
    });
    const error = await backend.listGrants().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: "busy", message: "The assistant is working." });
  });

  it("turns a plain IPC failure into an internal AppError", () => {
    expect(AppError.from("command not allowed")).toMatchObject({ code: "internal", message: "command not allowed" });
  });
});
