//! The verdict on one run: whether the answer, the files and the check the task asks for hold,
//! in the model's own words and as shown, and whether the answer says another number or file
//! than one of the notes Lantern added.

use crate::matching::{mentions, numbers_in, recites};
use crate::task::{EvalTask, SuccessCriteria};
use lantern_core::answer_notes::{AnswerNote, NoteKind};
use lantern_core::sandbox::Workspace;
use std::path::Path;

/// What a run's answer is judged to be.
pub(crate) struct Verdict {
    /// The model's own answer says another number or file than a note (see
    /// [`TaskOutcome::contradicts_note`](crate::TaskOutcome::contradicts_note)).
    pub(crate) contradicts_note: bool,
    /// The model's answer recites Lantern's instructions (see [`recites`]).
    pub(crate) recites_instructions: bool,
    /// Right in the model's own words.
    pub(crate) success: bool,
    /// Right as the user is shown it, with the notes.
    pub(crate) shown_success: bool,
}

/// What a turn ended with, to be judged.
pub(crate) struct Ending<'a> {
    /// The turn ended in an answer (not an error, a limit or a cancel).
    pub(crate) answered: bool,
    /// The answer in the model's own words.
    pub(crate) model_answer: &'a str,
    /// The answer as the user is shown it.
    pub(crate) shown: &'a str,
    /// The notes Lantern added beneath it.
    pub(crate) notes: &'a [AnswerNote],
    /// What Lantern told the model (the system prompt, the hint after a result): an answer
    /// that recites it is wrong, as shown too.
    pub(crate) instructions: &'a str,
}

/// Scores the answer twice, in the model's own words and as shown, against the task's
/// criteria and the turn's notes.
pub(crate) fn judge(
    ending: &Ending<'_>,
    task: &EvalTask,
    ran_tools: &[&str],
    root: &Path,
) -> Verdict {
    let contradicts_note = ending
        .notes
        .iter()
        .any(|note| contradicts(ending.model_answer, note.kind, &note.text));
    let recites_instructions = recites(ending.model_answer, ending.instructions);
    let holds = |answer: &str| {
        ending.answered
            && !contradicts_note
            && !recites_instructions
            && criteria_hold(&task.success, answer, ran_tools, root)
    };
    let success = holds(ending.model_answer);
    // The files and the check are the same for both: run them once more only when needed.
    let shown_success = success || ending.shown != ending.model_answer && holds(ending.shown);
    Verdict {
        contradicts_note,
        recites_instructions,
        success,
        shown_success,
    }
}

/// Whether `answer` says another number or another file than a note of `kind` with `text`.
fn contradicts(answer: &str, kind: NoteKind, text: &str) -> bool {
    match kind {
        NoteKind::Count => {
            let Some(count) = text
                .split("found ")
                .nth(1)
                .and_then(|rest| numbers_in(rest).into_iter().next())
            else {
                return false;
            };
            let said = numbers_in(answer);
            !said.is_empty() && !said.contains(&count)
        }
        NoteKind::Definition => {
            // The note says where a name is defined, or, for a line it only reads as code,
            // assigned: another file is as wrong either way.
            let places: Vec<&str> = text
                .split(" defined in ")
                .nth(1)
                .or_else(|| text.split(" assigned in ").nth(1))
                .unwrap_or_default()
                .split(", ")
                .filter_map(|place| place.split(" (line").next())
                .map(|p| p.trim().trim_end_matches('.'))
                .filter(|p| !p.is_empty())
                .collect();
            let named = file_names_in(answer);
            !places.is_empty()
                && !named.is_empty()
                && !named.iter().any(|file| {
                    places
                        .iter()
                        .any(|place| place == file || place.ends_with(&format!("/{file}")))
                })
        }
    }
}

/// The words of `text` that look like files: a name with an extension, or a path.
fn file_names_in(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || "`'\"(),;:".contains(c))
        .map(|w| w.trim_end_matches(['.', '!', '?']))
        .filter(|w| {
            let name = w.rsplit('/').next().unwrap_or(w);
            name.rsplit_once('.').is_some_and(|(stem, ext)| {
                !stem.is_empty()
                    && (1..=5).contains(&ext.len())
                    && ext.chars().all(|c| c.is_ascii_alphanumeric())
                    && !ext.chars().all(|c| c.is_ascii_digit())
            })
        })
        .map(str::to_string)
        .collect()
}

fn criteria_hold(
    criteria: &SuccessCriteria,
    answer: &str,
    ran_tools: &[&str],
    root: &Path,
) -> bool {
    let answer_ok = (criteria.answer_contains_any.is_empty()
        || criteria
            .answer_contains_any
            .iter()
            .any(|expected| mentions(answer, expected)))
        && criteria
            .answer_contains_all
            .iter()
            .all(|expected| mentions(answer, expected));
    let file_ok = criteria.file_contains.as_ref().is_none_or(|check| {
        std::fs::read_to_string(root.join(&check.path))
            .is_ok_and(|content| content.contains(&check.text))
    });
    let tool_ok = criteria
        .tool_called
        .as_ref()
        .is_none_or(|tool| ran_tools.contains(&tool.as_str()));
    // Run last, and only when everything else holds: it may build the project.
    answer_ok
        && file_ok
        && tool_ok
        && criteria
            .check_command
            .as_ref()
            .is_none_or(|command| check_passes(command, root))
}

/// How long a task's check command may run.
const CHECK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// Runs a task's check command in the workspace its run left; true when it exits 0.
fn check_passes(command: &str, root: &Path) -> bool {
    let Ok(workspace) = Workspace::open(root) else {
        return false;
    };
    let shell = ["/bin/sh".to_string(), "-c".to_string(), command.to_string()];
    let profile = lantern_core::exec::profile::for_workspace(&workspace, root);
    let spec =
        lantern_core::exec::launch(&profile, &[], &shell).spec(root, CHECK_TIMEOUT, 64 * 1024);
    lantern_core::exec::run(&spec).is_ok_and(|done| done.exit_code == Some(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_number_than_a_count_note_contradicts_it() {
        let note = "The listing of `classes` found 4 files.";
        assert!(contradicts("There are 3 files.", NoteKind::Count, note));
        assert!(!contradicts("There are 4 files.", NoteKind::Count, note));
        assert!(!contradicts(
            "comparator.js and range.js",
            NoteKind::Count,
            note
        ));
    }

    #[test]
    fn another_file_than_a_definition_note_contradicts_it() {
        let note = "The search shows `coerce` defined in functions/coerce.js (line 5).";
        assert!(contradicts(
            "It is in index.js.",
            NoteKind::Definition,
            note
        ));
        assert!(!contradicts(
            "It is in coerce.js.",
            NoteKind::Definition,
            note
        ));
        assert!(!contradicts(
            "See functions/coerce.js.",
            NoteKind::Definition,
            note
        ));
        assert!(!contradicts("I do not know.", NoteKind::Definition, note));
        let assigned = "The search shows `coerce` assigned in bin/semver.js (line 84).";
        assert!(contradicts(
            "It is in index.js.",
            NoteKind::Definition,
            assigned
        ));
        assert!(!contradicts(
            "It is in bin/semver.js.",
            NoteKind::Definition,
            assigned
        ));
    }

    #[test]
    fn file_names_are_words_with_an_extension() {
        assert_eq!(
            file_names_in("In `lib/a.js`, b.py and v1.2 (see README.md)."),
            ["lib/a.js", "b.py", "README.md"]
        );
    }
}
