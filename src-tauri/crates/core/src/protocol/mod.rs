//! The `<TOOL_CALL>` text protocol: what the model writes and what it is told back.
//!
//! A model response is plain text. [`TurnParser`] reads it (streamed, one chunk at a time, or
//! whole with [`parse`]) and splits it into the text meant for the user, at most one raw tool
//! call, and a list of [`Problem`]s. Parsing never fails: bad model output is data.
//!
//! [`interpret`] then checks the raw call against the tool registry (known tool, arguments that
//! match its JSON Schema) and turns the whole turn into one [`Outcome`]: plain text (the final
//! answer), a valid call, or an invalid one with the `TOOL_ERROR: …` feedback the model reads.
//!
//! Besides the native form
//!
//! ```text
//! <TOOL_CALL>
//! {"tool": "read_file", "args": {"path": "package.json"}, "reasoning": "Need the version"}
//! </TOOL_CALL>
//! ```
//!
//! the parser recognises the dialects small models emit anyway (see [`Dialect`]) and normalises
//! them to the same call, recording which one was used.

mod feedback;
pub mod markers;
pub mod native;
mod parser;

pub use feedback::interpret;
pub use markers::{CLOSE_TAG, OPEN_TAG, STOP_SEQUENCES};
pub use parser::{parse, with_api_calls, TurnParser};

use crate::error::ErrorType;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a call was spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// `<TOOL_CALL>{"tool": …, "args": …, "reasoning": …}</TOOL_CALL>`: Lantern's own text
    /// protocol. (Saved before it had this name, it was `native`, which now means a model's own
    /// chat-template calls; such records still read.)
    #[serde(alias = "native")]
    Lantern,
    /// Qwen / Hermes: `<tool_call>{"name": …, "arguments": …}</tool_call>`
    Hermes,
    /// Mistral: `[TOOL_CALLS]name[ARGS]{…}` or `[TOOL_CALLS][{"name": …, "arguments": …}]`
    Mistral,
    /// Llama 3: `<function=name>{…}</function>`
    Llama3,
    /// `<tool>{"name": …, "params": …}</tool>`
    ToolTag,
    /// A bare `{"name": …, "arguments": …}` object as the whole reply.
    BareJson,
    /// `[name(key="value")]` (Llama 3.2, LFM2) as the whole reply.
    Pythonic,
    /// Harmony (gpt-oss): `<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>`
    Harmony,
    /// Not text: a call a server returned through its API's `tool_calls`.
    Api,
}

impl Dialect {
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Lantern => "lantern",
            Dialect::Hermes => "hermes",
            Dialect::Mistral => "mistral",
            Dialect::Llama3 => "llama3",
            Dialect::ToolTag => "tool_tag",
            Dialect::BareJson => "bare_json",
            Dialect::Pythonic => "pythonic",
            Dialect::Harmony => "harmony",
            Dialect::Api => "api",
        }
    }
}

/// A byte range in the full model response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// A call as the model wrote it, normalised but not yet checked against the tool registry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawCall {
    /// The tool name exactly as written (case preserved: names are case-sensitive).
    pub tool: String,
    /// The arguments object. `args` given as a JSON string holding an object is decoded here.
    pub args: Value,
    pub reasoning: Option<String>,
    pub dialect: Dialect,
    /// The exact text of the call, tags included; for a server's own call (`Dialect::Api`),
    /// the call as it came (`{"name": …, "arguments": …}`), which is not in the response.
    pub raw: String,
    /// Where `raw` sits in the full response; for a server's own call, an empty span at the
    /// response's end.
    pub span: Span,
}

/// Why a problem is a problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// An opening tag with no closing tag.
    MissingClosingTag,
    /// The text between the tags is not valid JSON.
    InvalidJson,
    /// Valid JSON, but not an object with a tool name and arguments.
    BadCallShape,
    /// A second call after the first; only the first is taken.
    ExtraCall,
    /// Text after the call; it is discarded.
    TrailingText,
}

/// A protocol problem found in a response. Fatal problems mean there is no call to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Problem {
    pub kind: ProblemKind,
    /// `parse_error` or `validation_failed`.
    pub error_type: ErrorType,
    /// What is wrong, precisely (JSON error line and column, the missing field, …).
    pub message: String,
    pub span: Option<Span>,
    /// True when this problem leaves no call to run.
    pub fatal: bool,
}

/// Everything the parser made of one response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Turn {
    /// The full response as received.
    pub raw: String,
    /// The text meant for the user: everything outside the call (and outside any code fence
    /// wrapped around it), trimmed. Text after the call is not included.
    pub text: String,
    pub call: Option<RawCall>,
    pub problems: Vec<Problem>,
    /// What a reasoning model thought first, between `<think>` and `</think>` at the start of
    /// the response: never read as a call or as text for the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// Where the reply after the thinking starts (0 when there is none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reply_start: usize,
    /// The call read (or refused) is one the server made through its API, beside the text.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub called_through_api: bool,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Turn {
    /// The response from the end of its thinking to `end`: what the history keeps of it, as
    /// reasoning models' templates drop earlier thinking.
    pub fn reply_until(&self, end: usize) -> &str {
        self.raw[self.reply_start..end].trim()
    }

    /// The first fatal problem, if any.
    pub fn fatal_problem(&self) -> Option<&Problem> {
        self.problems.iter().find(|p| p.fatal)
    }
}

/// What a response means, after parsing and validation. Serialised as `lantern parse` prints it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// No call: the response is the final answer.
    Text { text: String },
    /// A valid call to run.
    ToolCall(ParsedCall),
    /// An attempted call that cannot be run.
    Invalid(InvalidCall),
}

/// A valid call to run: the call a response made, which the registry takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParsedCall {
    #[serde(flatten)]
    pub call: RawCall,
    /// The response's text meant for the user: what it said before the call, outside any fence
    /// around it (see [`Turn::text`]).
    pub text: String,
    /// The problems that do not stop the call (extra calls, trailing text).
    pub problems: Vec<Problem>,
}

/// An attempted call that cannot be run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InvalidCall {
    pub error_type: ErrorType,
    pub message: String,
    /// What the model is told.
    pub feedback: String,
    pub dialect: Option<Dialect>,
    pub raw: Option<String>,
    pub problems: Vec<Problem>,
}

#[cfg(test)]
mod tests {
    use super::Dialect;

    #[test]
    fn the_tool_call_form_is_recorded_as_lantern_and_its_older_name_still_reads() {
        assert_eq!(
            serde_json::to_string(&Dialect::Lantern).unwrap(),
            "\"lantern\""
        );
        assert_eq!(Dialect::Lantern.as_str(), "lantern");
        let saved: Dialect = serde_json::from_str("\"native\"").unwrap();
        assert_eq!(saved, Dialect::Lantern);
    }
}
