//! One run of one task in one phrasing, and how it is scored from the agent's events and the
//! files the run left.
//!
//! The answer is scored twice: in the model's own words (the reply it ended the turn with, a
//! loop cut back to one copy) and as the user is shown it (with the paths and notes Lantern
//! adds from the tool results). An answer that contradicts a note (another number, another
//! file) fails both: the user is told two things.

use crate::changes::{Changes, WrittenOver};
use crate::scratch::{copy_tree, ScratchDir};
use crate::task::{EvalTask, Split};
use crate::verdict::{judge, Ending};
use lantern_core::agent::{AgentConfig, Answer, FixedAnswer, Session, SessionOptions};
use lantern_core::event::{Event, FinishedReason};
use lantern_core::model::{CancelToken, Model};
use lantern_core::protocol::markers::{is_protocol_shaped_text, protocol_fragment, FOLLOW_UP_HINT};
use lantern_core::protocol::{parse, Turn};
use lantern_core::question::Form;
use lantern_core::sandbox::Workspace;
use lantern_core::toolbox::Toolbox;
use lantern_core::tools::{PrepareError, Risk, ToolContext, ToolRegistry};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// The tool whose calls are counted as edits that applied or not.
const EDIT_TOOL: &str = "edit_file";

/// How one run of a task went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskOutcome {
    /// The run's id: the task's, with `#2`, `#3` for its rephrasings.
    pub id: String,
    /// The task's own id.
    pub task: String,
    pub fixture: String,
    pub split: Split,
    /// Which phrasing was asked: 0 for the prompt, then the rephrasings.
    pub phrasing: usize,
    /// The task's category, or `other`.
    pub category: String,
    /// How Lantern read the phrasing asked (`None` when the run never started a turn), to set
    /// beside the task's category.
    #[serde(default)]
    pub form: Option<Form>,
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
    /// Each valid call as `tool {arguments}`, in order: what the run read, searched or wrote.
    #[serde(default)]
    pub calls: Vec<String>,
    /// Calls that passed parsing and validation (`call_parsed`).
    pub valid_calls: usize,
    /// Calls that did not (`call_rejected`).
    pub invalid_calls: usize,
    /// Valid calls that name a workspace path, and those whose every path is grounded: it
    /// exists, or it is a new file under an existing folder for a tool that writes.
    pub path_calls: usize,
    pub grounded_path_calls: usize,
    /// Calls without arguments whose result found nothing (an empty list, a failure): made
    /// again, such a call finds the same nothing.
    #[serde(default)]
    pub fruitless_bare_calls: usize,
    /// `get_diagnostics` results in which a checker was stopped at its time box: what such a
    /// run saw, and so its verdict, depends on how busy the machine was.
    #[serde(default)]
    pub checks_out_of_time: usize,
    /// Replies with no call that look like the protocol (`<TOML_CALL>`, `TOOL_RESULT: …`).
    pub protocol_shaped_replies: usize,
    /// `edit_file` calls that got as far as the tool, and those that applied.
    pub edit_calls: usize,
    pub edits_applied: usize,
    /// Files the run created, changed or removed that the task did not name in `may_change`.
    pub stray_edits: Vec<String>,
    /// Lines of the fixture's files the run wrote over or took out, kept nowhere even changed
    /// (see [`WrittenOver`]), in any file, the task's own too.
    #[serde(default)]
    pub written_over: Vec<WrittenOver>,
    /// The final answer itself is protocol-shaped: what the user would see as tag soup.
    pub mangled_answer: bool,
    /// The task succeeded in the model's own words: the headline figure.
    pub success: bool,
    /// The task succeeded as the user was shown it, with Lantern's paths and notes.
    pub shown_success: bool,
    /// The model's answer says another number or file than a note of the turn.
    pub contradicts_note: bool,
    /// The model's answer recites what Lantern told it (ten words of its system prompt or of
    /// the hint after a result in a row): wrong, whatever it holds.
    #[serde(default)]
    pub recites_instructions: bool,
    /// Model replies in the turn.
    pub steps: usize,
    /// Wall time of the turn (the copy of the fixture is not counted).
    pub seconds: f64,
    /// How the turn ended; `None` when it could not be started (see `error`).
    pub finish_reason: Option<FinishedReason>,
    /// The answer in the model's own words; empty when the turn ended otherwise.
    pub model_answer: String,
    /// The answer as the user was shown it.
    pub answer: String,
    /// Lantern's notes beneath the answer, as shown.
    pub notes: Vec<String>,
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

    /// The first step was a call to `tool` (when it is known), `valid` or refused.
    fn first_called(&mut self, tool: Option<String>, valid: bool) {
        self.first_step_called = true;
        self.first_call_valid = Some(valid);
        self.first_tool = tool;
    }

    /// Nothing observed yet: the starting point for scoring.
    fn blank(task: &EvalTask, phrasing: usize) -> Self {
        TaskOutcome {
            id: match phrasing {
                0 => task.id.clone(),
                n => format!("{}#{}", task.id, n + 1),
            },
            task: task.id.clone(),
            fixture: task.fixture.clone(),
            split: task.split,
            phrasing,
            category: task.category.clone().unwrap_or_else(|| "other".to_string()),
            needs_tool: task.needs_tool,
            form: None,
            responded: false,
            first_step_called: false,
            first_call_valid: None,
            first_tool: None,
            right_tool: None,
            calls_made: 0,
            calls: Vec::new(),
            valid_calls: 0,
            invalid_calls: 0,
            path_calls: 0,
            grounded_path_calls: 0,
            fruitless_bare_calls: 0,
            checks_out_of_time: 0,
            protocol_shaped_replies: 0,
            edit_calls: 0,
            edits_applied: 0,
            stray_edits: Vec::new(),
            written_over: Vec::new(),
            mangled_answer: false,
            success: false,
            shown_success: false,
            contradicts_note: false,
            recites_instructions: false,
            steps: 0,
            seconds: 0.0,
            finish_reason: None,
            model_answer: String::new(),
            answer: String::new(),
            notes: Vec::new(),
            call_confidence: None,
            error: None,
        }
    }

    /// An outcome for a run that never reached the model.
    fn not_run(task: &EvalTask, phrasing: usize, error: String) -> Self {
        TaskOutcome {
            error: Some(error),
            ..TaskOutcome::blank(task, phrasing)
        }
    }
}

/// Runs phrasing `phrasing` of a task (0 for its prompt) on a fresh copy of its fixture,
/// approving every call, and scores it.
pub fn run_task(
    task: &EvalTask,
    phrasing: usize,
    fixtures_dir: &Path,
    toolbox: &Arc<Toolbox>,
    model: &mut dyn Model,
    config: &AgentConfig,
) -> TaskOutcome {
    let Some(prompt) = task.phrasings().nth(phrasing) else {
        let error = format!("the task has no phrasing {}", phrasing + 1);
        return TaskOutcome::not_run(task, phrasing, error);
    };
    let scratch = match ScratchDir::create() {
        Ok(dir) => dir,
        Err(e) => return TaskOutcome::not_run(task, phrasing, e),
    };
    // The workspace keeps the fixture's name: the system prompt shows it, as for a real project.
    let fixture = fixtures_dir.join(&task.fixture);
    let root = scratch.path.join(&task.fixture);
    if let Err(e) = copy_tree(&fixture, &root) {
        let error = format!("cannot copy the fixture {:?}: {e}", task.fixture);
        return TaskOutcome::not_run(task, phrasing, error);
    }
    let workspace = match Workspace::open(&root) {
        Ok(ws) => ws,
        Err(e) => return TaskOutcome::not_run(task, phrasing, e.message),
    };
    let mut session = Session::new(
        workspace,
        SessionOptions {
            config: config.clone(),
            ..SessionOptions::in_memory(toolbox.clone())
        },
    );
    let mut events = Vec::new();
    let started = Instant::now();
    session.send(
        prompt,
        model,
        &mut FixedAnswer(Answer::AllowOnce),
        &mut |event| events.push(event.clone()),
        &CancelToken::new(),
    );
    let seconds = started.elapsed().as_secs_f64();
    // Before the checks, which may build the project or write a test of their own.
    let changes = Changes::between(&fixture, &root);
    let instructions = format!("{}\n{FOLLOW_UP_HINT}", toolbox.system_prompt());
    let ran = FinishedRun {
        events: &events,
        root: &root,
        instructions: &instructions,
        seconds,
    };
    let mut outcome = score(task, phrasing, &ran, toolbox.registry());
    outcome.stray_edits = (changes.files.into_iter())
        .filter(|path| !task.may_change.contains(path))
        .collect();
    outcome.written_over = changes.written_over;
    if !outcome.stray_edits.is_empty() {
        outcome.success = false;
        outcome.shown_success = false;
    }
    outcome
}

/// What a finished turn left to score.
struct FinishedRun<'a> {
    events: &'a [Event],
    /// The workspace as the turn left it.
    root: &'a Path,
    /// What Lantern told the model: an answer that recites it is no answer.
    instructions: &'a str,
    seconds: f64,
}

/// Scores a finished turn from what it left.
fn score(
    task: &EvalTask,
    phrasing: usize,
    ran: &FinishedRun<'_>,
    registry: &ToolRegistry,
) -> TaskOutcome {
    let FinishedRun {
        events,
        root,
        instructions,
        seconds,
    } = *ran;
    // Paths are judged against the workspace the run left, with no checkpoints of its own.
    let context = Workspace::open(root)
        .ok()
        .map(|ws| ToolContext::new(ws, None));
    let mut reading = Reading {
        outcome: TaskOutcome {
            seconds,
            ..TaskOutcome::blank(task, phrasing)
        },
        ran_tools: Vec::new(),
        bare_calls: Vec::new(),
        last_turn: Turn::default(),
        cut: None,
        notes: Vec::new(),
    };
    for event in events {
        reading.read(event, context.as_ref(), registry);
    }
    let Reading {
        mut outcome,
        ran_tools,
        bare_calls: _,
        last_turn,
        cut,
        notes,
    } = reading;
    outcome.calls_made = outcome.valid_calls + outcome.invalid_calls;
    outcome.mangled_answer = protocol_fragment(&outcome.answer).is_some();
    if task.needs_tool {
        outcome.right_tool = outcome
            .first_tool
            .as_ref()
            .map(|tool| task.tools.contains(tool));
    }
    if outcome.finish_reason == Some(FinishedReason::Answer) {
        outcome.model_answer = cut.unwrap_or(last_turn.text).trim().to_string();
    }
    let ending = Ending {
        answered: outcome.finish_reason == Some(FinishedReason::Answer),
        model_answer: &outcome.model_answer,
        shown: &outcome.answer,
        notes: &notes,
        instructions,
    };
    let verdict = judge(&ending, task, &ran_tools, root);
    outcome.contradicts_note = verdict.contradicts_note;
    outcome.recites_instructions = verdict.recites_instructions;
    outcome.success = verdict.success;
    outcome.shown_success = verdict.shown_success;
    outcome.notes = notes.into_iter().map(|note| note.text).collect();
    outcome
}

/// What a run's events add up to, as they are read one by one.
struct Reading<'a> {
    outcome: TaskOutcome,
    /// The tools whose calls succeeded, in order.
    ran_tools: Vec<&'a str>,
    /// The ids of the calls that ran without arguments.
    bare_calls: Vec<&'a String>,
    /// The last reply, read (its call events point into it), and the answer as the engine
    /// cut it when it looped.
    last_turn: Turn,
    cut: Option<String>,
    /// Lantern's notes beneath the answer, counted apart from the model's words.
    notes: Vec<lantern_core::answer_notes::AnswerNote>,
}

impl<'a> Reading<'a> {
    /// A call ran: what it did to the workspace's files, and whether it found anything.
    fn tool_finished(
        &mut self,
        call_id: &'a String,
        tool: &'a str,
        success: bool,
        result: &lantern_core::tool_result::ToolResult,
    ) {
        let outcome = &mut self.outcome;
        if self.bare_calls.contains(&call_id) && result.shown().found_nothing() {
            outcome.fruitless_bare_calls += 1;
        }
        let data = result.data.as_ref();
        if data.is_some_and(lantern_core::diagnostics::a_check_ran_out_of_time) {
            outcome.checks_out_of_time += 1;
        }
        if tool == EDIT_TOOL {
            outcome.edit_calls += 1;
            outcome.edits_applied += usize::from(success);
        }
        if success {
            self.ran_tools.push(tool);
        }
    }

    fn read(&mut self, event: &'a Event, context: Option<&ToolContext>, registry: &ToolRegistry) {
        let outcome = &mut self.outcome;
        match event {
            Event::TurnStarted { form, .. } => outcome.form = *form,
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
                self.last_turn = turn;
            }
            Event::CallParsed {
                step, tool, args, ..
            } => {
                outcome.valid_calls += 1;
                outcome.calls.push(format!("{tool} {args}"));
                let grounded = context.and_then(|ctx| paths_grounded(registry, ctx, tool, args));
                if let Some(grounded) = grounded {
                    outcome.path_calls += 1;
                    outcome.grounded_path_calls += usize::from(grounded);
                }
                if *step == 1 {
                    outcome.first_called(Some(tool.clone()), true);
                }
            }
            // Tag soup refused as an answer was no attempt at a call: it is counted apart.
            Event::CallRejected { .. } if is_protocol_shaped_text(&self.last_turn) => {}
            Event::CallRejected {
                step, server_call, ..
            } => {
                outcome.invalid_calls += 1;
                if *step == 1 {
                    let tool = match server_call {
                        Some(call) => Some(call.tool.clone()),
                        None => self.last_turn.call.as_ref().map(|call| call.tool.clone()),
                    };
                    outcome.first_called(tool, false);
                }
            }
            Event::ToolStarted { call_id, args, .. }
                if args.as_object().is_none_or(|args| args.is_empty()) =>
            {
                self.bare_calls.push(call_id);
            }
            Event::ToolFinished {
                call_id,
                tool,
                success,
                result,
                ..
            } => self.tool_finished(call_id, tool, *success, result),
            Event::AnswerCut { text, .. } => self.cut = Some(text.clone()),
            Event::AnswerNoted { notes: given, .. } => self.notes.clone_from(given),
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
