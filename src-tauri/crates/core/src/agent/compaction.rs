//! Compaction before the wall. When the last step filled most of the model's context, before
//! the next step:
//!
//! 1. the results of the calls of earlier turns are shortened to one line each ("12 files in
//!    src", "src/a.ts, 120 lines"); the calls stay;
//! 2. when there is nothing left to shorten, the earlier turns are replaced by a summary the
//!    loaded model writes of them (bounded), as one exchange: never the system prompt, never the
//!    current turn;
//! 3. what still does not fit is dropped from the front by the backend (`context_trimmed`).
//!
//! Each is an event the chat shows; the transcript keeps everything whole (the events hold it).

use super::Session;
use crate::event::Event;
use crate::model::{
    CancelToken, Flow, GenerateRequest, Message, Model, ModelError, Role, ToolChoice,
    SUMMARY_PREFIX,
};
use crate::protocol::markers::leading_system_messages;
use crate::seen_result::SeenResult;
use crate::tool_result::{ShownResult, CUT_NOTE};
use serde_json::json;

/// The share of the context past which old results are shortened before the next step.
pub const COMPACT_AT: f64 = 0.75;

impl Session {
    /// Compacts the history before step `step` of the turn that starts at `turn_start`: the
    /// first stage that frees something, said in a `context_compacted` event. Returns where the
    /// turn starts now (a summary replaces several messages with two).
    pub(super) fn compact(
        &mut self,
        step: usize,
        turn_start: usize,
        model: &mut dyn Model,
        cancel: &CancelToken,
        emit: &mut dyn FnMut(&Event),
    ) -> usize {
        let shortened = shorten_old_results(&mut self.history, turn_start);
        let summarised = match shortened {
            // A model that cannot summarise leaves the history as it is; the backend then
            // drops what does not fit.
            0 => summarise_earlier_turns(&mut self.history, turn_start, model, cancel)
                .unwrap_or(None),
            _ => None,
        };
        if shortened > 0 || summarised.is_some() {
            emit(&Event::ContextCompacted {
                step,
                results_shortened: shortened,
                messages_summarised: summarised.as_ref().map_or(0, |s| s.0),
                summary: summarised.as_ref().map(|s| s.1.clone()),
            });
        }
        match summarised {
            Some((replaced, _)) => turn_start + 2 - replaced,
            None => turn_start,
        }
    }
}

/// A tool message with about half of what it holds cut (see [`ShownResult::halved`]; a
/// refusal's text loses its second half), or `None` when it is too short to cut. For the
/// backend's last resort, when a conversation with nothing left to drop still does not fit its
/// context.
pub fn cut_to_fit(message: &Message) -> Option<Message> {
    /// A refusal shorter than this is not cut further.
    const MIN_CUT_CHARS: usize = 200;
    if let Some(result) = message.result() {
        return result.halved().map(|half| message.with_result(half));
    }
    let count = message.content.chars().count();
    (count > MIN_CUT_CHARS).then(|| {
        let kept: String = message.content.chars().take(count / 2).collect();
        let mut refusal = message.clone();
        refusal.content = format!("{kept}\n… {CUT_NOTE}");
        refusal
    })
}

/// What a shortened result says about itself.
const SHORTENED: &str = "to save context; the full result is no longer shown";

/// A result, as the model reads it, shortened to what it held in one line.
pub fn shortened(result: &ShownResult) -> ShownResult {
    let seen = result.seen();
    let success = seen.success != Some(false);
    let summary = summary_of(&seen, result);
    json!({"success": success, "summary": summary, "shortened": SHORTENED}).into()
}

fn summary_of(seen: &SeenResult, result: &ShownResult) -> String {
    let data = &seen.data;
    let text = |member: &Option<String>| member.clone().unwrap_or_default();
    if seen.success == Some(false) {
        let error = seen.error.as_deref().unwrap_or("an error");
        return format!("failed: {}", error.chars().take(120).collect::<String>());
    }
    let count = data.count.unwrap_or(0);
    if let Some(lines) = data.total_lines {
        return format!("{}, {lines} lines", text(&data.path));
    }
    if data.matches.is_some() {
        return format!("{count} matches for \"{}\"", text(&data.query));
    }
    if data.files.is_some() {
        return format!("{count} files in {}", text(&data.directory));
    }
    format!("{} characters of data", result.data_chars())
}

/// Shortens the tool results among `history[..before]` that are not short already; returns
/// how many it shortened.
pub fn shorten_old_results(history: &mut [Message], before: usize) -> usize {
    let mut count = 0;
    let before = before.min(history.len());
    for message in history[..before]
        .iter_mut()
        .filter(|m| !m.content.contains(SHORTENED))
    {
        if let Some(result) = message.result() {
            *message = message.with_result(shortened(result));
            count += 1;
        }
    }
    count
}

/// What the model is asked when it summarises.
const SUMMARY_PROMPT: &str = "Summarise the conversation below for yourself, in at most five short lines: what the user asked, which files were read, searched or changed, and what was found or answered. Keep file names, numbers and names exactly. Plain text, no tags.";

/// The model's side of the summary exchange, so user and assistant still alternate.
const SUMMARY_ACK: &str = "Noted; I will go on from there.";

/// The most of the earlier conversation the model is shown to summarise (its end is kept).
const MAX_SUMMARY_INPUT_CHARS: usize = 4000;
/// The most a result is quoted with, in that text.
const MAX_QUOTED_RESULT_CHARS: usize = 300;
/// The longest summary.
const SUMMARY_TOKENS: usize = 160;

/// Replaces the earlier turns (`history[opening..before]`) with a summary `model` writes of
/// them; returns how many messages it replaced and the summary. Nothing happens when there is
/// nothing to summarise (no earlier turn, or only an earlier summary) or the model wrote none.
pub fn summarise_earlier_turns(
    history: &mut Vec<Message>,
    before: usize,
    model: &mut dyn Model,
    cancel: &CancelToken,
) -> Result<Option<(usize, String)>, ModelError> {
    let opening = leading_system_messages(history);
    let before = before.min(history.len());
    if before <= opening {
        return Ok(None);
    }
    let earlier = &history[opening..before];
    let only_a_summary = earlier.len() <= 2 && earlier[0].content.starts_with(SUMMARY_PREFIX);
    if earlier.len() < 2 || only_a_summary {
        return Ok(None);
    }
    let messages = [
        Message::new(Role::System, SUMMARY_PROMPT),
        Message::new(Role::User, conversation_text(earlier)),
    ];
    let request =
        GenerateRequest::new(&messages, SUMMARY_TOKENS, cancel).with_tool_choice(ToolChoice::None);
    let generation = model.generate(&request, &mut |_| Flow::Continue)?;
    let summary = crate::protocol::parse(&generation.text).text;
    if summary.is_empty() {
        return Ok(None);
    }
    let replaced = earlier.len();
    history.splice(
        opening..before,
        [
            Message::new(Role::User, format!("{SUMMARY_PREFIX}\n{summary}")),
            Message::new(Role::Assistant, SUMMARY_ACK),
        ],
    );
    Ok(Some((replaced, summary)))
}

/// The earlier conversation as plain lines for the summary, results quoted short, its end kept
/// when it is long.
fn conversation_text(messages: &[Message]) -> String {
    let lines: Vec<String> = messages
        .iter()
        .map(|m| match m.role {
            Role::User => format!("User: {}", m.content),
            // A server's own call never was text: the summary names it.
            Role::Assistant => match m.unwritten_call() {
                Some(call) => format!(
                    "Assistant: {} [called {} {}]",
                    m.content, call.tool, call.args
                ),
                None => format!("Assistant: {}", m.content),
            },
            Role::Tool => {
                let quoted: String = m.content.chars().take(MAX_QUOTED_RESULT_CHARS).collect();
                format!("Tool result: {quoted}")
            }
            Role::System => format!("Note: {}", m.content),
        })
        .collect();
    let text = lines.join("\n");
    let count = text.chars().count();
    if count <= MAX_SUMMARY_INPUT_CHARS {
        return text;
    }
    text.chars().skip(count - MAX_SUMMARY_INPUT_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MadeCall;

    fn result(text: &str) -> ShownResult {
        ShownResult::from_json(text).unwrap()
    }

    #[test]
    fn a_result_is_shortened_to_what_it_held() {
        let shortened = |text: &str| shortened(&result(text)).to_string();
        let read = r#"{"success":true,"data":{"path":"src/a.ts","content":"…","total_lines":120},"error":null}"#;
        assert_eq!(
            shortened(read),
            r#"{"success":true,"summary":"src/a.ts, 120 lines","shortened":"to save context; the full result is no longer shown"}"#
        );
        let search =
            r#"{"success":true,"data":{"query":"total","matches":[],"count":0},"error":null}"#;
        assert!(shortened(search).contains("0 matches for \\\"total\\\""));
        let list =
            r#"{"success":true,"data":{"directory":"src","files":["a"],"count":1},"error":null}"#;
        assert!(shortened(list).contains("1 files in src"));
        let failed = r#"{"success":false,"data":null,"error":"No such file: a.rs","error_type":"not_found"}"#;
        assert!(shortened(failed).contains(r#""success":false"#));
        assert!(shortened(failed).contains("failed: No such file: a.rs"));
    }

    #[test]
    fn the_summary_names_a_call_a_server_made_beside_its_text() {
        let api = Message::assistant_call(
            "c1",
            "",
            MadeCall::new("read_file", serde_json::json!({"path": "a.ts"})),
        );
        let text = Message::assistant_call(
            "c2",
            "<TOOL_CALL>{\"tool\": \"list_files\", \"args\": {}}</TOOL_CALL>",
            MadeCall::new("list_files", serde_json::json!({})),
        );
        let lines = conversation_text(&[api, text]);
        assert!(
            lines.contains(r#"[called read_file {"path":"a.ts"}]"#),
            "{lines}"
        );
        assert!(
            !lines.contains("[called list_files"),
            "a call in the text is there already"
        );
    }

    #[test]
    fn only_results_before_the_turn_are_shortened_and_only_once() {
        let read =
            r#"{"success":true,"data":{"path":"a","content":"x","total_lines":1},"error":null}"#;
        let mut history = vec![
            Message::new(crate::model::Role::System, "tools"),
            Message::new(crate::model::Role::User, "first"),
            Message::tool_result("call-1", result(read)),
            Message::new(crate::model::Role::User, "second"),
            Message::tool_result("call-2", result(read)),
        ];
        assert_eq!(shorten_old_results(&mut history, 3), 1);
        assert!(history[2].content.contains("shortened"));
        assert_eq!(history[2].call_id.as_deref(), Some("call-1"));
        assert_eq!(
            history[2].result().unwrap().seen().success,
            Some(true),
            "a shortened result is still a result"
        );
        assert_eq!(
            history[4].content, read,
            "the current turn keeps its results"
        );
        assert_eq!(shorten_old_results(&mut history, 3), 0);
        assert_eq!(history[0].content, "tools");
    }

    #[test]
    fn a_result_too_big_for_the_context_is_cut_in_half_until_it_is_short() {
        let content = "line\n".repeat(200);
        let read = json!({"success": true, "data": {"path": "big.txt", "content": content, "total_lines": 200}});
        let read = Message::tool_result("call-1", read.into());
        let once = cut_to_fit(&read).unwrap();
        assert_eq!(once.call_id.as_deref(), Some("call-1"));
        let data = once.result().unwrap().seen().data;
        let kept = data.content.unwrap();
        assert!(
            kept.starts_with("line\nline\n") && kept.ends_with(CUT_NOTE),
            "{kept}"
        );
        assert!(kept.len() < 600);
        assert!(once.content.contains(r#""cut_to_fit":true"#));
        assert_eq!(
            data.path.as_deref(),
            Some("big.txt"),
            "the rest of the result stays"
        );
        let refusal = |text: &str| Message::call_rejected(text);
        let cut = cut_to_fit(&refusal(&"x".repeat(1000))).unwrap();
        assert!(cut.content.starts_with(&"x".repeat(500)) && cut.rejected);
        assert_eq!(cut_to_fit(&refusal("short")), None);
    }

    #[test]
    fn earlier_turns_become_one_summary_exchange_and_are_not_summarised_twice() {
        use crate::model::ScriptedModel;
        let mut history = vec![
            Message::new(Role::System, "tools"),
            Message::new(Role::User, "What version is in package.json?"),
            Message::assistant_call(
                "call-1",
                "<TOOL_CALL>{}</TOOL_CALL>",
                MadeCall::new("", serde_json::json!({})),
            ),
            Message::tool_result("call-1", result("{\"success\":true}")),
            Message::new(Role::Assistant, "It is 2.4.1."),
            Message::new(Role::User, "And the name?"),
        ];
        let mut model = ScriptedModel::new(["The user asked for the version: 2.4.1."]);
        let cancel = CancelToken::new();
        let done = summarise_earlier_turns(&mut history, 5, &mut model, &cancel).unwrap();
        assert_eq!(
            done,
            Some((4, "The user asked for the version: 2.4.1.".to_string()))
        );
        assert_eq!(history.len(), 4);
        assert_eq!(history[0].content, "tools", "the system prompt stays");
        assert!(history[1].content.starts_with(SUMMARY_PREFIX));
        assert_eq!(history[2].role, Role::Assistant);
        assert_eq!(
            history[3].content, "And the name?",
            "the current turn stays"
        );
        // What the model was asked: the earlier turns, not the current one.
        let asked = &model.seen[0][1].content;
        assert!(asked.contains("User: What version is in package.json?"));
        assert!(!asked.contains("And the name?"));
        // A summary alone is not summarised again.
        assert_eq!(
            summarise_earlier_turns(&mut history, 3, &mut model, &cancel).unwrap(),
            None
        );
    }
}
