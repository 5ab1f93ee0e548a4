//! Recording a write: its contents are saved before the file is touched, its record is
//! appended once the file has been written.

use super::index::Record;
use super::{Checkpoint, CheckpointStore};
use crate::error::ToolError;

impl CheckpointStore {
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

    pub(super) fn record_write(
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
}
