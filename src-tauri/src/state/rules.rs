//! The open project's own instructions (its `AGENTS.md` or the like) as the Model page shows
//! them: which file, its text as the model is given it, and what it costs the model's context.

use super::AppState;
use crate::error::AppError;
use lantern_core::project_rules::ProjectRules;
use schemars::JsonSchema;
use serde::Serialize;

/// The project's instructions, as the model is given them at the start of a conversation.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RulesInfo {
    /// The file, relative to the project (`AGENTS.md`, `CLAUDE.md`, …).
    pub path: String,
    /// The text given, cut to its bound.
    pub text: String,
    /// Whether the file was longer than what is given.
    pub cut: bool,
    pub chars: usize,
    /// Its tokens for the model in use (the local model's tokenizer, or the server's when it
    /// has one); `None` when the model cannot say, is busy answering, or none is loaded.
    pub tokens: Option<usize>,
}

impl AppState {
    /// The open project's instructions, if it has any.
    pub fn project_rules(&self) -> Result<Option<RulesInfo>, AppError> {
        let Some(rules) = ProjectRules::of(&self.workspace()?) else {
            return Ok(None);
        };
        let message = rules.message();
        let tokens = self.with_free_model(|model| model.count_tokens(&message));
        Ok(Some(RulesInfo {
            chars: message.chars().count(),
            path: rules.path,
            text: rules.text,
            cut: rules.cut,
            tokens,
        }))
    }
}
