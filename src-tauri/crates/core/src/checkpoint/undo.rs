//! Undoing a write, only while the file still holds exactly what the write left.

use super::{CheckpointStore, UndoAction, UndoOutcome, Version};
use crate::error::ToolError;
use crate::sandbox::Workspace;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{ErrorKind, Read};

impl CheckpointStore {
    /// Undoes checkpoint `id`, or the newest write not yet undone.
    ///
    /// Refuses, changing nothing, when the file no longer holds what that write left; the
    /// refusal's `details` then hold an [`UndoConflict`](super::UndoConflict) with the three
    /// versions.
    ///
    /// One of the few writers allowed to write and remove files directly: what it restores is
    /// already a checkpoint's, and it records itself as a write that can be undone in turn.
    #[allow(clippy::disallowed_methods)]
    pub fn undo(&self, workspace: &Workspace, id: Option<&str>) -> Result<UndoOutcome, ToolError> {
        let all = self.list()?;
        let checkpoint = match id {
            Some(id) => all.iter().find(|c| c.id == id).ok_or_else(|| {
                ToolError::not_found(format!(
                    "No checkpoint {id}; `lantern checkpoints` lists them"
                ))
            })?,
            None => all.iter().rev().find(|c| !c.undone).ok_or_else(|| {
                ToolError::not_found("Nothing to undo: no writes recorded in this workspace")
            })?,
        };
        if checkpoint.undone {
            let by = all
                .iter()
                .find(|c| c.undoes.as_deref() == Some(checkpoint.id.as_str()))
                .map(|c| format!(" (by {})", c.id))
                .unwrap_or_default();
            return Err(ToolError::invalid(format!(
                "{} was already undone{by}",
                checkpoint.id
            )));
        }
        if checkpoint.evicted {
            return Err(ToolError::not_found(format!(
                "{} can no longer be undone: it was evicted, and the content it saved removed, to keep this workspace's checkpoints under {} MiB (the oldest checkpoints of earlier sessions go first)",
                checkpoint.id,
                self.capacity_bytes / (1024 * 1024)
            )));
        }
        let path = workspace.resolve(&checkpoint.path)?;
        let current = if path.exists() {
            let file = workspace.open_read(&path)?;
            Some(hash_file(file).map_err(|e| ToolError::from_io(&e, path.rel()))?)
        } else {
            None
        };
        if current.as_ref().map(|(hash, _)| hash) != checkpoint.after.as_ref() {
            let now = Version {
                exists: current.is_some(),
                sha256: current.as_ref().map(|(hash, _)| hash.clone()),
                bytes: current.as_ref().map(|(_, bytes)| *bytes),
                file: current.as_ref().map(|_| path.abs().to_path_buf()),
            };
            return Err(self.conflict(workspace, checkpoint, now));
        }
        let action = match &checkpoint.before {
            Some(hash) => {
                workspace.write_atomic(&path, &self.blob(hash)?)?;
                UndoAction::Restored
            }
            None => {
                workspace.remove_file(&path)?;
                UndoAction::Deleted
            }
        };
        // One record both marks the write undone and makes the undo undoable in turn.
        let record = self.record_write(
            &checkpoint.path,
            checkpoint.after.clone(),
            checkpoint.before.clone(),
            format!("undo of {}", checkpoint.id),
            Some(checkpoint.id.clone()),
        )?;
        Ok(UndoOutcome {
            undone: checkpoint.id.clone(),
            path: checkpoint.path.clone(),
            action,
            checkpoint: record.id,
        })
    }
}

/// The sha256 and length of a file's content, read in pieces so that a large file is never
/// held in memory whole.
fn hash_file(mut file: File) -> std::io::Result<(String, u64)> {
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let n = match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buffer[..n]);
        total += n as u64;
    }
    let hash = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok((hash, total))
}
