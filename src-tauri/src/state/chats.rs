//! The window's conversations: a new one, the saved ones of this workspace (from their
//! transcripts), one opened to read, one taken up again, one deleted.

use super::{hold, lock, AppState, WorkspaceInfo, TURN_RUNNING};
use crate::error::{AppError, ErrorCode};
use lantern_core::chats::{list_chats, own_transcript, transcripts_dir, ChatSummary};
use lantern_core::event::{load_transcript, Event};
use schemars::JsonSchema;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// A conversation taken up again: the session it now is, and what was said so far.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ChatOpened {
    pub workspace: WorkspaceInfo,
    pub events: Vec<Event>,
}

impl AppState {
    /// Starts a new conversation in the open folder; the last one stays saved.
    pub fn new_chat(&self) -> Result<WorkspaceInfo, AppError> {
        self.begin(self.workspace()?, &[])
    }

    /// This workspace's saved conversations, newest first.
    pub fn chats(&self) -> Result<Vec<ChatSummary>, AppError> {
        Ok(list_chats(&transcripts_dir(self.workspace()?.root())))
    }

    /// What a saved conversation holds, to read.
    pub fn open_chat(&self, path: &str) -> Result<Vec<Event>, AppError> {
        read_events(&self.own(path)?)
    }

    /// Takes up a saved conversation: the model is given its history, and it goes on in a new
    /// transcript that starts with it.
    pub fn continue_chat(&self, path: &str) -> Result<ChatOpened, AppError> {
        let events = read_events(&self.own(path)?)?;
        let workspace = self.begin(self.workspace()?, &events)?;
        Ok(ChatOpened { workspace, events })
    }

    /// Deletes a saved conversation of this workspace; not the one in progress.
    pub fn delete_chat(&self, path: &str) -> Result<(), AppError> {
        let path = self.own(path)?;
        // Held so that no turn starts writing while the current transcript is compared.
        let _session = hold(&self.session, TURN_RUNNING)?;
        let current = lock(&self.transcript)
            .as_ref()
            .and_then(|t| t.path.canonicalize().ok());
        if current.as_deref() == Some(path.as_path()) {
            return Err(AppError::invalid(
                "This is the conversation in progress; start a new chat first to delete it.",
            ));
        }
        std::fs::remove_file(&path).map_err(|e| {
            AppError::new(
                ErrorCode::Io,
                format!("Could not delete {}: {e}", path.display()),
            )
        })
    }

    /// `path` as one of this workspace's transcripts, or a refusal.
    fn own(&self, path: &str) -> Result<PathBuf, AppError> {
        let dir = transcripts_dir(self.workspace()?.root());
        own_transcript(&dir, Path::new(path)).ok_or_else(|| {
            AppError::new(
                ErrorCode::NotFound,
                format!("{path} is not a saved conversation of this folder."),
            )
        })
    }
}

fn read_events(path: &Path) -> Result<Vec<Event>, AppError> {
    load_transcript(path)
        .map(|(events, _)| events)
        .map_err(|e| {
            AppError::new(
                ErrorCode::Io,
                format!("Could not read the conversation {}: {e}", path.display()),
            )
        })
}
