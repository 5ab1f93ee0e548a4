use super::{u32_of, PathMap};
use crate::diagnostics::{Diagnostic, Severity};
use serde_json::Value;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::checkers::tests::map;
    use crate::diagnostics::Severity;

    #[test]
    fn eslint_json() {
        let out = r#"[{"filePath":"/w/app/a.js","messages":[{"ruleId":"no-unused-vars","severity":2,"message":"'x' is unused","line":1,"column":7,"endLine":1,"endColumn":8},{"ruleId":"semi","severity":1,"message":"Missing semicolon","line":2,"column":3}]}]"#;
        let found = parse_eslint(out, &map());
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].severity, Severity::Error);
        assert_eq!(found[1].severity, Severity::Warning);
        assert_eq!(found[1].code.as_deref(), Some("semi"));
    }
}
