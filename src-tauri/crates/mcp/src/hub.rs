//! The servers of one workspace: started, listed, called, restarted and stopped.
//!
//! The hub owns a small async runtime of its own, so that the rest of Lantern (whose tools are
//! plain blocking calls) needs none: a tool call is sent to the runtime and its answer waited
//! for.

use crate::config::{configured, Approvals, Configured, Origin, ServerDef, Transport};
use crate::connection::{CallFailure, Connection, Listener, StderrTail};
use crate::results::{failure_of, result_of};
use crate::specs::{fingerprint, offered_name, spec_of};
use lantern_core::error::ToolError;
use lantern_core::model::CancelToken;
use lantern_core::tools::{RemoteOutcome, RemoteTool, ToolRegistry, ToolSource, ToolSpec};
use serde::Serialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Where a server stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "state", content = "detail")]
pub enum ServerState {
    /// Its definition is kept but it is not started.
    Disabled,
    /// A workspace's definition the user has not approved (or that changed since).
    NeedsApproval,
    Starting,
    Ready,
    /// It could not be started or listed: why, in words.
    Failed(String),
}

/// One server as the CLI and the window show it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ServerStatus {
    pub name: String,
    pub origin: Origin,
    /// `stdio` or `http`.
    pub transport: String,
    pub state: ServerState,
    /// The names its tools are offered under.
    pub tools: Vec<String>,
    pub trusted: bool,
    pub network: bool,
    /// "sandboxed", or why not.
    pub sandbox: String,
    /// Its last lines on standard error.
    pub stderr: Vec<String>,
    /// The process id of a running stdio server (of its sandbox, when sandboxed).
    pub pid: Option<u32>,
    /// Tools left out, each with the reason (a clash, a name too long, a schema refused).
    pub refused: Vec<String>,
    /// Tools whose definition changed since they were last seen: their grants lapsed.
    pub drifted: Vec<String>,
}

/// A tool offered from a server.
#[derive(Clone)]
pub struct Offered {
    pub spec: ToolSpec,
    pub tool: Arc<dyn RemoteTool>,
}

/// One configured server and its connection, if any.
pub struct Server {
    name: String,
    def: ServerDef,
    root: PathBuf,
    connection: tokio::sync::Mutex<Option<Connection>>,
    /// Its tools as last listed.
    tools: Mutex<Vec<rmcp::model::Tool>>,
    status: Mutex<ServerStatus>,
    stderr: StderrTail,
    tools_changed: Arc<AtomicBool>,
    /// Set when the server is found gone; the next call says it was restarted.
    restarted: AtomicBool,
    runtime: tokio::runtime::Handle,
}

/// Every server of a workspace.
pub struct Hub {
    runtime: tokio::runtime::Runtime,
    servers: Vec<Arc<Server>>,
    /// Problems reading the configuration files.
    pub problems: Vec<String>,
}

impl Hub {
    /// Reads the user's and the workspace's configuration and starts every enabled, approved
    /// server (in parallel, each bounded by its start timeout).
    pub fn start(root: &Path) -> Hub {
        let (servers, problems) = configured(Some(root));
        Hub::start_servers(root, servers, problems)
    }

    /// Starts `servers` for the workspace at `root`.
    pub fn start_servers(root: &Path, servers: Vec<Configured>, problems: Vec<String>) -> Hub {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("lantern-mcp")
            .enable_all()
            .build()
            .expect("a one-thread runtime starts");
        let approvals = Approvals::load(root);
        let servers: Vec<Arc<Server>> = servers
            .into_iter()
            .map(|c| Arc::new(Server::new(root, c, &approvals, runtime.handle().clone())))
            .collect();
        let starting: Vec<_> = servers
            .iter()
            .filter(|s| s.status().state == ServerState::Starting)
            .map(|s| {
                let server = Arc::clone(s);
                runtime.spawn(async move { server.connect().await })
            })
            .collect();
        wait_on(runtime.handle(), async {
            for task in starting {
                let _ = task.await;
            }
        });
        Hub {
            runtime,
            servers,
            problems,
        }
    }

    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.servers.iter().map(|s| s.status()).collect()
    }

    /// The tools of every ready server, as offered, with the names taken by `taken` (the
    /// built-in tools) and by each other refused. `expressible` says whether the call grammar
    /// can hold a spec (the local engine's converter); a tool it refuses is listed with the
    /// reason and left out.
    pub fn offered(
        &self,
        taken: &[&str],
        expressible: &dyn Fn(&ToolSpec) -> Result<(), String>,
    ) -> Vec<Offered> {
        let mut offered: Vec<Offered> = Vec::new();
        for server in &self.servers {
            if server.tools_changed.swap(false, Ordering::SeqCst) {
                let s = Arc::clone(server);
                wait_on(self.runtime.handle(), async move { s.list().await });
            }
            let tools = server
                .tools
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            let mut refused = Vec::new();
            let mut names = Vec::new();
            for tool in tools {
                let Some(name) = offered_name(&server.name, &tool.name) else {
                    refused.push(format!("{}: its name cannot be offered", tool.name));
                    continue;
                };
                if taken.contains(&name.as_str()) || offered.iter().any(|o| o.spec.name == name) {
                    refused.push(format!(
                        "{}: {name} is already offered by another tool",
                        tool.name
                    ));
                    continue;
                }
                let mut spec = spec_of(&name, &server.name, &tool, server.def.trusted);
                let status = server.status();
                spec.source = Some(ToolSource {
                    server: server.name.clone(),
                    transport: status.transport,
                    sandbox: status.sandbox,
                });
                if let Err(why) = expressible(&spec) {
                    refused.push(format!("{}: {why}", tool.name));
                    continue;
                }
                names.push(name);
                offered.push(Offered {
                    spec,
                    tool: Arc::new(McpTool {
                        server: Arc::clone(server),
                        tool: tool.name.to_string(),
                    }),
                });
            }
            let mut status = server.status.lock().unwrap_or_else(|p| p.into_inner());
            status.tools = names;
            status.refused = refused;
        }
        offered
    }

    /// Adds the tools of every ready server to `registry` (see [`Hub::offered`]).
    pub fn extend(
        &self,
        registry: &mut ToolRegistry,
        expressible: &dyn Fn(&ToolSpec) -> Result<(), String>,
    ) {
        let taken: Vec<String> = registry.names().iter().map(|n| n.to_string()).collect();
        let taken: Vec<&str> = taken.iter().map(String::as_str).collect();
        for offered in self.offered(&taken, expressible) {
            // The names were checked against the registry's: a refusal here cannot happen.
            let _ = registry.register_remote(offered.spec, offered.tool);
        }
    }

    /// The built-in tools and those of every ready server (see [`Hub::extend`]), with the
    /// system prompt made from them; the standard toolbox when no server is configured.
    pub fn toolbox(
        &self,
        expressible: &dyn Fn(&ToolSpec) -> Result<(), String>,
    ) -> lantern_core::toolbox::Toolbox {
        if self.is_empty() {
            return lantern_core::toolbox::Toolbox::standard();
        }
        let mut registry = ToolRegistry::standard();
        self.extend(&mut registry, expressible);
        lantern_core::toolbox::Toolbox::new(registry)
    }

    /// Has a server said its tool list changed since its tools were last offered?
    pub fn tools_changed(&self) -> bool {
        self.servers
            .iter()
            .any(|s| s.tools_changed.load(Ordering::SeqCst))
    }

    /// Is any server configured at all (so that starting the hub was worth it)?
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Stops every server.
    pub fn shutdown(self) {
        let servers = self.servers;
        wait_on(self.runtime.handle(), async move {
            for server in servers {
                server.stop().await;
            }
        });
        let runtime = self.runtime;
        // A runtime may not be dropped where async code runs; a thread of its own never is.
        let _ =
            std::thread::spawn(move || runtime.shutdown_timeout(std::time::Duration::from_secs(2)))
                .join();
    }
}

/// Runs `work` on the hub's runtime and waits for it on this thread, whatever this thread is:
/// the window's commands run on threads inside another runtime, where blocking on a runtime
/// directly is refused.
fn wait_on<T: Send + 'static>(
    runtime: &tokio::runtime::Handle,
    work: impl std::future::Future<Output = T> + Send + 'static,
) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    runtime.spawn(async move {
        let _ = tx.send(work.await);
    });
    rx.recv().ok()
}

impl Server {
    fn new(
        root: &Path,
        c: Configured,
        approvals: &Approvals,
        runtime: tokio::runtime::Handle,
    ) -> Self {
        let transport = match c.def.transport() {
            Ok(Transport::Stdio { .. }) | Err(_) => "stdio",
            Ok(Transport::Http { .. }) => "http",
        };
        let state = if c.def.disabled {
            ServerState::Disabled
        } else if c.origin == Origin::Workspace && !approvals.approves(&c.name, &c.def) {
            ServerState::NeedsApproval
        } else {
            ServerState::Starting
        };
        let status = ServerStatus {
            name: c.name.clone(),
            origin: c.origin,
            transport: transport.to_string(),
            state,
            tools: Vec::new(),
            trusted: c.def.trusted,
            network: c.def.network,
            sandbox: String::new(),
            stderr: Vec::new(),
            pid: None,
            refused: Vec::new(),
            drifted: Vec::new(),
        };
        Server {
            name: c.name,
            def: c.def,
            root: root.to_path_buf(),
            connection: tokio::sync::Mutex::new(None),
            status: Mutex::new(status),
            stderr: StderrTail::default(),
            tools_changed: Arc::new(AtomicBool::new(false)),
            restarted: AtomicBool::new(false),
            tools: Mutex::new(Vec::new()),
            runtime,
        }
    }

    pub fn status(&self) -> ServerStatus {
        let mut status = self
            .status
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        status.stderr = self.stderr.lines();
        status
    }

    fn set_state(&self, state: ServerState) {
        self.status.lock().unwrap_or_else(|p| p.into_inner()).state = state;
    }

    /// Starts the server and lists its tools.
    async fn connect(&self) {
        self.set_state(ServerState::Starting);
        let listener = Listener {
            tools_changed: Arc::clone(&self.tools_changed),
        };
        match Connection::open(
            &self.root,
            &self.name,
            &self.def,
            listener,
            self.stderr.clone(),
        )
        .await
        {
            Ok(connection) => {
                {
                    let mut status = self.status.lock().unwrap_or_else(|p| p.into_inner());
                    status.pid = connection.pid;
                    status.sandbox = match &connection.sandbox {
                        Ok(()) => "sandboxed".to_string(),
                        Err(why) => format!("not sandboxed: {why}"),
                    };
                }
                *self.connection.lock().await = Some(connection);
                self.list().await;
            }
            Err(why) => self.set_state(ServerState::Failed(why)),
        }
    }

    /// Lists the server's tools again (after `tools/list_changed`), noting drifted ones.
    async fn list(&self) {
        let listed = match self.connection.lock().await.as_ref() {
            Some(connection) => connection.list_tools().await,
            None => return,
        };
        match listed {
            Ok(tools) => {
                let drifted = crate::drift::record(&self.root, &self.name, &tools, fingerprint);
                let mut status = self.status.lock().unwrap_or_else(|p| p.into_inner());
                status.drifted = drifted;
                status.state = ServerState::Ready;
                drop(status);
                *self.tools.lock().unwrap_or_else(|p| p.into_inner()) = tools;
            }
            Err(why) => self.set_state(ServerState::Failed(why)),
        }
    }

    async fn stop(&self) {
        if let Some(connection) = self.connection.lock().await.take() {
            connection.close().await;
        }
    }

    /// Calls `tool`; a server found gone is started again first, once, and the result says so.
    /// The exchange records the request and the server's response as they went.
    async fn call(&self, tool: &str, args: Value, cancel: &CancelToken) -> RemoteOutcome {
        let arguments = match args {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        let request = json!({
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        });
        let (result, response) = self.exchange(tool, arguments, cancel).await;
        let status = self.status();
        RemoteOutcome {
            result,
            exchange: json!({
                "server": self.name,
                "transport": status.transport,
                "sandbox": status.sandbox,
                "request": request,
                "response": response,
            }),
        }
    }

    /// The call itself: its result for the model and the server's response as received.
    async fn exchange(
        &self,
        tool: &str,
        args: serde_json::Map<String, Value>,
        cancel: &CancelToken,
    ) -> (Result<Value, ToolError>, Value) {
        let gone = match self.connection.lock().await.as_ref() {
            Some(connection) => connection.is_gone(),
            None => true,
        };
        if gone && self.status().state != ServerState::Disabled {
            self.stop().await;
            self.restarted.store(true, Ordering::SeqCst);
            self.connect().await;
        }
        let guard = self.connection.lock().await;
        let Some(connection) = guard.as_ref() else {
            let why = match self.status().state {
                ServerState::Failed(why) => why,
                _ => "it is not running".to_string(),
            };
            let error = format!("The MCP server {} cannot be reached: {why}", self.name);
            return (
                Err(ToolError::io(error.clone())),
                json!({ "not_sent": error }),
            );
        };
        let outcome = connection
            .call(tool, args, self.def.timeout_s(), cancel)
            .await;
        drop(guard);
        let note = self.restarted.swap(false, Ordering::SeqCst).then(|| {
            format!(
                "The MCP server {} had stopped; Lantern started it again.",
                self.name
            )
        });
        match outcome {
            Ok(result) => {
                let response = serde_json::to_value(&result).unwrap_or_default();
                (result_of(&self.name, tool, result, note), response)
            }
            Err(failure) => {
                let response = json!({ "no_response": format!("{failure:?}") });
                if let CallFailure::Gone(why) = &failure {
                    self.set_state(ServerState::Failed(why.clone()));
                }
                (Err(failure_of(&self.name, tool, failure)), response)
            }
        }
    }
}

/// A tool of a server, as the registry keeps it.
struct McpTool {
    server: Arc<Server>,
    tool: String,
}

impl RemoteTool for McpTool {
    fn call(&self, args: Value, cancel: &CancelToken) -> RemoteOutcome {
        let server = Arc::clone(&self.server);
        let tool = self.tool.clone();
        let cancel = cancel.clone();
        wait_on(&self.server.runtime, async move {
            server.call(&tool, args, &cancel).await
        })
        .unwrap_or_else(|| RemoteOutcome {
            result: Err(ToolError::internal(
                "the MCP runtime stopped during the call",
            )),
            exchange: Value::Null,
        })
    }
}
