//! `get_diagnostics` across edits and `run_command`, through a real `Session` on temp copies of
//! the fixtures: the cache and its stale → fresh cycle, the agent fixing a seeded bug, command
//! exit codes, time limits, output bounds, grants and the sandbox.

use lantern_core::agent::{
    Answer, CallOutcome, Confirmer, FixedAnswer, PermissionRequest, Session,
};
use lantern_core::event::{Event, FinishedReason};
use lantern_core::model::{CancelToken, ScriptedModel};
use lantern_core::policy::Scope;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod common;
use common::session;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &repo().join("tests/fixtures/diagnostics").join(name),
        dir.path(),
    );
    dir
}

fn need(program: &str, install: &str) {
    let path = std::env::var("PATH").unwrap_or_default();
    assert!(
        path.split(':').any(|d| Path::new(d).join(program).is_file()),
        "{program} is not installed, so this test cannot run: {install} (scripts/setup.sh --tests does it)"
    );
}

/// Runs one call by hand, allowing it if asked; the result's data (panics on failure).
fn call(s: &mut Session, tool: &str, args: Value) -> Value {
    let outcome = s.run_call(tool, args, &mut FixedAnswer(Answer::AllowOnce), &mut |_| {});
    let result = outcome.into_result();
    assert!(result.success, "{result:?}");
    result.data.unwrap()
}

fn codes(data: &Value) -> Vec<(String, u64, String)> {
    data["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["path"].as_str().unwrap().to_string(),
                d["line"].as_u64().unwrap(),
                d["code"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn status(data: &Value) -> (String, String) {
    let c = &data["checkers"][0];
    (
        c["status"].as_str().unwrap().to_string(),
        c["freshness"].as_str().unwrap().to_string(),
    )
}

#[test]
fn results_are_cached_until_a_write_and_stale_when_a_check_cannot_finish() {
    need("cargo", "install Rust with rustup");
    let ws = fixture("rust");
    let mut s = session(ws.path());
    let first = call(&mut s, "get_diagnostics", json!({}));
    assert_eq!(status(&first), ("ran".into(), "fresh".into()));
    assert_eq!(first["errors"], 1);

    // Nothing changed: the kept result, still fresh.
    let again = call(&mut s, "get_diagnostics", json!({}));
    assert_eq!(status(&again), ("cached".into(), "fresh".into()));
    assert_eq!(codes(&again), codes(&first));

    // The type error fixed, a new unused variable added: the next call checks again and can
    // report only what is new.
    let fixed = "/// The total of some prices, in cents.\npub fn total(prices: &[u32]) -> u32 {\n    let discount = 5;\n    prices.iter().sum()\n}\n\n/// How the total is shown.\npub fn label(prices: &[u32]) -> String {\n    let spare = 1;\n    let cents: u32 = total(prices);\n    format!(\"{cents} cents\")\n}\n";
    call(
        &mut s,
        "write_file",
        json!({"path": "src/lib.rs", "content": fixed}),
    );
    let after = call(&mut s, "get_diagnostics", json!({"only_new": true}));
    assert_eq!(status(&after), ("ran".into(), "fresh".into()));
    assert_eq!(
        codes(&after),
        vec![("src/lib.rs".to_string(), 9, "unused_variables".to_string())],
        "{after:#}"
    );
    assert_eq!(after["checkers"][0]["resolved_since_last"], 1);
    assert_eq!(after["errors"], 0);

    // A build script that never ends: the check is stopped, and the last result is shown,
    // labelled stale.
    call(
        &mut s,
        "write_file",
        json!({"path": "build.rs", "content": "fn main() { std::thread::sleep(std::time::Duration::from_secs(120)); }\n"}),
    );
    let started = Instant::now();
    let stuck = call(&mut s, "get_diagnostics", json!({"timeout_s": 2}));
    // Stopped, not waited for: the build script sleeps 120 s.
    assert!(started.elapsed() < Duration::from_secs(120));
    assert_eq!(status(&stuck), ("timed_out".into(), "stale".into()));
    assert!(lantern_core::diagnostics::a_check_ran_out_of_time(&stuck));
    assert!(!lantern_core::diagnostics::a_check_ran_out_of_time(&first));
    assert_eq!(stuck["fresh"], false);
    assert_eq!(stuck["warnings"], 2, "{stuck:#}");
    assert!(stuck["summary"].as_str().unwrap().contains("stale"));

    // Without it, fresh again.
    std::fs::remove_file(ws.path().join("build.rs")).unwrap();
    let clean = call(&mut s, "get_diagnostics", json!({}));
    assert_eq!(status(&clean).1, "fresh");
}

fn tool_call(tool: &str, args: Value) -> String {
    let body = json!({"tool": tool, "args": args, "reasoning": "fix the bug"});
    format!("<TOOL_CALL>\n{body}\n</TOOL_CALL>")
}

#[test]
fn the_agent_fixes_a_seeded_bug_until_the_checker_is_clean() {
    need("cargo", "install Rust with rustup");
    let ws = fixture("rust");
    let mut s = session(ws.path());
    let fixed = "/// The total of some prices, in cents.\npub fn total(prices: &[u32]) -> u32 {\n    prices.iter().sum()\n}\n\n/// How the total is shown.\npub fn label(prices: &[u32]) -> String {\n    let cents: u32 = total(prices);\n    format!(\"{cents} cents\")\n}\n";
    let mut model = ScriptedModel::new(vec![
        tool_call("get_diagnostics", json!({})),
        tool_call("read_file", json!({"path": "src/lib.rs"})),
        tool_call(
            "write_file",
            json!({"path": "src/lib.rs", "content": fixed}),
        ),
        tool_call("get_diagnostics", json!({"file": "src/lib.rs"})),
        "Fixed: label now keeps the total as a number, and the unused discount is gone.".into(),
    ]);
    let mut events = Vec::new();
    s.send(
        "Fix the errors in this crate.",
        &mut model,
        &mut FixedAnswer(Answer::AllowOnce),
        &mut |e| events.push(e.clone()),
        &CancelToken::new(),
    );
    let results: Vec<(String, Value)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolFinished { tool, result, .. } => {
                Some((tool.clone(), result.data.clone().unwrap_or(Value::Null)))
            }
            _ => None,
        })
        .collect();
    let tools: Vec<&str> = results.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        tools,
        [
            "get_diagnostics",
            "read_file",
            "write_file",
            "get_diagnostics"
        ]
    );
    assert_eq!(results[0].1["errors"], 1);
    let last = &results[3].1;
    assert_eq!(last["errors"], 0, "{last:#}");
    assert_eq!(last["warnings"], 0, "{last:#}");
    assert_eq!(last["fresh"], true);
    assert!(matches!(
        events.last(),
        Some(Event::TurnFinished {
            reason: FinishedReason::Answer,
            ..
        })
    ));
}

/// Records what it was asked and answers from a list.
struct Recorder {
    answers: Vec<Answer>,
    asked: Vec<PermissionRequest>,
}

impl Confirmer for Recorder {
    fn confirm(&mut self, request: &PermissionRequest) -> Answer {
        self.asked.push(request.clone());
        if self.answers.is_empty() {
            Answer::Deny { message: None }
        } else {
            self.answers.remove(0)
        }
    }
}

#[test]
fn commands_report_exit_codes_and_bounded_output() {
    let ws = tempfile::tempdir().unwrap();
    let mut s = session(ws.path());
    let data = call(
        &mut s,
        "run_command",
        json!({"command": "echo out; echo err >&2; exit 3"}),
    );
    assert_eq!(data["exit_code"], 3);
    assert_eq!(data["stdout"], "out\n");
    assert_eq!(data["stderr"], "err\n");
    assert_eq!(data["timed_out"], false);
    // The workspace is the working folder.
    std::fs::write(ws.path().join("marker.txt"), "here").unwrap();
    let data = call(&mut s, "run_command", json!({"command": "cat marker.txt"}));
    assert_eq!(data["stdout"], "here");
    // Long output keeps its head and tail; the rest is counted.
    let data = call(&mut s, "run_command", json!({"command": "seq 1 100000"}));
    let out = data["stdout"].as_str().unwrap();
    assert!(out.starts_with("1\n2\n3\n"), "{out}");
    assert!(out.ends_with("99999\n100000\n"));
    assert!(data["stdout_omitted_bytes"].as_u64().unwrap() > 500_000);
    assert!(out.len() < 9 * 1024);
}

#[test]
fn a_check_of_a_file_no_checker_reads_says_so_and_not_that_the_project_has_no_code() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("app.py"), "def main():\n    return 1\n").unwrap();
    std::fs::write(ws.path().join("NOTES.rst"), "Notes\n=====\n").unwrap();
    let data = call(
        &mut session(ws.path()),
        "get_diagnostics",
        json!({"file": "NOTES.rst"}),
    );
    let summary = data["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("No checker reads NOTES.rst:"),
        "{summary}"
    );
    assert!(!summary.contains("found here"), "{summary}");
    assert_eq!(data["diagnostics"], json!([]));
}

#[test]
fn a_command_or_a_check_reads_the_same_to_the_model_however_long_it_took() {
    // The model reads a result's data: a number of milliseconds in it would change its answer
    // with the machine's load. How long a call took is the call's metadata.
    let ws = tempfile::tempdir().unwrap();
    let mut s = session(ws.path());
    let quick = call(&mut s, "run_command", json!({"command": "echo hi"}));
    let slow = call(
        &mut s,
        "run_command",
        json!({"command": "sleep 0.3; echo hi"}),
    );
    assert_eq!(quick["stdout"], slow["stdout"]);
    let without_command = |mut data: Value| {
        data["command"] = Value::Null;
        data
    };
    assert_eq!(without_command(quick), without_command(slow));

    let broken = "def f(:\n    return 1\n";
    let checked: Vec<Value> = (0..2)
        .map(|_| {
            let ws = tempfile::tempdir().unwrap();
            std::fs::write(ws.path().join("app.py"), broken).unwrap();
            call(&mut session(ws.path()), "get_diagnostics", json!({}))
        })
        .collect();
    assert!(checked[0]["errors"].as_u64() > Some(0), "{:#}", checked[0]);
    assert_eq!(checked[0], checked[1]);
}

#[test]
fn a_timeout_kills_the_command_and_everything_it_started() {
    let ws = tempfile::tempdir().unwrap();
    let mut s = session(ws.path());
    let started = Instant::now();
    let data = call(
        &mut s,
        "run_command",
        json!({"command": "(sleep 3; touch late.txt) & sleep 60", "timeout_s": 1}),
    );
    // Killed, not waited for: the command sleeps 60 s.
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(data["timed_out"], true);
    assert_eq!(data["exit_code"], Value::Null);
    std::thread::sleep(Duration::from_secs(4));
    assert!(
        !ws.path().join("late.txt").exists(),
        "a child outlived the timeout"
    );
}

#[test]
fn a_command_grant_covers_only_that_exact_command() {
    let ws = tempfile::tempdir().unwrap();
    let mut s = session(ws.path());
    let mut asker = Recorder {
        answers: vec![Answer::AllowSession {
            scope: Scope::Command("echo hi".into()),
        }],
        asked: Vec::new(),
    };
    let first = s.run_call(
        "run_command",
        json!({"command": "echo hi"}),
        &mut asker,
        &mut |_| {},
    );
    assert!(matches!(first, CallOutcome::Ran(ref r) if r.success));
    assert_eq!(asker.asked.len(), 1);
    assert_eq!(asker.asked[0].command.as_deref(), Some("echo hi"));
    // The same command again: granted, not asked.
    s.run_call(
        "run_command",
        json!({"command": "echo hi"}),
        &mut asker,
        &mut |_| {},
    );
    assert_eq!(asker.asked.len(), 1);
    for other in [
        "echo hi && touch pwned",
        "echo hi; touch pwned",
        "echo hi | sh",
        "echo hi $(touch pwned)",
        "echo  hi",
    ] {
        let outcome = s.run_call(
            "run_command",
            json!({ "command": other }),
            &mut asker,
            &mut |_| {},
        );
        assert!(matches!(outcome, CallOutcome::Refused(_)), "{other}");
    }
    assert_eq!(asker.asked.len(), 6);
    assert!(!ws.path().join("pwned").exists());
}

#[test]
fn a_sandboxed_command_cannot_write_outside_the_workspace() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mut s = session(ws.path());
    let target = outside.path().join("escaped.txt");
    let data = call(
        &mut s,
        "run_command",
        json!({"command": format!("touch inside.txt; touch '{}'; awk -F: 'NR>2 {{print $1}}' /proc/net/dev", target.display())}),
    );
    if data["sandboxed"] != true {
        panic!(
            "commands are not sandboxed here ({}); install bubblewrap (apt-get install bubblewrap, scripts/setup.sh --tests)",
            data["sandbox_note"]
        );
    }
    assert!(ws.path().join("inside.txt").exists(), "{data:#}");
    assert!(!target.exists(), "{data:#}");
    // The folder outside is not even there to be refused.
    assert!(
        data["stderr"]
            .as_str()
            .unwrap()
            .contains("No such file or directory"),
        "{data:#}"
    );
    // No network: only the loopback device exists.
    assert_eq!(data["stdout"].as_str().unwrap().trim(), "lo", "{data:#}");
}

#[test]
fn a_build_script_run_by_a_checker_writes_neither_outside_nor_inside_the_workspace() {
    need("cargo", "install Rust with rustup");
    let ws = fixture("rust");
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let target = outside.path().join("from-build-script.txt");
    std::fs::write(
        ws.path().join("build.rs"),
        format!(
            "fn main() {{ let _ = std::fs::write({:?}, \"escaped\"); let _ = std::fs::write(\"inside.txt\", \"ok\"); }}\n",
            target.display().to_string()
        ),
    )
    .unwrap();
    let mut s = session(ws.path());
    let data = call(&mut s, "get_diagnostics", json!({}));
    let cargo = &data["checkers"][0];
    if cargo["sandboxed"] != true {
        panic!("checkers are not sandboxed here; install bubblewrap (apt-get install bubblewrap, scripts/setup.sh --tests): {data:#}");
    }
    assert_eq!(cargo["status"], "ran", "{data:#}");
    assert_eq!(data["errors"], 1, "{data:#}");
    // Checkers see the workspace read-only; their build output goes elsewhere.
    assert!(!ws.path().join("inside.txt").exists(), "{data:#}");
    assert!(!ws.path().join("target").exists(), "{data:#}");
    assert!(
        !target.exists(),
        "a build script wrote outside the workspace"
    );
}
