//! Everything the agent loop does is an [`Event`]. The UI and the CLI render the same events;
//! a transcript is these events as JSON lines, and can be loaded back for replay.

use crate::error::ErrorType;
use crate::model::CallPath;
use crate::policy::{Decision, Effect};
use crate::protocol::{Dialect, Problem, Span};
use crate::tool_result::ToolResult;
use crate::tools::DroppedLines;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::{BufRead, Write};
use std::path::Path;

/// A call a server made through its API (`tool_calls`) that was refused before it ran: an
/// unknown tool, or arguments its schema does not take.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RefusedServerCall {
    /// The id the conversation gives the call: the server's own when it gave one.
    pub call_id: String,
    pub tool: String,
    /// The arguments as the server sent them (always a JSON object: arguments that are not
    /// one cannot be sent back as a call, and such a call is kept as text).
    pub args: Value,
}

/// Why a turn (the handling of one user message) ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FinishedReason {
    /// The model gave its final answer.
    Answer,
    /// The step limit was reached.
    MaxSteps,
    /// The model made the same call again and again.
    Repetition,
    /// The model broke the protocol too many times in a row.
    ProtocolErrors,
    Cancelled,
    /// The model backend failed.
    Error,
}

/// Why a turn the model ended with a reply has no answer to show: the reply held no text (it
/// ended at once, or repeated nothing but blank lines until it was ended). Said in place of
/// "answered", so that the user is never left with silence.
pub const NO_ANSWER: &str =
    "The model gave no answer: its reply held no text. Ask again, perhaps in other words.";

impl FinishedReason {
    /// The reason in plain words, for people.
    pub fn explain(self, limit: usize) -> String {
        match self {
            FinishedReason::Answer => "The assistant answered.".to_string(),
            FinishedReason::MaxSteps => {
                format!("Stopped after {limit} steps without a final answer.")
            }
            FinishedReason::Repetition => {
                format!("Stopped: the model made the same call {limit} times in a row.")
            }
            FinishedReason::ProtocolErrors => {
                format!("Stopped: the model wrote {limit} invalid tool calls in a row.")
            }
            FinishedReason::Cancelled => "Stopped by the user.".to_string(),
            FinishedReason::Error => "Stopped: the model failed.".to_string(),
        }
    }
}

/// The user's answer to a confirmation, as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnswerKind {
    Once,
    Session,
    Always,
    Deny,
}

/// One step of a turn or a manual call, as the window, the CLI and transcripts see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    TurnStarted {
        message: String,
        model: String,
        /// How the message was read, as one thing (`None` in a transcript from before it was
        /// recorded).
        #[serde(default)]
        form: Option<crate::question::Form>,
    },
    /// What the user attached to the message with `@` (a file, a definition), as the model is
    /// given it, and the mentions that attached nothing.
    ContextAttached {
        attachments: Vec<crate::attachments::Attachment>,
        problems: Vec<String>,
    },
    StepStarted {
        step: usize,
    },
    /// Settled text of the reply outside any call, as it streams.
    TextDelta {
        step: usize,
        text: String,
    },
    /// The model finished a reply (before it is acted on).
    ResponseFinished {
        step: usize,
        /// The whole reply as it came. The one event that carries it: the step's call events
        /// carry the call alone, and point into this text.
        raw: String,
        constrained: bool,
        call_confidence: Option<f64>,
        tokens_evaluated: Option<usize>,
        tokens_generated: Option<usize>,
        /// Tokens the model's context holds after this step (prompt and reply), and at most:
        /// what the context meter shows.
        context_used: Option<usize>,
        context_size: Option<usize>,
        /// The native tool-call pieces the server streamed, raw, when the call came that way.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        native_deltas: Vec<Value>,
        /// A reasoning model's thinking, shown apart (collapsed) and never read as a reply.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thinking: Option<String>,
        /// Why the backend made this step a call or an answer ("call (the message names a file
        /// of the workspace)"), when it decided (the local engine does).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decision: Option<String>,
    },
    CallParsed {
        step: usize,
        call_id: String,
        tool: String,
        args: Value,
        reasoning: Option<String>,
        dialect: Dialect,
        constrained: bool,
        call_confidence: Option<f64>,
        /// The call's exact text and where it sits in the step's reply (the `raw` of its
        /// `response_finished`, which alone carries the whole reply); a server's own call: the
        /// call as it came, and an empty span at the end of the reply.
        raw: String,
        span: Span,
        /// Non-fatal problems (a second call, text after the call: both discarded).
        problems: Vec<Problem>,
        /// Whether the call came as text or as a structured call of the server's API.
        #[serde(default)]
        via: CallPath,
    },
    CallRejected {
        step: usize,
        error_type: ErrorType,
        message: String,
        feedback: String,
        /// The refused call's text, when there was one; the whole reply is the `raw` of the
        /// step's `response_finished`.
        raw: Option<String>,
        /// A call the server made through its API that was refused: the conversation keeps it
        /// as a call, answered by the refusal, so that the server sees what it called.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        server_call: Option<RefusedServerCall>,
    },
    PermissionAsked {
        call_id: String,
        tool: String,
        args: Value,
        reasoning: Option<String>,
        rule: String,
        preview: Option<Value>,
        /// The files the call would write that the conversation never pointed at (see
        /// [`crate::pointed`]), as the confirmation shows them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        unpointed: Vec<String>,
        /// The lines of existing files the call would lose (see
        /// [`DroppedLines::loses_content`]), as the confirmation shows them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        drops: Vec<DroppedLines>,
    },
    PermissionAnswered {
        call_id: String,
        /// What the policy, or the user it asked, decided.
        decision: Effect,
        /// How the user answered, when asked; `None` when the policy decided alone.
        answer: Option<AnswerKind>,
        /// The rule or grant that decided.
        rule: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    ToolStarted {
        call_id: String,
        tool: String,
        args: Value,
    },
    ToolFinished {
        call_id: String,
        tool: String,
        success: bool,
        error_type: ErrorType,
        execution_time_ms: u64,
        result: ToolResult,
    },
    ContextTrimmed {
        step: usize,
        messages_dropped: usize,
        /// Tool results cut (in what the model was shown) because, with nothing older left to
        /// drop, the conversation still did not fit.
        #[serde(default)]
        results_cut: usize,
    },
    /// The last step filled most of the context: the results of earlier turns' calls were
    /// shortened to one line each before this step (the full results stay in the transcript).
    ContextCompacted {
        step: usize,
        results_shortened: usize,
        /// Messages of earlier turns replaced by the summary the model wrote of them.
        #[serde(default)]
        messages_summarised: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
    },
    /// The answer began repeating itself and was ended: `text` is the answer without the
    /// repeats (see [`crate::repeats`]), and what the turn finishes with.
    AnswerCut {
        step: usize,
        text: String,
    },
    /// The answer named files by their names alone that the turn's results showed by their
    /// paths: `text` is the answer with those paths (see [`crate::answer_paths`]), and what the
    /// turn finishes with.
    AnswerPathsGiven {
        step: usize,
        text: String,
        paths: Vec<crate::answer_paths::PathGiven>,
    },
    /// The answer leaves out what the turn's results say in answer to the question's form (a
    /// listing's count, where a name is defined): `text` is the answer followed by `notes`,
    /// in Lantern's words (see [`crate::answer_notes`]).
    AnswerNoted {
        step: usize,
        text: String,
        notes: Vec<crate::answer_notes::AnswerNote>,
    },
    TurnFinished {
        reason: FinishedReason,
        text: String,
        steps: usize,
        /// The reason in plain words.
        explanation: String,
    },
    /// Written into a transcript, last, when it reached its size limit: what followed was
    /// not recorded.
    TranscriptCapped {
        limit_bytes: u64,
    },
}

impl Event {
    /// The decision of the policy as an event field value.
    pub fn decision_word(decision: &Decision) -> &'static str {
        match decision {
            Decision::Allow { .. } => "allow",
            Decision::Deny { .. } => "deny",
            Decision::Ask { .. } => "ask",
        }
    }
}

/// The largest a transcript grows; past it one `transcript_capped` event ends it.
pub const MAX_TRANSCRIPT_BYTES: u64 = 64 * 1024 * 1024;

/// Writes events as JSON lines. Consecutive text deltas of one step are written as one
/// event (a reply streamed a character at a time is one line, not one per character), and the
/// file stops growing at its size limit with a notice.
pub struct TranscriptWriter {
    out: std::io::BufWriter<std::fs::File>,
    /// Text deltas not written yet: their step and text.
    pending: Option<(usize, String)>,
    written: u64,
    limit: u64,
    capped: bool,
}

impl TranscriptWriter {
    pub fn create(path: &Path) -> std::io::Result<Self> {
        Self::with_limit(path, MAX_TRANSCRIPT_BYTES)
    }

    /// A writer whose file stops at `limit` bytes.
    pub fn with_limit(path: &Path, limit: u64) -> std::io::Result<Self> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        Ok(TranscriptWriter {
            out: std::io::BufWriter::new(std::fs::File::create(path)?),
            pending: None,
            written: 0,
            limit,
            capped: false,
        })
    }

    /// Appends one event. Every event but a text delta is written and flushed at once (with
    /// the text before it), so a crash loses at most the reply being streamed.
    pub fn write(&mut self, event: &Event) -> std::io::Result<()> {
        if let Event::TextDelta { step, text } = event {
            match &mut self.pending {
                Some((s, pending)) if s == step && (pending.len() as u64) < self.limit => {
                    pending.push_str(text)
                }
                _ => {
                    self.flush_text()?;
                    self.pending = Some((*step, text.clone()));
                }
            }
            return Ok(());
        }
        self.flush_text()?;
        self.append(event)
    }

    /// Writes the text deltas held back, as one event.
    pub fn flush_text(&mut self) -> std::io::Result<()> {
        match self.pending.take() {
            Some((step, text)) => self.append(&Event::TextDelta { step, text }),
            None => Ok(()),
        }
    }

    fn append(&mut self, event: &Event) -> std::io::Result<()> {
        if self.capped {
            return Ok(());
        }
        let mut line = serde_json::to_vec(event)?;
        line.push(b'\n');
        if self.written + line.len() as u64 > self.limit {
            self.capped = true;
            line = serde_json::to_vec(&Event::TranscriptCapped {
                limit_bytes: self.limit,
            })?;
            line.push(b'\n');
        }
        self.out.write_all(&line)?;
        self.written += line.len() as u64;
        self.out.flush()
    }
}

impl Drop for TranscriptWriter {
    fn drop(&mut self) {
        let _ = self.flush_text();
    }
}

/// Reads a transcript back. A line that is not an event (torn by a crash, or from a newer
/// version) is reported by its line number rather than failing the whole load.
pub fn load_transcript(path: &Path) -> std::io::Result<(Vec<Event>, Vec<usize>)> {
    let file = std::io::BufReader::new(std::fs::File::open(path)?);
    let mut events = Vec::new();
    let mut bad = Vec::new();
    for (i, line) in file.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(&line) {
            Ok(e) => events.push(e),
            Err(_) => bad.push(i + 1),
        }
    }
    Ok((events, bad))
}
