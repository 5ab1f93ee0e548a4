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
mod execute;
mod grants;
mod live;
mod resume;
mod texts;
mod turn;

pub use crate::model::SUMMARY_PREFIX;
use calls::Author;
pub use calls::{Answer, CallOutcome, Confirmer, FixedAnswer, PermissionRequest, Refusal};
pub use compaction::cut_to_fit;
pub use config::{repo_map_budget, AgentConfig, SERVER_REPO_MAP};
pub use resume::history_from_events;
pub use turn::offer_for;

/// The map of `workspace`'s code a conversation opens with at `budget` characters, before a
/// message points it anywhere (see [`AgentConfig::repo_map`]); empty when the code defines
/// nothing the index reads.
pub fn opening_code_map(
    workspace: &Workspace,
    code_index: &crate::code_index::ProjectIndex,
    budget: usize,
) -> String {
    let nothing_asked = crate::question::Question::read("");
    texts::code_map(
        workspace,
        code_index,
        &nothing_asked,
        &Default::default(),
        budget,
    )
}

use crate::checkpoint::CheckpointStore;
use crate::error::ErrorType;
use crate::event::{Event, FinishedReason};
use crate::model::{CancelToken, Message, Model, Role};
use crate::policy::{Grant, PolicyStore};
use crate::sandbox::Workspace;
use crate::toolbox::Toolbox;
use crate::tools::{normalize_args, ToolContext, ToolRegistry};
use serde_json::Value;
use std::sync::Arc;

/// A conversation with one workspace: history, grants, task list, checkpoints.
pub struct Session {
    toolbox: Arc<Toolbox>,
    ctx: ToolContext,
    policy: Option<PolicyStore>,
    saved_grants: Vec<Grant>,
    session_grants: Vec<Grant>,
    history: Vec<Message>,
    pub config: AgentConfig,
    /// The N of the last `call-N` the conversation has reached: the next call is numbered
    /// after it.
    calls: usize,
    /// Every call id the conversation has given (a server's own among them), whether or not its
    /// call is still in the history: a call written by hand never enters it, and a summary of
    /// earlier turns takes calls out of it.
    given_ids: std::collections::HashSet<String>,
    /// Set when the saved grants could not be read (see [`PolicyStore::load`]).
    pub policy_warning: Option<String>,
    /// What path and symbol arguments may name, looked at when a step needs it and forgotten
    /// when a turn starts or a call may have changed the files.
    seen: texts::FilesSeen,
    /// How full the model's context was after the last step, when the model says.
    filled: Option<f64>,
    /// The tools this turn offers, when not all of them (many tools from MCP servers).
    offer: Option<Arc<crate::toolbox::Offer>>,
    /// The folders' own instructions given in this conversation so far, by file.
    folder_rules: Vec<String>,
    /// What each file the model's writes changed in this turn held before the first of them:
    /// the lines a write loses are counted from there, so that losses one call at a time add
    /// up.
    turn_start_contents: std::collections::HashMap<String, String>,
}

/// Where a session keeps its state. `None` fields disable that kind of persistence (tests).
pub struct SessionOptions {
    /// The tools and system prompt of this process.
    pub toolbox: Arc<Toolbox>,
    pub policy: Option<PolicyStore>,
    pub checkpoints: Option<CheckpointStore>,
    /// Where the workspace's code index is saved between runs.
    pub saved_index: Option<std::path::PathBuf>,
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
            saved_index: None,
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
            saved_index: Some(crate::code_index::saved_index_path(workspace.root())),
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
        let mut ctx = ToolContext::new(workspace, options.checkpoints);
        if let Some(saved) = options.saved_index {
            ctx.code_index = Arc::new(crate::code_index::ProjectIndex::saved_at(saved));
        }
        Session {
            ctx,
            toolbox: options.toolbox,
            policy: options.policy,
            saved_grants,
            session_grants: Vec::new(),
            history: vec![Message::new(Role::System, system)],
            config: options.config,
            calls: 0,
            given_ids: Default::default(),
            policy_warning,
            seen: Default::default(),
            filled: None,
            offer: None,
            folder_rules: Vec::new(),
            turn_start_contents: std::collections::HashMap::new(),
        }
    }

    /// Offers `toolbox` from the next step on (the tools of MCP servers came or went): its
    /// system prompt replaces the old one at the head of the history.
    pub fn use_toolbox(&mut self, toolbox: Arc<Toolbox>) {
        if let Some(system) = self.history.first_mut() {
            *system = Message::new(Role::System, toolbox.system_prompt());
        }
        self.toolbox = toolbox;
    }

    pub fn registry(&self) -> &ToolRegistry {
        self.toolbox.registry()
    }

    pub fn workspace(&self) -> &Workspace {
        &self.ctx.workspace
    }

    /// The workspace's code index, to build or ask about apart from a turn (the window builds
    /// it when a folder opens).
    pub fn code_index(&self) -> Arc<crate::code_index::ProjectIndex> {
        Arc::clone(&self.ctx.code_index)
    }

    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// Handles one user message to the end; returns the `turn_finished` event.
    ///
    /// The turn's phases are in `turn`: begin (the prompt, the map, the message), then steps
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
        // The tools of this turn stop with it (a call waiting on an MCP server).
        self.ctx.cancel = cancel.clone();
        let (reason, text) = loop {
            if cancel.is_cancelled() {
                break (FinishedReason::Cancelled, String::new());
            }
            if turn.steps == self.config.max_steps {
                break (FinishedReason::MaxSteps, String::new());
            }
            turn.steps += 1;
            emit(&Event::StepStarted { step: turn.steps });
            if let Some(end) = self.step(&mut turn, model, confirmer, emit, cancel) {
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
        args: Value,
        confirmer: &mut dyn Confirmer,
        emit: &mut dyn FnMut(&Event),
    ) -> CallOutcome {
        self.run_stoppable_call(tool, args, confirmer, emit, &CancelToken::new())
    }

    /// [`Session::run_call`], stopped when `cancel` fires (the window's Stop): a running
    /// command or server call is cancelled as it is in a turn.
    pub fn run_stoppable_call(
        &mut self,
        tool: &str,
        mut args: Value,
        confirmer: &mut dyn Confirmer,
        emit: &mut dyn FnMut(&Event),
        cancel: &CancelToken,
    ) -> CallOutcome {
        self.ctx.cancel = cancel.clone();
        normalize_args(&mut args);
        let call_id = self.next_call_id(None);
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

    /// The checkpoint store, when writes are being checkpointed.
    pub fn checkpoints(&self) -> Option<&CheckpointStore> {
        self.ctx.checkpoints.as_ref()
    }
}
