// The MCP servers section of Settings: each server with its state (starting, ready with its
// tools, failed with its last words on stderr, waiting for approval), where it runs (the
// sandbox, or trusted outside it), and its actions; a server is added by pasting its JSON.

import type { McpEdit, McpScope, McpView, ServerStatus } from "../ipc/types";
import { button, clear, h } from "../lib/dom";

export interface McpActions {
  /** Null when done, else why not (shown under the form or the server). */
  change: (name: string, scope: McpScope, edit: McpEdit) => Promise<string | null>;
  restart: () => void;
}

/** A server's state in words, for its chip. */
export function describeState(server: ServerStatus): { text: string; kind: "ok" | "error" | "muted" } {
  switch (server.state.state) {
    case "ready":
      return { text: `ready · ${server.tools.length} tool${server.tools.length === 1 ? "" : "s"}`, kind: "ok" };
    case "failed":
      return { text: "failed", kind: "error" };
    case "needs_approval":
      return { text: "needs your approval", kind: "error" };
    case "disabled":
      return { text: "disabled", kind: "muted" };
    case "starting":
      return { text: "starting", kind: "muted" };
  }
}

/** Where a server's code runs, in words: the sandbox, or outside it and why. */
export function describeSandbox(server: ServerStatus): string {
  if (server.trusted) return "trusted: runs outside the sandbox, with your permissions";
  if (server.transport === "http") return "over HTTP: runs wherever its URL points";
  const network = server.network ? "with the network" : "no network";
  return server.sandbox === "sandboxed" || server.sandbox === "" ? `sandboxed · ${network}` : server.sandbox;
}

export class McpSection {
  readonly root = h("section", { class: "mcp-section" });
  private readonly list = h("div", { class: "mcp-servers" });
  private readonly problems = h("div", { class: "mcp-problems" });
  private readonly name = h("input", { class: "mcp-name", attrs: { type: "text", placeholder: "name (e.g. time)", "aria-label": "server name" } });
  private readonly definition = h("textarea", {
    class: "mcp-definition mono",
    attrs: { rows: "4", spellcheck: "false", "aria-label": "server definition", placeholder: '{"command": "mcp-server-time", "args": ["--local-timezone", "UTC"]}' },
  });
  private readonly scope = h("select", { class: "mcp-scope", attrs: { "aria-label": "where" } });
  private readonly formError = h("p", { class: "error-text small mcp-error" });
  private view: McpView | null = null;

  constructor(private readonly actions: McpActions) {
    this.scope.append(
      h("option", { text: "for me (every folder)", attrs: { value: "user" } }),
      h("option", { text: "for this project (.lantern/mcp.json)", attrs: { value: "workspace" } }),
    );
    this.root.append(
      h("div", { class: "section-header" }, h("h3", { text: "Tool servers (MCP)" }), h("span", { class: "spacer" }), button("↻", actions.restart, { class: "icon-button", title: "Start the servers again" })),
      this.problems,
      this.list,
      h(
        "form",
        { class: "mcp-add" },
        h("p", { class: "muted small", text: "Add a server: paste its mcpServers entry (command, args, env — or url, headers). Lantern's own keys: network, trusted, disabled, timeout_s." }),
        h("div", { class: "button-row" }, this.name, this.scope),
        this.definition,
        h("div", { class: "button-row" }, h("span", { class: "spacer" }), button("Add server", () => void this.add(), { class: "small mcp-add-button" })),
        this.formError,
      ),
    );
  }

  setView(view: McpView | string): void {
    clear(this.list);
    clear(this.problems);
    if (typeof view === "string") {
      this.list.append(h("p", { class: "muted small", text: view }));
      return;
    }
    this.view = view;
    for (const problem of view.problems) this.problems.append(h("p", { class: "error-text small", text: problem }));
    if (view.servers.length === 0) {
      this.list.append(h("p", { class: "muted small", text: `No MCP servers. Yours are kept in ${view.user_file}.` }));
    }
    for (const server of view.servers) this.list.append(this.row(server));
  }

  private row(server: ServerStatus): HTMLElement {
    const scope: McpScope = server.origin;
    const state = describeState(server);
    const change = (edit: McpEdit) => async () => {
      const error = await this.actions.change(server.name, scope, edit);
      if (error) this.formError.textContent = error;
    };
    const actions = h("span", { class: "mcp-actions" });
    if (server.state.state === "needs_approval") {
      actions.append(button("Approve", () => void change({ kind: "approve" })(), { class: "small mcp-approve" }));
    }
    const disabled = server.state.state === "disabled";
    actions.append(
      button(disabled ? "Enable" : "Disable", () => void change({ kind: "enable", enabled: disabled })(), { class: "small" }),
      button(server.trusted ? "Sandbox it" : "Trust", () => void change({ kind: "trust", trusted: !server.trusted })(), {
        class: "small",
        title: server.trusted ? "Run it in the sandbox again" : "Run it outside the sandbox, with your permissions, its read-only tools unasked",
      }),
      button("Remove", () => void change({ kind: "remove" })(), { class: "small" }),
    );
    const details = h("div", { class: "mcp-details" });
    const where = `${server.transport} · ${server.origin === "user" ? "yours" : "this project's"} · ${describeSandbox(server)}`;
    details.append(h("p", { class: `muted small mcp-sandbox${server.trusted ? " warning-text" : ""}`, text: where }));
    if (server.tools.length > 0) details.append(h("p", { class: "mono small mcp-tools", text: server.tools.join("  ") }));
    if (server.state.state === "failed") {
      details.append(h("p", { class: "error-text small", text: server.state.detail }));
      if (server.stderr.length > 0) details.append(h("pre", { class: "mono small mcp-stderr", text: server.stderr.slice(-5).join("\n") }));
    }
    if (server.state.state === "needs_approval") {
      details.append(h("p", { class: "small", text: "This project defines it. It starts once you approve this exact definition, and asks again if the project changes it." }));
    }
    for (const refused of server.refused) details.append(h("p", { class: "muted small", text: `left out ${refused}` }));
    for (const drifted of server.drifted) details.append(h("p", { class: "warning-text small", text: `${drifted} changed its definition: its grants lapsed and it asks again` }));
    return h(
      "div",
      { class: "mcp-server", data: { name: server.name, state: server.state.state } },
      h(
        "div",
        { class: "mcp-header" },
        h("span", { class: `status-chip status-${state.kind === "ok" ? "ok" : state.kind === "error" ? "denied" : "muted"}`, text: state.text }),
        h("span", { class: "mono mcp-name-label", text: server.name }),
        h("span", { class: "spacer" }),
        actions,
      ),
      details,
    );
  }

  private async add(): Promise<void> {
    const name = this.name.value.trim();
    if (!name) {
      this.formError.textContent = "Give the server a name: it prefixes its tools' names.";
      return;
    }
    const error = await this.actions.change(name, this.scope.value as McpScope, { kind: "add", definition: this.definition.value });
    this.formError.textContent = error ?? "";
    if (!error) {
      this.name.value = "";
      this.definition.value = "";
    }
  }

  /** The servers shown, for tests. */
  servers(): ServerStatus[] {
    return this.view?.servers ?? [];
  }
}
