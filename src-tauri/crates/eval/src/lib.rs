//! The tool-use evaluation: a fixed set of tasks run against any [`Model`], scored from the
//! agent's events and the files the run left behind.
//!
//! It answers the questions that pick a backend's defaults: does the model call a tool when
//! the question needs one (and only then), are its calls valid, does it pick a sensible first
//! tool, and does the whole turn end in a right answer or a right file? Every task runs in a
//! fresh [`Session`] on a fresh copy of its fixture workspace, so history and edits never leak
//! from one task into the next; the model itself is reused, because loading it is expensive.

use lantern_core::agent::{AgentConfig, Answer, FixedAnswer, Session, SessionOptions};
use lantern_core::event::{Event, FinishedReason};
use lantern_core::model::{CancelToken, Model};
use lantern_core::protocol::markers::{is_protocol_shaped_text, protocol_fragment};
use lantern_core::protocol::parse;
use lantern_core::sandbox::Workspace;
use lantern_core::toolbox::Toolbox;
use lantern_core::tools::{PrepareError, Risk, ToolContext, ToolRegistry};
use serde::{Deserialize, Serialize};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

mod report;
pub use report::{markdown_table, summarize, CategorySummary, EvalSummary};

/// The tool whose calls are counted as edits that applied or not.
const EDIT_TOOL: &str = "edit_file";

/// One task: a prompt in a fixture workspace and how to tell whether it went well.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvalTask {
    /// Unique, short, used in progress lines and tables.
    pub id: String,
    /// Folder name of the workspace under the fixtures directory.
    pub fixture: String,
    /// The kind of request, for the per-category table (`lookup`, `where_defined`, `listing`,
    /// `explain`, `edit`, `multi_step`, `no_tool`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// What the user asks.
    pub prompt: String,
    /// Whether the first reply should be a tool call.
    pub needs_tool: bool,
    /// Acceptable first tools; empty when `needs_tool` is false.
    #[serde(default)]
    pub tools: Vec<String>,
    pub success: SuccessCriteria,
}

/// What must hold after the run. Every criterion given must hold, and the turn must end with a
/// final answer (a run stopped by a guard is a failure even if a file happens to be right).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuccessCriteria {
    /// At least one of these appears in the final answer, ignoring case.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answer_contains_any: Vec<String>,
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

/// How long a task's check command may run.
const CHECK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// Runs a task's check command in the workspace its run left; true when it exits 0.
fn check_passes(command: &str, root: &Path) -> bool {
    let Ok(workspace) = Workspace::open(root) else {
        return false;
    };
    let shell = ["/bin/sh".to_string(), "-c".to_string(), command.to_string()];
    let profile = lantern_core::exec::profile::for_workspace(&workspace, root);
    let spec =
        lantern_core::exec::launch(&profile, &[], &shell).spec(root, CHECK_TIMEOUT, 64 * 1024);
    lantern_core::exec::run(&spec).is_ok_and(|done| done.exit_code == Some(0))
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileContains {
    /// Relative to the workspace root.
    pub path: String,
    pub text: String,
}

/// Reads a task file (a JSON array of [`EvalTask`]) and checks it, so a typo in a task shows up
/// before a model has been loaded rather than as a silently failing task.
pub fn load_tasks(path: &Path, registry: &ToolRegistry) -> Result<Vec<EvalTask>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the tasks {}: {e}", path.display()))?;
    let tasks: Vec<EvalTask> = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a JSON array of tasks: {e}", path.display()))?;
    let mut seen = std::collections::HashSet::new();
    for task in &tasks {
        check_task(task, registry).map_err(|problem| format!("task {:?}: {problem}", task.id))?;
        if !seen.insert(task.id.as_str()) {
            return Err(format!("task id {:?} is used twice", task.id));
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
    if success.answer_contains_any.iter().any(|s| s.is_empty()) {
        return Err("answer_contains_any holds an empty string, which always matches".to_string());
    }
    if let Some(check) = &success.file_contains {
        if !is_plain_relative(&check.path) {
            return Err(format!(
                "file_contains.path {:?} must be relative and stay inside the workspace",
                check.path
            ));
        }
    }
    Ok(())
}

/// True for a relative path made of plain names only (no `..`, no root, no `.`), so scoring
/// never reads outside the task's own copy of the fixture.
fn is_plain_relative(path: &str) -> bool {
    !path.is_empty()
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}

/// How one task went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskOutcome {
    pub id: String,
    /// The task's category, or `other`.
    pub category: String,
    pub needs_tool: bool,
    /// The model gave a first reply; false when it failed at once or the task was not run, and
    /// then no decision is credited either way.
    pub responded: bool,
    /// The first reply was a call (valid or not).
    pub first_step_called: bool,
    /// Whether that first call passed parsing and validation; `None` when there was no call.
    pub first_call_valid: Option<bool>,
    /// The tool the first call named, even when the call was invalid (as far as it parsed).
    pub first_tool: Option<String>,
    /// Whether `first_tool` is one of the task's acceptable tools; only for tasks that need a
    /// tool and whose first reply named one.
    pub right_tool: Option<bool>,
    pub calls_made: usize,
    /// Calls that passed parsing and validation (`call_parsed`).
    pub valid_calls: usize,
    /// Calls that did not (`call_rejected`).
    pub invalid_calls: usize,
    /// Valid calls that name a workspace path, and those whose every path is grounded: it
    /// exists, or it is a new file under an existing folder for a tool that writes.
    pub path_calls: usize,
    pub grounded_path_calls: usize,
    /// Replies with no call that look like the protocol (`<TOML_CALL>`, `TOOL_RESULT: …`).
    pub protocol_shaped_replies: usize,
    /// `edit_file` calls that got as far as the tool, and those that applied (the old text was
    /// found once; the rest are refused: not found, found twice, …).
    #[serde(default)]
    pub edit_calls: usize,
    #[serde(default)]
    pub edits_applied: usize,
    /// The final answer itself is protocol-shaped: what the user would see as tag soup.
    pub mangled_answer: bool,
    pub success: bool,
    /// Model replies in the turn.
    pub steps: usize,
    /// Wall time of the turn (the copy of the fixture is not counted).
    pub seconds: f64,
    /// How the turn ended; `None` when it could not be started (see `error`).
    pub finish_reason: Option<FinishedReason>,
    /// The final answer; empty when the turn ended otherwise.
    pub answer: String,
    /// The backend's confidence that the first step should be a call, when it measures one.
    pub call_confidence: Option<f64>,
    /// Why the task could not be set up, or the model's error message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl TaskOutcome {
    /// Whether the first reply did what the task needs: a call when a tool is needed, a plain
    /// answer when it is not.
    pub fn decision_correct(&self) -> bool {
        self.responded && self.first_step_called == self.needs_tool
    }

    /// An outcome for a task that never reached the model.
    fn not_run(task: &EvalTask, error: String) -> Self {
        TaskOutcome {
            error: Some(error),
            ..TaskOutcome::blank(task)
        }
    }

    /// Nothing observed yet: the starting point for scoring.
    fn blank(task: &EvalTask) -> Self {
        TaskOutcome {
            id: task.id.clone(),
            category: task.category.clone().unwrap_or_else(|| "other".to_string()),
            needs_tool: task.needs_tool,
            responded: false,
            first_step_called: false,
            first_call_valid: None,
            first_tool: None,
            right_tool: None,
            calls_made: 0,
            valid_calls: 0,
            invalid_calls: 0,
            path_calls: 0,
            grounded_path_calls: 0,
            protocol_shaped_replies: 0,
            edit_calls: 0,
            edits_applied: 0,
            mangled_answer: false,
            success: false,
            steps: 0,
            seconds: 0.0,
            finish_reason: None,
            answer: String::new(),
            call_confidence: None,
            error: None,
        }
    }
}

/// Runs one task on a fresh copy of its fixture, approving every call, and scores it.
pub fn run_task(
    task: &EvalTask,
    fixtures_dir: &Path,
    toolbox: &Arc<Toolbox>,
    model: &mut dyn Model,
    config: &AgentConfig,
) -> TaskOutcome {
    let scratch = match ScratchDir::create() {
        Ok(dir) => dir,
        Err(e) => return TaskOutcome::not_run(task, e),
    };
    // The workspace keeps the fixture's name: the system prompt shows it, as for a real project.
    let root = scratch.path.join(&task.fixture);
    if let Err(e) = copy_tree(&fixtures_dir.join(&task.fixture), &root) {
        return TaskOutcome::not_run(
            task,
            format!("cannot copy the fixture {:?}: {e}", task.fixture),
        );
    }
    let workspace = match Workspace::open(&root) {
        Ok(ws) => ws,
        Err(e) => return TaskOutcome::not_run(task, e.message),
    };
    let mut session = Session::new(
        workspace,
        SessionOptions {
            toolbox: toolbox.clone(),
            policy: None,
            checkpoints: None,
            config: config.clone(),
        },
    );
    let mut events = Vec::new();
    let started = Instant::now();
    session.send(
        &task.prompt,
        model,
        &mut FixedAnswer(Answer::AllowOnce),
        &mut |event| events.push(event.clone()),
        &CancelToken::new(),
    );
    let seconds = started.elapsed().as_secs_f64();
    score(task, &events, &root, toolbox.registry(), seconds)
}

/// Scores a finished turn from its events and the workspace it left.
fn score(
    task: &EvalTask,
    events: &[Event],
    root: &Path,
    registry: &ToolRegistry,
    seconds: f64,
) -> TaskOutcome {
    let mut outcome = TaskOutcome {
        seconds,
        ..TaskOutcome::blank(task)
    };
    let mut ran_tools: Vec<&str> = Vec::new();
    // Paths are judged against the workspace the run left, with no checkpoints of its own.
    let context = Workspace::open(root)
        .ok()
        .map(|ws| ToolContext::new(ws, None));
    for event in events {
        match event {
            Event::ResponseFinished {
                call_confidence,
                raw,
                ..
            } => {
                if !outcome.responded {
                    outcome.responded = true;
                    outcome.call_confidence = *call_confidence;
                }
                let turn = parse(raw);
                if turn.call.is_none() && protocol_fragment(&turn.text).is_some() {
                    outcome.protocol_shaped_replies += 1;
                }
            }
            Event::CallParsed {
                step, tool, args, ..
            } => {
                outcome.valid_calls += 1;
                let grounded = context
                    .as_ref()
                    .and_then(|ctx| paths_grounded(registry, ctx, tool, args));
                if let Some(grounded) = grounded {
                    outcome.path_calls += 1;
                    outcome.grounded_path_calls += usize::from(grounded);
                }
                if *step == 1 {
                    outcome.first_step_called = true;
                    outcome.first_call_valid = Some(true);
                    outcome.first_tool = Some(tool.clone());
                }
            }
            // Tag soup refused as an answer was no attempt at a call: it is counted apart.
            Event::CallRejected { response, .. } if is_protocol_shaped_text(&parse(response)) => {}
            Event::CallRejected { step, response, .. } => {
                outcome.invalid_calls += 1;
                if *step == 1 {
                    outcome.first_step_called = true;
                    outcome.first_call_valid = Some(false);
                    outcome.first_tool = parse(response).call.map(|call| call.tool);
                }
            }
            Event::ToolFinished { tool, success, .. } => {
                if tool == EDIT_TOOL {
                    outcome.edit_calls += 1;
                    outcome.edits_applied += usize::from(*success);
                }
                if *success {
                    ran_tools.push(tool);
                }
            }
            Event::TurnFinished {
                reason,
                text,
                steps,
                ..
            } => {
                outcome.finish_reason = Some(*reason);
                outcome.steps = *steps;
                match reason {
                    FinishedReason::Answer => outcome.answer = text.clone(),
                    FinishedReason::Error => outcome.error = Some(text.clone()),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    outcome.calls_made = outcome.valid_calls + outcome.invalid_calls;
    outcome.mangled_answer = protocol_fragment(&outcome.answer).is_some();
    if task.needs_tool {
        outcome.right_tool = outcome
            .first_tool
            .as_ref()
            .map(|tool| task.tools.contains(tool));
    }
    outcome.success = outcome.finish_reason == Some(FinishedReason::Answer)
        && criteria_hold(&task.success, &outcome.answer, &ran_tools, root);
    outcome
}

/// Whether every workspace path a call names is grounded (see [`TaskOutcome::path_calls`]);
/// `None` for a call that names none. Judged on the workspace the run left, so a file the
/// turn created before reading it counts as existing.
fn paths_grounded(
    registry: &ToolRegistry,
    ctx: &ToolContext,
    tool: &str,
    args: &serde_json::Value,
) -> Option<bool> {
    let call = match registry.prepare(tool, args.clone(), ctx) {
        Ok(call) => call,
        // A path the sandbox refuses names nothing the model may see.
        Err(PrepareError::Sandbox(_)) => return Some(false),
        Err(PrepareError::Arguments(_)) => return None,
    };
    let paths = call.target().paths();
    if paths.is_empty() {
        return None;
    }
    let writes = call.risk() == Risk::Write;
    Some(
        paths
            .iter()
            .all(|p| p.exists() || (writes && p.abs().parent().is_some_and(Path::is_dir))),
    )
}

fn criteria_hold(
    criteria: &SuccessCriteria,
    answer: &str,
    ran_tools: &[&str],
    root: &Path,
) -> bool {
    let answer = answer.to_lowercase();
    let answer_ok = criteria.answer_contains_any.is_empty()
        || criteria
            .answer_contains_any
            .iter()
            .any(|s| answer.contains(&s.to_lowercase()));
    let file_ok = criteria.file_contains.as_ref().is_none_or(|check| {
        std::fs::read_to_string(root.join(&check.path))
            .is_ok_and(|content| content.contains(&check.text))
    });
    let tool_ok = criteria
        .tool_called
        .as_ref()
        .is_none_or(|tool| ran_tools.contains(&tool.as_str()));
    // Run last, and only when everything else holds: it may build the project.
    answer_ok
        && file_ok
        && tool_ok
        && criteria
            .check_command
            .as_ref()
            .is_none_or(|command| check_passes(command, root))
}

/// A uniquely named folder under the system temp dir, removed when dropped.
struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    fn create() -> Result<Self, String> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = std::env::temp_dir().join(format!(
            "lantern-eval-{}-{nanos}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        // `create_dir`, not `create_dir_all`: it fails rather than reuse a folder that exists.
        std::fs::create_dir(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        Ok(ScratchDir { path })
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // Best effort: a leftover in the temp dir is harmless.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Copies a folder tree. Symbolic links are refused: a fixture is plain files and folders, and
/// copying a link could pull in something from outside it.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        } else {
            return Err(std::io::Error::other(format!(
                "{} is not a plain file or folder",
                entry.path().display()
            )));
        }
    }
    Ok(())
}
