//! The last resort: a syntax check with tree-sitter grammars, for files whose language has no
//! checker installed (or none at all, like JSON, TOML and YAML). Reported as `source: "syntax"`.

use super::{Diagnostic, Severity};
use tree_sitter::{Language, Node, Parser};

/// Most syntax errors reported per file: after the first few, the rest are usually echoes.
const MAX_PER_FILE: usize = 10;

/// The grammar for a file name, by its extension.
pub fn grammar_for(path: &str) -> Option<Language> {
    // `CI.YML` is YAML too: the extension is read whatever its case.
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "rs" => tree_sitter_rust::LANGUAGE.into(),
        "ts" | "mts" | "cts" => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        "tsx" => tree_sitter_typescript::LANGUAGE_TSX.into(),
        "js" | "jsx" | "mjs" | "cjs" => tree_sitter_javascript::LANGUAGE.into(),
        "py" | "pyi" => tree_sitter_python::LANGUAGE.into(),
        "go" => tree_sitter_go::LANGUAGE.into(),
        "json" => tree_sitter_json::LANGUAGE.into(),
        "toml" => tree_sitter_toml_ng::LANGUAGE.into(),
        "yml" | "yaml" => tree_sitter_yaml::LANGUAGE.into(),
        _ => return None,
    })
}

/// Syntax errors in `text`, the content of the workspace file `rel`. Empty when the grammar
/// parses it cleanly or when there is no grammar for it.
pub fn check(rel: &str, text: &str) -> Vec<Diagnostic> {
    let Some(language) = grammar_for(rel) else {
        return Vec::new();
    };
    let mut parser = Parser::new();
    if parser.set_language(&language).is_err() {
        return Vec::new();
    }
    let Some(tree) = parser.parse(text, None) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    if tree.root_node().has_error() {
        collect(tree.root_node(), rel, text, &mut found);
    }
    found
}

fn collect(node: Node<'_>, rel: &str, text: &str, found: &mut Vec<Diagnostic>) {
    if found.len() >= MAX_PER_FILE {
        return;
    }
    if node.is_missing() {
        found.push(diagnostic(
            rel,
            text,
            node,
            format!("syntax error: missing `{}`", node.kind()),
            "missing",
        ));
        return;
    }
    if node.is_error() {
        let snippet: String = text
            .get(node.start_byte()..node.end_byte())
            .unwrap_or_default()
            .chars()
            .take(30)
            .collect();
        let snippet = snippet.split('\n').next().unwrap_or_default().trim();
        let message = if snippet.is_empty() {
            "syntax error".to_string()
        } else {
            format!("syntax error: unexpected `{snippet}`")
        };
        found.push(diagnostic(rel, text, node, message, "error"));
        return;
    }
    if !node.has_error() {
        return;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        collect(child, rel, text, found);
    }
}

/// 1-based column in characters of a byte position on its line.
fn char_column(text: &str, byte: usize) -> u32 {
    // A position inside a character (tree-sitter counts bytes) is the character it is in.
    let mut end = byte.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let line_start = text[..end].rfind('\n').map(|i| i + 1).unwrap_or(0);
    text[line_start..end].chars().count() as u32 + 1
}

fn diagnostic(rel: &str, text: &str, node: Node<'_>, message: String, code: &str) -> Diagnostic {
    Diagnostic {
        path: rel.to_string(),
        line: node.start_position().row as u32 + 1,
        column: char_column(text, node.start_byte()),
        end_line: Some(node.end_position().row as u32 + 1),
        end_column: Some(char_column(text, node.end_byte())),
        severity: Severity::Error,
        code: Some(code.to_string()),
        message,
        source: "syntax".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_files_have_no_errors() {
        for (path, text) in [
            ("a.rs", "fn main() { let x = 1; }\n"),
            ("a.ts", "const x: number = 1;\nexport {x};\n"),
            ("a.tsx", "const e = <div>hi</div>;\n"),
            ("a.js", "function f(a) { return a + 1; }\n"),
            ("a.py", "def f(x):\n    return x\n"),
            ("a.go", "package main\n\nfunc main() {}\n"),
            ("a.json", "{\"a\": [1, 2]}\n"),
            ("a.toml", "[package]\nname = \"x\"\n"),
        ] {
            assert_eq!(check(path, text), vec![], "{path}");
        }
    }

    #[test]
    fn broken_files_are_reported_with_positions() {
        for (path, text, line) in [
            ("a.rs", "fn main() {\n    let x = ;\n}\n", 2),
            ("a.ts", "let y = 1;\nconst x: number = (1 + ;\n", 2),
            ("a.js", "function f( {\n}\n", 1),
            ("a.py", "def f(x)\n    return x\n", 1),
            ("a.go", "package main\n\nfunc main() {\n  x := \n}\n", 4),
            ("a.json", "{\"a\": [1, 2,]}\n", 1),
            ("a.toml", "[package\nname = \"x\"\n", 1),
        ] {
            let found = check(path, text);
            assert!(!found.is_empty(), "{path}: no error found");
            assert_eq!(found[0].source, "syntax");
            assert_eq!(found[0].severity, Severity::Error);
            assert!(
                found[0].line >= line && found[0].line <= line + 1,
                "{path}: {found:?}"
            );
        }
    }

    #[test]
    fn a_position_inside_a_character_counts_as_that_character() {
        // "aé": `é` is bytes 1..3; byte 2 is inside it, where tree-sitter may point.
        assert_eq!(char_column("aé", 2), 2);
        assert_eq!(char_column("x\naé", 4), 2);
        assert_eq!(char_column("aé", 3), 3);
    }

    #[test]
    fn other_files_are_not_checked() {
        assert_eq!(check("a.txt", "((("), vec![]);
    }
}
