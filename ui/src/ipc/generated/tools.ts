// Generated from the Rust types' JSON Schemas by src-tauri/src/ipc_types; do not edit.
// Regenerate: cd src-tauri && LANTERN_UPDATE_IPC_TYPES=1 cargo test -p lantern-app ipc_types
// Tools, their calls and results, what the user allows, and undo.

/** The user's answer to a [`PermissionRequest`]. */
export type Answer =
  | { answer: "allow_once" }
  | { answer: "allow_session"; scope: Scope }
  | { answer: "allow_always"; scope: Scope }
  /** Closing the dialog is a deny too. `message` is passed on to the model. */
  | { answer: "deny"; message: string | null }
  /** Nobody can be asked (no terminal, no window); `reason` says how to allow such calls. */
  | { answer: "unanswerable"; reason: string };

/** One recorded write. */
export interface Checkpoint {
  /** `cp-<n>`, increasing. */
  id: string;
  /** Workspace-relative path of the file written. */
  path: string;
  /** Hash of the content before the write; `None` when the write created the file. */
  before: string | null;
  /** Hash of the content the write left; `None` when it removed the file (an undone creation). */
  after: string | null;
  /** Who wrote (the tool call, an undo, …). */
  origin: string;
  /** Milliseconds since the Unix epoch. */
  time_ms: number;
  /** The session that made the write. */
  session?: string | null;
  /** Size of the content before the write, in bytes. */
  before_bytes?: number | null;
  /** Size of the content the write left, in bytes. */
  after_bytes?: number | null;
  /** For an undo: the checkpoint it undid. */
  undoes?: string | null;
  /** Set when this write has been undone. */
  undone: boolean;
  /**
   * Set when the store dropped this checkpoint to stay under its size limit; it can no
   * longer be undone.
   */
  evicted: boolean;
}

export type Effect = "allow" | "deny";

/** The categories of the structured result (`error_type`). */
export type ErrorType =
  | "none"
  | "not_found"
  | "validation_failed"
  | "permission_denied"
  | "io_error"
  | "parse_error"
  | "timeout"
  | "internal_error";

/** A standing answer of the user's. */
export interface Grant {
  /** Stable id derived from the content, for listing and revoking. */
  id: string;
  tool: string;
  scope: Scope;
  effect: Effect;
  lifetime: Lifetime;
  /** For a deny: what the model is told. */
  message?: string | null;
}

export type Lifetime =
  /** Until the app or the CLI run ends. */
  | "session"
  /** Persisted for this workspace. */
  | "always";

export interface Metadata {
  execution_time_ms: number;
  data_size_bytes: number;
  /** Milliseconds since the Unix epoch when the call finished. */
  timestamp: number;
  /**
   * For a tool of an MCP server: the request and response exchanged with it, as sent and
   * received. Shown in the inspector; the model is never given it.
   */
  exchange?: unknown;
}

/**
 * What a tool's preview holds: declared by the tool, so that a confirmation shows it by kind
 * instead of guessing from the tool's name or the preview's keys.
 */
export type PreviewKind =
  /** No preview: the request's paths and arguments say it all. */
  | "none"
  /**
   * The change to one file: `path`, `created`, `lines_added`, `lines_removed`, `unified`
   * (a unified diff) and `old_content`.
   */
  | "diff"
  /**
   * A command line and how it would run: `command`, `cwd`, `timeout_s`, `sandboxed`,
   * `sandbox` (in words) and `limits`.
   */
  | "command"
  /**
   * Given only when the programs the call starts would run outside the sandbox:
   * `sandboxed`, `sandbox` (why not) and `notice`.
   */
  | "sandbox";

/**
 * What a tool's successful result holds: declared by the tool, so that the UI routes a result
 * by kind (a write reloads the file, diagnostics mark the editor) instead of by tool name.
 */
export type ResultKind =
  /** Text of one file: `path`, `content`, `start_line`, `end_line`, `total_lines`. */
  | "file_content"
  /** Files of a folder: `directory`, `files` (paths), `count`. */
  | "file_list"
  /** Lines that match a search: `matches` (`path`, `line`, `column`, `text`), `count`. */
  | "matches"
  /** The checkers' findings, as [`crate::diagnostics::check`] reports them. */
  | "diagnostics"
  /**
   * A file written: `path`, `created`, `bytes_written` and `checkpoint` (see
   * `tools::Written::report_into`).
   */
  | "write"
  /** A program that ran: `command`, `exit_code`, `stdout`, `stderr`. */
  | "command_output"
  /** The session's task list, or one task of it. */
  | "tasks"
  /** Anything else, shown as it is. */
  | "plain";

/** How much harm a call can do; decides the default permission. */
export type Risk =
  /** Touches no files (time, the session's task list). */
  | "safe"
  /** Reads inside the workspace. */
  | "read"
  /** Changes files. */
  | "write"
  /** Runs programs. */
  | "exec"
  /**
   * Runs a tool of an MCP server, which Lantern cannot see into: asks unless granted for
   * that tool or its whole server.
   */
  | "remote";

/** What a grant covers, besides its tool. */
export type Scope =
  /** Every call of the tool. */
  | { kind: "tool" }
  /** One workspace-relative path. */
  | { kind: "path"; value: string }
  /** Workspace-relative paths matching a glob; `*` stays within one folder, `**` crosses. */
  | { kind: "glob"; value: string }
  /** One exact command line. */
  | { kind: "command"; value: string }
  /**
   * Every tool of the call's MCP server (its name's part before the dot): given as an
   * answer, kept as a grant for the tool `server.*`.
   */
  | { kind: "server" };

/** How a call ended: its data, or the error that stopped it. */
export interface ToolResult {
  success: boolean;
  data: unknown;
  error_message: string | null;
  error_type: ErrorType;
  /** What the model should do about the error, when there is advice to give. */
  error_hint?: string | null;
  metadata: Metadata;
}

/**
 * Where a tool from outside Lantern lives: its MCP server, how Lantern reaches it, and where
 * the server's code runs. Shown with its calls and confirmations; never given to the model.
 */
export interface ToolSource {
  server: string;
  /** `stdio` or `http`. */
  transport: string;
  /** "sandboxed", or where it runs instead. */
  sandbox: string;
}

/** What a tool is, as the model, the CLI and the UI see it. */
export interface ToolSpec {
  name: string;
  description: string;
  risk: Risk;
  input_schema: unknown;
  /** Arguments of a typical correct call, shown in the prompt and in error feedback. */
  example: unknown;
  preview_kind: PreviewKind;
  result_kind: ResultKind;
  /** For a tool of an MCP server: which, and how it is reached. `None` for Lantern's own. */
  source?: ToolSource | null;
}

/** What an undo did to the file. */
export type UndoAction =
  /** The old content is back. */
  | "restored"
  /** The write had created the file, so undoing it removed the file. */
  | "deleted";

/**
 * Why an undo was refused: the file changed after the write. Carried as the `details` of the
 * refusal so that the app and the CLI can show all three versions.
 */
export interface UndoConflict {
  checkpoint: string;
  /** Workspace-relative path of the file. */
  path: string;
  /** The content before the agent's write. */
  before: Version;
  /** The content the agent's write left. */
  agent: Version;
  /** The content now. */
  now: Version;
  /**
   * Unified diff from `before` to `agent`: what the write changed. `None` when a version is
   * not text or larger than a MiB.
   */
  agent_changes: string | null;
  /** Unified diff from `agent` to `now`: what changed since the write. */
  later_changes: string | null;
}

/** What an undo did. */
export interface UndoOutcome {
  undone: string;
  path: string;
  action: UndoAction;
  /** The checkpoint recording the undo itself, so the undo can be undone. */
  checkpoint: string;
}

/** One of the three versions in an [`UndoConflict`]. */
export interface Version {
  /** False when the file did not exist in this version. */
  exists: boolean;
  sha256: string | null;
  bytes: number | null;
  /**
   * Where this content can be read: a blob in the checkpoint store, or the workspace file
   * itself for the current version.
   */
  file: string | null;
}
