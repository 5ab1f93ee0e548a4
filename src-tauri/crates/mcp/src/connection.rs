//! One live connection to an MCP server, on the official SDK (`rmcp`): started over stdio (the
//! sandboxed command of [`crate::launch`]) or streamable HTTP, initialised, its tools listed
//! (every page), its calls bounded by a timeout and a cancel flag.

use crate::config::{ServerDef, Transport};
use crate::launch;
use lantern_core::model::CancelToken;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    PaginatedRequestParams, Tool,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt};
use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a server may take to start and answer `initialize`.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Lines of a server's standard error kept to show when it fails.
const STDERR_LINES: usize = 20;

/// Pages of a tool list followed at most (a server that never ends its list is cut off).
const MAX_PAGES: usize = 50;

/// What Lantern tells a server about itself, and what it hears from it unasked.
#[derive(Clone)]
pub struct Listener {
    /// Set when the server says its tool list changed.
    pub tools_changed: Arc<AtomicBool>,
}

impl ClientHandler for Listener {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.store(true, Ordering::SeqCst);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("lantern", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// The last lines a server wrote to its standard error.
#[derive(Clone, Default)]
pub struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    fn push(&self, line: String) {
        let mut lines = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if lines.len() == STDERR_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    pub fn lines(&self) -> Vec<String> {
        let lines = self.0.lock().unwrap_or_else(|p| p.into_inner());
        lines.iter().cloned().collect()
    }
}

/// A server Lantern is connected to.
pub struct Connection {
    service: RunningService<RoleClient, Listener>,
    /// Set when a stdio server's standard error closes: it has exited. The SDK notices only
    /// after a drain of some seconds; a call waiting on a dead server must not.
    exited: Arc<AtomicBool>,
    /// The process id of a stdio server (of bubblewrap, when sandboxed).
    pub pid: Option<u32>,
    /// `Ok` when the server runs in the sandbox; why not otherwise (trusted, HTTP, no
    /// bubblewrap).
    pub sandbox: Result<(), String>,
}

/// Why a call did not give a result.
#[derive(Debug)]
pub enum CallFailure {
    Timeout(u64),
    Cancelled,
    /// The server went away (it exited or the connection broke).
    Gone(String),
    /// The server answered with a protocol error.
    Refused(String),
}

impl Connection {
    /// Starts (stdio) or reaches (HTTP) server `name` and initialises it.
    pub async fn open(
        root: &Path,
        name: &str,
        def: &ServerDef,
        listener: Listener,
        stderr: StderrTail,
    ) -> Result<Connection, String> {
        match def.transport()? {
            Transport::Stdio { command, args } => {
                open_stdio(root, name, def, &command, &args, listener, stderr).await
            }
            Transport::Http { url } => open_http(&url, def, listener).await,
        }
    }

    /// Every tool the server offers, following the list's pages.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, String> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor.take());
            let page = tokio::time::timeout(START_TIMEOUT, self.service.list_tools(Some(params)))
                .await
                .map_err(|_| "the server did not list its tools in time".to_string())?
                .map_err(|e| format!("listing the tools failed: {e}"))?;
            tools.extend(page.tools);
            match page.next_cursor {
                Some(next) if !next.is_empty() => cursor = Some(next),
                _ => return Ok(tools),
            }
        }
        Err(format!("the tool list did not end after {MAX_PAGES} pages"))
    }

    /// Calls `tool` with `args`, giving up after `timeout_s` or when `cancel` is set (the
    /// server is told the call is cancelled either way).
    pub async fn call(
        &self,
        tool: &str,
        args: serde_json::Map<String, serde_json::Value>,
        timeout_s: u64,
        cancel: &CancelToken,
    ) -> Result<CallToolResult, CallFailure> {
        if self.is_gone() {
            return Err(CallFailure::Gone("the server is not running".into()));
        }
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
        let call = self.service.call_tool(params);
        let stopped = async {
            while !cancel.is_cancelled() && !self.exited.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        // Dropping the call's future (on a timeout or Stop) tells the server it is cancelled.
        tokio::select! {
            result = call => result.map_err(|e| match e {
                rmcp::ServiceError::McpError(error) => CallFailure::Refused(error.message.to_string()),
                rmcp::ServiceError::TransportClosed => CallFailure::Gone("the server stopped".into()),
                other => CallFailure::Gone(other.to_string()),
            }),
            _ = tokio::time::sleep(Duration::from_secs(timeout_s)) => Err(CallFailure::Timeout(timeout_s)),
            _ = stopped => match self.exited.load(Ordering::SeqCst) {
                true => Err(CallFailure::Gone("the server exited".into())),
                false => Err(CallFailure::Cancelled),
            },
        }
    }

    /// Has the connection ended (the server exited or the link broke)?
    pub fn is_gone(&self) -> bool {
        self.exited.load(Ordering::SeqCst) || self.service.is_transport_closed()
    }

    /// Ends the connection: stdin closed, then the process stopped (a bounded wait).
    pub async fn close(mut self) {
        let _ = self
            .service
            .close_with_timeout(Duration::from_secs(5))
            .await;
        if let Some(pid) = self.pid {
            // A server busy with a call ignores the end of its input: stop it (and the
            // sandbox with it: the sandbox's processes die with bubblewrap), and its group.
            if let Some(pid) = rustix_pid(pid) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
        }
    }
}

fn rustix_pid(pid: u32) -> Option<rustix::process::Pid> {
    rustix::process::Pid::from_raw(pid as i32)
}

async fn open_stdio(
    root: &Path,
    name: &str,
    def: &ServerDef,
    command: &str,
    args: &[String],
    listener: Listener,
    stderr: StderrTail,
) -> Result<Connection, String> {
    let started = launch::stdio_command(root, name, def, command, args)?;
    let mut std_command = std::process::Command::new(&started.program);
    std_command
        .args(&started.args)
        .current_dir(&started.cwd)
        .env_clear()
        .envs(started.env.iter().map(|(k, v)| (k, v)));
    if !def.trusted {
        lantern_core::exec::confine(&mut std_command, server_limits());
    }
    let mut command = tokio::process::Command::from(std_command);
    command.kill_on_drop(true);
    let (process, err) = rmcp::transport::TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start {}: {e}", started.program.display()))?;
    let pid = process.id();
    let exited = Arc::new(AtomicBool::new(false));
    if let Some(err) = err {
        let tail = stderr.clone();
        let ended = Arc::clone(&exited);
        tokio::spawn(async move {
            use tokio::io::AsyncBufReadExt;
            let mut lines = tokio::io::BufReader::new(err).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tail.push(line);
            }
            ended.store(true, Ordering::SeqCst);
        });
    }
    let service = tokio::time::timeout(START_TIMEOUT, listener.serve(process))
        .await
        .map_err(|_| failed_start("did not answer initialize in time", &stderr))?
        .map_err(|e| failed_start(&e.to_string(), &stderr))?;
    Ok(Connection {
        service,
        exited,
        pid,
        sandbox: started.sandbox,
    })
}

/// A failed start in words, with the server's last words on standard error.
fn failed_start(why: &str, stderr: &StderrTail) -> String {
    // The reader may still be taking the last lines in.
    std::thread::sleep(Duration::from_millis(100));
    let lines = stderr.lines();
    match lines.is_empty() {
        true => format!("the server {why}"),
        false => format!("the server {why}; it said: {}", lines.join(" | ")),
    }
}

/// Why a request to `url` fails at all (a certificate nobody vouches for, a refused
/// connection), which rmcp's error leaves out; `None` when a plain request gets through.
async fn why_unreachable(url: &str) -> Option<String> {
    let client = reqwest::Client::builder()
        .timeout(START_TIMEOUT)
        .build()
        .ok()?;
    let error = client.get(url).send().await.err()?;
    Some(with_causes(&error))
}

/// An error with the causes under it, which say what went wrong where the error itself says
/// only that a request failed.
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        let said = inner.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = inner.source();
    }
    text
}

async fn open_http(url: &str, def: &ServerDef, listener: Listener) -> Result<Connection, String> {
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use rmcp::transport::StreamableHttpClientTransport;
    let mut headers = std::collections::HashMap::new();
    for (key, value) in &def.headers {
        let name = http::HeaderName::from_bytes(key.as_bytes())
            .map_err(|_| format!("header name {key:?} is not valid"))?;
        let value = http::HeaderValue::from_str(value)
            .map_err(|_| format!("the value of header {key:?} is not valid"))?;
        headers.insert(name, value);
    }
    let config =
        StreamableHttpClientTransportConfig::with_uri(url.to_string()).custom_headers(headers);
    let transport = StreamableHttpClientTransport::from_config(config);
    let service = match tokio::time::timeout(START_TIMEOUT, listener.serve(transport))
        .await
        .map_err(|_| format!("{url} did not answer initialize in time"))?
    {
        Ok(service) => service,
        Err(error) => {
            let why = why_unreachable(url)
                .await
                .unwrap_or_else(|| error.to_string());
            return Err(format!("{url}: {why}"));
        }
    };
    Ok(Connection {
        service,
        exited: Arc::new(AtomicBool::new(false)),
        pid: None,
        sandbox: Err("reached over HTTP: it runs wherever its URL points".into()),
    })
}

/// What a server process may use: the limits of commands, without their CPU-time bound
/// (a server lives as long as the session).
fn server_limits() -> lantern_core::exec::Limits {
    lantern_core::exec::Limits {
        cpu_seconds: 24 * 3600,
        ..Default::default()
    }
}
