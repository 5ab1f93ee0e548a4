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

pub use crate::model::SUMMARY_PREFIX;
use calls::Author;
pub use calls::{Answer, CallOutcome, Confirmer, FixedAnswer, PermissionRequest, Refusal};
pub use compaction::cut_to_fit;
pub use config::AgentConfig;
pub use resume::history_from_events;
use texts::VisibleTexts;

use crate::checkpoint::CheckpointStore;
use crate::error::ErrorType;
use crate::event::{AnswerKind, Event, FinishedReason, NO_ANSWER};
use crate::model::{
    CallPath, CancelToken, Flow, GenerateRequest, KnownPaths, Message, Model, Role,
};
use crate::policy::{decide, Decision, Effect, Grant, Lifetime, PolicyStore, Subject};
use crate::project_map::project_map;
use crate::protocol::markers::is_protocol_shaped_text;
use crate::protocol::{interpret, Outcome, ProblemKind, TurnParser, STOP_SEQUENCES};
use crate::sandbox::Workspace;
use crate::tool_result::ToolResult;
use crate::toolbox::Toolbox;
use crate::tools::{normalize_args, PrepareError, PreviewKind, Risk, ToolContext, ToolRegistry};
use crate::walk::known_paths;
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
    pub fn send(
        &mut self,
        message: &str,
        model: &mut dyn Model,
        confirmer: &mut dyn Confirmer,
        emit: &mut dyn FnMut(&Event),
        cancel: &CancelToken,
    ) -> Event {
        emit(&Event::TurnStarted {
            message: message.to_string(),
            model: model.name(),
        });
        // The model may have been changed since the last turn, and with it how it calls tools.
        let system = self.toolbox.system_prompt_for(model.call_path());
        if self.history[0].content != system {
            self.history[0].content = system.to_string();
        }
        // The user may have changed the files since the last turn.
        self.known_paths = None;
        if self.config.project_map > 0 && self.history.len() == 1 {
            let known = known_paths(&self.ctx.workspace);
            let map = project_map(&known, self.config.project_map);
            if !map.is_empty() {
                self.history.push(Message::new(Role::System, map));
            }
            self.known_paths = Some(known);
        }
        self.history.push(Message::new(Role::User, message));
        let mut turn_start = self.history.len() - 1;
        let mut last_calls: Vec<(String, Value)> = Vec::new();
        let mut protocol_errors = 0;
        let mut steps = 0;
        let (reason, text) = loop {
            if cancel.is_cancelled() {
                break (FinishedReason::Cancelled, String::new());
            }
            if steps == self.config.max_steps {
                break (FinishedReason::MaxSteps, String::new());
            }
            steps += 1;
            emit(&Event::StepStarted { step: steps });
            if self
                .filled
                .take()
                .is_some_and(|f| f >= compaction::COMPACT_AT)
            {
                turn_start = self.compact(steps, turn_start, model, cancel, emit);
            }

            let mut parser = TurnParser::new();
            let mut streamed = String::new();
            let mut live = live::LiveText::new();
            let texts = VisibleTexts::of(&self.ctx.workspace, &mut self.known_paths);
            let request = GenerateRequest::new(&self.history, self.config.max_tokens, cancel)
                .with_tools(self.toolbox.specs())
                .with_workspace(texts.known, &texts)
                .with_stop(STOP_SEQUENCES)
                .with_tool_choice(self.config.tool_choice);
            let generated = model.generate(&request, &mut |piece| {
                let settled = parser.push(piece);
                if !settled.is_empty() {
                    streamed.push_str(&settled);
                    if let Some(text) = live.push(&settled) {
                        emit(&Event::TextDelta { step: steps, text });
                    }
                }
                if parser.call_complete() {
                    Flow::Stop
                } else {
                    Flow::Continue
                }
            });
            if let Some(text) = live.flush() {
                emit(&Event::TextDelta { step: steps, text });
            }
            let generation = match generated {
                Ok(g) => g,
                Err(e) => break (FinishedReason::Error, e.0),
            };
            if generation.messages_trimmed > 0 || generation.results_cut > 0 {
                emit(&Event::ContextTrimmed {
                    step: steps,
                    messages_dropped: generation.messages_trimmed,
                    results_cut: generation.results_cut,
                });
            }
            if let (Some(used), Some(size)) = (generation.context_used, generation.context_size) {
                self.filled = Some(used as f64 / size.max(1) as f64);
            }
            if cancel.is_cancelled() {
                break (FinishedReason::Cancelled, String::new());
            }
            let turn = parser.finish();
            emit(&Event::ResponseFinished {
                step: steps,
                raw: turn.raw.clone(),
                constrained: generation.constrained,
                call_confidence: generation.call_confidence,
                tokens_evaluated: generation.tokens_evaluated,
                tokens_generated: generation.tokens_generated,
                context_used: generation.context_used,
                context_size: generation.context_size,
                native_deltas: generation.native_deltas.clone(),
                // Sent apart by a server, or written by the model at the start of its text.
                thinking: Some(generation.thinking.clone())
                    .filter(|t| !t.is_empty())
                    .or_else(|| turn.thinking.clone()),
                decision: generation.decision.clone(),
            });
            let mut outcome = interpret(&turn, self.toolbox.registry());
            if !self.config.protocol_guard && is_protocol_shaped_text(&turn) {
                outcome = Outcome::Text {
                    text: turn.text.clone(),
                };
            }
            match outcome {
                Outcome::Text { text } => {
                    // The parser holds back text that might have begun a tag; send the rest.
                    let sent = streamed.trim_start();
                    if let Some(rest) = text.strip_prefix(sent).filter(|r| !r.is_empty()) {
                        emit(&Event::TextDelta {
                            step: steps,
                            text: rest.to_string(),
                        });
                    }
                    self.history.push(Message::new(
                        Role::Assistant,
                        turn.reply_until(turn.raw.len()),
                    ));
                    let answer =
                        self.answer_from(text, generation.finish, steps, turn_start, message, emit);
                    break (FinishedReason::Answer, answer);
                }
                Outcome::Invalid {
                    error_type,
                    message,
                    feedback,
                    raw,
                    ..
                } => {
                    emit(&Event::CallRejected {
                        step: steps,
                        error_type,
                        message,
                        feedback: feedback.clone(),
                        raw,
                        response: turn.raw.clone(),
                    });
                    self.history.push(Message::new(
                        Role::Assistant,
                        turn.reply_until(turn.raw.len()),
                    ));
                    self.history.push(Message::call_rejected(feedback));
                    protocol_errors += 1;
                    if protocol_errors >= self.config.max_protocol_errors {
                        break (FinishedReason::ProtocolErrors, String::new());
                    }
                }
                Outcome::ToolCall {
                    tool,
                    args,
                    reasoning,
                    dialect,
                    raw,
                    span,
                    problems,
                    ..
                } => {
                    protocol_errors = 0;
                    self.calls += 1;
                    let call_id = self.call_id_for(generation.native_call_id.as_deref());
                    // The model hears about calls it made that were not run, with the result.
                    let not_run = problems
                        .iter()
                        .find(|p| p.kind == ProblemKind::ExtraCall)
                        .map(|p| p.message.clone());
                    emit(&Event::CallParsed {
                        step: steps,
                        call_id: call_id.clone(),
                        tool: tool.clone(),
                        args: args.clone(),
                        reasoning: reasoning.clone(),
                        dialect,
                        constrained: generation.constrained,
                        call_confidence: generation.call_confidence,
                        raw: raw.clone(),
                        span,
                        response: turn.raw.clone(),
                        problems,
                        via: if generation.native_deltas.is_empty() && !generation.native_template {
                            CallPath::Text
                        } else {
                            CallPath::Native
                        },
                    });
                    // What the model said up to the end of its call; the rest was discarded, and
                    // its thinking is not kept, as reasoning models' templates expect.
                    self.history.push(Message::assistant_call(
                        &call_id,
                        turn.reply_until(span.end),
                    ));
                    last_calls.push((tool.clone(), args.clone()));
                    let repeats = last_calls
                        .iter()
                        .rev()
                        .take_while(|c| c.0 == tool && c.1 == args)
                        .count();
                    if repeats >= self.config.max_repeats {
                        break (FinishedReason::Repetition, String::new());
                    }
                    let outcome = self.execute(
                        &call_id,
                        &tool,
                        args,
                        Author::Model { reasoning },
                        confirmer,
                        emit,
                    );
                    let mut reply = self.reply_to(&call_id, &outcome, message);
                    if let Some(note) = not_run {
                        reply.content = calls::with_note(&reply.content, &note);
                    }
                    self.history.push(reply);
                }
            }
        };
        let explanation = match reason {
            FinishedReason::Answer if text.trim().is_empty() => NO_ANSWER.to_string(),
            _ => reason.explain(match reason {
                FinishedReason::MaxSteps => self.config.max_steps,
                FinishedReason::Repetition => self.config.max_repeats,
                FinishedReason::ProtocolErrors => self.config.max_protocol_errors,
                _ => 0,
            }),
        };
        let finished = Event::TurnFinished {
            reason,
            explanation,
            text,
            steps,
        };
        emit(&finished);
        finished
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
