//! The session's task list, shared by add_task, list_tasks and update_task: a scratch space
//! where the model breaks a request into steps and tracks them. Kept per session, in memory.

use crate::error::ToolError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Pending,
    InProgress,
    Completed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    /// `task_<n>`.
    pub id: String,
    pub content: String,
    pub status: TaskStatus,
}

/// Most tasks one session may hold; a runaway model cannot grow it without bound.
pub const MAX_TASKS: usize = 200;
/// Longest task description, in characters: a task is a few words, not a document.
pub const MAX_TASK_CHARS: usize = 1000;

#[derive(Debug, Default, Clone)]
pub struct TaskList {
    tasks: Vec<Task>,
    next_id: usize,
}

impl TaskList {
    pub fn add(&mut self, content: &str) -> Result<&Task, ToolError> {
        let content = content.trim();
        if content.is_empty() {
            return Err(ToolError::invalid("content is empty")
                .with_hint("Describe the task in a few words."));
        }
        let chars = content.chars().count();
        if chars > MAX_TASK_CHARS {
            return Err(ToolError::invalid(format!(
                "content is {chars} characters long; a task may have at most {MAX_TASK_CHARS}"
            ))
            .with_hint("Describe the task in a few words."));
        }
        if self.tasks.len() >= MAX_TASKS {
            return Err(ToolError::invalid(format!(
                "The task list is full ({MAX_TASKS} tasks)"
            )));
        }
        self.next_id += 1;
        self.tasks.push(Task {
            id: format!("task_{}", self.next_id),
            content: content.to_string(),
            status: TaskStatus::Pending,
        });
        Ok(self.tasks.last().expect("just pushed"))
    }

    pub fn all(&self) -> &[Task] {
        &self.tasks
    }

    pub fn update(&mut self, id: &str, status: TaskStatus) -> Result<&Task, ToolError> {
        let known: Vec<String> = self.tasks.iter().map(|t| t.id.clone()).collect();
        match self.tasks.iter_mut().find(|t| t.id == id) {
            Some(task) => {
                task.status = status;
                Ok(task)
            }
            None => Err(ToolError::not_found(format!("No task {id:?}")).with_hint(
                if known.is_empty() {
                    "There are no tasks yet; add one with add_task.".to_string()
                } else {
                    format!("Known tasks: {}.", known.join(", "))
                },
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_count_up_and_updates_find_them() {
        let mut list = TaskList::default();
        assert_eq!(list.add("read the code").unwrap().id, "task_1");
        assert_eq!(list.add("fix it").unwrap().id, "task_2");
        list.update("task_2", TaskStatus::Completed).unwrap();
        assert_eq!(list.all()[1].status, TaskStatus::Completed);
        let err = list.update("task_9", TaskStatus::Pending).unwrap_err();
        assert!(err.model_text().contains("task_1, task_2"));
        assert!(list.add("  ").is_err());
    }
}
