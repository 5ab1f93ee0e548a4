//! `cargo check`: Rust projects, found by their `Cargo.toml`.

use crate::diagnostics::checker::{tail, u32_of, Checker, Note, PathMap, Scope, Setup};
use crate::diagnostics::detect::{marker_dirs, outermost};
use crate::diagnostics::{Diagnostic, Language, Severity};
use crate::exec::{self, profile::PrivateDirs};
use crate::sandbox::Workspace;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

pub(super) struct Cargo;

impl Checker for Cargo {
    fn name(&self) -> &'static str {
        "cargo"
    }

    fn program(&self) -> &'static str {
        "cargo"
    }

    fn install_hint(&self) -> &'static str {
        "install Rust with rustup (https://rustup.rs)"
    }

    fn language(&self) -> Language {
        Language::Rust
    }

    fn config_files(&self) -> &'static [&'static str] {
        &["Cargo.toml", "Cargo.lock", "build.rs"]
    }

    fn projects(&self, _ws: &Workspace, files: &[String]) -> Vec<String> {
        outermost(marker_dirs(files, &["Cargo.toml"]))
    }

    /// Build output goes to Lantern's folder for the workspace, never into the workspace, also
    /// where the sandbox is unavailable; Cargo stays offline and prints plain text.
    fn env(&self, private: &PrivateDirs) -> Vec<(&'static str, String)> {
        vec![
            (
                "CARGO_TARGET_DIR",
                private.cargo_target().to_string_lossy().into_owned(),
            ),
            ("CARGO_TERM_COLOR", "never".to_string()),
            ("CARGO_NET_OFFLINE", "true".to_string()),
        ]
    }

    /// Cargo cannot check a project without a lock file and writes one first. Resolving runs
    /// no project code, so that one step may write the workspace.
    fn prepare(&self, setup: &Setup<'_>) -> Option<Note> {
        if has_cargo_lock(setup.root, setup.cwd) {
            return None;
        }
        let lock = [
            setup.program.to_string(),
            "generate-lockfile".to_string(),
            "--offline".to_string(),
        ];
        let spec = exec::launch(setup.profile, setup.env, &lock).spec(
            setup.cwd,
            setup.remaining.min(Duration::from_secs(30)),
            64 * 1024,
        );
        let text = match exec::run(&spec) {
            Ok(f) if f.exit_code == Some(0) => {
                "Cargo.lock was missing; cargo generate-lockfile --offline wrote it".to_string()
            }
            Ok(f) => format!(
                "Cargo.lock is missing and could not be written offline: {}",
                tail(&f.stderr.text(), 400)
            ),
            Err(e) => format!("Cargo.lock is missing and cargo could not be started: {e}"),
        };
        Some(Note {
            field: "lockfile",
            text,
        })
    }

    /// The whole package: Cargo cannot check a single file.
    fn args(&self, _scope: &Scope<'_>) -> Vec<String> {
        ["check", "--message-format=json", "--quiet", "--color=never"]
            .map(String::from)
            .to_vec()
    }

    /// `cargo check --message-format=json`: one JSON object per line; compiler messages carry
    /// spans, the primary one is where the diagnostic is.
    fn parse(&self, stdout: &str, _stderr: &str, paths: &PathMap<'_>) -> Vec<Diagnostic> {
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
}

/// Whether a `Cargo.lock` exists in `cwd` or a folder above it inside the workspace.
fn has_cargo_lock(root: &Path, cwd: &Path) -> bool {
    cwd.ancestors()
        .take_while(|d| d.starts_with(root))
        .any(|d| d.join("Cargo.lock").is_file())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::checker::tests::map;

    #[test]
    fn cargo_messages() {
        let out = r#"{"reason":"compiler-artifact","target":{}}
{"reason":"compiler-message","message":{"level":"error","message":"mismatched types","code":{"code":"E0308","explanation":"x"},"spans":[{"file_name":"src/lib.rs","line_start":3,"line_end":3,"column_start":18,"column_end":25,"is_primary":true}]}}
{"reason":"compiler-message","message":{"level":"error","message":"aborting due to 1 previous error","code":null,"spans":[]}}
{"reason":"compiler-message","message":{"level":"warning","message":"in a dependency","code":null,"spans":[{"file_name":"/home/u/.cargo/registry/src/x/lib.rs","line_start":1,"line_end":1,"column_start":1,"column_end":2,"is_primary":true}]}}
not json"#;
        let found = Cargo.parse(out, "", &map());
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
}
