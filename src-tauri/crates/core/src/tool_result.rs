//! The structured result of a tool call and its model-facing rendering.
//!
//! Every call ends in a [`ToolResult`]: `success`, `data`, `error_message`, `error_type` and
//! `metadata` (timing, size, timestamp). The model reads it as a [`ShownResult`],
//! `{"success": …, "data": …, "error": …}`, bounded to [`MODEL_RESULT_LIMIT`] bytes with an
//! explicit notice when cut. The history keeps that body whole; it becomes text (one line after
//! `TOOL_RESULT:` in the text protocol) only where a backend sends it, and what Lantern reads
//! back from it, it reads typed ([`ShownResult::seen`]).

use crate::error::{ErrorType, ToolError};
use crate::seen_result::SeenResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The most bytes of a `TOOL_RESULT` line the model is shown.
pub const MODEL_RESULT_LIMIT: usize = 12 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Metadata {
    pub execution_time_ms: u64,
    pub data_size_bytes: usize,
    /// Milliseconds since the Unix epoch when the call finished.
    pub timestamp: i64,
    /// For a tool of an MCP server: the request and response exchanged with it, as sent and
    /// received. Shown in the inspector; the model is never given it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exchange: Option<Value>,
}

/// How a call ended: its data, or the error that stopped it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolResult {
    pub success: bool,
    pub data: Option<Value>,
    pub error_message: Option<String>,
    pub error_type: ErrorType,
    /// What the model should do about the error, when there is advice to give.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_hint: Option<String>,
    pub metadata: Metadata,
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl ToolResult {
    pub fn from_outcome(outcome: Result<Value, ToolError>, elapsed: Duration) -> Self {
        let execution_time_ms = elapsed.as_millis() as u64;
        match outcome {
            Ok(data) => {
                let data_size_bytes = serde_json::to_string(&data).map(|s| s.len()).unwrap_or(0);
                ToolResult {
                    success: true,
                    data: Some(data),
                    error_message: None,
                    error_type: ErrorType::None,
                    error_hint: None,
                    metadata: Metadata {
                        execution_time_ms,
                        data_size_bytes,
                        timestamp: now_ms(),
                        exchange: None,
                    },
                }
            }
            Err(err) => Self::failure(err, elapsed),
        }
    }

    pub fn failure(err: ToolError, elapsed: Duration) -> Self {
        ToolResult {
            success: false,
            data: None,
            error_message: Some(err.message),
            error_type: err.kind,
            error_hint: err.hint,
            metadata: Metadata {
                execution_time_ms: elapsed.as_millis() as u64,
                data_size_bytes: 0,
                timestamp: now_ms(),
                exchange: None,
            },
        }
    }

    /// The text of what the model reads ([`shown`](Self::shown)), as a backend sends it.
    pub fn render_for_model(&self) -> String {
        self.shown().to_string()
    }

    /// What the model reads: `{"success":…,"data":…,"error":…}`.
    ///
    /// Bounded to [`MODEL_RESULT_LIMIT`] bytes of text: when the data is larger, the longest
    /// strings in it are shortened (each with a note of how much was cut) until it fits, so the
    /// JSON stays valid and the model still sees the shape of the answer.
    pub fn shown(&self) -> ShownResult {
        self.shown_led_by(Map::new())
    }

    /// [`shown`](Self::shown) with `lead`'s members read before the data (e.g. the lines of a
    /// file that answer the question).
    pub fn shown_led_by(&self, lead: Map<String, Value>) -> ShownResult {
        let error = match (&self.error_message, &self.error_hint) {
            (Some(m), Some(h)) => Value::String(format!("{m} {h}")),
            (Some(m), None) => Value::String(m.clone()),
            _ => Value::Null,
        };
        let mut members = Map::new();
        members.insert("success".into(), Value::Bool(self.success));
        members.extend(lead);
        members.insert("data".into(), self.data.clone().unwrap_or(Value::Null));
        members.insert("error".into(), error);
        let mut body = Value::Object(members);
        if !self.success {
            body["error_type"] = Value::String(self.error_type.to_string());
        }
        let mut text = body.to_string();
        if text.len() > MODEL_RESULT_LIMIT {
            let cut = shrink_strings(&mut body["data"], text.len() - MODEL_RESULT_LIMIT);
            body["truncated"] = Value::String(format!(
                "This result was cut by {cut} bytes to fit the context. Ask for less: a line range, a narrower pattern or fewer results."
            ));
            text = body.to_string();
            // Strings alone may not have been enough (e.g. thousands of short entries):
            // fall back to dropping array tails.
            while text.len() > MODEL_RESULT_LIMIT && drop_array_tail(&mut body["data"]) {
                text = body.to_string();
            }
        }
        ShownResult(body)
    }
}

/// A result as the model reads it ([`ToolResult::shown`]), kept whole: its text is written
/// ([`Display`](fmt::Display)) only for a backend to send, and what Lantern reads back from it
/// is read typed ([`seen`](Self::seen)), never from that text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownResult(Value);

/// What a result, or a refusal's text, cut to fit the context says about itself.
pub const CUT_NOTE: &str = "[the rest was cut to fit the model's context]";
/// A string shorter than this is not cut further to fit the context.
const MIN_CUT_CHARS: usize = 200;

impl ShownResult {
    /// A result written as JSON text elsewhere (a tool's declared example).
    pub fn from_json(text: &str) -> serde_json::Result<ShownResult> {
        serde_json::from_str(text).map(ShownResult)
    }

    /// The body, for what reads every value of a result alike (the facts an answer may copy,
    /// the paths it reports).
    pub fn value(&self) -> &Value {
        &self.0
    }

    /// The members of the result Lantern reads back, typed.
    pub fn seen(&self) -> SeenResult {
        SeenResult::deserialize(&self.0).unwrap_or_default()
    }

    /// Did this result find nothing (see [`SeenResult::found_nothing`])?
    pub fn found_nothing(&self) -> bool {
        self.seen().found_nothing()
    }

    /// How long the result's data is, written as JSON: what a summary says of data it has no
    /// words for.
    pub fn data_chars(&self) -> usize {
        match &self.0 {
            Value::Object(members) => members.get("data").map_or(0, |d| d.to_string().len()),
            _ => 0,
        }
    }

    /// The result with `note` beside it, for the model to read (e.g. that a second call in the
    /// same reply was not run).
    pub fn with_note(self, note: &str) -> ShownResult {
        match self.0 {
            Value::Object(mut members) => {
                members.insert("note".into(), note.into());
                ShownResult(Value::Object(members))
            }
            other => ShownResult(serde_json::json!({"result": other, "note": note})),
        }
    }

    /// The result with about half of what its data holds cut, or `None` when there is nothing
    /// long enough to cut: the longest string (a file's content) loses its second half, or else
    /// the longest list its second half of entries. For a backend's last resort, when a
    /// conversation with nothing left to drop still does not fit its context.
    pub fn halved(&self) -> Option<ShownResult> {
        let mut body = self.0.clone();
        let data = match &mut body {
            Value::Object(members) => members.get_mut("data")?,
            _ => return None,
        };
        if let Some(longest) = longest_string(data).filter(|s| s.chars().count() > MIN_CUT_CHARS) {
            let count = longest.chars().count();
            let kept: String = longest.chars().take(count / 2).collect();
            *longest = format!("{kept}\n… {CUT_NOTE}");
        } else if let Some(items) = largest_array(data).filter(|items| items.len() > 2) {
            // Half the entries and a note of the rest: always fewer than before, so cutting
            // again and again ends.
            let cut = items.len() - items.len() / 2;
            items.truncate(items.len() - cut);
            items.push(Value::String(format!("… {cut} more entries {CUT_NOTE}")));
        } else {
            return None;
        }
        if let Value::Object(members) = data {
            members.insert("cut_to_fit".into(), Value::Bool(true));
        }
        Some(ShownResult(body))
    }
}

impl From<Value> for ShownResult {
    fn from(body: Value) -> Self {
        ShownResult(body)
    }
}

impl fmt::Display for ShownResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Shortens the longest strings in `value` until about `excess` bytes are gone; returns how
/// many bytes were removed.
fn shrink_strings(value: &mut Value, excess: usize) -> usize {
    let mut removed = 0;
    // Each pass halves the longest string, so long content goes first and keys stay intact.
    for _ in 0..64 {
        if removed >= excess {
            break;
        }
        let Some(longest) = longest_string(value) else {
            break;
        };
        let len = longest.len();
        if len < 200 {
            break;
        }
        let keep = len
            .saturating_sub(excess - removed + 120)
            .max(len / 8)
            .max(80);
        let mut cut_at = keep.min(len);
        while !longest.is_char_boundary(cut_at) {
            cut_at -= 1;
        }
        let dropped = len - cut_at;
        longest.truncate(cut_at);
        longest.push_str(&format!("… [{dropped} bytes cut]"));
        removed += dropped;
    }
    removed
}

fn longest_string(value: &mut Value) -> Option<&mut String> {
    match value {
        Value::String(s) => Some(s),
        Value::Array(items) => items
            .iter_mut()
            .filter_map(longest_string)
            .max_by_key(|s| s.len()),
        Value::Object(map) => map
            .values_mut()
            .filter_map(longest_string)
            .max_by_key(|s| s.len()),
        _ => None,
    }
}

fn largest_array(value: &mut Value) -> Option<&mut Vec<Value>> {
    match value {
        Value::Array(items) => Some(items),
        Value::Object(map) => map
            .values_mut()
            .filter_map(largest_array)
            .max_by_key(|a| a.len()),
        _ => None,
    }
}

/// Removes the last element of the largest array in `value` and records how many were dropped.
fn drop_array_tail(value: &mut Value) -> bool {
    match largest_array(value) {
        Some(items) if items.len() > 1 => {
            let n = items.len().div_ceil(4);
            let keep = items.len() - n;
            items.truncate(keep);
            items.push(Value::String(format!(
                "… {n} more entries cut to fit the context"
            )));
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_or_a_count_of_nothing_found_nothing() {
        let nothing = |data: Value| {
            ToolResult::from_outcome(Ok(data), Duration::ZERO)
                .shown()
                .found_nothing()
        };
        assert!(nothing(serde_json::json!({"matches": [], "count": 0})));
        assert!(nothing(serde_json::json!({"files": [], "count": 0})));
        assert!(!nothing(serde_json::json!({"files": ["a.rs"], "count": 1})));
        assert!(!nothing(
            serde_json::json!({"content": "", "total_lines": 0})
        ));
        let failed = ToolResult::failure(
            ToolError::new(ErrorType::NotFound, "No such file: a.rs"),
            Duration::ZERO,
        );
        assert!(failed.shown().found_nothing());
        assert!(!ShownResult::from(Value::String("not a result".into())).found_nothing());
    }

    #[test]
    fn a_result_halved_to_fit_keeps_the_start_of_its_longest_text_or_list() {
        let read = |data: Value| ToolResult::from_outcome(Ok(data), Duration::ZERO).shown();
        let long = "line\n".repeat(100);
        let halved = read(serde_json::json!({"path": "a.txt", "content": long}))
            .halved()
            .unwrap();
        let content = halved.seen().data.content.unwrap();
        assert!(content.starts_with(&"line\n".repeat(50)), "{content}");
        assert!(content.ends_with(CUT_NOTE));
        assert_eq!(halved.seen().data.path.as_deref(), Some("a.txt"));

        let files: Vec<String> = (0..10).map(|i| format!("f{i}.rs")).collect();
        let listing = read(serde_json::json!({"files": files, "count": 10}));
        let halved = listing.halved().unwrap().seen().data.files.unwrap();
        assert_eq!(halved[..5], files[..5]);
        assert_eq!(halved.len(), 6, "five kept and the note of what was cut");

        assert_eq!(read(serde_json::json!({"content": "short"})).halved(), None);
        // Cut again and again, a result ends with nothing left to cut.
        let mut cut = listing;
        for _ in 0..10 {
            match cut.halved() {
                Some(shorter) => cut = shorter,
                None => break,
            }
        }
        assert_eq!(cut.halved(), None);
        assert_eq!(cut.seen().data.files.unwrap().len(), 2);
    }

    #[test]
    fn success_renders_seed_shape() {
        let r = ToolResult::from_outcome(
            Ok(serde_json::json!({"content": "x"})),
            Duration::from_millis(3),
        );
        assert_eq!(
            r.render_for_model(),
            r#"{"success":true,"data":{"content":"x"},"error":null}"#
        );
        assert_eq!(r.metadata.execution_time_ms, 3);
        assert_eq!(r.metadata.data_size_bytes, r#"{"content":"x"}"#.len());
    }

    #[test]
    fn failure_names_kind_and_hint() {
        let r = ToolResult::failure(
            ToolError::not_found("Not found: a.txt").with_hint("Use list_files."),
            Duration::ZERO,
        );
        let text = r.render_for_model();
        assert!(
            text.contains(r#""error":"Not found: a.txt Use list_files.""#),
            "{text}"
        );
        assert!(text.contains(r#""error_type":"not_found""#));
        assert!(text.contains(r#""success":false"#));
    }

    #[test]
    fn large_results_are_bounded_valid_json_with_notice() {
        let big = "x".repeat(100_000);
        let r = ToolResult::from_outcome(Ok(serde_json::json!({"content": big})), Duration::ZERO);
        let text = r.render_for_model();
        assert!(text.len() <= MODEL_RESULT_LIMIT + 200, "{}", text.len());
        let json: Value = serde_json::from_str(&text).unwrap();
        assert!(json["truncated"].as_str().unwrap().contains("cut"));
        assert!(json["data"]["content"]
            .as_str()
            .unwrap()
            .ends_with("bytes cut]"));
    }

    #[test]
    fn many_small_entries_are_bounded_too() {
        let files: Vec<String> = (0..5000).map(|i| format!("src/f{i}.rs")).collect();
        let r = ToolResult::from_outcome(Ok(serde_json::json!({"files": files})), Duration::ZERO);
        let text = r.render_for_model();
        assert!(text.len() <= MODEL_RESULT_LIMIT, "{}", text.len());
        assert!(text.contains("more entries cut to fit the context"));
    }
}
