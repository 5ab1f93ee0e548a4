//! What a run did to its copy of the fixture: the files it created, changed or removed, and
//! the lines of the fixture's files it wrote over.
//!
//! A file the task did not concern that changed fails the run. A line written over is counted
//! apart, in every file, the task's own too: a small model asked to add an entry may write it
//! over the one that was there, and the task's check may not look at that line. Whether the
//! task asked for the line to go (a removal) is for the reader of the report to judge.

use lantern_core::tools::DroppedLines;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How many non-blank lines of one of the fixture's files a run left nowhere, not even
/// changed: [`DroppedLines::lost`] between the fixture's content and the run's (all of them
/// for a file it removed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WrittenOver {
    /// The file, relative to the fixture.
    pub path: String,
    pub lines: usize,
}

/// A run's changes to the fixture.
pub(crate) struct Changes {
    /// The files (relative, `/`-separated) that differ between the fixture and the workspace
    /// the run left: created, changed or removed. Lantern's own state folder is not the
    /// project's.
    pub files: Vec<String>,
    /// The fixture's files in which the run wrote over lines, in path order.
    pub written_over: Vec<WrittenOver>,
}

impl Changes {
    /// What the workspace at `root` differs by from the fixture at `fixture`.
    pub fn between(fixture: &Path, root: &Path) -> Changes {
        let before = file_contents(fixture);
        let after = file_contents(root);
        let mut files: Vec<String> = (after.iter())
            .filter(|(path, bytes)| before.get(*path) != Some(bytes))
            .map(|(path, _)| path.clone())
            .chain(before.keys().filter(|p| !after.contains_key(*p)).cloned())
            .filter(|path| !path.starts_with(".lantern/"))
            .collect();
        files.sort();
        let written_over = (files.iter())
            .filter_map(|path| {
                let old = String::from_utf8_lossy(before.get(path)?);
                let new = after.get(path).map(|b| String::from_utf8_lossy(b));
                let dropped = DroppedLines::between(path, &old, new.as_deref().unwrap_or(""))?;
                (dropped.lost > 0).then(|| WrittenOver {
                    path: path.clone(),
                    lines: dropped.lost,
                })
            })
            .collect();
        Changes {
            files,
            written_over,
        }
    }
}

/// Every plain file under `root`, by its relative path.
fn file_contents(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut folders = vec![PathBuf::new()];
    while let Some(rel) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&rel)) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = rel.join(entry.file_name());
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => folders.push(path),
                Ok(kind) if kind.is_file() => {
                    let bytes = std::fs::read(root.join(&path)).unwrap_or_default();
                    files.insert(path.to_string_lossy().replace('\\', "/"), bytes);
                }
                _ => {}
            }
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_s_changes_name_each_file_and_the_lines_it_wrote_over() {
        let fixture = tempfile::tempdir().unwrap();
        let run = tempfile::tempdir().unwrap();
        for (dir, ignore, config, gone) in [
            (
                fixture.path(),
                "node_modules\ncoverage\n",
                "PORT=8080\n",
                true,
            ),
            (run.path(), "node_modules\n*.tmp\n", "PORT=9090\n", false),
        ] {
            std::fs::write(dir.join(".gitignore"), ignore).unwrap();
            std::fs::write(dir.join("server.env"), config).unwrap();
            std::fs::write(dir.join("same.txt"), "kept\n").unwrap();
            if gone {
                std::fs::write(dir.join("old.md"), "# Old\n\ntext\n").unwrap();
            }
        }
        std::fs::create_dir(run.path().join(".lantern")).unwrap();
        std::fs::write(run.path().join(".lantern/state"), "x").unwrap();
        std::fs::write(run.path().join("new.md"), "new\n").unwrap();
        let changes = Changes::between(fixture.path(), run.path());
        assert_eq!(
            changes.files,
            [".gitignore", "new.md", "old.md", "server.env"]
        );
        let over = |path: &str, lines| WrittenOver {
            path: path.into(),
            lines,
        };
        // The port was changed in place, not written over.
        assert_eq!(
            changes.written_over,
            [over(".gitignore", 1), over("old.md", 2)]
        );
    }
}
