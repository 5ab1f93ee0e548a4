//! The app's state and what its commands do, kept apart from Tauri's command plumbing so it can
//! be tested directly.
//!
//! One folder and one model at a time. A turn (or a manual call) holds the session for its whole
//! length and the model for the turn; anything else that needs them while they are held is
//! refused as `busy` rather than made to wait, so the window never hangs. The editor works on
//! the folder alone and is never blocked by the agent.

use crate::confirm::{Confirmations, Update, WindowConfirmer};
use crate::error::{AppError, ErrorCode};
use crate::files::{self, SavedFile, TextFile, Tree};
use crate::server_keys::ServerKeys;
use crate::settings::{AppConfig, ProviderKind, ServerConfig, Settings};
use lantern_core::agent::{repo_map_budget, Answer, Session, SessionOptions};
use lantern_core::checkpoint::{Checkpoint, CheckpointStore, UndoOutcome};
use lantern_core::code_index::ProjectIndex;
use lantern_core::event::{Event, TranscriptWriter};
use lantern_core::model::{CancelToken, Model};
use lantern_core::paths;
use lantern_core::policy::Grant;
use lantern_core::sandbox::Workspace;
use lantern_core::tool_result::ToolResult;
use lantern_core::toolbox::Toolbox;
use lantern_core::tools::ToolSpec;
use lantern_llama::{default_model_path, LocalModel, ModelFacts};
use lantern_probe::probe::ProbeReport;
use lantern_providers::{CallMode, LocalSpec};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, TryLockError};
use tauri::ipc::Channel;

const TURN_RUNNING: &str =
    "The assistant is working. Wait for it to finish, or press Stop, and try again.";
const MODEL_IN_USE: &str =
    "The model is in use (answering, loading or being probed). Try again when it is done.";

/// The open folder, as the window shows it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WorkspaceInfo {
    pub root: String,
    pub name: String,
    /// Set when the saved grants could not be read (they then grant nothing).
    pub policy_warning: Option<String>,
    /// Where this session's events are saved.
    pub transcript: String,
}

mod chats;
mod code;
mod code_map;
mod mcp;
mod rules;
mod servers;
pub use chats::ChatOpened;
pub use code_map::CodeMapInfo;
pub use mcp::{McpEdit, McpScope, McpView};
pub use rules::RulesInfo;
pub use servers::{ServerForm, ServerInfo, ServerReport};

/// The model the window works with: a local GGUF, or a model on a server.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ModelInfo {
    Local {
        facts: ModelFacts,
        /// The model Lantern downloads and uses unless told otherwise.
        is_default: bool,
        /// How the conversations' opening was made ready at load: loaded from the prompt
        /// cache after a restart, or evaluated and saved.
        opening: Option<lantern_llama::PreparedOpening>,
    },
    Server {
        server: ServerInfo,
    },
}

/// How a model load is going.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum LoadProgress {
    /// Reading the weights; `fraction` goes from 0 to 1.
    Reading { fraction: f32 },
    /// Measuring when this model should call a tool (once per model; saved afterwards).
    Calibrating,
    /// Reaching a model server and asking it which path tool calls take.
    Connecting,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ModelFile {
    pub path: String,
    pub name: String,
    pub size_bytes: u64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ModelList {
    pub models_dir: String,
    pub default_model: String,
    pub default_model_exists: bool,
    /// The GGUF files in the models folder.
    pub models: Vec<ModelFile>,
}

/// Everything the window needs to draw itself when it (re)loads.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Startup {
    pub version: &'static str,
    pub workspace: Option<WorkspaceInfo>,
    /// Why the folder given at start could not be opened.
    pub workspace_error: Option<String>,
    pub settings: Settings,
    pub model: Option<ModelInfo>,
    /// The model to load when none is loaded: the last one used while it exists, else the
    /// default model.
    pub model_to_load: String,
    pub model_to_load_exists: bool,
    /// The server to connect to at start instead, when the last model was a server's.
    pub server_to_connect: Option<ServerConfig>,
    /// The server last connected to, to fill in the form (its key is not sent to the window).
    pub last_server: Option<ServerConfig>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ExportedTranscript {
    pub path: String,
    pub events: usize,
}

/// The session's events in memory (for export) and on disk as JSON lines (like the CLI's).
struct Transcript {
    events: Vec<Event>,
    path: PathBuf,
    writer: Option<TranscriptWriter>,
    write_failed: bool,
}

impl Transcript {
    fn new(root: &Path) -> Self {
        Transcript {
            events: Vec::new(),
            path: paths::new_transcript_path(root),
            writer: None,
            write_failed: false,
        }
    }

    fn record(&mut self, event: &Event) {
        self.events.push(event.clone());
        if self.write_failed {
            return;
        }
        // The file is created with the first event, so opening a folder leaves no empty files.
        if self.writer.is_none() {
            match TranscriptWriter::create(&self.path) {
                Ok(writer) => self.writer = Some(writer),
                Err(e) => {
                    self.write_failed = true;
                    eprintln!(
                        "lantern: cannot write the transcript {}: {e}; it is kept in memory only",
                        self.path.display()
                    );
                    return;
                }
            }
        }
        if let Some(writer) = &mut self.writer {
            if let Err(e) = writer.write(event) {
                self.write_failed = true;
                eprintln!("lantern: the transcript stopped being saved: {e}");
            }
        }
    }
}

struct OpenFolder {
    workspace: Workspace,
    info: WorkspaceInfo,
}

pub struct AppState {
    /// The tools and system prompt every session, calibration and probe of the window uses:
    /// the built-in tools and those of the open folder's MCP servers.
    toolbox: RwLock<Arc<Toolbox>>,
    /// The open folder's MCP servers, running.
    mcp: Mutex<Option<lantern_mcp::hub::Hub>>,
    folder: RwLock<Option<OpenFolder>>,
    session: Mutex<Option<Session>>,
    transcript: Mutex<Option<Transcript>>,
    /// The window's model: the local engine, or a model on a server.
    model: Mutex<Option<WindowModel>>,
    model_info: RwLock<Option<ModelInfo>>,
    confirmations: Confirmations,
    cancel: CancelToken,
    config: Mutex<AppConfig>,
    config_file: PathBuf,
    /// Servers' API keys, apart from the settings.
    server_keys: ServerKeys,
    startup_error: Option<String>,
    /// The open folder's code index, built in the background when the folder opens; apart
    /// from the session, whose lock a turn holds.
    code_index: Mutex<Option<Arc<ProjectIndex>>>,
}

/// Takes a lock that a turn may hold for minutes: refused as busy instead of waiting.
fn hold<'a, T>(mutex: &'a Mutex<T>, busy: &str) -> Result<MutexGuard<'a, T>, AppError> {
    match mutex.try_lock() {
        Ok(guard) => Ok(guard),
        // A panic in an earlier turn must not lock the user out for the rest of the run.
        Err(TryLockError::Poisoned(poisoned)) => Ok(poisoned.into_inner()),
        Err(TryLockError::WouldBlock) => Err(AppError::busy(busy)),
    }
}

/// The window's model, of the kind the window opened: the local engine keeps its type, for
/// what only it does (its facts, token counts, the probe); a server's model is known only
/// through [`Model`].
enum WindowModel {
    Local(Box<LocalModel>),
    Server(Box<dyn Model>),
}

impl WindowModel {
    fn model(&mut self) -> &mut dyn Model {
        match self {
            WindowModel::Local(local) => local.as_mut(),
            WindowModel::Server(server) => server.as_mut(),
        }
    }

    fn local(&mut self) -> Option<&mut LocalModel> {
        match self {
            WindowModel::Local(local) => Some(local),
            WindowModel::Server(_) => None,
        }
    }
}

/// Takes a lock that is only ever held briefly.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn no_model() -> AppError {
    AppError::new(
        ErrorCode::NoModel,
        "No model is loaded. Load one in the Model panel.",
    )
}

impl AppState {
    /// The state at start, with the configuration kept in `config_file`: the folder given on
    /// the command line is opened, or else the last one opened.
    pub fn new(folder_argument: Option<PathBuf>, config_file: PathBuf) -> AppState {
        let config = AppConfig::load(&config_file);
        let last = config.last_workspace.clone();
        let mut state = AppState {
            toolbox: RwLock::new(Arc::new(Toolbox::standard())),
            mcp: Mutex::new(None),
            folder: RwLock::new(None),
            session: Mutex::new(None),
            transcript: Mutex::new(None),
            model: Mutex::new(None),
            model_info: RwLock::new(None),
            confirmations: Confirmations::default(),
            cancel: CancelToken::new(),
            config: Mutex::new(config),
            server_keys: ServerKeys::beside(&config_file),
            config_file,
            startup_error: None,
            code_index: Mutex::new(None),
        };
        match folder_argument {
            Some(folder) => {
                if let Err(e) = state.open_workspace(&folder) {
                    state.startup_error = Some(e.message);
                }
            }
            // A last folder that has gone away is simply not reopened.
            None => {
                if let Some(folder) = last.filter(|f| f.is_dir()) {
                    let _ = state.open_workspace(&folder);
                }
            }
        }
        state
    }

    pub fn settings(&self) -> Settings {
        lock(&self.config).settings.clone()
    }

    fn model_to_load(&self) -> PathBuf {
        lock(&self.config)
            .last_model
            .clone()
            .filter(|p| p.is_file())
            .unwrap_or_else(default_model_path)
    }

    fn workspace(&self) -> Result<Workspace, AppError> {
        let folder = self.folder.read().unwrap_or_else(|e| e.into_inner());
        folder
            .as_ref()
            .map(|f| f.workspace.clone())
            .ok_or_else(AppError::no_workspace)
    }

    fn remember(&self, change: impl FnOnce(&mut AppConfig)) {
        let mut config = lock(&self.config);
        change(&mut config);
        // Forgetting the last folder or model is an inconvenience, not a failure of the action.
        if let Err(e) = config.save(&self.config_file) {
            eprintln!("lantern: {e}");
        }
    }

    pub fn startup(&self) -> Startup {
        let folder = self.folder.read().unwrap_or_else(|e| e.into_inner());
        let model_to_load = self.model_to_load();
        let (last_provider, last_server) = {
            let config = lock(&self.config);
            (config.last_provider, config.last_server.clone())
        };
        Startup {
            version: env!("CARGO_PKG_VERSION"),
            workspace: folder.as_ref().map(|f| f.info.clone()),
            workspace_error: self.startup_error.clone(),
            settings: self.settings(),
            model: self
                .model_info
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            model_to_load_exists: model_to_load.is_file(),
            model_to_load: model_to_load.display().to_string(),
            server_to_connect: last_server
                .clone()
                .filter(|_| last_provider == ProviderKind::Server),
            last_server,
        }
    }

    /// Opens `path` as the workspace: a fresh session (history, session grants) with the
    /// folder's saved grants and checkpoints.
    pub fn open_workspace(&self, path: &Path) -> Result<WorkspaceInfo, AppError> {
        self.begin(Workspace::open(path)?, &[])
    }

    /// A fresh session on `workspace`, taking up the conversation `earlier` records (if any),
    /// and its transcript, which starts with those events.
    fn begin(&self, workspace: Workspace, earlier: &[Event]) -> Result<WorkspaceInfo, AppError> {
        let mut session = hold(&self.session, TURN_RUNNING)?;
        let toolbox = self.start_mcp(workspace.root());
        let mut opened = Session::new(
            workspace.clone(),
            SessionOptions::persistent(&workspace, toolbox),
        );
        let mut transcript = Transcript::new(workspace.root());
        if !earlier.is_empty() {
            opened.resume(earlier);
            earlier.iter().for_each(|event| transcript.record(event));
        }
        let root = workspace.root().to_path_buf();
        let info = WorkspaceInfo {
            name: root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| root.display().to_string()),
            root: root.display().to_string(),
            policy_warning: opened.policy_warning.clone(),
            transcript: transcript.path.display().to_string(),
        };
        let index = opened.code_index();
        *lock(&self.code_index) = Some(Arc::clone(&index));
        let indexed = workspace.clone();
        // The tools refresh it themselves when they need it; built now, the first question
        // does not wait for it. Its status is what the window shows.
        std::thread::spawn(move || drop(index.refresh(&indexed, |_| {})));
        *session = Some(opened);
        *lock(&self.transcript) = Some(transcript);
        *self.folder.write().unwrap_or_else(|e| e.into_inner()) = Some(OpenFolder {
            workspace,
            info: info.clone(),
        });
        self.remember(|config| config.last_workspace = Some(root));
        Ok(info)
    }

    pub fn tree(&self) -> Result<Tree, AppError> {
        files::tree(&self.workspace()?)
    }

    pub fn read_file(&self, path: &str) -> Result<TextFile, AppError> {
        files::read_text(&self.workspace()?, path)
    }

    pub fn save_file(&self, path: &str, content: &str) -> Result<SavedFile, AppError> {
        files::save_text(&self.workspace()?, path, content)
    }

    fn record(&self, event: &Event, updates: &Channel<Update>) {
        if let Some(transcript) = lock(&self.transcript).as_mut() {
            transcript.record(event);
        }
        // A window that went away no longer needs the update; the transcript still has it.
        let _ = updates.send(Update::Agent {
            event: event.clone(),
        });
    }

    /// Runs one user message to the end, streaming every event; returns `turn_finished`.
    pub fn send(&self, message: &str, updates: &Channel<Update>) -> Result<Event, AppError> {
        let message = message.trim();
        if message.is_empty() {
            return Err(AppError::invalid("The message is empty."));
        }
        let mut session = hold(&self.session, TURN_RUNNING)?;
        let session = session.as_mut().ok_or_else(AppError::no_workspace)?;
        let mut model = hold(&self.model, MODEL_IN_USE)?;
        let model = model.as_mut().ok_or_else(no_model)?.model();
        let settings = self.settings();
        model.configure(&settings.generation());
        session.config.max_steps = settings.max_steps;
        session.config.tool_choice = settings.tool_choice;
        // A model on a server has the context for a map of the project's code; the default
        // local model is given none (see `AgentConfig::repo_map`), unless the settings say.
        session.config.repo_map =
            repo_map_budget(settings.repo_map, self.on_server(), || model.context_size());
        // A server that said its tool list changed brings its new tools to this turn.
        if let Some(toolbox) = self.changed_mcp_tools() {
            session.use_toolbox(toolbox);
        }
        self.cancel.reset();
        let mut confirmer = WindowConfirmer {
            confirmations: &self.confirmations,
            updates,
        };
        Ok(session.send(
            message,
            model,
            &mut confirmer,
            &mut |event| self.record(event, updates),
            &self.cancel,
        ))
    }

    /// Stops the running turn: generation stops at the next token and every pending
    /// confirmation is denied.
    pub fn cancel(&self) {
        self.cancel.cancel();
        self.confirmations.deny_all();
    }

    pub fn answer_confirmation(&self, id: u64, answer: Answer) -> Result<(), AppError> {
        self.confirmations.answer(id, answer)
    }

    /// Runs a call written by hand (or a re-run) through the same validation, sandbox, policy
    /// and confirmation as the model's calls; Stop stops it as it stops a turn.
    pub fn run_call(
        &self,
        tool: &str,
        args: Value,
        updates: &Channel<Update>,
    ) -> Result<ToolResult, AppError> {
        let mut session = hold(&self.session, TURN_RUNNING)?;
        let session = session.as_mut().ok_or_else(AppError::no_workspace)?;
        self.cancel.reset();
        let mut confirmer = WindowConfirmer {
            confirmations: &self.confirmations,
            updates,
        };
        let outcome = session.run_stoppable_call(
            tool,
            args,
            &mut confirmer,
            &mut |event| self.record(event, updates),
            &self.cancel,
        );
        Ok(outcome.into_result())
    }

    pub fn tools(&self) -> Vec<ToolSpec> {
        self.toolbox().specs().to_vec()
    }

    /// The window's tools as they are now.
    fn toolbox(&self) -> Arc<Toolbox> {
        Arc::clone(&self.toolbox.read().unwrap_or_else(|e| e.into_inner()))
    }

    pub fn list_models(&self) -> ModelList {
        let default_model = default_model_path();
        ModelList {
            models_dir: lantern_llama::models_dir().display().to_string(),
            default_model_exists: default_model.is_file(),
            default_model: default_model.display().to_string(),
            models: lantern_llama::cached_models()
                .into_iter()
                .map(|(path, size_bytes)| ModelFile {
                    name: path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    path: path.display().to_string(),
                    size_bytes,
                })
                .collect(),
        }
    }

    /// Loads a GGUF model (the remembered or default one when `path` is `None`), replacing the
    /// current one, and calibrates its call decision so that the first message does not wait
    /// for it.
    pub fn load_model(
        &self,
        path: Option<PathBuf>,
        progress: impl Fn(LoadProgress) + Clone + 'static,
    ) -> Result<ModelInfo, AppError> {
        let path = path.unwrap_or_else(|| self.model_to_load());
        let is_default = path == default_model_path();
        if !path.is_file() {
            let message = if is_default {
                format!(
                    "The default model is not downloaded yet ({}). Run `bash scripts/fetch-model.sh` (npm start does it), or choose a GGUF file.",
                    path.display()
                )
            } else {
                format!("There is no model file at {}.", path.display())
            };
            return Err(AppError::new(ErrorCode::NotFound, message));
        }
        let mut slot = hold(&self.model, MODEL_IN_USE)?;
        // The old model goes first: two models at once may not fit in memory.
        *slot = None;
        *self.model_info.write().unwrap_or_else(|e| e.into_inner()) = None;
        let spec = LocalSpec {
            path: path.clone(),
            context: self.settings().context,
            threads: None,
            calls: CallMode::Auto,
        };
        let reading = progress.clone();
        let mut loaded = lantern_providers::open_local(&spec, move |fraction| {
            reading(LoadProgress::Reading { fraction })
        })
        .map_err(|e| AppError::new(ErrorCode::Model, e.0))?;
        loaded.configure(&self.settings().generation());
        progress(LoadProgress::Calibrating);
        if let Err(e) = loaded.prepare(self.toolbox().as_ref(), &CancelToken::new()) {
            // Not fatal: the first message calibrates again, or falls back to the word rule.
            eprintln!("lantern: could not calibrate the model's call decision: {e}");
        }
        let info = ModelInfo::Local {
            facts: loaded.facts().clone(),
            is_default,
            opening: loaded.prepared_opening(),
        };
        *slot = Some(WindowModel::Local(Box::new(loaded)));
        *self.model_info.write().unwrap_or_else(|e| e.into_inner()) = Some(info.clone());
        self.remember(|config| {
            config.last_model = Some(path);
            config.last_provider = ProviderKind::Local;
        });
        Ok(info)
    }

    /// Is the model in use on a server?
    fn on_server(&self) -> bool {
        matches!(
            *self.model_info.read().unwrap_or_else(|e| e.into_inner()),
            Some(ModelInfo::Server { .. })
        )
    }

    /// Checks how well the loaded model suits Lantern (see `lantern probe`).
    pub fn probe_model(&self) -> Result<ProbeReport, AppError> {
        let mut model = hold(&self.model, MODEL_IN_USE)?;
        let model = model.as_mut().ok_or_else(no_model)?;
        let local = model.local().ok_or_else(|| {
            AppError::invalid("The probe measures local models; this model runs on a server.")
        })?;
        lantern_probe::probe::probe(local, &self.toolbox())
            .map_err(|e| AppError::new(ErrorCode::Model, e))
    }

    /// Saved and session grants, saved first.
    pub fn grants(&self) -> Result<Vec<Grant>, AppError> {
        let session = hold(&self.session, TURN_RUNNING)?;
        let session = session.as_ref().ok_or_else(AppError::no_workspace)?;
        Ok(session.grants().cloned().collect())
    }

    pub fn revoke_grant(&self, id: &str) -> Result<Grant, AppError> {
        let mut session = hold(&self.session, TURN_RUNNING)?;
        let session = session.as_mut().ok_or_else(AppError::no_workspace)?;
        Ok(session.revoke(id)?)
    }

    /// Every recorded write in the folder, oldest first. Reads the log directly, so the list
    /// is available while the assistant works.
    pub fn checkpoints(&self) -> Result<Vec<Checkpoint>, AppError> {
        let workspace = self.workspace()?;
        Ok(CheckpointStore::for_workspace(&paths::data_dir(), &workspace).list()?)
    }

    /// Undoes a write (the newest when `id` is `None`); refuses if the file changed since.
    pub fn undo(&self, id: Option<&str>) -> Result<UndoOutcome, AppError> {
        // Through the session, so an undo never interleaves with a write of a running turn.
        let session = hold(&self.session, TURN_RUNNING)?;
        let session = session.as_ref().ok_or_else(AppError::no_workspace)?;
        let store = session
            .checkpoints()
            .ok_or_else(|| AppError::internal("Writes are not checkpointed in this session."))?;
        Ok(store.undo(session.workspace(), id)?)
    }

    /// A file name to suggest when exporting the transcript.
    pub fn transcript_file_name(&self) -> String {
        lock(&self.transcript)
            .as_ref()
            .and_then(|t| t.path.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "transcript.jsonl".to_string())
    }

    /// Writes every event of this session so far to `path` as JSON lines.
    pub fn export_transcript(&self, path: &Path) -> Result<ExportedTranscript, AppError> {
        let events = lock(&self.transcript)
            .as_ref()
            .map(|t| t.events.clone())
            .ok_or_else(AppError::no_workspace)?;
        let io = |e: std::io::Error| {
            AppError::new(
                ErrorCode::Io,
                format!("Could not write {}: {e}", path.display()),
            )
        };
        let mut writer = TranscriptWriter::create(path).map_err(io)?;
        for event in &events {
            writer.write(event).map_err(io)?;
        }
        Ok(ExportedTranscript {
            path: path.display().to_string(),
            events: events.len(),
        })
    }

    pub fn update_settings(&self, settings: Settings) -> Result<Settings, AppError> {
        settings.check()?;
        let mut config = lock(&self.config);
        let mut next = config.clone();
        next.settings = settings.clone();
        next.save(&self.config_file)?;
        *config = next;
        Ok(settings)
    }
}
