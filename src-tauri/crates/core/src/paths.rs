//! Where Lantern keeps its own state: never inside the workspace.
//!
//! `LANTERN_HOME`, when set, roots everything (`$LANTERN_HOME/config`, `$LANTERN_HOME/data`);
//! tests and portable installs use it. Otherwise the platform's config and data directories
//! (`~/.config/lantern`, `~/.local/share/lantern` on Linux).

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

fn home_override() -> Option<PathBuf> {
    std::env::var_os("LANTERN_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Where persisted grants live.
pub fn config_dir() -> PathBuf {
    match home_override() {
        Some(home) => home.join("config"),
        None => dirs::config_dir()
            .unwrap_or_else(private_fallback)
            .join("lantern"),
    }
}

/// Where checkpoints and transcripts live.
pub fn data_dir() -> PathBuf {
    match home_override() {
        Some(home) => home.join("data"),
        None => dirs::data_dir()
            .unwrap_or_else(private_fallback)
            .join("lantern"),
    }
}

/// Where Lantern keeps what it can make again: the sandboxed programs' private homes and
/// build caches.
pub fn cache_dir() -> PathBuf {
    match home_override() {
        Some(home) => home.join("cache"),
        None => dirs::cache_dir()
            .unwrap_or_else(private_fallback)
            .join("lantern"),
    }
}

/// Every folder of Lantern's own state. A workspace that contains one (a folder opened at
/// `$HOME`) gets it as a protected path: no tool reads or writes it, no program sees it.
pub fn state_dirs() -> Vec<PathBuf> {
    vec![config_dir(), data_dir(), cache_dir()]
}

/// Without a home folder, state goes to `/tmp/lantern-<uid>`, made private (mode 0700) and
/// used only while it is a real folder of this user's that nobody else can enter.
fn private_fallback() -> PathBuf {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let uid = rustix::process::getuid().as_raw();
    let dir = PathBuf::from(format!("/tmp/lantern-{uid}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.is_dir() && m.uid() == uid && m.permissions().mode() & 0o077 == 0 => dir,
        // Someone else made it, or made it open: refuse to keep anything there.
        _ => PathBuf::from("/nonexistent/lantern-state-unavailable"),
    }
}

/// A stable, file-name-safe key for a workspace: its folder name and a hash of its canonical
/// path, so two folders with the same name never share state.
pub fn workspace_key(root: &Path) -> String {
    let digest = Sha256::digest(root.as_os_str().as_encoded_bytes());
    let hash: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let name: String = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".to_string())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    format!("{name}-{hash}")
}

/// Where the transcripts of the workspace at `root` are kept.
pub fn transcripts_dir(root: &Path) -> PathBuf {
    data_dir().join("transcripts").join(workspace_key(root))
}

/// A fresh transcript file for a run in the workspace at `root`. The time names it for people;
/// the process id and a count within the process keep two made in the same millisecond (a
/// conversation continued right after one was started) from being the same file.
pub fn new_transcript_path(root: &Path) -> PathBuf {
    static MADE: AtomicU64 = AtomicU64::new(0);
    let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S%.3f");
    let count = MADE.fetch_add(1, Ordering::Relaxed);
    transcripts_dir(root).join(format!("{stamp}-{}-{count}.jsonl", std::process::id()))
}

/// Hex sha256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes `bytes` to `path` atomically (temp file in the same directory, fsync, rename), for
/// Lantern's own state files.
pub fn write_state_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    // Each write its own temporary file: two threads of one process (two models of an
    // evaluation) may save the same state at once.
    static WRITES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let write = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(
        ".{}.tmp-{}-{write}",
        path.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        std::fs::File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The most bytes a state file of Lantern's may have (grants, indexes, settings).
pub const MAX_STATE_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Reads one of Lantern's own state files without following a symbolic link and only if it is
/// a regular file: a link, a FIFO (which would block the read for ever) or a device is
/// refused with an error that says so, and so is a file over `MAX_STATE_FILE_BYTES`.
pub fn read_state_file(path: &Path) -> std::io::Result<Vec<u8>> {
    read_state_file_within(path, MAX_STATE_FILE_BYTES)
}

/// [`read_state_file`] for a state file that may be larger (a project's code index): one over
/// `limit` bytes is refused.
pub fn read_state_file_within(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use rustix::fs::{fstat, open, FileType, Mode, OFlags};
    use std::io::{Error, ErrorKind, Read};
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = open(path, flags, Mode::empty()).map_err(|e| {
        if e == rustix::io::Errno::LOOP {
            Error::new(
                ErrorKind::InvalidData,
                "it is a symbolic link; Lantern's state files must be regular files",
            )
        } else {
            Error::from(e)
        }
    })?;
    let stat = fstat(&fd)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(Error::new(
            ErrorKind::InvalidData,
            "it is not a regular file (a FIFO, device or folder); Lantern's state files must be regular files",
        ));
    }
    if stat.st_size as u64 > limit {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!("it is larger than {limit} bytes"),
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(limit)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcripts_made_back_to_back_are_different_files() {
        let root = Path::new("/project");
        let made: std::collections::HashSet<PathBuf> =
            (0..100).map(|_| new_transcript_path(root)).collect();
        assert_eq!(made.len(), 100);
    }

    #[test]
    fn two_threads_saving_one_state_file_at_once_leave_one_whole_copy() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("calibration.json");
        let contents = [vec![b'a'; 200_000], vec![b'b'; 300_000]];
        std::thread::scope(|scope| {
            for bytes in &contents {
                let path = &path;
                scope.spawn(move || {
                    for _ in 0..20 {
                        write_state_file(path, bytes).unwrap();
                    }
                });
            }
        });
        let saved = std::fs::read(&path).unwrap();
        assert!(contents.contains(&saved), "{} bytes, mixed", saved.len());
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "temporary files are gone");
    }
}
