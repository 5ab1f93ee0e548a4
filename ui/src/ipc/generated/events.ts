// Generated from the Rust types' JSON Schemas by src-tauri/src/ipc_types; do not edit.
// Regenerate: cd src-tauri && LANTERN_UPDATE_IPC_TYPES=1 cargo test -p lantern-app ipc_types
// What a turn streams: the agent's events, and the channels' updates.

import type { Effect, ErrorType, PreviewKind, Risk, ToolResult, ToolSource } from "./tools";

/** The user's answer to a confirmation, as recorded. */
export type AnswerKind = "once" | "session" | "always" | "deny";

/** A fact of the turn's results given beneath the answer. */
export interface AnswerNote {
  kind: NoteKind;
  /** The note as the user reads it. */
  text: string;
}

/** One thing the user attached. */
export interface Attachment {
  /** As the message wrote it, without the `@`. */
  mention: string;
  kind: AttachmentKind;
  /** The file it comes from, relative to the workspace. */
  path: string;
  /** The lines given (1-based, inclusive). */
  start_line: number;
  end_line: number;
  /** The text given to the model. */
  text: string;
  /** Whether the text was cut to [`MAX_ATTACHED_CHARS`]. */
  cut: boolean;
}

/** What a mention attached. */
export type AttachmentKind = "file" | "definition";

/** How a backend's model makes its tool calls. */
export type CallPath =
  /** It writes them as text, in the `<TOOL_CALL>` protocol the system prompt describes. */
  | "text"
  /**
   * The server returns them as structured tool calls of its API (OpenAI `tool_calls`), from
   * the tools the request declares; the system prompt then describes no protocol.
   */
  | "native";

/** How a call was spelled. */
export type Dialect =
  /**
   * `<TOOL_CALL>{"tool": …, "args": …, "reasoning": …}</TOOL_CALL>`: Lantern's own text
   * protocol. (Saved before it had this name, it was `native`, which now means a model's own
   * chat-template calls; such records still read.)
   */
  | "lantern"
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
  | "harmony"
  /** Not text: a call a server returned through its API's `tool_calls`. */
  | "api";

/**
 * The lines of a file that exists which a write would take out: what a small model's
 * rewrite loses when it writes only the line it meant to add, or an edit whose old text is
 * most of the file. A confirmation shows every such loss; one that [needs a
 * person](Self::needs_a_person) is asked about whatever the grants say and is never approved
 * by an automatic yes.
 */
export interface DroppedLines {
  /** The file, workspace-relative. */
  path: string;
  /** How many of its lines that are not blank the new content does not keep. */
  dropped: number;
  /** How many lines that are not blank it has. */
  of: number;
  /**
   * Of the dropped lines, how many the new content does not keep even changed: no new line
   * shares with it a start and an end that together make half of it. An edited value
   * keeps them (`PORT=8080` → `PORT=9090`); an entry written over (`coverage` → `*.tmp`)
   * does not.
   */
  lost: number;
  /**
   * The user's message asked to change or take out nothing that is there ("Add *.tmp to the
   * ignore list"), so every line of the file was asked to stay: a line lost outright is then
   * a loss nobody asked for.
   */
  asked_to_keep: boolean;
}

/** One step of a turn or a manual call, as the window, the CLI and transcripts see it. */
export type Event =
  | {
      event: "turn_started";
      message: string;
      model: string;
      /**
       * How the message was read, as one thing (`None` in a transcript from before it was
       * recorded).
       */
      form: Form | null;
    }
  /**
   * What the user attached to the message with `@` (a file, a definition), as the model is
   * given it, and the mentions that attached nothing.
   */
  | { event: "context_attached"; attachments: Attachment[]; problems: string[] }
  | { event: "step_started"; step: number }
  /** Settled text of the reply outside any call, as it streams. */
  | { event: "text_delta"; step: number; text: string }
  /** The model finished a reply (before it is acted on). */
  | {
      event: "response_finished";
      step: number;
      /**
       * The whole reply as it came. The one event that carries it: the step's call events
       * carry the call alone, and point into this text.
       */
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
      /**
       * Why the backend made this step a call or an answer ("call (the message names a file
       * of the workspace)"), when it decided (the local engine does).
       */
      decision?: string | null;
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
      /**
       * The call's exact text and where it sits in the step's reply (the `raw` of its
       * `response_finished`, which alone carries the whole reply); a server's own call: the
       * call as it came, and an empty span at the end of the reply.
       */
      raw: string;
      span: Span;
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
      /**
       * The refused call's text, when there was one; the whole reply is the `raw` of the
       * step's `response_finished`.
       */
      raw: string | null;
      /**
       * A call the server made through its API that was refused: the conversation keeps it
       * as a call, answered by the refusal, so that the server sees what it called.
       */
      server_call?: RefusedServerCall | null;
    }
  | {
      event: "permission_asked";
      call_id: string;
      tool: string;
      args: unknown;
      reasoning: string | null;
      rule: string;
      preview: unknown;
      /**
       * The files the call would write that the conversation never pointed at (see
       * [`crate::pointed`]), as the confirmation shows them.
       */
      unpointed?: string[];
      /**
       * The lines of existing files the call would lose (see
       * [`DroppedLines::loses_content`]), as the confirmation shows them.
       */
      drops?: DroppedLines[];
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
  /**
   * The answer began repeating itself and was ended: `text` is the answer without the
   * repeats (see [`crate::repeats`]), and what the turn finishes with.
   */
  | { event: "answer_cut"; step: number; text: string }
  /**
   * The answer named files by their names alone that the turn's results showed by their
   * paths: `text` is the answer with those paths (see [`crate::answer_paths`]), and what the
   * turn finishes with.
   */
  | { event: "answer_paths_given"; step: number; text: string; paths: PathGiven[] }
  /**
   * The answer leaves out what the turn's results say in answer to the question's form (a
   * listing's count, where a name is defined): `text` is the answer followed by `notes`,
   * in Lantern's words (see [`crate::answer_notes`]).
   */
  | { event: "answer_noted"; step: number; text: string; notes: AnswerNote[] }
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

/**
 * What a message asks for, read as one thing: the first of these its words show, in this
 * order. A message that asks for a change is a change whatever else it asks; a question that
 * is none of the project's is chat.
 */
export type Form =
  /** A change to the project, or a command to run ([`Question::asks_for_a_change`]). */
  | "change"
  /** Where something is ([`Question::asks_where`]). */
  | "where"
  /** How many files there are ([`Question::asks_how_many_files`]). */
  | "how_many_files"
  /**
   * What something does or is for, or how it works: a word of [`EXPLAINING_WORDS`], or
   * "what does … do" ("What does the parse() step do to each line?").
   */
  | "explain"
  /**
   * A fact of the project: a question that points at it, names a file, or sounds about it
   * ([`Question::sounds_about_the_project`]).
   */
  | "look_up"
  /** Anything else: a question a model answers from what it knows. */
  | "chat";

/** How a model load is going. */
export type LoadProgress =
  /** Reading the weights; `fraction` goes from 0 to 1. */
  | { stage: "reading"; fraction: number }
  /** Measuring when this model should call a tool (once per model; saved afterwards). */
  | { stage: "calibrating" }
  /** Reaching a model server and asking it which path tool calls take. */
  | { stage: "connecting" };

/** What a note gives. */
export type NoteKind =
  /** How many files the turn's last listing found. */
  | "count"
  /** Where the turn's searches show a name of the question defined. */
  | "definition";

/** A file name of the answer and the path it was given as. */
export interface PathGiven {
  /** As the model wrote it (`Comparator.js`). */
  name: string;
  /** The file of the workspace it names (`classes/comparator.js`). */
  path: string;
}

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
  /**
   * Files the call would write that no message of the user named and no tool result
   * showed: the model chose them on its own. A confirmation says so plainly, and a fixed
   * answer does not approve such a call.
   */
  unpointed: string[];
  /**
   * The lines of existing files the write would take out without quoting them (a whole
   * file rewritten): a confirmation says so plainly, and a fixed answer does not approve
   * a call that drops most of a file.
   */
  drops: DroppedLines[];
  /** For a tool of an MCP server: which server, and how it runs. */
  source?: ToolSource | null;
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
 * A call a server made through its API (`tool_calls`) that was refused before it ran: an
 * unknown tool, or arguments its schema does not take.
 */
export interface RefusedServerCall {
  /** The id the conversation gives the call: the server's own when it gave one. */
  call_id: string;
  tool: string;
  /**
   * The arguments as the server sent them (always a JSON object: arguments that are not
   * one cannot be sent back as a call, and such a call is kept as text).
   */
  args: unknown;
}

/** A byte range in the full model response. */
export interface Span {
  start: number;
  end: number;
}

/** What the backend streams to the webview while it works. */
export type Update =
  /** A step of the agent loop or of a manual call. */
  | { type: "agent"; event: Event }
  /** The user must answer request `id` with `answer_confirmation`. */
  | { type: "confirm"; id: number; request: PermissionRequest };
