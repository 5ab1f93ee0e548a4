//! Reading a complete call: its JSON decoded and normalised, and every problem placed and
//! worded for the model.

use super::openers::{
    closer_tag, find_opener, harmony_recipient, is_fence_lang_byte, is_name_byte, past_fence,
    skip_ws, Opener, Search,
};
use super::scan::{BodyEnd, BodyScan};
use super::*;
use crate::tools::json_type_name;

pub(super) struct CallRead {
    /// Just past the call: its closing tag, the end of its JSON value, or where it was cut off.
    pub(super) end: usize,
    pub(super) call: Result<RawCall, Problem>,
    /// Non-fatal problems inside the call itself (further entries of a Mistral list).
    pub(super) extra: Vec<Problem>,
}

/// What is wrong with a call, before it is placed in the text.
type Failure = (ProblemKind, String);

pub(super) struct Decoded {
    pub(super) tool: String,
    pub(super) args: Value,
    pub(super) reasoning: Option<String>,
}

/// Reads the call that `opener` starts. `recover_hidden_closer`: see [`read_tagged`].
pub(super) fn read_call(text: &str, opener: &Opener, recover_hidden_closer: bool) -> CallRead {
    match (closer_tag(opener.dialect), opener.dialect) {
        (Some(closer), _) => read_tagged(text, opener, closer, recover_hidden_closer),
        (None, Dialect::Harmony) => read_harmony(text, opener),
        (None, _) => read_mistral(text, opener),
    }
}

/// A call that could not be read: it runs from its opener to the end of the text.
fn unreadable(text: &str, opener: &Opener, kind: ProblemKind, message: String) -> CallRead {
    let span = Span {
        start: opener.tag_start,
        end: opener.tag_start + text[opener.tag_start..].trim_end().len(),
    };
    CallRead {
        end: text.len(),
        call: Err(problem(kind, message, span)),
        extra: Vec::new(),
    }
}

/// The JSON value at `value_start` and where it ends; else what is wrong, worded by `nothing`
/// when no value starts there.
fn value_at(
    text: &str,
    value_start: usize,
    nothing: impl FnOnce() -> String,
) -> Result<(Value, usize), Failure> {
    let json = &text[value_start..];
    let mut values = serde_json::Deserializer::from_str(json).into_iter::<Value>();
    match values.next() {
        Some(Ok(value)) => Ok((value, value_start + values.byte_offset())),
        Some(Err(err)) => Err(invalid_json(json, &err)),
        None => Err((ProblemKind::InvalidJson, nothing())),
    }
}

/// A Harmony call: the header names the tool, the message is its arguments as a JSON object,
/// and the call ends with the object; a `<|call|>` after it (when the backend shows that
/// token) is skipped.
fn read_harmony(text: &str, opener: &Opener) -> CallRead {
    let bytes = text.as_bytes();
    let header = &bytes[opener.tag_start..opener.end - HARMONY_MESSAGE.len()];
    let name = harmony_recipient(header).unwrap_or_default();
    let nothing = || {
        format!(
            "Nothing follows the header of the call to {name}: after {HARMONY_MESSAGE} give its arguments as a JSON object."
        )
    };
    let (value, value_end) = match value_at(text, skip_ws(bytes, opener.end), nothing) {
        Ok(read) => read,
        Err((kind, message)) => return unreadable(text, opener, kind, message),
    };
    // The call is complete when its object closes, so that is where its span ends, whether
    // `<|call|>` comes or not; what follows is read after that token.
    let span = Span {
        start: opener.tag_start,
        end: value_end,
    };
    let after = skip_ws(bytes, span.end);
    let end = if text[after..].starts_with(HARMONY_CALL_END) {
        after + HARMONY_CALL_END.len()
    } else {
        span.end
    };
    let what = format!("The arguments of the call {HARMONY_RECIPIENT}functions.{name}");
    let decoded = args_object(value, &what).map(|args| Decoded {
        tool: name.to_owned(),
        args,
        reasoning: None,
    });
    CallRead {
        end,
        call: place(text, span, Dialect::Harmony, decoded),
        extra: Vec::new(),
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
pub(super) fn read_mistral(text: &str, opener: &Opener) -> CallRead {
    let bytes = text.as_bytes();
    let fail = |kind, message| unreadable(text, opener, kind, message);
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
    let nothing = || format!("Nothing follows {MISTRAL_OPEN}: the call is incomplete.");
    let (value, end) = match value_at(text, value_start, nothing) {
        Ok(read) => read,
        Err((kind, message)) => return fail(kind, message),
    };
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
                json_type_name(&other)
            );
            (Err((ProblemKind::BadCallShape, message)), Vec::new())
        }
    }
}

/// `{"tool" | "name": …, "args" | "arguments" | "params" | "parameters": {…}, "reasoning": …}`.
pub(super) fn decode_call_object(value: Value) -> Result<Decoded, Failure> {
    let Value::Object(mut fields) = value else {
        let message = format!(
            "The tool call must be a JSON object with \"tool\" and \"args\" fields, got {}.",
            json_type_name(&value)
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
                json_type_name(&other)
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
pub(super) fn args_object(value: Value, what: &str) -> Result<Value, Failure> {
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
            let message = format!(
                "{what} must be a JSON object, got {}.",
                json_type_name(&other)
            );
            Err((ProblemKind::BadCallShape, message))
        }
    }
}

fn parse_json(json: &str) -> Result<Value, Failure> {
    serde_json::from_str(json).map_err(|err| invalid_json(json, &err))
}

/// serde_json's message (with line and column), the text around the error, and a hint.
pub(super) fn invalid_json(json: &str, err: &serde_json::Error) -> Failure {
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

/// Places a decoded call (or its failure) in the text.
pub(super) fn place(
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

pub(super) fn problem(kind: ProblemKind, message: String, span: Span) -> Problem {
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

pub(super) fn extra_call_problem(tool: Option<&str>, span: Span) -> Problem {
    let to = tool.map(|t| format!(" to {t}")).unwrap_or_default();
    let message = format!(
        "Only one tool call per response is allowed; the extra call{to} was not run. Make one call, wait for its result, then make the next."
    );
    problem(ProblemKind::ExtraCall, message, span)
}

/// Everything after the first call: each further call is an extra call, other text is
/// discarded trailing text.
pub(super) fn check_rest(text: &str, from: usize) -> Vec<Problem> {
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
