//! Real MCP servers from the package registries, started by these tests: `mcp-server-time`
//! (PyPI) over stdio, `@modelcontextprotocol/server-everything` (npm) over stdio and over
//! streamable HTTP, and a probe server on the MCP Python SDK that tries to leave its sandbox.
//! `scripts/mcp-servers.sh` installs them (`npm test` does); a missing one fails the test.

use lantern_core::sandbox::Workspace;
use lantern_core::tools::{Risk, ToolContext, ToolRegistry};
use lantern_mcp::config::{Configured, Origin, ServerDef};
use lantern_mcp::hub::{Hub, ServerState};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Lantern's state for these tests: a folder of their own, never the user's.
fn isolated_home() {
    static HOME: OnceLock<tempfile::TempDir> = OnceLock::new();
    // Set once, by the first test to get here; the others wait for it before they read it.
    HOME.get_or_init(|| {
        let home = tempfile::tempdir().unwrap();
        std::env::set_var("LANTERN_HOME", home.path());
        home
    });
}

/// The installed servers.
fn servers() -> PathBuf {
    let dir = std::env::var_os("LANTERN_MCP_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| dirs_cache().join("lantern/mcp-servers"));
    assert!(
        dir.join("venv/bin/mcp-server-time").exists()
            && dir
                .join("npm/node_modules/.bin/mcp-server-everything")
                .exists(),
        "the test MCP servers are missing in {}: run scripts/mcp-servers.sh (npm test does)",
        dir.display()
    );
    dir
}

fn dirs_cache() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var("HOME").unwrap()).join(".cache"))
}

fn stdio(command: PathBuf, args: &[&str]) -> ServerDef {
    ServerDef {
        command: Some(command.to_string_lossy().into_owned()),
        args: args.iter().map(|a| a.to_string()).collect(),
        ..Default::default()
    }
}

fn user(name: &str, def: ServerDef) -> Configured {
    Configured {
        name: name.to_string(),
        def,
        origin: Origin::User,
    }
}

/// A hub over `servers` for a fresh workspace, the registry with their tools, and the context
/// calls run in.
fn start(root: &Path, servers: Vec<Configured>) -> (Hub, ToolRegistry, ToolContext) {
    isolated_home();
    let hub = Hub::start_servers(root, servers, Vec::new());
    let registry = registry_of(&hub);
    let ctx = ToolContext::new(Workspace::open(root).unwrap(), None);
    (hub, registry, ctx)
}

fn registry_of(hub: &Hub) -> ToolRegistry {
    let mut registry = ToolRegistry::standard();
    hub.extend(&mut registry, &|_| Ok(()));
    registry
}

/// Runs a call the way the agent does: schema check, then the tool.
fn call(
    registry: &ToolRegistry,
    ctx: &ToolContext,
    tool: &str,
    args: Value,
) -> Result<Value, String> {
    let prepared = registry
        .prepare(tool, args, ctx)
        .map_err(|e| format!("{e:?}"))?;
    prepared.run(ctx).map_err(|e| e.model_text())
}

#[test]
fn the_time_server_runs_sandboxed_and_its_tools_are_offered_checked_and_called() {
    let root = tempfile::tempdir().unwrap();
    let time = stdio(
        servers().join("venv/bin/mcp-server-time"),
        &["--local-timezone", "UTC"],
    );
    let (hub, registry, ctx) = start(root.path(), vec![user("time", time)]);
    let status = &hub.statuses()[0];
    assert_eq!(status.state, ServerState::Ready, "{status:?}");
    assert_eq!(status.sandbox, "sandboxed");
    assert_eq!(status.tools, ["time.get_current_time", "time.convert_time"]);
    let spec = registry.spec("time.get_current_time").unwrap();
    // Its hints say it only reads, but the server is not trusted: it asks.
    assert_eq!(spec.risk, Risk::Remote);
    assert!(registry
        .validate("time.get_current_time", &json!({"timezone": 3}))
        .is_err());
    let now = call(
        &registry,
        &ctx,
        "time.get_current_time",
        json!({"timezone": "Asia/Tokyo"}),
    )
    .unwrap();
    assert_eq!(now["structured"]["timezone"], "Asia/Tokyo", "{now}");
    // The inspector's view: the server, and the request and response as they went.
    let source = spec.source.clone().unwrap();
    assert_eq!(
        (source.server.as_str(), source.transport.as_str()),
        ("time", "stdio")
    );
    let exchange = ctx.exchange.lock().unwrap().take().unwrap();
    assert_eq!(exchange["request"]["params"]["name"], "get_current_time");
    assert_eq!(
        exchange["request"]["params"]["arguments"]["timezone"],
        "Asia/Tokyo"
    );
    assert_eq!(
        exchange["response"]["structuredContent"]["timezone"], "Asia/Tokyo",
        "{exchange}"
    );
    // The server's own error reaches the model as a tool error.
    let error = call(
        &registry,
        &ctx,
        "time.get_current_time",
        json!({"timezone": "Not/AZone"}),
    )
    .unwrap_err();
    assert!(
        error.contains("reported an error") && error.contains("Not/AZone"),
        "{error}"
    );
    hub.shutdown();
}

#[test]
fn the_everything_server_over_stdio_follows_list_changes_errors_timeouts_stop_and_crashes() {
    let root = tempfile::tempdir().unwrap();
    let everything = ServerDef {
        timeout_s: Some(3),
        ..stdio(
            servers().join("npm/node_modules/.bin/mcp-server-everything"),
            &["stdio"],
        )
    };
    let (hub, _, ctx) = start(root.path(), vec![user("every", everything)]);
    assert_eq!(
        hub.statuses()[0].state,
        ServerState::Ready,
        "{:?}",
        hub.statuses()
    );
    // The server adds a tool once initialised and says so (`tools/list_changed`).
    let deadline = Instant::now() + Duration::from_secs(10);
    let registry = loop {
        let registry = registry_of(&hub);
        if registry.spec("every.simulate-research-query").is_some() || Instant::now() > deadline {
            break registry;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(registry.spec("every.simulate-research-query").is_some());
    // A name taken elsewhere, or a schema the call grammar cannot hold, is refused with the
    // reason shown, never dropped in silence.
    let offered = hub.offered(&["every.echo"], &|spec| match spec.name.as_str() {
        "every.get-sum" => Err("the grammar cannot hold it".into()),
        _ => Ok(()),
    });
    assert!(!offered
        .iter()
        .any(|o| ["every.echo", "every.get-sum"].contains(&o.spec.name.as_str())));
    let refused = hub.statuses()[0].refused.clone();
    assert!(
        refused
            .iter()
            .any(|r| r.starts_with("echo: every.echo is already offered")),
        "{refused:?}"
    );
    assert!(
        refused.contains(&"get-sum: the grammar cannot hold it".to_string()),
        "{refused:?}"
    );
    let sum = call(&registry, &ctx, "every.get-sum", json!({"a": 2, "b": 3})).unwrap();
    assert!(sum["text"].as_str().unwrap().contains('5'), "{sum}");
    let error = call(
        &registry,
        &ctx,
        "every.get-resource-reference",
        json!({"resourceType": "Text", "resourceId": -1}),
    )
    .unwrap_err();
    assert!(error.contains("reported an error"), "{error}");

    // A call that outlives its timeout is cancelled and says so.
    let long = json!({"duration": 3600, "steps": 1});
    let started = Instant::now();
    let error = call(
        &registry,
        &ctx,
        "every.trigger-long-running-operation",
        long.clone(),
    )
    .unwrap_err();
    assert!(error.contains("did not answer within 3 s"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(30));

    // Stop cancels a running call.
    let stop = ctx.cancel.clone();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        stop.cancel();
    });
    let error = call(
        &registry,
        &ctx,
        "every.trigger-long-running-operation",
        long.clone(),
    )
    .unwrap_err();
    stopper.join().unwrap();
    ctx.cancel.reset();
    assert!(error.contains("stopped by the user"), "{error}");

    // A server killed mid-call: the call fails, the next one starts it again, with a note.
    let pid = hub.statuses()[0].pid.expect("a stdio server has a process");
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        let pid = rustix::process::Pid::from_raw(pid as i32).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
    });
    let error = call(
        &registry,
        &ctx,
        "every.trigger-long-running-operation",
        long,
    )
    .unwrap_err();
    killer.join().unwrap();
    assert!(error.contains("stopped"), "{error}");
    let again = call(&registry, &ctx, "every.echo", json!({"message": "back"})).unwrap();
    assert!(again["text"].as_str().unwrap().contains("back"), "{again}");
    assert!(
        again["note"].as_str().unwrap().contains("started it again"),
        "{again}"
    );
    hub.shutdown();
}

#[test]
fn the_everything_server_over_streamable_http_answers_with_its_headers_sent() {
    let root = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut server =
        std::process::Command::new(servers().join("npm/node_modules/.bin/mcp-server-everything"))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
    wait_for_port(port);
    let http = ServerDef {
        url: Some(format!("http://127.0.0.1:{port}/mcp")),
        headers: [("X-Lantern-Test".to_string(), "1".to_string())].into(),
        ..Default::default()
    };
    let (hub, registry, ctx) = start(root.path(), vec![user("web", http)]);
    let status = &hub.statuses()[0];
    assert_eq!(status.state, ServerState::Ready, "{status:?}");
    assert_eq!(status.transport, "http");
    let echo = call(&registry, &ctx, "web.echo", json!({"message": "over http"})).unwrap();
    assert!(
        echo["text"].as_str().unwrap().contains("over http"),
        "{echo}"
    );
    hub.shutdown();
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn a_sandboxed_server_cannot_read_the_home_folder_or_write_outside_its_own_even_as_root() {
    let root = tempfile::tempdir().unwrap();
    copy_server(root.path(), "probe_server.py");
    let home = PathBuf::from(std::env::var("HOME").unwrap());
    let ssh = home.join(".ssh");
    let secret = ssh.join("lantern-mcp-probe");
    std::fs::create_dir_all(&ssh).unwrap();
    std::fs::write(&secret, "secret").unwrap();
    let outside = tempfile::tempdir().unwrap();
    let python = servers().join("venv/bin/python");
    let probe = |trusted: bool| ServerDef {
        trusted,
        ..stdio(python.clone(), &["probe_server.py"])
    };
    let (hub, registry, ctx) = start(
        root.path(),
        vec![user("probe", probe(false)), user("open", probe(true))],
    );
    let statuses = hub.statuses();
    assert!(
        statuses.iter().all(|s| s.state == ServerState::Ready),
        "{statuses:?}"
    );
    let read = |server: &str, path: &Path| {
        call(
            &registry,
            &ctx,
            &format!("{server}.read"),
            json!({"path": path}),
        )
    };
    let write = |server: &str, path: &Path| {
        call(
            &registry,
            &ctx,
            &format!("{server}.write"),
            json!({"path": path, "text": "x"}),
        )
    };
    // The trusted server shows the probe works: it reads the secret.
    assert_eq!(read("open", &secret).unwrap()["text"], "secret");
    // The sandboxed one: no home folder, no capabilities, its writes stay in its own folder.
    assert!(read("probe", &secret).is_err());
    let caps = call(&registry, &ctx, "probe.capabilities", json!({})).unwrap();
    assert_eq!(caps["text"], "0000000000000000", "{caps}");
    assert!(write("probe", &root.path().join("new.txt")).is_err());
    assert!(!root.path().join("new.txt").exists());
    let _ = write("probe", &outside.path().join("escaped.txt"));
    assert!(!outside.path().join("escaped.txt").exists());
    let own = lantern_mcp::launch::state_dir(root.path(), "probe").join("kept.txt");
    write("probe", &own).unwrap();
    assert!(own.exists());
    hub.shutdown();
    std::fs::remove_file(&secret).unwrap();
}

#[test]
fn a_tool_list_of_several_pages_is_followed_to_its_end() {
    let root = tempfile::tempdir().unwrap();
    copy_server(root.path(), "paged_server.py");
    let paged = stdio(servers().join("venv/bin/python"), &["paged_server.py"]);
    let (hub, registry, ctx) = start(root.path(), vec![user("paged", paged)]);
    let status = &hub.statuses()[0];
    assert_eq!(status.state, ServerState::Ready, "{status:?}");
    // Five tools, two per page.
    assert_eq!(
        status.tools,
        [
            "paged.tool0",
            "paged.tool1",
            "paged.tool2",
            "paged.tool3",
            "paged.tool4"
        ]
    );
    let last = call(&registry, &ctx, "paged.tool4", json!({})).unwrap();
    assert_eq!(last["text"], "tool4");
    hub.shutdown();
}

#[test]
fn a_workspace_server_starts_only_once_its_exact_definition_is_approved() {
    isolated_home();
    let root = tempfile::tempdir().unwrap();
    let time = stdio(servers().join("venv/bin/mcp-server-time"), &[]);
    let file = lantern_mcp::config::ConfigFile {
        servers: [("clock".to_string(), time.clone())].into(),
    };
    file.save(&lantern_mcp::config::workspace_config_path(root.path()))
        .unwrap();
    let hub = Hub::start(root.path());
    assert_eq!(hub.statuses()[0].state, ServerState::NeedsApproval);
    assert!(hub.offered(&[], &|_| Ok(())).is_empty());
    hub.shutdown();
    lantern_mcp::config::Approvals::approve(root.path(), "clock", &time).unwrap();
    let hub = Hub::start(root.path());
    assert_eq!(
        hub.statuses()[0].state,
        ServerState::Ready,
        "{:?}",
        hub.statuses()
    );
    hub.shutdown();
    // The project changes the definition: asked again.
    let changed = lantern_mcp::config::ConfigFile {
        servers: [(
            "clock".to_string(),
            ServerDef {
                args: vec!["--local-timezone".into(), "UTC".into()],
                ..time
            },
        )]
        .into(),
    };
    changed
        .save(&lantern_mcp::config::workspace_config_path(root.path()))
        .unwrap();
    let hub = Hub::start(root.path());
    assert_eq!(hub.statuses()[0].state, ServerState::NeedsApproval);
    hub.shutdown();
}

#[test]
fn a_tool_whose_definition_changes_loses_its_grants() {
    isolated_home();
    use lantern_core::policy::{Effect, Grant, Lifetime, PolicyStore, Scope};
    let root = tempfile::tempdir().unwrap();
    let tool = |description: &str| -> rmcp::model::Tool {
        serde_json::from_value(json!({"name": "lookup", "description": description,
            "inputSchema": {"type": "object"}}))
        .unwrap()
    };
    let store = PolicyStore::for_workspace(&lantern_core::paths::config_dir(), root.path());
    let fp = lantern_mcp::specs::fingerprint;
    assert!(
        lantern_mcp::drift::record(root.path(), "kb", &[tool("Look a word up.")], fp).is_empty()
    );
    for name in ["kb.lookup", "kb.*", "other.lookup"] {
        store
            .add(Grant::new(name, Scope::Tool, Effect::Allow, Lifetime::Always).unwrap())
            .unwrap();
    }
    // The same definition again: nothing lapses.
    assert!(
        lantern_mcp::drift::record(root.path(), "kb", &[tool("Look a word up.")], fp).is_empty()
    );
    assert_eq!(store.load().grants.len(), 3);
    let drifted = lantern_mcp::drift::record(root.path(), "kb", &[tool("Delete every word.")], fp);
    assert_eq!(drifted, ["kb.lookup"]);
    let left: Vec<String> = store.load().grants.into_iter().map(|g| g.tool).collect();
    assert_eq!(left, ["other.lookup"]);
}

/// Puts one of this folder's test servers in the workspace, where its sandbox can read it.
fn copy_server(root: &Path, file: &str) {
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests")
            .join(file),
        root.join(file),
    )
    .unwrap();
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the HTTP server did not open port {port}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
