//! The one error every command returns to the webview: a stable code the UI can branch on, a
//! message for people, and optional details (for a tool error, the hint it carries).

use lantern_core::{ErrorType, ToolError};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// What kind of failure: what the UI branches on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// No workspace folder is open.
    NoWorkspace,
    /// No model is loaded.
    NoModel,
    /// Something else holds what this needs (a turn, a manual call, a model load); try again
    /// when it finishes.
    Busy,
    NotFound,
    /// The request itself is wrong (bad arguments, a binary file for the editor, …).
    Invalid,
    PermissionDenied,
    Io,
    /// The model could not be loaded or failed.
    Model,
    Internal,
}

/// What every command fails with.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AppError {
    pub code: ErrorCode,
    /// For people.
    pub message: String,
    /// Facts to show beside the message: a tool error's hint, a refused undo's
    /// `undo_conflict`.
    pub details: Option<Value>,
}

impl AppError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        AppError {
            code,
            message: message.into(),
            details: None,
        }
    }

    pub fn busy(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Busy, message)
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Invalid, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }

    pub fn no_workspace() -> Self {
        Self::new(
            ErrorCode::NoWorkspace,
            "No project folder is open. Open one first.",
        )
    }
}

impl From<ToolError> for AppError {
    fn from(error: ToolError) -> Self {
        let code = match error.kind {
            ErrorType::NotFound => ErrorCode::NotFound,
            ErrorType::ValidationFailed | ErrorType::ParseError => ErrorCode::Invalid,
            ErrorType::PermissionDenied => ErrorCode::PermissionDenied,
            ErrorType::IoError | ErrorType::Timeout => ErrorCode::Io,
            ErrorType::None | ErrorType::InternalError => ErrorCode::Internal,
        };
        // The error's own details (such as the three versions of a refused undo) with its
        // hint beside them, so the UI can show both.
        let mut details = match error.details.map(|d| *d) {
            Some(Value::Object(map)) => map,
            Some(other) => serde_json::Map::from_iter([("details".to_string(), other)]),
            None => serde_json::Map::new(),
        };
        if let Some(hint) = error.hint {
            details.insert("hint".into(), Value::String(hint));
        }
        AppError {
            code,
            message: error.message,
            details: (!details.is_empty()).then_some(Value::Object(details)),
        }
    }
}

impl std::fmt::Display for AppError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
