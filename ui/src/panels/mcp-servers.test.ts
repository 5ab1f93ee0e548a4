import { afterEach, describe, expect, it } from "vitest";
import type { McpEdit, McpScope, ServerStatus } from "../ipc/types";
import { McpSection, describeSandbox } from "./mcp-servers";

function server(name: string, state: Partial<ServerStatus> = {}): ServerStatus {
  return {
    name,
    origin: "user",
    transport: "stdio",
    state: { state: "ready" },
    tools: [],
    trusted: false,
    network: false,
    sandbox: "sandboxed",
    stderr: [],
    pid: null,
    refused: [],
    drifted: [],
    ...state,
  };
}

afterEach(() => document.body.replaceChildren());

function section(changes: [string, McpScope, McpEdit][], error: string | null = null): McpSection {
  const mcp = new McpSection({
    change: async (name, scope, edit) => {
      changes.push([name, scope, edit]);
      return error;
    },
    restart: () => {},
  });
  document.body.append(mcp.root);
  return mcp;
}

describe("McpSection", () => {
  it("shows each server's state, tools, sandbox and failure words", () => {
    const mcp = section([]);
    mcp.setView({
      servers: [
        server("time", { tools: ["time.get_current_time", "time.convert_time"] }),
        server("broken", { state: { state: "failed", detail: "the server did not answer initialize in time" }, stderr: ["Traceback", "ImportError: no module"] }),
        server("web", { transport: "http", trusted: true }),
      ],
      problems: ["mcp.json: expected value at line 1"],
      user_file: "/home/u/.config/lantern/mcp.json",
      workspace_file: null,
    });
    const rows = [...document.querySelectorAll<HTMLElement>(".mcp-server")];
    expect(rows.map((r) => r.dataset.state)).toEqual(["ready", "failed", "ready"]);
    expect(rows[0]!.textContent).toContain("ready · 2 tools");
    expect(rows[0]!.textContent).toContain("time.convert_time");
    expect(rows[0]!.textContent).toContain("sandboxed · no network");
    expect(rows[1]!.textContent).toContain("did not answer initialize");
    expect(rows[1]!.querySelector(".mcp-stderr")!.textContent).toContain("ImportError");
    expect(rows[2]!.textContent).toContain("outside the sandbox");
    expect(document.querySelector(".mcp-problems")!.textContent).toContain("line 1");
  });

  it("asks for approval of a project's server and sends the edits it is given", async () => {
    const changes: [string, McpScope, McpEdit][] = [];
    const mcp = section(changes);
    mcp.setView({
      servers: [server("clock", { origin: "workspace", state: { state: "needs_approval" } })],
      problems: [],
      user_file: "u",
      workspace_file: "w",
    });
    const row = document.querySelector<HTMLElement>(".mcp-server")!;
    expect(row.textContent).toContain("needs your approval");
    row.querySelector<HTMLButtonElement>(".mcp-approve")!.click();
    await Promise.resolve();
    expect(changes).toEqual([["clock", "workspace", { kind: "approve" }]]);
  });

  it("adds a pasted server and shows why one is refused", async () => {
    const changes: [string, McpScope, McpEdit][] = [];
    const mcp = section(changes, "server \"x\": a server needs \"command\" (stdio) or \"url\" (streamable HTTP)");
    const add = document.querySelector<HTMLButtonElement>(".mcp-add-button")!;
    add.click();
    await Promise.resolve();
    expect(document.querySelector(".mcp-error")!.textContent).toContain("Give the server a name");
    document.querySelector<HTMLInputElement>(".mcp-name")!.value = "x";
    document.querySelector<HTMLTextAreaElement>(".mcp-definition")!.value = "{}";
    add.click();
    await new Promise((r) => setTimeout(r, 0));
    expect(changes).toEqual([["x", "user", { kind: "add", definition: "{}" }]]);
    expect(document.querySelector(".mcp-error")!.textContent).toContain("needs \"command\"");
    expect(mcp.servers()).toEqual([]);
  });

  it("says where a server's code runs", () => {
    expect(describeSandbox(server("a"))).toBe("sandboxed · no network");
    expect(describeSandbox(server("a", { network: true }))).toBe("sandboxed · with the network");
    expect(describeSandbox(server("a", { sandbox: "not sandboxed: bubblewrap is not installed" }))).toContain("bubblewrap");
  });
});
