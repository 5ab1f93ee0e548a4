//! The one way a tool changes a file: a checkpointed write, [`ToolContext::write`].
//!
//! Undo can only restore what was saved before a write, and only a write that was recorded.
//! Rather than each writing tool repeating the order that makes both true — save the old and
//! the new content, replace the file atomically, record the checkpoint at once — the order
//! lives here and nowhere else. `Workspace::write_atomic` is crate-private and, by
//! `clippy.toml`, a disallowed method everywhere but here, undo and the user's own saves, so a
//! tool has no other way to write and every tool's write is undoable by construction.

use super::read_file::MAX_FILE_BYTES;
use super::ToolContext;
use crate::error::ToolError;
use crate::sandbox::{ResolvedPath, Workspace};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::Read;

/// The formats of manifests, settings and CI files a write must leave parsable. A small model's
/// edit drops a quote or adds a brace (`version": "7.7.0"},`), and a manifest that no longer
/// parses breaks the whole project, so such a change is refused before anyone is asked, with
/// the parser's words for the model to mend it. Source code is not judged: a change to it may
/// pass through a broken step on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ConfigFormat {
    Json,
    Toml,
    Yaml,
}

impl ConfigFormat {
    /// The format of the file at `rel`, by its extension, when it is one that is judged.
    pub(super) fn of(rel: &str) -> Option<Self> {
        let lower = rel.to_ascii_lowercase();
        if lower.ends_with(".json") {
            Some(ConfigFormat::Json)
        } else if lower.ends_with(".toml") {
            Some(ConfigFormat::Toml)
        } else if lower.ends_with(".yml") || lower.ends_with(".yaml") {
            Some(ConfigFormat::Yaml)
        } else {
            None
        }
    }

    /// Refuses `new` as the content of `rel` when its `old` content parses and `new` does not.
    /// A file that did not parse before (JSON with comments) is not judged.
    pub(super) fn keeps_whole(self, rel: &str, old: &str, new: &str) -> Result<(), ToolError> {
        if self.first_error(rel, old).is_some() {
            return Ok(());
        }
        let Some(why) = self.first_error(rel, new) else {
            return Ok(());
        };
        let name = match self {
            ConfigFormat::Json => "JSON",
            ConfigFormat::Toml => "TOML",
            ConfigFormat::Yaml => "YAML",
        };
        Err(ToolError::invalid(format!(
            "The change would leave {rel} invalid {name} ({why}); nothing was written"
        ))
        .with_hint(
            "Keep the quotes, commas and braces around what you change: copy whole lines as the old text and change only the value in the new text.",
        ))
    }

    /// Why `text` does not parse, in the parser's words: `serde_json` for JSON, the syntax
    /// check's tree-sitter grammars for TOML and YAML.
    fn first_error(self, rel: &str, text: &str) -> Option<String> {
        match self {
            ConfigFormat::Json => serde_json::from_str::<serde::de::IgnoredAny>(text)
                .err()
                .map(|e| e.to_string()),
            ConfigFormat::Toml | ConfigFormat::Yaml => crate::diagnostics::syntax::check(rel, text)
                .into_iter()
                .next()
                .map(|d| format!("{} at line {}", d.message, d.line)),
        }
    }
}

/// A file that exists and the content a call would give it: what the agent weighs the call's
/// losses by ([`DroppedLines::between`]), from the content the file had before the turn's
/// first write to it, so that lines lost one call at a time add up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    /// The file, workspace-relative.
    pub path: String,
    /// Its content now.
    pub old: String,
    /// Its content after the call.
    pub new: String,
}

/// The lines of a file that exists which a write would take out: what a small model's
/// rewrite loses when it writes only the line it meant to add, or an edit whose old text is
/// most of the file. A confirmation shows every such loss; one that [needs a
/// person](Self::needs_a_person) is asked about whatever the grants say and is never approved
/// by an automatic yes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DroppedLines {
    /// The file, workspace-relative.
    pub path: String,
    /// How many of its lines that are not blank the new content does not keep.
    pub dropped: usize,
    /// How many lines that are not blank it has.
    pub of: usize,
    /// Of the dropped lines, how many the new content does not keep even changed: no new line
    /// shares with it a start and an end that together make half of it. An edited value
    /// keeps them (`PORT=8080` → `PORT=9090`); an entry written over (`coverage` → `*.tmp`)
    /// does not.
    #[serde(default)]
    pub lost: usize,
    /// The user's message asked to change or take out nothing that is there ("Add *.tmp to the
    /// ignore list"), so every line of the file was asked to stay: a line lost outright is then
    /// a loss nobody asked for.
    #[serde(default)]
    pub asked_to_keep: bool,
}

impl DroppedLines {
    /// What writing `new` over `old` at `path` drops, if it drops anything: the lines of `old`
    /// that are not blank and that `new` does not have as often (white space around a line
    /// aside, so re-indenting or moving a line drops nothing).
    pub fn between(path: &str, old: &str, new: &str) -> Option<DroppedLines> {
        let mut kept: HashMap<&str, usize> = HashMap::new();
        for line in new.lines() {
            *kept.entry(line.trim()).or_default() += 1;
        }
        let mut of = 0;
        let mut gone = Vec::new();
        for line in old.lines().map(str::trim).filter(|l| !l.is_empty()) {
            of += 1;
            match kept.get_mut(line) {
                Some(count) if *count > 0 => *count -= 1,
                _ => gone.push(line),
            }
        }
        // The new lines no old line matched: where a dropped line may live on, changed.
        let added: Vec<&str> = (kept.iter())
            .filter(|(line, count)| **count > 0 && !line.is_empty())
            .map(|(line, _)| *line)
            .collect();
        let lost = (gone.iter())
            .filter(|line| !added.iter().any(|new| changed_into(line, new)))
            .count();
        (!gone.is_empty()).then(|| DroppedLines {
            path: path.to_string(),
            dropped: gone.len(),
            of,
            lost,
            asked_to_keep: false,
        })
    }

    /// Does the write lose content rather than change it: a line it does not keep even
    /// changed, or [most of the file](Self::loses_most_of_the_file)? Only such a loss is
    /// shown as one: a changed value (`this.max = 1000` → `this.max = 500`) is the diff's to
    /// show, and a warning on every edit would teach the user to skip warnings.
    pub fn loses_content(&self) -> bool {
        self.lost > 0 || self.loses_most_of_the_file()
    }

    /// Does this loss need a person, whatever the grants or an automatic yes say: does it
    /// [lose most of the file](Self::loses_most_of_the_file), or lose a line outright when
    /// the user [asked that every line stay](Self::asked_to_keep)?
    pub fn needs_a_person(&self) -> bool {
        self.loses_most_of_the_file() || (self.asked_to_keep && self.lost > 0)
    }

    /// Does the write drop more than one line and keep fewer than half of the file's lines?
    /// Then it replaces the file rather than changing it: a fix or an added line keeps most
    /// of what was there. A change of one line is never a loss of most of a file, so that the
    /// version in a file of one line can still be bumped.
    pub fn loses_most_of_the_file(&self) -> bool {
        self.dropped > 1 && self.dropped * 2 > self.of
    }
}

/// Is `new` the line `old` changed: do the characters they begin with and end with in common
/// make at least half of `old`?
fn changed_into(old: &str, new: &str) -> bool {
    let length = old.chars().count();
    let same_start = (old.chars().zip(new.chars()))
        .take_while(|(a, b)| a == b)
        .count();
    let same_end = (old.chars().rev().zip(new.chars().rev()))
        .take_while(|(a, b)| a == b)
        .count();
    (same_start + same_end).min(length) * 2 >= length
}

#[cfg(test)]
mod dropped_tests {
    use super::DroppedLines;

    fn dropped(old: &str, new: &str) -> Option<(usize, usize)> {
        DroppedLines::between("f", old, new).map(|d| (d.dropped, d.of))
    }

    #[test]
    fn a_line_kept_anywhere_with_any_indent_is_not_dropped() {
        assert_eq!(dropped("a\nb\n\nc\n", "c\n  a\nb\nd\n"), None);
        assert_eq!(dropped("a\nb\nc\n", "a\nx\n"), Some((2, 3)));
    }

    #[test]
    fn a_loss_of_most_of_a_file_is_more_than_one_line_and_more_than_half() {
        let loss = |dropped, of| DroppedLines {
            path: "f".into(),
            dropped,
            of,
            lost: dropped,
            asked_to_keep: false,
        };
        assert!(loss(2, 3).loses_most_of_the_file());
        assert!(!loss(2, 4).loses_most_of_the_file());
        assert!(!loss(1, 1).loses_most_of_the_file());
    }

    fn lost(old: &str, new: &str) -> usize {
        DroppedLines::between("f", old, new).map_or(0, |d| d.lost)
    }

    #[test]
    fn a_line_written_over_is_lost_and_a_line_edited_is_not() {
        assert_eq!(lost("node_modules\ncoverage\n", "node_modules\n*.tmp\n"), 1);
        assert_eq!(lost("PORT=8080\nHOST=a\n", "PORT=9090\nHOST=a\n"), 0);
        assert_eq!(lost("def fetch(url):\n", "def fetch(url, retries=3):\n"), 0);
        assert_eq!(lost("1.2.3\n", "1.2.4\n"), 0);
        assert_eq!(lost("a\nb\n", "a\n"), 1);
        // A value changed in the middle keeps the line's start and end.
        assert_eq!(
            lost("timeout = 30 # seconds\n", "timeout = 45 # seconds\n"),
            0
        );
    }

    #[test]
    fn a_line_lost_needs_a_person_only_where_every_line_was_asked_to_stay() {
        let mut written_over = DroppedLines::between("f", "a\ncoverage\n", "a\n*.tmp\n").unwrap();
        assert!(!written_over.needs_a_person());
        written_over.asked_to_keep = true;
        assert!(written_over.needs_a_person());
        let mut edited = DroppedLines::between("f", "PORT=8080\n", "PORT=9090\n").unwrap();
        edited.asked_to_keep = true;
        assert!(!edited.needs_a_person());
    }

    #[test]
    fn a_repeated_line_is_kept_only_as_often_as_the_new_content_has_it() {
        assert_eq!(dropped("}\n}\n}\nfn a() {\n", "}\n"), Some((3, 4)));
    }
}

/// What a checkpointed write did.
#[derive(Debug)]
pub struct Written {
    /// Workspace-relative path of the file written.
    pub path: String,
    /// The content the write replaced; `None` when it created the file.
    pub before: Option<Vec<u8>>,
    pub created: bool,
    pub bytes_written: u64,
    pub undo: Undo,
}

/// Whether a write can be undone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undo {
    /// Recorded as this checkpoint.
    Checkpoint(String),
    /// The session keeps no checkpoints (the evaluation's throwaway copies, tests).
    NotKept,
    /// The file was written but the record could not be appended, for this reason: this
    /// write cannot be undone.
    Lost(String),
}

impl Written {
    /// Adds what every write's result says to a tool's result object: the path, whether the
    /// file was created, the bytes written, and the checkpoint that undoes the write — or,
    /// plainly, that it cannot be undone.
    pub fn report_into(&self, data: &mut Value) {
        data["path"] = json!(self.path);
        data["created"] = json!(self.created);
        data["bytes_written"] = json!(self.bytes_written);
        match &self.undo {
            Undo::Checkpoint(id) => data["checkpoint"] = json!(id),
            Undo::Lost(reason) => data["checkpoint_error"] = json!(reason),
            Undo::NotKept => {}
        }
    }
}

impl ToolContext {
    /// Replaces the file at `path` (or creates it, with any missing folders) with `content`,
    /// so that it can be undone: the old and new contents are saved in the checkpoint store
    /// before the file is touched, the file is replaced atomically, and the checkpoint is
    /// recorded right after, under [`ToolContext::origin`].
    #[allow(clippy::disallowed_methods)]
    pub fn write(&self, path: &ResolvedPath, content: &[u8]) -> Result<Written, ToolError> {
        let before = current_content(&self.workspace, path)?;
        // Saved before the file is touched, so an interrupted write can still be undone.
        let prepared = match &self.checkpoints {
            Some(store) => Some(store.prepare(before.as_deref(), Some(content))?),
            None => None,
        };
        let outcome = self.workspace.write_atomic(path, content)?;
        // Recorded at once, before anything else is worked out: the shorter the time between
        // the rename and the record, the less a crash can leave a write that cannot be undone.
        let undo = match (&self.checkpoints, prepared) {
            (Some(store), Some((old, new))) => {
                match store.commit(path.rel(), old, new, &self.origin) {
                    Ok(checkpoint) => Undo::Checkpoint(checkpoint.id),
                    Err(error) => Undo::Lost(error.message),
                }
            }
            _ => Undo::NotKept,
        };
        Ok(Written {
            path: path.rel().to_string(),
            before,
            created: outcome.created,
            bytes_written: outcome.bytes_written,
            undo,
        })
    }
}

/// The current content of a file, or `None` when it does not exist yet.
///
/// Read whole, because it is kept as the checkpoint and diffed: a file too large for read_file
/// is too large to be replaced wholesale by a model that cannot have read it.
pub(crate) fn current_content(
    workspace: &Workspace,
    path: &ResolvedPath,
) -> Result<Option<Vec<u8>>, ToolError> {
    if !path.exists() {
        return Ok(None);
    }
    let file = workspace.open_read(path)?;
    let size = file
        .metadata()
        .map_err(|e| ToolError::from_io(&e, path.rel()))?
        .len();
    let too_large = |size: u64| {
        ToolError::invalid(format!(
            "{} is {size} bytes, over the {MAX_FILE_BYTES}-byte limit for replacing a file",
            path.rel()
        ))
        .with_hint("Write a new file instead, or ask the user to edit this one.")
    };
    if size > MAX_FILE_BYTES {
        return Err(too_large(size));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::from_io(&e, path.rel()))?;
    // It grew while being read: what was read is not the whole of it, so it cannot be the
    // checkpoint of what the write replaces.
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(Some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::{CheckpointStore, UndoAction};
    use tempfile::TempDir;

    /// A context whose writes are checkpointed in a data folder beside the workspace.
    fn context() -> (TempDir, ToolContext) {
        let base = tempfile::tempdir().unwrap();
        std::fs::create_dir(base.path().join("ws")).unwrap();
        let workspace = Workspace::open(base.path().join("ws")).unwrap();
        let store = CheckpointStore::for_workspace(&base.path().join("data"), &workspace);
        let mut ctx = ToolContext::new(workspace, Some(store));
        ctx.origin = "call-1 some_tool".to_string();
        (base, ctx)
    }

    fn read(ctx: &ToolContext, rel: &str) -> Option<String> {
        std::fs::read_to_string(ctx.workspace.root().join(rel)).ok()
    }

    #[test]
    fn a_write_through_the_service_is_undoable() {
        let (_base, ctx) = context();
        std::fs::write(ctx.workspace.root().join("a.txt"), "old\n").unwrap();
        let path = ctx.workspace.resolve("a.txt").unwrap();
        let written = ctx.write(&path, b"new\n").unwrap();
        assert_eq!(written.path, "a.txt");
        assert_eq!(written.before.as_deref(), Some(&b"old\n"[..]));
        assert_eq!((written.created, written.bytes_written), (false, 4));
        assert_eq!(read(&ctx, "a.txt").as_deref(), Some("new\n"));
        let Undo::Checkpoint(id) = &written.undo else {
            panic!("not recorded: {:?}", written.undo);
        };
        let store = ctx.checkpoints.as_ref().unwrap();
        assert_eq!(store.list().unwrap()[0].origin, "call-1 some_tool");

        let undone = store.undo(&ctx.workspace, None).unwrap();
        assert_eq!(
            (undone.undone.as_str(), undone.action),
            (id.as_str(), UndoAction::Restored)
        );
        assert_eq!(read(&ctx, "a.txt").as_deref(), Some("old\n"));
    }

    #[test]
    fn undoing_a_file_the_service_created_removes_it() {
        let (_base, ctx) = context();
        let path = ctx.workspace.resolve("new/b.txt").unwrap();
        let written = ctx.write(&path, b"hello").unwrap();
        assert!(written.created && written.before.is_none());
        let store = ctx.checkpoints.as_ref().unwrap();
        assert_eq!(
            store.undo(&ctx.workspace, None).unwrap().action,
            UndoAction::Deleted
        );
        assert_eq!(read(&ctx, "new/b.txt"), None);
    }

    #[test]
    fn without_a_store_the_write_happens_and_says_it_is_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(Workspace::open(dir.path()).unwrap(), None);
        let path = ctx.workspace.resolve("c.txt").unwrap();
        let written = ctx.write(&path, b"x").unwrap();
        assert_eq!(written.undo, Undo::NotKept);
        let mut data = json!({});
        written.report_into(&mut data);
        assert_eq!(
            data,
            json!({"path": "c.txt", "created": true, "bytes_written": 1})
        );
    }

    #[test]
    fn a_file_too_large_to_keep_is_not_replaced() {
        let (_base, ctx) = context();
        let big = ctx.workspace.root().join("big.bin");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_FILE_BYTES + 1)
            .unwrap();
        let path = ctx.workspace.resolve("big.bin").unwrap();
        let error = ctx.write(&path, b"small").unwrap_err();
        assert!(error.message.contains("limit for replacing"), "{error:?}");
        assert_eq!(std::fs::metadata(&big).unwrap().len(), MAX_FILE_BYTES + 1);
    }
}
