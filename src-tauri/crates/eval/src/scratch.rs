//! A fresh copy of a fixture for each run, in a folder of its own that is removed afterwards.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// How every run's folder is named, before the id of the process that made it.
const PREFIX: &str = "lantern-eval-";

/// A uniquely named folder under the system temp dir, removed when dropped.
pub(crate) struct ScratchDir {
    pub(crate) path: PathBuf,
}

impl ScratchDir {
    pub(crate) fn create() -> Result<Self, String> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = std::env::temp_dir().join(format!(
            "{PREFIX}{}-{nanos}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        // `create_dir`, not `create_dir_all`: it fails rather than reuse a folder that exists.
        std::fs::create_dir(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        Ok(ScratchDir { path })
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // Best effort: a leftover is removed by the next evaluation (see `remove_leftovers`).
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Removes the fixture copies that evaluations stopped before their end (Ctrl-C, a kill) left
/// in the system temp dir: the folders of runs whose process is gone. How many were removed.
/// Only where a process can be looked up by its id (`/proc`); elsewhere none is.
pub fn remove_leftovers() -> usize {
    remove_leftovers_in(&std::env::temp_dir())
}

fn remove_leftovers_in(temp: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(temp) else {
        return 0;
    };
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return 0;
    }
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = (name.to_str())
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .filter(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let is_folder = entry.file_type().is_ok_and(|kind| kind.is_dir());
        if is_folder && !proc.join(pid).exists() && std::fs::remove_dir_all(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Copies a folder tree. Symbolic links are refused: a fixture is plain files and folders, and
/// copying a link could pull in something from outside it.
pub(crate) fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        } else {
            return Err(std::io::Error::other(format!(
                "{} is not a plain file or folder",
                entry.path().display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copies_of_a_stopped_evaluation_are_removed_and_a_running_one_s_are_kept() {
        let temp = std::env::temp_dir().join(format!("lantern-leftovers-{}", std::process::id()));
        std::fs::create_dir_all(&temp).unwrap();
        // No process has this id: Linux gives out ids below 2^22.
        let stopped = temp.join(format!("{PREFIX}4294967-12-0"));
        std::fs::create_dir_all(stopped.join("src")).unwrap();
        std::fs::write(stopped.join("src/a.py"), "x = 1\n").unwrap();
        let running = temp.join(format!("{PREFIX}{}-12-0", std::process::id()));
        std::fs::create_dir_all(&running).unwrap();
        let other = temp.join(format!("{PREFIX}notes"));
        std::fs::create_dir_all(&other).unwrap();
        let removed = remove_leftovers_in(&temp);
        if Path::new("/proc/self").exists() {
            assert_eq!(removed, 1);
            assert!(!stopped.exists());
        }
        assert!(running.exists() && other.exists());
        std::fs::remove_dir_all(&temp).unwrap();
    }
}
