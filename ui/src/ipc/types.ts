// The shapes the backend sends and accepts, mirroring the Rust types they are serialised from
// (lantern-core's Event, PermissionRequest, Answer, Grant, Checkpoint, ToolResult, ToolSpec;
// lantern-llama's ModelFacts and ProbeReport; the app's Startup, Settings and AppError).

export type ErrorType =
  | "none"
  | "not_found"
  | "validation_failed"
  | "permission_denied"
  | "io_error"
  | "parse_error"
  | "timeout"
  | "internal_error";

export type Dialect = "native" | "hermes" | "mistral" | "llama3" | "tool_tag";
export type Risk = "safe" | "read" | "write" | "exec";
export type ToolChoice = "auto" | "required" | "none";
export type FinishedReason =
  | "answer"
  | "max_steps"
  | "repetition"
  | "protocol_errors"
  | "cancelled"
  | "error";
export type AnswerKind = "once" | "session" | "always" | "deny";

/** A byte range (UTF-8) in a model response. */
export interface Span {
  start: number;
  end: number;
}

export interface Problem {
  kind: "missing_closing_tag" | "invalid_json" | "bad_call_shape" | "extra_call" | "trailing_text";
  error_type: ErrorType;
  message: string;
  span: Span | null;
  fatal: boolean;
}

export interface ToolResult {
  success: boolean;
  data: unknown;
  error_message: string | null;
  error_type: ErrorType;
  error_hint?: string;
  metadata: { execution_time_ms: number; data_size_bytes: number; timestamp: number };
}

export type AgentEvent =
  | { event: "turn_started"; message: string; model: string }
  | { event: "step_started"; step: number }
  | { event: "text_delta"; step: number; text: string }
  | {
      event: "response_finished";
      step: number;
      raw: string;
      constrained: boolean;
      call_confidence: number | null;
      tokens_evaluated: number | null;
      tokens_generated: number | null;
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
      raw: string;
      span: Span;
      response: string;
      problems: Problem[];
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
      decision: "allow" | "deny";
      answer: AnswerKind | null;
      rule: string;
      message?: string;
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
  | { event: "context_trimmed"; step: number; messages_dropped: number }
  | {
      event: "turn_finished";
      reason: FinishedReason;
      text: string;
      steps: number;
      explanation: string;
    }
  | { event: "transcript_capped"; limit_bytes: number };

/** What a write's confirmation shows: the diff of old and new content. */
/** One of the three versions of a refused undo (`lantern_core::checkpoint::Version`). */
export interface UndoVersion {
  exists: boolean;
  sha256: string | null;
  bytes: number | null;
  file: string | null;
}

/** Why an undo was refused: the file changed after the write (`UndoConflict`). */
export interface UndoConflict {
  checkpoint: string;
  path: string;
  before: UndoVersion;
  agent: UndoVersion;
  now: UndoVersion;
  /** From before to the assistant's version; null when not text or over 1 MiB. */
  agent_changes: string | null;
  /** From the assistant's version to now. */
  later_changes: string | null;
}

export interface WritePreview {
  path: string;
  created: boolean;
  lines_added: number;
  lines_removed: number;
  unified: string;
  old_content: string | null;
}

export interface PermissionRequest {
  call_id: string;
  tool: string;
  args: unknown;
  reasoning: string | null;
  risk: Risk;
  paths: string[];
  command: string | null;
  rule: string;
  preview: unknown;
}

export type Scope =
  | { kind: "tool" }
  | { kind: "path"; value: string }
  | { kind: "glob"; value: string }
  | { kind: "command"; value: string };

export type Answer =
  | { answer: "allow_once" }
  | { answer: "allow_session"; scope: Scope }
  | { answer: "allow_always"; scope: Scope }
  | { answer: "deny"; message: string | null };

/** What the backend streams while a message or a manual call runs. */
export type Update =
  | { type: "agent"; event: AgentEvent }
  | { type: "confirm"; id: number; request: PermissionRequest };

export interface Grant {
  id: string;
  tool: string;
  scope: Scope;
  effect: "allow" | "deny";
  lifetime: "session" | "always";
  message?: string;
}

export interface Checkpoint {
  id: string;
  path: string;
  before: string | null;
  after: string | null;
  origin: string;
  time_ms: number;
  undone: boolean;
}

export interface UndoOutcome {
  undone: string;
  path: string;
  action: "restored" | "deleted";
  checkpoint: string;
}

export interface ToolSpec {
  name: string;
  description: string;
  risk: Risk;
  input_schema: unknown;
  example: Record<string, unknown>;
}

export interface WorkspaceInfo {
  root: string;
  name: string;
  policy_warning: string | null;
  transcript: string;
}

export interface Settings {
  max_steps: number;
  grammar: boolean;
  temperature: number;
  context: number | null;
  tool_choice: ToolChoice;
}

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
  chat_template: string;
  load_seconds: number;
}

export interface ModelInfo {
  facts: ModelFacts;
  is_default: boolean;
}

/** How a model load is going: reading the weights, then calibrating the call decision. */
export type LoadProgress = { stage: "reading"; fraction: number } | { stage: "calibrating" };

export interface ModelList {
  models_dir: string;
  default_model: string;
  default_model_exists: boolean;
  models: { path: string; name: string; size_bytes: number }[];
}

export interface Calibration {
  threshold: number;
  /** Nats added to the score of a message the word-based rule marks; 0 when it adds nothing. */
  prior_weight: number;
  auc: number;
  probe_accuracy: number;
  trusted: boolean;
  seconds: number;
}

export interface ProbeReport {
  facts: ModelFacts;
  system_prompt_tokens: number;
  context: number;
  fits: boolean;
  calibration: { first_step: Calibration; follow_up: Calibration };
  tasks: {
    question: string;
    expected_tool: string | null;
    outcome: string;
    decision_right: boolean;
    valid_call: boolean | null;
    call_confidence: number | null;
    seconds: number;
  }[];
  prompt_tokens_per_second: number;
  generation_tokens_per_second: number;
  verdict: string;
}

export interface Startup {
  version: string;
  workspace: WorkspaceInfo | null;
  workspace_error: string | null;
  settings: Settings;
  model: ModelInfo | null;
  model_to_load: string;
  model_to_load_exists: boolean;
}

export interface Tree {
  files: string[];
  total: number;
  truncated: boolean;
  skipped: number;
}

export interface TextFile {
  path: string;
  content: string;
}

export interface SavedFile {
  path: string;
  bytes_written: number;
  created: boolean;
}

export interface ExportedTranscript {
  path: string;
  events: number;
}

export type ErrorCode =
  | "no_workspace"
  | "no_model"
  | "busy"
  | "not_found"
  | "invalid"
  | "permission_denied"
  | "io"
  | "model"
  | "internal";
