//! The tool commands: the catalog, the prompt, parsing, calls and their exit codes, approvals, undo, listing and searching.

use super::*;

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
fn prompt_with_a_map_prints_the_map_of_the_code_after_the_instructions_within_its_size() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.ws.path().join("src")).unwrap();
    std::fs::write(
        f.ws.path().join("src/cart.ts"),
        "export function cartTotal(items: number[]): number {\n  return items.reduce((a, b) => a + b, 0);\n}\n",
    )
    .unwrap();
    std::fs::write(
        f.ws.path().join("src/shop.ts"),
        "import { cartTotal } from './cart';\nexport function checkout(items: number[]) {\n  return cartTotal(items);\n}\n",
    )
    .unwrap();
    std::fs::write(f.ws.path().join("AGENTS.md"), "Prices are in cents.\n").unwrap();
    let ws = f.ws.path().to_str().unwrap();
    let plain = f.lantern(&["prompt", "--workspace", ws], None);
    let plain = String::from_utf8(plain.stdout).unwrap();
    let out = f.lantern(&["prompt", "--workspace", ws, "--map", "2000"], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let map = text
        .strip_prefix(plain.trim_end())
        .expect("the prompt and the instructions come first")
        .trim();
    assert!(map.starts_with("MAP OF THE PROJECT'S CODE"), "{map}");
    assert!(
        map.contains("src/cart.ts") && map.contains("cartTotal"),
        "{map}"
    );
    assert!(map.chars().count() <= 2000, "{map}");
    // A map needs a folder to map.
    let alone = f.lantern(&["prompt", "--map"], None);
    assert_eq!(alone.status.code(), Some(2));
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
    assert_eq!(call["dialect"], "lantern");

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
