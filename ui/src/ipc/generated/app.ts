// Generated from the Rust types' JSON Schemas by src-tauri/src/ipc_types; do not edit.
// Regenerate: cd src-tauri && LANTERN_UPDATE_IPC_TYPES=1 cargo test -p lantern-app ipc_types
// The commands' other results and arguments, the settings, and every error.

import type { CallPath, Event } from "./events";

/** What every command fails with. */
export interface AppError {
  code: ErrorCode;
  /** For people. */
  message: string;
  /**
   * Facts to show beside the message: a tool error's hint, a refused undo's
   * `undo_conflict`.
   */
  details: unknown;
}

/** How the first token of a reply is decided in `auto` mode. */
export interface Calibration {
  /**
   * Call when the evidence (the score, a log-probability in nats, plus `prior_weight` when
   * the lexical prior marks the message) is at least this.
   */
  threshold: number;
  /** Nats added to the score of a message the lexical prior marks (0: the score alone). */
  prior_weight: number;
  /** How well the evidence ranks tool questions above answer questions (1 = perfectly). */
  auc: number;
  /** Fraction of probes the threshold classifies right. */
  probe_accuracy: number;
  /** False when the probes showed no useful separation: the lexical prior decides instead. */
  trusted: boolean;
  /** The probes' scores, without the prior's weight. */
  tool_scores: number[];
  answer_scores: number[];
  seconds: number;
}

/** How tool calls travel between Lantern and the server. */
export type CallMode =
  /**
   * Native when the server shows that it can (it is asked when Lantern connects),
   * otherwise the text protocol.
   */
  | "auto"
  /** Always the API's `tools` and `tool_calls`. */
  | "native"
  /** Always Lantern's `<TOOL_CALL>` text protocol. */
  | "text";

/** A conversation taken up again: the session it now is, and what was said so far. */
export interface ChatOpened {
  workspace: WorkspaceInfo;
  events: Event[];
}

/** One saved conversation. */
export interface ChatSummary {
  /** Its transcript. */
  path: string;
  /** The first message the user sent. */
  first_message: string;
  /** How many messages the user sent. */
  turns: number;
  /** The model of the first message. */
  model: string;
  /** When it was last written, in milliseconds since 1970. */
  modified_ms: number;
}

/** The map of the project's code a conversation opens with. */
export interface CodeMapInfo {
  /**
   * Whether conversations with the model in use open with it (Settings, else the default:
   * a model on a server does, the local model does not).
   */
  given: boolean;
  /**
   * Its size in characters: the one conversations open with, or, when none is given, the
   * default for a model on a server, to show what it would be.
   */
  budget: number;
  /** The map at that size; empty when the code defines nothing the index reads. */
  text: string;
  chars: number;
  /**
   * Its tokens for the model in use (the local model's tokenizer, or the server's when it
   * has one); `None` when the model cannot say, is busy answering, or none is loaded.
   */
  tokens: number | null;
}

/** The calibrated decisions for one model and system prompt. */
export interface DecisionRules {
  /** The first reply to a user message. */
  first_step: Calibration;
  /** A reply right after a tool result. */
  follow_up: Calibration;
}

/** Where a name is defined, for a window's "go to definition". */
export interface DefinitionPlace {
  path: string;
  /** The line its name is on, 1-based. */
  line: number;
  /** Its first and last lines (a decorator or doc comment may come before the name). */
  start_line: number;
  end_line: number;
  kind: string;
  /** Its first line. */
  signature: string;
}

/** What kind of failure: what the UI branches on. */
export type ErrorCode =
  | "not_found"
  | "permission_denied"
  | "io"
  | "internal"
  /** No workspace folder is open. */
  | "no_workspace"
  /** No model is loaded. */
  | "no_model"
  /**
   * Something else holds what this needs (a turn, a manual call, a model load); try again
   * when it finishes.
   */
  | "busy"
  /** The request itself is wrong (bad arguments, a binary file for the editor, …). */
  | "invalid"
  /** The model could not be loaded or failed. */
  | "model";

export interface ExportedTranscript {
  path: string;
  events: number;
}

/** The index's state. */
export type IndexState =
  | "building"
  | "ready"
  | "failed"
  /** Not built yet in this process. */
  | "not_built";

/** Where the index stands, for a status line: readable while a refresh holds the index. */
export interface IndexStatus {
  state: IndexState;
  /** Source files looked at so far by the refresh under way, and how many there are. */
  done: number;
  total: number;
  /** What the index held after its last refresh. */
  files: number;
  definitions: number;
  /** Why the last refresh failed. */
  error?: string | null;
}

/** A change Settings asks for. */
export type McpEdit =
  /**
   * Adds or replaces a server from its `mcpServers` JSON entry (or a whole `mcpServers`
   * object with one server).
   */
  | { kind: "add"; definition: string }
  | { kind: "remove" }
  /** Starts (`true`) or keeps stopped (`false`) a defined server. */
  | { kind: "enable"; enabled: boolean }
  /** Runs it outside the sandbox (`true`), its read-only tools unasked. */
  | { kind: "trust"; trusted: boolean }
  /** Approves a project's server as it is defined now. */
  | { kind: "approve" };

/** Whose file a change is made in. */
export type McpScope =
  /** The user's own servers, for every folder. */
  | "user"
  /** The open project's `.lantern/mcp.json`. */
  | "workspace";

/** The MCP servers as Settings shows them. */
export interface McpView {
  servers: ServerStatus[];
  /** Problems reading the configuration files. */
  problems: string[];
  /** Where the user's own servers are defined. */
  user_file: string;
  /** Where the open project's servers are defined, when a folder is open. */
  workspace_file: string | null;
}

/** What a user should know about the loaded model. */
export interface ModelFacts {
  path: string;
  name: string;
  architecture: string;
  parameters: number;
  size_bytes: number;
  trained_context: number;
  context: number;
  threads: number;
  vocab_size: number;
  /**
   * `model` (the GGUF's own template), `built-in NAME` (llama.cpp's template for the
   * architecture) or `chatml` (the last resort).
   */
  chat_template: string;
  /**
   * How the model is prompted and calls: `native` (its own template renders the tools and
   * it writes its own call form) or `text` (Lantern's `<TOOL_CALL>` protocol).
   */
  call_path: CallPath;
  /** Why, in words for the Model page and `lantern probe`. */
  call_path_why: string;
  /**
   * Whether llama.cpp may use its flash-attention kernels: only on a GPU; on the CPU the
   * plain ones are faster.
   */
  flash_attention: boolean;
  load_seconds: number;
}

export interface ModelFile {
  path: string;
  name: string;
  size_bytes: number;
}

/** The model the window works with: a local GGUF, or a model on a server. */
export type ModelInfo =
  | {
      kind: "local";
      facts: ModelFacts;
      /** The model Lantern downloads and uses unless told otherwise. */
      is_default: boolean;
      /**
       * How the conversations' opening was made ready at load: loaded from the prompt
       * cache after a restart, or evaluated and saved.
       */
      opening: PreparedOpening | null;
    }
  | { kind: "server"; server: ServerInfo };

export interface ModelList {
  models_dir: string;
  default_model: string;
  default_model_exists: boolean;
  /** The GGUF files in the models folder. */
  models: ModelFile[];
}

/** What making the cache hold the opening took. */
export type Opening =
  /** Nothing: no cache, no system message, or the template does not render it apart. */
  | "none"
  /** The KV cache already held it. */
  | "held"
  /** Loaded from a saved state. */
  | "loaded"
  /** Evaluated, and saved for the next process. */
  | "saved";

/** Where a definition came from. */
export type Origin =
  /** The user's own file in Lantern's config folder. */
  | "user"
  /** The workspace's `.lantern/mcp.json`: started only once approved. */
  | "workspace";

/** One definition of a file's outline, for a window's outline of the file shown. */
export interface OutlineEntry {
  name: string;
  kind: string;
  /** The type or module it belongs to (a method's class), when it does. */
  parent: string | null;
  /** The line its name is on, and its last line (1-based). */
  line: number;
  end_line: number;
}

/**
 * How the opening came to be in the cache when the model was prepared: what the user waits
 * for at load, and why the first message of a fresh process is quick.
 */
export interface PreparedOpening {
  how: Opening;
  /** The opening's length in tokens. */
  tokens: number;
  /** What holding it took, evaluating or loading. */
  seconds: number;
}

export interface ProbeReport {
  facts: ModelFacts;
  system_prompt_tokens: number;
  context: number;
  /** The system prompt leaves at least half the context free. */
  fits: boolean;
  calibration: DecisionRules;
  tasks: ProbeTask[];
  prompt_tokens_per_second: number;
  generation_tokens_per_second: number;
  /** What a user should know, in plain words. */
  verdict: string;
}

export interface ProbeTask {
  question: string;
  expected_tool: string | null;
  /** What the model did: `call TOOL`, `invalid call`, or `answer`. */
  outcome: string;
  decision_right: boolean;
  valid_call: boolean | null;
  call_confidence: number | null;
  seconds: number;
}

/** The project's instructions, as the model is given them at the start of a conversation. */
export interface RulesInfo {
  /** The file, relative to the project (`AGENTS.md`, `CLAUDE.md`, …). */
  path: string;
  /** The text given, cut to its bound. */
  text: string;
  /** Whether the file was longer than what is given. */
  cut: boolean;
  chars: number;
  /**
   * Its tokens for the model in use (the local model's tokenizer, or the server's when it
   * has one); `None` when the model cannot say, is busy answering, or none is loaded.
   */
  tokens: number | null;
}

export interface SavedFile {
  path: string;
  bytes_written: number;
  created: boolean;
}

/** A model server the window connects to. Its API key is kept apart (see `server_keys`). */
export interface ServerConfig {
  /** The API root, e.g. `http://127.0.0.1:8080/v1`. */
  base_url: string;
  /** The model's name on the server. */
  model: string;
  /** Native tool calls, the text protocol, or whichever the server shows it can do. */
  calls: CallMode;
}

/** The server form of the Model page. */
export interface ServerForm {
  base_url: string;
  model: string;
  /**
   * The key to send; absent, the key saved for this server is used, and an empty key
   * forgets it.
   */
  api_key: string | null;
  calls: CallMode;
}

/** The connected server, as the Model page shows it. */
export interface ServerInfo {
  base_url: string;
  model: string;
  /** The path tool calls take, and why. */
  calls: CallPath;
  why: string;
  /** Whether an API key is sent (the key itself never leaves the backend). */
  has_key: boolean;
}

/** What *Test connection* found. */
export interface ServerReport {
  /** The models the server lists. */
  models: string[];
  /** The model tested: the one named, or the first listed when none was. */
  model: string;
  /** Whether the chosen model is one of them. */
  model_listed: boolean;
  /** The path tool calls would take; absent when the model is not listed. */
  calls: CallPath | null;
  why: string;
}

/** Where a server stands. */
export type ServerState =
  /** Its definition is kept but it is not started. */
  | { state: "disabled" }
  /** A workspace's definition the user has not approved (or that changed since). */
  | { state: "needs_approval" }
  | { state: "starting" }
  | { state: "ready" }
  /** It could not be started or listed: why, in words. */
  | { state: "failed"; detail: string };

/** One server as the CLI and the window show it. */
export interface ServerStatus {
  name: string;
  origin: Origin;
  /** `stdio` or `http`. */
  transport: string;
  state: ServerState;
  /** The names its tools are offered under. */
  tools: string[];
  trusted: boolean;
  network: boolean;
  /** "sandboxed", or why not. */
  sandbox: string;
  /** Its last lines on standard error. */
  stderr: string[];
  /** The process id of a running stdio server (of its sandbox, when sandboxed). */
  pid: number | null;
  /** Tools left out, each with the reason (a clash, a name too long, a schema refused). */
  refused: string[];
  /** Tools whose definition changed since they were last seen: their grants lapsed. */
  drifted: string[];
}

export interface Settings {
  /** Most model replies per message. */
  max_steps: number;
  /** Constrain tool calls with the grammar derived from the tool schemas. */
  grammar: boolean;
  /** Sampling temperature; 0 decodes greedily. */
  temperature: number;
  /** Context size in tokens, used when a model is loaded; `None` lets the model decide. */
  context: number | null;
  /** Whether each step may, must or must not be a tool call. */
  tool_choice: ToolChoice;
  /** The most tokens a local reasoning model may think before its reply; 0 for none. */
  thinking_budget: number;
  /**
   * The characters of the map of the project's code a conversation opens with; `None`
   * gives a model on a server the default (`SERVER_REPO_MAP`) and the local default model
   * none, which is what the evaluation supports; 0 gives none to any model.
   */
  repo_map: number | null;
}

/** Everything the window needs to draw itself when it (re)loads. */
export interface Startup {
  version: string;
  workspace: WorkspaceInfo | null;
  /** Why the folder given at start could not be opened. */
  workspace_error: string | null;
  settings: Settings;
  model: ModelInfo | null;
  /**
   * The model to load when none is loaded: the last one used while it exists, else the
   * default model.
   */
  model_to_load: string;
  model_to_load_exists: boolean;
  /** The server to connect to at start instead, when the last model was a server's. */
  server_to_connect: ServerConfig | null;
  /** The server last connected to, to fill in the form (its key is not sent to the window). */
  last_server: ServerConfig | null;
}

export interface TextFile {
  /** Workspace-relative path. */
  path: string;
  content: string;
}

/** Whether this step may, must or must not be a tool call. */
export type ToolChoice =
  /** The backend decides (for llama.cpp: from the model's own probability of a call). */
  | "auto"
  /** The reply must be a call. */
  | "required"
  /** The reply must not be a call. */
  | "none";

export interface Tree {
  /** Workspace-relative file paths, sorted; folders are implied by the paths. */
  files: string[];
  /** Files found, including any beyond the limit. */
  total: number;
  truncated: boolean;
  /** Entries left out by .gitignore/.ignore, and version-control and Lantern's state folders. */
  skipped: number;
}

/** The open folder, as the window shows it. */
export interface WorkspaceInfo {
  root: string;
  name: string;
  /** Set when the saved grants could not be read (they then grant nothing). */
  policy_warning: string | null;
  /** Where this session's events are saved. */
  transcript: string;
}
