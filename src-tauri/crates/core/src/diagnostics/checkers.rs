//! The checker adapters: which program each one runs, how it is found, and how its output
//! becomes [`Diagnostic`]s. The parsers are pure functions of the output, tested on recorded
//! samples; the programs themselves are exercised by the fixture tests.

use super::{Diagnostic, Severity};
use serde::Serialize;
use serde_json::Value;
use std::path::{Component, Path, PathBuf};

/// A program that checks a project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Checker {
    /// `cargo check --message-format=json`
    Cargo,
    /// `tsc --noEmit`
    Tsc,
    /// `eslint -f json`, when the project configures ESLint
    Eslint,
    /// `ruff check --output-format=json`
    Ruff,
    /// Python's own compiler (what `python3 -m py_compile` runs), when ruff is absent
    PyCompile,
    /// `go vet -json`
    GoVet,
}

impl Checker {
    pub fn name(self) -> &'static str {
        match self {
            Checker::Cargo => "cargo",
            Checker::Tsc => "tsc",
            Checker::Eslint => "eslint",
            Checker::Ruff => "ruff",
            Checker::PyCompile => "py_compile",
            Checker::GoVet => "go_vet",
        }
    }

    /// The executable looked up.
    pub fn program(self) -> &'static str {
        match self {
            Checker::Cargo => "cargo",
            Checker::Tsc => "tsc",
            Checker::Eslint => "eslint",
            Checker::Ruff => "ruff",
            Checker::PyCompile => "python3",
            Checker::GoVet => "go",
        }
    }

    /// How to get it, for the "missing" list.
    pub fn install_hint(self) -> &'static str {
        match self {
            Checker::Cargo => "install Rust with rustup (https://rustup.rs)",
            Checker::Tsc => "npm install --save-dev typescript (in the project)",
            Checker::Eslint => "npm install --save-dev eslint (in the project)",
            Checker::Ruff => "pip install ruff (or pipx install ruff)",
            Checker::PyCompile => "apt-get install python3",
            Checker::GoVet => "apt-get install golang-go (or https://go.dev/dl)",
        }
    }

    /// Checkers that come with the project's own `node_modules/.bin` or virtualenv.
    fn local_dirs(self) -> &'static [&'static str] {
        match self {
            Checker::Tsc | Checker::Eslint => &["node_modules/.bin"],
            Checker::Ruff | Checker::PyCompile => &[".venv/bin", "venv/bin"],
            _ => &[],
        }
    }
}

/// The search path for checkers: `LANTERN_CHECKER_PATH` when set (tests use it to make a
/// checker missing, or to add one), else `PATH` plus `~/.cargo/bin` (where rustup puts cargo,
/// often not on a desktop app's PATH).
pub fn search_path() -> String {
    if let Ok(p) = std::env::var("LANTERN_CHECKER_PATH") {
        return p;
    }
    let mut path = std::env::var("PATH").unwrap_or_default();
    let cargo_bin = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".cargo")))
        .map(|d| d.join("bin"));
    if let Some(bin) = cargo_bin {
        path.push(':');
        path.push_str(&bin.to_string_lossy());
    }
    path
}

/// Finds `checker` for the project at `project` (inside the workspace `root`): the project's
/// own local binaries first (`node_modules/.bin`, `.venv/bin`, in the project and each folder
/// above it up to the workspace root), then the search path.
pub fn locate(checker: Checker, root: &Path, project: &Path) -> Option<PathBuf> {
    for dir in project.ancestors() {
        if !dir.starts_with(root) {
            break;
        }
        for local in checker.local_dirs() {
            let candidate = dir.join(local).join(checker.program());
            if crate::exec::is_executable(&candidate) {
                return Some(candidate);
            }
        }
    }
    crate::exec::find_in(&search_path(), checker.program())
}

/// Turns a file name a checker printed into a workspace-relative path; `None` when it is
/// outside the workspace (a dependency's source, the standard library).
pub struct PathMap<'a> {
    pub root: &'a Path,
    /// Where the checker ran; relative names are relative to it.
    pub cwd: &'a Path,
}

impl PathMap<'_> {
    pub fn rel(&self, file: &str) -> Option<String> {
        let joined = self.cwd.join(file);
        let mut normal = PathBuf::new();
        for part in joined.components() {
            match part {
                Component::ParentDir => {
                    normal.pop();
                }
                Component::CurDir => {}
                other => normal.push(other),
            }
        }
        let rel = normal.strip_prefix(self.root).ok()?;
        let text = rel.to_string_lossy().replace('\\', "/");
        (!text.is_empty()).then_some(text)
    }
}

fn u32_of(value: &Value) -> Option<u32> {
    value.as_u64().map(|n| n as u32)
}

/// `cargo check --message-format=json`: one JSON object per line; compiler messages carry
/// spans, the primary one is where the diagnostic is.
pub fn parse_cargo(stdout: &str, paths: &PathMap<'_>) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    for line in stdout.lines() {
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if record["reason"] != "compiler-message" {
            continue;
        }
        let message = &record["message"];
        let severity = match message["level"].as_str().unwrap_or_default() {
            l if l.starts_with("error") => Severity::Error,
            "warning" => Severity::Warning,
            "note" => Severity::Info,
            "help" => Severity::Hint,
            _ => continue,
        };
        let Some(span) = message["spans"]
            .as_array()
            .and_then(|spans| spans.iter().find(|s| s["is_primary"] == true))
        else {
            // "aborting due to …", "N warnings emitted": summaries, not findings.
            continue;
        };
        let Some(path) = span["file_name"].as_str().and_then(|f| paths.rel(f)) else {
            continue;
        };
        found.push(Diagnostic {
            path,
            line: u32_of(&span["line_start"]).unwrap_or(1),
            column: u32_of(&span["column_start"]).unwrap_or(1),
            end_line: u32_of(&span["line_end"]),
            end_column: u32_of(&span["column_end"]),
            severity,
            code: message["code"]["code"].as_str().map(str::to_string),
            message: message["message"].as_str().unwrap_or_default().to_string(),
            source: "cargo".to_string(),
        });
    }
    found
}

/// `tsc --noEmit --pretty false`: `file(line,col): error TS2322: message`, with continuation
/// lines indented under it.
pub fn parse_tsc(stdout: &str, paths: &PathMap<'_>) -> Vec<Diagnostic> {
    let mut found: Vec<Diagnostic> = Vec::new();
    for line in stdout.lines() {
        if line.starts_with(' ') {
            if let Some(last) = found.last_mut() {
                last.message.push('\n');
                last.message.push_str(line.trim());
            }
            continue;
        }
        let Some((location, rest)) = line.split_once("): ") else {
            continue;
        };
        let Some((file, position)) = location.rsplit_once('(') else {
            continue;
        };
        let mut numbers = position.split(',').map(|n| n.trim().parse::<u32>());
        let (Some(Ok(line_no)), Some(Ok(column))) = (numbers.next(), numbers.next()) else {
            continue;
        };
        let (kind, rest) = rest.split_once(' ').unwrap_or((rest, ""));
        let severity = match kind {
            "error" => Severity::Error,
            "warning" => Severity::Warning,
            "message" => Severity::Info,
            _ => continue,
        };
        let (code, message) = match rest.split_once(": ") {
            Some((code, message)) if code.starts_with("TS") => (Some(code.to_string()), message),
            _ => (None, rest),
        };
        let Some(path) = paths.rel(file) else {
            continue;
        };
        found.push(Diagnostic {
            path,
            line: line_no,
            column,
            end_line: None,
            end_column: None,
            severity,
            code,
            message: message.to_string(),
            source: "tsc".to_string(),
        });
    }
    found
}

/// `eslint -f json`: per file, its messages (severity 2 = error, 1 = warning).
pub fn parse_eslint(stdout: &str, paths: &PathMap<'_>) -> Vec<Diagnostic> {
    let Ok(Value::Array(files)) = serde_json::from_str::<Value>(stdout.trim()) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for file in files {
        let Some(path) = file["filePath"].as_str().and_then(|f| paths.rel(f)) else {
            continue;
        };
        for m in file["messages"].as_array().into_iter().flatten() {
            found.push(Diagnostic {
                path: path.clone(),
                line: u32_of(&m["line"]).unwrap_or(1),
                column: u32_of(&m["column"]).unwrap_or(1),
                end_line: u32_of(&m["endLine"]),
                end_column: u32_of(&m["endColumn"]),
                severity: if m["severity"] == 2 {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                code: m["ruleId"].as_str().map(str::to_string),
                message: m["message"].as_str().unwrap_or_default().to_string(),
                source: "eslint".to_string(),
            });
        }
    }
    found
}

/// Ruff's rules that mean the code cannot work as written; reported as errors. Every other
/// rule is a warning.
fn ruff_is_error(code: Option<&str>, message: &str) -> bool {
    match code {
        // Syntax errors have no rule code (older ruff: E999).
        None | Some("E999") | Some("invalid-syntax") => true,
        // Undefined names, undefined exports, names used before assignment.
        Some("F821") | Some("F822") | Some("F823") => true,
        _ => message.starts_with("SyntaxError"),
    }
}

/// `ruff check --output-format=json`: an array of findings with absolute file names.
pub fn parse_ruff(stdout: &str, paths: &PathMap<'_>) -> Vec<Diagnostic> {
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(stdout.trim()) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for item in items {
        let Some(path) = item["filename"].as_str().and_then(|f| paths.rel(f)) else {
            continue;
        };
        let code = item["code"].as_str();
        let message = item["message"].as_str().unwrap_or_default();
        found.push(Diagnostic {
            path,
            line: u32_of(&item["location"]["row"]).unwrap_or(1),
            column: u32_of(&item["location"]["column"]).unwrap_or(1),
            end_line: u32_of(&item["end_location"]["row"]),
            end_column: u32_of(&item["end_location"]["column"]),
            severity: if ruff_is_error(code, message) {
                Severity::Error
            } else {
                Severity::Warning
            },
            code: Some(code.unwrap_or("invalid-syntax").to_string()),
            message: message.to_string(),
            source: "ruff".to_string(),
        });
    }
    found
}

/// The script the Python fallback runs: compiles each file as `py_compile` does and prints
/// one JSON line per syntax error.
pub const PY_COMPILE_SCRIPT: &str = r#"
import json, sys
for p in sys.argv[1:]:
    try:
        with open(p, 'rb') as f:
            compile(f.read(), p, 'exec', dont_inherit=True)
    except SyntaxError as e:
        print(json.dumps({"path": p, "line": e.lineno or 1, "column": e.offset or 1,
                          "end_line": getattr(e, 'end_lineno', None),
                          "end_column": getattr(e, 'end_offset', None),
                          "message": e.msg, "code": type(e).__name__}))
    except (ValueError, OSError) as e:
        print(json.dumps({"path": p, "line": 1, "column": 1, "message": str(e),
                          "code": type(e).__name__}))
"#;

pub fn parse_py_compile(stdout: &str, paths: &PathMap<'_>) -> Vec<Diagnostic> {
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|v| {
            Some(Diagnostic {
                path: paths.rel(v["path"].as_str()?)?,
                line: u32_of(&v["line"]).unwrap_or(1).max(1),
                column: u32_of(&v["column"]).unwrap_or(1).max(1),
                end_line: u32_of(&v["end_line"]),
                end_column: u32_of(&v["end_column"]),
                severity: Severity::Error,
                code: v["code"].as_str().map(str::to_string),
                message: v["message"].as_str().unwrap_or_default().to_string(),
                source: "py_compile".to_string(),
            })
        })
        .collect()
}

/// `go vet -json`: on stderr, `# package` lines, then per package a JSON object of analyzer →
/// findings (`posn` is `file:line:col`). Code that does not compile is reported as plain
/// `file:line:col: message` lines instead; those are errors.
pub fn parse_go_vet(stderr: &str, paths: &PathMap<'_>) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    let mut block = String::new();
    let mut depth = 0i32;
    for line in stderr.lines() {
        if depth == 0 && !line.starts_with('{') {
            let text = line.strip_prefix("vet: ").unwrap_or(line);
            if let Some(d) = go_position_line(text, paths, Severity::Error, None) {
                found.push(d);
            }
            continue;
        }
        block.push_str(line);
        block.push('\n');
        depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
        if depth > 0 {
            continue;
        }
        depth = 0;
        if let Ok(Value::Object(packages)) = serde_json::from_str::<Value>(&block) {
            for analyzers in packages.values() {
                let Some(analyzers) = analyzers.as_object() else {
                    continue;
                };
                for (analyzer, findings) in analyzers {
                    for f in findings.as_array().into_iter().flatten() {
                        let posn = f["posn"].as_str().unwrap_or_default();
                        let text = format!("{posn}: {}", f["message"].as_str().unwrap_or_default());
                        if let Some(d) =
                            go_position_line(&text, paths, Severity::Warning, Some(analyzer))
                        {
                            found.push(d);
                        }
                    }
                }
            }
        }
        block.clear();
    }
    found
}

/// `file.go:12:3: message` (the column is optional).
fn go_position_line(
    text: &str,
    paths: &PathMap<'_>,
    severity: Severity,
    code: Option<&str>,
) -> Option<Diagnostic> {
    let go_at = text.find(".go:")?;
    let file = &text[..go_at + 3];
    let (line, after) = text[go_at + 4..].split_once(':')?;
    let line: u32 = line.trim().parse().ok()?;
    let (column, message) = match after.split_once(':') {
        Some((c, m)) if c.trim().parse::<u32>().is_ok() => (c.trim().parse().unwrap_or(1), m),
        _ => (1, after),
    };
    Some(Diagnostic {
        path: paths.rel(file.trim())?,
        line,
        column,
        end_line: None,
        end_column: None,
        severity,
        code: code.map(str::to_string),
        message: message.trim().to_string(),
        source: "go_vet".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map() -> PathMap<'static> {
        PathMap {
            root: Path::new("/w"),
            cwd: Path::new("/w/app"),
        }
    }

    #[test]
    fn paths_map_into_the_workspace_only() {
        let m = map();
        assert_eq!(m.rel("src/a.rs").as_deref(), Some("app/src/a.rs"));
        assert_eq!(m.rel("/w/app/./x.py").as_deref(), Some("app/x.py"));
        assert_eq!(m.rel("../lib/b.ts").as_deref(), Some("lib/b.ts"));
        assert_eq!(m.rel("/home/u/.cargo/registry/x.rs"), None);
        assert_eq!(m.rel("../../etc/passwd"), None);
    }

    #[test]
    fn cargo_messages() {
        let out = r#"{"reason":"compiler-artifact","target":{}}
{"reason":"compiler-message","message":{"level":"error","message":"mismatched types","code":{"code":"E0308","explanation":"x"},"spans":[{"file_name":"src/lib.rs","line_start":3,"line_end":3,"column_start":18,"column_end":25,"is_primary":true}]}}
{"reason":"compiler-message","message":{"level":"error","message":"aborting due to 1 previous error","code":null,"spans":[]}}
{"reason":"compiler-message","message":{"level":"warning","message":"in a dependency","code":null,"spans":[{"file_name":"/home/u/.cargo/registry/src/x/lib.rs","line_start":1,"line_end":1,"column_start":1,"column_end":2,"is_primary":true}]}}
not json"#;
        let found = parse_cargo(out, &map());
        assert_eq!(found.len(), 1);
        let d = &found[0];
        assert_eq!(
            (
                d.path.as_str(),
                d.line,
                d.column,
                d.severity,
                d.code.as_deref()
            ),
            ("app/src/lib.rs", 3, 18, Severity::Error, Some("E0308"))
        );
        assert_eq!(d.end_column, Some(25));
    }

    #[test]
    fn tsc_lines() {
        let out = "src/index.ts(4,7): error TS2322: Type 'string' is not assignable to type 'number'.\n  Details follow.\nsrc/b.ts(1,1): warning TS6133: 'x' is declared but its value is never read.\nFound 2 errors.\n";
        let found = parse_tsc(out, &map());
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].path, "app/src/index.ts");
        assert_eq!((found[0].line, found[0].column), (4, 7));
        assert_eq!(found[0].code.as_deref(), Some("TS2322"));
        assert!(found[0].message.ends_with("\nDetails follow."));
        assert_eq!(found[1].severity, Severity::Warning);
    }

    #[test]
    fn eslint_json() {
        let out = r#"[{"filePath":"/w/app/a.js","messages":[{"ruleId":"no-unused-vars","severity":2,"message":"'x' is unused","line":1,"column":7,"endLine":1,"endColumn":8},{"ruleId":"semi","severity":1,"message":"Missing semicolon","line":2,"column":3}]}]"#;
        let found = parse_eslint(out, &map());
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].severity, Severity::Error);
        assert_eq!(found[1].severity, Severity::Warning);
        assert_eq!(found[1].code.as_deref(), Some("semi"));
    }

    #[test]
    fn ruff_json() {
        let out = r#"[{"code":"F821","message":"Undefined name `y`","filename":"/w/app/m.py","location":{"row":5,"column":12},"end_location":{"row":5,"column":13}},{"code":null,"message":"SyntaxError: Expected ':'","filename":"/w/app/s.py","location":{"row":1,"column":9},"end_location":{"row":1,"column":9}},{"code":"F401","message":"`os` imported but unused","filename":"/w/app/m.py","location":{"row":1,"column":8},"end_location":{"row":1,"column":10}}]"#;
        let found = parse_ruff(out, &map());
        assert_eq!(found.len(), 3);
        assert_eq!(found[0].severity, Severity::Error);
        assert_eq!(found[1].code.as_deref(), Some("invalid-syntax"));
        assert_eq!(found[1].severity, Severity::Error);
        assert_eq!(found[2].severity, Severity::Warning);
    }

    #[test]
    fn go_vet_json_and_compile_errors() {
        let out = "# example.com/m\n{\n\t\"example.com/m\": {\n\t\t\"printf\": [\n\t\t\t{\n\t\t\t\t\"posn\": \"/w/app/main.go:7:2\",\n\t\t\t\t\"message\": \"fmt.Printf format %d has arg s of wrong type string\"\n\t\t\t}\n\t\t]\n\t}\n}\n# example.com/m/b\nvet: b/b.go:3:9: undefined: y\n";
        let found = parse_go_vet(out, &map());
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].path, "app/main.go");
        assert_eq!((found[0].line, found[0].column), (7, 2));
        assert_eq!(found[0].code.as_deref(), Some("printf"));
        assert_eq!(found[0].severity, Severity::Warning);
        assert_eq!(found[1].path, "app/b/b.go");
        assert_eq!(found[1].severity, Severity::Error);
        assert_eq!(found[1].message, "undefined: y");
    }
}
