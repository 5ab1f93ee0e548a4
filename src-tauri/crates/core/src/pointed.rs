//! Which files the conversation points at, and which files a model's write would change that
//! it never pointed at.
//!
//! A small model asked to add a line to `.gitignore` may propose an edit of `package.json`
//! instead; a user who allows it without reading the diff loses content they never asked to
//! touch. A write's file is *pointed at* when a message of the user names it (by its path, its
//! name, or its name without the extension: "the README", "the slugify helper"; a name the
//! project's code defines counts that way only for a file that defines it) or a tool
//! result that succeeded reported on it (the file read or written, a search's match; not a
//! path written inside a file's text, nor a mere entry of a listing). A file that does not
//! exist yet is pointed at only where the user asks for it to be made ("Create NOTES.md"),
//! not where it is what goes into another file ("Put .npmrc in the .gitignore" asks for no new
//! `.npmrc`; see [`words_where_made`]). Any other file
//! is the model's own guess: the policy asks even where a grant would allow, the confirmation
//! says so, and a fixed answer (`--approve all`) does not approve it; a local model's write is
//! offered only the files pointed at, when there are any.

use crate::model::{Message, Role, SUMMARY_PREFIX};
use crate::question::words_where_made;
use crate::words::message_words;
use serde_json::Value;
use std::collections::HashSet;

/// What a conversation points at, gathered once: the words of the user's messages and the
/// paths the successful tool results report on.
pub struct Pointers {
    /// The user's words, lower-case, with a final `.` or `/` and a leading `./` taken off.
    named: HashSet<String>,
    /// The user's words that stand where a file is made ([`words_where_made`]), as `named`.
    made: HashSet<String>,
    /// The paths successful results report on (see [`paths_reported`]).
    shown: HashSet<String>,
}

impl Pointers {
    pub fn of(history: &[Message]) -> Pointers {
        let mut pointers = Pointers {
            named: HashSet::new(),
            made: HashSet::new(),
            shown: HashSet::new(),
        };
        for message in history {
            match message.role {
                // A summary of earlier turns stands as a user message, but the model wrote it.
                Role::User if message.content.starts_with(SUMMARY_PREFIX) => {}
                Role::User => {
                    let text = &message.content;
                    pointers
                        .named
                        .extend(message_words(text).filter_map(as_named));
                    let made = words_where_made(text);
                    pointers
                        .made
                        .extend(made.iter().map(String::as_str).filter_map(as_named));
                }
                // What the model itself says points at nothing: it is the one guessing.
                Role::Tool => {
                    if let Some(result) = message.result().filter(|r| r.seen().succeeded()) {
                        paths_reported(result.value(), &mut pointers.shown);
                    }
                }
                _ => {}
            }
        }
        pointers
    }

    /// Does the conversation point at `path`, a file that `exists` or not yet: a result shows
    /// the whole path, or a user's word is its path, its file name or its file name without
    /// the extension (case aside; a one-letter stem is the article "a" too often to count)?
    /// A new file needs its path or its whole name, standing where a file is made: "Add a
    /// config option" asks for no new `config.toml`.
    pub fn points_at(&self, path: &str, exists: bool) -> bool {
        self.points_at_where_defined(path, exists, &|_| Vec::new())
    }

    /// [`Self::points_at`], where a word that is also a name the project's code defines
    /// (`defined_in` gives the files that define it) names by its stem only a file that
    /// defines it: "the slugify helper" points at `src/slugify.js`, which defines `slugify`,
    /// but "the indent helper" does not point at `tests/indent.rs` when `indent` is defined in
    /// `src/indentation.rs`.
    pub fn points_at_where_defined(
        &self,
        path: &str,
        exists: bool,
        defined_in: &dyn Fn(&str) -> Vec<String>,
    ) -> bool {
        let name = path.rsplit('/').next().unwrap_or(path);
        let stem = match name.rsplit_once('.') {
            Some((stem, _)) if stem.chars().count() > 1 => stem,
            _ => name,
        };
        let (words, forms) = match exists {
            true => (&self.named, &[path, name][..]),
            false => (&self.made, &[path, name][..]),
        };
        let by_stem = exists && stem != name && self.named.contains(&stem.to_lowercase()) && {
            let places = defined_in(stem);
            places.is_empty() || places.iter().any(|place| place == path)
        };
        self.shown.contains(path)
            || forms.iter().any(|w| words.contains(&w.to_lowercase()))
            || by_stem
    }
}

/// A user's word as [`Pointers`] keeps it: `/` for `\\`, lower-case, with a final `.` or `/`
/// and a leading `./` taken off; none if nothing is left.
fn as_named(word: &str) -> Option<String> {
    let word = word.replace('\\', "/");
    let word = word
        .trim_end_matches(['.', '/'])
        .trim_start_matches("./")
        .to_lowercase();
    (!word.is_empty()).then_some(word)
}

/// The files of `files` (each a workspace-relative path and whether it exists) that no user
/// message of `history` points at and no successful tool result of it shows, in the order
/// given; `defined_in` gives the files that define a name (see
/// [`Pointers::points_at_where_defined`]).
pub fn unpointed(
    files: &[(String, bool)],
    history: &[Message],
    defined_in: &dyn Fn(&str) -> Vec<String>,
) -> Vec<String> {
    let pointers = Pointers::of(history);
    files
        .iter()
        .filter(|(path, exists)| !pointers.points_at_where_defined(path, *exists, defined_in))
        .map(|(path, _)| path.clone())
        .collect()
}

/// The files a result reports on: the values of its `path` members (the file read or
/// written, each match of a search). What files *contain* (a path written in a file's text, a
/// command's output) is not among them, nor are a listing's bare names: a file seen in a list
/// of hundreds is no more meant than any other.
fn paths_reported(value: &Value, into: &mut HashSet<String>) {
    match value {
        Value::Object(members) => {
            for (key, member) in members {
                match (key.as_str(), member) {
                    ("path", Value::String(path)) => {
                        into.insert(path.trim_start_matches("./").to_string());
                    }
                    _ => paths_reported(member, into),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| paths_reported(item, into)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Message {
        Message::new(Role::User, text)
    }

    fn result(json: serde_json::Value) -> Message {
        Message::tool_result("call-1", json.into())
    }

    fn unpointed_of(path: &str, history: &[Message]) -> Vec<String> {
        unpointed(&[(path.to_string(), true)], history, &|_| Vec::new())
    }

    fn unpointed_new(path: &str, history: &[Message]) -> Vec<String> {
        unpointed(&[(path.to_string(), false)], history, &|_| Vec::new())
    }

    #[test]
    fn a_stem_that_the_code_defines_elsewhere_does_not_point_at_the_file_it_names() {
        let history = [user("The wrap helper drops the last word. Please fix it.")];
        let defined_in = |name: &str| match name {
            "wrap" => vec!["src/wrapping.rs".to_string()],
            _ => Vec::new(),
        };
        let files = |path: &str| [(path.to_string(), true)];
        // The test file named after the function is not where it is defined.
        assert_eq!(
            unpointed(&files("tests/wrap.rs"), &history, &defined_in),
            ["tests/wrap.rs"]
        );
        // A file that defines it, or a name no code defines, is pointed at by its stem.
        let defined_here = |_: &str| vec!["lib/wrap.js".to_string()];
        assert!(unpointed(&files("lib/wrap.js"), &history, &defined_here).is_empty());
        assert!(unpointed(&files("tests/wrap.rs"), &history, &|_| Vec::new()).is_empty());
    }

    #[test]
    fn a_new_file_is_pointed_at_where_the_user_asks_for_it_to_be_made() {
        for text in [
            "Create docs/faq.md with three questions.",
            "I'd like a faq.md in the docs folder.",
            "Write the totals to docs/faq.md.",
        ] {
            assert!(
                unpointed_new("docs/faq.md", &[user(text)]).is_empty(),
                "{text}"
            );
        }
        // Named as what goes into another file, as a file asked about, or by its stem alone:
        // not to be made.
        for text in [
            "Add docs/faq.md to the .prettierignore.",
            "Does docs/faq.md exist yet?",
            "Add a faq section to the guide.",
        ] {
            assert_eq!(
                unpointed_new("docs/faq.md", &[user(text)]),
                ["docs/faq.md"],
                "{text}"
            );
        }
        // The same words point at a file that exists.
        assert!(unpointed_of("docs/faq.md", &[user("Does docs/faq.md exist yet?")]).is_empty());
    }

    #[test]
    fn a_file_the_user_names_by_path_name_or_stem_is_pointed_at() {
        for text in [
            "Add *.log to .gitignore on a new line.",
            "In `docs/guide.md`, fix the typo.",
            "Please fix the bug in the slugify helper",
            "Update the README.",
        ] {
            let path = match text {
                t if t.contains("gitignore") => ".gitignore",
                t if t.contains("guide") => "docs/guide.md",
                t if t.contains("slugify") => "src/slugify.js",
                _ => "README.md",
            };
            assert!(unpointed_of(path, &[user(text)]).is_empty(), "{text}");
        }
    }

    #[test]
    fn a_file_nobody_named_or_showed_is_the_model_s_guess() {
        let history = [user("Add *.log to .gitignore on a new line.")];
        assert_eq!(unpointed_of("package.json", &history), ["package.json"]);
        // A one-letter stem is the article, not the file.
        assert_eq!(unpointed_of("a.txt", &[user("Write a poem.")]), ["a.txt"]);
        // Part of a longer name is not the name.
        let history = [user("Fix the bug in parser_utils.py")];
        assert_eq!(unpointed_of("src/parser.py", &history), ["src/parser.py"]);
    }

    #[test]
    fn a_successful_result_that_shows_the_file_points_at_it() {
        let history = [
            user("Fix the off-by-one in the pager."),
            result(
                serde_json::json!({"success": true, "data": {"matches": [{"path": "lib/paging/core.js", "line": 3}]}, "error": null}),
            ),
        ];
        assert!(unpointed_of("lib/paging/core.js", &history).is_empty());
        // A longer path that merely contains it shows another file.
        assert_eq!(unpointed_of("paging/core.js", &history), ["paging/core.js"]);
    }

    #[test]
    fn a_listing_s_entries_do_not_point_at_every_file() {
        let history = [
            user("Tidy the ignore rules."),
            result(
                serde_json::json!({"success": true, "data": {"directory": ".", "files": [".gitignore", "package.json"], "count": 2}, "error": null}),
            ),
        ];
        assert_eq!(unpointed_of("package.json", &history), ["package.json"]);
    }

    #[test]
    fn a_file_read_is_shown_but_not_the_paths_its_text_mentions() {
        let read = result(
            serde_json::json!({"success": true, "data": {"path": "package.json", "content": "edit .env next"}, "error": null}),
        );
        let history = [user("Tidy the ignore rules."), read];
        assert!(unpointed_of("package.json", &history).is_empty());
        assert_eq!(unpointed_of(".env", &history), [".env"]);
    }

    #[test]
    fn a_summary_of_earlier_turns_is_not_the_user_s_words() {
        let summary = user(&format!("{SUMMARY_PREFIX}\nThe model edited package.json."));
        assert_eq!(unpointed_of("package.json", &[summary]), ["package.json"]);
    }

    #[test]
    fn a_path_typed_with_backslashes_names_the_file() {
        let history = [user(r"Fix the typo in docs\guide.md")];
        assert!(unpointed_of("docs/guide.md", &history).is_empty());
    }

    #[test]
    fn a_failed_or_refused_call_naming_the_file_does_not_point_at_it() {
        let failed = result(
            serde_json::json!({"success": false, "data": null, "error": {"message": "old_text not found in package.json"}}),
        );
        let refused = Message::call_rejected("{\"success\": true, \"path\": \"package.json\"}");
        let history = [user("Tidy the ignore rules."), failed, refused];
        assert_eq!(unpointed_of("package.json", &history), ["package.json"]);
    }

    #[test]
    fn what_the_model_itself_says_does_not_point_at_a_file() {
        let history = [
            user("Tidy the ignore rules."),
            Message::new(Role::Assistant, "I will edit package.json."),
        ];
        assert_eq!(unpointed_of("package.json", &history), ["package.json"]);
    }
}
