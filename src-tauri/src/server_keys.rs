//! API keys of model servers, kept apart from the settings: one JSON file next to them
//! (`server-keys.json` in Lantern's config folder, outside every workspace), readable and
//! writable by the user alone (mode 0600, also while it is being written), keyed by the
//! server's base URL. A key never goes into the settings file, a transcript, an event or a log
//! line; the window learns only whether one is saved.

use crate::error::{AppError, ErrorCode};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

pub struct ServerKeys {
    path: PathBuf,
}

impl ServerKeys {
    /// The keys file beside the settings file `config_file`.
    pub fn beside(config_file: &Path) -> Self {
        ServerKeys {
            path: config_file.with_file_name("server-keys.json"),
        }
    }

    /// The key saved for `base_url`, if any. A missing or unreadable file holds none: the
    /// server then answers 401 and the user is asked for the key again.
    pub fn get(&self, base_url: &str) -> Option<String> {
        self.all().remove(base_url)
    }

    /// Saves `key` for `base_url`, or forgets it when `key` is `None`.
    pub fn set(&self, base_url: &str, key: Option<&str>) -> Result<(), AppError> {
        let mut keys = self.all();
        match key {
            Some(key) => keys.insert(base_url.to_string(), key.to_string()),
            None => keys.remove(base_url),
        };
        let text = serde_json::to_string_pretty(&keys).expect("a map of strings serialises");
        write_private(&self.path, text.as_bytes()).map_err(|e| {
            AppError::new(
                ErrorCode::Io,
                format!(
                    "Could not save the server's API key in {}: {e}",
                    self.path.display()
                ),
            )
        })
    }

    fn all(&self) -> BTreeMap<String, String> {
        lantern_core::paths::read_state_file(&self.path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }
}

/// Writes `bytes` to `path` through a temporary file created with mode 0600, so the key is
/// never readable by others, not even for a moment, and a crash leaves the old file whole.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(".server-keys.tmp-{}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn keys_are_kept_per_server_in_a_file_only_the_user_can_read() {
        let dir = tempfile::tempdir().unwrap();
        let keys = ServerKeys::beside(&dir.path().join("app.json"));
        assert_eq!(keys.get("http://a:8080/v1"), None);
        keys.set("http://a:8080/v1", Some("sk-a")).unwrap();
        keys.set("http://b:11434/v1", Some("sk-b")).unwrap();
        assert_eq!(keys.get("http://a:8080/v1").as_deref(), Some("sk-a"));
        let file = dir.path().join("server-keys.json");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        keys.set("http://a:8080/v1", None).unwrap();
        assert_eq!(keys.get("http://a:8080/v1"), None);
        assert_eq!(keys.get("http://b:11434/v1").as_deref(), Some("sk-b"));
        assert!(
            !std::fs::read_to_string(dir.path().join("server-keys.json"))
                .unwrap()
                .contains("sk-a")
        );
    }

    #[test]
    fn a_damaged_file_holds_no_keys() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("server-keys.json"), "{not json").unwrap();
        let keys = ServerKeys::beside(&dir.path().join("app.json"));
        assert_eq!(keys.get("http://a:8080/v1"), None);
        keys.set("http://a:8080/v1", Some("sk-a")).unwrap();
        assert_eq!(keys.get("http://a:8080/v1").as_deref(), Some("sk-a"));
    }
}
