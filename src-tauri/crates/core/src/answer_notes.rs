//! What the turn's tool results say in answer to the question's form, given beneath an answer
//! that leaves it out, as a note in Lantern's words.
//!
//! A tiny model that has listed `models/` for "How many JavaScript files are in models?"
//! writes the files out, or a number of its own, though the listing says `"count": 4`; asked
//! "Where is slugify defined?", it names the call it made while the search shows
//! `helpers/slugify.js:5: const slugify = …`. The result already holds what was asked, so the
//! user is given it beside the model's words, marked as read from the results:
//! - a question that asks how many files there are (not how many do something) is given the
//!   count of the turn's last listing;
//! - a question that asks where something is, or in which file (not where it is used), is
//!   given the surest of the places where the turn's searches show a name of the question
//!   defined (see [`crate::relevance::match_defines`] and `sureness`): where the code index
//!   reads the file's language, the lines it marked as defining a name; elsewhere the lines
//!   that read like a definition.
//!
//! A note is left out when the answer already says it: the count as a number, or every place's
//! path, whole. The model's words are never changed, only followed.
//!
//! ```
//! use lantern_core::answer_notes::{count_note, definition_note};
//! use lantern_core::question::Question;
//! use lantern_core::tool_result::ShownResult;
//! use serde_json::json;
//! let asked = Question::read("How many files are in models?");
//! let listing = ShownResult::from(json!({"success": true, "data": {"directory": "models",
//!     "files": ["models/a.js", "models/b.js"], "count": 2}})).seen();
//! let note = count_note(&asked, &[listing.clone()], "a.js and b.js").unwrap();
//! assert_eq!(note.text, "The listing of `models` found 2 files.");
//! assert_eq!(count_note(&asked, &[listing], "There are 2."), None);
//!
//! let search = ShownResult::from(json!({"success": true, "data": {"matches": [
//!     {"path": "index.js", "line": 2, "text": "const slugify = require('./helpers/slugify')"},
//!     {"path": "helpers/slugify.js", "line": 5, "text": "const slugify = (title, options) => {",
//!      "defines": "slugify"}]}})).seen();
//! let asked = Question::read("In which file does slugify live?");
//! let note = definition_note(&asked, &[search], "In search_code.").unwrap();
//! assert_eq!(note.text, "The search shows `slugify` defined in helpers/slugify.js (line 5).");
//! ```

use crate::question::Question;
use crate::relevance::{index_read, match_defines};
use crate::seen_result::{Hit, SeenData, SeenResult};
use crate::words::{code_words, lower_code_words, path_words, DEFINING_WORDS};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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

/// Does `text` name `path` whole: not as the end of a longer path (`lib/index.js` does not name
/// `index.js`) nor as part of a longer name? Paths are read as [`crate::answer_paths`] reads
/// them, a sentence's full stop not part of one.
fn names_whole(text: &str, path: &str) -> bool {
    path_words(text).any(|word| word.trim_end_matches('.') == path)
}

/// The data of each result that succeeded.
fn data_of(results: &[SeenResult]) -> impl DoubleEndedIterator<Item = &SeenData> {
    results.iter().filter(|r| r.succeeded()).map(|r| &r.data)
}

/// For a question that asks how many files there are, the count of the turn's last listing
/// (a result whose data has `files` and `count`), unless the answer already gives it.
pub fn count_note(question: &Question, results: &[SeenResult], answer: &str) -> Option<AnswerNote> {
    if !question.asks_how_many_files {
        return None;
    }
    let listing = data_of(results).rev().find(|d| d.files.is_some())?;
    let count = listing.count?;
    if lower_code_words(answer).contains(&count.to_string()) {
        return None;
    }
    let folder = match listing.directory.as_deref() {
        None | Some(".") | Some("") => "the workspace".to_string(),
        Some(dir) => format!("`{dir}`"),
    };
    let matching = listing
        .pattern
        .as_ref()
        .map(|p| format!(" matching `{p}`"))
        .unwrap_or_default();
    // A walk stopped early counted only what it reached.
    let at_least = if listing.walk_incomplete {
        "at least "
    } else {
        ""
    };
    let files = if count == 1 { "file" } else { "files" };
    Some(AnswerNote {
        kind: NoteKind::Count,
        text: format!("The listing of {folder}{matching} found {at_least}{count} {files}."),
    })
}

/// For a question that asks where something is, the surest places where the turn's searches
/// show a name of the question defined (see `sureness`; at most `MAX_PLACES`), unless the
/// answer already names each place's file.
pub fn definition_note(
    question: &Question,
    results: &[SeenResult],
    answer: &str,
) -> Option<AnswerNote> {
    if !question.asks_where {
        return None;
    }
    let names = &question.names;
    let question = question.text.as_str();
    let searches: Vec<&Vec<Hit>> = data_of(results)
        .filter_map(|d| d.matches.as_ref())
        .collect();
    // Each place a name of the question is defined, with how surely: (rank, name, path, line,
    // text), in the results' order.
    let mut places: Vec<(u8, &String, &str, u64, &str)> = Vec::new();
    for m in searches.iter().copied().flatten() {
        let (path, line, text) = (m.path.as_str(), m.line, m.text.as_str());
        for name in names
            .iter()
            .filter(|n| match_defines(m, std::slice::from_ref(n)))
        {
            if !places
                .iter()
                .any(|p| p.1 == name && p.2 == path && p.3 == line)
            {
                places.push((sureness(m, name, question), name, path, line, text));
            }
        }
    }
    // The note is about one name: the one defined most surely, the first found on a tie.
    let &(surest, name, ..) = places.iter().min_by_key(|p| p.0)?;
    places.retain(|p| p.0 == surest && p.1 == name);
    places.truncate(MAX_PLACES);
    if places.iter().all(|p| names_whole(answer, p.2)) {
        return None;
    }
    // The name as the surest line writes it, not lower-cased.
    let written = code_words(places[0].4)
        .find(|word| word.to_lowercase() == *name)
        .unwrap_or(name);
    let listed: Vec<String> = places
        .iter()
        .map(|p| format!("{} (line {})", p.2, p.3))
        .collect();
    let listed = match listed.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => return None,
    };
    let shows = if searches.len() > 1 {
        "The searches show"
    } else {
        "The search shows"
    };
    // An assignment may only set a variable: it is not called a definition.
    let how = if surest == ASSIGNED {
        "assigned"
    } else {
        "defined"
    };
    Some(AnswerNote {
        kind: NoteKind::Definition,
        text: format!("{shows} `{written}` {how} in {listed}."),
    })
}

/// The least sure rank: a name assigned at the start of a line, without a defining word.
const ASSIGNED: u8 = 3;

/// How surely the search's line `m`, which defines `name` (lower-case), is the definition
/// `question` asks for; lower is surer. A file named after the name (`helpers/slugify.js` for
/// `slugify`) comes first; then the name as the question writes it, then in another case. Where
/// the code index reads the file's language, its mark says the line is a definition; elsewhere
/// the name must follow a defining word (`class Tokenizer`), and a line without one, an
/// assignment at the start of a line (`tokenizer = new Tokenizer(…)`, `slugify = true`),
/// comes last, as it may only set a variable.
fn sureness(m: &Hit, name: &str, question: &str) -> u8 {
    let file = m.path.rsplit('/').next().unwrap_or(&m.path);
    let stem = file.split('.').next().unwrap_or(file);
    if stem.eq_ignore_ascii_case(name) {
        return 0;
    }
    let tokens: Vec<&str> = code_words(&m.text).collect();
    let asked: Vec<&str> = code_words(question).collect();
    let indexed = index_read(m);
    let defined = tokens.iter().enumerate().filter_map(|(i, word)| {
        let after_defining_word =
            i > 0 && DEFINING_WORDS.contains(&tokens[i - 1].to_lowercase().as_str());
        (word.to_lowercase() == name && (indexed || after_defining_word)).then_some(*word)
    });
    let mut rank = ASSIGNED;
    for written in defined {
        rank = rank.min(if asked.contains(&written) { 1 } else { 2 });
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn ok(data: Value) -> SeenResult {
        serde_json::from_value(json!({"success": true, "data": data})).unwrap()
    }

    #[test]
    fn a_count_is_given_only_for_a_question_about_how_many_files() {
        let listing =
            ok(json!({"directory": "tests", "files": [], "count": 20, "pattern": "test_*.py"}));
        let asked = "How many test_*.py files does tests hold?";
        let note = count_note(
            &Question::read(asked),
            std::slice::from_ref(&listing),
            "tests/test_a.py, …",
        )
        .unwrap();
        assert_eq!(
            note.text,
            "The listing of `tests` matching `test_*.py` found 20 files."
        );
        assert_eq!(note.kind, NoteKind::Count);
        for other in [
            "Which files are in tests?",
            "How many tests are there?",
            "How many rows does the table keep?",
        ] {
            assert_eq!(
                count_note(&Question::read(other), std::slice::from_ref(&listing), ""),
                None,
                "{other}"
            );
        }
    }

    #[test]
    fn a_count_comes_from_the_last_listing_and_says_when_the_walk_stopped_early() {
        let first = ok(json!({"directory": ".", "files": ["a"], "count": 1}));
        let last = ok(json!({"directory": ".", "files": [], "count": 7, "walk_incomplete": true}));
        let failed =
            serde_json::from_value(json!({"success": false, "data": {"files": [], "count": 0}}))
                .unwrap();
        let note = count_note(
            &Question::read("How many files does it have?"),
            &[first, last, failed],
            "",
        )
        .unwrap();
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
            count_note(
                &Question::read(asked),
                std::slice::from_ref(&listing),
                "It holds 4 files."
            ),
            None
        );
        assert!(count_note(
            &Question::read(asked),
            std::slice::from_ref(&listing),
            "It holds 14 files."
        )
        .is_some());
        assert_eq!(
            count_note(
                &Question::read(asked),
                &[ok(json!({"matches": []}))],
                "Some."
            ),
            None
        );
    }

    #[test]
    fn a_definition_is_given_for_where_questions_and_an_import_is_not_one() {
        let search = ok(json!({"matches": [
            {"path": "README.md", "line": 9, "text": "kit.slugify('v2')"},
            {"path": "index.js", "line": 28, "text": "const slugify = require('./helpers/slugify')"},
        ]}));
        assert_eq!(
            definition_note(
                &Question::read("Where is slugify defined?"),
                std::slice::from_ref(&search),
                ""
            ),
            None
        );
        let search = ok(json!({"matches": [
            {"path": "src/click/utils.py", "line": 40, "text": "def get_app_dir(app_name: str) -> str:", "defines": "get_app_dir"},
        ]}));
        let asked = "Where can I find get_app_dir?";
        let note = definition_note(
            &Question::read(asked),
            std::slice::from_ref(&search),
            "It returns a folder.",
        )
        .unwrap();
        assert_eq!(
            note.text,
            "The search shows `get_app_dir` defined in src/click/utils.py (line 40)."
        );
        assert_eq!(
            definition_note(
                &Question::read("What does get_app_dir return?"),
                std::slice::from_ref(&search),
                ""
            ),
            None
        );
        assert_eq!(
            definition_note(
                &Question::read(asked),
                std::slice::from_ref(&search),
                "In src/click/utils.py."
            ),
            None
        );
    }

    #[test]
    fn questions_of_other_forms_get_no_note() {
        let listing = ok(json!({"directory": ".", "files": ["a.js"], "count": 1}));
        for asked in [
            "How many lines are in the file main.rs?",
            "How many files did you change?",
            "How many files import lodash?",
        ] {
            assert_eq!(
                count_note(&Question::read(asked), std::slice::from_ref(&listing), ""),
                None,
                "{asked}"
            );
        }
        for asked in [
            "How many files are there?",
            "How many Python files are in src?",
            "How many test_*.py files?",
        ] {
            assert!(
                count_note(&Question::read(asked), std::slice::from_ref(&listing), "").is_some(),
                "{asked}"
            );
        }
        let search = ok(
            json!({"matches": [{"path": "src/u.py", "line": 3, "text": "def banner(message):", "defines": "banner"}]}),
        );
        for asked in ["Where is banner called?", "Which files import banner?"] {
            assert_eq!(
                definition_note(&Question::read(asked), std::slice::from_ref(&search), ""),
                None,
                "{asked}"
            );
        }
        // A longer path that ends in the place's path does not name it.
        assert!(definition_note(
            &Question::read("Where is banner defined?"),
            std::slice::from_ref(&search),
            "In lib/src/u.py."
        )
        .is_some());
        assert_eq!(
            definition_note(
                &Question::read("Where is banner defined?"),
                &[search],
                "In src/u.py."
            ),
            None
        );
    }

    #[test]
    fn the_note_is_about_the_name_defined_most_surely() {
        let search = ok(json!({"matches": [
            {"path": "app.js", "line": 1, "text": "const config = load()", "defines": "config"},
            {"path": "timeout.js", "line": 4, "text": "const timeout = 30", "defines": "timeout"},
        ]}));
        let note = definition_note(
            &Question::read("Where is the timeout set in the config?"),
            &[search],
            "",
        )
        .unwrap();
        assert_eq!(
            note.text,
            "The search shows `timeout` defined in timeout.js (line 4)."
        );
    }

    #[test]
    fn where_the_index_reads_the_language_its_mark_makes_a_definition_without_a_defining_word() {
        let asked = Question::read("Where is retry_limit set?");
        let module_constant = ok(json!({"matches": [
            {"path": "spool/settings.py", "line": 3, "text": "RETRY_LIMIT = 7", "defines": "RETRY_LIMIT"},
        ]}));
        assert_eq!(
            definition_note(&asked, &[module_constant], "")
                .unwrap()
                .text,
            "The search shows `RETRY_LIMIT` defined in spool/settings.py (line 3)."
        );
        // A file the index did not read: the line is read as code, and it may only set it.
        let unread = ok(json!({"matches": [
            {"path": "spool/settings.py", "line": 3, "text": "RETRY_LIMIT = 7", "unindexed": true},
        ]}));
        assert_eq!(
            definition_note(&asked, &[unread], "").unwrap().text,
            "The search shows `RETRY_LIMIT` assigned in spool/settings.py (line 3)."
        );
    }

    #[test]
    fn a_definition_note_names_the_surest_places_only() {
        let search = ok(json!({"matches": [
            {"path": "bin/kit.js", "line": 20, "text": "let slugify = false"},
            {"path": "bin/kit.js", "line": 84, "text": "        slugify = true"},
            {"path": "helpers/slugify.js", "line": 5, "text": "const slugify = (title, options) => {", "defines": "slugify"},
        ]}));
        let note =
            definition_note(&Question::read("Where is slugify defined?"), &[search], "").unwrap();
        assert_eq!(
            note.text,
            "The search shows `slugify` defined in helpers/slugify.js (line 5)."
        );
        let search = ok(json!({"matches": [
            {"path": "rules/outer.js", "line": 51, "text": "tokenizer = new Tokenizer('>=0.0.0')"},
            {"path": "lib/parse.js", "line": 2, "text": "const tokenizer = parse(text)", "defines": "tokenizer"},
            {"path": "lib/types.js", "line": 9, "text": "export class Tokenizer {", "defines": "Tokenizer"},
        ]}));
        let note = definition_note(
            &Question::read("Where is the Tokenizer class?"),
            std::slice::from_ref(&search),
            "",
        )
        .unwrap();
        assert_eq!(
            note.text,
            "The search shows `Tokenizer` defined in lib/types.js (line 9)."
        );
        // The answer names the surest place: no note, though it leaves the others out.
        assert_eq!(
            definition_note(
                &Question::read("Where is the Tokenizer class?"),
                &[search],
                "In lib/types.js."
            ),
            None
        );
    }

    #[test]
    fn a_definition_note_keeps_the_code_s_case_and_names_each_place_once() {
        let search = ok(json!({"matches": [
            {"path": "a.ts", "line": 3, "text": "export class Ledger {", "defines": "Ledger"},
            {"path": "a.ts", "line": 3, "text": "export class Ledger {", "defines": "Ledger"},
            {"path": "b.ts", "line": 8, "text": "class Ledger extends Base {", "defines": "Ledger"},
        ]}));
        let note =
            definition_note(&Question::read("Where is the Ledger class?"), &[search], "").unwrap();
        assert_eq!(
            note.text,
            "The search shows `Ledger` defined in a.ts (line 3) and b.ts (line 8)."
        );
    }
}
