//! What the user is asked about a call and answers, and how a call ends: the agent's side of a
//! confirmation and of a call's outcome.

use super::texts::VisibleTexts;
use crate::error::{ErrorType, ToolError};
use crate::event::RefusedServerCall;
use crate::model::{FileTexts, MadeCall, Message, Role};
use crate::policy::Scope;
use crate::protocol::Turn;
use crate::question::Question;
use crate::relevance::focus_result;
use crate::tool_result::ToolResult;
use crate::tools::{DroppedLines, PreviewKind, Risk};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the user is asked to approve.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PermissionRequest {
    pub call_id: String,
    pub tool: String,
    pub args: Value,
    pub reasoning: Option<String>,
    pub risk: Risk,
    /// Workspace-relative paths the call touches.
    pub paths: Vec<String>,
    pub command: Option<String>,
    /// Why the policy asks.
    pub rule: String,
    /// For writes: the diff of old and new content.
    pub preview: Option<Value>,
    /// What `preview` holds, as the tool declares it: a confirmation shows it by this kind.
    pub preview_kind: PreviewKind,
    /// Files the call would write that no message of the user named and no tool result
    /// showed: the model chose them on its own. A confirmation says so plainly, and a fixed
    /// answer does not approve such a call.
    pub unpointed: Vec<String>,
    /// The lines of existing files the write would take out without quoting them (a whole
    /// file rewritten): a confirmation says so plainly, and a fixed answer does not approve
    /// a call that drops most of a file.
    pub drops: Vec<DroppedLines>,
    /// For a tool of an MCP server: which server, and how it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<crate::spec::ToolSource>,
}

/// Who wrote a call.
pub(super) enum Author {
    /// The model, with the reason it gave, answering a message that asked to change or take
    /// out what is there ([`crate::question::Question::asks_to_replace`]) or not.
    Model {
        reasoning: Option<String>,
        asked_to_replace: bool,
    },
    /// The user, by hand (the CLI's `tool`, the inspector's manual call and re-run).
    User,
}

/// The user's answer to a [`PermissionRequest`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum Answer {
    AllowOnce,
    AllowSession {
        scope: Scope,
    },
    AllowAlways {
        scope: Scope,
    },
    /// Closing the dialog is a deny too. `message` is passed on to the model.
    Deny {
        message: Option<String>,
    },
    /// Nobody can be asked (no terminal, no window); `reason` says how to allow such calls.
    Unanswerable {
        reason: String,
    },
}

/// Asks the user. The app shows a dialog and waits for its reply; the CLI asks on the terminal.
pub trait Confirmer {
    fn confirm(&mut self, request: &PermissionRequest) -> Answer;
}

/// A confirmer that gives the same answer every time (`--approve all|none`, `--yes`, `--deny`).
/// Nobody reads what it approves, so it never approves a write to a file the model chose on
/// its own ([`PermissionRequest::unpointed`]) nor one that drops most of a file or writes over
/// a line the user asked to keep ([`DroppedLines::needs_a_person`]): those need a person.
pub struct FixedAnswer(pub Answer);

impl Confirmer for FixedAnswer {
    fn confirm(&mut self, request: &PermissionRequest) -> Answer {
        let approves = matches!(
            self.0,
            Answer::AllowOnce | Answer::AllowSession { .. } | Answer::AllowAlways { .. }
        );
        if approves && !request.unpointed.is_empty() {
            return Answer::Unanswerable {
                reason: format!(
                    "{} would change {}, which the user did not name and no result showed; an automatic yes does not approve a file the model chose on its own. Search for what the user asked about, which finds the file that holds it, or ask the user to name the file.",
                    request.tool,
                    request.unpointed.join(", ")
                ),
            };
        }
        if approves && request.drops.iter().any(DroppedLines::needs_a_person) {
            return Answer::Unanswerable {
                reason: format!(
                    "{} would lose lines the user did not ask to lose: {}; an automatic yes does not approve that. Keep every line that is there and change or add only what was asked.",
                    request.tool,
                    crate::policy::dropped_lines(&request.drops)
                ),
            };
        }
        self.0.clone()
    }
}

/// A call that was not run, and why.
#[derive(Debug, Clone)]
pub struct Refusal {
    pub error_type: ErrorType,
    pub message: String,
}

/// How one call ended.
pub enum CallOutcome {
    Ran(ToolResult),
    Refused(Refusal),
}

impl CallOutcome {
    /// What the model reads next: the result, or why the call was not run.
    pub fn to_message(&self, call_id: &str) -> Message {
        match self {
            CallOutcome::Ran(result) => Message::tool_result(call_id, result.shown()),
            CallOutcome::Refused(r) => Message::call_refused(call_id, r.message.clone()),
        }
    }

    /// The structured result, refusals included (for the CLI and the inspector).
    pub fn into_result(self) -> ToolResult {
        match self {
            CallOutcome::Ran(result) => result,
            CallOutcome::Refused(r) => ToolResult::failure(
                ToolError::new(r.error_type, r.message),
                std::time::Duration::ZERO,
            ),
        }
    }
}

impl super::Session {
    /// The id of the next call, counted: the server's own, when it gave one this conversation
    /// has not given before (the result sent back must name the call the server made), else
    /// Lantern's next `call-N` not given before. Every id given stays given, though its call
    /// may no longer be in the history: a call written by hand runs, and is shown, under its
    /// id; a summary of earlier turns drops calls the transcript still shows.
    pub(super) fn next_call_id(&mut self, native: Option<&str>) -> String {
        self.calls += 1;
        let id = match native.filter(|id| !self.given_ids.contains(*id)) {
            Some(id) => id.to_string(),
            None => {
                // A server's own id may have the shape of the next one.
                while self.given_ids.contains(&format!("call-{}", self.calls)) {
                    self.calls += 1;
                }
                format!("call-{}", self.calls)
            }
        };
        self.given_ids.insert(id.clone());
        id
    }
}

/// N of an id shaped as Lantern gives them (`call-N`); `None` for any other id (a server's own),
/// and for an N too large to be one Lantern gave.
pub(super) fn lantern_number(id: &str) -> Option<usize> {
    let n: u32 = id.strip_prefix("call-")?.parse().ok()?;
    Some(n as usize)
}

/// What the history keeps of a reply whose call was refused before it ran: the reply, then the
/// refusal the model reads next. A call the server made through its API stays a call, answered
/// by the refusal under its id, as a call that ran is answered by its result.
pub(super) fn refused_reply(
    turn: &Turn,
    feedback: &str,
    server_call: Option<&RefusedServerCall>,
) -> [Message; 2] {
    let reply = turn.reply_until(turn.raw.len());
    match server_call {
        Some(call) => {
            let made = MadeCall {
                said: turn.text.clone(),
                tool: call.tool.clone(),
                args: call.args.clone(),
            };
            [
                Message::assistant_call(&call.call_id, reply, made),
                Message::call_refused(&call.call_id, feedback),
            ]
        }
        None => [
            Message::new(Role::Assistant, reply),
            Message::call_rejected(feedback),
        ],
    }
}

/// A tool message with a `note` the model should read beside the result (e.g. that a second
/// call in the same reply was not run). A refusal keeps the note on a line of its own.
pub(super) fn with_note(message: Message, note: &str) -> Message {
    match message.result() {
        Some(result) => message.with_result(result.clone().with_note(note)),
        None => {
            let mut refusal = message;
            refusal.content = format!("{}\n{note}", refusal.content);
            refusal
        }
    }
}

impl super::Session {
    /// What the model reads after a call: its result, with what answers `question` first when
    /// results are focused (see [`crate::relevance`]), or why the call was not run.
    pub(super) fn reply_to(
        &mut self,
        call_id: &str,
        outcome: &CallOutcome,
        question: &Question,
    ) -> Message {
        let (CallOutcome::Ran(result), true) = (outcome, self.config.focus_results) else {
            return outcome.to_message(call_id);
        };
        // The files are listed only when a definition's body may be read.
        let texts = self.config.definition_bodies.then(|| VisibleTexts {
            workspace: &self.ctx.workspace,
            known: self.seen.look(&self.ctx, self.toolbox.specs()).0,
            code_index: Some(&self.ctx.code_index),
        });
        let files = texts.as_ref().map(|t| t as &dyn FileTexts);
        let lean_reads = self.config.lean_reads;
        Message::tool_result(call_id, focus_result(result, question, files, lean_reads))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_note_joins_a_result_as_a_member_and_a_refusal_as_a_line() {
        let read = json!({"success": true, "data": {"path": "a.txt", "content": "x"}});
        let noted = with_note(
            Message::tool_result("call-2", read.into()),
            "Only one call runs.",
        );
        assert_eq!(noted.call_id.as_deref(), Some("call-2"));
        let result = noted.result().expect("still a result");
        assert_eq!(result.seen().data.path.as_deref(), Some("a.txt"));
        assert_eq!(result.value()["note"], "Only one call runs.");
        assert_eq!(noted.content, result.to_string());

        let refusal = with_note(
            Message::call_refused("call-3", "No such tool."),
            "Only one.",
        );
        assert_eq!(refusal.content, "No such tool.\nOnly one.");
        assert!(refusal.rejected && refusal.result().is_none());
    }
}
