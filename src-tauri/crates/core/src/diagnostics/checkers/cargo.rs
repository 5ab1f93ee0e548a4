use super::{u32_of, PathMap};
use crate::diagnostics::{Diagnostic, Severity};
use serde_json::Value;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::checkers::tests::map;
    use crate::diagnostics::Severity;

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
}
