//! What a project defines and uses, read structurally: a tree-sitter index of definitions and
//! references for Rust, Python, JavaScript, TypeScript and Go.
//!
//! [`symbols_of`] reads one file: every definition (function, method, class, struct, enum,
//! trait, interface, type, constant, module, macro) with its line range, its parent and its
//! signature line, and every name the file calls or names as a type. [`CodeIndex`] keeps
//! that for a whole project, file by file with each file's [`Stamp`], so that a refresh reads
//! only what changed, and answers "where is X defined" ([`CodeIndex::definitions`]), "what does
//! this file define" ([`CodeIndex::outline`]) and "who uses X" ([`CodeIndex::uses`]).
//! [`repo_map`] ranks a project's definitions by a personalised PageRank over who uses what,
//! and lists the best as a map that fits a budget.
//!
//! The crate reads no files itself: the caller lists the project's files and reads them, so
//! that what the index sees is exactly what the caller's sandbox lets through.
//!
//! ```
//! use lantern_index::{symbols_of, Kind, Language};
//! let source = "pub struct Config { port: u16 }\n\nimpl Config {\n    pub fn port(&self) -> u16 {\n        self.port\n    }\n}\n";
//! let symbols = symbols_of(Language::Rust, source);
//! let port = symbols.definitions.iter().find(|d| d.name == "port").unwrap();
//! assert_eq!(port.kind, Kind::Method);
//! assert_eq!(port.parent.as_deref(), Some("Config"));
//! assert_eq!(port.signature, "pub fn port(&self) -> u16 {");
//! ```

mod index;
mod language;
mod repo_map;
mod symbols;

pub use index::{CodeIndex, Located, Progress, Refreshed, Stamp, Use, MAX_FILES, MAX_FILE_BYTES};
pub use language::Language;
pub use repo_map::{repo_map, Focus};
pub use symbols::{split_member, symbols_of, Definition, FileSymbols, Kind, Reference};
