//! What the real-model tests share.

use std::path::PathBuf;

/// Where a test binary keeps the call decision's calibration between runs: measured once per
/// model and prompt, as the app keeps it for a user. Its key holds the system prompt and the
/// probes, so a change of either is measured anew; an empty cache only makes the first run
/// slower.
pub fn calibration_file(name: &str) -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join(format!("lantern/test-calibration/{name}.json"))
}
