//! `lantern run` and `lantern eval`: streamed events, guards, a missing model or server, a conversation taken up again.

use super::*;

fn script(f: &Fixture, replies: &[&str]) -> String {
    let path = f.home.path().join("script.json");
    std::fs::write(&path, serde_json::to_string(replies).unwrap()).unwrap();
    format!("scripted:{}", path.display())
}

/// `lantern run` on the fixture's workspace, asked `prompt`, the model's replies the script
/// `replies`, with the arguments `more`.
fn run_scripted(f: &Fixture, replies: &[&str], prompt: &str, more: &[&str]) -> Output {
    let model = script(f, replies);
    let ws = f.ws.path().to_str().unwrap();
    let mut args = vec![
        "run",
        "--workspace",
        ws,
        "--model",
        &model,
        "--prompt",
        prompt,
    ];
    args.extend_from_slice(more);
    f.lantern(&args, None)
}

#[test]
fn a_run_read_by_a_script_prints_the_answer_as_the_turn_gave_it_not_the_text_as_it_streamed() {
    let f = Fixture::new();
    // The model names the file it read by its name alone; the turn gives it its path.
    let read =
        "<TOOL_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"src/config.ts\"}}</TOOL_CALL>";
    let prompt = "Open up parseConfig.";
    let out = run_scripted(&f, &[read, "It is in config.ts."], prompt, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "It is in src/config.ts.\n"
    );
    assert!(
        stderr(&out).contains("config.ts is src/config.ts"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn run_streams_ndjson_events_through_a_scripted_model() {
    let f = Fixture::new();
    let replies = [
        "<TOOL_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"package.json\"}, \"reasoning\": \"The version is there\"}\n</TOOL_CALL>",
        "The version is 2.4.1.",
    ];
    let transcript = f.home.path().join("t.jsonl");
    let more = ["--json", "--transcript", transcript.to_str().unwrap()];
    let out = run_scripted(&f, &replies, "What version is in package.json?", &more);
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
    assert_eq!(parsed["dialect"], "lantern");
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
    let write = "<TOOL_CALL>{\"tool\": \"write_file\", \"args\": {\"path\": \"a.txt\", \"content\": \"x\"}}</TOOL_CALL>";
    let more = ["--json", "--approve", "none"];
    let out = run_scripted(&f, &[write, write, write], "write", &more);
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
    let approved =
        |prompt: &str| run_scripted(&f, &[write, "Written."], prompt, &["--approve", "all"]);
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
fn eval_with_two_jobs_reports_every_run_once_in_task_order() {
    let f = Fixture::new();
    let fixtures = f.home.path().join("fixtures");
    std::fs::create_dir_all(fixtures.join("empty")).unwrap();
    let ids: Vec<String> = (1..=5).map(|i| format!("sum-{i}")).collect();
    let tasks: Vec<Value> = ids
        .iter()
        .map(|id| {
            serde_json::json!({"id": id, "fixture": "empty", "prompt": "Add nine and four.",
             "needs_tool": false, "tools": [], "success": {"answer_contains_any": ["13"]}})
        })
        .collect();
    let tasks_file = f.home.path().join("tasks.json");
    std::fs::write(&tasks_file, Value::Array(tasks).to_string()).unwrap();
    // Each job loads the script afresh, so it holds a reply for every run either may take.
    let model = script(&f, &["It makes 13."; 5]);
    let eval = |jobs: &str| {
        f.lantern(
            &[
                "eval",
                "--tasks",
                tasks_file.to_str().unwrap(),
                "--fixtures",
                fixtures.to_str().unwrap(),
                "--model",
                &model,
                "--jobs",
                jobs,
                "--json",
            ],
            None,
        )
    };
    let out = eval("2");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json(&out);
    let reported: Vec<&str> = report["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    assert_eq!(reported, ids, "each run once, in the tasks' order");
    assert!(report["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|o| o["success"] == true));
    let progress = stderr(&out);
    for k in 1..=5 {
        assert!(progress.contains(&format!("[{k}/5] sum-")), "{progress}");
    }

    let out = eval("0");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--jobs"), "{}", stderr(&out));
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
        let mut more = vec!["--json", "--transcript", save.to_str().unwrap()];
        if let Some(path) = continue_from {
            more.extend(["--continue", path.to_str().unwrap()]);
        }
        let out = run_scripted(&f, replies, prompt, &more);
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
