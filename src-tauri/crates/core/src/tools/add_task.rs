use super::{PreviewKind, Resolved, ResultKind, Risk, Target, Tool, ToolContext};
use crate::error::ToolError;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

/// Add a task to this session's task list, to break a larger request into steps. Returns the
/// new task's id (e.g. "task_1").
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// What the task is, in a few words.
    pub content: String,
}

pub struct AddTask;

impl Tool for AddTask {
    type Input = Input;
    const NAME: &'static str = "add_task";
    const RISK: Risk = Risk::Safe;
    const PREVIEW: PreviewKind = PreviewKind::None;
    const RESULT: ResultKind = ResultKind::Tasks;

    fn example() -> Value {
        json!({"content": "Find where the config is loaded"})
    }

    fn target(_input: &Input) -> Target {
        Target::Nothing
    }

    fn run(input: Input, _target: &Resolved, ctx: &ToolContext) -> Result<Value, ToolError> {
        let mut tasks = ctx
            .tasks
            .lock()
            .map_err(|_| ToolError::internal("task list unavailable"))?;
        let task = tasks.add(&input.content)?;
        Ok(json!({"task_id": task.id, "task": task}))
    }
}
