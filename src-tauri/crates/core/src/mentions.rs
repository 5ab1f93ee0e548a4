//! Which files and folders of the workspace a message names: by a path (`functions/inc.js`,
//! `src/`) or by a file's name alone (`utils.py`). A message that names a file the project has
//! is a question about the project; the backends use this to make such a first step a call.

use crate::model::KnownPaths;

/// Does this word of a message name a file (`notes.md`, `.gitignore`, `src/app.ts`) or a
/// folder (`src/`)?
/// Version numbers (`1.2`) do not.
pub fn names_a_path(word: &str) -> bool {
    let word = word.trim_end_matches('.');
    let dotfile = word.len() > 1
        && word.starts_with('.')
        && word[1..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_".contains(c));
    if dotfile {
        return true;
    }
    match word.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && !ext.chars().all(|c| c.is_ascii_digit())
        }
        None => word.contains('/') && word.len() > 1,
    }
}

/// Does this message name a file or folder of the workspace, by its path (`functions/inc.js`)
/// or, for a file, by its name alone (`utils.py`, `logging.ini`)? A question about a file the
/// project has is a question about the project, whatever the model's score says.
pub fn names_a_workspace_path(message: &str, known: &KnownPaths) -> bool {
    message_words(message)
        .map(|word| word.trim_end_matches('.').trim_end_matches('/'))
        .filter(|word| names_a_path(word))
        .any(|word| is_known_file(word, known) || known.folders.iter().any(|f| f == word))
}

/// The words of a message, split at spaces, quotes and punctuation that cannot be part of a
/// path (a word may keep a final `.`, as in "…in notes.md.").
pub fn message_words(message: &str) -> impl Iterator<Item = &str> {
    message.split(|c: char| c.is_whitespace() || "\"'`,;:()?!".contains(c))
}

/// Is `word` a file of the workspace, by its path or by its name alone (`utils.py` for
/// `src/click/utils.py`)?
pub fn is_known_file(word: &str, known: &KnownPaths) -> bool {
    known
        .files
        .iter()
        .any(|file| file == word || file.ends_with(&format!("/{word}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_names_a_workspace_path_by_its_path_or_its_file_name() {
        let known = crate::model::KnownPaths {
            files: vec!["src/click/utils.py".into(), "functions/inc.js".into()],
            folders: vec![
                ".".into(),
                "src".into(),
                "src/click".into(),
                "functions".into(),
            ],
        };
        for yes in [
            "What does the safecall decorator in utils.py do?",
            "What does functions/inc.js do?",
            "Which Python files are in src/click?",
        ] {
            assert!(names_a_workspace_path(yes, &known), "{yes}");
        }
        for no in [
            "What does a utils module usually hold?",
            "What is in app.py?",
            "Is 2.5 a float?",
        ] {
            assert!(!names_a_workspace_path(no, &known), "{no}");
        }
    }
}
