//! The map of the open folder's code as the Model page shows it: whether conversations with
//! the model in use open with it, its text, and what it costs the model's context.

use super::{lock, AppState};
use crate::error::AppError;
use lantern_core::agent::{opening_code_map, repo_map_budget, SERVER_REPO_MAP};
use lantern_core::model::Model;
use schemars::JsonSchema;
use serde::Serialize;

/// The map of the project's code a conversation opens with.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CodeMapInfo {
    /// Whether conversations with the model in use open with it (Settings, else the default:
    /// a model on a server does, the local model does not).
    pub given: bool,
    /// Its size in characters: the one conversations open with, or, when none is given, the
    /// default for a model on a server, to show what it would be.
    pub budget: usize,
    /// The map at that size; empty when the code defines nothing the index reads.
    pub text: String,
    pub chars: usize,
    /// Its tokens for the model in use (the local model's tokenizer, or the server's when it
    /// has one); `None` when the model cannot say, is busy answering, or none is loaded.
    pub tokens: Option<usize>,
}

impl AppState {
    /// The map of the open folder's code, as the next conversation would open with it.
    pub fn code_map(&self) -> Result<CodeMapInfo, AppError> {
        let workspace = self.workspace()?;
        let index = lock(&self.code_index)
            .clone()
            .ok_or_else(AppError::no_workspace)?;
        let budget = repo_map_budget(self.settings().repo_map, self.on_server(), || {
            self.with_free_model(|model| model.context_size())
        });
        let given = budget > 0;
        let budget = if given { budget } else { SERVER_REPO_MAP };
        let text = opening_code_map(&workspace, &index, budget);
        let tokens = match text.is_empty() {
            true => Some(0),
            false => self.with_free_model(|model| model.count_tokens(&text)),
        };
        Ok(CodeMapInfo {
            given,
            budget,
            chars: text.chars().count(),
            text,
            tokens,
        })
    }

    /// What `ask` says of the model in use, when one is loaded and no turn holds it (a turn
    /// must not be waited for).
    pub(super) fn with_free_model<T>(
        &self,
        ask: impl FnOnce(&mut dyn Model) -> Option<T>,
    ) -> Option<T> {
        let mut model = self.model.try_lock().ok()?;
        ask(model.as_mut()?.model())
    }
}
