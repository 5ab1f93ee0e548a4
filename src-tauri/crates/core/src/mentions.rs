//! Which files and folders of the workspace a message names: by a path (`functions/inc.js`,
//! `src/`) or by a file's name alone (`utils.py`); and which names of its code: a word that can
//! only be a name in code (`make_default_short_help`, `UsageError`) that a file of the
//! workspace defines. A message that names a file the project has, or a name the project
//! defines, is a question about the project; the backends use this to make such a first step
//! a call.

use crate::model::{FileTexts, KnownPaths};
use crate::question::Question;
use crate::relevance::defines;

/// The most bytes of the workspace's files read to find where a name is defined: a large
/// project is read only this far, and a name defined beyond is not found.
const MAX_SCANNED_BYTES: usize = 16 << 20;

/// The files and folders of the workspace a question names.
#[derive(Debug, Default, PartialEq)]
pub struct NamedPaths {
    /// Files named by their path or by their name alone; sorted.
    pub files: Vec<String>,
    /// Folders named by their path; sorted.
    pub folders: Vec<String>,
}

impl NamedPaths {
    /// Every file and folder named, files first.
    pub fn all(&self) -> impl Iterator<Item = &str> {
        self.files.iter().chain(&self.folders).map(String::as_str)
    }
}

/// The files and folders of the workspace `question` names: each of its paths
/// ([`Question::paths`], an `@` before it or a `/` after it aside) that is a folder, or a file
/// by its path (`functions/inc.js`) or by its name alone (`utils.py` names every
/// `…/utils.py`). The one reading of "the paths a message names" that the first-step rule,
/// the folders' own instructions and the code map's focus share.
pub fn named_paths(question: &Question, known: &KnownPaths) -> NamedPaths {
    let mut named = NamedPaths::default();
    for word in &question.paths {
        let word = word.trim_start_matches('@').trim_end_matches('/');
        if word.is_empty() {
            continue;
        }
        named.files.extend(
            known
                .files
                .iter()
                .filter(|file| is_the_file(word, file))
                .cloned(),
        );
        named
            .folders
            .extend(known.folders.iter().filter(|f| *f == word).cloned());
    }
    for paths in [&mut named.files, &mut named.folders] {
        paths.sort();
        paths.dedup();
    }
    named
}

/// Does this question name a file or folder of the workspace ([`named_paths`])? A question
/// about a file the project has is a question about the project, whatever the model's score
/// says.
pub fn names_a_workspace_path(question: &Question, known: &KnownPaths) -> bool {
    named_paths(question, known).all().next().is_some()
}

/// The new files the question asks for (`CHANGELOG.md`, `.gitignore`, `tests/power.rs`): the
/// paths it names ([`Question::paths`]) where a file is made ([`Question::made`]: not `.npmrc`
/// in "Put .npmrc in the .gitignore") that are files, not known ones, relative, and in a
/// folder that exists. A bare extension the workspace's files end with (`.py` in "the .py
/// modules", where `app.py` is one) names a kind of file, not a new one, and an address
/// (`help@example.org` in "telling readers to write to help@example.org") is none either.
pub fn new_files_named(question: &Question, known: &KnownPaths) -> Vec<String> {
    let new_file = |word: &str| {
        let folder = word.rsplit_once('/').map_or(".", |(parent, _)| parent);
        // A file's name has an extension or is a dotfile; `src/click` is a folder.
        crate::question::names_a_file(word)
            && !known.folders.iter().any(|f| f == word)
            // No leading or trailing `/`, no `a//b`, no `..`.
            && !word.split('/').any(|part| part == ".." || part.is_empty())
            && !word.contains(['*', '@'])
            && known.folders.iter().any(|f| f == folder)
            // `utils.py` may be short for `src/click/utils.py`: a file the project has.
            && !is_known_file(word, known)
            && !is_an_extension_of(word, known)
    };
    question
        .paths
        .iter()
        .filter(|w| new_file(w) && question.made.contains(w))
        .cloned()
        .collect()
}

/// Is `word` a bare extension (`.py`: a dot, then no dot or `/`) that a file of the workspace
/// has after a name of its own (`notes/app.py`)?
fn is_an_extension_of(word: &str, known: &KnownPaths) -> bool {
    let is_bare = word
        .strip_prefix('.')
        .is_some_and(|rest| !rest.is_empty() && !rest.contains(['.', '/']));
    is_bare
        && known.files.iter().any(|file| {
            let name = file
                .rsplit_once('/')
                .map_or(file.as_str(), |(_, name)| name);
            name.len() > word.len() && name.ends_with(word)
        })
}

/// Is `word` a file of the workspace, by its path or by its name alone (`utils.py` for
/// `src/click/utils.py`)?
pub fn is_known_file(word: &str, known: &KnownPaths) -> bool {
    known.files.iter().any(|file| is_the_file(word, file))
}

/// Does `word` name `file`, by its path or by its name alone?
fn is_the_file(word: &str, file: &str) -> bool {
    file == word
        || file
            .strip_suffix(word)
            .is_some_and(|parent| parent.ends_with('/'))
}

/// Is `name`, spelled as it is, one of `defined`, the names the code index found (sorted)?
pub fn is_indexed(defined: &[String], name: &str) -> bool {
    defined.binary_search_by(|d| d.as_str().cmp(name)).is_ok()
}

/// Does this question name something the workspace defines, by a word that can only be a
/// name in code ([`Question::code_names`])? `defined` are the names the code index found
/// (sorted); the files of languages the index does not read are searched line by line for a
/// definition of the word (`MAX_LENGTH = 256` in a config file; see [`names_a_defined_name`]).
pub fn names_an_indexed_name(
    question: &Question,
    defined: &[String],
    known: &KnownPaths,
    files: &dyn FileTexts,
) -> bool {
    if question
        .code_names
        .iter()
        .any(|word| is_indexed(defined, word))
    {
        return true;
    }
    let not_indexed = KnownPaths {
        files: known
            .files
            .iter()
            .filter(|f| lantern_index::Language::of_path(f).is_none())
            .cloned()
            .collect(),
        folders: Vec::new(),
    };
    names_a_defined_name(question, &not_indexed, files)
}

/// Does this question name something a file of the workspace defines (`class UsageError`,
/// `def make_default_short_help(`, `MAX_LENGTH = 256`), by a word that can only be a name in
/// code ([`Question::code_names`])? The files are read in order, at most
/// `MAX_SCANNED_BYTES`, and a line defines a name when it reads like a definition (see
/// [`defines`]).
pub fn names_a_defined_name(
    question: &Question,
    known: &KnownPaths,
    files: &dyn FileTexts,
) -> bool {
    let names: Vec<String> = question
        .code_names
        .iter()
        .map(|n| n.to_lowercase())
        .collect();
    if names.is_empty() {
        return false;
    }
    let mut budget = MAX_SCANNED_BYTES;
    for file in &known.files {
        let Some(text) = files.text_of(file) else {
            continue;
        };
        let Some(left) = budget.checked_sub(text.len()) else {
            return false;
        };
        budget = left;
        let lower = text.to_lowercase();
        if names.iter().any(|name| lower.contains(name.as_str()))
            && text.lines().any(|line| defines(line, &names))
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_the_question_names_can_be_written_where_its_folder_exists() {
        let known = KnownPaths {
            files: vec!["README.md".to_string(), "tests/add.rs".to_string()],
            folders: vec![".".to_string(), "tests".to_string()],
        };
        let named = |q: &str| new_files_named(&Question::read(q), &known);
        assert_eq!(
            named("Draft CHANGELOG.md, headed by the project's name."),
            ["CHANGELOG.md"]
        );
        assert_eq!(
            named("Add a .gitignore listing dist and target."),
            [".gitignore"]
        );
        assert_eq!(
            named("Add tests/power.rs for power(2, 8)."),
            ["tests/power.rs"]
        );
        assert!(
            named("Write docs/guide.md").is_empty(),
            "docs/ does not exist"
        );
        assert!(named("Update README.md and ../x.md and *.log").is_empty());
        assert!(
            named("Which files sit in tests/unit or tests").is_empty(),
            "folders"
        );
        // A kind of file the project has is no new file, a dotfile it lacks is one.
        assert!(named("We want every .rs source counted").is_empty());
        assert_eq!(named("I'd like a .editorconfig"), [".editorconfig"]);
        assert_eq!(
            named("Make CONTACT.md with a line telling readers to write to help@example.org."),
            ["CONTACT.md"]
        );
    }

    #[test]
    fn a_message_names_a_defined_name_by_a_word_only_code_uses() {
        let texts = [
            ("README.md", "Quill is written in Python for JavaScript fans.\n"),
            ("src/utils.py", "def shorten_summary(text, max_width=45):\n    pass\nclass ParseFailure(QuillException):\n"),
            ("src/core.py", "from .utils import shorten_summary\nHTTP = 1\n"),
        ];
        let known = KnownPaths::from_files(texts.iter().map(|(p, _)| p.to_string()).collect());
        for yes in [
            "Which max_width does shorten_summary use by default?",
            "What is the base class of ParseFailure?",
        ] {
            assert!(
                names_a_defined_name(&Question::read(yes), &known, &texts),
                "{yes}"
            );
        }
        for no in [
            // Prose, and names that are used but not defined, or defined nowhere.
            "Is JavaScript faster than Python?",
            "What does HTTP stand for?",
            "What does QuillException mean?",
            "Where is parse_args_now defined?",
        ] {
            assert!(
                !names_a_defined_name(&Question::read(no), &known, &texts),
                "{no}"
            );
        }
        use crate::words::is_code_name;
        assert!(is_code_name("_posixify") && is_code_name("applyDiscount"));
        assert!(!is_code_name("LRU") && !is_code_name("Python") && !is_code_name("a_b"));
    }

    #[test]
    fn indexed_names_decide_and_only_files_of_no_indexed_language_are_read() {
        let texts = [
            ("src/app.py", "def local():\n    max_retries = 3\n"),
            ("settings.cfg", "RETRY_LIMIT = 5\n"),
        ];
        let known = KnownPaths::from_files(texts.iter().map(|(p, _)| p.to_string()).collect());
        let defined = vec!["ParseFailure".to_string(), "local".to_string()];
        assert!(names_an_indexed_name(
            &Question::read("What does ParseFailure mean?"),
            &defined,
            &known,
            &texts
        ));
        // A local variable the index does not count as a definition is not one any more.
        assert!(!names_an_indexed_name(
            &Question::read("What is max_retries?"),
            &defined,
            &known,
            &texts
        ));
        assert!(
            names_a_defined_name(&Question::read("What is max_retries?"), &known, &texts),
            "the line rule did"
        );
        // A file the index cannot read is still searched.
        assert!(names_an_indexed_name(
            &Question::read("What is RETRY_LIMIT?"),
            &defined,
            &known,
            &texts
        ));
    }

    #[test]
    fn a_large_project_is_read_only_up_to_the_budget() {
        struct Big(std::cell::Cell<usize>);
        impl FileTexts for Big {
            fn text_of(&self, rel: &str) -> Option<String> {
                self.0.set(self.0.get() + 1);
                let defined = rel == "f99.py";
                Some(match defined {
                    true => "def far_away_name():\n".to_string(),
                    false => "x = 1\n".repeat(1 << 18),
                })
            }
        }
        let big = Big(std::cell::Cell::new(0));
        let files = (0..100).map(|i| format!("f{i:02}.py")).collect();
        let known = KnownPaths::from_files(files);
        assert!(!names_a_defined_name(
            &Question::read("What does far_away_name do?"),
            &known,
            &big
        ));
        let read = big.0.get();
        assert!(
            read <= 17,
            "{read} files of 1.5 MiB read for a 16 MiB budget"
        );
    }

    #[test]
    fn a_message_names_a_workspace_path_by_its_path_or_its_file_name() {
        let known = crate::model::KnownPaths {
            files: vec!["src/quill/utils.py".into(), "helpers/slug.js".into()],
            folders: vec![
                ".".into(),
                "src".into(),
                "src/quill".into(),
                "helpers".into(),
            ],
        };
        for yes in [
            "Explain the safecall decorator of utils.py.",
            "What does helpers/slug.js do?",
            "List the Python modules under src/quill.",
        ] {
            assert!(
                names_a_workspace_path(&Question::read(yes), &known),
                "{yes}"
            );
        }
        for no in [
            "What does a utils module usually hold?",
            "What is in app.py?",
            "Is 2.5 a float?",
        ] {
            assert!(!names_a_workspace_path(&Question::read(no), &known), "{no}");
        }
    }

    #[test]
    fn a_file_named_by_its_name_alone_is_every_file_of_that_name() {
        let known = crate::model::KnownPaths::from_files(vec![
            "docs/utils.py".into(),
            "src/click/utils.py".into(),
            "src/click/testutils.py".into(),
            "src/click/core.py".into(),
        ]);
        let named = named_paths(
            &Question::read("Compare utils.py with @src/click/."),
            &known,
        );
        assert_eq!(named.files, ["docs/utils.py", "src/click/utils.py"]);
        assert_eq!(named.folders, ["src/click"]);
        assert_eq!(
            named.all().collect::<Vec<_>>(),
            ["docs/utils.py", "src/click/utils.py", "src/click"]
        );
        // A part of a file's name is not its name, and a bare word is not a folder's path.
        let named = named_paths(&Question::read("Is tils.py or click in src?"), &known);
        assert_eq!(named, NamedPaths::default());
    }
}
