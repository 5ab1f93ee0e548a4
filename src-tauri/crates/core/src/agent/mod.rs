//! The agent loop: one user message in, tool calls as needed, one final answer (or a guard
//! that trips) out.
//!
//! ```text
//! message → render history → model streams text → parse → validate → sandbox + policy
//!         → (ask the user) → run the tool → feed TOOL_RESULT / TOOL_ERROR → repeat
//! ```
//!
//! Guards: at most `max_steps` model replies per message, the same call `max_repeats` times in
//! a row, `max_protocol_errors` invalid calls in a row, and the cancel token. Every step is an
//! [`Event`]; the caller renders them (UI, CLI) and may save them as a transcript.

mod answer;
mod calls;
mod compaction;
mod config;
mod grants;
mod live;
mod resume;
mod texts;
mod turn;

pub use crate::model::SUMMARY_PREFIX;
use calls::Author;
pub use calls::{Answer, CallOutcome, Confirmer, FixedAnswer, PermissionRequest, Refusal};
pub use compaction::cut_to_fit;
pub use config::AgentConfig;
pub use resume::history_from_events;

use crate::checkpoint::CheckpointStore;
use crate::error::ErrorType;
use crate::event::{AnswerKind, Event, FinishedReason};
use crate::model::{CancelToken, KnownPaths, Message, Model, Role};
use crate::policy::{decide, Decision, Effect, Grant, Lifetime, PolicyStore, Subject};
use crate::sandbox::Workspace;
use crate::tool_result::ToolResult;
use crate::toolbox::Toolbox;
use crate::tools::{normalize_args, PrepareError, PreviewKind, Risk, ToolContext, ToolRegistry};
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A conversation with one workspace: history, grants, task list, checkpoints.
pub struct Session {
    toolbox: Arc<Toolbox>,
    ctx: ToolContext,
    policy: Option<PolicyStore>,
    saved_grants: Vec<Grant>,
    session_grants: Vec<Grant>,
    history: Vec<Message>,
    pub config: AgentConfig,
    calls: usize,
    /// Set when the saved grants could not be read (see [`PolicyStore::load`]).
    pub policy_warning: Option<String>,
    /// What path arguments may name, walked when a step needs it and forgotten when a turn
    /// starts or a call may have changed the files.
    known_paths: Option<KnownPaths>,
    /// How full the model's context was after the last step, when the model says.
    filled: Option<f64>,
}

/// Where a session keeps its state. `None` fields disable that kind of persistence (tests).
pub struct SessionOptions {
    /// The tools and system prompt of this process.
    pub toolbox: Arc<Toolbox>,
    pub policy: Option<PolicyStore>,
    pub checkpoints: Option<CheckpointStore>,
    pub config: AgentConfig,
}

impl SessionOptions {
    /// Nothing kept beyond the session: no saved grants (every call the policy asks about is
    /// asked anew) and no checkpoints (no undo); the default agent settings.
    pub fn in_memory(toolbox: Arc<Toolbox>) -> Self {
        SessionOptions {
            toolbox,
            policy: None,
            checkpoints: None,
            config: AgentConfig::default(),
        }
    }

    /// Grants and checkpoints in the user's config and data directories.
    pub fn persistent(workspace: &Workspace, toolbox: Arc<Toolbox>) -> Self {
        SessionOptions {
            toolbox,
            policy: Some(PolicyStore::for_workspace(
                &crate::paths::config_dir(),
                workspace.root(),
            )),
            checkpoints: Some(CheckpointStore::for_workspace(
                &crate::paths::data_dir(),
                workspace,
            )),
            config: AgentConfig::default(),
        }
    }
}

impl Session {
    pub fn new(workspace: Workspace, options: SessionOptions) -> Self {
        let system = options.toolbox.system_prompt().to_string();
        let (saved_grants, policy_warning) = match &options.policy {
            Some(store) => {
                let loaded = store.load();
                (loaded.grants, loaded.warning)
            }
            None => (Vec::new(), None),
        };
        Session {
            ctx: ToolContext::new(workspace, options.checkpoints),
            toolbox: options.toolbox,
            policy: options.policy,
            saved_grants,
            session_grants: Vec::new(),
            history: vec![Message::new(Role::System, system)],
            config: options.config,
            calls: 0,
            policy_warning,
            known_paths: None,
            filled: None,
        }
    }

    pub fn registry(&self) -> &ToolRegistry {
        self.toolbox.registry()
    }

    pub fn workspace(&self) -> &Workspace {
        &self.ctx.workspace
    }

    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// Handles one user message to the end; returns the `turn_finished` event.
    ///
    /// The turn's phases are in [`turn`]: begin (the prompt, the map, the message), then steps
    /// of generate → report → act on the reply (answer, refusal or call), then finish.
    pub fn send(
        &mut self,
        message: &str,
        model: &mut dyn Model,
        confirmer: &mut dyn Confirmer,
        emit: &mut dyn FnMut(&Event),
        cancel: &CancelToken,
    ) -> Event {
        let mut turn = self.begin_turn(message, model, emit);
        let (reason, text) = loop {
            if cancel.is_cancelled() {
                break (FinishedReason::Cancelled, String::new());
            }
            if turn.steps == self.config.max_steps {
                break (FinishedReason::MaxSteps, String::new());
            }
            turn.steps += 1;
            emit(&Event::StepStarted { step: turn.steps });
            if let Some(end) = self.step(&mut turn, message, model, confirmer, emit, cancel) {
                break end;
            }
        };
        self.finish_turn(reason, text, turn.steps, emit)
    }

    /// Runs one call written by hand (the CLI's `tool`, the inspector's manual call and re-run)
    /// through the same validation, sandbox and policy as the model's calls.
    pub fn run_call(
        &mut self,
        tool: &str,
        mut args: Value,
        confirmer: &mut dyn Confirmer,
        emit: &mut dyn FnMut(&Event),
    ) -> CallOutcome {
        normalize_args(&mut args);
        self.calls += 1;
        let call_id = format!("call-{}", self.calls);
        if self.toolbox.registry().spec(tool).is_none() {
            return CallOutcome::Refused(Refusal {
                error_type: ErrorType::ValidationFailed,
                message: format!(
                    "Unknown tool \"{tool}\". Available tools: {}",
                    self.toolbox.registry().names().join(", ")
                ),
            });
        }
        if let Err(message) = self.toolbox.registry().check_args(tool, &args) {
            return CallOutcome::Refused(Refusal {
                error_type: ErrorType::ValidationFailed,
                message,
            });
        }
        self.execute(&call_id, tool, args, Author::User, confirmer, emit)
    }

    /// Sandbox, policy, confirmation, run. `args` has passed schema validation.
    fn execute(
        &mut self,
        call_id: &str,
        tool: &str,
        args: Value,
        author: Author,
        confirmer: &mut dyn Confirmer,
        emit: &mut dyn FnMut(&Event),
    ) -> CallOutcome {
        let deny = |emit: &mut dyn FnMut(&Event),
                    rule: String,
                    answer: Option<AnswerKind>,
                    error_type: ErrorType,
                    message: String| {
            emit(&Event::PermissionAnswered {
                call_id: call_id.to_string(),
                decision: Effect::Deny,
                answer,
                rule,
                message: Some(message.clone()),
            });
            CallOutcome::Refused(Refusal {
                error_type,
                message,
            })
        };
        // The declared paths are resolved here, once, before the policy: the hard rules and
        // the grants judge the very paths the tool will be handed.
        let call = match self
            .toolbox
            .registry()
            .prepare(tool, args.clone(), &self.ctx)
        {
            Ok(call) => call,
            Err(PrepareError::Arguments(e)) => {
                return CallOutcome::Refused(Refusal {
                    error_type: e.kind,
                    message: e.model_text(),
                })
            }
            Err(PrepareError::Sandbox(e)) => {
                return deny(
                    emit,
                    "sandbox: paths must stay inside the workspace".to_string(),
                    None,
                    e.kind,
                    e.model_text(),
                )
            }
        };
        let risk = call.risk();
        let paths: Vec<String> = call
            .target()
            .paths()
            .iter()
            .map(|p| p.rel().to_string())
            .collect();
        let command = call.target().command().map(str::to_string);
        let (reasoning, unpointed) = match author {
            Author::Model { reasoning } if risk == Risk::Write => {
                (reasoning, crate::pointed::unpointed(&paths, &self.history))
            }
            Author::Model { reasoning } => (reasoning, Vec::new()),
            Author::User => (None, Vec::new()),
        };
        let subject = Subject {
            tool,
            risk,
            paths: paths.clone(),
            command: command.as_deref(),
            unpointed: unpointed.clone(),
        };
        let grants: Vec<Grant> = self.grants().cloned().collect();
        let decision = decide(&subject, &grants);
        // A call its tool can tell will fail (an edit whose old text is not in the file) fails
        // here, before the user is asked to approve a change that cannot be made; a call the
        // policy refuses is refused without its files being looked at.
        if !matches!(decision, Decision::Deny { .. }) {
            if let Err(error) = call.check(&self.ctx) {
                emit(&Event::ToolStarted {
                    call_id: call_id.to_string(),
                    tool: tool.to_string(),
                    args,
                });
                let result = ToolResult::from_outcome(Err(error), Duration::ZERO);
                emit(&Event::ToolFinished {
                    call_id: call_id.to_string(),
                    tool: tool.to_string(),
                    success: false,
                    error_type: result.error_type,
                    execution_time_ms: 0,
                    result: result.clone(),
                });
                return CallOutcome::Ran(result);
            }
        }
        let (rule, answer) = match decision {
            Decision::Allow { rule } => (rule, None),
            Decision::Deny { rule, reason } => {
                return deny(
                    emit,
                    rule,
                    None,
                    ErrorType::PermissionDenied,
                    format!("Permission denied: {reason}"),
                )
            }
            Decision::Ask { rule } => {
                let request = PermissionRequest {
                    call_id: call_id.to_string(),
                    tool: tool.to_string(),
                    args: args.clone(),
                    reasoning,
                    risk,
                    paths: paths.clone(),
                    command: command.clone(),
                    rule: rule.clone(),
                    preview: call.preview(&self.ctx),
                    preview_kind: self
                        .toolbox
                        .registry()
                        .spec(tool)
                        .map_or(PreviewKind::None, |s| s.preview_kind),
                    unpointed,
                };
                emit(&Event::PermissionAsked {
                    call_id: call_id.to_string(),
                    tool: tool.to_string(),
                    args: args.clone(),
                    reasoning: request.reasoning.clone(),
                    rule: rule.clone(),
                    preview: request.preview.clone(),
                });
                match confirmer.confirm(&request) {
                    Answer::AllowOnce => (
                        "the user allowed this call once".to_string(),
                        Some(AnswerKind::Once),
                    ),
                    Answer::AllowSession { scope } => {
                        self.grant_answer(tool, scope, Lifetime::Session)
                    }
                    Answer::AllowAlways { scope } => {
                        self.grant_answer(tool, scope, Lifetime::Always)
                    }
                    Answer::Deny { message } => {
                        let text = match message.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
                            Some(m) => format!("Permission denied: the user refused this call and says: {m}"),
                            None => "Permission denied: the user refused this call. Do not repeat it; ask the user or try something else.".to_string(),
                        };
                        return deny(
                            emit,
                            "the user denied this call".to_string(),
                            Some(AnswerKind::Deny),
                            ErrorType::PermissionDenied,
                            text,
                        );
                    }
                    Answer::Unanswerable { reason } => {
                        return deny(
                            emit,
                            rule,
                            None,
                            ErrorType::PermissionDenied,
                            format!("Permission denied: {reason}"),
                        );
                    }
                }
            }
        };
        emit(&Event::PermissionAnswered {
            call_id: call_id.to_string(),
            decision: Effect::Allow,
            answer,
            rule,
            message: None,
        });
        emit(&Event::ToolStarted {
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            args,
        });
        self.ctx.origin = format!("{call_id} {tool}");
        let started = Instant::now();
        if call.risk() >= Risk::Write {
            // The files may change: walk again before the next step.
            self.known_paths = None;
        }
        let outcome = call.run(&self.ctx);
        let result = ToolResult::from_outcome(outcome, started.elapsed());
        emit(&Event::ToolFinished {
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            success: result.success,
            error_type: result.error_type,
            execution_time_ms: result.metadata.execution_time_ms,
            result: result.clone(),
        });
        CallOutcome::Ran(result)
    }

    /// The checkpoint store, when writes are being checkpointed.
    pub fn checkpoints(&self) -> Option<&CheckpointStore> {
        self.ctx.checkpoints.as_ref()
    }
}
