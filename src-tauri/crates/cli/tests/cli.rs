//! The `lantern` command line, as a user runs it: a temp workspace, a command, the JSON it
//! prints and its exit code.

use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// A temp workspace plus a private LANTERN_HOME, so tests never touch the user's own state.
struct Fixture {
    ws: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(
            ws.path().join("package.json"),
            "{\n  \"name\": \"shop\",\n  \"version\": \"2.4.1\"\n}\n",
        )
        .unwrap();
        std::fs::create_dir_all(ws.path().join("src")).unwrap();
        std::fs::write(
            ws.path().join("src/index.ts"),
            "export function main() {\n  return parseConfig();\n}\n",
        )
        .unwrap();
        std::fs::write(
            ws.path().join("src/config.ts"),
            "export function parseConfig() {\n  return {};\n}\n",
        )
        .unwrap();
        std::fs::write(ws.path().join(".gitignore"), "dist/\n").unwrap();
        std::fs::create_dir_all(ws.path().join("dist")).unwrap();
        std::fs::write(
            ws.path().join("dist/bundle.js"),
            "function parseConfig(){}\n",
        )
        .unwrap();
        Fixture {
            ws,
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, rel: &str) -> std::path::PathBuf {
        self.ws.path().join(rel)
    }

    fn lantern(&self, args: &[&str], stdin: Option<&str>) -> Output {
        self.lantern_with(args, stdin, &[])
    }

    /// `lantern` with more environment variables.
    fn lantern_with(&self, args: &[&str], stdin: Option<&str>, env: &[(&str, &Path)]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lantern"));
        cmd.args(args)
            .envs(env.iter().copied())
            .env("LANTERN_HOME", self.home.path())
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        if let Some(input) = stdin {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
        }
        child.wait_with_output().unwrap()
    }

    /// `lantern tool NAME --workspace WS --args ARGS EXTRA…`
    fn tool(&self, name: &str, args: &str, extra: &[&str]) -> (i32, Value) {
        let ws = self.ws.path().to_str().unwrap();
        let mut argv = vec!["tool", name, "--workspace", ws, "--args", args];
        argv.extend_from_slice(extra);
        let out = self.lantern(&argv, None);
        (out.status.code().unwrap(), json(&out))
    }
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn tools_lists_every_spec_with_its_schema() {
    let f = Fixture::new();
    let out = f.lantern(&["tools"], None);
    assert!(out.status.success());
    let specs = json(&out);
    let names: Vec<&str> = specs
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    for expected in [
        "read_file",
        "list_files",
        "search_code",
        "get_diagnostics",
        "write_file",
        "run_command",
        "get_current_time",
        "add_task",
        "list_tasks",
        "update_task",
    ] {
        assert!(names.contains(&expected), "{expected} in {names:?}");
    }
    let field = |name: &str, key: &str| {
        specs
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap()[key]
            .clone()
    };
    assert_eq!(field("get_diagnostics", "risk"), "read");
    assert_eq!(field("run_command", "risk"), "exec");
    // What a confirmation and a result hold, by kind, for the UI to show them by.
    assert_eq!(field("write_file", "preview_kind"), "diff");
    assert_eq!(field("write_file", "result_kind"), "write");
    assert_eq!(field("get_diagnostics", "result_kind"), "diagnostics");
    assert_eq!(field("run_command", "preview_kind"), "command");
    let read = specs
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "read_file")
        .unwrap();
    assert_eq!(read["risk"], "read");
    assert_eq!(
        read["input_schema"]["required"],
        serde_json::json!(["path"])
    );
    assert!(read["description"]
        .as_str()
        .unwrap()
        .starts_with("Read a text file"));
}

#[test]
fn prompt_renders_the_catalog_the_same_for_every_workspace_then_its_instructions() {
    let f = Fixture::new();
    let out = f.lantern(
        &["prompt", "--workspace", f.ws.path().to_str().unwrap()],
        None,
    );
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(
        "- read_file(path: string, start_line?: integer, end_line?: integer, symbol?: string): Read a text file"
    ));
    assert!(text.contains("<TOOL_CALL>"));
    // The same prompt for every project, so a model backend can reuse its cached prefix.
    let plain = f.lantern(&["prompt"], None);
    assert_eq!(String::from_utf8(plain.stdout).unwrap(), text);
    let missing = f.lantern(&["prompt", "--workspace", "/no/such/dir"], None);
    assert_eq!(missing.status.code(), Some(2));
    // A project with instructions: the same prompt, then them.
    std::fs::write(
        f.ws.path().join("AGENTS.md"),
        "Run the tests with `make check`.\n",
    )
    .unwrap();
    let out = f.lantern(
        &["prompt", "--workspace", f.ws.path().to_str().unwrap()],
        None,
    );
    let with_rules = String::from_utf8(out.stdout).unwrap();
    let rest = with_rules
        .strip_prefix(&text)
        .expect("the prompt comes first");
    assert!(rest.contains("from its file AGENTS.md"), "{rest}");
    assert!(
        rest.trim_end()
            .ends_with("Run the tests with `make check`."),
        "{rest}"
    );
}

#[test]
fn parse_reports_text_calls_and_invalid_calls() {
    let f = Fixture::new();
    let text = json(&f.lantern(&["parse"], Some("The version is 1.0.0")));
    assert_eq!(text["kind"], "text");
    assert_eq!(text["text"], "The version is 1.0.0");

    let call = json(&f.lantern(&["parse"], Some("<TOOL_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"package.json\"}, \"reasoning\": \"Need the version\"}\n</TOOL_CALL>")));
    assert_eq!(call["kind"], "tool_call");
    assert_eq!(call["tool"], "read_file");
    assert_eq!(call["args"]["path"], "package.json");
    assert_eq!(call["reasoning"], "Need the version");
    assert_eq!(call["dialect"], "native");

    let bad = json(&f.lantern(
        &["parse"],
        Some("<TOOL_CALL>\n{\"tool\": \"read_fil\", \"args\": {\"path\": \"a\"}}\n</TOOL_CALL>"),
    ));
    assert_eq!(bad["kind"], "invalid");
    assert_eq!(bad["error_type"], "validation_failed");
    let feedback = bad["feedback"].as_str().unwrap();
    assert!(
        feedback.starts_with("Unknown tool \"read_fil\". Did you mean \"read_file\"?"),
        "{feedback}"
    );
    assert!(
        feedback.contains("<TOOL_CALL>\n{\"tool\":\"read_file\""),
        "{feedback}"
    );
}

#[test]
fn read_file_succeeds_with_exit_zero() {
    let f = Fixture::new();
    let (code, r) = f.tool(
        "read_file",
        r#"{"path": "package.json", "start_line": 3, "end_line": 3}"#,
        &[],
    );
    assert_eq!(code, 0);
    assert_eq!(r["success"], true);
    assert_eq!(r["data"]["content"], "  \"version\": \"2.4.1\"\n");
    assert_eq!(r["data"]["total_lines"], 4);
    assert_eq!(r["error_type"], "none");
    assert!(r["metadata"]["timestamp"].as_i64().unwrap() > 0);
}

#[test]
fn tool_errors_exit_one_with_a_structured_result() {
    let f = Fixture::new();
    let (code, r) = f.tool("read_file", r#"{"path": "nope.txt"}"#, &[]);
    assert_eq!(code, 1);
    assert_eq!(r["error_type"], "not_found");
    let (code, r) = f.tool("read_file", r#"{"path": "../../etc/passwd"}"#, &[]);
    assert_eq!(code, 1);
    assert_eq!(r["error_type"], "permission_denied");
    assert!(!r.to_string().contains("root:x"));
    let (code, r) = f.tool("read_file", r#"{"path": 7}"#, &[]);
    assert_eq!(code, 1);
    assert_eq!(r["error_type"], "validation_failed");
}

#[test]
fn usage_errors_exit_two_in_plain_words() {
    let f = Fixture::new();
    let ws = f.ws.path().to_str().unwrap();
    let out = f.lantern(
        &["tool", "read_flie", "--workspace", ws, "--args", "{}"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown tool \"read_flie\"; the tools are: "),
        "{}",
        stderr(&out)
    );
    let out = f.lantern(
        &[
            "tool",
            "read_file",
            "--workspace",
            ws,
            "--args",
            "{path: 1}",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--args is not valid JSON"));
    let out = f.lantern(
        &[
            "tool",
            "read_file",
            "--workspace",
            "/no/such/dir",
            "--args",
            "{}",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot open workspace /no/such/dir"));
    let out = f.lantern(&["frobnicate"], None);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn args_can_come_from_stdin() {
    let f = Fixture::new();
    let ws = f.ws.path().to_str().unwrap();
    let big = "x".repeat(300_000);
    let args = serde_json::json!({"path": "big.txt", "content": big}).to_string();
    let out = f.lantern(
        &[
            "tool",
            "write_file",
            "--workspace",
            ws,
            "--args",
            "-",
            "--yes",
        ],
        Some(&args),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(f.path("big.txt")).unwrap().len(),
        300_000
    );
}

#[test]
fn writes_need_approval_and_without_a_terminal_are_refused() {
    let f = Fixture::new();
    let (code, r) = f.tool(
        "write_file",
        r#"{"path": "notes.md", "content": "hi\n"}"#,
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(r["error_type"], "permission_denied");
    assert!(r["error_message"].as_str().unwrap().contains("no terminal"));
    assert!(!f.path("notes.md").exists());
    let (code, _) = f.tool(
        "write_file",
        r#"{"path": "notes.md", "content": "hi\n"}"#,
        &["--deny"],
    );
    assert_eq!(code, 1);
    assert!(!f.path("notes.md").exists());
}

#[test]
fn commands_need_approval_every_time() {
    let f = Fixture::new();
    let args = r#"{"command": "touch ran.txt"}"#;
    let (code, r) = f.tool("run_command", args, &[]);
    assert_eq!(code, 1);
    assert_eq!(r["error_type"], "permission_denied");
    assert!(r["error_message"].as_str().unwrap().contains("no terminal"));
    assert!(!f.path("ran.txt").exists());
    let (code, r) = f.tool("run_command", args, &["--yes"]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["data"]["exit_code"], 0);
    assert!(r["data"]["sandboxed"].is_boolean());
    assert!(f.path("ran.txt").exists());
    // A yes is for that one call.
    std::fs::remove_file(f.path("ran.txt")).unwrap();
    let (code, _) = f.tool("run_command", args, &[]);
    assert_eq!(code, 1);
    assert!(!f.path("ran.txt").exists());
}

#[test]
fn write_then_undo_then_undo_the_undo() {
    let f = Fixture::new();
    let ws = f.ws.path().to_str().unwrap();
    let (code, r) = f.tool(
        "write_file",
        r#"{"path": "package.json", "content": "{}\n"}"#,
        &["--yes"],
    );
    assert_eq!(code, 0);
    assert_eq!(r["data"]["checkpoint"], "cp-1");
    assert_eq!(r["data"]["lines_removed"], 4);
    assert!(r["data"]["unified"]
        .as_str()
        .unwrap()
        .contains("-  \"version\": \"2.4.1\""));
    assert_eq!(
        std::fs::read_to_string(f.path("package.json")).unwrap(),
        "{}\n"
    );

    let list = json(&f.lantern(&["checkpoints", "--workspace", ws], None));
    assert_eq!(list.as_array().unwrap().len(), 1);

    let out = f.lantern(&["undo", "--workspace", ws], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["action"], "restored");
    assert!(std::fs::read_to_string(f.path("package.json"))
        .unwrap()
        .contains("2.4.1"));

    // The undo is itself a checkpoint: undoing it brings the agent's version back.
    let out = f.lantern(&["undo", "--workspace", ws, "cp-2"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(f.path("package.json")).unwrap(),
        "{}\n"
    );
}

#[test]
fn undo_refuses_to_destroy_later_edits() {
    let f = Fixture::new();
    let ws = f.ws.path().to_str().unwrap();
    f.tool(
        "write_file",
        r#"{"path": "notes.md", "content": "agent\n"}"#,
        &["--yes"],
    );
    std::fs::write(f.path("notes.md"), "agent\nand the user's own line\n").unwrap();
    let out = f.lantern(&["undo", "--workspace", ws], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("was changed after that write"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(f.path("notes.md")).unwrap(),
        "agent\nand the user's own line\n"
    );
}

#[test]
fn a_refused_undo_prints_the_three_versions() {
    let f = Fixture::new();
    let ws = f.ws.path().to_str().unwrap();
    std::fs::write(f.path("notes.md"), "one\ntwo\n").unwrap();
    f.tool(
        "write_file",
        r#"{"path": "notes.md", "content": "one\nTWO\n"}"#,
        &["--yes"],
    );
    std::fs::write(f.path("notes.md"), "one\nTWO\nthree\n").unwrap();
    let out = f.lantern(&["undo", "--workspace", ws], None);
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    let blobs = f.home.path().join("data/checkpoints");
    for expected in [
        "Three versions of notes.md:",
        "before the write:  8 bytes, ",
        "the write's own:   8 bytes, ",
        &format!("now:               14 bytes, {}", f.path("notes.md").canonicalize().unwrap().display()),
        "What the write changed (before → the write's own):\n--- notes.md (before)\n+++ notes.md (agent)\n",
        "-two\n+TWO\n",
        "What changed since (the write's own → now):\n--- notes.md (agent)\n+++ notes.md (now)\n",
        "+three\n",
        "Nothing was changed.",
    ] {
        assert!(text.contains(expected), "{expected:?} missing from:\n{text}");
    }
    // The two stored versions are files in Lantern's data folder that hold those contents.
    let before_line = text
        .lines()
        .find(|l| l.contains("before the write:"))
        .unwrap();
    let before_file = before_line.split(", ").nth(1).unwrap();
    assert!(Path::new(before_file).starts_with(&blobs), "{before_file}");
    assert_eq!(std::fs::read_to_string(before_file).unwrap(), "one\ntwo\n");
    assert_eq!(
        std::fs::read_to_string(f.path("notes.md")).unwrap(),
        "one\nTWO\nthree\n"
    );
}

#[test]
fn list_files_respects_gitignore_and_globs() {
    let f = Fixture::new();
    let (code, r) = f.tool("list_files", r#"{"pattern": "*.ts"}"#, &[]);
    assert_eq!(code, 0);
    assert_eq!(
        r["data"]["files"],
        serde_json::json!(["src/config.ts", "src/index.ts"])
    );
    let (_, r) = f.tool("list_files", "{}", &[]);
    let files = r["data"]["files"].as_array().unwrap();
    assert!(!files
        .iter()
        .any(|p| p.as_str().unwrap().starts_with("dist/")));
    assert!(r["data"]["skipped_ignored_or_hidden"].as_u64().unwrap() >= 1);
}

#[test]
fn search_code_finds_definitions_sorted() {
    let f = Fixture::new();
    let (code, r) = f.tool("search_code", r#"{"query": "parseConfig"}"#, &[]);
    assert_eq!(code, 0);
    let hits: Vec<(String, u64)> = r["data"]["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["path"].as_str().unwrap().to_string(),
                m["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        hits,
        vec![
            ("src/config.ts".to_string(), 1),
            ("src/index.ts".to_string(), 2)
        ]
    );
    let (_, r) = f.tool(
        "search_code",
        r#"{"query": "fn \\w+\\(", "options": {"regex": true, "glob": "*.rs"}}"#,
        &[],
    );
    assert_eq!(r["data"]["count"], 0);
    let (code, r) = f.tool(
        "search_code",
        r#"{"query": "(", "options": {"regex": true}}"#,
        &[],
    );
    assert_eq!(code, 1);
    assert!(r["error_message"]
        .as_str()
        .unwrap()
        .contains("Invalid regular expression"));
}

fn script(f: &Fixture, replies: &[&str]) -> String {
    let path = f.home.path().join("script.json");
    std::fs::write(&path, serde_json::to_string(replies).unwrap()).unwrap();
    format!("scripted:{}", path.display())
}

#[test]
fn run_streams_ndjson_events_through_a_scripted_model() {
    let f = Fixture::new();
    let ws = f.ws.path().to_str().unwrap();
    let model = script(&f, &[
        "<TOOL_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"package.json\"}, \"reasoning\": \"The version is there\"}\n</TOOL_CALL>",
        "The version is 2.4.1.",
    ]);
    let transcript = f.home.path().join("t.jsonl");
    let out = f.lantern(
        &[
            "run",
            "--workspace",
            ws,
            "--model",
            &model,
            "--prompt",
            "What version is in package.json?",
            "--json",
            "--transcript",
            transcript.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    for expected in [
        "turn_started",
        "call_parsed",
        "permission_answered",
        "tool_started",
        "tool_finished",
        "text_delta",
        "turn_finished",
    ] {
        assert!(kinds.contains(&expected), "{expected} in {kinds:?}");
    }
    let parsed = events.iter().find(|e| e["event"] == "call_parsed").unwrap();
    assert_eq!(parsed["tool"], "read_file");
    assert_eq!(parsed["dialect"], "native");
    assert_eq!(parsed["constrained"], false);
    assert!(parsed["raw"].as_str().unwrap().starts_with("<TOOL_CALL>"));
    let finished = events.last().unwrap();
    assert_eq!(finished["reason"], "answer");
    assert_eq!(finished["text"], "The version is 2.4.1.");
    let tool = events
        .iter()
        .find(|e| e["event"] == "tool_finished")
        .unwrap();
    assert_eq!(tool["success"], true);
    assert!(tool["execution_time_ms"].is_u64());
    // The transcript holds the same events, the streamed text as one event a step, and
    // replays.
    let replay = f.lantern(&["replay", transcript.to_str().unwrap(), "--json"], None);
    let replayed: Vec<Value> = String::from_utf8(replay.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let without_text = |events: &[Value]| -> Vec<Value> {
        events
            .iter()
            .filter(|e| e["event"] != "text_delta")
            .cloned()
            .collect()
    };
    assert_eq!(without_text(&replayed).len(), without_text(&events).len());
    let text = |events: &[Value]| -> String {
        events
            .iter()
            .filter(|e| e["event"] == "text_delta")
            .map(|e| e["text"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(text(&replayed), text(&events));
}

#[test]
fn run_refuses_writes_without_approval_and_reports_guards() {
    let f = Fixture::new();
    let ws = f.ws.path().to_str().unwrap();
    let write = "<TOOL_CALL>{\"tool\": \"write_file\", \"args\": {\"path\": \"a.txt\", \"content\": \"x\"}}</TOOL_CALL>";
    let model = script(&f, &[write, write, write]);
    let out = f.lantern(
        &[
            "run",
            "--workspace",
            ws,
            "--model",
            &model,
            "--prompt",
            "write",
            "--json",
            "--approve",
            "none",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(!f.path("a.txt").exists());
    let last: Value = serde_json::from_str(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(last["reason"], "repetition");

    // An automatic yes approves a write to the file the message names, and not one the model
    // chose on its own.
    let approved = |prompt: &str| {
        let model = script(&f, &[write, "Written."]);
        f.lantern(
            &[
                "run",
                "--workspace",
                ws,
                "--model",
                &model,
                "--prompt",
                prompt,
                "--approve",
                "all",
            ],
            None,
        )
    };
    let out = approved("write something");
    assert!(!f.path("a.txt").exists());
    assert!(
        stderr(&out).contains("a.txt, which the user did not name"),
        "{}",
        stderr(&out)
    );
    let out = approved("write a.txt");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(f.path("a.txt")).unwrap(), "x");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Written."));
    assert!(stderr(&out).contains("→ write_file"));
}

#[test]
fn run_without_a_usable_model_is_a_usage_error() {
    let f = Fixture::new();
    let ws = f.ws.path().to_str().unwrap();
    let out = f.lantern(
        &[
            "run",
            "--workspace",
            ws,
            "--prompt",
            "hi",
            "--model",
            "/no/such/model.gguf",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("Model file not found: /no/such/model.gguf"),
        "{}",
        stderr(&out)
    );
    let out = f.lantern(
        &[
            "run",
            "--workspace",
            ws,
            "--prompt",
            "hi",
            "--model",
            "scripted:/no/such.json",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("Cannot read the script"));
}

#[test]
fn run_with_the_openai_provider_reports_a_server_that_is_not_running() {
    let f = Fixture::new();
    let ws = f.ws.path().to_str().unwrap();
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let unreachable = format!("Could not reach the model server at {base_url}: is it running?");
    let run = |calls: &str| {
        f.lantern(
            &[
                "run",
                "--workspace",
                ws,
                "--prompt",
                "hi",
                "--json",
                "--provider",
                "openai",
                "--base-url",
                &base_url,
                "--model",
                "smollm2",
                "--server-calls",
                calls,
            ],
            None,
        )
    };
    // Asking the server which path calls take is the first request, before any turn.
    let out = run("auto");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    assert!(stderr(&out).contains(&unreachable), "{}", stderr(&out));
    // With the path chosen, nothing is sent before the first step, which reports it.
    let out = run("text");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["reason"], "error");
    assert_eq!(last["text"], unreachable);

    let out = f.lantern(
        &[
            "run",
            "--workspace",
            ws,
            "--prompt",
            "hi",
            "--provider",
            "openai",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--provider openai needs --model NAME"));

    // `probe` asks the server for its models first.
    let out = f.lantern(
        &[
            "probe",
            "--provider",
            "openai",
            "--base-url",
            &base_url,
            "--model",
            "smollm2",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains(&unreachable), "{}", stderr(&out));
}

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
fn eval_runs_each_task_on_a_fresh_fixture_and_reports_the_scores() {
    let f = Fixture::new();
    let fixtures = f.home.path().join("fixtures");
    std::fs::create_dir_all(fixtures.join("shop")).unwrap();
    std::fs::write(
        fixtures.join("shop/package.json"),
        "{\"name\": \"shop\", \"version\": \"2.4.1\"}\n",
    )
    .unwrap();
    let tasks = f.home.path().join("tasks.json");
    std::fs::write(
        &tasks,
        serde_json::json!([
            {"id": "read-version", "fixture": "shop", "prompt": "Which version is the shop?",
             "needs_tool": true, "tools": ["read_file"],
             "success": {"answer_contains_any": ["2.4.1"]}},
            {"id": "squares", "fixture": "shop", "prompt": "How much is 12 multiplied by 12?",
             "needs_tool": false, "tools": [], "success": {"answer_contains_any": ["144"]}}
        ])
        .to_string(),
    )
    .unwrap();
    let replies = [
        "<TOOL_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"package.json\"}}\n</TOOL_CALL>",
        "It is 2.4.1.",
        "It is 100.",
    ];
    let (tasks_arg, fixtures_arg) = (tasks.to_str().unwrap(), fixtures.to_str().unwrap());
    let report = f.home.path().join("report.md");
    let eval = |extra: &[&str]| {
        let model = script(&f, &replies);
        let mut argv = vec![
            "eval",
            "--tasks",
            tasks_arg,
            "--fixtures",
            fixtures_arg,
            "--model",
            &model,
        ];
        argv.extend_from_slice(extra);
        f.lantern(&argv, None)
    };

    let out = eval(&[
        "--json",
        "--tool-choice",
        "required",
        "--label",
        "scripted run",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let progress = stderr(&out);
    assert!(progress.contains("[1/2] read-version ok "), "{progress}");
    assert!(
        progress.contains("[2/2] squares FAIL (criteria not met) "),
        "{progress}"
    );
    let report_json = json(&out);
    assert_eq!(report_json["label"], "scripted run");
    let dev = &report_json["splits"][0];
    assert_eq!(dev["split"], "dev");
    assert_eq!(
        (dev["tool_tasks"].clone(), dev["tool_tasks_right"].clone()),
        (1.into(), 1.into())
    );
    assert_eq!(
        (dev["no_tool_tasks"].clone(), dev["no_tool_right"].clone()),
        (1.into(), 0.into())
    );
    let summary = &dev["runs"];
    assert_eq!(summary["tasks"], 2);
    assert_eq!(summary["call_decision_accuracy"], 1.0);
    assert_eq!(summary["success_rate"], 0.5);
    let first = &report_json["outcomes"][0];
    assert_eq!(first["first_tool"], "read_file");
    assert_eq!(first["right_tool"], true);
    assert_eq!(first["finish_reason"], "answer");
    assert_eq!(report_json["outcomes"][1]["answer"], "It is 100.");

    let out = eval(&["--out", report.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let markdown = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(markdown.starts_with("### scripted:"), "{markdown}");
    assert!(markdown.contains(", tool choice auto\n"), "{markdown}");
    assert!(
        markdown.contains("| right, model's own words | 1 of 2 (50.0 %) |"),
        "{markdown}"
    );
    eval(&["--out", report.to_str().unwrap()]);
    let saved = std::fs::read_to_string(&report).unwrap();
    // Two runs differ only in how long they took.
    let untimed = |text: &str| -> String {
        text.split(['|', '('])
            .filter(|cell| !cell.trim_end().ends_with(" s") && !cell.contains(" s)"))
            .collect::<Vec<_>>()
            .join("|")
    };
    assert_eq!(
        untimed(&saved),
        untimed(&format!("{markdown}\n{markdown}")),
        "appended"
    );

    // The runner keeps nothing: no transcripts, grants or checkpoints in LANTERN_HOME.
    assert!(!f.home.path().join("data").exists());
    assert!(!f.home.path().join("config").exists());
}

#[test]
fn eval_rejects_bad_input_before_loading_the_model() {
    let f = Fixture::new();
    let tasks = f.home.path().join("tasks.json");
    std::fs::write(
        &tasks,
        r#"[{"id": "x", "fixture": "gone", "prompt": "p", "needs_tool": false, "tools": [], "success": {"answer_contains_any": ["y"]}}]"#,
    )
    .unwrap();
    let run = |tasks: &str, choice: &str| {
        f.lantern(
            &[
                "eval",
                "--tasks",
                tasks,
                "--fixtures",
                f.home.path().to_str().unwrap(),
                "--model",
                "scripted:/no/such.json",
                "--tool-choice",
                choice,
            ],
            None,
        )
    };
    let out = run(tasks.to_str().unwrap(), "auto");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("fixture \"gone\" is not a folder"),
        "{}",
        stderr(&out)
    );
    let out = run("/no/such/tasks.json", "auto");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot read the tasks"),
        "{}",
        stderr(&out)
    );
    let out = run(tasks.to_str().unwrap(), "sometimes");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("use auto, required or none"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn run_continue_takes_up_a_saved_conversation() {
    let f = Fixture::new();
    let ws = f.ws.path().to_str().unwrap();
    let first = f.home.path().join("first.jsonl");
    let second = f.home.path().join("second.jsonl");
    let run = |replies: &[&str], prompt: &str, save: &Path, continue_from: Option<&Path>| {
        let model = script(&f, replies);
        let mut args = vec![
            "run",
            "--workspace",
            ws,
            "--model",
            &model,
            "--prompt",
            prompt,
            "--json",
            "--transcript",
            save.to_str().unwrap(),
        ];
        if let Some(path) = continue_from {
            args.extend(["--continue", path.to_str().unwrap()]);
        }
        let out = f.lantern(&args, None);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    };
    run(
        &[
            "<TOOL_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"package.json\"}}</TOOL_CALL>",
            "It is 2.4.1.",
        ],
        "What version is in package.json?",
        &first,
        None,
    );
    run(
        &[
            "<TOOL_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"src/config.ts\"}}</TOOL_CALL>",
            "It returns an empty object.",
        ],
        "And what does parseConfig return?",
        &second,
        Some(&first),
    );
    let (events, bad) = lantern_core::event::load_transcript(&second).unwrap();
    assert!(bad.is_empty());
    let messages: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            lantern_core::event::Event::TurnStarted { message, .. } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        messages,
        [
            "What version is in package.json?",
            "And what does parseConfig return?"
        ],
        "the new transcript holds the whole conversation"
    );
    let calls: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            lantern_core::event::Event::CallParsed { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        ["call-1", "call-2"],
        "new calls are numbered after the old"
    );
    let missing = f.lantern(
        &[
            "run",
            "--workspace",
            ws,
            "--prompt",
            "hi",
            "--continue",
            "/no/such.jsonl",
        ],
        None,
    );
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("cannot read the transcript /no/such.jsonl"));
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
