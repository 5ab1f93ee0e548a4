//! Keeping a workspace's checkpoints under the store's capacity: the oldest checkpoints of
//! other sessions are evicted, then the blobs no kept checkpoint references are removed.

use super::index::Record;
use super::{Checkpoint, CheckpointStore, BLOBS, ORPHAN_GRACE};
use crate::error::ToolError;
use std::collections::{HashMap, HashSet};
use std::io::ErrorKind;
use std::time::SystemTime;

impl CheckpointStore {
    /// Evicts the oldest checkpoints of other sessions until the contents the kept ones
    /// reference fit the capacity, then removes blobs nobody references any more. Call with
    /// the lock held.
    pub(super) fn evict_over_capacity(&self, all: &[Checkpoint]) -> Result<(), ToolError> {
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
