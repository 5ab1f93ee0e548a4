//! The loop's limits and choices.

use crate::model::ToolChoice;
use serde::{Deserialize, Serialize};

/// The repo map's budget for a model on a server, in characters: about 1,500 tokens, a few
/// percent of a server model's context.
pub const SERVER_REPO_MAP: usize = 6000;

/// The repo map's budget for a conversation: the one the user set, else [`SERVER_REPO_MAP`]
/// for a model on a server and none for a local one (the default model answered worse with
/// one in the evaluation). The window and the command line both decide it here.
pub fn repo_map_budget(chosen: Option<usize>, on_server: bool) -> usize {
    match chosen {
        Some(chars) => chars,
        None if on_server => SERVER_REPO_MAP,
        None => 0,
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
