//! Python's own compiler, as `python3 -m py_compile` runs it: the syntax errors of Python
//! files where ruff is not installed.

use crate::diagnostics::checker::{u32_of, Checker, PathMap, Scope};
use crate::diagnostics::detect::inside;
use crate::diagnostics::{Diagnostic, Language, Severity, MAX_SYNTAX_FILES};
use crate::exec::profile::PrivateDirs;
use crate::sandbox::Workspace;
use serde_json::Value;

/// Files of a Python project whose content changes what its checkers report.
pub(super) const PYTHON_CONFIG_FILES: &[&str] =
    &["pyproject.toml", "setup.cfg", "ruff.toml", ".ruff.toml"];

/// Where a Python project keeps its own tools: its virtualenv.
pub(super) const PYTHON_LOCAL_DIRS: &[&str] = &[".venv/bin", "venv/bin"];

/// The script it runs: compiles each file as `py_compile` does and prints one JSON line per
/// syntax error.
const PY_COMPILE_SCRIPT: &str = r#"
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

pub(super) struct PyCompile;

impl Checker for PyCompile {
    fn name(&self) -> &'static str {
        "py_compile"
    }

    fn program(&self) -> &'static str {
        "python3"
    }

    fn install_hint(&self) -> &'static str {
        "apt-get install python3"
    }

    fn language(&self) -> Language {
        Language::Python
    }

    fn config_files(&self) -> &'static [&'static str] {
        PYTHON_CONFIG_FILES
    }

    /// None of its own: it checks ruff's projects where ruff is missing (ruff's fallback).
    fn projects(&self, _ws: &Workspace, _files: &[String]) -> Vec<String> {
        Vec::new()
    }

    fn local_dirs(&self) -> &'static [&'static str] {
        PYTHON_LOCAL_DIRS
    }

    /// Checking leaves no `__pycache__` behind, also where the sandbox is unavailable.
    fn env(&self, _private: &PrivateDirs) -> Vec<(&'static str, String)> {
        vec![("PYTHONDONTWRITEBYTECODE", "1".to_string())]
    }

    /// Isolated (`-I`): the project's folder is not on the import path, so a `json.py` in the
    /// workspace is never imported by the compiler script.
    fn args(&self, scope: &Scope<'_>) -> Vec<String> {
        let mut args = ["-I", "-c", PY_COMPILE_SCRIPT].map(String::from).to_vec();
        match scope.file {
            Some(f) => args.push(scope.local(f)),
            None => args.extend(
                scope
                    .files
                    .iter()
                    .filter(|f| inside(f, scope.dir) && Language::of(f) == Some(Language::Python))
                    .take(MAX_SYNTAX_FILES)
                    .map(|f| scope.local(f)),
            ),
        }
        args
    }

    /// The script elided: it is long and always the same.
    fn shown_args(&self, args: &[String]) -> Vec<String> {
        let mut shown = args.to_vec();
        shown[2] = "<compile each file>".to_string();
        shown
    }

    /// The script's JSON lines.
    fn parse(&self, stdout: &str, _stderr: &str, paths: &PathMap<'_>) -> Vec<Diagnostic> {
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
}
