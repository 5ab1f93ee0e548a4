//! The command line against hostile input: model text that tries to drive the terminal, a
//! checker that would run unsandboxed, Lantern's state planted or swapped, inputs that are far
//! too big.

use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

struct Fixture {
    ws: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("notes.py"), "print('hi')\n").unwrap();
        Fixture {
            ws,
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn ws(&self) -> &str {
        self.ws.path().to_str().unwrap()
    }

    /// Runs lantern with `env` added, feeding `stdin`, killed after a minute.
    fn lantern(&self, args: &[&str], env: &[(&str, &str)], stdin: &str) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lantern"));
        cmd.args(args)
            .env("LANTERN_HOME", self.home.path())
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        let stdin = stdin.to_string();
        std::thread::spawn(move || {
            let _ = input.write_all(stdin.as_bytes());
        });
        let pid = child.id();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(output) => output.unwrap(),
            Err(_) => {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
                panic!("lantern {args:?} hung");
            }
        }
    }

    fn script(&self, replies: &[&str]) -> String {
        let path = self.home.path().join("script.json");
        std::fs::write(&path, serde_json::to_string(replies).unwrap()).unwrap();
        format!("scripted:{}", path.display())
    }
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn model_text_reaches_the_terminal_with_its_control_characters_shown() {
    let f = Fixture::new();
    let call = serde_json::json!({
        "tool": "read_file",
        "args": {"path": "notes.py\r\u{1b}[2K"},
        "reasoning": "look\u{1b}[8m secretly",
    });
    let reply = format!("<TOOL_CALL>{call}</TOOL_CALL>");
    let model = f.script(&[
        &reply,
        "Done \u{1b}]0;title\u{7} \u{202e}txt.exe\r\u{1b}[2K",
    ]);
    let out = f.lantern(
        &[
            "run",
            "--workspace",
            f.ws(),
            "--model",
            &model,
            "--prompt",
            "read it",
        ],
        &[],
        "",
    );
    let printed = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    for raw in ['\u{1b}', '\r', '\u{7}', '\u{202e}'] {
        assert!(
            !printed.contains(raw),
            "{raw:?} reached the terminal: {printed:?}"
        );
    }
    assert!(
        printed.contains(r"Done \x1b]0;title\x07 \u{202e}txt.exe\x0d\x1b[2K"),
        "{printed}"
    );
}

#[test]
fn get_diagnostics_asks_first_when_checkers_cannot_be_sandboxed() {
    let f = Fixture::new();
    let args = [
        "tool",
        "get_diagnostics",
        "--workspace",
        f.ws(),
        "--args",
        "{}",
    ];
    let unsandboxed = f.lantern(&args, &[("LANTERN_NO_BWRAP", "1")], "");
    assert_eq!(
        unsandboxed.status.code(),
        Some(1),
        "{}",
        stderr(&unsandboxed)
    );
    assert_eq!(json(&unsandboxed)["error_type"], "permission_denied");
    let allowed = f.lantern(
        &[&args[..], &["--yes"]].concat(),
        &[("LANTERN_NO_BWRAP", "1")],
        "",
    );
    assert_eq!(allowed.status.code(), Some(0), "{}", stderr(&allowed));
    // Sandboxed, it runs as a read.
    let sandboxed = f.lantern(&args, &[], "");
    assert_eq!(sandboxed.status.code(), Some(0), "{}", stderr(&sandboxed));
    assert_eq!(json(&sandboxed)["data"]["checkers"][0]["sandboxed"], true);
}

fn policy_path(f: &Fixture) -> std::path::PathBuf {
    let root = std::fs::canonicalize(f.ws.path()).unwrap();
    let store =
        lantern_core::policy::PolicyStore::for_workspace(&f.home.path().join("config"), &root);
    std::fs::create_dir_all(store.path().parent().unwrap()).unwrap();
    store.path().to_path_buf()
}

fn write_grant(f: &Fixture) -> String {
    let root = std::fs::canonicalize(f.ws.path()).unwrap();
    format!(
        r#"{{"workspace": {root:?}, "grants": [{{"id": "g-1", "tool": "write_file", "scope": {{"kind": "tool"}}, "effect": "allow", "lifetime": "always"}}]}}"#
    )
}

/// `lantern tool write_file` of `a.txt`, with no terminal to ask on: only a grant allows it.
fn write_a_file(f: &Fixture) -> Output {
    f.lantern(
        &[
            "tool",
            "write_file",
            "--workspace",
            f.ws(),
            "--args",
            r#"{"path": "a.txt", "content": "x"}"#,
        ],
        &[],
        "",
    )
}

#[test]
fn a_fifo_or_a_link_in_place_of_the_policy_file_is_refused_not_obeyed() {
    let f = Fixture::new();
    let policy = policy_path(&f);
    let made = Command::new("mkfifo").arg(&policy).status().unwrap();
    assert!(made.success());
    let read = f.lantern(
        &[
            "tool",
            "read_file",
            "--workspace",
            f.ws(),
            "--args",
            r#"{"path": "notes.py"}"#,
        ],
        &[],
        "",
    );
    assert_eq!(read.status.code(), Some(0), "{}", stderr(&read));
    assert!(
        stderr(&read).contains("not a regular file"),
        "{}",
        stderr(&read)
    );

    // A link to a grant the model could have written into the workspace.
    std::fs::remove_file(&policy).unwrap();
    let planted = f.ws.path().join("planted.json");
    std::fs::write(&planted, write_grant(&f)).unwrap();
    std::os::unix::fs::symlink(&planted, &policy).unwrap();
    let write = write_a_file(&f);
    assert_eq!(write.status.code(), Some(1), "{}", stderr(&write));
    assert!(
        stderr(&write).contains("symbolic link"),
        "{}",
        stderr(&write)
    );
    assert!(!f.ws.path().join("a.txt").exists());
    // The same grant as a regular file is obeyed, so the refusal above is the link's.
    std::fs::remove_file(&policy).unwrap();
    std::fs::write(&policy, write_grant(&f)).unwrap();
    let write = write_a_file(&f);
    assert_eq!(write.status.code(), Some(0), "{}", stderr(&write));
}

#[test]
fn a_workspace_that_holds_lantern_state_cannot_plant_a_grant() {
    let f = Fixture::new();
    // Lantern's state inside the workspace, as with a workspace opened at $HOME.
    let home = f.ws.path().join("state");
    let out = f.lantern(
        &[
            "tool",
            "write_file",
            "--workspace",
            f.ws(),
            "--yes",
            "--args",
            r#"{"path": "state/config/policy/x.json", "content": "{}"}"#,
        ],
        &[("LANTERN_HOME", home.to_str().unwrap())],
        "",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(json(&out)["error_type"], "permission_denied");
    assert!(!home.join("config/policy/x.json").exists());
}

#[test]
fn a_huge_search_query_is_refused_in_a_few_words() {
    let f = Fixture::new();
    let query = "x".repeat(4 << 20);
    let args = serde_json::json!({"query": query}).to_string();
    let out = f.lantern(
        &["tool", "search_code", "--workspace", f.ws(), "--args", "-"],
        &[],
        &args,
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let result = json(&out);
    assert_eq!(result["error_type"], "validation_failed", "{result}");
    assert!(
        out.stdout.len() < 4096,
        "the error echoed the input: {} bytes",
        out.stdout.len()
    );
    assert!(result["error_message"]
        .as_str()
        .unwrap()
        .contains("at most 4096"));
}

#[test]
fn a_reply_streamed_in_pieces_is_one_line_of_the_transcript() {
    let f = Fixture::new();
    let answer = "word ".repeat(2000);
    let model = f.script(&[&answer]);
    let transcript = f.home.path().join("t.jsonl");
    let out = f.lantern(
        &[
            "run",
            "--workspace",
            f.ws(),
            "--model",
            &model,
            "--prompt",
            "hello",
            "--json",
            "--transcript",
            transcript.to_str().unwrap(),
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let live = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("\"text_delta\""))
        .count();
    let text = std::fs::read_to_string(&transcript).unwrap();
    let saved: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("\"text_delta\""))
        .collect();
    assert!(live > 1, "the scripted reply should stream in pieces");
    assert_eq!(saved.len(), 1, "{text}");
    let event: Value = serde_json::from_str(saved[0]).unwrap();
    assert_eq!(
        event["text"].as_str().unwrap().trim_end(),
        answer.trim_end()
    );
    assert!(Path::new(&transcript).exists());
}

/// `lantern tool … | head -c 100`: a reader that stops early ends the program quietly instead of
/// making it panic on the closed pipe.
#[test]
fn a_reader_that_stops_early_ends_the_output_quietly() {
    let f = Fixture::new();
    // Far more listing than a pipe holds, so the writer is still writing when the reader goes.
    for i in 0..1500 {
        let name = format!("file-with-a-fairly-long-name-to-fill-the-pipe-{i:04}.txt");
        std::fs::write(f.ws.path().join(name), "x").unwrap();
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_lantern"))
        .args(["tool", "list_files", "--workspace", f.ws(), "--args"])
        .arg(r#"{"max_results": 2000}"#)
        .env("LANTERN_HOME", f.home.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 100];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
}
