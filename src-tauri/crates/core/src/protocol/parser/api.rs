//! A server's own tool calls (the API's `tool_calls`). They come structured and are read as
//! they are; only their arguments, which the API sends as the text of a JSON object, are
//! decoded, with the same reports as a call written in text. A reply's first call is the one
//! run, whether written in its text or returned beside it; every later one is an extra call.

use super::read::{args_object, extra_call_problem, invalid_json, problem};
use super::{Dialect, Problem, RawCall, Span, Turn};
use crate::model::ApiCall;
use serde_json::{json, Value};

/// `turn`, the reply's text as parsed, with the server's `calls` after it, in order.
pub fn with_api_calls(mut turn: Turn, calls: &[ApiCall]) -> Turn {
    // The calls came after the text, outside it: an empty span at its end.
    let after = Span {
        start: turn.raw.len(),
        end: turn.raw.len(),
    };
    for call in calls {
        if turn.call.is_some() || turn.fatal_problem().is_some() {
            let name = call.name.trim();
            turn.problems.push(extra_call_problem(Some(name), after));
            continue;
        }
        turn.called_through_api = true;
        match read_api_call(call, after) {
            Ok(read) => turn.call = Some(read),
            Err(problem) => turn.problems.push(problem),
        }
    }
    turn
}

fn read_api_call(call: &ApiCall, at: Span) -> Result<RawCall, Problem> {
    let arguments = match call.arguments.trim() {
        "" => "{}",
        given => given,
    };
    let fail = |(kind, message)| problem(kind, message, at);
    let value: Value =
        serde_json::from_str(arguments).map_err(|err| fail(invalid_json(arguments, &err)))?;
    let args = args_object(value, "\"arguments\"").map_err(fail)?;
    let tool = call.name.trim().to_string();
    Ok(RawCall {
        raw: json!({"name": tool, "arguments": args}).to_string(),
        tool,
        args,
        reasoning: None,
        dialect: Dialect::Api,
        span: at,
    })
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;
    use crate::protocol::ProblemKind;

    fn call(name: &str, arguments: &str) -> ApiCall {
        ApiCall {
            id: Some("c1".into()),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    #[test]
    fn a_server_call_is_taken_as_it_came_beside_the_text() {
        let turn = with_api_calls(
            parse("Let me look."),
            &[call("read_file", r#"{"path": "a \"b\".ts"}"#)],
        );
        let read = turn.call.clone().expect("a call");
        assert_eq!(read.tool, "read_file");
        assert_eq!(read.args, json!({"path": "a \"b\".ts"}));
        assert_eq!(read.dialect, Dialect::Api);
        assert_eq!(turn.text, "Let me look.");
        assert_eq!(read.span, Span { start: 12, end: 12 });
        assert_eq!(turn.reply_until(read.span.end), "Let me look.");
        assert!(turn.problems.is_empty());
    }

    #[test]
    fn no_arguments_are_an_empty_object_and_doubly_encoded_ones_are_decoded() {
        let turn = with_api_calls(parse(""), &[call(" get_current_time ", "  ")]);
        let read = turn.call.unwrap();
        assert_eq!(
            (read.tool.as_str(), read.args),
            ("get_current_time", json!({}))
        );
        let turn = with_api_calls(parse(""), &[call("read_file", r#""{\"path\": \"a\"}""#)]);
        assert_eq!(turn.call.unwrap().args, json!({"path": "a"}));
    }

    #[test]
    fn arguments_that_are_not_an_object_are_reported_as_a_call_in_text_would_be() {
        let broken = with_api_calls(parse(""), &[call("read_file", r#"{"path": "a""#)]);
        assert!(broken.call.is_none());
        let problem = broken.fatal_problem().expect("fatal");
        assert_eq!(problem.kind, ProblemKind::InvalidJson);
        assert!(
            problem.message.contains("ends too early"),
            "{}",
            problem.message
        );
        let list = with_api_calls(parse(""), &[call("read_file", "[1]")]);
        assert_eq!(
            list.fatal_problem().unwrap().kind,
            ProblemKind::BadCallShape
        );
    }

    #[test]
    fn only_the_first_call_of_a_reply_is_taken() {
        let two = with_api_calls(parse(""), &[call("a", "{}"), call("b", "{}")]);
        assert_eq!(two.call.unwrap().tool, "a");
        assert_eq!(two.problems.len(), 1);
        assert_eq!(two.problems[0].kind, ProblemKind::ExtraCall);
        assert!(two.problems[0].message.contains("call to b"));
        let written_first = with_api_calls(
            parse("<TOOL_CALL>{\"tool\": \"x\", \"args\": {}}</TOOL_CALL>"),
            &[call("b", "{}")],
        );
        assert_eq!(written_first.call.unwrap().tool, "x");
        assert_eq!(written_first.problems[0].kind, ProblemKind::ExtraCall);
    }
}
