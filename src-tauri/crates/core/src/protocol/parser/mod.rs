//! Splits a model response into user text, at most one raw tool call, and problems.
//!
//! [`parse`] reads a whole response. [`TurnParser`] reads it while it streams: it hands back
//! the user text as soon as that text is certain, and says when a call is complete so the
//! caller can stop generating. Its final result is `parse` of the whole text, so streaming can
//! never change what a response means.
//!
//! Everything here works on bytes: every delimiter is ASCII, so a match always starts and ends
//! on a char boundary, and arbitrary UTF-8 in between is carried along untouched.

mod api;
mod bare;
mod openers;
mod read;
mod scan;
#[cfg(test)]
mod tests;

use super::markers::{
    HARMONY_CALL_END, HARMONY_MESSAGE, HARMONY_RECIPIENT, HARMONY_STARTS, LLAMA_OPEN, MISTRAL_ARGS,
    MISTRAL_OPEN, TAG_OPENERS,
};
use super::{Dialect, Problem, ProblemKind, RawCall, Span, Turn};
use crate::error::ErrorType;
use openers::{closer_tag, find_opener, past_fence, settle_fence, Opener, Probe, Search};
use read::{check_rest, read_call};

pub use api::with_api_calls;
use scan::{BodyScan, MistralScan};
use serde_json::{Map, Value};

/// Longest tool name accepted in `<function=NAME>`. Every variable part of an opener is
/// bounded so that the text `push` holds back as "maybe an opener" stays short; that keeps
/// streaming linear and the UI from stalling.
const MAX_LLAMA_NAME: usize = 64;

/// Longest Harmony header, from `<|start|>` or `<|channel|>` to `<|message|>`.
const MAX_HARMONY_HEADER: usize = 160;

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
        Thought::Closed { inner, end, after } => (Some(text[inner..end].trim()), after),
        // Unclosed: the whole response is thinking, and there is no reply.
        Thought::Open { inner } => (Some(text[inner..].trim()), text.len()),
        Thought::None => (None, 0),
    };
    let from = match final_header(text, from) {
        Probe::Match(end) => end,
        _ => from,
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
            text: without_end_marker(text_before.trim()).to_owned(),
            call,
            problems,
            thinking: thinking.map(str::to_owned),
            reply_start: from,
            called_through_api: false,
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

/// How a reasoning model's thinking opens a response, each with what closes it: `<think>`, and
/// Harmony's analysis channel (gpt-oss), with or without the `<|start|>` of its message.
const THINKING: [(&str, &str); 3] = [
    ("<think>", "</think>"),
    ("<|channel|>analysis<|message|>", "<|end|>"),
    (
        "<|start|>assistant<|channel|>analysis<|message|>",
        "<|end|>",
    ),
];

/// Harmony's header of the answer, which opens the reply after the thinking.
const FINAL_HEADERS: [&str; 2] = [
    "<|channel|>final<|message|>",
    "<|start|>assistant<|channel|>final<|message|>",
];

/// Harmony's ends of a message, which a backend may leave at the end of an answer.
const END_MARKERS: [&str; 2] = ["<|return|>", "<|end|>"];

/// Where a reasoning model's thinking sits in a response.
enum Thought {
    /// Thinking opens the response (after whitespace) and its closer starts at `end`;
    /// the reply starts `after` it.
    Closed {
        inner: usize,
        end: usize,
        after: usize,
    },
    /// Thinking opens the response and nothing closes it yet.
    Open {
        inner: usize,
    },
    None,
}

fn thinking_end(text: &str) -> Thought {
    let lead = text.len() - text.trim_start().len();
    let Some((open, close)) = THINKING
        .iter()
        .find(|(open, _)| text[lead..].starts_with(open))
    else {
        return Thought::None;
    };
    let inner = lead + open.len();
    match text[inner..].find(close) {
        Some(at) => Thought::Closed {
            inner,
            end: inner + at,
            after: inner + at + close.len(),
        },
        None => Thought::Open { inner },
    }
}

/// Whether the text from `from` (after whitespace) may still open with thinking.
fn may_open_thinking(rest: &str) -> bool {
    THINKING.iter().any(|(open, _)| open.starts_with(rest))
}

/// A Harmony answer header at `from` (after whitespace): where the answer starts after it.
fn final_header(text: &str, from: usize) -> Probe<usize> {
    let lead = from + (text[from..].len() - text[from..].trim_start().len());
    let rest = &text[lead..];
    for header in FINAL_HEADERS {
        if rest.starts_with(header) {
            return Probe::Match(lead + header.len());
        }
    }
    if FINAL_HEADERS.iter().any(|h| h.starts_with(rest)) {
        Probe::Partial
    } else {
        Probe::NoMatch
    }
}

/// Where text before `to` that ends with a Harmony end marker, whole or begun, stops being
/// certain: an answer is read without its end marker when nothing follows it.
fn before_end_marker(text: &str, to: usize) -> usize {
    let head = text[..to].trim_end();
    if let Some(end) = END_MARKERS.iter().find(|end| head.ends_with(*end)) {
        return head.len() - end.len();
    }
    let begun = END_MARKERS
        .iter()
        .flat_map(|end| (1..end.len()).map(move |k| &end[..k]))
        .filter(|part| text[..to].ends_with(*part))
        .map(str::len)
        .max()
        .unwrap_or(0);
    to - begun
}

fn without_end_marker(text: &str) -> &str {
    END_MARKERS
        .iter()
        .find_map(|end| text.strip_suffix(end))
        .map_or(text, str::trim_end)
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
            if may_open_thinking(self.buf.trim_start()) {
                return String::new();
            }
            self.stage = match thinking_end(&self.buf) {
                Thought::None => Stage::Reply { from: 0 },
                _ => Stage::Thinking,
            };
        }
        if let Stage::Thinking = self.stage {
            match thinking_end(&self.buf) {
                Thought::Closed { after, .. } => self.stage = Stage::Reply { from: after },
                _ => return String::new(),
            }
        }
        if let Stage::Reply { from } = self.stage {
            let from = match final_header(&self.buf, from) {
                Probe::Partial => return String::new(),
                Probe::Match(end) => end,
                Probe::NoMatch => from,
            };
            self.stage = Stage::Reply { from };
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
            let shown_to = before_end_marker(&self.buf, shown_to).max(settled);
            if let Stage::Text { .. } = next {
                self.stage = Stage::Text { settled: shown_to };
            } else {
                self.stage = next;
            }
            shown = self.buf[settled..shown_to].to_owned();
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
