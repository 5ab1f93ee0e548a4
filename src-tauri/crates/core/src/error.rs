//! The one error type every tool, the sandbox and the policy report through.
//!
//! A failure is for two readers: the person watching the inspector and the model that made the
//! call. So an error carries a kind (stable, machine-readable), a message a user understands,
//! and an optional hint that tells the model how to do better next time.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The categories of the structured result (`error_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorType {
    None,
    NotFound,
    ValidationFailed,
    PermissionDenied,
    IoError,
    ParseError,
    Timeout,
    InternalError,
}

impl ErrorType {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::None => "none",
            ErrorType::NotFound => "not_found",
            ErrorType::ValidationFailed => "validation_failed",
            ErrorType::PermissionDenied => "permission_denied",
            ErrorType::IoError => "io_error",
            ErrorType::ParseError => "parse_error",
            ErrorType::Timeout => "timeout",
            ErrorType::InternalError => "internal_error",
        }
    }
}

impl fmt::Display for ErrorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure of a tool, the sandbox or the policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolError {
    pub kind: ErrorType,
    /// What went wrong, in words a user understands. Never contains content from outside the
    /// workspace.
    pub message: String,
    /// What the model should do instead, if there is something useful to say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Structured facts for a UI to show beside the message (e.g. the three versions of a
    /// refused undo). Boxed: most errors have none, and errors travel in every `Result`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Box<serde_json::Value>>,
}

impl ToolError {
    pub fn new(kind: ErrorType, message: impl Into<String>) -> Self {
        ToolError {
            kind,
            message: message.into(),
            hint: None,
            details: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(Box::new(details));
        self
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorType::NotFound, message)
    }

    pub fn denied(message: impl Into<String>) -> Self {
        Self::new(ErrorType::PermissionDenied, message)
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorType::ValidationFailed, message)
    }

    pub fn io(message: impl Into<String>) -> Self {
        Self::new(ErrorType::IoError, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorType::InternalError, message)
    }

    /// Maps an I/O error on a workspace-relative `path` to a kind and a plain message.
    pub fn from_io(err: &std::io::Error, path: &str) -> Self {
        use std::io::ErrorKind;
        match err.kind() {
            ErrorKind::NotFound => Self::not_found(format!("Not found: {path}")).with_hint(
                "Check the path with list_files; paths are relative to the workspace root.",
            ),
            ErrorKind::PermissionDenied => {
                Self::denied(format!("The operating system refused access to {path}"))
            }
            ErrorKind::IsADirectory => Self::invalid(format!("{path} is a directory, not a file"))
                .with_hint("Use list_files to see what a directory holds."),
            ErrorKind::NotADirectory => Self::invalid(format!("{path} is not a directory")),
            _ => Self::io(format!("Could not access {path}: {err}")),
        }
    }

    /// The one-paragraph text the model reads after `TOOL_ERROR:` or in `error_message`.
    pub fn model_text(&self) -> String {
        match &self.hint {
            Some(hint) => format!("{} {}", self.message, hint),
            None => self.message.clone(),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for ToolError {}
