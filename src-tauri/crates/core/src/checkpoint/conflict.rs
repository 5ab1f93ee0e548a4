//! The refusal of an undo whose file changed after the write: the three versions, where each
//! can be read, and the diffs between them.

use super::{Checkpoint, CheckpointStore, UndoConflict, Version};
use crate::error::ToolError;
use crate::sandbox::Workspace;
use std::io::Read;
use std::time::Duration;

/// Contents larger than this get no diff in an [`UndoConflict`]; the files are named instead.
const MAX_DIFFED_BYTES: u64 = 1024 * 1024;
/// The most bytes of each diff in an [`UndoConflict`].
const MAX_DIFF_BYTES: usize = 64 * 1024;

impl CheckpointStore {
    /// The refusal of an undo whose file changed since the write, with the three versions.
    pub(super) fn conflict(
        &self,
        workspace: &Workspace,
        checkpoint: &Checkpoint,
        now: Version,
    ) -> ToolError {
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
