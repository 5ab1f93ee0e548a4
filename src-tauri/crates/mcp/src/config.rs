//! Which MCP servers to start: the `mcpServers` JSON users already have from other tools, per
//! user (Lantern's config folder) and per workspace (`.lantern/mcp.json`), and the user's
//! approval of a workspace's definitions.
//!
//! A workspace's file comes with the project, so whoever wrote the project chose its commands:
//! such a server starts only once the user approved that exact definition, and again after any
//! change to it (its fingerprint is what is approved).

use lantern_core::paths::{config_dir, sha256_hex, workspace_key, write_state_file};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The longest configuration file read.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// Seconds a tool call may take unless the server's definition says otherwise.
pub const DEFAULT_TIMEOUT_S: u64 = 60;

/// One server, as `mcpServers` defines it, with Lantern's own keys beside the usual ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ServerDef {
    /// The program of a stdio server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Where a stdio server starts (the workspace when not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The endpoint of a streamable-HTTP server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Other tools' name for the transport (`stdio`, `http`, `streamable-http`); implied by
    /// `command` or `url`, and checked against them when given.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// Lantern: the server needs the network (a stdio server has none otherwise).
    #[serde(default, skip_serializing_if = "is_false")]
    pub network: bool,
    /// Lantern: run the server outside the sandbox, and let its read-only tools run unasked.
    #[serde(default, skip_serializing_if = "is_false")]
    pub trusted: bool,
    /// Lantern: keep the definition but do not start the server.
    #[serde(default, skip_serializing_if = "is_false")]
    pub disabled: bool,
    /// Lantern: seconds one tool call may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<u64>,
    /// Lantern: more host folders the sandboxed server may read (its own install is found).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
}

fn is_false(value: &bool) -> bool {
    !value
}

/// How Lantern talks to a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    Stdio { command: String, args: Vec<String> },
    Http { url: String },
}

impl ServerDef {
    /// The transport the definition asks for, or why it names none or two.
    pub fn transport(&self) -> Result<Transport, String> {
        let declared = self.transport.as_deref().map(str::to_lowercase);
        match (&self.command, &self.url, declared.as_deref()) {
            (Some(_), Some(_), _) => Err("give either \"command\" or \"url\", not both".into()),
            (Some(command), None, None | Some("stdio")) if !command.trim().is_empty() => {
                Ok(Transport::Stdio {
                    command: command.clone(),
                    args: self.args.clone(),
                })
            }
            (None, Some(url), None | Some("http" | "streamable-http" | "streamablehttp")) => {
                if url.starts_with("http://") || url.starts_with("https://") {
                    Ok(Transport::Http { url: url.clone() })
                } else {
                    Err(format!(
                        "\"url\" must start with http:// or https://: {url:?}"
                    ))
                }
            }
            (_, _, Some("sse")) => Err(
                "the legacy SSE transport is not supported; use the server's streamable HTTP \
                 endpoint (usually /mcp)"
                    .into(),
            ),
            (_, _, Some(other)) => Err(format!("\"type\": {other:?} does not fit the definition")),
            _ => Err("a server needs \"command\" (stdio) or \"url\" (streamable HTTP)".into()),
        }
    }

    /// Seconds one call may take.
    pub fn timeout_s(&self) -> u64 {
        self.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S).max(1)
    }

    /// What the user approves: a hash of the definition as it would run.
    pub fn fingerprint(&self) -> String {
        let canonical = serde_json::to_string(self).unwrap_or_default();
        sha256_hex(canonical.as_bytes())[..16].to_string()
    }
}

/// Where a definition came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// The user's own file in Lantern's config folder.
    User,
    /// The workspace's `.lantern/mcp.json`: started only once approved.
    Workspace,
}

/// A file of `mcpServers`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigFile {
    #[serde(rename = "mcpServers", default)]
    pub servers: BTreeMap<String, ServerDef>,
}

impl ConfigFile {
    /// Reads `path`; a missing file is an empty one, a malformed one an error that says where.
    pub fn load(path: &Path) -> Result<ConfigFile, String> {
        let bytes = match lantern_core::paths::read_state_file_within(path, MAX_CONFIG_BYTES) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ConfigFile::default()),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        ConfigFile::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses the `mcpServers` JSON (a file of another tool's may hold more keys: ignored).
    pub fn parse(bytes: &[u8]) -> Result<ConfigFile, String> {
        let value: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        let servers = value.get("mcpServers").cloned().unwrap_or(Value::Null);
        if servers.is_null() {
            return Ok(ConfigFile::default());
        }
        let servers: BTreeMap<String, ServerDef> =
            serde_json::from_value(servers).map_err(|e| format!("mcpServers: {e}"))?;
        for (name, def) in &servers {
            check_server_name(name)?;
            def.transport()
                .map_err(|e| format!("server {name:?}: {e}"))?;
        }
        Ok(ConfigFile { servers })
    }

    /// Writes the file atomically.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let mut text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        text.push('\n');
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        write_state_file(path, text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// A server's name becomes the first part of its tools' names (`time.get_current_time`): it
/// must be short and plain.
pub fn check_server_name(name: &str) -> Result<(), String> {
    let plain = !name.is_empty()
        && name.len() <= 32
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match plain {
        true => Ok(()),
        false => Err(format!(
            "server name {name:?}: use 1 to 32 letters, digits, '_' or '-' (it prefixes the \
             server's tool names)"
        )),
    }
}

/// The user's own servers: `mcp.json` in Lantern's config folder.
pub fn user_config_path() -> PathBuf {
    config_dir().join("mcp.json")
}

/// A workspace's servers: `.lantern/mcp.json` in it.
pub fn workspace_config_path(root: &Path) -> PathBuf {
    root.join(".lantern").join("mcp.json")
}

/// One server to consider, with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Configured {
    pub name: String,
    pub def: ServerDef,
    pub origin: Origin,
}

/// The servers of the user's file and the workspace's, and the problems reading them. A name
/// both define is the user's: a project cannot replace a server the user set up.
pub fn configured(root: Option<&Path>) -> (Vec<Configured>, Vec<String>) {
    let mut problems = Vec::new();
    let mut servers: Vec<Configured> = Vec::new();
    let mut add = |file: Result<ConfigFile, String>, origin: Origin| match file {
        Ok(file) => {
            for (name, def) in file.servers {
                if servers.iter().any(|s| s.name == name) {
                    problems.push(format!(
                        "the workspace's server {name:?} is ignored: your own has that name"
                    ));
                    continue;
                }
                servers.push(Configured { name, def, origin });
            }
        }
        Err(e) => problems.push(e),
    };
    add(ConfigFile::load(&user_config_path()), Origin::User);
    if let Some(root) = root {
        add(
            ConfigFile::load(&workspace_config_path(root)),
            Origin::Workspace,
        );
    }
    (servers, problems)
}

/// The user's approvals of a workspace's server definitions, kept in Lantern's config folder
/// (never in the workspace, which the project controls): server name → approved fingerprint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approvals {
    #[serde(default)]
    pub servers: BTreeMap<String, String>,
}

/// Where the approvals of the workspace at `root` are kept.
pub fn approvals_path(root: &Path) -> PathBuf {
    config_dir()
        .join("mcp-approvals")
        .join(format!("{}.json", workspace_key(root)))
}

impl Approvals {
    pub fn load(root: &Path) -> Approvals {
        lantern_core::paths::read_state_file_within(&approvals_path(root), MAX_CONFIG_BYTES)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Does the user approve this definition as it is now?
    pub fn approves(&self, name: &str, def: &ServerDef) -> bool {
        self.servers.get(name) == Some(&def.fingerprint())
    }

    /// Records the approval of `def` under `name` for the workspace at `root`.
    pub fn approve(root: &Path, name: &str, def: &ServerDef) -> Result<(), String> {
        let mut approvals = Approvals::load(root);
        approvals
            .servers
            .insert(name.to_string(), def.fingerprint());
        let path = approvals_path(root);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        let text = serde_json::to_vec_pretty(&approvals).map_err(|e| e.to_string())?;
        write_state_file(&path, &text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usual_mcp_servers_shape_is_read_with_both_transports() {
        let file = ConfigFile::parse(
            br#"{"mcpServers": {
                "time": {"command": "mcp-server-time", "args": ["--local-timezone", "UTC"],
                         "env": {"TZ": "UTC"}},
                "web": {"type": "http", "url": "http://127.0.0.1:3001/mcp",
                        "headers": {"Authorization": "Bearer x"}, "network": true}
            }, "otherKey": 1}"#,
        )
        .unwrap();
        assert_eq!(
            file.servers["time"].transport().unwrap(),
            Transport::Stdio {
                command: "mcp-server-time".into(),
                args: vec!["--local-timezone".into(), "UTC".into()]
            }
        );
        assert_eq!(
            file.servers["web"].transport().unwrap(),
            Transport::Http {
                url: "http://127.0.0.1:3001/mcp".into()
            }
        );
        assert_eq!(file.servers["time"].timeout_s(), DEFAULT_TIMEOUT_S);
    }

    #[test]
    fn a_bad_definition_is_refused_with_the_server_named() {
        for (text, says) in [
            (r#"{"mcpServers": {"a": {}}}"#, "needs \"command\""),
            (
                r#"{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}"#,
                "not both",
            ),
            (r#"{"mcpServers": {"a": {"url": "ftp://h"}}}"#, "http://"),
            (
                r#"{"mcpServers": {"a": {"type": "sse", "url": "http://h/sse"}}}"#,
                "SSE",
            ),
            (
                r#"{"mcpServers": {"a b": {"command": "x"}}}"#,
                "server name",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "comand": 1}}}"#,
                "unknown field",
            ),
            ("{", "EOF"),
        ] {
            let error = ConfigFile::parse(text.as_bytes()).unwrap_err();
            assert!(error.contains(says), "{text}: {error}");
        }
    }

    #[test]
    fn an_approval_holds_only_for_the_definition_approved() {
        let root = tempfile::tempdir().unwrap();
        let def = ServerDef {
            command: Some("server".into()),
            ..Default::default()
        };
        assert!(!Approvals::load(root.path()).approves("s", &def));
        Approvals::approve(root.path(), "s", &def).unwrap();
        assert!(Approvals::load(root.path()).approves("s", &def));
        let changed = ServerDef {
            args: vec!["--more".into()],
            ..def.clone()
        };
        assert!(!Approvals::load(root.path()).approves("s", &changed));
        std::fs::remove_file(approvals_path(root.path())).unwrap();
    }
}
