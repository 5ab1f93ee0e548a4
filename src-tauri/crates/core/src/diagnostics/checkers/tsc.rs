//! `tsc`: TypeScript projects, found by their `tsconfig.json`.

use crate::diagnostics::checker::{Checker, PathMap, Scope};
use crate::diagnostics::detect::{marker_dirs, outermost};
use crate::diagnostics::{Diagnostic, Language, Severity};
use crate::sandbox::Workspace;

/// Files of a script package whose content changes what its checkers (tsc, ESLint) report.
pub(super) const SCRIPT_CONFIG_FILES: &[&str] = &[
    "package.json",
    "tsconfig.json",
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
];

pub(super) struct Tsc;

impl Checker for Tsc {
    fn name(&self) -> &'static str {
        "tsc"
    }

    fn program(&self) -> &'static str {
        "tsc"
    }

    fn install_hint(&self) -> &'static str {
        "npm install --save-dev typescript (in the project)"
    }

    fn language(&self) -> Language {
        Language::Script
    }

    fn config_files(&self) -> &'static [&'static str] {
        SCRIPT_CONFIG_FILES
    }

    fn projects(&self, _ws: &Workspace, files: &[String]) -> Vec<String> {
        outermost(marker_dirs(files, &["tsconfig.json"]))
    }

    fn local_dirs(&self) -> &'static [&'static str] {
        &["node_modules/.bin"]
    }

    // exit_is_clean is the default: tsc exits with 1 or 2 whenever it has findings, so without
    // findings only 0 is a clean run.

    /// The whole project as its `tsconfig.json` describes it: types cross files, so one file
    /// cannot be checked alone.
    fn args(&self, _scope: &Scope<'_>) -> Vec<String> {
        ["--noEmit", "--pretty", "false", "-p", "."]
            .map(String::from)
            .to_vec()
    }

    /// `tsc --noEmit --pretty false`: `file(line,col): error TS2322: message`, with continuation
    /// lines indented under it.
    fn parse(&self, stdout: &str, _stderr: &str, paths: &PathMap<'_>) -> Vec<Diagnostic> {
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
                Some((code, message)) if code.starts_with("TS") => {
                    (Some(code.to_string()), message)
                }
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::checker::tests::map;

    #[test]
    fn tsc_lines() {
        let out = "src/index.ts(4,7): error TS2322: Type 'string' is not assignable to type 'number'.\n  Details follow.\nsrc/b.ts(1,1): warning TS6133: 'x' is declared but its value is never read.\nFound 2 errors.\n";
        let found = Tsc.parse(out, "", &map());
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].path, "app/src/index.ts");
        assert_eq!((found[0].line, found[0].column), (4, 7));
        assert_eq!(found[0].code.as_deref(), Some("TS2322"));
        assert!(found[0].message.ends_with("\nDetails follow."));
        assert_eq!(found[1].severity, Severity::Warning);
    }
}
