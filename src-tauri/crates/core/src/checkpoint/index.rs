//! The append-only log, `index.jsonl`: records appended one line at a time under the
//! store's lock, and read back into the list of checkpoints.

use super::{Checkpoint, CheckpointStore, INDEX, LOCK};
use crate::error::ToolError;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::File;
use std::io::{ErrorKind, Write};
use std::os::unix::fs::FileExt;

/// One line of the log: a write (an undo included), or the checkpoints evicted at once.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Record {
    Write(Checkpoint),
    Evict { ids: Vec<String>, time_ms: i64 },
}

impl CheckpointStore {
    /// Holds the store's lock until the returned file is dropped.
    pub(super) fn lock(&self) -> Result<File, ToolError> {
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
    pub(super) fn append(&self, record: &Record) -> Result<(), ToolError> {
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
}
