//! Every fixed word of the `<TOOL_CALL>` text protocol, in one place: the tags a call is written
//! in, the openers of the dialects small models use instead, the stop sequences, the prefixes of
//! what the model is told back, and how a typed conversation becomes text for a model that
//! speaks this protocol.
//!
//! Backends never match these words themselves: the agent hands them a typed conversation
//! ([`Message`] with [`Role::Tool`] for results), and a backend that speaks the text protocol
//! renders it with [`text_protocol_messages`].

use super::{Dialect, Turn};
use crate::model::{MadeCall, Message, Role};

/// The opening tag of the native protocol.
pub const OPEN_TAG: &str = "<TOOL_CALL>";
/// The closing tag of the native protocol; generation stops here.
pub const CLOSE_TAG: &str = "</TOOL_CALL>";

/// Stop sequences a backend should end generation at: the native closing tag and the closing
/// tags of the dialects. The stop sequence itself is kept in the text the parser sees.
pub const STOP_SEQUENCES: &[&str] = &[CLOSE_TAG, "</tool_call>", "</function>", "</tool>"];

/// The tag dialects whose opener is a fixed word: the tag without its `>`.
pub(crate) const TAG_OPENERS: [(&str, Dialect); 3] = [
    ("<TOOL_CALL", Dialect::Lantern),
    ("<tool_call", Dialect::Hermes),
    ("<tool", Dialect::ToolTag),
];

/// Mistral's call opener: `[TOOL_CALLS]name[ARGS]{…}` or `[TOOL_CALLS][…]`.
pub(crate) const MISTRAL_OPEN: &str = "[TOOL_CALLS]";
/// Between a Mistral call's name and its arguments.
pub(crate) const MISTRAL_ARGS: &str = "[ARGS]";
/// Llama 3's call opener: `<function=name>{…}</function>`.
pub(crate) const LLAMA_OPEN: &str = "<function=";

/// How a Harmony (gpt-oss) message header may start: `<|start|>assistant…` or `<|channel|>…`.
pub(crate) const HARMONY_STARTS: [&str; 2] = ["<|start|>", "<|channel|>"];
/// Ends a Harmony header; the message follows.
pub(crate) const HARMONY_MESSAGE: &str = "<|message|>";
/// In a Harmony header, names the tool a message is addressed to: `to=functions.NAME`.
pub(crate) const HARMONY_RECIPIENT: &str = "to=";
/// Ends a Harmony call.
pub(crate) const HARMONY_CALL_END: &str = "<|call|>";

/// How a tool result starts when the model reads it.
pub const RESULT_PREFIX: &str = "TOOL_RESULT:";
/// How the refusal of an invalid call starts when the model reads it.
pub const ERROR_PREFIX: &str = "TOOL_ERROR:";

/// Text an answer never contains: the openers of calls in every dialect and the protocol's own
/// prefixes, which small models otherwise parrot back (`<TOOL_CALL_RESULT>`, `TOOL_RESULT: …`).
/// A backend bans these once a step is decided to be an answer.
pub const NOT_IN_ANSWERS: &[&str] = &[
    "<TOOL_",
    "<tool",
    MISTRAL_OPEN,
    LLAMA_OPEN,
    RESULT_PREFIX,
    ERROR_PREFIX,
];

/// The protocol's own words. Whatever they end with (`TOOL_RESULT>`, `TOOL_CALL_RESULT`), text
/// that holds one is talking the protocol, not answering.
pub const PROTOCOL_WORDS: &[&str] = &["TOOL_CALL", "TOOL_RESULT", "TOOL_ERROR"];

/// The key that names a call's tool, as a call writes it.
pub const CALL_KEY: &str = "\"tool\"";

/// The first piece of `text` shaped like the protocol: a call or a result in a near-miss
/// spelling small models write instead of a call or an answer (`<TOML_CALL>`, `</TOUB_RESULT>`,
/// `TOOL_RESULT:`, a bare `{"tool": …}` object). Such text is never a final answer. A protocol
/// word used in a sentence ("you write a TOOL_CALL block") is prose, not protocol.
pub fn protocol_fragment(text: &str) -> Option<&str> {
    let lower = text.to_ascii_lowercase();
    for word in PROTOCOL_WORDS {
        if let Some(at) = protocol_word_at(&lower, &word.to_ascii_lowercase()) {
            return Some(&text[at..at + word.len()]);
        }
    }
    if let Some(at) = protocol_tag_start(text) {
        let end = text[at..].find('>').map_or(text.len(), |i| at + i + 1);
        return Some(&text[at..end]);
    }
    let compact: String = lower.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.contains("{\"tool") || compact.contains("\"arguments\":{") {
        let at = lower
            .find("\"tool")
            .or_else(|| lower.find("\"arguments\""))?;
        let end = text[at..]
            .char_indices()
            .nth(10)
            .map_or(text.len(), |(i, _)| at + i);
        return Some(&text[at..end]);
    }
    None
}

/// Where `word` (lower case, in lower-cased `text`) stands as the protocol writes it: opening a
/// line (after a tag's `<`, `</` or a bracket) or closed like a tag or a label (`>`, `:`, `]`,
/// `{`, the end of the line). In the middle of a sentence it is a word about the protocol.
fn protocol_word_at(text: &str, word: &str) -> Option<usize> {
    text.match_indices(word).map(|(at, _)| at).find(|&at| {
        let before = text[..at].trim_end_matches(['<', '/', '[', '`', ' ', '\t']);
        let opens_a_line = before.is_empty() || before.ends_with('\n');
        let after = text[at + word.len()..].trim_start_matches([' ', '\t']);
        let closed = after.is_empty() || after.starts_with(['>', ':', ']', '{', '\n', '`']);
        opens_a_line || closed
    })
}

/// Where a tag shaped like the protocol's own begins: a name that joins words with an
/// underscore (`<TOML_CALL`, `</tool_result`), or three or more capitals closed like a tag or
/// a label (`<TOUBLE>`, `</TOML>`, `<TOUBLE:`). Prose does not write either; generics
/// (`Vec<T>`, `Option<String>`) and a mention such as "the <TOOL tag" are neither.
pub fn protocol_tag_start(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    (0..bytes.len()).find(|&at| {
        if bytes[at] != b'<' {
            return false;
        }
        let mut i = at + 1;
        if bytes.get(i) == Some(&b'/') {
            i += 1;
        }
        let name = &bytes[i..];
        let letters = name.iter().take_while(|b| b.is_ascii_alphabetic()).count();
        let capitals = name.iter().take_while(|b| b.is_ascii_uppercase()).count();
        (letters >= 2 && name.get(letters) == Some(&b'_'))
            || (capitals >= 3
                && matches!(name.get(capitals), None | Some(b'>' | b':' | b'"' | b'\n')))
    })
}

/// A reply that [`crate::protocol::interpret`] refuses only for looking like the protocol: no
/// call, no fatal problem, but tag soup. It was never an attempt at a call.
pub fn is_protocol_shaped_text(turn: &Turn) -> bool {
    turn.call.is_none() && turn.fatal_problem().is_none() && protocol_fragment(&turn.text).is_some()
}

/// What follows every tool result the model reads: small models otherwise echo the result or
/// repeat their call instead of answering.
pub const FOLLOW_UP_HINT: &str =
    "Answer the user's question with this in plain words, or make one more tool call if you need more.";

/// A tool result as the model reads it: `TOOL_RESULT: {…}` and the [`FOLLOW_UP_HINT`].
pub fn tool_result_text(result: &str) -> String {
    format!("{RESULT_PREFIX} {result}\n{FOLLOW_UP_HINT}")
}

/// The refusal of an invalid call as the model reads it: `TOOL_ERROR: …`.
pub fn tool_error_text(feedback: &str) -> String {
    format!("{ERROR_PREFIX} {feedback}")
}

/// The conversation as a model that speaks the text protocol reads it: tool results and call
/// refusals become user messages with their prefixes; the system messages that open the
/// conversation (the prompt, the project map) become one, since many chat templates take a
/// single system message; everything else stays as it is. A call that was made but not run
/// (the user said no, or a server's call refused as invalid) gets the [`FOLLOW_UP_HINT`] like
/// a result; the refusal of an invalid call written in text carries its own instruction (a
/// corrected call) instead.
pub fn text_protocol_messages(messages: &[Message]) -> Vec<Message> {
    let opening = leading_system_messages(messages);
    let system = (opening > 0).then(|| {
        let parts: Vec<&str> = messages[..opening]
            .iter()
            .map(|m| m.content.as_str())
            .collect();
        Message::new(Role::System, parts.join("\n\n"))
    });
    system
        .into_iter()
        .chain(messages[opening..].iter().map(|m| match m.role {
            Role::Tool if m.rejected && m.call_id.is_some() => Message::new(
                Role::User,
                format!("{}\n{FOLLOW_UP_HINT}", tool_error_text(&m.content)),
            ),
            Role::Tool if m.rejected => Message::new(Role::User, tool_error_text(&m.content)),
            Role::Tool => Message::new(Role::User, tool_result_text(&m.content)),
            // A call a server made through its API never was text: it is written out here.
            Role::Assistant => match m.unwritten_call() {
                Some(call) => Message::new(Role::Assistant, written_call(call)),
                None => Message::new(m.role, m.content.clone()),
            },
            _ => Message::new(m.role, m.content.clone()),
        }))
        .collect()
}

/// `call` as the text protocol writes it, after what was said before it.
pub fn written_call(call: &MadeCall) -> String {
    let tool = serde_json::to_string(&call.tool).expect("a string serialises");
    let block = format!(
        "{OPEN_TAG}\n{{\"tool\": {tool}, \"args\": {}}}\n{CLOSE_TAG}",
        call.args
    );
    match call.said.as_str() {
        "" => block,
        said => format!("{said}\n{block}"),
    }
}

/// How many system messages open the conversation (the prompt and what is fixed with it).
pub fn leading_system_messages(messages: &[Message]) -> usize {
    messages
        .iter()
        .take_while(|m| m.role == Role::System)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MadeCall;

    #[test]
    fn the_opening_system_messages_become_one() {
        let typed = [
            Message::new(Role::System, "tools"),
            Message::new(Role::System, "PROJECT FILES:"),
            Message::new(Role::User, "version?"),
        ];
        let text = text_protocol_messages(&typed);
        assert_eq!(
            text,
            [
                Message::new(Role::System, "tools\n\nPROJECT FILES:"),
                Message::new(Role::User, "version?"),
            ]
        );
    }

    #[test]
    fn tool_messages_become_prefixed_user_text_and_the_rest_stays() {
        let typed = [
            Message::new(Role::System, "tools"),
            Message::new(Role::User, "version?"),
            Message::assistant_call(
                "call-1",
                "<TOOL_CALL>{}</TOOL_CALL>",
                MadeCall::new("", serde_json::json!({})),
            ),
            Message::tool_result("call-1", serde_json::json!({"success": true}).into()),
            Message::call_rejected("unknown tool. A correct call looks like: …"),
        ];
        let text = text_protocol_messages(&typed);
        assert_eq!(text[0], Message::new(Role::System, "tools"));
        assert_eq!(text.len(), typed.len());
        assert_eq!(text[2].role, Role::Assistant);
        assert_eq!(text[2].content, "<TOOL_CALL>{}</TOOL_CALL>");
        assert_eq!(
            text[3],
            Message::new(
                Role::User,
                format!("TOOL_RESULT: {{\"success\":true}}\n{FOLLOW_UP_HINT}")
            )
        );
        assert_eq!(
            text[4],
            Message::new(
                Role::User,
                "TOOL_ERROR: unknown tool. A correct call looks like: …"
            )
        );
        assert!(text.iter().all(|m| m.role != Role::Tool));
    }

    #[test]
    fn a_call_made_through_a_servers_api_is_written_in_the_protocol() {
        let mut made = MadeCall::new("read_file", serde_json::json!({"path": "a"}));
        made.said = "Let me look.".into();
        let typed = [Message::assistant_call("c1", "Let me look.", made)];
        let text = text_protocol_messages(&typed);
        assert_eq!(
            text[0].content,
            "Let me look.\n<TOOL_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\":\"a\"}}\n</TOOL_CALL>"
        );
        let read = super::super::parse(&text[0].content)
            .call
            .expect("one call");
        assert_eq!(read.tool, "read_file");
    }

    #[test]
    fn near_miss_calls_and_results_are_recognised_and_prose_is_not() {
        for (text, fragment) in [
            (
                "<TOUB_RESULT> {\"tool\": \"list_files\"} </TOUB_RESULT>",
                "<TOUB_RESULT>",
            ),
            ("Sure: <TOML_CALL>{}</TOML_CALL>", "<TOML_CALL>"),
            ("TOOL_RESULT: {\"success\": true}", "TOOL_RESULT"),
            ("The file says:\nTOOL_CALL\n{}", "TOOL_CALL"),
            ("Done. [TOOL_CALL] read_file", "TOOL_CALL"),
            ("The call was tool_call", "tool_call"),
            ("</Tool_Output>", "</Tool_Output>"),
            ("<TOUBLE>\n{\"tool}: list_files", "<TOUBLE>"),
            ("The answer. <TOML>", "<TOML>"),
            (
                "<TOUBLE: \"The files in the widgets folder",
                "<TOUBLE: \"The files in the widgets folder",
            ),
            ("{\"tool}: \"x\"", "\"tool}: \"x"),
            ("{\"tool\": \"read_file\", \"args\": {}}", "\"tool\": \"r"),
            (
                "{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}",
                "\"arguments",
            ),
        ] {
            assert_eq!(protocol_fragment(text), Some(fragment), "{text}");
        }
        for prose in [
            "The version is 2.4.1.",
            "Use a < b when comparing, and snake_case names.",
            "Vec<u8> and HashMap<K, V> are generic types.",
            "Option<String> or Result<T, E> or <Ok>",
            "The tool reads files; the argument is a path.",
            "To call a tool you write a TOOL_CALL block; I do not need one here. The answer is 42.",
            "A tool_result message follows each call.",
        ] {
            assert_eq!(protocol_fragment(prose), None, "{prose}");
        }
    }

    #[test]
    fn every_dialect_opener_is_banned_from_answers() {
        for (opener, _) in TAG_OPENERS {
            assert!(
                NOT_IN_ANSWERS
                    .iter()
                    .any(|banned| opener.starts_with(banned)),
                "{opener}"
            );
        }
    }
}
