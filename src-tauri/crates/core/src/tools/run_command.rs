use super::{PreviewKind, Resolved, ResultKind, Risk, Target, Tool, ToolContext};
use crate::error::ToolError;
use crate::exec::{self, Captured};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::time::Duration;

/// How long a command may run unless the call says otherwise.
pub const DEFAULT_TIMEOUT_S: u64 = 30;
/// Bytes kept of each of stdout and stderr: the first half and the last half.
pub const OUTPUT_CAP: usize = 8 * 1024;

/// Run a shell command in the workspace folder, e.g. "cargo test" or "npm run build". The user
/// approves every command. Returns the exit code and the output (long output keeps its start
/// and its end). It runs sandboxed where possible: no network, only the workspace and the
/// toolchains visible, only the workspace writable.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The command line, run by /bin/sh in the workspace folder, e.g. "cargo test".
    #[schemars(length(max = 16384))]
    pub command: String,
    /// Stop the command (and everything it started) after this many seconds. Defaults to 30.
    #[schemars(range(min = 1, max = 3600))]
    pub timeout_s: Option<u64>,
}

pub struct RunCommand;

/// What the sandbox means for a command, as the confirmation shows it.
const SANDBOX_SUMMARY: &str = "bubblewrap: no network, no capabilities; only the workspace (writable), the toolchains and a private home and /tmp are visible; .git and .lantern read-only";

fn stream(data: &mut Value, name: &str, captured: &Captured) {
    data[name] = json!(captured.text());
    if captured.omitted > 0 {
        data[format!("{name}_omitted_bytes")] = json!(captured.omitted);
    }
}

impl Tool for RunCommand {
    type Input = Input;
    const NAME: &'static str = "run_command";
    const RISK: Risk = Risk::Exec;
    const PREVIEW: PreviewKind = PreviewKind::Command;
    const RESULT: ResultKind = ResultKind::CommandOutput;

    fn example() -> Value {
        json!({"command": "cargo test"})
    }

    fn target(input: &Input) -> Target {
        Target::Command(input.command.clone())
    }

    fn preview(input: &Input, _target: &Resolved, ctx: &ToolContext) -> Option<Value> {
        let sandbox = exec::bubblewrap();
        Some(json!({
            "command": input.command,
            "cwd": ctx.workspace.root().to_string_lossy(),
            "timeout_s": input.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S),
            "sandboxed": sandbox.is_ok(),
            "sandbox": match &sandbox {
                Ok(_) => SANDBOX_SUMMARY.to_string(),
                Err(reason) => format!("not sandboxed: {reason}"),
            },
            "limits": exec::Limits::default().describe(),
        }))
    }

    fn run(input: Input, _target: &Resolved, ctx: &ToolContext) -> Result<Value, ToolError> {
        if input.command.trim().is_empty() {
            return Err(ToolError::invalid("The command is empty")
                .with_hint("Give the command line to run, e.g. {\"command\": \"cargo test\"}."));
        }
        let root = ctx.workspace.root().to_path_buf();
        let shell = vec![
            "/bin/sh".to_string(),
            "-c".to_string(),
            input.command.clone(),
        ];
        let timeout_s = input.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S);
        let profile = exec::profile::for_workspace(&ctx.workspace, &root);
        let launch = exec::launch(&profile, &[], &shell);
        let sandbox = launch.sandbox.clone();
        let spec = launch.spec(&root, Duration::from_secs(timeout_s), OUTPUT_CAP);
        let finished = exec::run(&spec)
            .map_err(|e| ToolError::io(format!("Could not start the command: {e}")))?;
        let mut data = json!({
            "command": input.command,
            "exit_code": finished.exit_code,
            "timed_out": finished.timed_out,
            "sandboxed": sandbox.is_ok(),
        });
        if let Some(signal) = finished.signal {
            data["signal"] = json!(signal);
        }
        if let Some(limit) = &finished.limit_hit {
            data["limit_hit"] = json!(limit);
            data["notice"] = json!(format!("The command ran into its {limit} limit."));
        }
        if let Err(reason) = &sandbox {
            data["sandbox_note"] = json!(reason);
        }
        stream(&mut data, "stdout", &finished.stdout);
        stream(&mut data, "stderr", &finished.stderr);
        if finished.timed_out {
            data["notice"] = json!(format!(
                "The command was stopped after {timeout_s} s with everything it started; pass a larger timeout_s if it needs longer."
            ));
        }
        Ok(data)
    }
}
