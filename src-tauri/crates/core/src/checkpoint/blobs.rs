//! The content-addressed blobs: each distinct content is stored once, under its sha256, and
//! checked against that hash whenever it is read back.

use super::{CheckpointStore, BLOBS};
use crate::error::ToolError;
use crate::paths::{sha256_hex, write_state_file};
use std::fs::File;
use std::path::PathBuf;
use std::time::SystemTime;

impl CheckpointStore {
    /// Where the content with this hash is (or would be) stored.
    pub fn blob_path(&self, hash: &str) -> PathBuf {
        self.dir.join(BLOBS).join(hash)
    }

    pub(super) fn store_blob(&self, bytes: &[u8]) -> Result<String, ToolError> {
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

    pub(super) fn blob_size(&self, hash: &str) -> Option<u64> {
        std::fs::metadata(self.blob_path(hash))
            .ok()
            .map(|m| m.len())
    }
}
