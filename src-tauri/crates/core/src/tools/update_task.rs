use super::{PreviewKind, Resolved, ResultKind, Risk, Target, TaskStatus, Tool, ToolContext};
use crate::error::ToolError;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

/// Set the status of one of this session's tasks.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The task's id, as add_task returned it, e.g. "task_1".
    pub task_id: String,
    /// The new status.
    pub status: TaskStatus,
}

pub struct UpdateTask;

impl Tool for UpdateTask {
    type Input = Input;
    const NAME: &'static str = "update_task";
    const RISK: Risk = Risk::Safe;
    const PREVIEW: PreviewKind = PreviewKind::None;
    const RESULT: ResultKind = ResultKind::Tasks;

    fn example() -> Value {
        json!({"task_id": "task_1", "status": "completed"})
    }

    fn target(_input: &Input) -> Target {
        Target::Nothing
    }

    fn run(input: Input, _target: &Resolved, ctx: &ToolContext) -> Result<Value, ToolError> {
        let mut tasks = ctx
            .tasks
            .lock()
            .map_err(|_| ToolError::internal("task list unavailable"))?;
        let task = tasks.update(&input.task_id, input.status)?;
        Ok(
            json!({"task": task, "message": format!("{} is now {:?}", task.id, task.status).to_lowercase()}),
        )
    }
}
