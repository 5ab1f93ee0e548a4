use super::{u32_of, PathMap};
use crate::diagnostics::{Diagnostic, Severity};
use serde_json::Value;

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
