//! Native tool calls over the OpenAI API: the tools sent as `tools`, calls read back from the
//! streamed `tool_calls` pieces, results sent as `role: "tool"` messages.
//!
//! The agent reads every call from text, so an assembled native call is written into the reply
//! as the `<TOOL_CALL>` block it stands for; the raw pieces go along for the inspector. The
//! history keeps that text, and [`wire_messages`] turns it back into the API's structured form,
//! so the server sees its own format and the session's history stays one format.
//!
//! Servers disagree on the details, and each is read as it comes: arguments as a JSON string
//! streamed in parts (OpenAI, llama-server, vLLM) or as a whole object (some Ollama versions);
//! an id on the first piece only, or on none.

use lantern_core::model::{Message, Role, ToolChoice};
use lantern_core::protocol::markers::{leading_system_messages, tool_error_text};
use lantern_core::protocol::{parse, CLOSE_TAG, OPEN_TAG};
use lantern_core::tools::ToolSpec;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The tools as the API declares them.
pub(crate) fn wire_tools(specs: &[ToolSpec]) -> Vec<Value> {
    specs
        .iter()
        .map(|spec| {
            json!({
                "type": "function",
                "function": {
                    "name": spec.name,
                    "description": spec.description,
                    "parameters": spec.input_schema,
                }
            })
        })
        .collect()
}

/// `tool_choice` as the API spells it.
pub(crate) fn wire_choice(choice: ToolChoice) -> &'static str {
    match choice {
        ToolChoice::Auto => "auto",
        ToolChoice::Required => "required",
        ToolChoice::None => "none",
    }
}

/// The conversation in the API's structured form: an assistant message that made a call
/// carries it as `tool_calls` (its text before the call as `content`), and a result is a
/// `tool` message naming that call (also when the call was not run). An invalid call never
/// became a call, so the model reads its refusal as the user's reply. The opening system messages are joined, as many templates
/// take one.
pub(crate) fn wire_messages(messages: &[Message]) -> Vec<Value> {
    let opening = leading_system_messages(messages);
    let mut wire = Vec::with_capacity(messages.len());
    if opening > 0 {
        let parts: Vec<&str> = messages[..opening]
            .iter()
            .map(|m| m.content.as_str())
            .collect();
        wire.push(json!({"role": "system", "content": parts.join("\n\n")}));
    }
    for message in &messages[opening..] {
        wire.push(match (message.role, &message.call_id) {
            (Role::Assistant, Some(id)) => assistant_call(id, &message.content),
            // A call that was made but not run (the user said no) still needs its answer.
            (Role::Tool, Some(id)) => {
                json!({"role": "tool", "tool_call_id": id, "content": message.content})
            }
            (Role::Tool, _) => {
                json!({"role": "user", "content": tool_error_text(&message.content)})
            }
            (role, _) => json!({"role": role, "content": message.content}),
        });
    }
    wire
}

/// An assistant message whose text ends in a call, as `tool_calls`.
fn assistant_call(id: &str, content: &str) -> Value {
    let turn = parse(content);
    let Some(call) = turn.call else {
        return json!({"role": "assistant", "content": content});
    };
    let text = (!turn.text.is_empty()).then_some(turn.text);
    json!({
        "role": "assistant",
        "content": text,
        "tool_calls": [{
            "id": id,
            "type": "function",
            "function": {"name": call.tool, "arguments": call.args.to_string()},
        }],
    })
}

/// One call as its pieces arrive.
#[derive(Debug, Default)]
struct PartialCall {
    name: String,
    arguments: String,
}

/// Puts the streamed pieces of a reply's tool calls together, by their `index`.
#[derive(Debug, Default)]
pub(crate) struct CallAssembler {
    calls: BTreeMap<u64, PartialCall>,
    /// Every piece as it came, for the inspector.
    pieces: Vec<Value>,
}

impl CallAssembler {
    pub fn push(&mut self, piece: Value) {
        // A server that sends one call without an index means the first.
        let index = piece.get("index").and_then(Value::as_u64).unwrap_or(0);
        let call = self.calls.entry(index).or_default();
        if let Some(function) = piece.get("function") {
            if let Some(name) = function.get("name").and_then(Value::as_str) {
                call.name.push_str(name);
            }
            match function.get("arguments") {
                Some(Value::String(part)) => call.arguments.push_str(part),
                Some(Value::Null) | None => {}
                Some(whole) => call.arguments = whole.to_string(),
            }
        }
        self.pieces.push(piece);
    }

    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Bytes of names and arguments received, to bound a runaway stream.
    pub fn len(&self) -> usize {
        self.calls
            .values()
            .map(|c| c.name.len() + c.arguments.len())
            .sum()
    }

    /// The calls as `<TOOL_CALL>` blocks, in order. Arguments that are not JSON are written as
    /// they came, so the parser reports exactly where they break; the agent runs the first call
    /// and tells the model the others were not run.
    pub fn text(&self) -> String {
        self.calls
            .values()
            .map(|call| {
                let arguments = match call.arguments.trim() {
                    "" => "{}",
                    given => given,
                };
                let name = serde_json::to_string(call.name.trim()).expect("a string serialises");
                format!("{OPEN_TAG}\n{{\"tool\": {name}, \"args\": {arguments}}}\n{CLOSE_TAG}")
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    pub fn into_pieces(self) -> Vec<Value> {
        self.pieces
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lantern_core::protocol::Outcome;
    use lantern_core::tools::ToolRegistry;

    /// Feeds `arguments` one character per piece, as a server streaming token by token may.
    fn streamed(name: &str, arguments: &str) -> CallAssembler {
        let mut calls = CallAssembler::default();
        calls.push(json!({"index": 0, "id": "c1", "type": "function",
            "function": {"name": name, "arguments": ""}}));
        for c in arguments.chars() {
            calls.push(json!({"index": 0, "function": {"arguments": c.to_string()}}));
        }
        calls
    }

    #[test]
    fn arguments_streamed_char_by_char_become_one_valid_call() {
        let calls = streamed("read_file", r#"{"path": "src/a \"b\".ts"}"#);
        let outcome =
            lantern_core::protocol::interpret(&parse(&calls.text()), &ToolRegistry::standard());
        let Outcome::ToolCall { tool, args, .. } = outcome else {
            panic!("not a call: {outcome:?}");
        };
        assert_eq!(tool, "read_file");
        assert_eq!(args, json!({"path": "src/a \"b\".ts"}));
        assert_eq!(calls.into_pieces().len(), 27);
    }

    #[test]
    fn arguments_given_as_an_object_are_taken_whole() {
        let mut calls = CallAssembler::default();
        calls.push(json!({"function": {"name": "list_files", "arguments": {"directory": "."}}}));
        let turn = parse(&calls.text());
        assert_eq!(turn.call.unwrap().args, json!({"directory": "."}));
    }

    #[test]
    fn several_calls_keep_their_order_and_the_extra_ones_are_reported() {
        let mut calls = CallAssembler::default();
        calls.push(json!({"index": 1, "function": {"name": "list_files", "arguments": "{}"}}));
        calls.push(
            json!({"index": 0, "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}}),
        );
        let turn = parse(&calls.text());
        assert_eq!(turn.call.unwrap().tool, "read_file");
        assert!(turn
            .problems
            .iter()
            .any(|p| p.message.contains("was not run")));
    }

    #[test]
    fn broken_arguments_are_reported_where_they_break() {
        let calls = streamed("read_file", r#"{"path": "a"#);
        let turn = parse(&calls.text());
        assert!(turn.call.is_none());
        assert!(turn.fatal_problem().is_some(), "{turn:?}");
    }

    #[test]
    fn history_is_sent_with_tool_calls_and_tool_messages() {
        let history = vec![
            Message::new(Role::System, "rules"),
            Message::new(Role::System, "map"),
            Message::new(Role::User, "version?"),
            Message::assistant_call(
                "call-1",
                "Let me look.\n<TOOL_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"package.json\"}}\n</TOOL_CALL>",
            ),
            Message::tool_result("call-1", r#"{"success":true}"#),
            Message::new(Role::Assistant, "<TOOL_CALL>{bad</TOOL_CALL>"),
            Message::call_rejected("The JSON is broken at column 2."),
        ];
        let wire = wire_messages(&history);
        assert_eq!(
            wire[0],
            json!({"role": "system", "content": "rules\n\nmap"})
        );
        assert_eq!(wire[2]["content"], "Let me look.");
        assert_eq!(wire[2]["tool_calls"][0]["id"], "call-1");
        assert_eq!(wire[2]["tool_calls"][0]["function"]["name"], "read_file");
        assert_eq!(
            wire[2]["tool_calls"][0]["function"]["arguments"],
            r#"{"path":"package.json"}"#
        );
        assert_eq!(
            wire[3],
            json!({"role": "tool", "tool_call_id": "call-1", "content": "{\"success\":true}"})
        );
        assert_eq!(wire[4]["role"], "assistant");
        assert_eq!(wire[5]["role"], "user");
        assert!(wire[5]["content"]
            .as_str()
            .unwrap()
            .ends_with("The JSON is broken at column 2."));
    }

    #[test]
    fn tools_are_declared_as_functions_with_their_schemas() {
        let registry = ToolRegistry::standard();
        let specs: Vec<ToolSpec> = registry.specs().into_iter().cloned().collect();
        let tools = wire_tools(&specs);
        assert_eq!(tools.len(), specs.len());
        assert_eq!(tools[0]["type"], "function");
        assert_eq!(tools[0]["function"]["name"], specs[0].name);
        assert_eq!(tools[0]["function"]["parameters"], specs[0].input_schema);
    }
}
