//! MCP servers in the window: the open folder's servers (the user's and the project's approved
//! ones) run while it is open, and their tools join the session's; Settings lists them and
//! changes their definitions, which restarts them.

use super::{hold, lock, AppState, TURN_RUNNING};
use crate::error::AppError;
use lantern_core::toolbox::Toolbox;
use lantern_mcp::config::{
    configured, user_config_path, workspace_config_path, Approvals, ConfigFile, ServerDef,
};
use lantern_mcp::hub::{Hub, ServerStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

/// The MCP servers as Settings shows them.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct McpView {
    pub servers: Vec<ServerStatus>,
    /// Problems reading the configuration files.
    pub problems: Vec<String>,
    /// Where the user's own servers are defined.
    pub user_file: String,
    /// Where the open project's servers are defined, when a folder is open.
    pub workspace_file: Option<String>,
}

/// Whose file a change is made in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum McpScope {
    /// The user's own servers, for every folder.
    User,
    /// The open project's `.lantern/mcp.json`.
    Workspace,
}

/// A change Settings asks for.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum McpEdit {
    /// Adds or replaces a server from its `mcpServers` JSON entry (or a whole `mcpServers`
    /// object with one server).
    Add {
        definition: String,
    },
    Remove,
    /// Starts (`true`) or keeps stopped (`false`) a defined server.
    Enable {
        enabled: bool,
    },
    /// Runs it outside the sandbox (`true`), its read-only tools unasked.
    Trust {
        trusted: bool,
    },
    /// Approves a project's server as it is defined now.
    Approve,
}

impl AppState {
    /// Starts the servers for the folder at `root` (stopping those of before) and makes the
    /// toolbox of the built-in tools and theirs the window's.
    pub(super) fn start_mcp(&self, root: &Path) -> Arc<Toolbox> {
        self.stop_mcp();
        let hub = Hub::start(root);
        for status in hub.statuses() {
            if let lantern_mcp::hub::ServerState::Failed(why) = &status.state {
                eprintln!("lantern: MCP server {} failed: {why}", status.name);
            }
        }
        let toolbox = self.use_tools_of(&hub);
        *lock(&self.mcp) = Some(hub);
        toolbox
    }

    /// The window's tools made again, when a server said its list changed since.
    pub(super) fn changed_mcp_tools(&self) -> Option<Arc<Toolbox>> {
        let hub = lock(&self.mcp);
        let hub = hub.as_ref().filter(|hub| hub.tools_changed())?;
        Some(self.use_tools_of(hub))
    }

    /// The built-in tools and those of `hub`'s servers, made the window's toolbox.
    fn use_tools_of(&self, hub: &Hub) -> Arc<Toolbox> {
        let toolbox = Arc::new(hub.toolbox(&lantern_llama::grammar::expressible));
        *self.toolbox.write().unwrap_or_else(|e| e.into_inner()) = Arc::clone(&toolbox);
        toolbox
    }

    /// Stops every running server (the window closes, or another folder opens).
    pub fn stop_mcp(&self) {
        if let Some(hub) = lock(&self.mcp).take() {
            hub.shutdown();
        }
    }

    pub fn mcp_servers(&self) -> McpView {
        let root = self.workspace().ok().map(|w| w.root().to_path_buf());
        let (servers, problems) = match lock(&self.mcp).as_ref() {
            Some(hub) => (hub.statuses(), hub.problems.clone()),
            None => (Vec::new(), configured(root.as_deref()).1),
        };
        McpView {
            servers,
            problems,
            user_file: user_config_path().display().to_string(),
            workspace_file: root.map(|r| workspace_config_path(&r).display().to_string()),
        }
    }

    /// Applies `edit` to server `name` in the file of `scope`, then restarts the servers and
    /// gives the session the new tools.
    pub fn change_mcp(
        &self,
        name: &str,
        scope: McpScope,
        edit: McpEdit,
    ) -> Result<McpView, AppError> {
        let root = self.workspace().ok().map(|w| w.root().to_path_buf());
        let file = match (scope, &root) {
            (McpScope::User, _) => user_config_path(),
            (McpScope::Workspace, Some(root)) => workspace_config_path(root),
            (McpScope::Workspace, None) => return Err(AppError::no_workspace()),
        };
        edit_file(&file, name, edit, scope, root.as_deref())?;
        self.restart_mcp()
    }

    /// Starts the servers again (after a change, or when asked) and hands the new tools to
    /// the session.
    pub fn restart_mcp(&self) -> Result<McpView, AppError> {
        let mut session = hold(&self.session, TURN_RUNNING)?;
        let root = self.workspace()?.root().to_path_buf();
        let toolbox = self.start_mcp(&root);
        if let Some(session) = session.as_mut() {
            session.use_toolbox(toolbox);
        }
        Ok(self.mcp_servers())
    }
}

/// One change to the definitions in `file`.
fn edit_file(
    file: &Path,
    name: &str,
    edit: McpEdit,
    scope: McpScope,
    root: Option<&Path>,
) -> Result<(), AppError> {
    let invalid = |message: String| AppError::invalid(message);
    let mut config = ConfigFile::load(file).map_err(invalid)?;
    let approve = |def: &ServerDef| match (scope, root) {
        // What the user writes in Settings is theirs: approved as written.
        (McpScope::Workspace, Some(root)) => Approvals::approve(root, name, def).map_err(invalid),
        _ => Ok(()),
    };
    match edit {
        McpEdit::Add { definition } => {
            lantern_mcp::config::check_server_name(name).map_err(invalid)?;
            let def = parse_definition(&definition).map_err(invalid)?;
            def.transport()
                .map_err(|e| invalid(format!("server {name:?}: {e}")))?;
            approve(&def)?;
            config.servers.insert(name.to_string(), def);
        }
        McpEdit::Remove => {
            config
                .servers
                .remove(name)
                .ok_or_else(|| invalid(format!("no MCP server {name:?} in {}", file.display())))?;
        }
        McpEdit::Enable { enabled } => {
            let def = server_in(&mut config, name, file)?;
            def.disabled = !enabled;
            let def = def.clone();
            approve(&def)?;
        }
        McpEdit::Trust { trusted } => {
            let def = server_in(&mut config, name, file)?;
            def.trusted = trusted;
            let def = def.clone();
            approve(&def)?;
        }
        McpEdit::Approve => {
            let def = server_in(&mut config, name, file)?.clone();
            approve(&def)?;
            return Ok(());
        }
    }
    config.save(file).map_err(invalid)
}

fn server_in<'a>(
    config: &'a mut ConfigFile,
    name: &str,
    file: &Path,
) -> Result<&'a mut ServerDef, AppError> {
    config
        .servers
        .get_mut(name)
        .ok_or_else(|| AppError::invalid(format!("no MCP server {name:?} in {}", file.display())))
}

/// A server's definition as pasted: its own entry, or an `mcpServers` object (or a file) with
/// exactly one server in it.
fn parse_definition(text: &str) -> Result<ServerDef, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let entry = match value.get("mcpServers").and_then(|s| s.as_object()) {
        Some(servers) if servers.len() == 1 => servers.values().next().cloned().unwrap_or_default(),
        Some(servers) => {
            return Err(format!(
                "paste one server at a time; this holds {}",
                servers.len()
            ))
        }
        None => value,
    };
    serde_json::from_value(entry).map_err(|e| format!("not a server's definition: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pasted_definition_is_an_entry_or_an_mcp_servers_object_of_one() {
        let entry = parse_definition(r#"{"command": "srv", "args": ["-x"]}"#).unwrap();
        assert_eq!(entry.command.as_deref(), Some("srv"));
        let wrapped =
            parse_definition(r#"{"mcpServers": {"time": {"url": "http://127.0.0.1:1/mcp"}}}"#)
                .unwrap();
        assert_eq!(wrapped.url.as_deref(), Some("http://127.0.0.1:1/mcp"));
        let two =
            parse_definition(r#"{"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}}"#);
        assert!(two.unwrap_err().contains("one server at a time"));
        assert!(parse_definition("{").unwrap_err().starts_with("not JSON"));
        assert!(parse_definition(r#"{"cmd": "x"}"#)
            .unwrap_err()
            .contains("not a server"));
    }
}
