//! The open folder's code index as the window uses it: its state for the status line, where a
//! name is defined (F12), what a file defines (the outline), names for `@` mentions.

use super::{lock, AppState};
use crate::error::AppError;
use lantern_core::code_index::{DefinitionPlace, IndexStatus, OutlineEntry, ProjectIndex};
use std::sync::Arc;

impl AppState {
    /// The open folder's index; none without a folder.
    fn index(&self) -> Result<Arc<ProjectIndex>, AppError> {
        lock(&self.code_index)
            .clone()
            .ok_or_else(AppError::no_workspace)
    }

    /// Where `name` is defined in the open folder's code (for "go to definition").
    pub fn go_to_definition(&self, name: &str) -> Result<Vec<DefinitionPlace>, AppError> {
        let index = self.index()?;
        Ok(index.places_of(&self.workspace()?, name)?)
    }

    /// Names the open folder's code defines that begin with `prefix`, for `@` mentions.
    pub fn complete_symbols(&self, prefix: &str) -> Result<Vec<String>, AppError> {
        let index = self.index()?;
        Ok(index.names_starting(prefix, 8))
    }

    /// What the file at `path` defines, for the editor's outline.
    pub fn file_outline(&self, path: &str) -> Result<Vec<OutlineEntry>, AppError> {
        let index = self.index()?;
        Ok(index.outline_of(&self.workspace()?, path)?)
    }

    /// Where the open folder's code index stands.
    pub fn code_index_status(&self) -> Result<IndexStatus, AppError> {
        lock(&self.code_index)
            .as_ref()
            .map(|index| index.status())
            .ok_or_else(AppError::no_workspace)
    }
}
