//! ESLint: script packages whose `package.json` folder configures it.

use super::tsc::SCRIPT_CONFIG_FILES;
use crate::diagnostics::checker::{u32_of, Checker, PathMap, Scope};
use crate::diagnostics::detect::{marker_dirs, outermost, read_text};
use crate::diagnostics::{Diagnostic, Language, Severity};
use crate::sandbox::Workspace;
use serde_json::Value;

/// The configuration files ESLint reads, flat and legacy.
const ESLINT_CONFIGS: &[&str] = &[
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
    "eslint.config.ts",
    ".eslintrc",
    ".eslintrc.js",
    ".eslintrc.cjs",
    ".eslintrc.json",
    ".eslintrc.yml",
    ".eslintrc.yaml",
];

pub(super) struct Eslint;

impl Checker for Eslint {
    fn name(&self) -> &'static str {
        "eslint"
    }

    fn program(&self) -> &'static str {
        "eslint"
    }

    fn install_hint(&self) -> &'static str {
        "npm install --save-dev eslint (in the project)"
    }

    fn language(&self) -> Language {
        Language::Script
    }

    fn config_files(&self) -> &'static [&'static str] {
        SCRIPT_CONFIG_FILES
    }

    /// Only packages that configure ESLint: without a configuration it has no rules to apply.
    fn projects(&self, ws: &Workspace, files: &[String]) -> Vec<String> {
        let configured: Vec<String> = marker_dirs(files, &["package.json"])
            .into_iter()
            .filter(|d| has_eslint_config(ws, d))
            .collect();
        outermost(configured)
    }

    fn local_dirs(&self) -> &'static [&'static str] {
        &["node_modules/.bin"]
    }

    fn args(&self, scope: &Scope<'_>) -> Vec<String> {
        let mut args = ["-f", "json", "--no-color"].map(String::from).to_vec();
        args.push(scope.file_or_project());
        args
    }

    /// 1: it ran and found errors (2 is a configuration or internal error).
    fn exit_is_clean(&self, code: Option<i32>) -> bool {
        matches!(code, Some(0) | Some(1))
    }

    /// `eslint -f json`: per file, its messages (severity 2 = error, 1 = warning).
    fn parse(&self, stdout: &str, _stderr: &str, paths: &PathMap<'_>) -> Vec<Diagnostic> {
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
}

/// A configuration file in `dir`, or an `eslintConfig` key in its `package.json`.
fn has_eslint_config(ws: &Workspace, dir: &str) -> bool {
    let exists = |name: &str| {
        let rel = if dir == "." {
            name.to_string()
        } else {
            format!("{dir}/{name}")
        };
        ws.resolve(&rel).map(|p| p.exists()).unwrap_or(false)
    };
    if ESLINT_CONFIGS.iter().any(|c| exists(c)) {
        return true;
    }
    let package = if dir == "." {
        "package.json".to_string()
    } else {
        format!("{dir}/package.json")
    };
    read_text(ws, &package)
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .is_some_and(|v| v.get("eslintConfig").is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::checker::tests::map;

    #[test]
    fn eslint_json() {
        let out = r#"[{"filePath":"/w/app/a.js","messages":[{"ruleId":"no-unused-vars","severity":2,"message":"'x' is unused","line":1,"column":7,"endLine":1,"endColumn":8},{"ruleId":"semi","severity":1,"message":"Missing semicolon","line":2,"column":3}]}]"#;
        let found = Eslint.parse(out, "", &map());
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].severity, Severity::Error);
        assert_eq!(found[1].severity, Severity::Warning);
        assert_eq!(found[1].code.as_deref(), Some("semi"));
    }
}
