use super::{u32_of, PathMap};
use crate::diagnostics::{Diagnostic, Severity};
use serde_json::Value;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::checkers::tests::map;
    use crate::diagnostics::Severity;

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
}
