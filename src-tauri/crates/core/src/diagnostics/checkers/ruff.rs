//! Ruff: Python projects, found by `pyproject.toml`, `setup.cfg` or `setup.py`, else any
//! Python file; Python's own compiler runs in its place where it is missing.

use super::python::{PyCompile, PYTHON_CONFIG_FILES, PYTHON_LOCAL_DIRS};
use crate::diagnostics::checker::{u32_of, Checker, PathMap, Scope};
use crate::diagnostics::detect::{marker_dirs, outermost};
use crate::diagnostics::{Diagnostic, Language, Severity};
use crate::sandbox::Workspace;
use serde_json::Value;

pub(super) struct Ruff;

impl Checker for Ruff {
    fn name(&self) -> &'static str {
        "ruff"
    }

    fn program(&self) -> &'static str {
        "ruff"
    }

    fn install_hint(&self) -> &'static str {
        "pip install ruff (or pipx install ruff)"
    }

    fn language(&self) -> Language {
        Language::Python
    }

    fn config_files(&self) -> &'static [&'static str] {
        PYTHON_CONFIG_FILES
    }

    /// Python scripts need no project file, so without any the workspace root is the project
    /// when it has Python files at all.
    fn projects(&self, _ws: &Workspace, files: &[String]) -> Vec<String> {
        let mut dirs = outermost(marker_dirs(
            files,
            &["pyproject.toml", "setup.cfg", "setup.py"],
        ));
        if dirs.is_empty()
            && files
                .iter()
                .any(|f| Language::of(f) == Some(Language::Python))
        {
            dirs.push(".".to_string());
        }
        dirs
    }

    fn local_dirs(&self) -> &'static [&'static str] {
        PYTHON_LOCAL_DIRS
    }

    fn fallback(&self) -> Option<&'static dyn Checker> {
        Some(&PyCompile)
    }

    /// `--exit-zero`: findings are read from the output, and a non-zero exit then means it
    /// could not check.
    fn args(&self, scope: &Scope<'_>) -> Vec<String> {
        let mut args = [
            "check",
            "--output-format=json",
            "--no-cache",
            "--exit-zero",
            "--no-fix",
        ]
        .map(String::from)
        .to_vec();
        args.push(scope.file_or_project());
        args
    }

    /// `ruff check --output-format=json`: an array of findings with absolute file names.
    fn parse(&self, stdout: &str, _stderr: &str, paths: &PathMap<'_>) -> Vec<Diagnostic> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::checker::tests::map;

    #[test]
    fn ruff_json() {
        let out = r#"[{"code":"F821","message":"Undefined name `y`","filename":"/w/app/m.py","location":{"row":5,"column":12},"end_location":{"row":5,"column":13}},{"code":null,"message":"SyntaxError: Expected ':'","filename":"/w/app/s.py","location":{"row":1,"column":9},"end_location":{"row":1,"column":9}},{"code":"F401","message":"`os` imported but unused","filename":"/w/app/m.py","location":{"row":1,"column":8},"end_location":{"row":1,"column":10}}]"#;
        let found = Ruff.parse(out, "", &map());
        assert_eq!(found.len(), 3);
        assert_eq!(found[0].severity, Severity::Error);
        assert_eq!(found[1].code.as_deref(), Some("invalid-syntax"));
        assert_eq!(found[1].severity, Severity::Error);
        assert_eq!(found[2].severity, Severity::Warning);
    }
}
