//! `lantern tool get_diagnostics` on the fixture workspaces (tests/fixtures/diagnostics), with
//! the real checkers. Each test copies its fixture into a temp folder first. A checker that is
//! not installed fails the test with the command that installs it: `scripts/setup.sh --tests`
//! installs them all.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// A copy of `tests/fixtures/diagnostics/NAME` in a temp folder.
fn fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &repo().join("tests/fixtures/diagnostics").join(name),
        dir.path(),
    );
    dir
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

/// The checkers' search path for these tests: the repository's own node_modules/.bin (for
/// tsc), then PATH.
fn search_path() -> String {
    format!(
        "{}:{}",
        repo().join("node_modules/.bin").display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Fails the test, saying how to install it, when `program` is not on the search path.
fn need(program: &str, install: &str) -> PathBuf {
    search_path()
        .split(':')
        .map(|d| Path::new(d).join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("{program} is not installed, so this test cannot run: {install} (scripts/setup.sh --tests does it)")
        })
}

/// Runs `lantern tool get_diagnostics` with `args` and the checker search path `path`.
fn diagnostics(ws: &Path, args: &str, path: &str) -> Value {
    diagnostics_with_env(ws, args, path, &[])
}

/// [`diagnostics`] with more environment variables.
fn diagnostics_with_env(ws: &Path, args: &str, path: &str, env: &[(&str, &Path)]) -> Value {
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lantern"))
        .args(["tool", "get_diagnostics", "--workspace"])
        .arg(ws)
        .args(["--args", args])
        .env("LANTERN_HOME", home.path())
        .env("LANTERN_CHECKER_PATH", path)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let result: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(result["success"], true, "{result:#}");
    assert_eq!(out.status.code(), Some(0));
    result["data"].clone()
}

/// (path, line, severity, code, source) of each diagnostic, in the result's order.
fn found(data: &Value) -> Vec<(String, u64, String, String, String)> {
    data["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["path"].as_str().unwrap().to_string(),
                d["line"].as_u64().unwrap(),
                d["severity"].as_str().unwrap().to_string(),
                d["code"].as_str().unwrap_or("").to_string(),
                d["source"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn row(
    path: &str,
    line: u64,
    severity: &str,
    code: &str,
    source: &str,
) -> (String, u64, String, String, String) {
    (
        path.to_string(),
        line,
        severity.to_string(),
        code.to_string(),
        source.to_string(),
    )
}

fn checker<'a>(data: &'a Value, name: &str) -> &'a Value {
    data["checkers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["checker"] == name)
        .unwrap_or_else(|| panic!("{name} did not run: {data:#}"))
}

#[test]
fn rust_type_error_and_unused_variable() {
    need("cargo", "install Rust with rustup");
    let ws = fixture("rust");
    let data = diagnostics(ws.path(), "{}", &search_path());
    assert_eq!(
        found(&data),
        vec![
            row("src/lib.rs", 9, "error", "E0308", "cargo"),
            row("src/lib.rs", 3, "warning", "unused_variables", "cargo"),
        ],
        "{data:#}"
    );
    assert_eq!(data["diagnostics"][0]["column"], 25);
    assert_eq!(data["diagnostics"][0]["message"], "mismatched types");
    let cargo = checker(&data, "cargo");
    assert_eq!(cargo["status"], "ran");
    assert_eq!(cargo["freshness"], "fresh");
    assert_eq!(data["fresh"], true);
    assert_eq!(
        (data["errors"].as_u64(), data["warnings"].as_u64()),
        (Some(1), Some(1))
    );
    // The build output went to Lantern's own folder, not into the workspace.
    assert!(!ws.path().join("target").exists());
}

#[test]
fn typescript_type_error() {
    need(
        "tsc",
        "npm install (typescript is a devDependency of the repository)",
    );
    let ws = fixture("ts");
    let data = diagnostics(ws.path(), "{}", &search_path());
    assert_eq!(
        found(&data),
        vec![row("src/cart.ts", 7, "error", "TS2322", "tsc")],
        "{data:#}"
    );
    assert_eq!(data["diagnostics"][0]["column"], 9);
    assert_eq!(checker(&data, "tsc")["status"], "ran");
}

#[test]
fn python_syntax_error_and_undefined_name() {
    need("ruff", "pip install ruff");
    let ws = fixture("python");
    let data = diagnostics(ws.path(), "{}", &search_path());
    assert_eq!(
        found(&data),
        vec![
            row("broken.py", 1, "error", "invalid-syntax", "ruff"),
            row("notes.py", 3, "error", "F821", "ruff"),
            row("notes.py", 2, "warning", "F841", "ruff"),
        ],
        "{data:#}"
    );
    // Narrowed to one file: the report and the work.
    let one = diagnostics(ws.path(), r#"{"file": "notes.py"}"#, &search_path());
    assert_eq!(
        found(&one),
        vec![
            row("notes.py", 3, "error", "F821", "ruff"),
            row("notes.py", 2, "warning", "F841", "ruff"),
        ]
    );
    assert!(checker(&one, "ruff")["command"]
        .as_str()
        .unwrap()
        .ends_with(" notes.py"));
}

#[test]
fn go_vet_finding() {
    need("go", "apt-get install golang-go");
    let ws = fixture("go");
    // A build cache that does not exist yet, as on a machine where Go never ran: the checker
    // must be able to create it, sandboxed or not.
    let go_home = tempfile::tempdir().unwrap();
    let cache = go_home.path().join("go-build");
    let data = diagnostics_with_env(ws.path(), "{}", &search_path(), &[("GOCACHE", &cache)]);
    assert_eq!(
        found(&data),
        vec![row("main.go", 7, "warning", "printf", "go_vet")],
        "{data:#}"
    );
    assert!(data["diagnostics"][0]["message"]
        .as_str()
        .unwrap()
        .contains("wrong type"));
}

#[test]
fn without_ruff_python_falls_back_to_its_compiler() {
    let python = need("python3", "apt-get install python3");
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&python, bin.path().join("python3")).unwrap();
    let ws = fixture("python");
    // A module of the project's that shadows the standard library's is never imported by the
    // compiler script (the project's folder is not on the import path).
    std::fs::write(ws.path().join("json.py"), "import os\nos._exit(7)\n").unwrap();
    let data = diagnostics(ws.path(), "{}", &bin.path().to_string_lossy());
    assert_eq!(
        found(&data),
        vec![row("broken.py", 1, "error", "SyntaxError", "py_compile")],
        "{data:#}"
    );
    assert_eq!(data["missing"][0]["checker"], "ruff");
    assert_eq!(data["missing"][0]["instead"], "py_compile");
    assert!(data["missing"][0]["install"]
        .as_str()
        .unwrap()
        .contains("pip install ruff"));
}

#[test]
fn without_any_checker_files_get_a_syntax_check() {
    let ws = fixture("go");
    std::fs::write(
        ws.path().join("bad.go"),
        "package main\n\nfunc broken( {\n}\n",
    )
    .unwrap();
    let empty = tempfile::tempdir().unwrap();
    let data = diagnostics(ws.path(), "{}", &empty.path().to_string_lossy());
    assert_eq!(data["missing"][0]["checker"], "go_vet");
    assert!(data["missing"][0]["install"]
        .as_str()
        .unwrap()
        .contains("golang-go"));
    let rows = found(&data);
    assert!(!rows.is_empty(), "{data:#}");
    assert!(
        rows.iter()
            .all(|r| r.0 == "bad.go" && r.2 == "error" && r.4 == "syntax"),
        "{data:#}"
    );
    assert_eq!(rows[0].1, 3);
    // JSON, TOML and YAML have no checker: asked for by name, they get the syntax check.
    std::fs::write(ws.path().join("conf.json"), "{\"a\": [1,,]}\n").unwrap();
    let json = diagnostics(ws.path(), r#"{"file": "conf.json"}"#, &search_path());
    assert_eq!(found(&json)[0].4, "syntax");
    std::fs::write(
        ws.path().join("ci.yaml"),
        "on:\n  push:\n    branches: [main\n",
    )
    .unwrap();
    let yaml = diagnostics(ws.path(), r#"{"file": "ci.yaml"}"#, &search_path());
    assert_eq!(found(&yaml)[0].4, "syntax", "{yaml:#}");
}

#[test]
fn a_checker_over_its_time_is_stopped() {
    let ws = fixture("python");
    let bin = tempfile::tempdir().unwrap();
    let fake = bin.path().join("ruff");
    // Prints the start of its report, then hangs, with a child of its own.
    std::fs::write(&fake, "#!/bin/sh\necho '['\nsleep 60 &\nsleep 60\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let started = std::time::Instant::now();
    let data = diagnostics(
        ws.path(),
        r#"{"timeout_s": 1}"#,
        &bin.path().to_string_lossy(),
    );
    // Stopped, not waited for: the fake checker sleeps 60 s.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    let ruff = checker(&data, "ruff");
    assert_eq!(ruff["status"], "timed_out", "{data:#}");
    assert_eq!(ruff["freshness"], "stale");
    assert_eq!(data["fresh"], false);
    assert!(ruff["note"].as_str().unwrap().contains("time box"));
}

#[test]
fn a_monorepo_runs_every_kind_of_checker_at_once() {
    need("cargo", "install Rust with rustup");
    need(
        "tsc",
        "npm install (typescript is a devDependency of the repository)",
    );
    need("ruff", "pip install ruff");
    need("go", "apt-get install golang-go");
    let ws = tempfile::tempdir().unwrap();
    for name in ["rust", "ts", "python", "go"] {
        copy_dir(
            &repo().join("tests/fixtures/diagnostics").join(name),
            &ws.path().join(name),
        );
    }
    let data = diagnostics(ws.path(), "{}", &search_path());
    let projects: Vec<(&str, &str)> = data["checkers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["checker"].as_str().unwrap(),
                c["project"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        projects,
        [
            ("cargo", "rust"),
            ("tsc", "ts"),
            ("ruff", "python"),
            ("go_vet", "go")
        ]
    );
    let rows = found(&data);
    assert_eq!(rows.len(), 7, "{data:#}");
    assert!(rows.contains(&row("ts/src/cart.ts", 7, "error", "TS2322", "tsc")));
    assert!(rows.contains(&row("go/main.go", 7, "warning", "printf", "go_vet")));
    assert!(rows.contains(&row("rust/src/lib.rs", 9, "error", "E0308", "cargo")));
    assert!(rows.contains(&row("python/notes.py", 3, "error", "F821", "ruff")));
}

#[test]
fn eslint_runs_where_the_project_configures_it() {
    // A JavaScript project with an ESLint configuration, and an `eslint` in its own
    // node_modules/.bin that answers as ESLint's JSON formatter does, when it is called with
    // the expected arguments (checkers cannot write the workspace to tell us otherwise).
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("package.json"), "{\"name\": \"web\"}\n").unwrap();
    std::fs::write(ws.path().join("eslint.config.js"), "export default [];\n").unwrap();
    std::fs::create_dir_all(ws.path().join("src")).unwrap();
    std::fs::write(ws.path().join("src/app.js"), "const unused = 1;\n").unwrap();
    let bin = ws.path().join("node_modules/.bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(
        bin.join("eslint"),
        "#!/bin/sh\n[ \"$*\" = \"-f json --no-color .\" ] || exit 2\nprintf '[{\"filePath\":\"%s/src/app.js\",\"messages\":[{\"ruleId\":\"no-unused-vars\",\"severity\":2,\"message\":\"unused is assigned a value but never used.\",\"line\":1,\"column\":7,\"endLine\":1,\"endColumn\":13}]}]' \"$PWD\"\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.join("eslint"), std::fs::Permissions::from_mode(0o755)).unwrap();
    // Nothing on the search path: the project's own binary is found first.
    let empty = tempfile::tempdir().unwrap();
    let data = diagnostics(ws.path(), "{}", &empty.path().to_string_lossy());
    assert_eq!(
        found(&data),
        vec![row("src/app.js", 1, "error", "no-unused-vars", "eslint")],
        "{data:#}"
    );
    assert_eq!(data["diagnostics"][0]["end_column"], 13);
    assert_eq!(checker(&data, "eslint")["status"], "ran");
}
