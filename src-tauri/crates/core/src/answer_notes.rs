//! What the turn's tool results say in answer to the question's form, given beneath an answer
//! that leaves it out, as a note in Lantern's words.
//!
//! A tiny model that has listed `classes/` for "How many JavaScript files are in classes?"
//! writes the files out, or a number of its own, though the listing says `"count": 4`; asked
//! "Where is coerce defined?", it names the call it made while the search shows
//! `functions/coerce.js:5: const coerce = …`. The result already holds what was asked, so the
//! user is given it beside the model's words, marked as read from the results:
//! - a question that asks how many files is given the count of the turn's last listing;
//! - a question that asks where something is, or in which file, is given the surest of the
//!   places where the turn's searches show a name of the question defined (see
//!   [`crate::relevance::defines`] and [`sureness`]).
//!
//! A note is left out when the answer already says it: the count as a number, or every place's
//! path. The model's words are never changed, only followed.
//!
//! ```
//! use lantern_core::answer_notes::{count_note, definition_note};
//! let listing = serde_json::json!({"success": true, "data": {"directory": "classes",
//!     "files": ["classes/a.js", "classes/b.js"], "count": 2}});
//! let note = count_note("How many files are in classes?", &[listing.clone()], "a.js and b.js").unwrap();
//! assert_eq!(note.text, "The listing of `classes` found 2 files.");
//! assert_eq!(count_note("How many files are in classes?", &[listing], "There are 2."), None);
//!
//! let search = serde_json::json!({"success": true, "data": {"matches": [
//!     {"path": "index.js", "line": 2, "text": "const coerce = require('./functions/coerce')"},
//!     {"path": "functions/coerce.js", "line": 5, "text": "const coerce = (version, options) => {"}]}});
//! let note = definition_note("Where is the coerce function defined?", &[search], "In search_code.").unwrap();
//! assert_eq!(note.text, "The search shows `coerce` defined in functions/coerce.js (line 5).");
//! ```

use crate::relevance::{defines, question_words, DEFINING_WORDS};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a note gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NoteKind {
    /// How many files the turn's last listing found.
    Count,
    /// Where the turn's searches show a name of the question defined.
    Definition,
}

/// A fact of the turn's results given beneath the answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AnswerNote {
    pub kind: NoteKind,
    /// The note as the user reads it.
    pub text: String,
}

/// The most places a definition note names.
const MAX_PLACES: usize = 3;

/// The lower-case words of a text, split at anything but letters, digits and `_`.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Does the question ask how many files there are: "how many" followed, later, by "file(s)"?
fn asks_how_many_files(question: &str) -> bool {
    let words = words(question);
    let Some(at) = words.windows(2).position(|w| w == ["how", "many"]) else {
        return false;
    };
    words[at + 2..].iter().any(|w| w == "file" || w == "files")
}

/// Does the question ask where something is ("Where is…", "In which file…", "What file…")?
fn asks_where(question: &str) -> bool {
    let words = words(question);
    words.iter().any(|w| w == "where")
        || words
            .windows(2)
            .any(|w| (w[0] == "which" || w[0] == "what") && (w[1] == "file" || w[1] == "files"))
}

/// The data of each result that succeeded.
fn data_of(results: &[Value]) -> impl DoubleEndedIterator<Item = &Value> {
    results
        .iter()
        .filter(|r| r.get("success").and_then(Value::as_bool) == Some(true))
        .filter_map(|r| r.get("data"))
}

/// For a question that asks how many files there are, the count of the turn's last listing
/// (a result whose data has `files` and `count`), unless the answer already gives it.
pub fn count_note(question: &str, results: &[Value], answer: &str) -> Option<AnswerNote> {
    if !asks_how_many_files(question) {
        return None;
    }
    let listing = data_of(results)
        .rev()
        .find(|d| d.get("files").is_some_and(Value::is_array))?;
    let count = listing.get("count")?.as_u64()?;
    if words(answer).contains(&count.to_string()) {
        return None;
    }
    let folder = match listing.get("directory").and_then(Value::as_str) {
        None | Some(".") | Some("") => "the workspace".to_string(),
        Some(dir) => format!("`{dir}`"),
    };
    let matching = listing
        .get("pattern")
        .and_then(Value::as_str)
        .map(|p| format!(" matching `{p}`"))
        .unwrap_or_default();
    // A walk stopped early counted only what it reached.
    let at_least = match listing.get("walk_incomplete").and_then(Value::as_bool) {
        Some(true) => "at least ",
        _ => "",
    };
    let files = if count == 1 { "file" } else { "files" };
    Some(AnswerNote {
        kind: NoteKind::Count,
        text: format!("The listing of {folder}{matching} found {at_least}{count} {files}."),
    })
}

/// For a question that asks where something is, the surest places where the turn's searches
/// show a name of the question defined (see [`sureness`]; at most [`MAX_PLACES`]), unless the
/// answer already names each place's file.
pub fn definition_note(question: &str, results: &[Value], answer: &str) -> Option<AnswerNote> {
    if !asks_where(question) {
        return None;
    }
    let names = question_words(question);
    let mut name = None;
    let mut places: Vec<(u8, String, u64, &str)> = Vec::new();
    let matches = data_of(results)
        .filter_map(|d| d.get("matches").and_then(Value::as_array))
        .flatten();
    for m in matches {
        let (Some(path), Some(line), Some(text)) = (
            m.get("path").and_then(Value::as_str),
            m.get("line").and_then(Value::as_u64),
            m.get("text").and_then(Value::as_str),
        ) else {
            continue;
        };
        // The note is about one name: the first one found defined.
        let defined = names.iter().find(|n| {
            name.is_none_or(|first| first == *n) && defines(text, std::slice::from_ref(n))
        });
        let Some(defined) = defined else {
            continue;
        };
        name = Some(defined);
        if !places.iter().any(|(_, p, l, _)| p == path && *l == line) {
            let rank = sureness(path, text, defined, question);
            places.push((rank, path.to_string(), line, text));
        }
    }
    let name = name?;
    let surest = places.iter().map(|(rank, ..)| *rank).min()?;
    places.retain(|(rank, ..)| *rank == surest);
    places.truncate(MAX_PLACES);
    if places
        .iter()
        .all(|(_, path, ..)| answer.contains(path.as_str()))
    {
        return None;
    }
    // The name as the surest line writes it, not lower-cased.
    let written = places[0]
        .3
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .find(|word| word.to_lowercase() == *name)
        .unwrap_or(name);
    let listed: Vec<String> = places
        .iter()
        .map(|(_, path, line, _)| format!("{path} (line {line})"))
        .collect();
    Some(AnswerNote {
        kind: NoteKind::Definition,
        text: format!(
            "The search shows `{written}` defined in {}.",
            listed.join(" and ")
        ),
    })
}

/// How surely the line `text` of `path`, which defines `name` (lower-case), is the definition
/// `question` asks for; lower is surer. A file named after the name (`functions/coerce.js` for
/// `coerce`) comes first; then a defining word followed by the name as the question writes it
/// (`class Comparator`), then in another case; last an assignment at the start of a line
/// (`comparator = new Comparator(…)`, `coerce = true`), which may only set a variable.
fn sureness(path: &str, text: &str, name: &str, question: &str) -> u8 {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    if stem.eq_ignore_ascii_case(name) {
        return 0;
    }
    let tokens: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|t| !t.is_empty())
        .collect();
    let asked: Vec<&str> = question
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    let after_defining_word = tokens.windows(2).filter_map(|w| {
        (DEFINING_WORDS.contains(&w[0].to_lowercase().as_str()) && w[1].to_lowercase() == name)
            .then_some(w[1])
    });
    let mut rank = 3;
    for written in after_defining_word {
        rank = rank.min(if asked.contains(&written) { 1 } else { 2 });
    }
    rank
}

/// The notes `answer` is given for `question` from the turn's `results` (each a tool
/// message's JSON), of the kinds `kinds` allows.
pub fn notes_for(
    question: &str,
    results: &[Value],
    answer: &str,
    kinds: &[NoteKind],
) -> Vec<AnswerNote> {
    let mut notes = Vec::new();
    if kinds.contains(&NoteKind::Count) {
        notes.extend(count_note(question, results, answer));
    }
    if kinds.contains(&NoteKind::Definition) {
        notes.extend(definition_note(question, results, answer));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(data: Value) -> Value {
        json!({"success": true, "data": data})
    }

    #[test]
    fn a_count_is_given_only_for_a_question_about_how_many_files() {
        let listing =
            ok(json!({"directory": "tests", "files": [], "count": 20, "pattern": "test_*.py"}));
        let asked = "How many test_*.py files are in the tests folder?";
        let note = count_note(asked, std::slice::from_ref(&listing), "tests/test_a.py, …").unwrap();
        assert_eq!(
            note.text,
            "The listing of `tests` matching `test_*.py` found 20 files."
        );
        assert_eq!(note.kind, NoteKind::Count);
        for other in [
            "Which files are in tests?",
            "How many tests are there?",
            "How many entries does the cache keep?",
        ] {
            assert_eq!(
                count_note(other, std::slice::from_ref(&listing), ""),
                None,
                "{other}"
            );
        }
    }

    #[test]
    fn a_count_comes_from_the_last_listing_and_says_when_the_walk_stopped_early() {
        let first = ok(json!({"directory": ".", "files": ["a"], "count": 1}));
        let last = ok(json!({"directory": ".", "files": [], "count": 7, "walk_incomplete": true}));
        let failed = json!({"success": false, "data": {"files": [], "count": 0}});
        let note = count_note("How many files are there?", &[first, last, failed], "").unwrap();
        assert_eq!(
            note.text,
            "The listing of the workspace found at least 7 files."
        );
    }

    #[test]
    fn a_count_the_answer_gives_is_not_repeated_but_another_number_is_not_taken_for_it() {
        let listing = ok(json!({"directory": "src", "files": [], "count": 4}));
        let asked = "How many files does src hold?";
        assert_eq!(
            count_note(asked, std::slice::from_ref(&listing), "It holds 4 files."),
            None
        );
        assert!(count_note(asked, std::slice::from_ref(&listing), "It holds 14 files.").is_some());
        assert_eq!(
            count_note(asked, &[ok(json!({"matches": []}))], "Some."),
            None
        );
    }

    #[test]
    fn a_definition_is_given_for_where_questions_and_an_import_is_not_one() {
        let search = ok(json!({"matches": [
            {"path": "README.md", "line": 9, "text": "semver.coerce('v2')"},
            {"path": "index.js", "line": 28, "text": "const coerce = require('./functions/coerce')"},
        ]}));
        assert_eq!(
            definition_note(
                "Where is coerce defined?",
                std::slice::from_ref(&search),
                ""
            ),
            None
        );
        let search = ok(json!({"matches": [
            {"path": "src/click/utils.py", "line": 40, "text": "def get_app_dir(app_name: str) -> str:"},
        ]}));
        let asked = "In which file is the get_app_dir function?";
        let note =
            definition_note(asked, std::slice::from_ref(&search), "It returns a folder.").unwrap();
        assert_eq!(
            note.text,
            "The search shows `get_app_dir` defined in src/click/utils.py (line 40)."
        );
        assert_eq!(
            definition_note(
                "What does get_app_dir return?",
                std::slice::from_ref(&search),
                ""
            ),
            None
        );
        assert_eq!(
            definition_note(
                asked,
                std::slice::from_ref(&search),
                "In src/click/utils.py."
            ),
            None
        );
    }

    #[test]
    fn a_definition_note_names_the_surest_places_only() {
        let search = ok(json!({"matches": [
            {"path": "bin/semver.js", "line": 20, "text": "let coerce = false"},
            {"path": "bin/semver.js", "line": 84, "text": "        coerce = true"},
            {"path": "functions/coerce.js", "line": 5, "text": "const coerce = (version, options) => {"},
        ]}));
        let note = definition_note("Where is coerce defined?", &[search], "").unwrap();
        assert_eq!(
            note.text,
            "The search shows `coerce` defined in functions/coerce.js (line 5)."
        );
        let search = ok(json!({"matches": [
            {"path": "ranges/outside.js", "line": 51, "text": "comparator = new Comparator('>=0.0.0')"},
            {"path": "lib/parse.js", "line": 2, "text": "const comparator = parse(text)"},
            {"path": "lib/types.js", "line": 9, "text": "export class Comparator {"},
        ]}));
        let note = definition_note(
            "Where is the Comparator class?",
            std::slice::from_ref(&search),
            "",
        )
        .unwrap();
        assert_eq!(
            note.text,
            "The search shows `Comparator` defined in lib/types.js (line 9)."
        );
        // The answer names the surest place: no note, though it leaves the others out.
        assert_eq!(
            definition_note(
                "Where is the Comparator class?",
                &[search],
                "In lib/types.js."
            ),
            None
        );
    }

    #[test]
    fn a_definition_note_keeps_the_code_s_case_and_names_each_place_once() {
        let search = ok(json!({"matches": [
            {"path": "a.ts", "line": 3, "text": "export class Range {"},
            {"path": "a.ts", "line": 3, "text": "export class Range {"},
            {"path": "b.ts", "line": 8, "text": "class Range extends Base {"},
        ]}));
        let note = definition_note("Where is the Range class?", &[search], "").unwrap();
        assert_eq!(
            note.text,
            "The search shows `Range` defined in a.ts (line 3) and b.ts (line 8)."
        );
    }
}
