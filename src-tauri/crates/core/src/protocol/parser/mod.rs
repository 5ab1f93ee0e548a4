//! Splits a model response into user text, at most one raw tool call, and problems.
//!
//! [`parse`] reads a whole response. [`TurnParser`] reads it while it streams: it hands back
//! the user text as soon as that text is certain, and says when a call is complete so the
//! caller can stop generating. Its final result is `parse` of the whole text, so streaming can
//! never change what a response means.
//!
//! Everything here works on bytes: every delimiter is ASCII, so a match always starts and ends
//! on a char boundary, and arbitrary UTF-8 in between is carried along untouched.

mod bare;
mod openers;
mod read;
mod scan;
#[cfg(test)]
mod tests;

use super::markers::{LLAMA_OPEN, MISTRAL_ARGS, MISTRAL_OPEN, TAG_OPENERS};
use super::{Dialect, Problem, ProblemKind, RawCall, Span, Turn};
use crate::error::ErrorType;
use openers::{closer_tag, find_opener, past_fence, settle_fence, Opener, Search};
use read::{check_rest, read_call};
use scan::{BodyScan, MistralScan};
use serde_json::{Map, Value};

/// Longest tool name accepted in `<function=NAME>`. Every variable part of an opener is
/// bounded so that the text `push` holds back as "maybe an opener" stays short; that keeps
/// streaming linear and the UI from stalling.
const MAX_LLAMA_NAME: usize = 64;

/// Most whitespace accepted before the `>` of a tag (`<TOOL_CALL >`).
const MAX_TAG_SPACE: usize = 16;

/// Longest info string after a code fence (```json).
const MAX_FENCE_LANG: usize = 20;

/// Most whitespace accepted between a code fence and the opener it wraps.
const MAX_FENCE_GAP: usize = 40;

/// How many characters of context a message quotes on each side of a JSON error.
const EXCERPT_CHARS: usize = 20;

/// How many characters of discarded trailing text a message quotes.
const TRAILING_EXCERPT_CHARS: usize = 60;

const FENCE: &str = "```";

/// Field names small models use for the tool name and for the arguments, in order of trust.
const TOOL_KEYS: [&str; 2] = ["tool", "name"];

const ARG_KEYS: [&str; 4] = ["args", "arguments", "params", "parameters"];

/// Reads a whole response. Never fails: whatever is wrong ends up in [`Turn::problems`].
pub fn parse(text: &str) -> Turn {
    let (thinking, from) = match thinking_end(text) {
        Thought::Closed { inner, end } => (Some(text[inner..end].trim()), end + THINK_CLOSE.len()),
        // Unclosed: the whole response is thinking, and there is no reply.
        Thought::Open { inner } => (Some(text[inner..].trim()), text.len()),
        Thought::None => (None, 0),
    };
    let turn = |text_before: &str, call: Option<(read::CallRead, usize)>| {
        let mut problems = Vec::new();
        let call = call.and_then(|(first, rest)| {
            problems.extend(first.extra);
            problems.extend(check_rest(text, rest));
            first
                .call
                .map_err(|problem| problems.insert(0, problem))
                .ok()
        });
        Turn {
            raw: text.to_owned(),
            text: text_before.trim().to_owned(),
            call,
            problems,
            thinking: thinking.map(str::to_owned),
            reply_start: from,
        }
    };
    if let bare::Start::Call(first) = bare::call_at_start(text, from, true) {
        let rest = first.end;
        return turn("", Some((first, rest)));
    }
    let Search::Found(opener) = find_opener(text, from, true) else {
        return turn(&text[from..], None);
    };
    let opener = settle_fence(text, opener);
    let first = read_call(text, &opener, true);
    let rest = past_fence(text, first.end, opener.fenced);
    turn(&text[from..opener.start], Some((first, rest)))
}

const THINK_OPEN: &str = "<think>";
const THINK_CLOSE: &str = "</think>";

/// Where a reasoning model's thinking sits in a response.
enum Thought {
    /// `<think>` opens the response (after whitespace) and `</think>` closes it at `end`.
    Closed {
        inner: usize,
        end: usize,
    },
    /// `<think>` opens the response and nothing closes it yet.
    Open {
        inner: usize,
    },
    None,
}

fn thinking_end(text: &str) -> Thought {
    let lead = text.len() - text.trim_start().len();
    if !text[lead..].starts_with(THINK_OPEN) {
        return Thought::None;
    }
    let inner = lead + THINK_OPEN.len();
    match text[inner..].find(THINK_CLOSE) {
        Some(at) => Thought::Closed {
            inner,
            end: inner + at,
        },
        None => Thought::Open { inner },
    }
}

/// Reads a response as it streams in.
///
/// ```
/// # use lantern_core::protocol::TurnParser;
/// let mut parser = TurnParser::new();
/// let mut shown = parser.push("Let me look.\n<TOOL_CA");
/// shown += &parser.push("LL>{\"tool\": \"read_file\", \"args\": {}}</TOOL_CALL>");
/// assert_eq!(shown, "Let me look.\n");
/// assert!(parser.call_complete());
/// assert_eq!(parser.finish().call.unwrap().tool, "read_file");
/// ```
#[derive(Debug, Clone)]
pub struct TurnParser {
    buf: String,
    stage: Stage,
}

#[derive(Debug, Clone, Copy)]
enum Stage {
    /// At the start, while the response may still open with `<think>`.
    Opening,
    /// Inside the thinking that opened the response; nothing is shown.
    Thinking,
    /// At the start of the reply (after any thinking), while it may be a tagless call.
    Reply { from: usize },
    /// The reply is a tagless call, complete.
    Bare,
    /// No opener yet; `push` has returned everything before `settled`.
    Text { settled: usize },
    /// Inside a tagged call, looking for its closing tag.
    Tagged {
        closer: &'static str,
        scan: BodyScan,
        complete: bool,
    },
    /// Inside a Mistral call, looking for the end of its JSON value.
    Mistral(MistralScan),
}

impl Default for TurnParser {
    fn default() -> Self {
        Self::new()
    }
}

impl TurnParser {
    pub fn new() -> Self {
        TurnParser {
            buf: String::new(),
            stage: Stage::Opening,
        }
    }

    /// Feeds the next chunk of model output. Returns the user text that became certain with
    /// it: text outside any call that cannot be the start of an opener (or of a code fence
    /// around one). Once an opener is seen, nothing more is returned.
    pub fn push(&mut self, chunk: &str) -> String {
        self.buf.push_str(chunk);
        if let Stage::Opening = self.stage {
            let start = self.buf.trim_start();
            if THINK_OPEN.starts_with(start) {
                return String::new();
            }
            self.stage = if start.starts_with(THINK_OPEN) {
                Stage::Thinking
            } else {
                Stage::Reply { from: 0 }
            };
        }
        if let Stage::Thinking = self.stage {
            match thinking_end(&self.buf) {
                Thought::Closed { end, .. } => {
                    self.stage = Stage::Reply {
                        from: end + THINK_CLOSE.len(),
                    }
                }
                _ => return String::new(),
            }
        }
        if let Stage::Reply { from } = self.stage {
            match bare::call_at_start(&self.buf, from, false) {
                bare::Start::Undecided => return String::new(),
                bare::Start::Call(_) => {
                    self.stage = Stage::Bare;
                    return String::new();
                }
                bare::Start::No => self.stage = Stage::Text { settled: from },
            }
        }
        let mut shown = String::new();
        if let Stage::Text { settled } = self.stage {
            let (shown_to, next) = match find_opener(&self.buf, settled, false) {
                Search::NotFound => (
                    self.buf.len(),
                    Stage::Text {
                        settled: self.buf.len(),
                    },
                ),
                Search::Pending(at) => (at, Stage::Text { settled: at }),
                Search::Found(opener) => {
                    let opener = settle_fence(&self.buf, opener);
                    (opener.start, Stage::in_call(&opener))
                }
            };
            shown = self.buf[settled..shown_to].to_owned();
            self.stage = next;
        }
        match &mut self.stage {
            Stage::Opening | Stage::Thinking | Stage::Reply { .. } | Stage::Bare => {}
            Stage::Text { .. } => {}
            Stage::Tagged {
                closer,
                scan,
                complete,
            } => {
                if !*complete {
                    *complete = scan.advance(&self.buf, closer, false).is_some();
                }
            }
            Stage::Mistral(scan) => scan.advance(&self.buf),
        }
        shown
    }

    /// True once the text holds a complete call: its closing tag was seen outside JSON strings
    /// (or, for Mistral, its JSON value closed), or a second opener cut a broken call short.
    /// More text cannot change the call then, so generation can stop.
    pub fn call_complete(&self) -> bool {
        match &self.stage {
            Stage::Opening | Stage::Thinking | Stage::Reply { .. } | Stage::Text { .. } => false,
            Stage::Bare => true,
            Stage::Tagged { complete, .. } => *complete,
            Stage::Mistral(scan) => scan.is_complete(),
        }
    }

    /// The final result: exactly [`parse`] of everything pushed.
    pub fn finish(self) -> Turn {
        parse(&self.buf)
    }
}

impl Stage {
    fn in_call(opener: &Opener) -> Stage {
        match closer_tag(opener.dialect) {
            Some(closer) => Stage::Tagged {
                closer,
                scan: BodyScan::new(opener.end, true),
                complete: false,
            },
            None => Stage::Mistral(MistralScan::new(opener.end)),
        }
    }
}
