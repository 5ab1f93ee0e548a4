//! Checkpoints: the content a write replaced, kept outside the workspace, so any write can be
//! undone — and an undo never destroys work done after the write.
//!
//! # Layout
//!
//! Under `<data dir>/checkpoints/<workspace key>/`:
//!
//! * `blobs/<sha256>` — contents, content-addressed: identical contents are stored once. A blob
//!   is written to a temporary file, `fsync`ed and renamed into place, so it is complete or
//!   absent; its name is its hash, so it is checked whenever it is read back.
//! * `index.jsonl` — an append-only log, one JSON record per line: `write` (a checkpoint; an
//!   undo is a write that names the checkpoint it `undoes`) and `evict`. A line torn by a crash
//!   is skipped when reading, and the next append starts on a fresh line, so a torn line never
//!   swallows a later record.
//! * `lock` — `flock`ed while the log is appended to or blobs are removed, so two Lantern
//!   processes on one workspace (the app and the CLI) never hand out the same id or remove a
//!   blob the other one still needs.
//!
//! # Order of a write
//!
//! [`CheckpointStore::prepare`] saves the old and new contents *before* the file is touched,
//! the caller writes the file, then [`CheckpointStore::commit`] appends the record. A crash
//! between the write and the commit leaves the write without a checkpoint, but its old content
//! is already in `blobs/`, where it stays for at least [`ORPHAN_GRACE`].
//!
//! # Size limit and sessions
//!
//! Each [`CheckpointStore`] value is one session (one app window, one CLI command): it has a
//! session id and a start time, and every checkpoint it records carries the id. When the
//! contents referenced by the checkpoints that are still kept exceed the store's capacity
//! ([`DEFAULT_CAPACITY_BYTES`] unless [`CheckpointStore::with_capacity`] says otherwise), the
//! oldest checkpoints of *other* sessions are evicted, oldest first, until the rest fits.
//! Checkpoints of the current session are never evicted, so the store may stay over its
//! capacity while one session writes more than that. An evicted checkpoint stays in the list,
//! marked `evicted`, and undoing it says so plainly. Blobs no longer referenced by any kept
//! checkpoint are removed once they are older than [`ORPHAN_GRACE`] (another process may have
//! just prepared a write that reuses them).
//!
//! # Undo
//!
//! [`CheckpointStore::undo`] restores the old content — or removes a file the write created —
//! only while the file still holds exactly what the write left. Otherwise it refuses, changes
//! nothing, and returns the three versions (before the write, the write's own, the file now)
//! as an [`UndoConflict`] in the error's `details`. An undo is itself recorded as a write, so
//! it can be undone in turn.

mod blobs;
mod commit;
mod conflict;
mod evict;
mod index;
// The store's tests make writes by hand, each with the session they need.
#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod tests;
mod undo;

use crate::error::ToolError;
use crate::sandbox::Workspace;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How many bytes of checkpoint contents a workspace keeps before old sessions' checkpoints
/// are evicted.
pub const DEFAULT_CAPACITY_BYTES: u64 = 512 * 1024 * 1024;

/// How long a blob no checkpoint references is kept: long enough for a write that another
/// process prepared to be committed, and for the old content of a write whose commit was lost
/// in a crash to be found by hand.
pub const ORPHAN_GRACE: Duration = Duration::from_secs(60 * 60);

const INDEX: &str = "index.jsonl";
const BLOBS: &str = "blobs";
const LOCK: &str = "lock";

/// Makes session ids unique among the stores of one process.
static SESSION_COUNTER: AtomicU64 = AtomicU64::new(0);

/// One recorded write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
    /// The session that made the write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Size of the content before the write, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_bytes: Option<u64>,
    /// Size of the content the write left, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_bytes: Option<u64>,
    /// For an undo: the checkpoint it undid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undoes: Option<String>,
    /// Set when this write has been undone.
    #[serde(default)]
    pub undone: bool,
    /// Set when the store dropped this checkpoint to stay under its size limit; it can no
    /// longer be undone.
    #[serde(default)]
    pub evicted: bool,
}

/// What an undo did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UndoOutcome {
    pub undone: String,
    pub path: String,
    pub action: UndoAction,
    /// The checkpoint recording the undo itself, so the undo can be undone.
    pub checkpoint: String,
}

/// What an undo did to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UndoAction {
    /// The old content is back.
    Restored,
    /// The write had created the file, so undoing it removed the file.
    Deleted,
}

/// One of the three versions in an [`UndoConflict`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Version {
    /// False when the file did not exist in this version.
    pub exists: bool,
    pub sha256: Option<String>,
    pub bytes: Option<u64>,
    /// Where this content can be read: a blob in the checkpoint store, or the workspace file
    /// itself for the current version.
    pub file: Option<PathBuf>,
}

/// Why an undo was refused: the file changed after the write. Carried as the `details` of the
/// refusal so that the app and the CLI can show all three versions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UndoConflict {
    pub checkpoint: String,
    /// Workspace-relative path of the file.
    pub path: String,
    /// The content before the agent's write.
    pub before: Version,
    /// The content the agent's write left.
    pub agent: Version,
    /// The content now.
    pub now: Version,
    /// Unified diff from `before` to `agent`: what the write changed. `None` when a version is
    /// not text or larger than a MiB.
    pub agent_changes: Option<String>,
    /// Unified diff from `agent` to `now`: what changed since the write.
    pub later_changes: Option<String>,
}

impl UndoConflict {
    /// The conflict carried by a refused undo, if that is what `error` is.
    pub fn from_error(error: &ToolError) -> Option<UndoConflict> {
        serde_json::from_value(error.details.as_deref()?.get("undo_conflict")?.clone()).ok()
    }
}

/// The checkpoints of one workspace, as seen by one session.
pub struct CheckpointStore {
    dir: PathBuf,
    session: String,
    started_at_ms: i64,
    capacity_bytes: u64,
}

impl CheckpointStore {
    /// The store for one workspace under `data_dir`, opened for a new session.
    pub fn for_workspace(data_dir: &Path, workspace: &Workspace) -> Self {
        let started_at_ms = chrono::Utc::now().timestamp_millis();
        CheckpointStore {
            dir: data_dir
                .join("checkpoints")
                .join(crate::paths::workspace_key(workspace.root())),
            session: format!(
                "s-{started_at_ms}-{}-{}",
                std::process::id(),
                SESSION_COUNTER.fetch_add(1, Ordering::Relaxed)
            ),
            started_at_ms,
            capacity_bytes: DEFAULT_CAPACITY_BYTES,
        }
    }

    /// The same store with another size limit for the contents of kept checkpoints.
    pub fn with_capacity(mut self, bytes: u64) -> Self {
        self.capacity_bytes = bytes;
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// This session's id, recorded with each checkpoint it makes.
    pub fn session(&self) -> &str {
        &self.session
    }

    /// When this session began, in milliseconds since the Unix epoch.
    pub fn started_at_ms(&self) -> i64 {
        self.started_at_ms
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }
}
