//! What the command line keeps for a workspace: saved grants, the code index, MCP servers.

use super::*;

#[test]
fn policy_lists_and_revokes_saved_grants() {
    let f = Fixture::new();
    let ws = f.ws.path().to_str().unwrap();
    // Save an "always" grant the way the app does.
    let root = std::fs::canonicalize(f.ws.path()).unwrap();
    let store =
        lantern_core::policy::PolicyStore::for_workspace(&f.home.path().join("config"), &root);
    let grant = lantern_core::policy::Grant::new(
        "write_file",
        lantern_core::policy::Scope::Glob("docs/**".into()),
        lantern_core::policy::Effect::Allow,
        lantern_core::policy::Lifetime::Always,
    )
    .unwrap();
    store.add(grant.clone()).unwrap();

    let list = json(&f.lantern(&["policy", "list", "--workspace", ws], None));
    assert_eq!(list[0]["id"], grant.id.as_str());
    // The saved grant lets a write in docs/ through without asking...
    let (code, _) = f.tool(
        "write_file",
        r#"{"path": "docs/a.md", "content": "a"}"#,
        &[],
    );
    assert_eq!(code, 0);
    // ...but not elsewhere, and not into .git even though a grant says yes.
    let (code, _) = f.tool("write_file", r#"{"path": "b.md", "content": "b"}"#, &[]);
    assert_eq!(code, 1);

    let out = f.lantern(&["policy", "revoke", "--workspace", ws, &grant.id], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        json(&f.lantern(&["policy", "list", "--workspace", ws], None)),
        serde_json::json!([])
    );
    let (code, _) = f.tool(
        "write_file",
        r#"{"path": "docs/c.md", "content": "c"}"#,
        &[],
    );
    assert_eq!(code, 1);
    let out = f.lantern(&["policy", "revoke", "--workspace", ws, &grant.id], None);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_corrupt_policy_file_is_reported_and_grants_nothing() {
    let f = Fixture::new();
    let ws = f.ws.path().to_str().unwrap();
    let root = std::fs::canonicalize(f.ws.path()).unwrap();
    let store =
        lantern_core::policy::PolicyStore::for_workspace(&f.home.path().join("config"), &root);
    std::fs::create_dir_all(store.path().parent().unwrap()).unwrap();
    std::fs::write(store.path(), "{\"grants\": [garbage").unwrap();
    let out = f.lantern(
        &[
            "tool",
            "write_file",
            "--workspace",
            ws,
            "--args",
            r#"{"path": "a", "content": "b"}"#,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("is damaged"), "{}", stderr(&out));
    assert!(!Path::new(&f.path("a")).exists());
}

#[test]
fn the_code_index_is_built_once_kept_and_answers_where_a_name_is_defined() {
    let f = Fixture::new();
    let ws = f.ws.path().to_str().unwrap();
    let built = f.lantern(&["index", "--workspace", ws, "--json"], None);
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let built: Value = serde_json::from_slice(&built.stdout).unwrap();
    // The ignored dist/bundle.js is not indexed.
    assert_eq!(
        (built["files"].as_u64(), built["parsed"].as_u64()),
        (Some(2), Some(2))
    );
    let again: Value = serde_json::from_slice(
        &f.lantern(&["index", "--workspace", ws, "--json"], None)
            .stdout,
    )
    .unwrap();
    assert_eq!(
        (again["parsed"].as_u64(), again["kept"].as_u64()),
        (Some(0), Some(2))
    );

    let (code, found) = f.tool("find_definition", r#"{"name": "parseConfig"}"#, &[]);
    assert_eq!(code, 0);
    assert_eq!(found["data"]["count"], 1);
    assert_eq!(found["data"]["matches"][0]["path"], "src/config.ts");
    assert_eq!(found["data"]["matches"][0]["line"], 1);

    let map = f.lantern(&["index", "--workspace", ws, "--map", "400"], None);
    let map = String::from_utf8(map.stdout).unwrap();
    assert!(
        map.starts_with("src/config.ts:\n  export function parseConfig() {"),
        "{map}"
    );
    let missing = f.lantern(&["index", "--workspace", "/no/such/dir"], None);
    assert_eq!(missing.status.code(), Some(2));
}

/// The real MCP servers `scripts/mcp-servers.sh` installs (`npm test` does).
fn mcp_servers() -> std::path::PathBuf {
    let dir = std::env::var_os("LANTERN_MCP_SERVERS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(std::path::PathBuf::from)
                .unwrap_or_else(|| Path::new(&std::env::var("HOME").unwrap()).join(".cache"));
            cache.join("lantern/mcp-servers")
        });
    assert!(
        dir.join("venv/bin/mcp-server-time").exists(),
        "the test MCP servers are missing in {}: run scripts/mcp-servers.sh (npm test does)",
        dir.display()
    );
    dir
}

#[test]
fn an_mcp_server_is_added_listed_called_under_the_policy_and_removed() {
    let f = Fixture::new();
    let ws = f.ws.path().to_str().unwrap();
    let time = mcp_servers().join("venv/bin/mcp-server-time");
    let definition = serde_json::json!({"command": time, "args": ["--local-timezone", "UTC"]});
    let out = f.lantern(&["mcp", "add", "time", &definition.to_string()], None);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = f.lantern(&["mcp", "list", "--json"], None);
    let listed = json(&out);
    let server = &listed["servers"][0];
    assert_eq!(server["state"]["state"], "ready", "{listed}");
    assert_eq!(server["sandbox"], "sandboxed");
    // `lantern tools` offers the server's tools beside the built-in ones.
    let specs = json(&f.lantern(&["tools"], None));
    let names: Vec<&str> = specs
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"read_file") && names.contains(&"time.get_current_time"));
    // Checked like any tool, and asked about: without a terminal, refused unless approved.
    let (code, bad) = f.tool("time.get_current_time", r#"{"timezone": 7}"#, &[]);
    assert_eq!(
        (code, bad["error_type"].as_str()),
        (1, Some("validation_failed")),
        "{bad}"
    );
    let (code, refused) = f.tool("time.get_current_time", r#"{"timezone": "UTC"}"#, &[]);
    assert_eq!(
        (code, refused["error_type"].as_str()),
        (1, Some("permission_denied"))
    );
    let (code, now) = f.tool(
        "time.get_current_time",
        r#"{"timezone": "UTC"}"#,
        &["--yes"],
    );
    assert_eq!(code, 0, "{now}");
    assert_eq!(now["data"]["structured"]["timezone"], "UTC");
    // A project's own server waits for the user's approval of its exact definition.
    let project = serde_json::json!({"mcpServers": {"clock": definition}});
    std::fs::create_dir_all(f.path(".lantern")).unwrap();
    std::fs::write(f.path(".lantern/mcp.json"), project.to_string()).unwrap();
    let clock_state = || {
        let listed = json(&f.lantern(&["mcp", "list", "--workspace", ws, "--json"], None));
        let servers = listed["servers"].as_array().unwrap();
        let clock = servers.iter().find(|s| s["name"] == "clock").unwrap();
        clock["state"]["state"].as_str().unwrap().to_string()
    };
    assert_eq!(clock_state(), "needs_approval");
    let out = f.lantern(&["mcp", "approve", "clock", "--workspace", ws], None);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(clock_state(), "ready");
    let out = f.lantern(&["mcp", "remove", "time"], None);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = f.lantern(&["mcp", "remove", "time"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no MCP server \"time\""),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_mcp_server_over_https_is_reached_when_the_system_trusts_its_certificate() {
    let f = Fixture::new();
    let certs = tempfile::tempdir().unwrap();
    let (cert, key) = (certs.path().join("cert.pem"), certs.path().join("key.pem"));
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args([
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", stderr(&made));
    // The proxy names a port for the plain server, then its own once that server listens.
    let mut proxy = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tls_proxy.py"))
        .args([&cert, &key])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = std::io::BufReader::new(proxy.stdout.take().unwrap());
    let mut running = KillOnDrop(vec![proxy]);
    let mut port = || {
        let mut line = String::new();
        std::io::BufRead::read_line(&mut said, &mut line).unwrap();
        line.trim().parse::<u16>().expect("a port from the proxy")
    };
    let plain = port();
    running.0.push(
        Command::new(mcp_servers().join("npm/node_modules/.bin/mcp-server-everything"))
            .arg("streamableHttp")
            .env("PORT", plain.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let tls = port();
    let definition = serde_json::json!({"url": format!("https://localhost:{tls}/mcp")});
    let out = f.lantern(&["mcp", "add", "web", &definition.to_string()], None);
    assert!(out.status.success(), "{}", stderr(&out));
    // A certificate nobody vouches for: the server fails, and says why.
    let listed = json(&f.lantern(&["mcp", "list", "--json"], None));
    let state = &listed["servers"][0]["state"];
    assert_eq!(state["state"], "failed", "{listed}");
    assert!(
        state.to_string().to_lowercase().contains("certificate"),
        "{listed}"
    );
    // The same server once the system's trust includes its certificate.
    let out = f.lantern_with(&["mcp", "tools"], None, &[("SSL_CERT_FILE", &cert)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let names: Vec<String> = json(&out)
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    assert!(names.contains(&"web.echo".to_string()), "{names:?}");
}

/// Child processes a test started, killed when it ends however it ends.
struct KillOnDrop(Vec<std::process::Child>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
