//! Native tool calls over the OpenAI API: the tools sent as `tools`, calls read back from the
//! streamed `tool_calls` pieces, results sent as `role: "tool"` messages.
//!
//! An assembled call is handed to the agent as it came ([`ApiCall`]), beside the reply's text,
//! never written into it; the agent decodes its arguments (which the server sends as a JSON
//! string) once, with the same error reports as any call. The raw pieces go along for the
//! inspector. The history keeps the call typed, and [`native_messages`] sends it in the API's
//! structured form, so the server sees its own format.
//!
//! Servers disagree on the details, and each is read as it comes: arguments as a JSON string
//! streamed in parts (OpenAI, llama-server, vLLM) or as a whole object (some Ollama versions);
//! an id on the first piece only, or on none.

use lantern_core::model::{ApiCall, ToolChoice};
use serde_json::Value;
use std::collections::BTreeMap;

/// `tool_choice` as the API spells it.
pub(crate) fn wire_choice(choice: ToolChoice) -> &'static str {
    match choice {
        ToolChoice::Auto => "auto",
        ToolChoice::Required => "required",
        ToolChoice::None => "none",
    }
}

/// Puts the streamed pieces of a reply's tool calls together, by their `index`.
#[derive(Debug, Default)]
pub(crate) struct CallAssembler {
    /// Each call as its pieces arrive; its id from the first piece that carries one.
    calls: BTreeMap<u64, ApiCall>,
    /// Every piece as it came, for the inspector.
    pieces: Vec<Value>,
}

impl CallAssembler {
    pub fn push(&mut self, piece: Value) {
        // A server that sends one call without an index means the first.
        let index = piece.get("index").and_then(Value::as_u64).unwrap_or(0);
        let call = self.calls.entry(index).or_default();
        if let Some(id) = piece
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
        {
            call.id.get_or_insert_with(|| id.to_string());
        }
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

    /// The calls, in order, as they came: arguments that are not JSON are kept as they came,
    /// so the agent reports exactly where they break; it runs the first call and tells the
    /// model the others were not run.
    pub fn calls(&self) -> Vec<ApiCall> {
        self.calls.values().cloned().collect()
    }

    pub fn into_pieces(self) -> Vec<Value> {
        self.pieces
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lantern_core::protocol::native::native_tools;
    use lantern_core::protocol::{parse, with_api_calls, Outcome, Turn};
    use lantern_core::tools::ToolRegistry;
    use lantern_core::tools::ToolSpec;
    use serde_json::json;

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

    /// The reply the agent reads: no text, the assembled calls beside it.
    fn read(calls: &CallAssembler) -> Turn {
        with_api_calls(parse(""), &calls.calls())
    }

    #[test]
    fn arguments_streamed_char_by_char_become_one_valid_call() {
        let calls = streamed("read_file", r#"{"path": "src/a \"b\".ts"}"#);
        assert_eq!(calls.calls()[0].id.as_deref(), Some("c1"));
        let outcome = lantern_core::protocol::interpret(&read(&calls), &ToolRegistry::standard());
        let Outcome::ToolCall(parsed) = outcome else {
            panic!("not a call: {outcome:?}");
        };
        assert_eq!(parsed.call.tool, "read_file");
        assert_eq!(parsed.call.args, json!({"path": "src/a \"b\".ts"}));
        assert_eq!(calls.into_pieces().len(), 27);
    }

    #[test]
    fn arguments_given_as_an_object_are_taken_whole() {
        let mut calls = CallAssembler::default();
        calls.push(json!({"function": {"name": "list_files", "arguments": {"directory": "."}}}));
        let turn = read(&calls);
        assert_eq!(turn.call.unwrap().args, json!({"directory": "."}));
    }

    #[test]
    fn several_calls_keep_their_order_and_the_extra_ones_are_reported() {
        let mut calls = CallAssembler::default();
        calls.push(json!({"index": 1, "function": {"name": "list_files", "arguments": "{}"}}));
        calls.push(
            json!({"index": 0, "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}}),
        );
        let turn = read(&calls);
        assert_eq!(turn.call.unwrap().tool, "read_file");
        assert!(turn
            .problems
            .iter()
            .any(|p| p.message.contains("was not run")));
    }

    #[test]
    fn broken_arguments_are_reported_where_they_break() {
        let calls = streamed("read_file", r#"{"path": "a"#);
        let turn = read(&calls);
        assert!(turn.call.is_none());
        assert!(turn.fatal_problem().is_some(), "{turn:?}");
    }

    #[test]
    fn tools_are_declared_as_functions_with_their_schemas() {
        let registry = ToolRegistry::standard();
        let specs: Vec<ToolSpec> = registry.specs().into_iter().cloned().collect();
        let tools = native_tools(&specs);
        assert_eq!(tools.len(), specs.len());
        assert_eq!(tools[0]["type"], "function");
        assert_eq!(tools[0]["function"]["name"], specs[0].name);
        assert_eq!(tools[0]["function"]["parameters"], specs[0].input_schema);
    }
}
