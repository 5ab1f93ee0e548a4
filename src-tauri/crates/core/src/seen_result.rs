//! What a tool result showed, typed: the members of a result's data that Lantern reads back
//! (a search's matches, a listing's files, a read file's text), and the lines it put before
//! them as what answers the question, declared once.
//!
//! The tools write their data as JSON, and the history keeps each result as the model reads it
//! ([`crate::tool_result::ShownResult`]); the notes beneath an answer, the focusing of results,
//! the choice of what a turn found nothing in, and the shortening of old results read it back.
//! They read it here, through [`SeenResult`] and [`SeenData`], and never by a member's name
//! of their own. A search's [`Hit`] is one type for the tool that writes it and for what
//! reads it.
//!
//! ```
//! use lantern_core::tool_result::ToolResult;
//! use serde_json::json;
//! let listing = json!({"directory": "src", "files": ["src/a.rs"], "count": 1});
//! let result = ToolResult::from_outcome(Ok(listing), std::time::Duration::ZERO);
//! let seen = result.shown().seen();
//! assert_eq!(seen.data.files.as_deref(), Some(&["src/a.rs".to_string()][..]));
//! assert!(!seen.found_nothing());
//! ```

use serde::de::{DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One matching line of a search (`search_code`), or one definition (`find_definition`).
/// Read back, a hit needs its path, line and text; its other members are taken when they are
/// of their type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    pub path: String,
    pub line: u64,
    /// 1-based character column of the first match in the line.
    #[serde(default, deserialize_with = "lenient_or_default")]
    pub column: u64,
    pub text: String,
    #[serde(
        default,
        deserialize_with = "lenient_or_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub before: Vec<String>,
    #[serde(
        default,
        deserialize_with = "lenient_or_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub after: Vec<String>,
    /// The name this line defines, where the code index reads the file's language.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub defines: Option<String>,
    /// The file is in a language the code index reads, but the index did not read it for
    /// this search (see `ProjectIndex::definitions_on`): whether the line defines a name is
    /// not known.
    #[serde(
        default,
        deserialize_with = "lenient_or_default",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub unindexed: bool,
}

/// A result as the model read it ([`crate::tool_result::ShownResult::seen`]): whether the call
/// succeeded, and its data.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SeenResult {
    /// Lantern's results always say; JSON that does not is read with it unknown.
    #[serde(default, deserialize_with = "lenient")]
    pub success: Option<bool>,
    #[serde(default, deserialize_with = "lenient_or_default")]
    pub data: SeenData,
    #[serde(default, deserialize_with = "lenient")]
    pub error: Option<String>,
    /// The lines of a read file that Lantern put before its data as those about the question
    /// ([`crate::relevance::focus_result`]), each `LINE: TEXT`.
    #[serde(default, deserialize_with = "entries")]
    pub lines_about_the_question: Option<Vec<String>>,
    /// The matches of a search that define a name of the question, which Lantern put before
    /// its data, each `PATH:LINE: TEXT`, with lines of their bodies about the rest of it.
    #[serde(default, deserialize_with = "entries")]
    pub definitions: Option<Vec<String>>,
}

/// The members of a result's data that Lantern reads back. A member that is absent, or not of
/// its type, is `None`: a tool of an MCP server may write anything.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SeenData {
    /// How many entries a search or a listing found.
    #[serde(default, deserialize_with = "lenient")]
    pub count: Option<u64>,
    /// A search's query.
    #[serde(default, deserialize_with = "lenient")]
    pub query: Option<String>,
    /// A search's matching lines, or the definitions found of a name: those entries that read
    /// as a hit (a result cut to fit ends its longest list with a note of what was cut).
    #[serde(default, deserialize_with = "entries")]
    pub matches: Option<Vec<Hit>>,
    /// A listing's folder.
    #[serde(default, deserialize_with = "lenient")]
    pub directory: Option<String>,
    /// A listing's glob.
    #[serde(default, deserialize_with = "lenient")]
    pub pattern: Option<String>,
    /// A listing's files: those entries that are strings.
    #[serde(default, deserialize_with = "entries")]
    pub files: Option<Vec<String>>,
    /// A listing whose walk stopped before the end: it counted only what it reached.
    #[serde(default, deserialize_with = "lenient_or_default")]
    pub walk_incomplete: bool,
    /// The file a result is about (a read, a write).
    #[serde(default, deserialize_with = "lenient")]
    pub path: Option<String>,
    /// A read file's text.
    #[serde(default, deserialize_with = "lenient")]
    pub content: Option<String>,
    /// The number of the first line of a read file's text.
    #[serde(default, deserialize_with = "lenient")]
    pub start_line: Option<u64>,
    /// How many lines the read file has.
    #[serde(default, deserialize_with = "lenient")]
    pub total_lines: Option<u64>,
}

impl SeenResult {
    /// Did this result find nothing: a call that failed, or a search or listing that counted
    /// no entries? After such a result an answer can only guess; the next step should look
    /// elsewhere.
    pub fn found_nothing(&self) -> bool {
        self.success == Some(false) || self.data.count == Some(0)
    }

    /// The call said it succeeded.
    pub fn succeeded(&self) -> bool {
        self.success == Some(true)
    }

    /// The texts of the lines Lantern put first as what answers the question (a read file's
    /// lines about it, a search's definitions of its names and their bodies' lines), without
    /// the place each is quoted from.
    pub fn lines_answering(&self) -> impl Iterator<Item = &str> {
        let about = self.lines_about_the_question.iter().flatten();
        let definitions = self.definitions.iter().flatten();
        about.chain(definitions).map(|line| without_place(line))
    }
}

/// The text of a quoted line (`12: text`, `src/a.py:12: text`) without the place it is quoted
/// from; a line with no such place as it is.
fn without_place(line: &str) -> &str {
    match line.split_once(": ") {
        Some((place, text)) if place.rsplit(':').next().is_some_and(is_line_number) => text,
        _ => line,
    }
}

fn is_line_number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

impl SeenData {
    /// The members of `data` (a result's `data`) that Lantern reads back.
    pub fn of(data: &Value) -> SeenData {
        SeenData::deserialize(data).unwrap_or_default()
    }
}

/// A member of its type, or `None` when it is of another.
fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    Ok(serde_json::from_value(value).ok())
}

/// The entries of a list member that are of their type; `None` when the member is no list.
fn entries<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    deserializer: D,
) -> Result<Option<Vec<T>>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    Ok(match value {
        Value::Array(items) => Some(
            items
                .into_iter()
                .filter_map(|item| serde_json::from_value(item).ok())
                .collect(),
        ),
        _ => None,
    })
}

/// A member of its type, or its default when it is of another.
fn lenient_or_default<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(
    deserializer: D,
) -> Result<T, D::Error> {
    Ok(lenient(deserializer)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool_result::ShownResult;
    use serde_json::json;

    #[test]
    fn a_search_s_hits_are_read_back_as_the_tool_wrote_them() {
        let hit = Hit {
            path: "src/a.py".into(),
            line: 3,
            column: 1,
            text: "def echo(message):".into(),
            before: Vec::new(),
            after: vec!["    pass".into()],
            defines: Some("echo".into()),
            unindexed: false,
        };
        let rendered = json!({"success": true, "data": {"query": "echo", "matches": [hit], "count": 1}, "error": null});
        let seen = ShownResult::from(rendered).seen();
        assert_eq!(
            seen.data.matches.as_deref(),
            Some(std::slice::from_ref(&hit))
        );
        assert_eq!(seen.data.query.as_deref(), Some("echo"));
        assert!(!seen.found_nothing());
    }

    #[test]
    fn the_lines_put_first_are_read_back_without_their_places() {
        let rendered = json!({"success": true,
            "lines_about_the_question": ["3: \"version\": \"7.6.3\","],
            "definitions": ["src/errors.py:40: class UsageError(Exception):", "src/errors.py:44: exit_code = 2"],
            "data": {}, "error": null});
        let seen = ShownResult::from(rendered).seen();
        let lines: Vec<&str> = seen.lines_answering().collect();
        assert_eq!(
            lines,
            [
                "\"version\": \"7.6.3\",",
                "class UsageError(Exception):",
                "exit_code = 2"
            ]
        );
        assert_eq!(
            without_place("ratio: 3: 4"),
            "ratio: 3: 4",
            "no line number"
        );
    }

    #[test]
    fn a_failure_or_an_empty_count_found_nothing() {
        let failed = json!({"success": false, "data": null, "error": "File not found: a.txt"});
        let failed = ShownResult::from(failed).seen();
        assert!(failed.found_nothing());
        assert_eq!(failed.error.as_deref(), Some("File not found: a.txt"));
        let empty = json!({"success": true, "data": {"matches": [], "count": 0}, "error": null});
        assert!(ShownResult::from(empty).found_nothing());
    }

    #[test]
    fn a_result_cut_to_fit_keeps_the_hits_before_its_note() {
        // `ToolResult::shown` ends the longest list of a result too long for the model with a
        // note of what it cut.
        let hits: Vec<Value> = (1..=300)
            .map(|line| json!({"path": "src/a.rs", "line": line, "column": 1, "text": format!("let total_{line} = 0;")}))
            .collect();
        let result = crate::tool_result::ToolResult::from_outcome(
            Ok(json!({"query": "total", "matches": hits, "count": 300})),
            std::time::Duration::ZERO,
        );
        let shown = result.shown();
        assert!(
            shown.to_string().contains("more entries cut"),
            "the list was cut"
        );
        let seen = shown.seen();
        let kept = seen.data.matches.unwrap();
        assert!(kept.len() > 10 && kept.len() < 300, "{}", kept.len());
        assert_eq!(kept[0].text, "let total_1 = 0;");
        // A hit whose optional members are of another type is still a hit.
        let odd = json!({"matches": [{"path": "a.py", "line": 2, "text": "x = 1", "column": "2", "defines": 3}]});
        assert_eq!(SeenData::of(&odd).matches.unwrap()[0].column, 0);
    }

    #[test]
    fn json_that_does_not_say_whether_it_succeeded_is_read_with_that_unknown() {
        let seen = ShownResult::from(json!({"data": {"count": 0}})).seen();
        assert_eq!(seen.success, None);
        assert!(seen.found_nothing() && !seen.succeeded());
    }

    #[test]
    fn members_of_another_type_are_absent_not_a_failure_to_read() {
        // A server's tool may use the same names for other things.
        let data = json!({"files": [{"name": "a"}, "b.txt"], "count": "many", "path": "a.txt", "walk_incomplete": "yes"});
        let seen = SeenData::of(&data);
        // A list keeps the entries of its type.
        assert_eq!(seen.files, Some(vec!["b.txt".to_string()]));
        assert_eq!(SeenData::of(&json!({"files": "a.txt"})).files, None);
        assert_eq!(seen.count, None);
        assert_eq!(seen.path.as_deref(), Some("a.txt"));
        assert!(!seen.walk_incomplete);
        assert_eq!(SeenData::of(&json!("plain text")).path, None);
    }
}
