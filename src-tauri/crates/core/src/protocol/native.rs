//! The conversation as a model that takes native tool calls reads it, in the chat shape
//! OpenAI's API set and Hugging Face chat templates share: the tools as function
//! declarations, a call as the assistant message's `tool_calls`, a result as a `tool` message
//! naming its call.
//!
//! The history keeps every call both as the text the agent read it from (whatever the dialect)
//! and as the call it read ([`MadeCall`]); these functions send the call, so a server and a
//! model's own template both see their format without the text being read again.

use crate::model::{MadeCall, Message, Role};
use crate::protocol::markers::{leading_system_messages, tool_error_text};
use crate::tools::ToolSpec;
use serde_json::{json, Value};

/// How a call's arguments are given: OpenAI's API takes them as a JSON string; chat templates
/// take the object itself (they write it with `tojson`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arguments {
    JsonString,
    Object,
}

/// The tools as function declarations.
pub fn native_tools(specs: &[ToolSpec]) -> Vec<Value> {
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

/// The conversation in the structured form: an assistant message that made a call carries it
/// as `tool_calls` (its text before the call as `content`), and a result is a `tool` message
/// naming that call (also when the call was not run, or was a server's call refused as
/// invalid). An invalid call written in text never became a call, so the model reads its
/// refusal as the user's reply. The opening system messages are joined, as
/// many templates take one.
pub fn native_messages(messages: &[Message], arguments: Arguments) -> Vec<Value> {
    let opening = leading_system_messages(messages);
    let mut native = Vec::with_capacity(messages.len());
    if opening > 0 {
        let parts: Vec<&str> = messages[..opening]
            .iter()
            .map(|m| m.content.as_str())
            .collect();
        native.push(json!({"role": "system", "content": parts.join("\n\n")}));
    }
    for message in &messages[opening..] {
        native.push(match (message.role, &message.call_id) {
            (Role::Assistant, Some(id)) => match &message.call {
                Some(call) => assistant_call(id, call, arguments),
                None => json!({"role": "assistant", "content": message.content}),
            },
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
    native
}

/// An assistant message that made `call`, as `tool_calls` (what it said first as `content`).
fn assistant_call(id: &str, call: &MadeCall, arguments: Arguments) -> Value {
    let text = (!call.said.is_empty()).then_some(call.said.as_str());
    let args = match arguments {
        Arguments::JsonString => Value::String(call.args.to_string()),
        Arguments::Object => call.args.clone(),
    };
    json!({
        "role": "assistant",
        "content": text,
        "tool_calls": [{
            "id": id,
            "type": "function",
            "function": {"name": call.tool, "arguments": args},
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history() -> Vec<Message> {
        vec![
            Message::new(Role::System, "rules"),
            Message::new(Role::System, "map"),
            Message::new(Role::User, "version?"),
            Message::assistant_call(
                "call-1",
                "Let me look.\n<TOOL_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"package.json\"}}\n</TOOL_CALL>",
                MadeCall {
                    said: "Let me look.".into(),
                    tool: "read_file".into(),
                    args: json!({"path": "package.json"}),
                },
            ),
            Message::tool_result("call-1", serde_json::json!({"success": true}).into()),
            Message::new(Role::Assistant, "<TOOL_CALL>{bad</TOOL_CALL>"),
            Message::call_rejected("The JSON is broken at column 2."),
        ]
    }

    #[test]
    fn calls_become_tool_calls_and_results_tool_messages() {
        let native = native_messages(&history(), Arguments::JsonString);
        assert_eq!(
            native[0],
            json!({"role": "system", "content": "rules\n\nmap"})
        );
        assert_eq!(native[2]["content"], "Let me look.");
        assert_eq!(native[2]["tool_calls"][0]["id"], "call-1");
        assert_eq!(native[2]["tool_calls"][0]["function"]["name"], "read_file");
        assert_eq!(
            native[2]["tool_calls"][0]["function"]["arguments"],
            r#"{"path":"package.json"}"#
        );
        assert_eq!(
            native[3],
            json!({"role": "tool", "tool_call_id": "call-1", "content": "{\"success\":true}"})
        );
        assert_eq!(native[4]["role"], "assistant");
        assert_eq!(native[5]["role"], "user");
        assert!(native[5]["content"]
            .as_str()
            .unwrap()
            .ends_with("The JSON is broken at column 2."));
    }

    #[test]
    fn a_template_gets_the_call_the_agent_read_with_its_arguments_as_an_object() {
        // The text is not read again: what is sent is the call kept beside it.
        let hermes = Message::assistant_call(
            "call-1",
            "<tool_call>\n{\"name\": \"list_files\", \"arguments\": {}}\n</tool_call>",
            MadeCall::new("read_file", json!({"path": "a.md"})),
        );
        let native = native_messages(&[hermes], Arguments::Object);
        assert_eq!(native[0]["content"], Value::Null);
        assert_eq!(native[0]["tool_calls"][0]["function"]["name"], "read_file");
        assert_eq!(
            native[0]["tool_calls"][0]["function"]["arguments"],
            json!({"path": "a.md"})
        );
    }
}
