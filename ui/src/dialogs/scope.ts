// The scopes a standing "yes" can have for a request: this file, a folder glob, this exact
// command, or every call of the tool (never for commands).

import type { PermissionRequest, Scope } from "../ipc/types";

export interface ScopeChoice {
  kind: Scope["kind"];
  label: string;
  /** The editable part (the glob), or the fixed value. */
  value: string;
  editable: boolean;
}

/** The folder glob to offer for a path: its folder and everything below. */
export function folderGlob(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "**" : `${path.slice(0, slash)}/**`;
}

export function scopeChoices(request: PermissionRequest): ScopeChoice[] {
  const choices: ScopeChoice[] = [];
  if (request.command) {
    choices.push({ kind: "command", label: "this exact command", value: request.command, editable: false });
  } else if (request.paths.length === 1) {
    const [path] = request.paths as [string];
    choices.push({ kind: "path", label: "this file", value: path, editable: false });
    choices.push({ kind: "glob", label: "files matching", value: folderGlob(path), editable: true });
  } else if (request.paths.length > 1) {
    choices.push({ kind: "glob", label: "files matching", value: "**", editable: true });
  }
  // A command is only ever granted exactly: the backend does not let a grant for the whole
  // tool run commands unasked, so it is not offered.
  if (request.risk !== "exec") {
    choices.push({ kind: "tool", label: `every ${request.tool} call`, value: "", editable: false });
  }
  // A tool of an MCP server may be granted with its whole server (never a destructive one:
  // the backend does not let a server-wide grant cover it).
  if (request.source && request.risk !== "exec") {
    choices.push({ kind: "server", label: `every tool of the MCP server ${request.source.server}`, value: "", editable: false });
  }
  return choices;
}

export function toScope(choice: ScopeChoice): Scope {
  switch (choice.kind) {
    case "tool":
      return { kind: "tool" };
    case "path":
      return { kind: "path", value: choice.value };
    case "glob":
      return { kind: "glob", value: choice.value.trim() || "**" };
    case "command":
      return { kind: "command", value: choice.value };
    case "server":
      return { kind: "server" };
  }
}
