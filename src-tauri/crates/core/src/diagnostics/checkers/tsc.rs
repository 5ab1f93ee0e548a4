use super::PathMap;
use crate::diagnostics::{Diagnostic, Severity};

/// `tsc --noEmit --pretty false`: `file(line,col): error TS2322: message`, with continuation
/// lines indented under it.
pub fn parse_tsc(stdout: &str, paths: &PathMap<'_>) -> Vec<Diagnostic> {
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
            Some((code, message)) if code.starts_with("TS") => (Some(code.to_string()), message),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::checkers::tests::map;
    use crate::diagnostics::Severity;

    #[test]
    fn tsc_lines() {
        let out = "src/index.ts(4,7): error TS2322: Type 'string' is not assignable to type 'number'.\n  Details follow.\nsrc/b.ts(1,1): warning TS6133: 'x' is declared but its value is never read.\nFound 2 errors.\n";
        let found = parse_tsc(out, &map());
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].path, "app/src/index.ts");
        assert_eq!((found[0].line, found[0].column), (4, 7));
        assert_eq!(found[0].code.as_deref(), Some("TS2322"));
        assert!(found[0].message.ends_with("\nDetails follow."));
        assert_eq!(found[1].severity, Severity::Warning);
    }
}
