//! One call's way from valid arguments to a result, in phases: prepare (the sandbox resolves
//! the declared paths) → judge (the policy decides on those paths) → check (a call its tool can
//! tell will fail fails before anyone is asked) → confirm (the user, when the policy asks) →
//! run (one checkpointed tool run, reported).

use super::calls::{Answer, Author, CallOutcome, Confirmer, PermissionRequest, Refusal};
use super::Session;
use crate::error::ErrorType;
use crate::event::{AnswerKind, Event};
use crate::policy::{decide, Decision, Effect, Grant, Lifetime, Subject};
use crate::tool_result::ToolResult;
use crate::tools::{Call, DroppedLines, PrepareError, PreviewKind, Rewrite, Risk};
use serde_json::Value;
use std::time::{Duration, Instant};

/// What the policy was shown of a prepared call, and what it decided.
struct Judged {
    risk: Risk,
    paths: Vec<String>,
    command: Option<String>,
    reasoning: Option<String>,
    /// Files the call would write that the conversation never pointed at.
    unpointed: Vec<String>,
    /// The lines of existing files the model's write would take out unquoted, since the turn
    /// began.
    drops: Vec<DroppedLines>,
    /// The existing files the model's write would change, as they are now.
    rewrites: Vec<Rewrite>,
    decision: Decision,
}

/// What the confirmation phase ends in.
enum Confirmed {
    /// Run it, under this rule, with the user's answer when one was asked.
    Allowed {
        rule: String,
        answer: Option<AnswerKind>,
    },
    /// Refused, and already reported.
    Refused(CallOutcome),
}

/// A refusal, reported as the permission's answer.
fn deny(
    emit: &mut dyn FnMut(&Event),
    call_id: &str,
    rule: String,
    answer: Option<AnswerKind>,
    error_type: ErrorType,
    message: String,
) -> CallOutcome {
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
}

impl Session {
    /// Sandbox, policy, confirmation, run. `args` has passed schema validation.
    pub(super) fn execute(
        &mut self,
        call_id: &str,
        tool: &str,
        args: Value,
        author: Author,
        confirmer: &mut dyn Confirmer,
        emit: &mut dyn FnMut(&Event),
    ) -> CallOutcome {
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
                let rule = "sandbox: paths must stay inside the workspace".to_string();
                return deny(emit, call_id, rule, None, e.kind, e.model_text());
            }
        };
        let mut judged = self.judge(&call, tool, author);
        let rewrites = std::mem::take(&mut judged.rewrites);
        // A call its tool can tell will fail (an edit whose old text is not in the file) fails
        // here, before the user is asked to approve a change that cannot be made; a call the
        // policy refuses is refused without its files being looked at.
        if !matches!(judged.decision, Decision::Deny { .. }) {
            if let Err(error) = call.check(&self.ctx) {
                let result = ToolResult::from_outcome(Err(error), Duration::ZERO);
                return self.report_run(call_id, tool, args, result, emit);
            }
        }
        let confirmed = self.confirm(call_id, tool, &args, &call, judged, confirmer, emit);
        let (rule, answer) = match confirmed {
            Confirmed::Allowed { rule, answer } => (rule, answer),
            Confirmed::Refused(refused) => return refused,
        };
        emit(&Event::PermissionAnswered {
            call_id: call_id.to_string(),
            decision: Effect::Allow,
            answer,
            rule,
            message: None,
        });
        self.ctx.origin = format!("{call_id} {tool}");
        if call.risk() >= Risk::Write {
            // The files may change: walk again before the next step.
            self.seen.forget();
        }
        emit(&Event::ToolStarted {
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            args,
        });
        let started = Instant::now();
        let mut result = ToolResult::from_outcome(call.run(&self.ctx), started.elapsed());
        if result.success {
            for rewrite in rewrites {
                (self.turn_start_contents)
                    .entry(rewrite.path)
                    .or_insert(rewrite.old);
            }
        }
        result.metadata.exchange = self
            .ctx
            .exchange
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        self.finish_run(call_id, tool, result, emit)
    }

    /// The policy's decision on the paths the sandbox resolved (and, for the model's writes,
    /// the files nobody pointed at).
    fn judge(&self, call: &Call, tool: &str, author: Author) -> Judged {
        let risk = call.risk();
        // Each path, and whether it exists: a new file is pointed at only where it is asked for.
        let files: Vec<(String, bool)> = (call.target().paths().iter())
            .map(|p| (p.rel().to_string(), p.exists()))
            .collect();
        let paths: Vec<String> = files.iter().map(|(path, _)| path.clone()).collect();
        let command = call.target().command().map(str::to_string);
        let (reasoning, unpointed, rewrites, asked_to_keep) = match author {
            Author::Model {
                reasoning,
                asked_to_replace,
            } if risk == Risk::Write => {
                let index = &self.ctx.code_index;
                let defined_in = |name: &str| {
                    (index
                        .places_of(&self.ctx.workspace, name)
                        .unwrap_or_default())
                    .into_iter()
                    .map(|place| place.path)
                    .collect()
                };
                let unpointed = crate::pointed::unpointed(&files, &self.history, &defined_in);
                (
                    reasoning,
                    unpointed,
                    call.rewrites(&self.ctx),
                    !asked_to_replace,
                )
            }
            Author::Model { reasoning, .. } => (reasoning, Vec::new(), Vec::new(), false),
            Author::User => (None, Vec::new(), Vec::new(), false),
        };
        let drops: Vec<DroppedLines> = (rewrites.iter())
            .filter_map(|rewrite| {
                let before = (self.turn_start_contents.get(&rewrite.path)).unwrap_or(&rewrite.old);
                DroppedLines::between(&rewrite.path, before, &rewrite.new)
            })
            .filter(DroppedLines::loses_content)
            .map(|drop| DroppedLines {
                asked_to_keep,
                ..drop
            })
            .collect();
        let subject = Subject {
            tool,
            risk,
            paths: paths.clone(),
            command: command.as_deref(),
            unpointed: unpointed.clone(),
            drops: drops.clone(),
        };
        let grants: Vec<Grant> = self.grants().cloned().collect();
        let decision = decide(&subject, &grants);
        Judged {
            risk,
            paths,
            command,
            reasoning,
            unpointed,
            drops,
            rewrites,
            decision,
        }
    }

    /// The rule that allows the call and the user's answer, if one was asked; or the refusal.
    // The call's id, tool and arguments travel apart from the prepared call, which holds none.
    #[allow(clippy::too_many_arguments)]
    fn confirm(
        &mut self,
        call_id: &str,
        tool: &str,
        args: &Value,
        call: &Call,
        judged: Judged,
        confirmer: &mut dyn Confirmer,
        emit: &mut dyn FnMut(&Event),
    ) -> Confirmed {
        let rule = match judged.decision {
            Decision::Allow { rule } => return Confirmed::Allowed { rule, answer: None },
            Decision::Deny { rule, reason } => {
                let message = format!("Permission denied: {reason}");
                let denied = ErrorType::PermissionDenied;
                return Confirmed::Refused(deny(emit, call_id, rule, None, denied, message));
            }
            Decision::Ask { rule } => rule,
        };
        let request = PermissionRequest {
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            args: args.clone(),
            reasoning: judged.reasoning,
            risk: judged.risk,
            paths: judged.paths,
            command: judged.command,
            rule: rule.clone(),
            preview: call.preview(&self.ctx),
            preview_kind: self
                .toolbox
                .registry()
                .spec(tool)
                .map_or(PreviewKind::None, |s| s.preview_kind),
            unpointed: judged.unpointed,
            drops: judged.drops,
            source: self
                .toolbox
                .registry()
                .spec(tool)
                .and_then(|s| s.source.clone()),
        };
        emit(&Event::PermissionAsked {
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            args: args.clone(),
            reasoning: request.reasoning.clone(),
            rule: rule.clone(),
            preview: request.preview.clone(),
            unpointed: request.unpointed.clone(),
            drops: request.drops.clone(),
        });
        let denied = ErrorType::PermissionDenied;
        let (rule, answer) = match confirmer.confirm(&request) {
            Answer::AllowOnce => (
                "the user allowed this call once".to_string(),
                Some(AnswerKind::Once),
            ),
            Answer::AllowSession { scope } => self.grant_answer(tool, scope, Lifetime::Session),
            Answer::AllowAlways { scope } => self.grant_answer(tool, scope, Lifetime::Always),
            Answer::Deny { message } => {
                let text = match message.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
                    Some(m) => format!("Permission denied: the user refused this call and says: {m}"),
                    None => "Permission denied: the user refused this call. Do not repeat it; ask the user or try something else.".to_string(),
                };
                let rule = "the user denied this call".to_string();
                let answer = Some(AnswerKind::Deny);
                return Confirmed::Refused(deny(emit, call_id, rule, answer, denied, text));
            }
            Answer::Unanswerable { reason } => {
                let message = format!("Permission denied: {reason}");
                return Confirmed::Refused(deny(emit, call_id, rule, None, denied, message));
            }
        };
        Confirmed::Allowed { rule, answer }
    }

    /// A call that failed its check: reported as started and finished, without running.
    fn report_run(
        &mut self,
        call_id: &str,
        tool: &str,
        args: Value,
        result: ToolResult,
        emit: &mut dyn FnMut(&Event),
    ) -> CallOutcome {
        emit(&Event::ToolStarted {
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            args,
        });
        self.finish_run(call_id, tool, result, emit)
    }

    /// The `tool_finished` event and the call's outcome.
    fn finish_run(
        &mut self,
        call_id: &str,
        tool: &str,
        result: ToolResult,
        emit: &mut dyn FnMut(&Event),
    ) -> CallOutcome {
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
}
