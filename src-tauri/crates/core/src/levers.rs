//! Every switch of the answer machinery, declared once: its name, its default, what it does
//! and where it acts. The command line's flags (`--named-project off`), the description of a
//! run's settings, the evaluation's ablation (`--off answer-paths`) and ARCHITECTURE.md's
//! lever table are all made from these two lists, so adding a lever is one entry here plus the
//! code that reads it.
//!
//! ```
//! use lantern_core::levers::{changed, GENERATION_LEVERS};
//! use lantern_core::model::GenerationOptions;
//!
//! let mut options = GenerationOptions::default();
//! let named_project = GENERATION_LEVERS.iter().find(|l| l.name == "named-project").unwrap();
//! assert!(named_project.default());
//! (named_project.set)(&mut options, false);
//! assert_eq!(changed(GENERATION_LEVERS, &options), ["the project's name not decisive"]);
//! ```

use crate::agent::AgentConfig;
use crate::model::GenerationOptions;

/// One switch of the settings `T` (a backend's [`GenerationOptions`] or the agent's
/// [`AgentConfig`]).
pub struct Lever<T: 'static> {
    /// Its name: the command line's flag without the dashes, the evaluation's `--off` value.
    pub name: &'static str,
    /// What it does, in one line (the flag's help).
    pub purpose: &'static str,
    /// Where its code acts.
    pub acts_in: &'static str,
    /// How a run's description says it is not at its default.
    pub when_changed: &'static str,
    /// Its value in `T`.
    pub get: fn(&T) -> bool,
    /// Sets it in `T`.
    pub set: fn(&mut T, bool),
}

impl<T: Default> Lever<T> {
    /// Its value when nobody sets it.
    pub fn default(&self) -> bool {
        (self.get)(&T::default())
    }
}

/// How a run's description names the levers of `levers` not at their default in `settings`,
/// in the lists' order.
pub fn changed<T: Default>(levers: &[Lever<T>], settings: &T) -> Vec<&'static str> {
    levers
        .iter()
        .filter(|lever| (lever.get)(settings) != lever.default())
        .map(|lever| lever.when_changed)
        .collect()
}

/// Declares a lever over a `bool` field of the settings.
macro_rules! lever {
    ($settings:ty, $field:ident, $name:literal, $purpose:literal, $acts_in:literal, $changed:literal) => {
        Lever::<$settings> {
            name: $name,
            purpose: $purpose,
            acts_in: $acts_in,
            when_changed: $changed,
            get: |s| s.$field,
            set: |s, on| s.$field = on,
        }
    };
}

/// The local engine's levers (a server backend reads the first-step ones too). `grammar` comes
/// first: with it off, none of the others that constrain a call has anything to act on.
pub const GENERATION_LEVERS: &[Lever<GenerationOptions>] = &[
    lever!(GenerationOptions, grammar, "grammar",
        "Constrain tool calls with the grammar built from the tool schemas (local models).",
        "llama: grammar.rs, engine/mod.rs", "grammar off"),
    lever!(GenerationOptions, call_reasoning, "call-reasoning",
        "Let a constrained call carry a `reasoning` string after its arguments (local models).",
        "llama: grammar.rs", "no reasoning in calls"),
    lever!(GenerationOptions, grounded_paths, "grounded-paths",
        "Choose path arguments among the workspace's files and folders (local models).",
        "llama: engine/grounding.rs", "paths not grounded"),
    lever!(GenerationOptions, grounded_symbols, "grounded-symbols",
        "Choose symbol arguments among the names the workspace's code defines (local models).",
        "llama: engine/grounding.rs", "symbols not grounded"),
    lever!(GenerationOptions, lean_calls, "lean-calls",
        "Offer constrained calls only their required and path arguments (local models).",
        "llama: grammar.rs", "all optional arguments offered"),
    lever!(GenerationOptions, ranked_tools, "ranked-tools",
        "Choose a call's tool by its whole name and the words the question shares with each tool's description (local models).",
        "llama: engine/grounding.rs", "tools not ranked"),
    lever!(GenerationOptions, question_words, "question-words",
        "Choose a search's query among the words of the question (local models).",
        "llama: engine/grounding.rs", "queries not from the question"),
    lever!(GenerationOptions, question_globs, "question-globs",
        "Offer a listing the glob the question names (`test_*.py`) as its pattern (local models).",
        "llama: engine/grounding.rs", "no patterns from the question"),
    lever!(GenerationOptions, copy_spans, "copy-spans",
        "In an answer after a tool result, favour copying the result's paths, numbers and names exactly (local models).",
        "llama: engine/copying.rs", "no copying from results"),
    lever!(GenerationOptions, asked_values, "asked-values",
        "In an answer after a tool result, favour more strongly beginning a value that answers the question: one of the lines shown first as those about it, or a listing's count when it asks how many files (local models).",
        "llama: engine/copying.rs", "values asked for not favoured"),
    lever!(GenerationOptions, shun_examples, "shun-examples",
        "In an answer, never begin a path, number or name that only the prompt's worked examples hold, nor a tool's name, unless the conversation holds it (local models).",
        "llama: engine/made_up.rs", "the examples' values allowed in answers"),
    lever!(GenerationOptions, file_spans, "file-spans",
        "Let an edit's old text become only text that is in the file, found there once (local models).",
        "llama: engine/spans.rs", "old text not constrained"),
    lever!(GenerationOptions, replace_values, "replace-values",
        "In an edit's new text, favour the question's values where the old text holds what they replace, and never end it equal to the old text (local models).",
        "llama: engine/replacing.rs", "new text not steered"),
    lever!(GenerationOptions, named_paths, "named-paths",
        "Make a first step a call when the message names a file or folder of the workspace.",
        "core: intent::first_step_must_call", "named paths not decisive"),
    lever!(GenerationOptions, named_definitions, "named-definitions",
        "Make a first step a call when the message names something a file of the workspace defines, by a word only code uses (`make_default_short_help`, `UsageError`).",
        "core: intent::first_step_must_call", "named definitions not decisive"),
    lever!(GenerationOptions, named_project, "named-project",
        "Make a first step a call when the message names the project, by its manifest's name or by pointing at it (\"this project\").",
        "core: intent::first_step_must_call", "the project's name not decisive"),
    lever!(GenerationOptions, named_new_files, "named-new-files",
        "Make a first step a call when the message asks for a file that does not exist yet (\"Create CHANGELOG.md with …\"), and with a local model that call one of a tool that can create it.",
        "core: intent::first_step_must_call; llama: engine/choosing_tools.rs", "new files asked for not decisive"),
    lever!(GenerationOptions, changes_when_asked, "changes-when-asked",
        "Offer tools that write or run commands only at a large cost when the message asks for no change (local models).",
        "llama: engine/grounding.rs", "writes offered to questions"),
    lever!(GenerationOptions, call_after_nothing, "call-after-nothing",
        "Make the step after a result that found nothing (a failed call, no matches, no files) another call (local models).",
        "llama: engine/decision.rs", "no call after an empty result"),
    lever!(GenerationOptions, where_lookups, "where-lookups",
        "Make the turn's first call the tool that looks names up when the message asks where something the workspace defines is (local models).",
        "llama: engine/choosing_tools.rs", "where-questions not sent to the name lookup"),
    lever!(GenerationOptions, named_files, "named-files",
        "Favour, as a path argument, a file or folder of the workspace the message names (local models).",
        "llama: engine/grounding.rs", "named files not favoured"),
    lever!(GenerationOptions, spent_tools, "spent-tools",
        "Offer a call no tool without arguments that already ran in the turn: its result would be the same (local models).",
        "llama: engine/choosing_tools.rs", "tools without arguments offered again"),
    lever!(GenerationOptions, pointed_writes, "pointed-writes",
        "Offer a write's path only the files the conversation points at (the user named them or a result showed them), when there are any (local models).",
        "llama: engine/grounding.rs", "writes offered only the files pointed at"),
];

/// The agent's levers: what it makes of replies and results, for every backend. Each is on by
/// default and turned off only to measure what it is worth.
pub const AGENT_LEVERS: &[Lever<AgentConfig>] = &[
    lever!(
        AgentConfig,
        protocol_guard,
        "protocol-guard",
        "Refuse protocol-shaped replies (`<TOML_CALL>…`) as final answers.",
        "core: agent/mod.rs",
        "protocol-guard"
    ),
    lever!(
        AgentConfig,
        focus_results,
        "focused-results",
        "Show the lines of a file that match the question before the whole file.",
        "core: relevance.rs",
        "focused-results"
    ),
    lever!(
        AgentConfig,
        definition_bodies,
        "definition-bodies",
        "Show under a search's definitions the lines of their bodies about the question.",
        "core: relevance.rs",
        "definition-bodies"
    ),
    lever!(
        AgentConfig,
        lean_reads,
        "lean-reads",
        "Show a read of a long file as its lines about the question with two on each side, not whole.",
        "core: relevance.rs",
        "lean-reads"
    ),
    lever!(
        AgentConfig,
        answer_paths,
        "answer-paths",
        "Give a file the answer names by its name alone by the path the results showed.",
        "core: answer_paths.rs",
        "answer-paths"
    ),
    lever!(
        AgentConfig,
        count_notes,
        "count-notes",
        "Follow an answer to \"how many files\" with the count of the turn's last listing.",
        "core: answer_notes.rs",
        "count-notes"
    ),
    lever!(
        AgentConfig,
        definition_notes,
        "definition-notes",
        "Follow an answer to \"where is\" with the places the turn's searches show defined.",
        "core: answer_notes.rs",
        "definition-notes"
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_lever_sets_the_field_it_reads_and_no_other() {
        fn check<T: Default>(levers: &[Lever<T>]) {
            for lever in levers {
                let mut settings = T::default();
                (lever.set)(&mut settings, !lever.default());
                assert_eq!(
                    changed(levers, &settings),
                    [lever.when_changed],
                    "{}",
                    lever.name
                );
                (lever.set)(&mut settings, lever.default());
                assert!(changed(levers, &settings).is_empty(), "{}", lever.name);
            }
        }
        check(GENERATION_LEVERS);
        check(AGENT_LEVERS);
    }

    #[test]
    fn names_are_unique_flags() {
        let mut names: Vec<&str> = GENERATION_LEVERS.iter().map(|l| l.name).collect();
        names.extend(AGENT_LEVERS.iter().map(|l| l.name));
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), count);
        assert!(names
            .iter()
            .all(|n| n.chars().all(|c| c.is_ascii_lowercase() || c == '-')));
    }
}
