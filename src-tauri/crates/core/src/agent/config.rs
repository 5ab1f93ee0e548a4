//! The loop's limits and choices.

use crate::model::ToolChoice;
use serde::{Deserialize, Serialize};

/// The repo map's budget for a model on a server that does not say how large its context is,
/// in characters: about 1,500 tokens, a few percent of a server model's context.
pub const SERVER_REPO_MAP: usize = 6000;

/// The share of a server model's context its repo map takes by default: an eighth.
const REPO_MAP_SHARE: usize = 8;

/// About how many characters of code a token is, to size the map (which is cut by characters)
/// to a context counted in tokens.
const CHARS_PER_TOKEN: usize = 4;

/// The repo map's budget for a conversation, in characters: the one the user set; else, for a
/// model on a server, an eighth of its context (`context` asks it, in tokens; only then) between
/// 2,000 and 24,000 characters, or [`SERVER_REPO_MAP`] when the server does not say; and none
/// for a local one
/// (with one, the default model's dev look-ups gained 2 runs and lost 1 and took twice as
/// long; `lantern eval --code-map` measures it). The window, the command line and the
/// evaluation all decide it here.
pub fn repo_map_budget(
    chosen: Option<usize>,
    on_server: bool,
    context: impl FnOnce() -> Option<usize>,
) -> usize {
    match chosen {
        Some(chars) => chars,
        None if !on_server => 0,
        None => context().map_or(SERVER_REPO_MAP, |tokens| {
            (tokens / REPO_MAP_SHARE * CHARS_PER_TOKEN).clamp(2_000, 24_000)
        }),
    }
}

/// Limits and choices for the loop.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AgentConfig {
    pub max_steps: usize,
    pub max_repeats: usize,
    pub max_protocol_errors: usize,
    pub tool_choice: ToolChoice,
    pub max_tokens: usize,
    /// Refuse a reply shaped like the protocol but neither call nor answer (`<TOML_CALL>…`) as
    /// a malformed call, so tag soup never ends a turn as its answer. Off only to measure what
    /// it is worth.
    pub protocol_guard: bool,
    /// Show the model what in a result answers the question before the whole result: the lines
    /// of a file that share words with the question, the matches of a search that define a
    /// name it asks about (see [`crate::relevance`]). Off only to measure what it is worth.
    pub focus_results: bool,
    /// With focused results, show under each definition a search found the lines of its body
    /// about the rest of the question (`exit_code = 2` under `class UsageError`, asked which
    /// exit code a `UsageError` uses), read from the file. Off only to measure what it is worth.
    pub definition_bodies: bool,
    /// With focused results, show the model a read of a long file as its lines about the
    /// question with two on each side, not whole (see [`crate::relevance::focus_result`]). Off
    /// only to measure what it is worth.
    pub lean_reads: bool,
    /// The characters of the map of the project's files (see [`crate::project_map`]) the
    /// model is shown once per conversation, after the system prompt; 0 (the default) shows
    /// none: with the default model, a map of any size made it call less and answer worse.
    pub project_map: usize,
    /// The characters of the map of the project's code (its most used definitions' signature
    /// lines by file, ranked toward what the message names; see [`lantern_index::repo_map`])
    /// the model is shown once per conversation, after the system prompt; 0 shows none. The
    /// app and the CLI give it to server models ([`SERVER_REPO_MAP`]); the default model is
    /// shown none until the evaluation says it helps.
    pub repo_map: usize,
    /// Give the model the project's own instructions (its `AGENTS.md` or the like, see
    /// [`crate::project_rules`]) once per conversation, after the system prompt.
    pub project_rules: bool,
    /// The most tools of MCP servers a turn is offered; with more, those that fit the message
    /// (see [`crate::tool_fit::offered_tools`]), the rest kept out of the prompt and the
    /// grammar. `usize::MAX` offers them all.
    pub max_remote_tools: usize,
    /// Give a file the answer names by its name alone (`Comparator.js`) by its path
    /// (`classes/comparator.js`) when the turn's results showed exactly one file of that name
    /// (see [`crate::answer_paths`]). Off only to measure what it is worth.
    pub answer_paths: bool,
    /// Follow the answer to a question that asks how many files there are with the count of
    /// the turn's last listing, when the answer does not give it (see
    /// [`crate::answer_notes`]). Off only to measure what it is worth.
    pub count_notes: bool,
    /// Follow the answer to a question that asks where something is with the places the
    /// turn's searches show it defined, when the answer does not name them (see
    /// [`crate::answer_notes`]). Off only to measure what it is worth.
    pub definition_notes: bool,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            max_steps: 10,
            max_repeats: 3,
            max_protocol_errors: 3,
            tool_choice: ToolChoice::Auto,
            max_tokens: 1024,
            protocol_guard: true,
            focus_results: true,
            definition_bodies: true,
            lean_reads: true,
            project_map: 0,
            project_rules: true,
            max_remote_tools: crate::tool_fit::MAX_REMOTE_TOOLS,
            repo_map: 0,
            answer_paths: true,
            count_notes: true,
            definition_notes: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_models_map_is_sized_to_its_context_unless_the_user_chose() {
        assert_eq!(repo_map_budget(Some(1234), true, || Some(8192)), 1234);
        assert_eq!(
            repo_map_budget(Some(0), true, || None),
            0,
            "none, as chosen"
        );
        assert_eq!(repo_map_budget(None, true, || Some(8192)), 4096);
        assert_eq!(repo_map_budget(None, true, || Some(32768)), 16384);
        assert_eq!(repo_map_budget(None, true, || Some(1_000_000)), 24_000);
        assert_eq!(repo_map_budget(None, true, || Some(2048)), 2_000);
        assert_eq!(repo_map_budget(None, true, || None), SERVER_REPO_MAP);
        assert_eq!(
            repo_map_budget(None, false, || Some(8192)),
            0,
            "a local model"
        );
        let asked = std::cell::Cell::new(false);
        repo_map_budget(Some(100), true, || {
            asked.set(true);
            None
        });
        assert!(!asked.get(), "a size chosen asks the server nothing");
    }
}
