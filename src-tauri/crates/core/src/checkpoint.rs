//! Checkpoints: the content a write replaced, kept outside the workspace, so any write can be
//! undone.
//!
//! Layout under `<data dir>/checkpoints/<workspace key>/`: `blobs/<sha256>` holds contents
//! (content-addressed, so identical contents are stored once) and `index.jsonl` is an
//! append-only log of writes and undos. Undo never destroys later work: it restores the old
//! content only while the file still holds exactly what the write put there.

use crate::error::ToolError;
use crate::paths::{sha256_hex, write_state_file};
use crate::sandbox::Workspace;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// One recorded write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// `cp-<n>`, increasing.
    pub id: String,
    /// Workspace-relative path of the file written.
    pub path: String,
    /// Hash of the content before the write; `None` when the write created the file.
    pub before: Option<String>,
    /// Hash of the content the write left; `None` when it removed the file (an undone creation).
    pub after: Option<String>,
    /// Who wrote (the tool call, an undo, …).
    pub origin: String,
    /// Milliseconds since the Unix epoch.
    pub time_ms: i64,
    /// Set when this write has been undone.
    #[serde(default)]
    pub undone: bool,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Record {
    Write(Checkpoint),
    Undo { id: String },
}

/// What an undo did.
#[derive(Debug, Clone, Serialize)]
pub struct UndoOutcome {
    pub undone: String,
    pub path: String,
    /// `restored` (old content back) or `deleted` (the write had created the file).
    pub action: &'static str,
    /// The checkpoint recording the undo itself, so the undo can be undone.
    pub checkpoint: String,
}

pub struct CheckpointStore {
    dir: PathBuf,
}

impl CheckpointStore {
    /// The store for one workspace under `data_dir`.
    pub fn for_workspace(data_dir: &Path, workspace: &Workspace) -> Self {
        CheckpointStore {
            dir: data_dir
                .join("checkpoints")
                .join(crate::paths::workspace_key(workspace.root())),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn blob_path(&self, hash: &str) -> PathBuf {
        self.dir.join("blobs").join(hash)
    }

    fn store_blob(&self, bytes: &[u8]) -> Result<String, ToolError> {
        let hash = sha256_hex(bytes);
        let path = self.blob_path(&hash);
        if !path.exists() {
            write_state_file(&path, bytes).map_err(|e| {
                ToolError::io(format!(
                    "Could not save a checkpoint in {}: {e}",
                    self.dir.display()
                ))
            })?;
        }
        Ok(hash)
    }

    /// The stored content with this hash.
    pub fn blob(&self, hash: &str) -> Result<Vec<u8>, ToolError> {
        std::fs::read(self.blob_path(hash))
            .map_err(|e| ToolError::io(format!("Checkpoint content {hash} is missing: {e}")))
    }

    /// Saves the contents before and after a write. Call before the write happens, so the old
    /// content is safe even if the write is interrupted; then [`commit`](Self::commit).
    pub fn prepare(
        &self,
        before: Option<&[u8]>,
        after: Option<&[u8]>,
    ) -> Result<(Option<String>, Option<String>), ToolError> {
        let before = before.map(|b| self.store_blob(b)).transpose()?;
        let after = after.map(|b| self.store_blob(b)).transpose()?;
        Ok((before, after))
    }

    /// Appends the write to the log and returns its checkpoint.
    pub fn commit(
        &self,
        path: &str,
        before: Option<String>,
        after: Option<String>,
        origin: &str,
    ) -> Result<Checkpoint, ToolError> {
        let checkpoint = Checkpoint {
            id: format!("cp-{}", self.list()?.len() + 1),
            path: path.to_string(),
            before,
            after,
            origin: origin.to_string(),
            time_ms: chrono::Utc::now().timestamp_millis(),
            undone: false,
        };
        self.append(&Record::Write(checkpoint.clone()))?;
        Ok(checkpoint)
    }

    fn append(&self, record: &Record) -> Result<(), ToolError> {
        let io =
            |e: std::io::Error| ToolError::io(format!("Could not update the checkpoint log: {e}"));
        std::fs::create_dir_all(&self.dir).map_err(io)?;
        let mut line = serde_json::to_string(record).expect("records serialise");
        line.push('\n');
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("index.jsonl"))
            .map_err(io)?;
        file.write_all(line.as_bytes()).map_err(io)?;
        file.sync_data().map_err(io)
    }

    /// Every write, oldest first, with its undone flag.
    pub fn list(&self) -> Result<Vec<Checkpoint>, ToolError> {
        let text = match std::fs::read_to_string(self.dir.join("index.jsonl")) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(ToolError::io(format!(
                    "Could not read the checkpoint log: {e}"
                )))
            }
        };
        let mut out: Vec<Checkpoint> = Vec::new();
        // A line torn by a crash mid-append is skipped; every complete line before it counts.
        for record in text
            .lines()
            .filter_map(|l| serde_json::from_str::<Record>(l).ok())
        {
            match record {
                Record::Write(c) => out.push(c),
                Record::Undo { id } => {
                    if let Some(c) = out.iter_mut().find(|c| c.id == id) {
                        c.undone = true;
                    }
                }
            }
        }
        Ok(out)
    }

    /// Undoes checkpoint `id`, or the newest write not yet undone.
    ///
    /// Refuses, changing nothing, when the file no longer holds what that write left.
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
            return Err(ToolError::invalid(format!(
                "{} was already undone",
                checkpoint.id
            )));
        }
        let path = workspace.resolve(&checkpoint.path)?;
        let current = if path.exists {
            let mut bytes = Vec::new();
            use std::io::Read;
            workspace
                .open_read(&path)?
                .read_to_end(&mut bytes)
                .map_err(|e| ToolError::from_io(&e, &path.rel))?;
            Some(bytes)
        } else {
            None
        };
        let current_hash = current.as_deref().map(sha256_hex);
        if current_hash != checkpoint.after {
            let now = match &current_hash {
                Some(h) => format!("now holds other content ({})", &h[..12]),
                None => "no longer exists".to_string(),
            };
            let kept = match &checkpoint.before {
                Some(h) => format!(
                    "The content before that write is kept at {}",
                    self.blob_path(h).display()
                ),
                None => "The file did not exist before that write".to_string(),
            };
            return Err(ToolError::invalid(format!(
                "Not undoing {}: {} was changed after that write and {now}; undoing would destroy those changes. {kept}.",
                checkpoint.id, checkpoint.path
            )));
        }
        let action = match &checkpoint.before {
            Some(hash) => {
                workspace.write_atomic(&path, &self.blob(hash)?)?;
                "restored"
            }
            None => {
                workspace.remove_file(&path)?;
                "deleted"
            }
        };
        self.append(&Record::Undo {
            id: checkpoint.id.clone(),
        })?;
        // The undo is itself a write, recorded so that it can be undone in turn.
        let record = self.commit(
            &checkpoint.path,
            checkpoint.after.clone(),
            checkpoint.before.clone(),
            &format!("undo of {}", checkpoint.id),
        )?;
        Ok(UndoOutcome {
            undone: checkpoint.id.clone(),
            path: checkpoint.path.clone(),
            action,
            checkpoint: record.id,
        })
    }
}
