//! Compaction before the wall, its first stage: when the last step filled most of the model's
//! context, the results of the calls of earlier turns are shortened to one line each ("12 files
//! in src", "src/a.ts, 120 lines") before the next step, so the conversation goes on instead of
//! having its oldest turns dropped. The calls stay, and so does the current turn; the full
//! results stay in the transcript (the events hold them).

use crate::model::Message;
use serde_json::{json, Value};

/// The share of the context past which old results are shortened before the next step.
pub const COMPACT_AT: f64 = 0.75;

/// What a shortened result says about itself.
const SHORTENED: &str = "to save context; the full result is no longer shown";

/// A result, as the model reads it, shortened to what it held in one line.
pub fn shortened(result: &str) -> String {
    let (success, summary) = match serde_json::from_str::<Value>(result) {
        Ok(value) => (value["success"] != false, summary_of(&value)),
        Err(_) => (
            true,
            format!("{} characters of text", result.chars().count()),
        ),
    };
    json!({"success": success, "summary": summary, "shortened": SHORTENED}).to_string()
}

fn summary_of(value: &Value) -> String {
    let data = &value["data"];
    let text = |key: &str| data[key].as_str().unwrap_or_default().to_string();
    if value["success"] == false {
        let error: String = value["error"]
            .as_str()
            .unwrap_or("an error")
            .chars()
            .take(120)
            .collect();
        return format!("failed: {error}");
    }
    if let Some(lines) = data["total_lines"].as_u64() {
        return format!("{}, {lines} lines", text("path"));
    }
    if data["matches"].is_array() {
        return format!(
            "{} matches for \"{}\"",
            data["count"].as_u64().unwrap_or(0),
            text("query")
        );
    }
    if data["files"].is_array() {
        return format!(
            "{} files in {}",
            data["count"].as_u64().unwrap_or(0),
            text("directory")
        );
    }
    format!("{} characters of data", data.to_string().len())
}

/// Shortens the tool results among `history[..before]` that are not short already; returns
/// how many it shortened.
pub fn shorten_old_results(history: &mut [Message], before: usize) -> usize {
    let mut count = 0;
    let before = before.min(history.len());
    for message in history[..before]
        .iter_mut()
        .filter(|m| m.is_tool_result() && !m.content.contains(SHORTENED))
    {
        message.content = shortened(&message.content);
        count += 1;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_is_shortened_to_what_it_held() {
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
    fn only_results_before_the_turn_are_shortened_and_only_once() {
        let read =
            r#"{"success":true,"data":{"path":"a","content":"x","total_lines":1},"error":null}"#;
        let mut history = vec![
            Message::new(crate::model::Role::System, "tools"),
            Message::new(crate::model::Role::User, "first"),
            Message::tool_result("call-1", read),
            Message::new(crate::model::Role::User, "second"),
            Message::tool_result("call-2", read),
        ];
        assert_eq!(shorten_old_results(&mut history, 3), 1);
        assert!(history[2].content.contains("shortened"));
        assert_eq!(
            history[4].content, read,
            "the current turn keeps its results"
        );
        assert_eq!(shorten_old_results(&mut history, 3), 0);
        assert_eq!(history[0].content, "tools");
    }
}
