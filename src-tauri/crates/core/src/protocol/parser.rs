//! Splits a model response into user text, at most one raw tool call, and problems.
//!
//! [`parse`] reads a whole response. [`TurnParser`] reads it while it streams: it hands back
//! the user text as soon as that text is certain, and says when a call is complete so the
//! caller can stop generating. Its final result is `parse` of the whole text, so streaming can
//! never change what a response means.
//!
//! Everything here works on bytes: every delimiter is ASCII, so a match always starts and ends
//! on a char boundary, and arbitrary UTF-8 in between is carried along untouched.

use super::{Dialect, Problem, ProblemKind, RawCall, Span, Turn};
use crate::error::ErrorType;
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
const MISTRAL_OPEN: &str = "[TOOL_CALLS]";
const MISTRAL_ARGS: &str = "[ARGS]";
const LLAMA_OPEN: &str = "<function=";

/// The tag dialects whose opener is a fixed word: the tag without its `>`.
const TAG_OPENERS: [(&str, Dialect); 3] = [
    ("<TOOL_CALL", Dialect::Native),
    ("<tool_call", Dialect::Hermes),
    ("<tool", Dialect::ToolTag),
];

/// Field names small models use for the tool name and for the arguments, in order of trust.
const TOOL_KEYS: [&str; 2] = ["tool", "name"];
const ARG_KEYS: [&str; 4] = ["args", "arguments", "params", "parameters"];

/// Reads a whole response. Never fails: whatever is wrong ends up in [`Turn::problems`].
pub fn parse(text: &str) -> Turn {
    let Search::Found(opener) = find_opener(text, 0, true) else {
        return Turn {
            raw: text.to_owned(),
            text: text.trim().to_owned(),
            call: None,
            problems: Vec::new(),
        };
    };
    let opener = settle_fence(text, opener);
    let first = read_call(text, &opener, true);
    let mut problems = Vec::new();
    let call = match first.call {
        Ok(call) => Some(call),
        Err(problem) => {
            problems.push(problem);
            None
        }
    };
    problems.extend(first.extra);
    problems.extend(check_rest(text, past_fence(text, first.end, opener.fenced)));
    Turn {
        raw: text.to_owned(),
        text: text[..opener.start].trim().to_owned(),
        call,
        problems,
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
            stage: Stage::Text { settled: 0 },
        }
    }

    /// Feeds the next chunk of model output. Returns the user text that became certain with
    /// it: text outside any call that cannot be the start of an opener (or of a code fence
    /// around one). Once an opener is seen, nothing more is returned.
    pub fn push(&mut self, chunk: &str) -> String {
        self.buf.push_str(chunk);
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
            Stage::Text { .. } => false,
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

// ---------------------------------------------------------------------------------------------
// Recognising tags

/// What the text at a position holds, as far as the text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe<T> {
    Match(T),
    /// The text ends while it still looks like the start of a match.
    Partial,
    NoMatch,
}

impl<T> Probe<T> {
    fn map<U>(self, f: impl FnOnce(T) -> U) -> Probe<U> {
        match self {
            Probe::Match(t) => Probe::Match(f(t)),
            Probe::Partial => Probe::Partial,
            Probe::NoMatch => Probe::NoMatch,
        }
    }
}

/// `lit` at the start of `s`; the length on a match.
fn literal(s: &[u8], lit: &str, ignore_case: bool) -> Probe<usize> {
    let lit = lit.as_bytes();
    let n = s.len().min(lit.len());
    let same = if ignore_case {
        s[..n].eq_ignore_ascii_case(&lit[..n])
    } else {
        s[..n] == lit[..n]
    };
    match (same, n == lit.len()) {
        (false, _) => Probe::NoMatch,
        (true, true) => Probe::Match(n),
        (true, false) => Probe::Partial,
    }
}

/// Optional whitespace and the `>` that ends a tag.
fn tag_end(s: &[u8]) -> Probe<usize> {
    for (i, &b) in s.iter().enumerate() {
        if b == b'>' {
            return Probe::Match(i + 1);
        }
        if i >= MAX_TAG_SPACE || !b.is_ascii_whitespace() {
            return Probe::NoMatch;
        }
    }
    Probe::Partial
}

/// A tag: `name` (which includes the `<` or `</`) then [`tag_end`].
fn tag(s: &[u8], name: &str, ignore_case: bool) -> Probe<usize> {
    match literal(s, name, ignore_case) {
        Probe::Match(n) => tag_end(&s[n..]).map(|m| n + m),
        other => other,
    }
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

fn is_fence_lang_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'.')
}

/// An opener tag at the start of `s`: its dialect and length.
fn opener_tag(s: &[u8]) -> Probe<(Dialect, usize)> {
    let forms = TAG_OPENERS
        .map(|(name, dialect)| (dialect, tag(s, name, false)))
        .into_iter()
        .chain([
            (Dialect::Llama3, llama_opener(s)),
            (Dialect::Mistral, literal(s, MISTRAL_OPEN, false)),
        ]);
    let mut partial = false;
    for (dialect, probe) in forms {
        match probe {
            Probe::Match(len) => return Probe::Match((dialect, len)),
            Probe::Partial => partial = true,
            Probe::NoMatch => {}
        }
    }
    if partial {
        Probe::Partial
    } else {
        Probe::NoMatch
    }
}

/// `<function=NAME>`.
fn llama_opener(s: &[u8]) -> Probe<usize> {
    let n = match literal(s, LLAMA_OPEN, false) {
        Probe::Match(n) => n,
        other => return other,
    };
    let rest = &s[n..];
    let name_len = rest
        .iter()
        .take(MAX_LLAMA_NAME + 1)
        .take_while(|b| is_name_byte(**b))
        .count();
    if name_len > MAX_LLAMA_NAME {
        Probe::NoMatch
    } else if name_len == rest.len() {
        Probe::Partial
    } else if name_len == 0 {
        Probe::NoMatch
    } else {
        tag_end(&rest[name_len..]).map(|m| n + name_len + m)
    }
}

/// A code fence (```` ``` ```` plus an optional info string) followed by an opener: the
/// opener's offset in `s`, its dialect and its length.
fn fenced_opener(s: &[u8]) -> Probe<(usize, Dialect, usize)> {
    let fence = match literal(s, FENCE, false) {
        Probe::Match(n) => n,
        Probe::Partial => return Probe::Partial,
        Probe::NoMatch => return Probe::NoMatch,
    };
    let lang = s[fence..]
        .iter()
        .take(MAX_FENCE_LANG + 1)
        .take_while(|b| is_fence_lang_byte(**b))
        .count();
    let gap = s[fence + lang..]
        .iter()
        .take(MAX_FENCE_GAP + 1)
        .take_while(|b| b.is_ascii_whitespace())
        .count();
    let offset = fence + lang + gap;
    if lang > MAX_FENCE_LANG || gap > MAX_FENCE_GAP {
        Probe::NoMatch
    } else if offset == s.len() {
        Probe::Partial
    } else {
        opener_tag(&s[offset..]).map(|(dialect, len)| (offset, dialect, len))
    }
}

/// An opener found in the text. Positions are byte offsets into the whole text.
#[derive(Debug, Clone, Copy)]
struct Opener {
    /// Where the call starts, including a code fence wrapped around it.
    start: usize,
    /// Where the tag itself starts.
    tag_start: usize,
    /// Just past the tag.
    end: usize,
    dialect: Dialect,
    /// Whether a code fence opens right before the tag (so one may close right after the call).
    fenced: bool,
}

/// An opener (fenced or not) starting exactly at `at`.
fn opener_at(text: &str, at: usize) -> Probe<Opener> {
    let s = &text.as_bytes()[at..];
    let found = match s.first() {
        Some(b'`') => fenced_opener(s),
        Some(b'<' | b'[') => opener_tag(s).map(|(dialect, len)| (0, dialect, len)),
        _ => Probe::NoMatch,
    };
    found.map(|(offset, dialect, len)| Opener {
        start: at,
        tag_start: at + offset,
        end: at + offset + len,
        dialect,
        fenced: offset > 0,
    })
}

enum Search {
    Found(Opener),
    /// Something at this position may become an opener once more text arrives.
    Pending(usize),
    NotFound,
}

/// The first opener at or after `from`. With `at_end` the text is complete, so a partial
/// opener at its end is just text.
fn find_opener(text: &str, from: usize, at_end: bool) -> Search {
    let bytes = text.as_bytes();
    let mut at = from;
    while let Some(skip) = bytes[at..]
        .iter()
        .position(|b| matches!(b, b'<' | b'[' | b'`'))
    {
        at += skip;
        match opener_at(text, at) {
            Probe::Match(opener) => return Search::Found(opener),
            Probe::Partial if !at_end => return Search::Pending(at),
            _ => at += 1,
        }
    }
    Search::NotFound
}

/// A fence right before the first opener is only wrapped around the call if it opens a block;
/// if it closes one (say, a code sample the model just showed), it belongs to the user text.
/// Fences are counted as lines starting with ```, which is how models write them.
fn settle_fence(text: &str, opener: Opener) -> Opener {
    if !opener.fenced {
        return opener;
    }
    let fences_before = text[..opener.start]
        .lines()
        .filter(|line| line.trim_start().starts_with(FENCE))
        .count();
    if fences_before % 2 == 0 {
        opener
    } else {
        Opener {
            start: opener.tag_start,
            fenced: false,
            ..opener
        }
    }
}

/// Just past the fence that closes a fenced call, or `end` when there is none.
fn past_fence(text: &str, end: usize, fenced: bool) -> usize {
    if !fenced {
        return end;
    }
    let after = skip_ws(text.as_bytes(), end);
    if text[after..].starts_with(FENCE) {
        after + FENCE.len()
    } else {
        end
    }
}

fn skip_ws(bytes: &[u8], from: usize) -> usize {
    from + bytes[from..]
        .iter()
        .take_while(|b| b.is_ascii_whitespace())
        .count()
}

/// The closing tag of a tag dialect, without its `>`. Mistral calls have none.
fn closer_tag(dialect: Dialect) -> Option<&'static str> {
    match dialect {
        Dialect::Native => Some("</TOOL_CALL"),
        Dialect::Hermes => Some("</tool_call"),
        Dialect::Llama3 => Some("</function"),
        Dialect::ToolTag => Some("</tool"),
        Dialect::Mistral => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Finding where a call ends

/// Walks the body of a tagged call looking for its closing tag outside JSON strings, so a
/// closing tag written inside a string argument (file content, say) is content. Resumable:
/// streaming calls `advance` again as text arrives.
#[derive(Debug, Clone, Copy)]
struct BodyScan {
    pos: usize,
    in_string: bool,
    escaped: bool,
    track_strings: bool,
}

enum BodyEnd {
    Closer {
        start: usize,
        end: usize,
    },
    /// Another opener (or the fence before it) came first: the call was never closed.
    NextOpener(usize),
}

impl BodyScan {
    fn new(pos: usize, track_strings: bool) -> Self {
        BodyScan {
            pos,
            in_string: false,
            escaped: false,
            track_strings,
        }
    }

    /// Scans on from where it stopped. `None` means the end was not found in the text so far.
    fn advance(&mut self, text: &str, closer: &str, at_end: bool) -> Option<BodyEnd> {
        let bytes = text.as_bytes();
        while self.pos < bytes.len() {
            let at = self.pos;
            let b = bytes[at];
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
            } else if b == b'"' {
                self.in_string = self.track_strings;
            } else if matches!(b, b'<' | b'[' | b'`') {
                let close = tag(&bytes[at..], closer, true);
                if let Probe::Match(len) = close {
                    return Some(BodyEnd::Closer {
                        start: at,
                        end: at + len,
                    });
                }
                let open = opener_at(text, at);
                if let Probe::Match(_) = open {
                    return Some(BodyEnd::NextOpener(at));
                }
                if !at_end && (close == Probe::Partial || matches!(open, Probe::Partial)) {
                    // Wait here for the rest of the tag.
                    return None;
                }
            }
            self.pos += 1;
        }
        None
    }
}

/// Follows a Mistral call while it streams, to tell when its JSON value has closed. Mirrors
/// the forms `read_mistral` accepts: `name[ARGS]{…}`, `name{…}`, `[…]` and `{…}`.
#[derive(Debug, Clone, Copy)]
struct MistralScan {
    pos: usize,
    state: MistralState,
}

#[derive(Debug, Clone, Copy)]
enum MistralState {
    Lead,
    Name,
    AfterName,
    /// This many bytes of `[ARGS]` seen.
    ArgsTag(usize),
    AfterArgs,
    InValue {
        depth: usize,
        in_string: bool,
        escaped: bool,
    },
    Complete,
    /// Not a form whose end can be seen early (a scalar value, or junk): wait for the stream
    /// to end on its own.
    Unknown,
}

impl MistralScan {
    fn new(pos: usize) -> Self {
        MistralScan {
            pos,
            state: MistralState::Lead,
        }
    }

    fn is_complete(&self) -> bool {
        matches!(self.state, MistralState::Complete)
    }

    fn advance(&mut self, text: &str) {
        use MistralState::*;
        let bytes = text.as_bytes();
        while self.pos < bytes.len() {
            let b = bytes[self.pos];
            let ws = b.is_ascii_whitespace();
            let opens_value = b == b'{' || b == b'[';
            let value = InValue {
                depth: 1,
                in_string: false,
                escaped: false,
            };
            self.state = match self.state {
                Complete | Unknown => return,
                Lead if ws => Lead,
                Lead if opens_value => value,
                Lead if is_name_byte(b) => Name,
                Name if is_name_byte(b) => Name,
                Name | AfterName if ws => AfterName,
                Name | AfterName if b == b'{' => value,
                Name | AfterName if b == b'[' => ArgsTag(1),
                ArgsTag(seen) if b == MISTRAL_ARGS.as_bytes()[seen] => {
                    if seen + 1 == MISTRAL_ARGS.len() {
                        AfterArgs
                    } else {
                        ArgsTag(seen + 1)
                    }
                }
                AfterArgs if ws => AfterArgs,
                AfterArgs if opens_value => value,
                InValue {
                    depth,
                    in_string,
                    escaped,
                } => json_step(depth, in_string, escaped, b),
                _ => Unknown,
            };
            self.pos += 1;
        }
    }
}

/// One byte of a JSON value whose nesting depth is being tracked.
fn json_step(depth: usize, in_string: bool, escaped: bool, b: u8) -> MistralState {
    let (depth, in_string, escaped) = match (in_string, escaped, b) {
        (true, true, _) => (depth, true, false),
        (true, false, b'\\') => (depth, true, true),
        (true, false, b'"') => (depth, false, false),
        (true, false, _) => (depth, true, false),
        (false, _, b'"') => (depth, true, false),
        (false, _, b'{' | b'[') => (depth + 1, false, false),
        (false, _, b'}' | b']') => (depth - 1, false, false),
        (false, _, _) => (depth, false, false),
    };
    if depth == 0 {
        MistralState::Complete
    } else {
        MistralState::InValue {
            depth,
            in_string,
            escaped,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Reading a call

struct CallRead {
    /// Just past the call: its closing tag, the end of its JSON value, or where it was cut off.
    end: usize,
    call: Result<RawCall, Problem>,
    /// Non-fatal problems inside the call itself (further entries of a Mistral list).
    extra: Vec<Problem>,
}

/// What is wrong with a call, before it is placed in the text.
type Failure = (ProblemKind, String);

struct Decoded {
    tool: String,
    args: Value,
    reasoning: Option<String>,
}

/// Reads the call that `opener` starts. `recover_hidden_closer`: see [`read_tagged`].
fn read_call(text: &str, opener: &Opener, recover_hidden_closer: bool) -> CallRead {
    match closer_tag(opener.dialect) {
        Some(closer) => read_tagged(text, opener, closer, recover_hidden_closer),
        None => read_mistral(text, opener),
    }
}

/// A tagged call. When the scan ends inside a string, an unbalanced quote probably hid the
/// closing tag; with `recover_hidden_closer` the first closing tag anywhere is taken instead,
/// so the model hears about its broken JSON rather than about a missing tag. (Only for the
/// first call: doing it for every extra call could make parsing quadratic.)
fn read_tagged(text: &str, opener: &Opener, closer: &str, recover_hidden_closer: bool) -> CallRead {
    let mut scan = BodyScan::new(opener.end, true);
    let mut found = scan.advance(text, closer, true);
    if found.is_none() && scan.in_string && recover_hidden_closer {
        found = BodyScan::new(opener.end, false).advance(text, closer, true);
    }
    match found {
        Some(BodyEnd::Closer { start, end }) => {
            let span = Span {
                start: opener.tag_start,
                end,
            };
            let body = &text[opener.end..start];
            let decoded = decode_tagged(text, opener, closer, body);
            CallRead {
                end,
                call: place(text, span, opener.dialect, decoded),
                extra: Vec::new(),
            }
        }
        unclosed => {
            let cut = match unclosed {
                Some(BodyEnd::NextOpener(at)) => at,
                _ => text.len(),
            };
            let span = Span {
                start: opener.tag_start,
                end: opener.tag_start + text[opener.tag_start..cut].trim_end().len(),
            };
            let message = format!(
                "The tool call has no closing tag: end it with {closer}> right after the JSON object."
            );
            CallRead {
                end: cut,
                call: Err(problem(ProblemKind::MissingClosingTag, message, span)),
                extra: Vec::new(),
            }
        }
    }
}

fn decode_tagged(
    text: &str,
    opener: &Opener,
    closer: &str,
    body: &str,
) -> Result<Decoded, Failure> {
    let json = strip_inner_fence(body.trim());
    if opener.dialect == Dialect::Llama3 {
        // The name is in the tag, the body is the arguments; no body means no arguments.
        let name = text[opener.tag_start + LLAMA_OPEN.len()..opener.end - 1].trim_end();
        let args = if json.is_empty() {
            Value::Object(Map::new())
        } else {
            let what = format!("The arguments of {LLAMA_OPEN}{name}>");
            args_object(parse_json(json)?, &what)?
        };
        return Ok(Decoded {
            tool: name.to_owned(),
            args,
            reasoning: None,
        });
    }
    if json.is_empty() {
        return Err((
            ProblemKind::InvalidJson,
            format!("The tool call is empty: put one JSON object before {closer}>."),
        ));
    }
    decode_call_object(parse_json(json)?)
}

/// The JSON inside a ```` ```json ```` fence, or `body` itself.
fn strip_inner_fence(body: &str) -> &str {
    let Some(rest) = body.strip_prefix(FENCE) else {
        return body;
    };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii() && is_fence_lang_byte(c as u8));
    let rest = rest.trim();
    rest.strip_suffix(FENCE).unwrap_or(rest).trim_end()
}

/// `[TOOL_CALLS]name[ARGS]{…}`, `[TOOL_CALLS]name{…}`, `[TOOL_CALLS][{"name": …}, …]` or
/// `[TOOL_CALLS]{"name": …}`. With no closing tag, the call ends where its JSON value ends.
fn read_mistral(text: &str, opener: &Opener) -> CallRead {
    let bytes = text.as_bytes();
    let fail = |kind, message| CallRead {
        end: text.len(),
        call: Err(problem(
            kind,
            message,
            Span {
                start: opener.tag_start,
                end: opener.tag_start + text[opener.tag_start..].trim_end().len(),
            },
        )),
        extra: Vec::new(),
    };
    let lead = skip_ws(bytes, opener.end);
    let name_end = lead
        + bytes[lead..]
            .iter()
            .take_while(|b| is_name_byte(**b))
            .count();
    let (name, value_start) = if name_end == lead {
        (None, lead)
    } else {
        let name = &text[lead..name_end];
        let after = skip_ws(bytes, name_end);
        let value_start = if text[after..].starts_with(MISTRAL_ARGS) {
            skip_ws(bytes, after + MISTRAL_ARGS.len())
        } else if text[after..].starts_with('{') {
            after
        } else {
            let message = format!(
                "After {MISTRAL_OPEN}{name} the call needs {MISTRAL_ARGS} followed by a JSON object of arguments."
            );
            return fail(ProblemKind::InvalidJson, message);
        };
        (Some(name), value_start)
    };
    let json = &text[value_start..];
    let mut values = serde_json::Deserializer::from_str(json).into_iter::<Value>();
    let value = match values.next() {
        Some(Ok(value)) => value,
        Some(Err(err)) => {
            let (kind, message) = invalid_json(json, &err);
            return fail(kind, message);
        }
        None => {
            let message = format!("Nothing follows {MISTRAL_OPEN}: the call is incomplete.");
            return fail(ProblemKind::InvalidJson, message);
        }
    };
    let end = value_start + values.byte_offset();
    let span = Span {
        start: opener.tag_start,
        end,
    };
    let (decoded, extra) = match name {
        Some(name) => {
            let what = format!("The arguments after {MISTRAL_ARGS}");
            let decoded = args_object(value, &what).map(|args| Decoded {
                tool: name.to_owned(),
                args,
                reasoning: None,
            });
            (decoded, Vec::new())
        }
        None => decode_mistral_value(value, span),
    };
    CallRead {
        end,
        call: place(text, span, Dialect::Mistral, decoded),
        extra,
    }
}

/// A list of calls (the first is taken, the others are extra calls) or a single call object.
fn decode_mistral_value(value: Value, span: Span) -> (Result<Decoded, Failure>, Vec<Problem>) {
    match value {
        Value::Array(items) => {
            let mut items = items.into_iter();
            let Some(first) = items.next() else {
                let message =
                    format!("{MISTRAL_OPEN} is followed by an empty list: give one call.");
                return (Err((ProblemKind::BadCallShape, message)), Vec::new());
            };
            let extra = items
                .map(|item| {
                    let name = TOOL_KEYS
                        .iter()
                        .find_map(|key| item.get(key).and_then(Value::as_str));
                    extra_call_problem(name, span)
                })
                .collect();
            (decode_call_object(first), extra)
        }
        Value::Object(_) => (decode_call_object(value), Vec::new()),
        other => {
            let message = format!(
                "{MISTRAL_OPEN} must be followed by a tool name and {MISTRAL_ARGS}, or by a JSON object or list of calls, got {}.",
                type_name(&other)
            );
            (Err((ProblemKind::BadCallShape, message)), Vec::new())
        }
    }
}

/// `{"tool" | "name": …, "args" | "arguments" | "params" | "parameters": {…}, "reasoning": …}`.
fn decode_call_object(value: Value) -> Result<Decoded, Failure> {
    let Value::Object(mut fields) = value else {
        let message = format!(
            "The tool call must be a JSON object with \"tool\" and \"args\" fields, got {}.",
            type_name(&value)
        );
        return Err((ProblemKind::BadCallShape, message));
    };
    let tool = match TOOL_KEYS
        .iter()
        .find_map(|key| fields.remove(*key).map(|v| (key, v)))
    {
        Some((_, Value::String(tool))) => tool,
        Some((key, other)) => {
            let message = format!(
                "The \"{key}\" field must be a string naming the tool, got {}.",
                type_name(&other)
            );
            return Err((ProblemKind::BadCallShape, message));
        }
        None => {
            let message =
                "The call has no \"tool\" field: name the tool to run in \"tool\".".to_owned();
            return Err((ProblemKind::BadCallShape, message));
        }
    };
    // Missing arguments are left to the registry, which can name the missing parameters.
    let args = match ARG_KEYS
        .iter()
        .find_map(|key| fields.remove(*key).map(|v| (key, v)))
    {
        Some((key, value)) => args_object(value, &format!("\"{key}\""))?,
        None => Value::Object(Map::new()),
    };
    let reasoning = fields
        .get("reasoning")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok(Decoded {
        tool,
        args,
        reasoning,
    })
}

/// The arguments object; a JSON string holding an object is decoded, since models often
/// double-encode arguments. `what` names the arguments in messages.
fn args_object(value: Value, what: &str) -> Result<Value, Failure> {
    match value {
        Value::Object(_) => Ok(value),
        Value::String(encoded) => match serde_json::from_str::<Value>(&encoded) {
            Ok(decoded @ Value::Object(_)) => Ok(decoded),
            _ => {
                let message = format!(
                    "{what} is a string that does not hold a JSON object; give the arguments as a JSON object."
                );
                Err((ProblemKind::BadCallShape, message))
            }
        },
        other => {
            let message = format!("{what} must be a JSON object, got {}.", type_name(&other));
            Err((ProblemKind::BadCallShape, message))
        }
    }
}

fn parse_json(json: &str) -> Result<Value, Failure> {
    serde_json::from_str(json).map_err(|err| invalid_json(json, &err))
}

/// serde_json's message (with line and column), the text around the error, and a hint.
fn invalid_json(json: &str, err: &serde_json::Error) -> Failure {
    let reason = err.to_string();
    let hint = if err.classify() == serde_json::error::Category::Eof {
        "The JSON ends too early: close every {, [ and \" you open."
    } else if reason.contains("trailing comma") {
        "Remove the comma before the closing bracket."
    } else if reason.contains("control character") {
        "Line breaks and tabs inside strings must be written as \\n and \\t."
    } else if reason.contains("escape") {
        "A backslash inside a string must be written as \\\\."
    } else {
        "Write exactly one JSON object; keys and strings need double quotes."
    };
    let at = error_offset(json, err.line(), err.column());
    let message = format!(
        "The tool call is not valid JSON: {reason}, near `{}`. {hint}",
        excerpt(json, at)
    );
    (ProblemKind::InvalidJson, message)
}

/// The byte offset of serde_json's 1-based line and byte column (the column of the byte at
/// fault; 0 when the error is at the very start of a line).
fn error_offset(json: &str, line: usize, column: usize) -> usize {
    let line_start: usize = json
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let mut at = (line_start + column.saturating_sub(1)).min(json.len());
    while !json.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// A one-line quote of the text around byte `at`.
fn excerpt(json: &str, at: usize) -> String {
    let (before, after) = json.split_at(at);
    let start = before
        .char_indices()
        .rev()
        .nth(EXCERPT_CHARS - 1)
        .map_or(0, |(i, _)| i);
    let quoted: String = before[start..]
        .chars()
        .chain(after.chars().take(EXCERPT_CHARS))
        .collect();
    one_line(&quoted)
}

fn one_line(s: &str) -> String {
    s.replace('\r', "\\r")
        .replace('\n', "\\n")
        .replace('\t', "\\t")
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Places a decoded call (or its failure) in the text.
fn place(
    text: &str,
    span: Span,
    dialect: Dialect,
    decoded: Result<Decoded, Failure>,
) -> Result<RawCall, Problem> {
    match decoded {
        Ok(Decoded {
            tool,
            args,
            reasoning,
        }) => Ok(RawCall {
            tool,
            args,
            reasoning,
            dialect,
            raw: text[span.start..span.end].to_owned(),
            span,
        }),
        Err((kind, message)) => Err(problem(kind, message, span)),
    }
}

fn problem(kind: ProblemKind, message: String, span: Span) -> Problem {
    let (error_type, fatal) = match kind {
        ProblemKind::MissingClosingTag | ProblemKind::InvalidJson => (ErrorType::ParseError, true),
        ProblemKind::BadCallShape => (ErrorType::ValidationFailed, true),
        ProblemKind::ExtraCall | ProblemKind::TrailingText => (ErrorType::ValidationFailed, false),
    };
    Problem {
        kind,
        error_type,
        message,
        span: Some(span),
        fatal,
    }
}

fn extra_call_problem(tool: Option<&str>, span: Span) -> Problem {
    let to = tool.map(|t| format!(" to {t}")).unwrap_or_default();
    let message = format!(
        "Only one tool call per response is allowed; the extra call{to} was not run. Make one call, wait for its result, then make the next."
    );
    problem(ProblemKind::ExtraCall, message, span)
}

// ---------------------------------------------------------------------------------------------
// After the call

/// Everything after the first call: each further call is an extra call, other text is
/// discarded trailing text.
fn check_rest(text: &str, from: usize) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut trailing: Option<Span> = None;
    let mut pos = from;
    loop {
        let next = match find_opener(text, pos, true) {
            Search::Found(opener) => Some(opener),
            Search::Pending(_) | Search::NotFound => None,
        };
        let gap = &text[pos..next.map_or(text.len(), |o| o.start)];
        // A stray fence marker is markup, not words the model meant to say.
        if !gap
            .trim_matches(|c: char| c.is_whitespace() || c == '`')
            .is_empty()
        {
            let start = pos + (gap.len() - gap.trim_start().len());
            let end = pos + gap.trim_end().len();
            trailing = Some(Span {
                start: trailing.map_or(start, |t| t.start),
                end,
            });
        }
        let Some(opener) = next else { break };
        let read = read_call(text, &opener, false);
        let tool = read.call.as_ref().ok().map(|call| call.tool.as_str());
        let span = Span {
            start: opener.tag_start,
            end: read.end,
        };
        problems.push(extra_call_problem(tool, span));
        pos = past_fence(text, read.end, opener.fenced);
    }
    if let Some(span) = trailing {
        let quoted: String = text[span.start..span.end]
            .chars()
            .take(TRAILING_EXCERPT_CHARS)
            .collect();
        let message = format!(
            "The text after the tool call was discarded (\"{}\"). Put any words before the call; the call must end the response.",
            one_line(&quoted)
        );
        problems.push(problem(ProblemKind::TrailingText, message, span));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Instant;

    /// Splits `text` at char boundaries into chunks of `sizes` chars (cycling).
    fn chunks<'a>(text: &'a str, sizes: &[usize]) -> Vec<&'a str> {
        let mut out = Vec::new();
        let mut rest = text;
        for &size in sizes.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let cut = rest.char_indices().nth(size).map_or(rest.len(), |(i, _)| i);
            out.push(&rest[..cut]);
            rest = &rest[cut..];
        }
        out
    }

    /// Feeds the chunks to a `TurnParser`; returns its result and everything `push` returned.
    /// Also checks `call_complete`: once true it stays true, and the call (or its fatal problem)
    /// is already what the whole text gives.
    fn stream(pieces: &[&str], whole: &Turn) -> (Turn, String) {
        let mut parser = TurnParser::new();
        let mut shown = String::new();
        let mut seen = String::new();
        let mut complete = false;
        for piece in pieces {
            shown += &parser.push(piece);
            seen += piece;
            if complete {
                assert!(parser.call_complete(), "call_complete went back to false");
            } else if parser.call_complete() {
                complete = true;
                let early = parse(&seen);
                assert_eq!(early.call, whole.call, "call at completion of {seen:?}");
                // A broken Mistral value's message quotes the text after it, so compare kinds.
                let fatal = |t: &Turn| t.fatal_problem().map(|p| (p.kind, p.error_type));
                assert_eq!(fatal(&early), fatal(whole));
            }
        }
        if whole.call.is_some() {
            assert!(parser.call_complete(), "a valid call was never complete");
        }
        (parser.finish(), shown)
    }

    /// Parses `text` whole, one char at a time, and in chunks of varying size; all must agree,
    /// and the streamed user text must be a prefix of the final one. Returns the turn and the
    /// text streamed one char at a time.
    fn check(text: &str) -> (Turn, String) {
        let whole = parse(text);
        assert_eq!(whole.raw, text);
        let mut by_char = String::new();
        for sizes in [&[1][..], &[1, 2, 3, 5, 8, 13], &[7, 1, 4]] {
            let (turn, shown) = stream(&chunks(text, sizes), &whole);
            assert_eq!(turn, whole, "chunk sizes {sizes:?}");
            assert!(
                whole.text.starts_with(shown.trim()),
                "streamed {shown:?} is not a prefix of {:?}",
                whole.text
            );
            if sizes == [1] {
                by_char = shown;
            }
        }
        (whole, by_char)
    }

    fn turn(text: &str) -> Turn {
        check(text).0
    }

    fn call(turn: &Turn) -> &RawCall {
        turn.call.as_ref().expect("a call")
    }

    fn kinds(turn: &Turn) -> Vec<ProblemKind> {
        turn.problems.iter().map(|p| p.kind).collect()
    }

    fn only_problem(turn: &Turn) -> &Problem {
        assert_eq!(turn.problems.len(), 1, "{:?}", turn.problems);
        &turn.problems[0]
    }

    #[test]
    fn native_call() {
        let text = "<TOOL_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"package.json\"}, \"reasoning\": \"Need the version\"}\n</TOOL_CALL>";
        let t = turn(text);
        let c = call(&t);
        assert_eq!(c.tool, "read_file");
        assert_eq!(c.args, json!({"path": "package.json"}));
        assert_eq!(c.reasoning.as_deref(), Some("Need the version"));
        assert_eq!(c.dialect, Dialect::Native);
        assert_eq!(c.raw, text);
        assert_eq!(
            c.span,
            Span {
                start: 0,
                end: text.len()
            }
        );
        assert_eq!(t.text, "");
        assert!(t.problems.is_empty());
    }

    #[test]
    fn plain_text_streams_whole() {
        for text in [
            "The version is 1.0.0",
            "  Use a < b and list[0] and `code` and ```rust\nfn main() {}\n```\nDone.  ",
            "Unicode: 日本語 🎉 [TOOL] <tool_cal> <function=> </TOOL_CALL>",
        ] {
            let (t, shown) = check(text);
            assert_eq!(t.text, text.trim());
            assert_eq!(shown.trim(), t.text);
            assert!(t.call.is_none() && t.problems.is_empty());
        }
    }

    #[test]
    fn empty_and_whitespace_only() {
        for text in ["", "   \r\n\t \n"] {
            let (t, shown) = check(text);
            assert_eq!(
                t,
                Turn {
                    raw: text.to_owned(),
                    ..Turn::default()
                }
            );
            assert_eq!(shown.trim(), "");
        }
    }

    #[test]
    fn crlf_and_whitespace_around_and_in_tags() {
        let text = "Checking.\r\n\r\n  <TOOL_CALL \r\n>\r\n  {\r\n  \"tool\": \"read_file\",\r\n  \"args\": {\"path\": \"a.ts\"}\r\n}\r\n  </TOOL_CALL\r\n>\r\n  ";
        let (t, shown) = check(text);
        assert_eq!(call(&t).tool, "read_file");
        assert_eq!(call(&t).args, json!({"path": "a.ts"}));
        assert!(call(&t).raw.ends_with("</TOOL_CALL\r\n>"));
        assert_eq!(t.text, "Checking.");
        assert_eq!(shown.trim(), "Checking.");
        assert!(t.problems.is_empty());
    }

    #[test]
    fn fence_inside_tags() {
        for fence in ["```json", "```", "```JSON "] {
            let text = format!(
                "<TOOL_CALL>\n{fence}\n{{\"tool\": \"list_files\", \"args\": {{\"directory\": \".\"}}}}\n```\n</TOOL_CALL>"
            );
            let t = turn(&text);
            assert_eq!(call(&t).tool, "list_files", "{fence}");
            assert!(t.problems.is_empty());
        }
    }

    #[test]
    fn fence_around_tags() {
        let text = "I'll read it.\n```xml\n<TOOL_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"x\"}}\n</TOOL_CALL>\n```\n";
        let (t, shown) = check(text);
        assert_eq!(t.text, "I'll read it.");
        assert_eq!(shown.trim(), "I'll read it.");
        let c = call(&t);
        assert!(c.raw.starts_with("<TOOL_CALL>") && c.raw.ends_with("</TOOL_CALL>"));
        assert_eq!(&text[c.span.start..c.span.end], c.raw);
        assert!(t.problems.is_empty(), "{:?}", t.problems);
    }

    #[test]
    fn fence_around_tags_and_inside() {
        let text = "```\n<TOOL_CALL>\n```json\n{\"tool\": \"read_file\", \"args\": {\"path\": \"x\"}}\n```\n</TOOL_CALL>\n```";
        let t = turn(text);
        assert_eq!(call(&t).tool, "read_file");
        assert_eq!(t.text, "");
        assert!(t.problems.is_empty());
    }

    #[test]
    fn fence_closing_an_earlier_block_is_user_text() {
        let text = "Here is the fix:\n```rust\nfn main() {}\n```\n<TOOL_CALL>{\"tool\": \"write_file\", \"args\": {}}</TOOL_CALL>";
        let (t, shown) = check(text);
        assert_eq!(t.text, "Here is the fix:\n```rust\nfn main() {}\n```");
        assert!(t.text.starts_with(shown.trim()));
        assert_eq!(call(&t).tool, "write_file");
        assert!(t.problems.is_empty());
    }

    #[test]
    fn text_before_call() {
        let text = "  Let me check the version.\n\n<TOOL_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"p\"}}</TOOL_CALL>";
        let (t, shown) = check(text);
        assert_eq!(t.text, "Let me check the version.");
        assert_eq!(shown.trim(), t.text);
        let start = text.find('<').unwrap();
        assert_eq!(
            call(&t).span,
            Span {
                start,
                end: text.len()
            }
        );
    }

    #[test]
    fn closing_tag_inside_a_string_is_content() {
        let content = "Docs: end a call with </TOOL_CALL>, quote with \\\" and </tool_call> too";
        let text = format!(
            "<TOOL_CALL>{{\"tool\": \"write_file\", \"args\": {{\"path\": \"d.md\", \"content\": \"{content}\"}}}}</TOOL_CALL>"
        );
        let t = turn(&text);
        assert_eq!(
            call(&t).args["content"],
            "Docs: end a call with </TOOL_CALL>, quote with \" and </tool_call> too"
        );
        assert!(t.problems.is_empty());
    }

    #[test]
    fn escaped_backslash_before_quote_ends_the_string() {
        let text = r#"<TOOL_CALL>{"tool": "write_file", "args": {"path": "a", "content": "C:\\"}}</TOOL_CALL>"#;
        let t = turn(text);
        assert_eq!(call(&t).args["content"], "C:\\");
    }

    #[test]
    fn unicode_arguments_split_across_chunks() {
        let text = "好的 🎉\n<TOOL_CALL>{\"tool\": \"write_file\", \"args\": {\"path\": \"文档/说明.md\", \"content\": \"héllo 👩‍💻 世界 🇫🇷\"}}</TOOL_CALL>";
        let t = turn(text);
        assert_eq!(t.text, "好的 🎉");
        assert_eq!(call(&t).args["path"], "文档/说明.md");
        assert_eq!(call(&t).args["content"], "héllo 👩‍💻 世界 🇫🇷");
        // Chunks cut inside multi-char emoji sequences too.
        let whole = parse(text);
        let (streamed, _) = stream(&chunks(text, &[2, 9]), &whole);
        assert_eq!(streamed, whole);
    }

    #[test]
    fn two_calls_take_the_first() {
        let text = "<TOOL_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"a\"}}</TOOL_CALL>\n<TOOL_CALL>{\"tool\": \"write_file\", \"args\": {}}</TOOL_CALL>";
        let t = turn(text);
        assert_eq!(call(&t).tool, "read_file");
        let p = only_problem(&t);
        assert_eq!(p.kind, ProblemKind::ExtraCall);
        assert_eq!(p.error_type, ErrorType::ValidationFailed);
        assert!(!p.fatal);
        assert!(p.message.contains("Only one tool call per response"));
        assert!(p.message.contains("write_file"));
        let second = text.rfind("<TOOL_CALL>").unwrap();
        assert_eq!(
            p.span,
            Some(Span {
                start: second,
                end: text.len()
            })
        );
    }

    #[test]
    fn three_calls_in_fences_and_dialects() {
        let text = "```\n<TOOL_CALL>{\"tool\": \"a\", \"args\": {}}</TOOL_CALL>\n```\n```\n<tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>\n```\n<function=c>{}</function>";
        let t = turn(text);
        assert_eq!(call(&t).tool, "a");
        assert_eq!(kinds(&t), [ProblemKind::ExtraCall, ProblemKind::ExtraCall]);
        assert!(t.problems[1].message.contains("to c"));
    }

    #[test]
    fn trailing_text_is_discarded() {
        let text = "Before.\n<TOOL_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"a\"}}</TOOL_CALL>\nI will now wait for the result.\n";
        let (t, shown) = check(text);
        assert_eq!(t.text, "Before.");
        assert_eq!(shown.trim(), "Before.");
        assert_eq!(call(&t).tool, "read_file");
        let p = only_problem(&t);
        assert_eq!(p.kind, ProblemKind::TrailingText);
        assert!(!p.fatal);
        assert!(p.message.contains("discarded"));
        let start = text.find("I will").unwrap();
        assert_eq!(
            p.span,
            Some(Span {
                start,
                end: text.trim_end().len()
            })
        );
    }

    #[test]
    fn stray_fence_after_call_is_not_trailing_text() {
        let t = turn("<TOOL_CALL>{\"tool\": \"a\", \"args\": {}}</TOOL_CALL>\n```\n");
        assert_eq!(call(&t).tool, "a");
        assert!(t.problems.is_empty());
    }

    #[test]
    fn trailing_text_and_extra_call() {
        let text = "<TOOL_CALL>{\"tool\": \"a\", \"args\": {}}</TOOL_CALL> then <TOOL_CALL>{\"tool\": \"b\", \"args\": {}}</TOOL_CALL> done";
        let t = turn(text);
        assert_eq!(
            kinds(&t),
            [ProblemKind::ExtraCall, ProblemKind::TrailingText]
        );
        let start = text.find("then").unwrap();
        assert_eq!(
            t.problems[1].span,
            Some(Span {
                start,
                end: text.len()
            })
        );
    }

    #[test]
    fn args_as_json_string_are_decoded() {
        let text =
            r#"<TOOL_CALL>{"tool": "read_file", "args": "{\"path\": \"a.ts\"}"}</TOOL_CALL>"#;
        assert_eq!(call(&turn(text)).args, json!({"path": "a.ts"}));
    }

    #[test]
    fn args_string_without_object_is_bad_shape() {
        for args in [r#""a.ts""#, r#""[1, 2]""#, r#""{broken""#] {
            let text = format!(r#"<TOOL_CALL>{{"tool": "read_file", "args": {args}}}</TOOL_CALL>"#);
            let t = turn(&text);
            assert!(t.call.is_none());
            let p = only_problem(&t);
            assert_eq!(p.kind, ProblemKind::BadCallShape);
            assert!(p.fatal);
            assert!(
                p.message.contains("does not hold a JSON object"),
                "{}",
                p.message
            );
        }
    }

    #[test]
    fn missing_args_are_empty() {
        let t = turn("<TOOL_CALL>\n{\"tool\": \"read_file\"}\n</TOOL_CALL>");
        assert_eq!(call(&t).args, json!({}));
        assert!(t.problems.is_empty());
    }

    #[test]
    fn non_object_args_are_bad_shape() {
        for (args, got) in [
            ("42", "a number"),
            ("[\"a\"]", "an array"),
            ("null", "null"),
            ("true", "a boolean"),
        ] {
            let text =
                format!("<TOOL_CALL>{{\"tool\": \"read_file\", \"args\": {args}}}</TOOL_CALL>");
            let t = turn(&text);
            assert!(t.call.is_none());
            let p = only_problem(&t);
            assert_eq!(p.kind, ProblemKind::BadCallShape);
            assert_eq!(p.error_type, ErrorType::ValidationFailed);
            assert!(p.fatal);
            assert_eq!(
                p.message,
                format!("\"args\" must be a JSON object, got {got}.")
            );
            assert_eq!(
                p.span,
                Some(Span {
                    start: 0,
                    end: text.len()
                })
            );
        }
    }

    #[test]
    fn missing_or_bad_tool_name() {
        let t = turn("<TOOL_CALL>{\"args\": {\"path\": \"a\"}}</TOOL_CALL>");
        let p = only_problem(&t);
        assert_eq!(p.kind, ProblemKind::BadCallShape);
        assert!(p.message.starts_with("The call has no \"tool\" field"));

        let t = turn("<TOOL_CALL>{\"tool\": 7, \"args\": {}}</TOOL_CALL>");
        assert!(only_problem(&t)
            .message
            .contains("\"tool\" field must be a string"));

        let t = turn("<TOOL_CALL>[\"read_file\", {}]</TOOL_CALL>");
        let p = only_problem(&t);
        assert_eq!(p.kind, ProblemKind::BadCallShape);
        assert!(p.message.contains("got an array"));
    }

    #[test]
    fn unknown_tool_names_pass_through_with_case() {
        let t = turn("<TOOL_CALL>{\"tool\": \"Read_File\", \"args\": {}}</TOOL_CALL>");
        assert_eq!(call(&t).tool, "Read_File");
    }

    #[test]
    fn field_names_are_normalised() {
        for (tool_key, args_key) in [
            ("name", "arguments"),
            ("tool", "params"),
            ("name", "parameters"),
        ] {
            let text = format!(
                "<TOOL_CALL>{{\"{tool_key}\": \"x\", \"{args_key}\": {{\"a\": 1}}}}</TOOL_CALL>"
            );
            let t = turn(&text);
            assert_eq!(call(&t).tool, "x");
            assert_eq!(call(&t).args, json!({"a": 1}));
        }
    }

    #[test]
    fn hermes_dialect() {
        let text = "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>";
        let t = turn(text);
        assert_eq!(call(&t).dialect, Dialect::Hermes);
        assert_eq!(call(&t).tool, "read_file");
        assert_eq!(call(&t).args, json!({"path": "a"}));
        assert_eq!(call(&t).raw, text);
    }

    #[test]
    fn tool_tag_dialect() {
        let t = turn("<tool>{\"name\": \"search_code\", \"params\": {\"query\": \"fn\"}}</tool>");
        assert_eq!(call(&t).dialect, Dialect::ToolTag);
        assert_eq!(call(&t).tool, "search_code");
        assert_eq!(call(&t).args, json!({"query": "fn"}));
    }

    #[test]
    fn llama3_dialect() {
        let text = "Sure.\n<function=read_file>{\"path\": \"src/main.rs\"}</function>";
        let t = turn(text);
        let c = call(&t);
        assert_eq!(c.dialect, Dialect::Llama3);
        assert_eq!(c.tool, "read_file");
        assert_eq!(c.args, json!({"path": "src/main.rs"}));
        assert_eq!(
            c.raw,
            "<function=read_file>{\"path\": \"src/main.rs\"}</function>"
        );
        assert_eq!(t.text, "Sure.");

        let t = turn("<function=get_diagnostics >\n</function>");
        assert_eq!(call(&t).tool, "get_diagnostics");
        assert_eq!(call(&t).args, json!({}));

        let t = turn("<function=read_file>[1]</function>");
        let p = only_problem(&t);
        assert_eq!(p.kind, ProblemKind::BadCallShape);
        assert!(p.message.contains("<function=read_file>"), "{}", p.message);
    }

    #[test]
    fn mistral_name_and_args() {
        let text = "[TOOL_CALLS]read_file[ARGS]{\"path\": \"a.ts\"}";
        let t = turn(text);
        let c = call(&t);
        assert_eq!(c.dialect, Dialect::Mistral);
        assert_eq!(c.tool, "read_file");
        assert_eq!(c.args, json!({"path": "a.ts"}));
        assert_eq!(c.raw, text);

        let t = turn("Ok. [TOOL_CALLS] read_file {\"path\": \"a.ts\"}");
        assert_eq!(call(&t).tool, "read_file");
        assert_eq!(t.text, "Ok.");
    }

    #[test]
    fn mistral_list_and_object() {
        let text = "[TOOL_CALLS] [{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}]\n";
        let t = turn(text);
        assert_eq!(call(&t).tool, "read_file");
        assert_eq!(call(&t).raw, text.trim_end());
        assert!(t.problems.is_empty());

        let t = turn(
            "[TOOL_CALLS]{\"name\": \"read_file\", \"arguments\": \"{\\\"path\\\": \\\"a\\\"}\"}",
        );
        assert_eq!(call(&t).args, json!({"path": "a"}));

        let t = turn("[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", \"arguments\": {}}, {\"name\": \"c\"}]");
        assert_eq!(call(&t).tool, "a");
        assert_eq!(kinds(&t), [ProblemKind::ExtraCall, ProblemKind::ExtraCall]);
        assert!(t.problems[0].message.contains("to b"));

        let t = turn("[TOOL_CALLS][]");
        assert_eq!(only_problem(&t).kind, ProblemKind::BadCallShape);
    }

    #[test]
    fn mistral_two_calls_and_trailing_text() {
        let t = turn("[TOOL_CALLS]a[ARGS]{}[TOOL_CALLS]b[ARGS]{\"x\": \"}\"} bye");
        assert_eq!(call(&t).tool, "a");
        assert_eq!(
            kinds(&t),
            [ProblemKind::ExtraCall, ProblemKind::TrailingText]
        );
    }

    #[test]
    fn mistral_broken() {
        for text in [
            "[TOOL_CALLS]read_file[ARGS]{\"path\": \"a.ts\"",
            "[TOOL_CALLS]",
            "[TOOL_CALLS]read_file",
            "[TOOL_CALLS]read_file then",
            "[TOOL_CALLS]{name: 1}",
        ] {
            let t = turn(text);
            assert!(t.call.is_none());
            let p = only_problem(&t);
            assert_eq!(p.kind, ProblemKind::InvalidJson, "{text}");
            assert_eq!(p.error_type, ErrorType::ParseError);
            assert!(p.fatal);
        }
        let t = turn("[TOOL_CALLS] \"read_file\"");
        assert_eq!(only_problem(&t).kind, ProblemKind::BadCallShape);
    }

    #[test]
    fn missing_closing_tag() {
        let text = "<TOOL_CALL>\n{\"tool\": \"read_file\"}\n";
        let t = turn(text);
        assert!(t.call.is_none());
        let p = only_problem(&t);
        assert_eq!(p.kind, ProblemKind::MissingClosingTag);
        assert_eq!(p.error_type, ErrorType::ParseError);
        assert!(p.fatal);
        assert!(p.message.contains("</TOOL_CALL>"));
        assert_eq!(
            p.span,
            Some(Span {
                start: 0,
                end: text.trim_end().len()
            })
        );

        let t = turn("<tool_call>{\"name\": \"read_file\"}");
        assert!(only_problem(&t).message.contains("</tool_call>"));
        let t = turn("<function=read_file>{}");
        assert!(only_problem(&t).message.contains("</function>"));
    }

    #[test]
    fn missing_closing_tag_then_second_call() {
        let text = "<TOOL_CALL>{\"tool\": \"a\", \"args\": {}}\n<TOOL_CALL>{\"tool\": \"b\", \"args\": {}}</TOOL_CALL>";
        let t = turn(text);
        assert!(t.call.is_none());
        assert_eq!(
            kinds(&t),
            [ProblemKind::MissingClosingTag, ProblemKind::ExtraCall]
        );
        assert_eq!(
            t.problems[0].span,
            Some(Span {
                start: 0,
                end: text.find('\n').unwrap()
            })
        );
        assert!(t.problems[1].message.contains("to b"));
    }

    #[test]
    fn invalid_json() {
        let text = "<TOOL_CALL>\n{tool: \"read_file\", args: {path: \"test.ts\"}}\n</TOOL_CALL>";
        let t = turn(text);
        assert!(t.call.is_none());
        let p = only_problem(&t);
        assert_eq!(p.kind, ProblemKind::InvalidJson);
        assert_eq!(p.error_type, ErrorType::ParseError);
        assert!(p.fatal);
        assert!(p.message.contains("line 1 column 2"), "{}", p.message);
        assert!(
            p.message.contains("near `{tool: \"read_file\", a`"),
            "{}",
            p.message
        );
        assert!(p.message.contains("double quotes"), "{}", p.message);
        assert_eq!(
            p.span,
            Some(Span {
                start: 0,
                end: text.len()
            })
        );
    }

    #[test]
    fn invalid_json_messages() {
        let cases = [
            (
                "{\"tool\": \"a\", \"args\": {},}",
                "trailing comma",
                "line 1 column 26",
            ),
            (
                "{\"tool\": \"a\",\n \"args\": {\"x\": 'y'}}",
                "expected value",
                "line 2 column 16",
            ),
            (
                "{\"tool\": \"a\", \"args\": {\"c\": \"tab\there\"}}",
                "written as \\n and \\t",
                "line 1",
            ),
            (
                "{\"tool\": \"a\"} {\"tool\": \"b\"}",
                "trailing characters",
                "line 1 column 15",
            ),
            ("{\"tool\": \"a\", \"args\": {", "ends too early", "EOF"),
        ];
        for (body, expect, position) in cases {
            let t = turn(&format!("<TOOL_CALL>{body}</TOOL_CALL>"));
            let p = only_problem(&t);
            assert_eq!(p.kind, ProblemKind::InvalidJson);
            assert!(p.message.contains(expect), "{body}: {}", p.message);
            assert!(p.message.contains(position), "{body}: {}", p.message);
            assert!(!p.message.contains('\n'), "{}", p.message);
        }
        let p = only_problem(&turn("<TOOL_CALL>\n\n</TOOL_CALL>")).clone();
        assert_eq!(p.kind, ProblemKind::InvalidJson);
        assert!(p.message.contains("empty"));
    }

    #[test]
    fn unbalanced_quote_does_not_hide_the_closer() {
        let t = turn("<TOOL_CALL>{\"tool\": \"read_file, \"args\": {}}</TOOL_CALL>");
        assert_eq!(only_problem(&t).kind, ProblemKind::InvalidJson);
    }

    #[test]
    fn broken_first_call_is_not_replaced_by_a_second() {
        let text =
            "<TOOL_CALL>{bad}</TOOL_CALL><TOOL_CALL>{\"tool\": \"b\", \"args\": {}}</TOOL_CALL>";
        let t = turn(text);
        assert!(t.call.is_none());
        assert_eq!(
            kinds(&t),
            [ProblemKind::InvalidJson, ProblemKind::ExtraCall]
        );
    }

    #[test]
    fn mismatched_case_closer_is_accepted() {
        let t = turn("<TOOL_CALL>{\"tool\": \"a\", \"args\": {}}</tool_call>");
        assert_eq!(call(&t).dialect, Dialect::Native);
        assert!(t.problems.is_empty());
        let t = turn("<tool_call>{\"name\": \"a\"}</TOOL_CALL>");
        assert_eq!(call(&t).dialect, Dialect::Hermes);
    }

    #[test]
    fn tags_are_case_sensitive_openers() {
        let t = turn("<Tool_Call>{\"tool\": \"a\"}</Tool_Call>");
        assert!(t.call.is_none() && t.problems.is_empty());
    }

    #[test]
    fn lone_opener_at_end() {
        let (t, shown) = check("Reading now <TOOL_CALL>");
        assert_eq!(t.text, "Reading now");
        assert_eq!(shown.trim(), "Reading now");
        assert_eq!(only_problem(&t).kind, ProblemKind::MissingClosingTag);
    }

    #[test]
    fn partial_opener_at_end_is_text_but_held_back() {
        for tail in [
            "<TOOL_CALL",
            "<TOOL_CALL  ",
            "```json\n<tool",
            "<function=read",
            "[TOOL_CA",
            "```",
        ] {
            let text = format!("Hello {tail}");
            let (t, shown) = check(&text);
            assert_eq!(t.text, text.trim());
            assert!(t.call.is_none() && t.problems.is_empty());
            assert_eq!(shown, "Hello ", "{tail}");
        }
    }

    #[test]
    fn lone_and_odd_tags_are_text() {
        for text in [
            "</TOOL_CALL>",
            "a </tool> b",
            "<function=>x</function>",
            "<function=a b>",
            "[ARGS]{}",
        ] {
            let (t, shown) = check(text);
            assert_eq!(t.text, text.trim(), "{text}");
            assert_eq!(shown.trim(), t.text);
            assert!(t.call.is_none() && t.problems.is_empty());
        }
    }

    #[test]
    fn call_complete_as_soon_as_the_closer_arrives() {
        let mut parser = TurnParser::new();
        assert_eq!(
            parser.push("Hi <TOOL_CALL>{\"tool\": \"a\", \"args\": {\"c\": \"</TOOL_CALL>"),
            "Hi "
        );
        assert!(!parser.call_complete());
        parser.push("\"}}</TOOL_CAL");
        assert!(!parser.call_complete());
        assert_eq!(parser.push("L>"), "");
        assert!(parser.call_complete());
        assert_eq!(call(&parser.finish()).args["c"], "</TOOL_CALL>");

        let mut parser = TurnParser::new();
        parser.push("[TOOL_CALLS]a[ARGS]{\"x\": [\"}\"]");
        assert!(!parser.call_complete());
        parser.push("}");
        assert!(parser.call_complete());
    }

    #[test]
    fn deeply_nested_junk() {
        let deep = "[".repeat(100_000) + &"{\"a\":".repeat(50_000);
        for text in [
            deep.clone(),
            format!("<TOOL_CALL>{deep}</TOOL_CALL>"),
            format!("[TOOL_CALLS]{deep}"),
            format!(
                "<TOOL_CALL>{{\"tool\": \"a\", \"args\": {}{}}}</TOOL_CALL>",
                "[".repeat(10_000),
                "]".repeat(10_000)
            ),
        ] {
            let t = parse(&text);
            let mut parser = TurnParser::new();
            for piece in chunks(&text, &[1, 2, 3, 5, 8, 13]) {
                parser.push(piece);
            }
            assert_eq!(parser.finish(), t);
        }
    }

    /// Responses stitched from fragments that stress the grammar; no panics, and streaming
    /// always agrees with the whole parse.
    #[test]
    fn generated_responses_agree() {
        const FRAGMENTS: [&str; 34] = [
            "<TOOL_CALL>",
            "</TOOL_CALL>",
            "<tool_call>",
            "</tool_call>",
            "<tool>",
            "</tool>",
            "<function=read_file>",
            "</function>",
            "[TOOL_CALLS]",
            "[ARGS]",
            "```",
            "```json\n",
            "\"",
            "\\",
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "\"tool\"",
            "\"args\"",
            "\"name\"",
            "\"read_file\"",
            "{\"path\": \"a\"}",
            " ",
            "\n",
            "\r\n",
            "text",
            "日本",
            "🎉",
            "<",
            "<TOOL_",
            "null",
        ];
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move |bound: usize| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) as usize % bound
        };
        for _ in 0..400 {
            let len = next(24);
            let text: String = (0..len).map(|_| FRAGMENTS[next(FRAGMENTS.len())]).collect();
            check(&text);
        }
        // And well-formed calls with noise around them.
        for _ in 0..100 {
            let noise: String = (0..next(6))
                .map(|_| FRAGMENTS[next(FRAGMENTS.len())])
                .collect();
            let text = format!("{noise}<TOOL_CALL>{{\"tool\": \"a\", \"args\": {{\"s\": \"{}\"}}}}</TOOL_CALL>{noise}", noise.replace(['\\', '"'], ""));
            check(&text);
        }
    }

    #[test]
    fn a_megabyte_char_by_char_is_linear() {
        let line =
            "Some text with < and [ and ` and \"quotes\" — ünïcödé 日本 🎉 <TOOL_ and [TOOL_C\n";
        let text = line.repeat(1_000_000 / line.len() + 1);
        let content = "x\\\"</TOOL_CALL>".repeat(70_000);
        let call_text = format!("{text}<TOOL_CALL>{{\"tool\": \"write_file\", \"args\": {{\"path\": \"a\", \"content\": \"{content}\"}}}}</TOOL_CALL>");
        for text in [&text, &call_text] {
            let started = Instant::now();
            let mut parser = TurnParser::new();
            let mut shown = String::new();
            for (i, c) in text.char_indices() {
                shown += &parser.push(&text[i..i + c.len_utf8()]);
            }
            let streamed = parser.finish();
            eprintln!("{} bytes char by char: {:?}", text.len(), started.elapsed());
            assert_eq!(streamed, parse(text));
            assert_eq!(shown.trim(), streamed.text);
        }
    }
}
