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

use crate::error::ToolError;
use crate::paths::{sha256_hex, write_state_file};
use crate::sandbox::Workspace;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// How many bytes of checkpoint contents a workspace keeps before old sessions' checkpoints
/// are evicted.
pub const DEFAULT_CAPACITY_BYTES: u64 = 512 * 1024 * 1024;

/// How long a blob no checkpoint references is kept: long enough for a write that another
/// process prepared to be committed, and for the old content of a write whose commit was lost
/// in a crash to be found by hand.
pub const ORPHAN_GRACE: Duration = Duration::from_secs(60 * 60);

/// Contents larger than this get no diff in an [`UndoConflict`]; the files are named instead.
const MAX_DIFFED_BYTES: u64 = 1024 * 1024;
/// The most bytes of each diff in an [`UndoConflict`].
const MAX_DIFF_BYTES: usize = 64 * 1024;

const INDEX: &str = "index.jsonl";
const BLOBS: &str = "blobs";
const LOCK: &str = "lock";

/// Makes session ids unique among the stores of one process.
static SESSION_COUNTER: AtomicU64 = AtomicU64::new(0);

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

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Record {
    Write(Checkpoint),
    Evict { ids: Vec<String>, time_ms: i64 },
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

/// One of the three versions in an [`UndoConflict`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

    /// Where the content with this hash is (or would be) stored.
    pub fn blob_path(&self, hash: &str) -> PathBuf {
        self.dir.join(BLOBS).join(hash)
    }

    fn store_blob(&self, bytes: &[u8]) -> Result<String, ToolError> {
        let hash = sha256_hex(bytes);
        let path = self.blob_path(&hash);
        let failed = |e: std::io::Error| {
            ToolError::io(format!(
                "Could not save a checkpoint in {}: {e}",
                self.dir.display()
            ))
        };
        match std::fs::metadata(&path) {
            // Already stored: mark it as freshly used, so that a concurrent clean-up in another
            // process (which spares recent blobs) does not remove it before our commit.
            Ok(meta) if meta.len() == bytes.len() as u64 => File::open(&path)
                .and_then(|file| file.set_modified(SystemTime::now()))
                .map_err(failed)?,
            // Absent, or not what its name promises: (re)write it whole.
            _ => write_state_file(&path, bytes).map_err(failed)?,
        }
        Ok(hash)
    }

    /// The stored content with this hash, checked against the hash.
    pub fn blob(&self, hash: &str) -> Result<Vec<u8>, ToolError> {
        let bytes = std::fs::read(self.blob_path(hash))
            .map_err(|e| ToolError::io(format!("Checkpoint content {hash} is missing: {e}")))?;
        if sha256_hex(&bytes) != hash {
            return Err(ToolError::io(format!(
                "Checkpoint content {hash} is damaged: it no longer matches its hash"
            )));
        }
        Ok(bytes)
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

    /// Appends the write to the log and returns its checkpoint. Then, if the kept contents
    /// exceed the capacity, evicts the oldest checkpoints of other sessions.
    pub fn commit(
        &self,
        path: &str,
        before: Option<String>,
        after: Option<String>,
        origin: &str,
    ) -> Result<Checkpoint, ToolError> {
        self.record_write(path, before, after, origin.to_string(), None)
    }

    fn record_write(
        &self,
        path: &str,
        before: Option<String>,
        after: Option<String>,
        origin: String,
        undoes: Option<String>,
    ) -> Result<Checkpoint, ToolError> {
        let _lock = self.lock()?;
        let mut all = self.list()?;
        let next = all
            .iter()
            .filter_map(|c| c.id.strip_prefix("cp-")?.parse::<u64>().ok())
            .max()
            .unwrap_or(0)
            + 1;
        let checkpoint = Checkpoint {
            id: format!("cp-{next}"),
            path: path.to_string(),
            before_bytes: before.as_deref().and_then(|h| self.blob_size(h)),
            after_bytes: after.as_deref().and_then(|h| self.blob_size(h)),
            before,
            after,
            origin,
            time_ms: chrono::Utc::now().timestamp_millis(),
            session: Some(self.session.clone()),
            undoes,
            undone: false,
            evicted: false,
        };
        self.append(&Record::Write(checkpoint.clone()))?;
        all.push(checkpoint.clone());
        // The write is recorded and undoable whatever happens next: keeping the store small is
        // housekeeping that the next commit retries, so its failure must not fail this one.
        let _ = self.evict_over_capacity(&all);
        Ok(checkpoint)
    }

    fn blob_size(&self, hash: &str) -> Option<u64> {
        std::fs::metadata(self.blob_path(hash))
            .ok()
            .map(|m| m.len())
    }

    /// Holds the store's lock until the returned file is dropped.
    fn lock(&self) -> Result<File, ToolError> {
        let failed =
            |e: std::io::Error| ToolError::io(format!("Could not lock the checkpoint log: {e}"));
        std::fs::create_dir_all(&self.dir).map_err(failed)?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.dir.join(LOCK))
            .map_err(failed)?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|errno| failed(errno.into()))?;
        Ok(file)
    }

    /// Appends one record as one line. Call with the lock held.
    fn append(&self, record: &Record) -> Result<(), ToolError> {
        let io =
            |e: std::io::Error| ToolError::io(format!("Could not update the checkpoint log: {e}"));
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(self.dir.join(INDEX))
            .map_err(io)?;
        let mut line = String::new();
        // A crash in the middle of an earlier append can leave a line without its newline;
        // start a fresh line so that this record is not glued to the torn one.
        let len = file.metadata().map_err(io)?.len();
        if len > 0 {
            let mut last = [0u8];
            file.read_exact_at(&mut last, len - 1).map_err(io)?;
            if last[0] != b'\n' {
                line.push('\n');
            }
        }
        line.push_str(&serde_json::to_string(record).expect("records serialise"));
        line.push('\n');
        file.write_all(line.as_bytes()).map_err(io)?;
        file.sync_data().map_err(io)
    }

    /// Every write, oldest first, with its undone and evicted flags.
    pub fn list(&self) -> Result<Vec<Checkpoint>, ToolError> {
        let text = match crate::paths::read_state_file(&self.dir.join(INDEX)) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(ToolError::io(format!(
                    "Could not read the checkpoint log: {e}"
                )))
            }
        };
        let mut out: Vec<Checkpoint> = Vec::new();
        let mut position: HashMap<String, usize> = HashMap::new();
        // A line torn by a crash mid-append is skipped; every complete line counts.
        for record in text
            .split(|b| *b == b'\n')
            .filter_map(|line| serde_json::from_slice::<Record>(line).ok())
        {
            match record {
                Record::Write(c) => {
                    if let Some(&i) = c.undoes.as_ref().and_then(|id| position.get(id)) {
                        out[i].undone = true;
                    }
                    position.insert(c.id.clone(), out.len());
                    out.push(c);
                }
                Record::Evict { ids, .. } => {
                    for id in ids {
                        if let Some(&i) = position.get(&id) {
                            out[i].evicted = true;
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// Evicts the oldest checkpoints of other sessions until the contents the kept ones
    /// reference fit the capacity, then removes blobs nobody references any more. Call with
    /// the lock held.
    fn evict_over_capacity(&self, all: &[Checkpoint]) -> Result<(), ToolError> {
        // Each distinct content counts once, for as long as any kept checkpoint references it.
        let mut references: HashMap<&str, (u64, usize)> = HashMap::new();
        for c in all.iter().filter(|c| !c.evicted) {
            for (hash, bytes) in contents(c) {
                let entry = references.entry(hash).or_insert((bytes.unwrap_or(0), 0));
                entry.1 += 1;
            }
        }
        let mut total: u64 = references.values().map(|(bytes, _)| bytes).sum();
        if total <= self.capacity_bytes {
            return Ok(());
        }
        let mut evicted = Vec::new();
        for c in all.iter().filter(|c| !c.evicted) {
            if total <= self.capacity_bytes {
                break;
            }
            if c.session.as_deref() == Some(self.session.as_str()) {
                continue;
            }
            for (hash, _) in contents(c) {
                if let Some(entry) = references.get_mut(hash) {
                    entry.1 -= 1;
                    if entry.1 == 0 {
                        total -= entry.0;
                    }
                }
            }
            evicted.push(c.id.clone());
        }
        if evicted.is_empty() {
            return Ok(());
        }
        // The record goes first: a blob is only removed once no kept checkpoint can need it.
        self.append(&Record::Evict {
            ids: evicted,
            time_ms: chrono::Utc::now().timestamp_millis(),
        })?;
        let kept: HashSet<&str> = references
            .into_iter()
            .filter(|(_, (_, count))| *count > 0)
            .map(|(hash, _)| hash)
            .collect();
        self.remove_unreferenced_blobs(&kept)
    }

    /// Removes blob files (and leftover temporary files) that no kept checkpoint references
    /// and that are older than [`ORPHAN_GRACE`].
    fn remove_unreferenced_blobs(&self, kept: &HashSet<&str>) -> Result<(), ToolError> {
        let io = |e: std::io::Error| ToolError::io(format!("Could not clean up checkpoints: {e}"));
        let entries = match std::fs::read_dir(self.dir.join(BLOBS)) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io(e)),
        };
        let now = SystemTime::now();
        for entry in entries {
            let entry = entry.map_err(io)?;
            let name = entry.file_name();
            if kept.contains(name.to_string_lossy().as_ref()) {
                continue;
            }
            let old_enough = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|modified| {
                    now.duration_since(modified)
                        .is_ok_and(|age| age >= ORPHAN_GRACE)
                });
            if old_enough {
                match std::fs::remove_file(entry.path()) {
                    Err(e) if e.kind() != ErrorKind::NotFound => return Err(io(e)),
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Undoes checkpoint `id`, or the newest write not yet undone.
    ///
    /// Refuses, changing nothing, when the file no longer holds what that write left; the
    /// refusal's `details` then hold an [`UndoConflict`] with the three versions.
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
        let current = if path.exists {
            let file = workspace.open_read(&path)?;
            Some(hash_file(file).map_err(|e| ToolError::from_io(&e, &path.rel))?)
        } else {
            None
        };
        if current.as_ref().map(|(hash, _)| hash) != checkpoint.after.as_ref() {
            let now = Version {
                exists: current.is_some(),
                sha256: current.as_ref().map(|(hash, _)| hash.clone()),
                bytes: current.as_ref().map(|(_, bytes)| *bytes),
                file: current.as_ref().map(|_| path.abs.clone()),
            };
            return Err(self.conflict(workspace, checkpoint, now));
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

    /// The refusal of an undo whose file changed since the write, with the three versions.
    fn conflict(&self, workspace: &Workspace, checkpoint: &Checkpoint, now: Version) -> ToolError {
        let stored = |hash: &Option<String>, bytes: Option<u64>| Version {
            exists: hash.is_some(),
            sha256: hash.clone(),
            bytes: bytes.or_else(|| hash.as_deref().and_then(|h| self.blob_size(h))),
            file: hash.as_deref().map(|h| self.blob_path(h)),
        };
        let before = stored(&checkpoint.before, checkpoint.before_bytes);
        let agent = stored(&checkpoint.after, checkpoint.after_bytes);
        let stored_text = |version: &Version| -> Option<String> {
            if !version.exists {
                return Some(String::new());
            }
            if version.bytes? > MAX_DIFFED_BYTES {
                return None;
            }
            String::from_utf8(self.blob(version.sha256.as_deref()?).ok()?).ok()
        };
        let now_text = if !now.exists {
            Some(String::new())
        } else if now.bytes.is_some_and(|bytes| bytes <= MAX_DIFFED_BYTES) {
            read_current(workspace, &checkpoint.path).and_then(|b| String::from_utf8(b).ok())
        } else {
            None
        };
        let (before_text, agent_text) = (stored_text(&before), stored_text(&agent));
        let label = |version: &str| format!("{} ({version})", checkpoint.path);
        let diff = |old: &Option<String>, new: &Option<String>, from: &str, to: &str| {
            Some(unified_diff(
                old.as_ref()?,
                new.as_ref()?,
                &label(from),
                &label(to),
            ))
        };
        let agent_changes = diff(&before_text, &agent_text, "before", "agent");
        let later_changes = diff(&agent_text, &now_text, "agent", "now");

        let state = match &now.sha256 {
            None => "no longer exists".to_string(),
            Some(hash) if Some(hash) == checkpoint.before.as_ref() => {
                "already holds the content from before that write".to_string()
            }
            Some(hash) => format!("now holds other content ({})", &hash[..12]),
        };
        let kept = match &before.file {
            Some(file) => format!(
                "The content before that write is kept at {}",
                file.display()
            ),
            None => "The file did not exist before that write".to_string(),
        };
        let conflict = UndoConflict {
            checkpoint: checkpoint.id.clone(),
            path: checkpoint.path.clone(),
            before,
            agent,
            now,
            agent_changes,
            later_changes,
        };
        ToolError::invalid(format!(
            "Not undoing {}: {} was changed after that write and {state}; undoing would destroy those changes. {kept}.",
            checkpoint.id, checkpoint.path
        ))
        .with_details(serde_json::json!({
            "undo_conflict": serde_json::to_value(&conflict).expect("a conflict serialises")
        }))
    }
}

/// The contents a checkpoint references, with their sizes when known.
fn contents(c: &Checkpoint) -> impl Iterator<Item = (&str, Option<u64>)> {
    [
        (c.before.as_deref(), c.before_bytes),
        (c.after.as_deref(), c.after_bytes),
    ]
    .into_iter()
    .filter_map(|(hash, bytes)| Some((hash?, bytes)))
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

/// The workspace file's current content, through the sandbox.
fn read_current(workspace: &Workspace, rel: &str) -> Option<Vec<u8>> {
    let path = workspace.resolve(rel).ok()?;
    let mut bytes = Vec::new();
    workspace
        .open_read(&path)
        .ok()?
        .take(MAX_DIFFED_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

/// A unified diff with three lines of context, cut at [`MAX_DIFF_BYTES`]. Line matching
/// gives up after a second and falls back to a coarser diff, so huge inputs stay quick.
fn unified_diff(old: &str, new: &str, from: &str, to: &str) -> String {
    let mut diff = similar::TextDiff::configure()
        .timeout(Duration::from_secs(1))
        .diff_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(from, to)
        .to_string();
    if diff.len() > MAX_DIFF_BYTES {
        let mut cut = MAX_DIFF_BYTES;
        while !diff.is_char_boundary(cut) {
            cut -= 1;
        }
        let dropped = diff.len() - cut;
        diff.truncate(cut);
        diff.push_str(&format!(
            "\n… diff cut: {dropped} more bytes; compare the files\n"
        ));
    }
    diff
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorType;
    use tempfile::TempDir;

    /// A workspace and a data folder, side by side.
    struct Fixture {
        _base: TempDir,
        ws: Workspace,
        data: PathBuf,
    }

    impl Fixture {
        fn new() -> Fixture {
            let base = tempfile::tempdir().unwrap();
            std::fs::create_dir(base.path().join("ws")).unwrap();
            let ws = Workspace::open(base.path().join("ws")).unwrap();
            let data = base.path().join("data");
            Fixture {
                _base: base,
                ws,
                data,
            }
        }

        /// A store for a new session.
        fn session(&self) -> CheckpointStore {
            CheckpointStore::for_workspace(&self.data, &self.ws)
        }

        fn read(&self, rel: &str) -> Option<String> {
            std::fs::read_to_string(self.ws.root().join(rel)).ok()
        }

        /// Writes `content` to `rel` the way write_file does: prepare, write, commit.
        fn write(&self, store: &CheckpointStore, rel: &str, content: &str) -> Checkpoint {
            let path = self.ws.resolve(rel).unwrap();
            let old = std::fs::read(&path.abs).ok();
            let (before, after) = store
                .prepare(old.as_deref(), Some(content.as_bytes()))
                .unwrap();
            self.ws.write_atomic(&path, content.as_bytes()).unwrap();
            store.commit(&path.rel, before, after, "test").unwrap()
        }
    }

    /// Moves a blob's modification time back past the grace period.
    fn age(store: &CheckpointStore, hash: &str) {
        let old = SystemTime::now() - ORPHAN_GRACE - Duration::from_secs(60);
        File::open(store.blob_path(hash))
            .unwrap()
            .set_modified(old)
            .unwrap();
    }

    #[test]
    fn commits_record_session_sizes_and_increasing_ids() {
        let fx = Fixture::new();
        let store = fx.session();
        let first = fx.write(&store, "a.txt", "one");
        let second = fx.write(&store, "a.txt", "three");
        assert_eq!((first.id.as_str(), second.id.as_str()), ("cp-1", "cp-2"));
        assert_eq!(first.session.as_deref(), Some(store.session()));
        assert_eq!((first.before_bytes, first.after_bytes), (None, Some(3)));
        assert_eq!(
            (second.before_bytes, second.after_bytes),
            (Some(3), Some(5))
        );
        assert_eq!(store.list().unwrap(), vec![first.clone(), second]);
        // Identical contents are stored once.
        assert_eq!(
            std::fs::read_dir(store.dir().join(BLOBS)).unwrap().count(),
            2
        );
        assert_eq!(store.blob(first.after.as_ref().unwrap()).unwrap(), b"one");
        // Another session on the same workspace sees the same log and goes on counting.
        let other = fx.session();
        assert_ne!(other.session(), store.session());
        assert_eq!(fx.write(&other, "b.txt", "x").id, "cp-3");
    }

    #[test]
    fn undo_restores_then_the_undo_can_be_undone() {
        let fx = Fixture::new();
        std::fs::write(fx.ws.root().join("a.txt"), "mine").unwrap();
        let store = fx.session();
        fx.write(&store, "a.txt", "agent");
        let outcome = store.undo(&fx.ws, None).unwrap();
        assert_eq!(
            (
                outcome.undone.as_str(),
                outcome.action,
                outcome.checkpoint.as_str()
            ),
            ("cp-1", "restored", "cp-2")
        );
        assert_eq!(fx.read("a.txt").unwrap(), "mine");
        let list = store.list().unwrap();
        assert!(list[0].undone);
        assert_eq!(list[1].undoes.as_deref(), Some("cp-1"));
        let again = store.undo(&fx.ws, Some("cp-1")).unwrap_err();
        assert_eq!(again.message, "cp-1 was already undone (by cp-2)");
        store.undo(&fx.ws, Some("cp-2")).unwrap();
        assert_eq!(fx.read("a.txt").unwrap(), "agent");
    }

    #[test]
    fn undo_of_a_creation_deletes_the_file_only_while_it_is_unchanged() {
        let fx = Fixture::new();
        let store = fx.session();
        fx.write(&store, "new.txt", "created");
        std::fs::write(fx.ws.root().join("new.txt"), "created, then edited").unwrap();
        let err = store.undo(&fx.ws, None).unwrap_err();
        assert_eq!(err.kind, ErrorType::ValidationFailed);
        assert_eq!(fx.read("new.txt").unwrap(), "created, then edited");
        let conflict = UndoConflict::from_error(&err).unwrap();
        assert!(!conflict.before.exists);
        assert_eq!(conflict.now.bytes, Some(20));

        // Back to what the write left: now the creation is undone by deleting the file.
        std::fs::write(fx.ws.root().join("new.txt"), "created").unwrap();
        assert_eq!(store.undo(&fx.ws, None).unwrap().action, "deleted");
        assert!(fx.read("new.txt").is_none());
        // Undoing that undo creates the file again.
        store.undo(&fx.ws, None).unwrap();
        assert_eq!(fx.read("new.txt").unwrap(), "created");
    }

    #[test]
    fn undo_of_a_creation_whose_file_was_deleted_refuses() {
        let fx = Fixture::new();
        let store = fx.session();
        fx.write(&store, "new.txt", "created");
        std::fs::remove_file(fx.ws.root().join("new.txt")).unwrap();
        let err = store.undo(&fx.ws, None).unwrap_err();
        assert!(err.message.contains("no longer exists"), "{}", err.message);
        let conflict = UndoConflict::from_error(&err).unwrap();
        assert!(!conflict.now.exists && conflict.now.file.is_none());
        assert!(fx.read("new.txt").is_none());
        assert!(!store.list().unwrap()[0].undone);
    }

    #[test]
    fn a_refused_undo_shows_the_three_versions_and_changes_nothing() {
        let fx = Fixture::new();
        std::fs::write(fx.ws.root().join("notes.md"), "one\ntwo\n").unwrap();
        let store = fx.session();
        let cp = fx.write(&store, "notes.md", "one\nTWO\n");
        std::fs::write(fx.ws.root().join("notes.md"), "one\nTWO\nthree\n").unwrap();

        let err = store.undo(&fx.ws, None).unwrap_err();
        assert!(
            err.message.starts_with(
                "Not undoing cp-1: notes.md was changed after that write and now holds other content"
            ),
            "{}",
            err.message
        );
        assert_eq!(fx.read("notes.md").unwrap(), "one\nTWO\nthree\n");
        let c = UndoConflict::from_error(&err).unwrap();
        assert_eq!(
            (c.checkpoint.as_str(), c.path.as_str()),
            ("cp-1", "notes.md")
        );
        // Before and the agent's version are blobs that hold exactly those contents.
        assert_eq!(c.before.sha256, cp.before);
        assert_eq!(c.agent.sha256, cp.after);
        assert_eq!(
            std::fs::read(c.before.file.as_ref().unwrap()).unwrap(),
            b"one\ntwo\n"
        );
        assert_eq!(
            std::fs::read(c.agent.file.as_ref().unwrap()).unwrap(),
            b"one\nTWO\n"
        );
        // Now is the workspace file.
        assert_eq!(
            c.now.file.as_deref(),
            Some(fx.ws.root().join("notes.md").as_path())
        );
        assert_eq!(
            c.now.sha256.as_deref(),
            Some(sha256_hex(b"one\nTWO\nthree\n").as_str())
        );
        assert_eq!(
            (c.before.bytes, c.agent.bytes, c.now.bytes),
            (Some(8), Some(8), Some(14))
        );
        let agent = c.agent_changes.unwrap();
        assert!(agent.contains("-two\n+TWO\n"), "{agent}");
        assert!(
            agent.starts_with("--- notes.md (before)\n+++ notes.md (agent)\n"),
            "{agent}"
        );
        let later = c.later_changes.unwrap();
        assert!(
            later.contains("+three\n") && !later.contains("-two"),
            "{later}"
        );
    }

    #[test]
    fn a_refusal_says_when_the_file_already_holds_the_old_content() {
        let fx = Fixture::new();
        std::fs::write(fx.ws.root().join("a.txt"), "old").unwrap();
        let store = fx.session();
        fx.write(&store, "a.txt", "new");
        std::fs::write(fx.ws.root().join("a.txt"), "old").unwrap();
        let err = store.undo(&fx.ws, None).unwrap_err();
        assert!(
            err.message
                .contains("already holds the content from before that write"),
            "{}",
            err.message
        );
    }

    #[test]
    fn binary_versions_get_no_diff_but_still_their_files() {
        let fx = Fixture::new();
        let store = fx.session();
        fx.write(&store, "a.bin", "text");
        std::fs::write(fx.ws.root().join("a.bin"), [0xff, 0xfe, 0]).unwrap();
        let c = UndoConflict::from_error(&store.undo(&fx.ws, None).unwrap_err()).unwrap();
        assert!(c.agent_changes.is_some());
        assert!(c.later_changes.is_none());
        assert!(c.now.file.is_some() && c.agent.file.is_some());
    }

    #[test]
    fn a_damaged_blob_is_never_restored() {
        let fx = Fixture::new();
        std::fs::write(fx.ws.root().join("a.txt"), "precious").unwrap();
        let store = fx.session();
        let cp = fx.write(&store, "a.txt", "agent");
        std::fs::write(store.blob_path(cp.before.as_ref().unwrap()), "garbage").unwrap();
        let err = store.undo(&fx.ws, None).unwrap_err();
        assert_eq!(err.kind, ErrorType::IoError);
        assert!(err.message.contains("damaged"), "{}", err.message);
        assert_eq!(fx.read("a.txt").unwrap(), "agent");
        // Saving the same content again repairs the blob, because its size is wrong.
        store.prepare(Some(b"precious"), None).unwrap();
        store.undo(&fx.ws, None).unwrap();
        assert_eq!(fx.read("a.txt").unwrap(), "precious");
    }

    #[test]
    fn a_torn_last_line_does_not_swallow_the_next_record() {
        let fx = Fixture::new();
        let store = fx.session();
        fx.write(&store, "a.txt", "1");
        // What a crash in the middle of an append leaves behind.
        let mut index = std::fs::OpenOptions::new()
            .append(true)
            .open(store.dir().join(INDEX))
            .unwrap();
        index
            .write_all(br#"{"type":"write","id":"cp-2","pa"#)
            .unwrap();
        let next = fx.write(&store, "a.txt", "2");
        assert_eq!(next.id, "cp-2");
        let ids: Vec<String> = store.list().unwrap().into_iter().map(|c| c.id).collect();
        assert_eq!(ids, ["cp-1", "cp-2"]);
        store.undo(&fx.ws, None).unwrap();
        assert_eq!(fx.read("a.txt").unwrap(), "1");
    }

    #[test]
    fn concurrent_sessions_never_share_an_id() {
        let fx = Fixture::new();
        let stores: Vec<CheckpointStore> = (0..4).map(|_| fx.session()).collect();
        std::thread::scope(|scope| {
            for (i, store) in stores.iter().enumerate() {
                scope.spawn(move || {
                    for round in 0..10 {
                        let (before, after) = store
                            .prepare(None, Some(format!("{i}-{round}").as_bytes()))
                            .unwrap();
                        store
                            .commit(&format!("f{i}"), before, after, "test")
                            .unwrap();
                    }
                });
            }
        });
        let ids: HashSet<String> = stores[0]
            .list()
            .unwrap()
            .into_iter()
            .map(|c| c.id)
            .collect();
        assert_eq!(ids.len(), 40);
    }

    #[test]
    fn eviction_drops_the_oldest_checkpoints_of_earlier_sessions_first() {
        let fx = Fixture::new();
        let earlier = fx.session();
        let a = fx.write(&earlier, "a.txt", &"a".repeat(100));
        let b = fx.write(&earlier, "b.txt", &"b".repeat(100));
        let c = fx.write(&earlier, "c.txt", &"c".repeat(100));
        // 300 bytes kept; a new session with room for 250 must make room for its own 100.
        let current = fx.session().with_capacity(250);
        let d = fx.write(&current, "d.txt", &"d".repeat(100));
        let list = current.list().unwrap();
        let evicted: Vec<&str> = list
            .iter()
            .filter(|c| c.evicted)
            .map(|c| c.id.as_str())
            .collect();
        assert_eq!(evicted, [a.id.as_str(), b.id.as_str()]);

        let err = current.undo(&fx.ws, Some(&a.id)).unwrap_err();
        assert_eq!(err.kind, ErrorType::NotFound);
        assert!(err.message.contains("it was evicted"), "{}", err.message);
        assert_eq!(fx.read("a.txt").unwrap(), "a".repeat(100));
        // The kept checkpoints still undo.
        current.undo(&fx.ws, Some(&c.id)).unwrap();
        assert!(fx.read("c.txt").is_none());
        current.undo(&fx.ws, Some(&d.id)).unwrap();

        // Blobs of evicted checkpoints are removed at the next eviction, once old enough.
        age(&current, a.after.as_ref().unwrap());
        let fresh = b.after.clone().unwrap();
        let tight = fx.session().with_capacity(0);
        fx.write(&tight, "e.txt", "e");
        assert!(!current.blob_path(a.after.as_ref().unwrap()).exists());
        assert!(
            current.blob_path(&fresh).exists(),
            "a recent blob is spared"
        );
    }

    #[test]
    fn the_current_session_is_never_evicted_even_over_capacity() {
        let fx = Fixture::new();
        let store = fx.session().with_capacity(10);
        let ids: Vec<String> = (0..5)
            .map(|i| {
                fx.write(&store, &format!("f{i}.txt"), &"x".repeat(100 + i))
                    .id
            })
            .collect();
        let list = store.list().unwrap();
        assert!(list.iter().all(|c| !c.evicted), "{list:?}");
        for id in ids.iter().rev() {
            store.undo(&fx.ws, Some(id)).unwrap();
        }
        assert_eq!(std::fs::read_dir(fx.ws.root()).unwrap().count(), 0);
    }

    #[test]
    fn shared_contents_stay_while_a_kept_checkpoint_needs_them() {
        let fx = Fixture::new();
        let earlier = fx.session();
        let same = "same content".repeat(10);
        let old = fx.write(&earlier, "a.txt", &same);
        let current = fx.session().with_capacity(150);
        // The same content written again: the blob is shared, so only 120 bytes are kept.
        let new = fx.write(&current, "b.txt", &same);
        assert!(!current.list().unwrap()[0].evicted);
        assert_eq!(old.after, new.after);
        // More content forces the old checkpoint out; the clean-up that follows spares the
        // shared blob, old as it is, because `new` still needs it.
        age(&current, new.after.as_ref().unwrap());
        let more = fx.write(&current, "c.txt", &"z".repeat(100));
        assert!(current.list().unwrap()[0].evicted);
        assert_eq!(
            current.blob(new.after.as_ref().unwrap()).unwrap(),
            same.as_bytes()
        );
        current.undo(&fx.ws, Some(&more.id)).unwrap();
        current.undo(&fx.ws, Some(&new.id)).unwrap();
        assert!(fx.read("b.txt").is_none());
    }

    #[test]
    fn stale_temporary_files_in_the_blob_folder_are_cleaned_up() {
        let fx = Fixture::new();
        let store = fx.session().with_capacity(0);
        fx.write(&store, "a.txt", "a");
        let leftover = store.dir().join(BLOBS).join(".abc.tmp-999999");
        std::fs::write(&leftover, "half a blob").unwrap();
        File::open(&leftover)
            .unwrap()
            .set_modified(SystemTime::now() - ORPHAN_GRACE * 2)
            .unwrap();
        fx.write(&fx.session().with_capacity(0), "b.txt", "b");
        assert!(!leftover.exists());
    }
}
