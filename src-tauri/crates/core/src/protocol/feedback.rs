//! From a parsed turn to an [`Outcome`], and the `TOOL_ERROR` feedback that teaches the model
//! to do better: the exact problem (JSON position, field path, expected vs got, the closest
//! tool name) and a correct call to copy.

use super::markers::protocol_fragment;
use super::{InvalidCall, Outcome, ParsedCall, Turn, CLOSE_TAG, OPEN_TAG};
use crate::error::ErrorType;
use crate::tools::{closest, normalize_args, ToolRegistry, ToolSpec};
use serde_json::{json, Value};

/// Checks the turn's call against the registry and says what the turn means.
pub fn interpret(turn: &Turn, registry: &ToolRegistry) -> Outcome {
    if let Some(problem) = turn.fatal_problem() {
        return invalid(
            problem.error_type,
            problem.message.clone(),
            None,
            turn,
            registry,
        );
    }
    let Some(call) = &turn.call else {
        // Tag soup is never an answer: the model is told what it wrote and how to do either.
        if let Some(fragment) = protocol_fragment(&turn.text) {
            let message = format!(
                "Your reply looks like a tool call or a tool result but is neither ({})",
                fragment.trim()
            );
            return invalid(ErrorType::ParseError, message, None, turn, registry);
        }
        return Outcome::Text {
            text: turn.text.clone(),
        };
    };
    let mut call = call.clone();
    normalize_args(&mut call.args);
    if registry.spec(&call.tool).is_none() {
        let (message, suggested) = unknown_tool(&call.tool, registry);
        return invalid(
            ErrorType::ValidationFailed,
            message,
            suggested,
            turn,
            registry,
        );
    }
    if let Err(message) = registry.check_args(&call.tool, &call.args) {
        return invalid(
            ErrorType::ValidationFailed,
            message,
            Some(call.tool.as_str()),
            turn,
            registry,
        );
    }
    Outcome::ToolCall(ParsedCall {
        call,
        text: turn.text.clone(),
        problems: turn.problems.clone(),
    })
}

/// What to tell a model that called a tool the registry does not have, and the tool it most
/// likely meant: the same name in other case, or the closest name.
fn unknown_tool<'r>(called: &str, registry: &'r ToolRegistry) -> (String, Option<&'r str>) {
    let names = registry.names();
    if let Some(exact) = names.iter().find(|n| n.eq_ignore_ascii_case(called)) {
        let message =
            format!("Unknown tool \"{called}\": tool names are case-sensitive, write \"{exact}\"");
        return (message, Some(exact));
    }
    let suggested = closest(called, names.iter().copied());
    let suggestion = suggested
        .map(|c| format!(" Did you mean \"{c}\"?"))
        .unwrap_or_default();
    let message = format!(
        "Unknown tool \"{called}\".{suggestion} Available tools: {}",
        names.join(", ")
    );
    (message, suggested)
}

fn invalid(
    error_type: ErrorType,
    message: String,
    tool: Option<&str>,
    turn: &Turn,
    registry: &ToolRegistry,
) -> Outcome {
    let tool = tool
        .or_else(|| turn.call.as_ref().map(|c| c.tool.as_str()))
        .filter(|t| registry.spec(t).is_some());
    // A server that called through its API is told to call that way again, not in text.
    Outcome::Invalid(InvalidCall {
        error_type,
        feedback: match turn.called_through_api {
            true => api_feedback(&message, tool, registry),
            false => feedback(&message, tool, registry),
        },
        message,
        dialect: turn.call.as_ref().map(|c| c.dialect),
        raw: turn.call.as_ref().map(|c| c.raw.clone()),
        problems: turn.problems.clone(),
    })
}

/// `<what was wrong>. … A correct call looks like: <TOOL_CALL>…</TOOL_CALL>` (the model reads it
/// after `TOOL_ERROR:`).
pub(crate) fn feedback(message: &str, tool: Option<&str>, registry: &ToolRegistry) -> String {
    let example = match shown_spec(tool, registry) {
        Some(spec) => example_call(&spec.name, &spec.example),
        None => String::new(),
    };
    let message = message.trim_end_matches('.');
    format!(
        "{message}. Reply with one corrected call, or answer in plain words without tags. A correct call looks like:\n{example}"
    )
}

/// The tool whose example the feedback shows: the one the model meant, else `read_file`.
fn shown_spec<'r>(tool: Option<&str>, registry: &'r ToolRegistry) -> Option<&'r ToolSpec> {
    tool.and_then(|t| registry.spec(t))
        .or_else(|| registry.spec("read_file"))
}

/// `<what was wrong>. … Arguments of read_file look like: {…}`, for a server that made its call
/// through its API (it reads this as the refused call's result).
fn api_feedback(message: &str, tool: Option<&str>, registry: &ToolRegistry) -> String {
    let example = match shown_spec(tool, registry) {
        Some(spec) => format!(" Arguments of {} look like: {}", spec.name, spec.example),
        None => String::new(),
    };
    let message = message.trim_end_matches('.');
    format!(
        "{message}. Call a tool again with corrected arguments, or answer in plain words.{example}"
    )
}

/// A complete call in the native dialect, as the model should write it.
pub(crate) fn example_call(tool: &str, args: &Value) -> String {
    let body = json!({"tool": tool, "args": args, "reasoning": "what this call is for"});
    format!("{OPEN_TAG}\n{body}\n{CLOSE_TAG}")
}
