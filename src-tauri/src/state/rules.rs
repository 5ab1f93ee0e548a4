//! The open project's own instructions (its `AGENTS.md` or the like) as the Model page shows
//! them: which file, its text as the model is given it, and what it costs the model's context.

use super::AppState;
use crate::error::AppError;
use lantern_core::model::{Message, Role};
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
    /// Its tokens for the loaded local model; `None` for a model on a server, or while the
    /// model is busy answering.
    pub tokens: Option<usize>,
}

impl AppState {
    /// The open project's instructions, if it has any.
    pub fn project_rules(&self) -> Result<Option<RulesInfo>, AppError> {
        let Some(rules) = ProjectRules::of(&self.workspace()?) else {
            return Ok(None);
        };
        let message = rules.message();
        // Counted when the model is free; a turn holding it must not be waited for.
        let tokens = self.model.try_lock().ok().and_then(|mut model| {
            let local = model.as_mut()?.local()?;
            let rendered = local
                .render(&[Message::new(Role::System, message.as_str())])
                .ok()?;
            Some(local.tokenize(&rendered).len())
        });
        Ok(Some(RulesInfo {
            chars: message.chars().count(),
            path: rules.path,
            text: rules.text,
            cut: rules.cut,
            tokens,
        }))
    }
}
