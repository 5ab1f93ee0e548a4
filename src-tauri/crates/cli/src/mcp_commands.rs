//! `lantern mcp …`: the MCP servers of the user and of a workspace (list, add, remove, approve,
//! their tools), and the tools a command offers when servers are configured.

use crate::{open_workspace, print_json, usage, Failure};
use clap::Subcommand;
use lantern_core::toolbox::Toolbox;
use lantern_core::tools::{ToolRegistry, ToolSpec};
use lantern_mcp::config::{
    configured, user_config_path, workspace_config_path, Approvals, ConfigFile, Origin, ServerDef,
};
use lantern_mcp::hub::{Hub, ServerState, ServerStatus};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Subcommand)]
pub(crate) enum McpAction {
    /// Start the configured servers and print each one's status, transport, sandbox and tools.
    List {
        /// Also the servers of this project (`.lantern/mcp.json`).
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add (or replace) a server from its `mcpServers` entry, e.g.
    /// '{"command": "mcp-server-time", "args": ["--local-timezone", "UTC"]}'.
    Add {
        /// The server's name: it prefixes its tools' names (`time.get_current_time`).
        name: String,
        /// The definition as JSON: `command`, `args`, `env` or `url`, `headers`; Lantern's own
        /// `network`, `trusted`, `disabled`, `timeout_s`, `paths`.
        definition: String,
        /// Add it to this project's `.lantern/mcp.json` (approved, since you wrote it) instead of
        /// your own servers.
        #[arg(long)]
        workspace: Option<PathBuf>,
    },
    /// Remove a server.
    Remove {
        name: String,
        /// Remove it from this project's `.lantern/mcp.json`.
        #[arg(long)]
        workspace: Option<PathBuf>,
    },
    /// Approve a project's server as it is defined now; it starts from then on (until its
    /// definition changes).
    Approve {
        name: String,
        #[arg(long)]
        workspace: PathBuf,
    },
    /// Print the tools the servers offer, as `lantern tools` prints specs.
    Tools {
        #[arg(long)]
        workspace: Option<PathBuf>,
    },
}

pub(crate) fn mcp(action: McpAction) -> Result<u8, Failure> {
    match action {
        McpAction::List { workspace, json } => list(workspace.as_deref(), json),
        McpAction::Add {
            name,
            definition,
            workspace,
        } => add(&name, &definition, workspace.as_deref()),
        McpAction::Remove { name, workspace } => remove(&name, workspace.as_deref()),
        McpAction::Approve { name, workspace } => approve(&name, &workspace),
        McpAction::Tools { workspace } => {
            let tools = Tools::start(workspace.as_deref())?;
            let specs: Vec<&ToolSpec> = tools
                .toolbox
                .specs()
                .iter()
                .filter(|s| s.name.contains('.'))
                .collect();
            print_json(&specs);
            Ok(0)
        }
    }
}

/// The tools of one command: the built-in ones and those of the configured MCP servers, whose
/// servers stop when this is dropped.
pub(crate) struct Tools {
    pub toolbox: Arc<Toolbox>,
    hub: Option<Hub>,
}

impl Tools {
    /// Starts the user's servers and, with `workspace`, the project's approved ones; reports
    /// each on stderr. Without any server configured, the standard tools.
    pub fn start(workspace: Option<&Path>) -> Result<Tools, Failure> {
        let root = match workspace {
            Some(dir) => Some(open_workspace(dir)?.root().to_path_buf()),
            None => None,
        };
        let (servers, problems) = configured(root.as_deref());
        for problem in &problems {
            eprintln!("lantern: MCP configuration: {problem}");
        }
        if servers.is_empty() {
            return Ok(Tools {
                toolbox: crate::toolbox(),
                hub: None,
            });
        }
        let here = match &root {
            Some(root) => root.clone(),
            None => lantern_mcp::launch::no_workspace_root().map_err(usage)?,
        };
        eprintln!("lantern: starting {} MCP server(s)…", servers.len());
        let hub = Hub::start_servers(&here, servers, problems);
        let toolbox = Arc::new(hub.toolbox(&expressible));
        for status in hub.statuses() {
            eprintln!("lantern: MCP {}", summary(&status));
        }
        Ok(Tools {
            toolbox,
            hub: Some(hub),
        })
    }
}

impl Drop for Tools {
    fn drop(&mut self) {
        if let Some(hub) = self.hub.take() {
            hub.shutdown();
        }
    }
}

/// Whether the call grammar of the local engine can hold the spec.
fn expressible(spec: &ToolSpec) -> Result<(), String> {
    #[cfg(feature = "llama")]
    return lantern_llama::grammar::expressible(spec);
    #[cfg(not(feature = "llama"))]
    {
        let _ = spec;
        Ok(())
    }
}

/// One line on a server: its state, tools or failure, and sandbox.
fn summary(status: &ServerStatus) -> String {
    let state = match &status.state {
        ServerState::Ready => format!("ready, {} tool(s)", status.tools.len()),
        ServerState::Failed(why) => format!("failed: {why}"),
        ServerState::NeedsApproval => format!(
            "not started: the project defines it and you have not approved this definition \
             (lantern mcp approve {} --workspace …)",
            status.name
        ),
        ServerState::Disabled => "disabled".to_string(),
        ServerState::Starting => "starting".to_string(),
    };
    let mut line = format!("{} ({}): {state}", status.name, status.transport);
    if status.state == ServerState::Ready {
        line.push_str(&format!("; {}", status.sandbox));
    }
    for refused in &status.refused {
        line.push_str(&format!("\n  left out {refused}"));
    }
    for drifted in &status.drifted {
        line.push_str(&format!(
            "\n  {drifted} changed its definition: its grants lapsed and it asks again"
        ));
    }
    line
}

fn list(workspace: Option<&Path>, json: bool) -> Result<u8, Failure> {
    let root = match workspace {
        Some(dir) => open_workspace(dir)?.root().to_path_buf(),
        None => lantern_mcp::launch::no_workspace_root().map_err(usage)?,
    };
    let (servers, problems) = configured(workspace.map(|_| root.as_path()));
    let hub = Hub::start_servers(&root, servers, problems.clone());
    let mut registry = ToolRegistry::standard();
    hub.extend(&mut registry, &expressible);
    let statuses = hub.statuses();
    hub.shutdown();
    if json {
        print_json(&serde_json::json!({"servers": statuses, "problems": problems}));
    } else if statuses.is_empty() {
        outln!(
            "No MCP servers. Add one with `lantern mcp add NAME '{{\"command\": …}}'` (saved in {}).",
            user_config_path().display()
        );
    } else {
        for status in &statuses {
            outln!("{}", summary(status));
            for tool in &status.tools {
                outln!("  {tool}");
            }
        }
    }
    Ok(0)
}

/// The file a command changes: the project's or the user's.
fn file_of(workspace: Option<&Path>) -> Result<(PathBuf, Option<PathBuf>), Failure> {
    match workspace {
        Some(dir) => {
            let root = open_workspace(dir)?.root().to_path_buf();
            Ok((workspace_config_path(&root), Some(root)))
        }
        None => Ok((user_config_path(), None)),
    }
}

fn add(name: &str, definition: &str, workspace: Option<&Path>) -> Result<u8, Failure> {
    lantern_mcp::config::check_server_name(name).map_err(usage)?;
    let def: ServerDef = serde_json::from_str(definition)
        .map_err(|e| usage(format!("the definition is not a server's JSON: {e}")))?;
    def.transport()
        .map_err(|e| usage(format!("server {name:?}: {e}")))?;
    let (path, root) = file_of(workspace)?;
    let mut file = ConfigFile::load(&path).map_err(usage)?;
    file.servers.insert(name.to_string(), def.clone());
    file.save(&path).map_err(usage)?;
    if let Some(root) = root {
        Approvals::approve(&root, name, &def).map_err(usage)?;
    }
    outln!("Added MCP server {name} to {}.", path.display());
    if def.trusted {
        outln!("It is trusted: it runs outside the sandbox, with your permissions.");
    }
    Ok(0)
}

fn remove(name: &str, workspace: Option<&Path>) -> Result<u8, Failure> {
    let (path, _) = file_of(workspace)?;
    let mut file = ConfigFile::load(&path).map_err(usage)?;
    if file.servers.remove(name).is_none() {
        let known: Vec<&str> = file.servers.keys().map(String::as_str).collect();
        return Err(usage(format!(
            "no MCP server {name:?} in {}; it has: {}",
            path.display(),
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        )));
    }
    file.save(&path).map_err(usage)?;
    outln!("Removed MCP server {name} from {}.", path.display());
    Ok(0)
}

fn approve(name: &str, workspace: &Path) -> Result<u8, Failure> {
    let root = open_workspace(workspace)?.root().to_path_buf();
    let (servers, _) = configured(Some(&root));
    let Some(server) = servers
        .iter()
        .find(|s| s.name == name && s.origin == Origin::Workspace)
    else {
        return Err(usage(format!(
            "the project defines no MCP server {name:?} in {}",
            workspace_config_path(&root).display()
        )));
    };
    Approvals::approve(&root, name, &server.def).map_err(usage)?;
    outln!(
        "Approved {name}: {}",
        serde_json::to_string(&server.def).unwrap_or_default()
    );
    Ok(0)
}
