use super::detect::{inside, outermost};
use super::run::difference;
use super::*;

fn d(path: &str, line: u32, message: &str) -> Diagnostic {
    Diagnostic {
        path: path.into(),
        line,
        column: 1,
        end_line: None,
        end_column: None,
        severity: Severity::Error,
        code: None,
        message: message.into(),
        source: "t".into(),
    }
}

#[test]
fn differences_ignore_moved_lines() {
    let before = [d("a", 1, "x"), d("a", 5, "y")];
    let now = [d("a", 2, "x"), d("a", 9, "z")];
    let (new, resolved) = difference(&before, &now);
    assert_eq!(new, vec![d("a", 9, "z")]);
    assert_eq!(resolved, 1);
}

#[test]
fn outermost_markers_win() {
    assert_eq!(
        outermost(vec!["a/b".into(), "a".into(), "c".into(), "ab".into()]),
        vec!["a".to_string(), "ab".into(), "c".into()]
    );
    assert_eq!(
        outermost(vec![".".into(), "x".into()]),
        vec![".".to_string()]
    );
}

#[test]
fn inside_is_by_folder() {
    assert!(inside("src/a.rs", "."));
    assert!(inside("app/src/a.rs", "app"));
    assert!(!inside("apple/a.rs", "app"));
}
