// Generated from the Rust types' JSON Schemas by src-tauri/src/ipc_types; do not edit.
// Regenerate: cd src-tauri && LANTERN_UPDATE_IPC_TYPES=1 cargo test -p lantern-app ipc_types

/** The user's answer to a [`PermissionRequest`]. */
export type Answer =
  | { answer: "allow_once" }
  | { answer: "allow_session"; scope: Scope }
  | { answer: "allow_always"; scope: Scope }
  /** Closing the dialog is a deny too. `message` is passed on to the model. */
  | { answer: "deny"; message: string | null }
  /** Nobody can be asked (no terminal, no window); `reason` says how to allow such calls. */
  | { answer: "unanswerable"; reason: string };

/** The user's answer to a confirmation, as recorded. */
export type AnswerKind = "once" | "session" | "always" | "deny";

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

/** How a backend's model makes its tool calls. */
export type CallPath =
  /** It writes them as text, in the `<TOOL_CALL>` protocol the system prompt describes. */
  | "text"
  /**
   * The server returns them as structured tool calls of its API (OpenAI `tool_calls`), from
   * the tools the request declares; the system prompt then describes no protocol.
   */
  | "native";

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

/** The calibrated decisions for one model and system prompt. */
export interface DecisionRules {
  /** The first reply to a user message. */
  first_step: Calibration;
  /** A reply right after a tool result. */
  follow_up: Calibration;
}

/** How a call was spelled. */
export type Dialect =
  /** `<TOOL_CALL>{"tool": …, "args": …, "reasoning": …}</TOOL_CALL>` */
  | "native"
  /** Qwen / Hermes: `<tool_call>{"name": …, "arguments": …}</tool_call>` */
  | "hermes"
  /** Mistral: `[TOOL_CALLS]name[ARGS]{…}` or `[TOOL_CALLS][{"name": …, "arguments": …}]` */
  | "mistral"
  /** Llama 3: `<function=name>{…}</function>` */
  | "llama3"
  /** `<tool>{"name": …, "params": …}</tool>` */
  | "tool_tag"
  /** A bare `{"name": …, "arguments": …}` object as the whole reply. */
  | "bare_json"
  /** `[name(key="value")]` (Llama 3.2, LFM2) as the whole reply. */
  | "pythonic"
  /** Harmony (gpt-oss): `<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>` */
  | "harmony";

export type Effect = "allow" | "deny";

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

/** One step of a turn or a manual call, as the window, the CLI and transcripts see it. */
export type Event =
  | { event: "turn_started"; message: string; model: string }
  | { event: "step_started"; step: number }
  /** Settled text of the reply outside any call, as it streams. */
  | { event: "text_delta"; step: number; text: string }
  /** The model finished a reply (before it is acted on). */
  | {
      event: "response_finished";
      step: number;
      raw: string;
      constrained: boolean;
      call_confidence: number | null;
      tokens_evaluated: number | null;
      tokens_generated: number | null;
      /**
       * Tokens the model's context holds after this step (prompt and reply), and at most:
       * what the context meter shows.
       */
      context_used: number | null;
      context_size: number | null;
      /** The native tool-call pieces the server streamed, raw, when the call came that way. */
      native_deltas?: unknown[];
      /** A reasoning model's thinking, shown apart (collapsed) and never read as a reply. */
      thinking?: string | null;
    }
  | {
      event: "call_parsed";
      step: number;
      call_id: string;
      tool: string;
      args: unknown;
      reasoning: string | null;
      dialect: Dialect;
      constrained: boolean;
      call_confidence: number | null;
      /** The call's exact text and where it sits in `response`. */
      raw: string;
      span: Span;
      response: string;
      /** Non-fatal problems (a second call, text after the call: both discarded). */
      problems: Problem[];
      /** Whether the call came as text or as a structured call of the server's API. */
      via: CallPath;
    }
  | {
      event: "call_rejected";
      step: number;
      error_type: ErrorType;
      message: string;
      feedback: string;
      raw: string | null;
      response: string;
    }
  | {
      event: "permission_asked";
      call_id: string;
      tool: string;
      args: unknown;
      reasoning: string | null;
      rule: string;
      preview: unknown;
    }
  | {
      event: "permission_answered";
      call_id: string;
      /** What the policy, or the user it asked, decided. */
      decision: Effect;
      /** How the user answered, when asked; `None` when the policy decided alone. */
      answer: AnswerKind | null;
      /** The rule or grant that decided. */
      rule: string;
      message?: string | null;
    }
  | { event: "tool_started"; call_id: string; tool: string; args: unknown }
  | {
      event: "tool_finished";
      call_id: string;
      tool: string;
      success: boolean;
      error_type: ErrorType;
      execution_time_ms: number;
      result: ToolResult;
    }
  | {
      event: "context_trimmed";
      step: number;
      messages_dropped: number;
      /**
       * Tool results cut (in what the model was shown) because, with nothing older left to
       * drop, the conversation still did not fit.
       */
      results_cut: number;
    }
  /**
   * The last step filled most of the context: the results of earlier turns' calls were
   * shortened to one line each before this step (the full results stay in the transcript).
   */
  | {
      event: "context_compacted";
      step: number;
      results_shortened: number;
      /** Messages of earlier turns replaced by the summary the model wrote of them. */
      messages_summarised: number;
      summary?: string | null;
    }
  | {
      event: "turn_finished";
      reason: FinishedReason;
      text: string;
      steps: number;
      /** The reason in plain words. */
      explanation: string;
    }
  /**
   * Written into a transcript, last, when it reached its size limit: what followed was
   * not recorded.
   */
  | { event: "transcript_capped"; limit_bytes: number };

export interface ExportedTranscript {
  path: string;
  events: number;
}

/** Why a turn (the handling of one user message) ended. */
export type FinishedReason =
  | "cancelled"
  /** The model gave its final answer. */
  | "answer"
  /** The step limit was reached. */
  | "max_steps"
  /** The model made the same call again and again. */
  | "repetition"
  /** The model broke the protocol too many times in a row. */
  | "protocol_errors"
  /** The model backend failed. */
  | "error";

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

/** How a model load is going. */
export type LoadProgress =
  /** Reading the weights; `fraction` goes from 0 to 1. */
  | { stage: "reading"; fraction: number }
  /** Measuring when this model should call a tool (once per model; saved afterwards). */
  | { stage: "calibrating" }
  /** Reaching a model server and asking it which path tool calls take. */
  | { stage: "connecting" };

export interface Metadata {
  execution_time_ms: number;
  data_size_bytes: number;
  /** Milliseconds since the Unix epoch when the call finished. */
  timestamp: number;
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

/** What the user is asked to approve. */
export interface PermissionRequest {
  call_id: string;
  tool: string;
  args: unknown;
  reasoning: string | null;
  risk: Risk;
  /** Workspace-relative paths the call touches. */
  paths: string[];
  command: string | null;
  /** Why the policy asks. */
  rule: string;
  /** For writes: the diff of old and new content. */
  preview: unknown;
  /** What `preview` holds, as the tool declares it: a confirmation shows it by this kind. */
  preview_kind: PreviewKind;
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

/** A protocol problem found in a response. Fatal problems mean there is no call to run. */
export interface Problem {
  kind: ProblemKind;
  /** `parse_error` or `validation_failed`. */
  error_type: ErrorType;
  /** What is wrong, precisely (JSON error line and column, the missing field, …). */
  message: string;
  span: Span | null;
  /** True when this problem leaves no call to run. */
  fatal: boolean;
}

/** Why a problem is a problem. */
export type ProblemKind =
  /** An opening tag with no closing tag. */
  | "missing_closing_tag"
  /** The text between the tags is not valid JSON. */
  | "invalid_json"
  /** Valid JSON, but not an object with a tool name and arguments. */
  | "bad_call_shape"
  /** A second call after the first; only the first is taken. */
  | "extra_call"
  /** Text after the call; it is discarded. */
  | "trailing_text";

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
   * [`Written::report_into`]).
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
  | "exec";

export interface SavedFile {
  path: string;
  bytes_written: number;
  created: boolean;
}

/** What a grant covers, besides its tool. */
export type Scope =
  /** Every call of the tool. */
  | { kind: "tool" }
  /** One workspace-relative path. */
  | { kind: "path"; value: string }
  /** Workspace-relative paths matching a glob; `*` stays within one folder, `**` crosses. */
  | { kind: "glob"; value: string }
  /** One exact command line. */
  | { kind: "command"; value: string };

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
}

/** A byte range in the full model response. */
export interface Span {
  start: number;
  end: number;
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
}

export interface Tree {
  /** Workspace-relative file paths, sorted; folders are implied by the paths. */
  files: string[];
  /** Files found, including any beyond the limit. */
  total: number;
  truncated: boolean;
  /** Entries left out by .gitignore/.ignore or for being hidden. */
  skipped: number;
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

/** What the backend streams to the webview while it works. */
export type Update =
  /** A step of the agent loop or of a manual call. */
  | { type: "agent"; event: Event }
  /** The user must answer request `id` with `answer_confirmation`. */
  | { type: "confirm"; id: number; request: PermissionRequest };

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

/** The open folder, as the window shows it. */
export interface WorkspaceInfo {
  root: string;
  name: string;
  /** Set when the saved grants could not be read (they then grant nothing). */
  policy_warning: string | null;
  /** Where this session's events are saved. */
  transcript: string;
}
