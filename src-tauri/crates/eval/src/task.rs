//! A task, the sets it belongs to, and the checks a task file must pass before a model is loaded.

use crate::matching::mentions;
use lantern_core::tools::ToolRegistry;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// Which set a task's project belongs to. Levers are decided on `dev`; `test` is held out and
/// only reported on, so that a number from it says how Lantern does on projects nobody tuned on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    #[default]
    Dev,
    Test,
}

impl Split {
    pub fn name(self) -> &'static str {
        match self {
            Split::Dev => "dev",
            Split::Test => "test",
        }
    }

    /// Every set, in order.
    pub const ALL: [Split; 2] = [Split::Dev, Split::Test];

    /// The set [`Split::name`] names.
    pub fn from_name(name: &str) -> Option<Split> {
        Split::ALL.into_iter().find(|split| split.name() == name)
    }
}

/// How many ways a held-out task that needs a tool is asked: as different users would (terse,
/// polite, indirect).
pub const TEST_PHRASINGS: usize = 3;

/// The names of the phrasings, in the order a task gives them.
pub const PHRASING_NAMES: [&str; TEST_PHRASINGS] = ["terse", "polite", "indirect"];

/// One task: a prompt in a fixture workspace and how to tell whether it went well.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvalTask {
    /// Unique, short, used in progress lines and tables.
    pub id: String,
    /// Folder name of the workspace under the fixtures directory.
    pub fixture: String,
    /// The set the fixture belongs to; every task of a fixture names the same one.
    #[serde(default)]
    pub split: Split,
    /// The kind of request, for the per-category table (`lookup`, `about`, `where_defined`,
    /// `listing`, `explain`, `edit`, `multi_step`, `no_tool`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// What the user asks.
    pub prompt: String,
    /// The same request as other users would put it, each with the same right answer. A
    /// held-out task that needs a tool has exactly two (see [`TEST_PHRASINGS`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rephrasings: Vec<String>,
    /// Whether the first reply should be a tool call.
    pub needs_tool: bool,
    /// Acceptable first tools; empty when `needs_tool` is false.
    #[serde(default)]
    pub tools: Vec<String>,
    pub success: SuccessCriteria,
    /// The workspace files the task may create or change; every other file must be left as it
    /// was (an edit to a file the user did not point at is a failure, whatever else holds).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub may_change: Vec<String>,
}

impl EvalTask {
    /// Every way the task is asked: the prompt, then its rephrasings.
    pub fn phrasings(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.prompt.as_str()).chain(self.rephrasings.iter().map(String::as_str))
    }
}

/// What must hold after the run. Every criterion given must hold, and the turn must end with a
/// final answer (a run stopped by a guard is a failure even if a file happens to be right).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuccessCriteria {
    /// At least one of these is said in the answer, whole (see [`crate::matching::mentions`]).
    /// None may be said by the prompt or a rephrasing itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answer_contains_any: Vec<String>,
    /// Every one of these is said in the answer, whole: for an answer of two parts ("which
    /// exception, and which class does it extend?").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answer_contains_all: Vec<String>,
    /// After the run this workspace file contains this text (exactly, case included: it is code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_contains: Option<FileContains>,
    /// This tool ran successfully at least once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_called: Option<String>,
    /// After the run this shell command, run in the workspace the way `run_command` runs one
    /// (sandboxed, bounded), exits 0: the project's own test or checker, or a check of the
    /// behaviour a fix asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_command: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileContains {
    /// Relative to the workspace root.
    pub path: String,
    pub text: String,
}

/// The tasks to run: where they and their fixtures are, and which of them.
pub struct TaskSet {
    pub tasks: PathBuf,
    pub fixtures: PathBuf,
    /// Only this set; both when `None`.
    pub split: Option<Split>,
    /// Only tasks of these categories or fixtures; all when empty.
    pub only: Vec<String>,
}

impl TaskSet {
    /// The tasks chosen, checked, with their fixtures there; why not, in words, when there
    /// are none or a fixture is missing.
    pub fn load(&self, registry: &ToolRegistry) -> Result<Vec<EvalTask>, String> {
        let mut tasks = load_tasks(&self.tasks, registry)?;
        tasks.retain(|t| self.split.is_none_or(|split| t.split == split));
        if !self.only.is_empty() {
            tasks.retain(|t| {
                self.only
                    .iter()
                    .any(|name| t.fixture == *name || t.category.as_deref() == Some(name.as_str()))
            });
        }
        if tasks.is_empty() {
            return Err(format!(
                "{} holds no tasks of the set and categories asked for",
                self.tasks.display()
            ));
        }
        let missing = tasks
            .iter()
            .map(|t| t.fixture.as_str())
            .find(|name| !self.fixtures.join(name).is_dir());
        if let Some(name) = missing {
            return Err(format!(
                "fixture {name:?} is not a folder in {}",
                self.fixtures.display()
            ));
        }
        Ok(tasks)
    }
}

/// Reads the tasks: a JSON array of [`EvalTask`], or a folder of such files (read in name
/// order). They are checked, so a typo in a task shows up before a model has been loaded rather
/// than as a silently failing task.
pub fn load_tasks(path: &Path, registry: &ToolRegistry) -> Result<Vec<EvalTask>, String> {
    let files = if path.is_dir() {
        let mut files: Vec<_> = std::fs::read_dir(path)
            .map_err(|e| format!("cannot read the tasks folder {}: {e}", path.display()))?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        files
    } else {
        vec![path.to_path_buf()]
    };
    let mut tasks = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("cannot read the tasks {}: {e}", file.display()))?;
        let mut some: Vec<EvalTask> = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not a JSON array of tasks: {e}", file.display()))?;
        tasks.append(&mut some);
    }
    let mut seen = std::collections::HashSet::new();
    let mut splits: HashMap<&str, Split> = HashMap::new();
    for task in &tasks {
        check_task(task, registry).map_err(|problem| format!("task {:?}: {problem}", task.id))?;
        if !seen.insert(task.id.as_str()) {
            return Err(format!("task id {:?} is used twice", task.id));
        }
        let split = *splits.entry(&task.fixture).or_insert(task.split);
        if split != task.split {
            return Err(format!(
                "task {:?}: the fixture {:?} is in both the dev and the test set (a project is held out whole)",
                task.id, task.fixture
            ));
        }
    }
    Ok(tasks)
}

fn check_task(task: &EvalTask, registry: &ToolRegistry) -> Result<(), String> {
    if task.id.trim().is_empty() {
        return Err("the id is empty".to_string());
    }
    if !is_plain_relative(&task.fixture) || Path::new(&task.fixture).components().count() != 1 {
        return Err(format!(
            "fixture {:?} must be a folder name under the fixtures directory",
            task.fixture
        ));
    }
    if task.needs_tool == task.tools.is_empty() {
        return Err(if task.needs_tool {
            "needs_tool is true but no acceptable first tool is listed".to_string()
        } else {
            "needs_tool is false, so tools must be empty".to_string()
        });
    }
    check_phrasings(task)?;
    let known = |name: &str| registry.spec(name).is_some();
    let success = &task.success;
    let unknown = task
        .tools
        .iter()
        .chain(&success.tool_called)
        .find(|name| !known(name));
    if let Some(name) = unknown {
        return Err(format!(
            "unknown tool {name:?}; the tools are: {}",
            registry.names().join(", ")
        ));
    }
    if success.answer_contains_any.is_empty()
        && success.answer_contains_all.is_empty()
        && success.file_contains.is_none()
        && success.tool_called.is_none()
        && success.check_command.is_none()
    {
        return Err("success names no criterion".to_string());
    }
    if success
        .check_command
        .as_ref()
        .is_some_and(|c| c.trim().is_empty())
    {
        return Err("check_command is empty".to_string());
    }
    check_expected_answers(task)?;
    let paths = success
        .file_contains
        .iter()
        .map(|c| &c.path)
        .chain(&task.may_change);
    if let Some(path) = paths.into_iter().find(|p| !is_plain_relative(p)) {
        return Err(format!(
            "the path {path:?} must be relative and stay inside the workspace"
        ));
    }
    Ok(())
}

/// A held-out task that needs a tool is asked three ways; no phrasing is empty or repeated.
fn check_phrasings(task: &EvalTask) -> Result<(), String> {
    let asked: Vec<&str> = task.phrasings().collect();
    if asked.iter().any(|p| p.trim().is_empty()) {
        return Err("a prompt or rephrasing is empty".to_string());
    }
    if (1..asked.len()).any(|i| asked[..i].contains(&asked[i])) {
        return Err("a rephrasing repeats another phrasing".to_string());
    }
    if !task.needs_tool && !task.rephrasings.is_empty() {
        return Err("only a task that needs a tool is rephrased".to_string());
    }
    if task.split == Split::Test && task.needs_tool && asked.len() != TEST_PHRASINGS {
        return Err(format!(
            "a held-out task that needs a tool is asked {TEST_PHRASINGS} ways ({}); it has {}",
            PHRASING_NAMES.join(", "),
            asked.len()
        ));
    }
    Ok(())
}

/// An expected answer is a non-empty string that no phrasing says itself: an answer that
/// echoes the question must not pass.
fn check_expected_answers(task: &EvalTask) -> Result<(), String> {
    let success = &task.success;
    for expected in success
        .answer_contains_any
        .iter()
        .chain(&success.answer_contains_all)
    {
        if expected.trim().is_empty() {
            return Err("an expected answer is an empty string, which always matches".to_string());
        }
        if let Some(asked) = task.phrasings().find(|p| mentions(p, expected)) {
            return Err(format!(
                "the expected answer {expected:?} is said by the prompt itself ({asked:?})"
            ));
        }
    }
    Ok(())
}

/// True for a relative path made of plain names only (no `..`, no root, no `.`), so scoring
/// never reads outside the task's own copy of the fixture.
pub(crate) fn is_plain_relative(path: &str) -> bool {
    !path.is_empty()
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}
