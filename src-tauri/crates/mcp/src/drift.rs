//! The drift check: each tool's definition is fingerprinted when first seen; when a server later
//! changes a tool's name, description or schema, the grants given for it lapse, so the user is
//! asked again about what the tool now claims to do.

use lantern_core::paths::{config_dir, workspace_key, write_state_file};
use lantern_core::policy::PolicyStore;
use rmcp::model::Tool;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where the fingerprints seen for the workspace at `root` are kept.
fn seen_path(root: &Path) -> PathBuf {
    config_dir()
        .join("mcp-tools")
        .join(format!("{}.json", workspace_key(root)))
}

/// Records the fingerprints of `server`'s `tools`; returns the tools (offered names) whose
/// definition changed since last seen, after revoking their saved grants and the server's.
pub fn record(
    root: &Path,
    server: &str,
    tools: &[Tool],
    fingerprint: fn(&Tool) -> String,
) -> Vec<String> {
    let path = seen_path(root);
    let mut seen: BTreeMap<String, String> = lantern_core::paths::read_state_file(&path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default();
    let mut drifted = Vec::new();
    for tool in tools {
        let key = crate::specs::offered_name(server, &tool.name)
            .unwrap_or_else(|| format!("{server}.{}", tool.name));
        let now = fingerprint(tool);
        match seen.insert(key.clone(), now.clone()) {
            Some(before) if before != now => drifted.push(key),
            _ => {}
        }
    }
    if !drifted.is_empty() {
        let store = PolicyStore::for_workspace(&config_dir(), root);
        let server_wide = format!("{server}.*");
        let _ = store.revoke_where(|tool| tool == server_wide || drifted.iter().any(|d| d == tool));
    }
    if let Some(parent) = path.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    if let Ok(bytes) = serde_json::to_vec_pretty(&seen) {
        let _ = write_state_file(&path, &bytes);
    }
    drifted
}
