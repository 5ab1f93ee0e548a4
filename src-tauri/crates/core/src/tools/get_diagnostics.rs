use super::{PreviewKind, Resolved, ResultKind, Risk, Target, Tool, ToolContext};
use crate::diagnostics::{self, Request, DEFAULT_TIMEOUT};
use crate::error::ToolError;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::time::Duration;

/// Get errors and warnings by running the project's own checkers (cargo check, tsc, eslint,
/// ruff, go vet), or a syntax check when none is installed. Returns each problem with its file,
/// line, column, severity, code and message. Use it after editing code to see whether the code
/// is still correct.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Only report problems in this file of the project, relative to the workspace root.
    /// Leave it out to check the whole workspace.
    #[schemars(extend("x-path" = "file"))]
    pub file: Option<String>,
    /// Stop the checkers after this many seconds. Defaults to 60.
    #[schemars(range(min = 1, max = 600))]
    pub timeout_s: Option<u64>,
    /// Only report problems that are new since the previous check, e.g. to see what an edit
    /// broke. Defaults to false.
    pub only_new: Option<bool>,
}

pub struct GetDiagnostics;

impl Tool for GetDiagnostics {
    type Input = Input;
    const NAME: &'static str = "get_diagnostics";
    const RISK: Risk = Risk::Read;
    const PREVIEW: PreviewKind = PreviewKind::Sandbox;
    const RESULT: ResultKind = ResultKind::Diagnostics;

    fn example() -> Value {
        json!({})
    }

    /// The checkers run project code. Inside the sandbox profile that is allowed like reading;
    /// where bubblewrap is unavailable it counts as running a program and asks first.
    fn risk(_input: &Input, _ctx: &ToolContext) -> Risk {
        match crate::exec::bubblewrap() {
            Ok(_) => Risk::Read,
            Err(_) => Risk::Exec,
        }
    }

    /// The file named, if any. Without one the checkers look at the whole project, and what
    /// they reach is the project's build (its scripts, its dependencies), not a path a grant
    /// could stand for: such a call is scoped by the tool alone, as it always was.
    fn target(input: &Input) -> Target {
        match &input.file {
            Some(file) => Target::Paths(vec![file.clone()]),
            None => Target::Nothing,
        }
    }

    fn preview(_input: &Input, _target: &Resolved, _ctx: &ToolContext) -> Option<Value> {
        crate::exec::bubblewrap().err().map(|reason| {
            json!({
                "sandboxed": false,
                "sandbox": format!("not sandboxed: {reason}"),
                "notice": "The project's checkers run its own code (build scripts, plugins) with your rights and the network on.",
            })
        })
    }

    fn run(input: Input, target: &Resolved, ctx: &ToolContext) -> Result<Value, ToolError> {
        let file = match target.paths().first() {
            Some(path) => {
                if !path.exists() {
                    return Err(ToolError::not_found(format!("File not found: {}", path.rel()))
                        .with_hint("Use list_files to see which files exist, or leave out \"file\" to check the whole workspace."));
                }
                if path.rel() == "." || path.abs().is_dir() {
                    return Err(ToolError::invalid(format!(
                        "{} is a folder; \"file\" must name one file",
                        path.rel()
                    ))
                    .with_hint("Leave out \"file\" to check the whole workspace."));
                }
                Some(path.rel().to_string())
            }
            None => None,
        };
        let request = Request {
            file,
            timeout: input
                .timeout_s
                .map(Duration::from_secs)
                .unwrap_or(DEFAULT_TIMEOUT),
            only_new: input.only_new.unwrap_or(false),
        };
        diagnostics::check(&ctx.workspace, &ctx.diagnostics, &request)
    }
}
