//! Which way a local model is prompted and how it writes a call.
//!
//! A GGUF whose own chat template renders tools, and whose calls Lantern can constrain, is
//! prompted *natively*: the template itself (a Hugging Face Jinja template, rendered with
//! minijinja) gets the conversation and the tools, and the model calls in the form it was
//! trained on — for Hermes- and Qwen-style templates, `<tool_call>{"name": …, "arguments":
//! …}</tool_call>`. Every other model is prompted with Lantern's text protocol through the
//! template llama.cpp applies. Either way a started call is held to the tools' schemas by the
//! same grammar, from the opener of its [`CallSyntax`] on.
//!
//! ```
//! use lantern_llama::template::{NativeTemplate, HERMES};
//!
//! let source = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}";
//! let why = NativeTemplate::new(source, "", "").err().unwrap();
//! assert!(why.contains("takes no tools"));
//! assert_eq!(HERMES.open, "<tool_call>");
//! ```

use lantern_core::model::{Message, Role};
use lantern_core::protocol::native::{native_messages, native_tools, Arguments};
use lantern_core::protocol::{CLOSE_TAG, OPEN_TAG};
use lantern_core::tools::{CallProbe, ToolSpec};
use minijinja::{context, Environment, Error, ErrorKind};
use serde_json::Value;

/// How a model writes a call: the tags around it and the keys of its JSON object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallSyntax {
    /// What a call begins with: a tag before the object, or the object's own beginning.
    pub open: &'static str,
    /// What ends it; empty when the object's end (and the end of the reply) does.
    pub close: &'static str,
    /// The key that names the tool.
    pub name_key: &'static str,
    /// The key that holds the arguments.
    pub args_key: &'static str,
    /// `open` is the beginning of the call's JSON object (Llama 3's `{"name": "`), not a tag
    /// before it: the grammar reads it as the object's first characters.
    pub open_in_json: bool,
    /// The object is the one item of a JSON list (Mistral's `[TOOL_CALLS] [{…}]`).
    pub in_list: bool,
}

impl CallSyntax {
    /// Where the call's JSON object begins in a reply that begins with `open`.
    pub fn json_start(&self) -> usize {
        if self.open_in_json {
            0
        } else {
            self.open.len()
        }
    }
}

/// Lantern's own text protocol: `<TOOL_CALL>{"tool": …, "args": …}</TOOL_CALL>`.
pub const TEXT_PROTOCOL: CallSyntax = CallSyntax {
    open: OPEN_TAG,
    close: CLOSE_TAG,
    name_key: "tool",
    args_key: "args",
    open_in_json: false,
    in_list: false,
};

/// Hermes and Qwen: `<tool_call>{"name": …, "arguments": …}</tool_call>`.
pub const HERMES: CallSyntax = CallSyntax {
    open: "<tool_call>",
    close: "</tool_call>",
    name_key: "name",
    args_key: "arguments",
    open_in_json: false,
    in_list: false,
};

/// Llama 3.1 to 3.3: the bare object `{"name": …, "parameters": …}` as the whole reply, which
/// ends with it.
pub const LLAMA3_JSON: CallSyntax = CallSyntax {
    open: "{\"name\": \"",
    close: "",
    name_key: "name",
    args_key: "parameters",
    open_in_json: true,
    in_list: false,
};

/// Mistral (v3 tokenizer and later): `[TOOL_CALLS] [{"name": …, "arguments": …}]`, ended by the
/// end of the reply.
pub const MISTRAL_LIST: CallSyntax = CallSyntax {
    open: "[TOOL_CALLS]",
    close: "",
    name_key: "name",
    args_key: "arguments",
    open_in_json: false,
    in_list: true,
};

/// The native call form a template's source teaches, if Lantern can constrain it.
fn native_syntax(source: &str) -> Result<CallSyntax, String> {
    if source.contains(HERMES.open) && source.contains(HERMES.close) {
        return Ok(HERMES);
    }
    // Llama 3.x templates ask for exactly this form in words.
    if source.contains("{\"name\": function name, \"parameters\"") {
        return Ok(LLAMA3_JSON);
    }
    // Mistral's later form, `[TOOL_CALLS]name[ARGS]{…}`, has no list.
    if source.contains(MISTRAL_LIST.open) && !source.contains("[ARGS]") {
        return Ok(MISTRAL_LIST);
    }
    let other = ["[TOOL_CALLS]", "<|tool_call_start|>", "functions."]
        .into_iter()
        .find(|marker| source.contains(marker));
    Err(match other {
        Some(marker) => format!(
            "the model's chat template takes tools, but its calls (written after {marker}) are not a form Lantern constrains yet"
        ),
        None => "the model's chat template takes tools, but it does not show a call form Lantern knows".into(),
    })
}

/// Where a reasoning model's thinking begins and ends.
pub const THINK_OPEN: &str = "<think>";
pub const THINK_CLOSE: &str = "</think>";

/// A GGUF's own chat template, rendered with the tools passed natively.
pub struct NativeTemplate {
    env: Environment<'static>,
    bos: String,
    eos: String,
    pub syntax: CallSyntax,
    /// The template knows `<think>`: the model thinks before it replies.
    pub thinks: bool,
}

impl std::fmt::Debug for NativeTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeTemplate")
            .field("syntax", &self.syntax)
            .field("thinks", &self.thinks)
            .finish_non_exhaustive()
    }
}

impl NativeTemplate {
    /// The template of `source` (with the model's `bos` and `eos` text), when it renders tools,
    /// writes calls in a form Lantern constrains, and renders a conversation with tools here;
    /// otherwise why not, in words for the Model page.
    pub fn new(source: &str, bos: &str, eos: &str) -> Result<Self, String> {
        if !source.contains("tools") {
            return Err("the model's chat template takes no tools".into());
        }
        let syntax = native_syntax(source)?;
        let mut env = Environment::new();
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function(
            "raise_exception",
            |message: String| -> Result<String, Error> {
                Err(Error::new(ErrorKind::InvalidOperation, message))
            },
        );
        env.add_template_owned("chat", source.to_string())
            .map_err(|e| format!("the model's chat template cannot be read: {e}"))?;
        let template = NativeTemplate {
            env,
            bos: bos.to_string(),
            eos: eos.to_string(),
            syntax,
            thinks: source.contains(THINK_OPEN),
        };
        // A conversation with a call and its result must render, and the tools must show: the
        // tool's description, which only the list of tools holds (the call names the tool too).
        // The template renders a call from its typed form, so it is never written as text.
        let probe = CallProbe::clock();
        let conversation = [
            Message::new(Role::System, "rules"),
            Message::new(Role::User, probe.question()),
            Message::assistant_call("call-1", "", probe.call()),
            Message::tool_result("call-1", probe.result().into()),
        ];
        let rendered = template
            .render(&conversation, std::slice::from_ref(&probe.tool), true)
            .map_err(|e| format!("the model's chat template does not render here: {e}"))?;
        if !rendered.contains(&probe.tool.description) {
            return Err("the model's chat template rendered no tools".into());
        }
        Ok(template)
    }

    /// Renders `messages` with `tools`; `add_generation_prompt` ends it where the assistant's
    /// reply begins.
    pub fn render(
        &self,
        messages: &[Message],
        tools: &[ToolSpec],
        add_generation_prompt: bool,
    ) -> Result<String, String> {
        let template = self.env.get_template("chat").map_err(|e| e.to_string())?;
        let tools = (!tools.is_empty()).then(|| native_tools(tools));
        let mut messages = native_messages(messages, Arguments::Object);
        for message in &mut messages {
            for id in call_ids(message) {
                *id = Value::String(template_call_id(id.as_str().unwrap_or_default()));
            }
        }
        template
            .render(context! {
                messages => messages,
                tools => tools,
                add_generation_prompt => add_generation_prompt,
                bos_token => self.bos,
                eos_token => self.eos,
            })
            .map_err(|e| {
                let mut text = e.to_string();
                if let Some(detail) = e.detail() {
                    text.push_str(&format!(" ({detail})"));
                }
                text
            })
    }
}

/// The call ids of a message in the native shape: those of its `tool_calls`, or the one its
/// result answers.
fn call_ids(message: &mut Value) -> Vec<&mut Value> {
    let Some(message) = message.as_object_mut() else {
        return Vec::new();
    };
    if message.contains_key("tool_call_id") {
        return message.get_mut("tool_call_id").into_iter().collect();
    }
    match message.get_mut("tool_calls") {
        Some(Value::Array(calls)) => calls.iter_mut().filter_map(|c| c.get_mut("id")).collect(),
        _ => Vec::new(),
    }
}

/// A call id as templates accept it: nine letters and digits (Mistral's templates refuse any
/// other), the id's own letters and digits, the last nine of them, padded with zeros in front.
fn template_call_id(id: &str) -> String {
    let kept: Vec<char> = id.chars().filter(char::is_ascii_alphanumeric).collect();
    let last: String = kept[kept.len().saturating_sub(9)..].iter().collect();
    format!("{last:0>9}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use lantern_core::model::MadeCall;
    use lantern_core::tool_result::ShownResult;
    use lantern_core::toolbox::Toolbox;

    const HERMES_TEMPLATE: &str = include_str!("../../../../tests/templates/chatml-tools.jinja");

    /// The built-in tools, as a request offers them.
    fn standard_specs() -> Vec<ToolSpec> {
        Toolbox::standard().specs().to_vec()
    }

    /// A system prompt, a question, the call that reads `a.md` (as the model wrote it: `call`)
    /// and `result`.
    fn one_call(call: &str, result: &str) -> [Message; 4] {
        let read = MadeCall::new("read_file", serde_json::json!({"path": "a.md"}));
        [
            Message::new(Role::System, "Be brief."),
            Message::new(Role::User, "What is in a.md?"),
            Message::assistant_call("call-1", call, read),
            Message::tool_result("call-1", ShownResult::from_json(result).unwrap()),
        ]
    }

    #[test]
    fn a_hermes_template_renders_the_tools_the_call_and_the_result() {
        let template = NativeTemplate::new(HERMES_TEMPLATE, "", "<|im_end|>").unwrap();
        assert_eq!(template.syntax, HERMES);
        let messages = one_call(
            "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.md\"}}\n</tool_call>",
            "{\"content\":\"hello\"}",
        );
        let text = template.render(&messages, &standard_specs(), true).unwrap();
        assert!(text.starts_with("<|im_start|>system\nBe brief.\n\nYou can call functions."));
        assert!(text.contains("\"name\":\"read_file\""), "{text}");
        assert!(text.contains(
            "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\":\"a.md\"}}\n</tool_call>\n<|im_end|>"
        ));
        assert!(text.contains(
            "<|im_start|>user\n<tool_response>\n{\"content\":\"hello\"}\n</tool_response><|im_end|>"
        ));
        assert!(text.ends_with("<|im_start|>assistant\n"));
    }

    #[test]
    fn a_llama_3_template_is_answered_with_the_bare_object() {
        let source = include_str!("../../../../tests/templates/llama3-tools.jinja");
        let template = NativeTemplate::new(source, "<|begin_of_text|>", "<|eot_id|>").unwrap();
        assert_eq!(template.syntax, LLAMA3_JSON);
        let messages = one_call(
            "{\"name\": \"read_file\", \"parameters\": {\"path\": \"a.md\"}}",
            "{\"content\":\"hello\"}",
        );
        let text = template.render(&messages, &standard_specs(), true).unwrap();
        assert!(text.starts_with("<|begin_of_text|><|start_header_id|>system"));
        assert!(text.contains("\"parameters\": dictionary of argument name"));
        assert!(text.contains(
            "<|start_header_id|>assistant<|end_header_id|>\n\n{\"name\": \"read_file\", \"parameters\": {\"path\":\"a.md\"}}<|eot_id|>"
        ), "{text}");
        assert!(
            text.contains("<|start_header_id|>ipython<|end_header_id|>\n\n{\"content\":\"hello\"}")
        );
        assert!(text.ends_with("<|start_header_id|>assistant<|end_header_id|>\n\n"));
    }

    #[test]
    fn a_mistral_template_gets_ids_it_accepts_and_its_call_list() {
        let source = include_str!("../../../../tests/templates/mistral-tools.jinja");
        let template = NativeTemplate::new(source, "<s>", "</s>").unwrap();
        assert_eq!(template.syntax, MISTRAL_LIST);
        let messages = one_call(
            "[TOOL_CALLS] [{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.md\"}}]",
            "{\"content\":\"hello\"}",
        );
        let text = template.render(&messages, &standard_specs(), true).unwrap();
        assert!(text.starts_with("<s>[AVAILABLE_TOOLS] [{"), "{text}");
        assert!(text.contains(
            "[TOOL_CALLS] [{\"name\": \"read_file\", \"arguments\": {\"path\":\"a.md\"}, \"id\": \"0000call1\"}]</s>"
        ), "{text}");
        assert!(text.ends_with(
            "[TOOL_RESULTS] {\"content\": \"{\\\"content\\\":\\\"hello\\\"}\", \"call_id\": \"0000call1\"}[/TOOL_RESULTS]"
        ), "{text}");
        assert_eq!(template_call_id("call_0123456789ab"), "3456789ab");
    }

    #[test]
    fn templates_that_cannot_be_used_natively_say_why() {
        let plain = "{% for m in messages %}{{ m.content }}{% endfor %}";
        assert!(NativeTemplate::new(plain, "", "")
            .unwrap_err()
            .contains("takes no tools"));
        let mistral =
            "{% if tools %}[AVAILABLE_TOOLS]{{ tools | tojson }}{% endif %}[TOOL_CALLS]name[ARGS]";
        assert!(NativeTemplate::new(mistral, "", "")
            .unwrap_err()
            .contains("after [TOOL_CALLS]"));
        let broken = "{% if tools %}<tool_call></tool_call>{% for %}";
        assert!(NativeTemplate::new(broken, "", "")
            .unwrap_err()
            .contains("cannot be read"));
        let raising = "{% if tools %}<tool_call></tool_call>{{ raise_exception('no system role') }}{% endif %}";
        let why = NativeTemplate::new(raising, "", "").unwrap_err();
        assert!(why.contains("no system role"), "{why}");
    }
}
