//! A file an answer names by its name alone, given by its path.
//!
//! A tiny model that has just read `classes/comparator.js` in a search's result often answers
//! "It is defined in Comparator.js": the file it means, by a name the user cannot open. When
//! the turn's tool results showed exactly one file of that name (case aside), the answer the
//! user is given names it by its path; a name several shown files share, or none, is left as
//! the model wrote it, and so is a name that is already a path of the workspace.
//!
//! ```
//! use lantern_core::answer_paths::{files_shown, with_paths};
//! use lantern_core::model::KnownPaths;
//! let known = KnownPaths::from_files(vec!["classes/comparator.js".into(), "index.js".into()]);
//! let shown = files_shown([r#"{"matches": [{"path": "classes/comparator.js", "line": 3}]}"#], &known);
//! let (answer, named) = with_paths("It is defined in Comparator.js.", &shown, &known).unwrap();
//! assert_eq!(answer, "It is defined in classes/comparator.js.");
//! assert_eq!(named[0].path, "classes/comparator.js");
//! assert_eq!(with_paths("It is in index.js.", &shown, &known), None);
//! ```

use crate::model::KnownPaths;
use crate::words::names_a_path;
use crate::words::{in_path, path_words};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A file name of the answer and the path it was given as.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PathGiven {
    /// As the model wrote it (`Comparator.js`).
    pub name: String,
    /// The file of the workspace it names (`classes/comparator.js`).
    pub path: String,
}

/// The files of the workspace that these tool results show, by their paths as the results
/// write them (a search's match, a listing's entry, a read file), sorted and without repeats.
pub fn files_shown<'a>(
    results: impl IntoIterator<Item = &'a str>,
    known: &KnownPaths,
) -> Vec<String> {
    let mut shown: Vec<String> = results
        .into_iter()
        .flat_map(path_words)
        .filter(|word| known.has_file(word))
        .map(str::to_string)
        .collect();
    shown.sort();
    shown.dedup();
    shown
}

/// The one file in `shown` that `name` names, by its name alone or the end of its path, case
/// aside; `None` when none or several do.
fn the_file_named<'a>(name: &str, shown: &'a [String]) -> Option<&'a str> {
    let name = name.to_lowercase();
    let tail = format!("/{name}");
    let mut named = shown.iter().filter(|path| {
        let path = path.to_lowercase();
        path == name || path.ends_with(&tail)
    });
    let first = named.next()?;
    named.next().is_none().then_some(first.as_str())
}

/// `answer` with each file it names by its name alone written as the path of the one file of
/// `shown` with that name, and what was given so; `None` when it names none that way.
pub fn with_paths(
    answer: &str,
    shown: &[String],
    known: &KnownPaths,
) -> Option<(String, Vec<PathGiven>)> {
    let mut given: Vec<PathGiven> = Vec::new();
    let mut out = String::with_capacity(answer.len());
    let mut rest = answer;
    while let Some(start) = rest.find(in_path) {
        out.push_str(&rest[..start]);
        let word_len = rest[start..]
            .find(|c| !in_path(c))
            .unwrap_or(rest.len() - start);
        let word = &rest[start..start + word_len];
        // A sentence's full stop is not part of the name before it.
        let name = word.trim_end_matches('.');
        let path = (names_a_path(name)
            && !name.starts_with('/')
            && !name.contains("..")
            && !known.has_file(name))
        .then(|| the_file_named(name, shown))
        .flatten();
        match path {
            Some(path) => {
                out.push_str(path);
                out.push_str(&word[name.len()..]);
                if !given.iter().any(|g| g.name == name) {
                    given.push(PathGiven {
                        name: name.to_string(),
                        path: path.to_string(),
                    });
                }
            }
            None => out.push_str(word),
        }
        rest = &rest[start + word_len..];
    }
    out.push_str(rest);
    (!given.is_empty()).then_some((out, given))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> KnownPaths {
        KnownPaths::from_files(
            [
                "README.md",
                "classes/comparator.js",
                "classes/range.js",
                "functions/clean.js",
                "src/click/utils.py",
                "tests/test_utils.py",
                "a/util.rs",
                "b/util.rs",
            ]
            .map(String::from)
            .to_vec(),
        )
    }

    fn shown(results: &[&str]) -> Vec<String> {
        files_shown(results.iter().copied(), &known())
    }

    #[test]
    fn results_show_the_workspace_files_they_write_and_nothing_else() {
        let result = r#"{"matches": [{"path": "classes/range.js", "line": 1, "text": "const x = require('./comparator.js')"}], "files": ["a/util.rs", "gone.js"]}"#;
        assert_eq!(shown(&[result]), ["a/util.rs", "classes/range.js"]);
        assert_eq!(
            shown(&["classes/range.js:7: class Range {", "classes/range.js"]),
            ["classes/range.js"]
        );
    }

    #[test]
    fn a_bare_name_one_shown_file_has_becomes_its_path() {
        let shown = shown(&[r#"{"path": "src/click/utils.py"}"#]);
        let (answer, given) = with_paths(
            "The echo function is defined in `utils.py`. See utils.py:12.",
            &shown,
            &known(),
        )
        .unwrap();
        assert_eq!(
            answer,
            "The echo function is defined in `src/click/utils.py`. See src/click/utils.py:12."
        );
        assert_eq!(
            given,
            [PathGiven {
                name: "utils.py".into(),
                path: "src/click/utils.py".into()
            }]
        );
    }

    #[test]
    fn case_aside_and_a_path_s_end_count_as_naming_it() {
        let shown = shown(&["classes/comparator.js functions/clean.js src/click/utils.py"]);
        let (answer, _) = with_paths(
            "Comparator.js, clean.js:2: and click/utils.py.",
            &shown,
            &known(),
        )
        .unwrap();
        assert_eq!(
            answer,
            "classes/comparator.js, functions/clean.js:2: and src/click/utils.py."
        );
    }

    #[test]
    fn paths_names_shared_or_never_shown_and_other_words_stay_as_written() {
        let shown = shown(&["a/util.rs b/util.rs classes/range.js README.md"]);
        for answer in [
            "It is in util.rs.",
            "It is in comparator.js.",
            "It is in classes/range.js and README.md.",
            "Version 2.0.0, e.g. 1.2, see https://example.com/range.js or /range.js.",
            "Nothing named at all.",
        ] {
            assert_eq!(with_paths(answer, &shown, &known()), None, "{answer}");
        }
    }

    #[test]
    fn text_beyond_ascii_is_kept() {
        let shown = shown(&["classes/range.js"]);
        let (answer, _) = with_paths("« Range.js » — voilà.", &shown, &known()).unwrap();
        assert_eq!(answer, "« classes/range.js » — voilà.");
    }
}
