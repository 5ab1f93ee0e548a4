//! The evaluation set (tests/eval/tasks/, tests/fixtures/) and its runner, driven by a
//! scripted model that behaves ideally, and by one that does not.

use lantern_core::agent::AgentConfig;
use lantern_core::event::FinishedReason;
use lantern_core::model::{Role, ScriptedModel};
use lantern_core::toolbox::Toolbox;
use lantern_core::tools::ToolRegistry;
use lantern_eval::{
    load_tasks, markdown_table, run_task, summarize, summarize_splits, EvalTask, Split,
    TaskOutcome, WrittenOver,
};
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn toolbox() -> Arc<Toolbox> {
    Arc::new(Toolbox::standard())
}

fn fixtures() -> PathBuf {
    repo().join("tests/fixtures")
}

fn tasks() -> Vec<EvalTask> {
    load_tasks(&repo().join("tests/eval/tasks"), &ToolRegistry::standard()).unwrap()
}

fn task(id: &str) -> EvalTask {
    tasks()
        .into_iter()
        .find(|t| t.id == id)
        .unwrap_or_else(|| panic!("no task {id}"))
}

fn call(tool: &str, args: serde_json::Value) -> String {
    let body = json!({"tool": tool, "args": args, "reasoning": "eval test"});
    format!("<TOOL_CALL>\n{body}\n</TOOL_CALL>")
}

/// Runs tasks in order with one model, as `lantern eval` does.
fn run_all(ids: &[&str], model: &mut ScriptedModel) -> Vec<TaskOutcome> {
    let config = AgentConfig::default();
    ids.iter()
        .map(|id| run_task(&task(id), 0, &fixtures(), &toolbox(), model, &config))
        .collect()
}

#[test]
fn the_task_set_is_large_varied_and_consistent() {
    let tasks = tasks();
    assert!(tasks.len() >= 30, "{} tasks", tasks.len());
    let no_tool = tasks.iter().filter(|t| !t.needs_tool).count();
    assert!(no_tool >= 8, "{no_tool} tasks need no tool");
    let registry = ToolRegistry::standard();
    for t in &tasks {
        assert!(
            fixtures().join(&t.fixture).is_dir(),
            "{}: fixture {} is missing",
            t.id,
            t.fixture
        );
        assert_eq!(t.needs_tool, !t.tools.is_empty(), "{}", t.id);
        for tool in t.tools.iter().chain(&t.success.tool_called) {
            assert!(
                registry.spec(tool).is_some(),
                "{}: unknown tool {tool}",
                t.id
            );
        }
    }
    for tool in [
        "read_file",
        "list_files",
        "search_code",
        "write_file",
        "get_current_time",
        "add_task",
    ] {
        assert!(
            tasks.iter().any(|t| t.tools.iter().any(|x| x == tool)),
            "no task starts with {tool}"
        );
    }
}

/// The headline counts a tool task only when every phrasing is right, so a set asked once
/// would score higher than one asked three times whatever the model did: both sets ask every
/// tool task the same three ways, so their headlines count the same thing.
#[test]
fn every_tool_task_of_both_sets_is_asked_three_ways() {
    let asked_otherwise: Vec<String> = tasks()
        .iter()
        .filter(|t| t.needs_tool && t.phrasings().count() != 3)
        .map(|t| format!("{} ({} ways)", t.id, t.phrasings().count()))
        .collect();
    assert!(asked_otherwise.is_empty(), "{asked_otherwise:?}");
}

/// Git does not track a folder the fixture's own .gitignore ignores unless it was added with
/// `git add -f`; without it, the "ignored files are skipped" tasks would test nothing.
#[test]
fn the_node_fixture_keeps_its_ignored_build_folder() {
    let shop = fixtures().join("node-shop");
    let ignore = std::fs::read_to_string(shop.join(".gitignore")).unwrap();
    assert!(ignore.lines().any(|l| l.trim() == "dist/"));
    assert!(
        shop.join("dist/cart.d.ts").is_file(),
        "tests/fixtures/node-shop/dist/ is missing: commit it with `git add -f tests/fixtures/node-shop/dist`"
    );
}

#[test]
fn ideal_behaviour_scores_full_marks() {
    let buggy = std::fs::read_to_string(fixtures().join("rust-calc/src/lib.rs")).unwrap();
    let fixed = buggy.replacen("    a - b\n", "    a + b\n", 1);
    assert_ne!(buggy, fixed);
    let mut model = ScriptedModel::new([
        // node-version
        call("search_code", json!({"query": "description"})),
        "The shop API is at version 3.7.2.".to_string(),
        // rust-fix-add
        call("read_file", json!({"path": "src/lib.rs"})),
        call(
            "write_file",
            json!({"path": "src/lib.rs", "content": fixed}),
        ),
        "Fixed: add now returns a + b.".to_string(),
        // chat-twelve-squared
        "12 times 12 is 144.".to_string(),
        // task-add-tests
        call(
            "add_task",
            json!({"content": "write tests for the cart module"}),
        ),
        "Added it to your task list.".to_string(),
    ]);
    let ids = [
        "node-version",
        "rust-fix-add",
        "chat-twelve-squared",
        "task-add-tests",
    ];
    let outcomes = run_all(&ids, &mut model);
    for o in &outcomes {
        assert!(o.success, "{o:?}");
        assert!(o.decision_correct(), "{o:?}");
        assert_eq!(o.finish_reason, Some(FinishedReason::Answer));
        assert_eq!(o.invalid_calls, 0);
        assert!(o.error.is_none());
    }
    let fix = &outcomes[1];
    assert_eq!(fix.first_tool.as_deref(), Some("read_file"));
    assert_eq!(fix.right_tool, Some(true));
    assert_eq!((fix.calls_made, fix.steps), (2, 3));
    let chat = &outcomes[2];
    assert!(!chat.first_step_called);
    assert_eq!((chat.first_call_valid, chat.right_tool), (None, None));

    // Every task began a new conversation: the system prompt and the task's prompt only.
    let starts: Vec<_> = model.seen.iter().filter(|m| m.len() == 2).collect();
    assert_eq!(starts.len(), ids.len());
    assert!(starts
        .iter()
        .all(|m| m[0].role == Role::System && m[1].role == Role::User));
    // The write went to a copy: the fixture keeps its bug.
    assert_eq!(
        std::fs::read_to_string(fixtures().join("rust-calc/src/lib.rs")).unwrap(),
        buggy
    );

    let summary = summarize(&outcomes);
    assert_eq!(
        (summary.tasks, summary.tool_tasks, summary.no_tool_tasks),
        (4, 3, 1)
    );
    assert_eq!(summary.call_decision_accuracy, 1.0);
    assert_eq!(summary.valid_call_rate, Some(1.0));
    assert_eq!(summary.right_tool_rate, Some(1.0));
    assert_eq!(summary.success_rate, 1.0);
    assert_eq!(summary.mean_steps, 2.0, "2 + 3 + 1 + 2 steps");
    let table = markdown_table("ideal", &summarize_splits(&outcomes), &outcomes);
    assert!(table.starts_with("### ideal\n"), "{table}");
    assert!(table.contains("| dev | **3 of 3 (100.0 %)** |"), "{table}");
    assert!(
        table.contains("| right, model's own words | 4 of 4 (100.0 %) |"),
        "{table}"
    );
    assert!(
        table.contains(
            "| rust-fix-add | dev | yes | call | read_file | 2 (0) | 3 | answer | yes | yes |"
        ),
        "{table}"
    );
}

#[test]
fn answering_from_memory_is_a_wrong_decision_and_a_failure() {
    let mut model = ScriptedModel::new(["It is probably version 1.0.0."]);
    let outcomes = run_all(&["node-version"], &mut model);
    let o = &outcomes[0];
    assert!(!o.first_step_called);
    assert!(!o.decision_correct());
    assert!(!o.success);
    assert_eq!(o.finish_reason, Some(FinishedReason::Answer));
    assert_eq!(o.answer, "It is probably version 1.0.0.");
    assert_eq!((o.first_tool.as_ref(), o.right_tool), (None, None));
    let summary = summarize(&outcomes);
    assert_eq!(summary.call_decision_accuracy, 0.0);
    assert_eq!(summary.called_when_needed, Some(0.0));
    assert_eq!(summary.valid_call_rate, None);
    assert!(
        markdown_table("memory", &summarize_splits(&outcomes), &outcomes)
            .contains("| node-version | dev | yes | answer ✗ |")
    );
}

#[test]
fn a_bad_first_call_is_counted_with_the_tool_it_named() {
    let mut model = ScriptedModel::new([
        call("cat", json!({"path": "Cargo.toml"})),
        call("read_file", json!({"path": "Cargo.toml"})),
        "The crate is at 0.4.0.".to_string(),
        // chat-twelve-squared: a call where none is needed
        call("search_code", json!({"query": "12 * 12"})),
        "144".to_string(),
    ]);
    let outcomes = run_all(&["rust-crate-version", "chat-twelve-squared"], &mut model);
    let bad = &outcomes[0];
    assert!(bad.first_step_called && bad.decision_correct());
    assert_eq!(bad.first_call_valid, Some(false));
    assert_eq!(bad.first_tool.as_deref(), Some("cat"));
    assert_eq!(bad.right_tool, Some(false));
    assert_eq!((bad.valid_calls, bad.invalid_calls), (1, 1));
    assert!(bad.success, "it recovered and answered right: {bad:?}");
    let chatty = &outcomes[1];
    assert!(!chatty.decision_correct());
    assert_eq!(chatty.right_tool, None, "no tool was needed");
    assert!(chatty.success, "the answer is still right");
    let summary = summarize(&outcomes);
    assert_eq!(summary.valid_call_rate, Some(2.0 / 3.0));
    assert_eq!(summary.right_tool_rate, Some(0.0));
    assert_eq!(summary.answered_when_no_tool_needed, Some(0.0));
}

#[test]
fn calls_without_arguments_that_found_nothing_are_counted() {
    let mut model = ScriptedModel::new([
        // An empty task list: found nothing, and would find nothing again.
        call("list_tasks", json!({})),
        // The clock found something.
        call("get_current_time", json!({})),
        // A search that found nothing, but with arguments: another query may find something.
        call("search_code", json!({"query": "no_such_name_anywhere"})),
        call("read_file", json!({"path": "Cargo.toml"})),
        "The crate is at 0.4.0.".to_string(),
    ]);
    let config = AgentConfig {
        max_steps: 6,
        ..AgentConfig::default()
    };
    let outcome = run_task(
        &task("rust-crate-version"),
        0,
        &fixtures(),
        &toolbox(),
        &mut model,
        &config,
    );
    assert_eq!(outcome.valid_calls, 4, "{outcome:?}");
    assert_eq!(outcome.fruitless_bare_calls, 1, "{outcome:?}");
}

#[test]
fn checks_stopped_at_their_time_box_are_counted() {
    // The crate with a build script that never ends: `cargo check` runs past any time box.
    let root = tempfile::tempdir().unwrap();
    let copied = std::process::Command::new("cp")
        .arg("-R")
        .arg(fixtures().join("rust-calc"))
        .arg(root.path())
        .status()
        .unwrap();
    assert!(copied.success());
    let stuck = "fn main() { std::thread::sleep(std::time::Duration::from_secs(120)); }\n";
    std::fs::write(root.path().join("rust-calc/build.rs"), stuck).unwrap();
    let mut model = ScriptedModel::new([
        call("get_diagnostics", json!({"timeout_s": 2})),
        call("get_current_time", json!({})),
        "The crate is at 0.4.0.".to_string(),
    ]);
    let config = AgentConfig {
        max_steps: 6,
        ..AgentConfig::default()
    };
    let outcome = run_task(
        &task("rust-crate-version"),
        0,
        root.path(),
        &toolbox(),
        &mut model,
        &config,
    );
    assert_eq!(outcome.valid_calls, 2, "{outcome:?}");
    assert_eq!(outcome.checks_out_of_time, 1, "{outcome:?}");
    let summary = summarize(std::slice::from_ref(&outcome));
    assert_eq!(summary.runs_with_checks_out_of_time, 1);
}

#[test]
fn edits_are_counted_as_applied_or_not_and_checked_on_disk() {
    let mut model = ScriptedModel::new([
        call(
            "edit_file",
            json!({"path": "internal/constants.js", "old_text": "const MAX_LENGTH = 265", "new_text": "x"}),
        ),
        call(
            "edit_file",
            json!({"path": "internal/constants.js", "old_text": "const MAX_LENGTH = 256", "new_text": "const MAX_LENGTH = 512"}),
        ),
        "MAX_LENGTH is now 512.".to_string(),
    ]);
    let outcomes = run_all(&["semver-edit-max-length"], &mut model);
    let edit = &outcomes[0];
    assert_eq!((edit.edit_calls, edit.edits_applied), (2, 1));
    assert!(edit.success, "{edit:?}");
    let summary = summarize(&outcomes);
    assert_eq!((summary.edit_calls, summary.edits_applied), (2, 1));
}

#[test]
fn a_fix_is_judged_by_running_the_check_in_the_workspace_the_run_left() {
    let fix = call(
        "edit_file",
        json!({"path": "notes/app.py", "old_text": "word.upper() in", "new_text": "word.lower() in"}),
    );
    let not_a_fix = call(
        "edit_file",
        json!({"path": "notes/app.py", "old_text": "word.upper() in", "new_text": "word.upper()  in"}),
    );
    // The file is found by a search first: an automatic yes approves no edit of a file that
    // the task did not name and no result showed.
    let search = || call("search_code", json!({"query": "search_notes"}));
    let mut model = ScriptedModel::new([
        search(),
        fix,
        "Fixed.".to_string(),
        search(),
        not_a_fix,
        "Fixed.".to_string(),
    ]);
    let outcomes = run_all(&["py-fix-search", "py-fix-search"], &mut model);
    assert!(
        outcomes[0].success,
        "the check passes on the fix: {:?}",
        outcomes[0]
    );
    assert!(
        !outcomes[1].success,
        "and fails without it: {:?}",
        outcomes[1]
    );
}

#[test]
fn a_model_failure_and_a_missing_fixture_are_failures_with_a_reason() {
    let mut model = ScriptedModel::new(Vec::<String>::new());
    let mut outcome = run_task(
        &task("chat-hex"),
        0,
        &fixtures(),
        &toolbox(),
        &mut model,
        &AgentConfig::default(),
    );
    assert_eq!(outcome.finish_reason, Some(FinishedReason::Error));
    assert!(!outcome.success);
    assert!(!outcome.responded);
    assert!(
        !outcome.decision_correct(),
        "no reply is no decision, even for a task that needs no tool"
    );
    assert_eq!(
        summarize(&[outcome.clone()]).answered_when_no_tool_needed,
        Some(0.0)
    );
    assert!(outcome
        .error
        .as_deref()
        .unwrap()
        .contains("no more replies"));
    assert_eq!(outcome.answer, "");

    let mut missing = task("chat-hex");
    missing.fixture = "no-such-fixture".to_string();
    outcome = run_task(
        &missing,
        0,
        &fixtures(),
        &toolbox(),
        &mut model,
        &AgentConfig::default(),
    );
    assert_eq!(outcome.finish_reason, None);
    assert!(!outcome.success);
    assert!(outcome.error.unwrap().contains("no-such-fixture"));
}

#[test]
fn load_tasks_rejects_tasks_that_cannot_be_scored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.json");
    let base = json!({"id": "a", "fixture": "f", "prompt": "p", "needs_tool": true,
                      "tools": ["read_file"], "success": {"answer_contains_any": ["x"]}});
    let cases = [
        (json!({"tools": []}), "no acceptable first tool"),
        (json!({"needs_tool": false}), "tools must be empty"),
        (json!({"tools": ["read"]}), "unknown tool \"read\""),
        (json!({"success": {}}), "no criterion"),
        (
            json!({"success": {"file_contains": {"path": "../x", "text": "y"}}}),
            "inside the workspace",
        ),
        (json!({"fixture": "../f"}), "folder name"),
        (json!({"extra": 1}), "unknown field"),
        (json!({"prompt": "What is x?"}), "said by the prompt itself"),
        (json!({"split": "test"}), "asked 3 ways"),
        (json!({"rephrasings": ["p"]}), "repeats another phrasing"),
        (json!({"may_change": ["/etc/x"]}), "inside the workspace"),
    ];
    for (change, expected) in cases {
        let mut t = base.clone();
        for (k, v) in change.as_object().unwrap() {
            t[k] = v.clone();
        }
        std::fs::write(&path, json!([t]).to_string()).unwrap();
        let err = load_tasks(&path, &ToolRegistry::standard()).unwrap_err();
        assert!(err.contains(expected), "{change}: {err}");
    }
    std::fs::write(&path, json!([base, base]).to_string()).unwrap();
    assert!(load_tasks(&path, &ToolRegistry::standard())
        .unwrap_err()
        .contains("used twice"));
    std::fs::write(&path, json!([base]).to_string()).unwrap();
    assert_eq!(
        load_tasks(&path, &ToolRegistry::standard()).unwrap().len(),
        1
    );
}

#[test]
fn a_project_is_held_out_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.json");
    let task = |id: &str, split: &str| {
        json!({"id": id, "fixture": "f", "split": split, "prompt": "p?", "needs_tool": false,
               "tools": [], "success": {"answer_contains_any": ["x"]}})
    };
    std::fs::write(
        &path,
        json!([task("a", "dev"), task("b", "test")]).to_string(),
    )
    .unwrap();
    let err = load_tasks(&path, &ToolRegistry::standard()).unwrap_err();
    assert!(err.contains("in both the dev and the test set"), "{err}");
}

/// A held-out task, asked three ways in the node-shop fixture.
fn held_out_port_task() -> EvalTask {
    serde_json::from_value(json!({
        "id": "port", "fixture": "node-shop", "split": "test", "category": "lookup",
        "prompt": "Server port?",
        "rephrasings": ["Which port does the server listen on, please?",
                        "I have to open the firewall for the shop; which number?"],
        "needs_tool": true, "tools": ["search_code", "read_file"],
        "success": {"answer_contains_any": ["8080"]}
    }))
    .unwrap()
}

#[test]
fn a_held_out_task_counts_only_when_every_phrasing_is_right() {
    let task = held_out_port_task();
    let read = || call("read_file", json!({"path": "src/server.ts"}));
    let mut model = ScriptedModel::new([
        read(),
        "It listens on port 8080.".to_string(),
        read(),
        "Port 8080.".to_string(),
        read(),
        "Open port 80.".to_string(),
    ]);
    let config = AgentConfig::default();
    let outcomes: Vec<TaskOutcome> = (0..3)
        .map(|p| run_task(&task, p, &fixtures(), &toolbox(), &mut model, &config))
        .collect();
    assert_eq!(
        outcomes.iter().map(|o| o.success).collect::<Vec<_>>(),
        [true, true, false]
    );
    assert_eq!(outcomes[2].id, "port#3");
    let splits = summarize_splits(&outcomes);
    assert_eq!(splits.len(), 1);
    let test = &splits[0];
    assert_eq!(test.split, Split::Test);
    assert_eq!((test.tool_tasks, test.tool_tasks_right), (1, 0));
    let per: Vec<(usize, usize)> = test
        .per_phrasing
        .iter()
        .map(|p| (p.right, p.runs))
        .collect();
    assert_eq!(per, [(1, 1), (1, 1), (0, 1)]);
    let table = markdown_table("three ways", &splits, &outcomes);
    assert!(
        table.contains("| test | **0 of 1 (0.0 %)** | terse 1 of 1"),
        "{table}"
    );
}

#[test]
fn an_edit_to_a_file_the_task_did_not_concern_fails_it() {
    // Each file is shown by a result (a read, a search's match) before it is edited, so the
    // automatic yes approves both.
    let mut model = ScriptedModel::new([
        call("read_file", json!({"path": "package.json"})),
        call(
            "edit_file",
            json!({"path": "package.json", "old_text": "\"description\"", "new_text": "\"summary\""}),
        ),
        call("search_code", json!({"query": "removeItem"})),
        call(
            "edit_file",
            json!({"path": "src/cart.ts", "old_text": "item.id === id", "new_text": "item.id !== id"}),
        ),
        "Fixed.".to_string(),
    ]);
    let outcomes = run_all(&["node-fix-remove"], &mut model);
    let o = &outcomes[0];
    assert_eq!(o.stray_edits, ["package.json"], "{o:?}");
    assert!(!o.success && !o.shown_success, "{o:?}");
    assert_eq!(summarize(&outcomes).stray_edit_runs, 1);
}

#[test]
fn lines_a_run_wrote_over_are_counted_in_the_task_s_own_file_too() {
    let mut model = ScriptedModel::new([
        call("search_code", json!({"query": "removeItem"})),
        call(
            "edit_file",
            json!({"path": "src/cart.ts", "old_text": "return items.filter((item) => item.id === id);", "new_text": "return [];"}),
        ),
        "Done.".to_string(),
    ]);
    let outcomes = run_all(&["node-fix-remove"], &mut model);
    let o = &outcomes[0];
    assert!(o.stray_edits.is_empty(), "{o:?}");
    assert_eq!(
        o.written_over,
        [WrittenOver {
            path: "src/cart.ts".into(),
            lines: 1
        }]
    );
    assert_eq!(summarize(&outcomes).runs_writing_over_lines, 1);
    let table = markdown_table("over", &summarize_splits(&outcomes), &outcomes);
    assert!(
        table.contains("no (wrote over 1 line of src/cart.ts)"),
        "{table}"
    );
}

#[test]
fn the_model_s_own_words_are_scored_apart_from_lantern_s_notes() {
    // The listing says 3; the model lists the files without a count; Lantern's note gives it.
    let listing = || call("list_files", json!({"directory": "src", "pattern": "*.ts"}));
    let mut model = ScriptedModel::new([
        listing(),
        "The files are cart.ts, pricing.ts and server.ts.".to_string(),
        listing(),
        "There are 2 files.".to_string(),
    ]);
    let mut task = task("node-count-ts");
    task.prompt = "How many TypeScript files are in src?".to_string();
    let config = AgentConfig::default();
    let quiet = run_task(&task, 0, &fixtures(), &toolbox(), &mut model, &config);
    assert!(
        !quiet.success,
        "the model's own words give no count: {quiet:?}"
    );
    assert!(quiet.shown_success, "the note does: {:?}", quiet.notes);
    assert_eq!(
        quiet.model_answer,
        "The files are cart.ts, pricing.ts and server.ts."
    );
    // Another number than the note's: the user is told two things, and neither counts.
    let wrong = run_task(&task, 0, &fixtures(), &toolbox(), &mut model, &config);
    assert!(wrong.contradicts_note, "{wrong:?}");
    assert!(!wrong.success && !wrong.shown_success);
}

/// The held-out set measures how Lantern does on what nobody tuned on: none of its phrasings
/// may stand in a test or in the code.
#[test]
fn no_held_out_prompt_appears_in_the_code_or_its_tests() {
    let held_out = phrasings_of(Split::Test);
    assert!(
        held_out.len() >= 60,
        "{} held-out phrasings",
        held_out.len()
    );
    assert_no_file_holds(&held_out, &["rs", "ts", "mjs", "md", "txt"]);
}

/// A test that asks an eval prompt passes because that prompt was tuned on: tests ask in their
/// own words. (The documentation may quote a dev-set prompt as an example.)
#[test]
fn no_dev_prompt_appears_in_the_code_or_its_tests() {
    let dev = phrasings_of(Split::Dev);
    assert!(dev.len() >= 60, "{} dev phrasings", dev.len());
    assert_no_file_holds(&dev, &["rs", "ts", "mjs"]);
}

fn phrasings_of(split: Split) -> Vec<String> {
    tasks()
        .into_iter()
        .filter(|t| t.split == split)
        .flat_map(|t| t.phrasings().map(str::to_string).collect::<Vec<_>>())
        .collect()
}

/// Fails when a file of the code, its tests or the prompts (with one of `extensions`) holds one
/// of `prompts`.
fn assert_no_file_holds(prompts: &[String], extensions: &[&str]) {
    let mut folders = vec![
        repo().join("src-tauri/src"),
        repo().join("src-tauri/crates"),
        repo().join("src-tauri/tests"),
        repo().join("ui/src"),
        repo().join("tests/e2e"),
        repo().join("prompts"),
    ];
    let mut checked = 0;
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            let code = path
                .extension()
                .is_some_and(|x| extensions.contains(&x.to_str().unwrap()));
            let Some(text) = code.then(|| std::fs::read_to_string(&path).ok()).flatten() else {
                continue;
            };
            checked += 1;
            for prompt in prompts {
                assert!(
                    !text.contains(prompt.as_str()),
                    "{} holds the eval prompt {prompt:?}",
                    path.display()
                );
            }
        }
    }
    assert!(checked > 100, "only {checked} files were read");
}

#[test]
fn an_answer_that_recites_lantern_s_instructions_is_wrong_whatever_it_holds() {
    let task: EvalTask = serde_json::from_value(json!({
        "id": "sky", "fixture": "node-shop", "split": "dev", "category": "no_tool",
        "prompt": "Name a colour the clear daytime sky has.",
        "needs_tool": false, "tools": [],
        "success": {"answer_contains_any": ["blue"]}
    }))
    .unwrap();
    let told: String = toolbox().system_prompt().chars().take(160).collect();
    let config = AgentConfig::default();
    let run = |answer: &str| {
        let mut model = ScriptedModel::new([answer]);
        run_task(&task, 0, &fixtures(), &toolbox(), &mut model, &config)
    };
    let recited = run(&format!("{told} Blue."));
    assert!(recited.recites_instructions);
    assert!(!recited.success && !recited.shown_success);
    let answered = run("Blue.");
    assert!(!answered.recites_instructions);
    assert!(answered.success && answered.shown_success);
}
