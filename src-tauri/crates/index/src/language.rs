//! The languages the index reads: which files are written in them, their grammar, and the
//! query that finds their definitions and references.

use serde::{Deserialize, Serialize};
use std::sync::OnceLock;
use tree_sitter::Query;

/// A language the index can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Rust,
    Python,
    JavaScript,
    TypeScript,
    /// TypeScript with JSX: a grammar of its own.
    Tsx,
    Go,
}

impl Language {
    /// Every language, in a fixed order.
    pub const ALL: [Language; 6] = [
        Language::Rust,
        Language::Python,
        Language::JavaScript,
        Language::TypeScript,
        Language::Tsx,
        Language::Go,
    ];

    /// The language a file is written in, by its extension.
    pub fn of_path(path: &str) -> Option<Language> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let (_, ext) = name.rsplit_once('.')?;
        Some(match ext {
            "rs" => Language::Rust,
            "py" | "pyi" => Language::Python,
            "js" | "jsx" | "mjs" | "cjs" => Language::JavaScript,
            // A declaration file (`index.d.ts`) is TypeScript too.
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "go" => Language::Go,
            _ => return None,
        })
    }

    /// The language's name as users write it.
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "Rust",
            Language::Python => "Python",
            Language::JavaScript => "JavaScript",
            Language::TypeScript => "TypeScript",
            Language::Tsx => "TSX",
            Language::Go => "Go",
        }
    }

    pub(crate) fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
        }
    }

    /// The query's source: our own patterns, written for the kinds the index reports (the
    /// grammars' own tag queries call a Rust struct and enum both a "class" and leave Go's
    /// structs and constants out). TypeScript is JavaScript plus its own declarations.
    pub(crate) fn query_source(self) -> String {
        const RUST: &str = include_str!("../queries/rust.scm");
        const PYTHON: &str = include_str!("../queries/python.scm");
        const JAVASCRIPT: &str = include_str!("../queries/javascript.scm");
        const JAVASCRIPT_ONLY: &str = include_str!("../queries/javascript-only.scm");
        const TYPESCRIPT: &str = include_str!("../queries/typescript.scm");
        const GO: &str = include_str!("../queries/go.scm");
        match self {
            Language::Rust => RUST.to_string(),
            Language::Python => PYTHON.to_string(),
            Language::JavaScript => format!("{JAVASCRIPT}\n{JAVASCRIPT_ONLY}"),
            Language::TypeScript | Language::Tsx => format!("{JAVASCRIPT}\n{TYPESCRIPT}"),
            Language::Go => GO.to_string(),
        }
    }

    /// The compiled query, made once per language.
    pub(crate) fn query(self) -> &'static Query {
        static QUERIES: [OnceLock<Query>; 6] = [const { OnceLock::new() }; 6];
        let slot = Language::ALL.iter().position(|l| *l == self).unwrap_or(0);
        QUERIES[slot].get_or_init(|| {
            Query::new(&self.grammar(), &self.query_source())
                .unwrap_or_else(|e| panic!("the {} query compiles: {e}", self.name()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_compiles_against_its_grammar() {
        for language in Language::ALL {
            assert!(language.query().pattern_count() > 0, "{}", language.name());
        }
    }

    #[test]
    fn files_are_told_apart_by_extension() {
        assert_eq!(Language::of_path("src/lib.rs"), Some(Language::Rust));
        assert_eq!(
            Language::of_path("types/index.d.ts"),
            Some(Language::TypeScript)
        );
        assert_eq!(Language::of_path("ui/App.tsx"), Some(Language::Tsx));
        assert_eq!(Language::of_path("cmd/main.go"), Some(Language::Go));
        assert_eq!(Language::of_path("README.md"), None);
        assert_eq!(Language::of_path("Makefile"), None);
        assert_eq!(Language::of_path("a.b/Makefile"), None);
    }
}
