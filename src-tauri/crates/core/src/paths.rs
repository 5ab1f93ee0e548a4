//! Where Lantern keeps its own state: never inside the workspace.
//!
//! `LANTERN_HOME`, when set, roots everything (`$LANTERN_HOME/config`, `$LANTERN_HOME/data`);
//! tests and portable installs use it. Otherwise the platform's config and data directories
//! (`~/.config/lantern`, `~/.local/share/lantern` on Linux).

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

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
            .unwrap_or_else(std::env::temp_dir)
            .join("lantern"),
    }
}

/// Where checkpoints and transcripts live.
pub fn data_dir() -> PathBuf {
    match home_override() {
        Some(home) => home.join("data"),
        None => dirs::data_dir()
            .unwrap_or_else(std::env::temp_dir)
            .join("lantern"),
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

/// A fresh transcript file for a run in the workspace at `root`.
pub fn new_transcript_path(root: &Path) -> PathBuf {
    let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S%.3f");
    data_dir()
        .join("transcripts")
        .join(workspace_key(root))
        .join(format!("{stamp}-{}.jsonl", std::process::id()))
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
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
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
