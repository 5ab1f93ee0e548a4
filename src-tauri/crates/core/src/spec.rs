//! What a tool declares about itself: its name, the description and JSON Schema the model is
//! given, how much harm a call can do, and what its preview and result hold.
//!
//! The contract between the tools and everything that offers, judges or shows them (the model
//! backends, the policy, the UI). It sits below both: [`crate::tools`] implements it, and
//! [`crate::model`] carries it to a backend without knowing any tool.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How much harm a call can do; decides the default permission.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Touches no files (time, the session's task list).
    Safe,
    /// Reads inside the workspace.
    Read,
    /// Changes files.
    Write,
    /// Runs programs.
    Exec,
    /// Runs a tool of an MCP server, which Lantern cannot see into: asks unless granted for
    /// that tool or its whole server.
    Remote,
}

/// What a tool's preview holds: declared by the tool, so that a confirmation shows it by kind
/// instead of guessing from the tool's name or the preview's keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PreviewKind {
    /// No preview: the request's paths and arguments say it all.
    None,
    /// The change to one file: `path`, `created`, `lines_added`, `lines_removed`, `unified`
    /// (a unified diff) and `old_content`.
    Diff,
    /// A command line and how it would run: `command`, `cwd`, `timeout_s`, `sandboxed`,
    /// `sandbox` (in words) and `limits`.
    Command,
    /// Given only when the programs the call starts would run outside the sandbox:
    /// `sandboxed`, `sandbox` (why not) and `notice`.
    Sandbox,
}

/// What a tool's successful result holds: declared by the tool, so that the UI routes a result
/// by kind (a write reloads the file, diagnostics mark the editor) instead of by tool name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResultKind {
    /// Text of one file: `path`, `content`, `start_line`, `end_line`, `total_lines`.
    FileContent,
    /// Files of a folder: `directory`, `files` (paths), `count`.
    FileList,
    /// Lines that match a search: `matches` (`path`, `line`, `column`, `text`), `count`.
    Matches,
    /// The checkers' findings, as [`crate::diagnostics::check`] reports them.
    Diagnostics,
    /// A file written: `path`, `created`, `bytes_written` and `checkpoint` (see
    /// `tools::Written::report_into`).
    Write,
    /// A program that ran: `command`, `exit_code`, `stdout`, `stderr`.
    CommandOutput,
    /// The session's task list, or one task of it.
    Tasks,
    /// Anything else, shown as it is.
    Plain,
}

/// Where a tool from outside Lantern lives: its MCP server, how Lantern reaches it, and where
/// the server's code runs. Shown with its calls and confirmations; never given to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolSource {
    pub server: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// "sandboxed", or where it runs instead.
    pub sandbox: String,
}

/// A conversation one step on, as a tool declares it: a question, a call of the tool, its
/// result, and whether the right next step is another call. A local model's decision after a
/// result is calibrated on the offered tools' examples (tiny models tend to repeat their call
/// once they have seen a result), so a tool teaches it how its own results are followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExampleFollowUp {
    pub question: &'static str,
    /// The call's arguments, as JSON text.
    pub args: &'static str,
    /// Why the call is made, as the call's `reasoning`.
    pub reasoning: &'static str,
    /// The call's result as the tool returns it, as JSON text.
    pub result: &'static str,
    /// Does the question take another call after this result?
    pub needs_call: bool,
}

/// What a tool is, as the model, the CLI and the UI see it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub risk: Risk,
    pub input_schema: Value,
    /// Arguments of a typical correct call, shown in the prompt and in error feedback.
    pub example: Value,
    pub preview_kind: PreviewKind,
    pub result_kind: ResultKind,
    /// For a tool of an MCP server: which, and how it is reached. `None` for Lantern's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ToolSource>,
    /// How the tool's results are followed, for calibrating a local model; never shown.
    #[serde(skip)]
    #[schemars(skip)]
    pub follow_ups: &'static [ExampleFollowUp],
}

impl ToolSpec {
    /// Does one of the tool's arguments carry this schema extension (`"x-symbol"`,
    /// `"x-path"`, …), whatever its value?
    pub fn has_argument_marked(&self, extension: &str) -> bool {
        self.input_schema["properties"]
            .as_object()
            .is_some_and(|props| props.values().any(|p| p.get(extension).is_some()))
    }

    /// Does the tool take any argument? One that takes none (`list_tasks`) makes the same
    /// call every time.
    pub fn takes_arguments(&self) -> bool {
        self.input_schema["properties"]
            .as_object()
            .is_some_and(|props| !props.is_empty())
    }
}
