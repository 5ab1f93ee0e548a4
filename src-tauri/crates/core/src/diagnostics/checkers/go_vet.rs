//! `go vet`: Go modules, found by their `go.mod`.

use crate::diagnostics::checker::{Checker, PathMap, Scope};
use crate::diagnostics::detect::{marker_dirs, outermost, parent_of};
use crate::diagnostics::{Diagnostic, Language, Severity};
use crate::exec::profile::PrivateDirs;
use crate::sandbox::Workspace;
use serde_json::Value;

pub(super) struct GoVet;

impl Checker for GoVet {
    fn name(&self) -> &'static str {
        "go_vet"
    }

    fn program(&self) -> &'static str {
        "go"
    }

    fn install_hint(&self) -> &'static str {
        "apt-get install golang-go (or https://go.dev/dl)"
    }

    fn language(&self) -> Language {
        Language::Go
    }

    fn config_files(&self) -> &'static [&'static str] {
        &["go.mod", "go.sum"]
    }

    fn projects(&self, _ws: &Workspace, files: &[String]) -> Vec<String> {
        outermost(marker_dirs(files, &["go.mod"]))
    }

    /// Go never fetches a newer toolchain than the installed one, also where the sandbox is
    /// unavailable.
    fn env(&self, _private: &PrivateDirs) -> Vec<(&'static str, String)> {
        vec![("GOTOOLCHAIN", "local".to_string())]
    }

    /// Go vets packages, not files: narrowed to a file, its folder's package.
    fn args(&self, scope: &Scope<'_>) -> Vec<String> {
        let packages = match scope.file {
            Some(f) => match parent_of(&scope.local(f)) {
                "." => ".".to_string(),
                d => format!("./{d}"),
            },
            None => "./...".to_string(),
        };
        vec!["vet".to_string(), "-json".to_string(), packages]
    }

    /// `go vet -json`: on stderr, `# package` lines, then per package a JSON object of analyzer →
    /// findings (`posn` is `file:line:col`). Code that does not compile is reported as plain
    /// `file:line:col: message` lines instead; those are errors.
    fn parse(&self, _stdout: &str, stderr: &str, paths: &PathMap<'_>) -> Vec<Diagnostic> {
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
                            let text =
                                format!("{posn}: {}", f["message"].as_str().unwrap_or_default());
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
    use crate::diagnostics::checker::tests::map;

    #[test]
    fn go_vet_json_and_compile_errors() {
        let out = "# example.com/m\n{\n\t\"example.com/m\": {\n\t\t\"printf\": [\n\t\t\t{\n\t\t\t\t\"posn\": \"/w/app/main.go:7:2\",\n\t\t\t\t\"message\": \"fmt.Printf format %d has arg s of wrong type string\"\n\t\t\t}\n\t\t]\n\t}\n}\n# example.com/m/b\nvet: b/b.go:3:9: undefined: y\n";
        let found = GoVet.parse("", out, &map());
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
