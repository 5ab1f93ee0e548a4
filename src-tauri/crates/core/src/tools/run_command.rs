use super::{Risk, Target, Tool, ToolContext};
use crate::error::ToolError;
use crate::exec::{self, Captured};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::Duration;

/// How long a command may run unless the call says otherwise.
pub const DEFAULT_TIMEOUT_S: u64 = 30;
/// Bytes kept of each of stdout and stderr: the first half and the last half.
pub const OUTPUT_CAP: usize = 8 * 1024;

/// Run a shell command in the workspace folder, e.g. "cargo test" or "npm run build". The user
/// approves every command. Returns the exit code and the output (long output keeps its start
/// and its end). The network is off and only the workspace can be written when the sandbox is
/// available.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The command line, run by /bin/sh in the workspace folder, e.g. "cargo test".
    pub command: String,
    /// Stop the command (and everything it started) after this many seconds. Defaults to 30.
    #[schemars(range(min = 1, max = 3600))]
    pub timeout_s: Option<u64>,
}

pub struct RunCommand;

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

    fn example() -> Value {
        json!({"command": "cargo test"})
    }

    fn target(input: &Input) -> Target {
        Target {
            paths: Vec::new(),
            command: Some(input.command.clone()),
        }
    }

    fn preview(input: &Input, ctx: &ToolContext) -> Option<Value> {
        let sandbox = exec::bubblewrap();
        Some(json!({
            "command": input.command,
            "cwd": ctx.workspace.root().to_string_lossy(),
            "timeout_s": input.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S),
            "sandboxed": sandbox.is_ok(),
            "sandbox": match &sandbox {
                Ok(_) => "bubblewrap: network off, only the workspace writable".to_string(),
                Err(reason) => format!("not sandboxed: {reason}"),
            },
        }))
    }

    fn run(input: Input, ctx: &ToolContext) -> Result<Value, ToolError> {
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
        let sandbox = exec::bubblewrap();
        let (program, args) = match &sandbox {
            Ok(bwrap) => (bwrap.program.clone(), bwrap.args(&root, &shell)),
            Err(_) => (PathBuf::from(&shell[0]), shell[1..].to_vec()),
        };
        let spec = exec::Spec {
            program,
            args,
            cwd: root,
            env: exec::scrubbed_env(),
            timeout: Duration::from_secs(timeout_s),
            output_cap: OUTPUT_CAP,
        };
        let finished = exec::run(&spec)
            .map_err(|e| ToolError::io(format!("Could not start the command: {e}")))?;
        let mut data = json!({
            "command": input.command,
            "exit_code": finished.exit_code,
            "timed_out": finished.timed_out,
            "duration_ms": finished.duration.as_millis() as u64,
            "sandboxed": sandbox.is_ok(),
        });
        if let Some(signal) = finished.signal {
            data["signal"] = json!(signal);
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
