use super::{PreviewKind, Resolved, ResultKind, Risk, Target, Tool, ToolContext};
use crate::error::ToolError;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

/// List this session's tasks with their ids and status (pending, in_progress, completed).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {}

pub struct ListTasks;

impl Tool for ListTasks {
    type Input = Input;
    const NAME: &'static str = "list_tasks";
    const RISK: Risk = Risk::Safe;
    const PREVIEW: PreviewKind = PreviewKind::None;
    const RESULT: ResultKind = ResultKind::Tasks;

    fn example() -> Value {
        json!({})
    }

    fn target(_input: &Input) -> Target {
        Target::Nothing
    }

    fn run(_input: Input, _target: &Resolved, ctx: &ToolContext) -> Result<Value, ToolError> {
        let tasks = ctx
            .tasks
            .lock()
            .map_err(|_| ToolError::internal("task list unavailable"))?;
        Ok(json!({"tasks": tasks.all(), "count": tasks.all().len()}))
    }
}
