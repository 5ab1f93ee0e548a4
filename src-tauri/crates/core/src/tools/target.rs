//! What a call touches: declared by its tool, resolved by the sandbox once, handed back.
//!
//! The hard rules and every path- or command-scoped grant see only what a tool declares in
//! [`Tool::target`](super::Tool::target), so the declaration has no default: a new tool must
//! say what it touches, or say [`Target::Nothing`] in so many words. The registry resolves the
//! declared paths through [`Workspace::resolve`] before the policy decides, and the tool then
//! receives exactly those paths as a [`Resolved`]: it never turns a model string into a path
//! itself, so the paths the user approved and the paths the tool opens are the same values.

use crate::error::ToolError;
use crate::sandbox::{ResolvedPath, Workspace};

/// What a call touches, as its tool declares it from the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// No workspace path and no command line: grants can scope the call by its tool only.
    Nothing,
    /// Workspace paths the call reads or writes, as the model wrote them (or the tool's default
    /// when the model left one out, e.g. `.` for the whole workspace).
    Paths(Vec<String>),
    /// The exact command line the call runs.
    Command(String),
}

impl Target {
    /// Resolves every declared path through the sandbox; the first refusal refuses the call.
    pub(super) fn resolve(self, workspace: &Workspace) -> Result<Resolved, ToolError> {
        match self {
            Target::Nothing => Ok(Resolved::default()),
            Target::Paths(raw) => Ok(Resolved {
                paths: raw
                    .iter()
                    .map(|path| workspace.resolve(path))
                    .collect::<Result<_, _>>()?,
                command: None,
            }),
            Target::Command(command) => Ok(Resolved {
                paths: Vec::new(),
                command: Some(command),
            }),
        }
    }
}

/// A call's [`Target`] after the sandbox: what the tool's `preview` and `run` receive.
///
/// Only the registry makes one, by resolving a [`Target`] (the fields are private), so a tool
/// cannot be handed paths the policy did not see.
#[derive(Debug, Clone, Default)]
pub struct Resolved {
    paths: Vec<ResolvedPath>,
    command: Option<String>,
}

impl Resolved {
    /// The declared paths, resolved, in the order they were declared.
    pub fn paths(&self) -> &[ResolvedPath] {
        &self.paths
    }

    /// The one path of a call whose tool declares exactly one (a file to read or write, a
    /// folder to list). Anything else is the tool contradicting its own declaration.
    pub fn path(&self) -> Result<&ResolvedPath, ToolError> {
        match self.paths.as_slice() {
            [path] => Ok(path),
            paths => Err(ToolError::internal(format!(
                "the call declared {} paths where its tool works on one",
                paths.len()
            ))),
        }
    }

    /// The declared command line, for a call that runs one.
    pub fn command(&self) -> Option<&str> {
        self.command.as_deref()
    }
}
