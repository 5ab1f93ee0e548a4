use super::{ExampleFollowUp, PreviewKind, Resolved, ResultKind, Risk, Target, Tool, ToolContext};
use crate::error::ToolError;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

/// Get the current date and time (ISO 8601, local time with offset, and UTC).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {}

pub struct GetCurrentTime;

impl Tool for GetCurrentTime {
    type Input = Input;
    const NAME: &'static str = "get_current_time";
    const RISK: Risk = Risk::Safe;
    const PREVIEW: PreviewKind = PreviewKind::None;
    const RESULT: ResultKind = ResultKind::Plain;
    const FOLLOW_UPS: &'static [ExampleFollowUp] = &[ExampleFollowUp {
        question: "What time is it?",
        args: "{}",
        reasoning: "Ask the clock",
        result: r##"{"success":true,"data":{"local":"2026-03-02T14:05:00+01:00"},"error":null}"##,
        needs_call: false,
    }];

    fn example() -> Value {
        json!({})
    }

    fn target(_input: &Input) -> Target {
        Target::Nothing
    }

    fn run(_input: Input, _target: &Resolved, _ctx: &ToolContext) -> Result<Value, ToolError> {
        let local = chrono::Local::now();
        Ok(json!({
            "local": local.to_rfc3339_opts(chrono::SecondsFormat::Secs, false),
            "utc": local.with_timezone(&chrono::Utc).to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "unix_ms": local.timestamp_millis(),
        }))
    }
}
