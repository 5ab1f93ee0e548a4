//! # lantern-core
//!
//! Everything Lantern does between a model's text and the user's folder, with no knowledge of
//! the desktop shell, the model backend or the UI:
//!
//! - [`protocol`] — the `<TOOL_CALL>` text protocol: a streaming parser that never fails, the
//!   dialects small models write, and the `TOOL_ERROR` feedback that teaches them.
//! - [`spec`] — what a tool declares: name, description, schema, risk, preview and result kinds.
//! - [`tools`] — the tools, one file each, with JSON Schemas derived from their input structs.
//! - [`sandbox`] — every model-supplied path resolved and confined to the workspace, re-checked
//!   when the file is opened or written.
//! - [`policy`] — who may run what: a pure decision function and the user's grants.
//! - [`pointed`] — which files the conversation points at; a write to any other is the
//!   model's own guess.
//! - [`checkpoint`] — what each write replaced, so every write can be undone.
//! - [`diagnostics`] — the project's own checkers (cargo, tsc, eslint, ruff, go vet) and a
//!   tree-sitter syntax check, reported in one shape.
//! - [`exec`] — running programs: process groups, time limits, bounded output, bubblewrap.
//! - [`agent`] — the loop that drives a [`model::Model`] and reports [`event::Event`]s.
//! - [`project_map`] — the bounded map of the project's names the model is shown once per
//!   conversation.
//! - [`levers`] — every switch of the answer machinery, declared once.
//! - [`toolbox`] — the composition root: the tools and the system prompt made from them, built
//!   once per process.
//!
//! ```
//! use lantern_core::protocol::{interpret, parse, Outcome};
//! use lantern_core::tools::ToolRegistry;
//!
//! let registry = ToolRegistry::standard();
//! let turn = parse("<TOOL_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"package.json\"}}\n</TOOL_CALL>");
//! match interpret(&turn, &registry) {
//!     Outcome::ToolCall(parsed) => {
//!         assert_eq!(parsed.call.tool, "read_file");
//!         assert_eq!(parsed.call.args["path"], "package.json");
//!     }
//!     other => panic!("expected a call, got {other:?}"),
//! }
//! ```

pub mod agent;
pub mod answer_notes;
pub mod answer_paths;
pub mod arithmetic;
pub mod attachments;
pub mod chats;
pub mod checkpoint;
pub mod code_index;
pub mod diagnostics;
pub mod error;
pub mod event;
pub mod exec;
pub mod intent;
pub mod levers;
pub mod mentions;
pub mod model;
pub mod paths;
pub mod pointed;
pub mod policy;
pub mod project_map;
pub mod project_rules;
pub mod prompt;
pub mod protocol;
pub mod question;
pub mod relevance;
pub mod repeats;
pub mod sandbox;
pub mod seen_result;
pub mod spec;
pub mod tool_fit;
pub mod tool_result;
pub mod toolbox;
pub mod tools;
pub mod walk;
pub mod words;

pub use error::{ErrorType, ToolError};
