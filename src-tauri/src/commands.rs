//! The Tauri commands: each one only unpacks its arguments and hands the work to [`AppState`]
//! on a blocking thread, so that a long turn, a model load or a dialog never stalls the window
//! or the async runtime (whose few workers must stay free to deliver the user's answers).
//!
//! The webview's types for their arguments and results are generated from the Rust types: a
//! command with a new argument or result type adds it to `ipc_types::definitions`.

use crate::confirm::Update;
use crate::error::AppError;
use crate::files::{SavedFile, TextFile, Tree};
use crate::settings::Settings;
use crate::state::{
    AppState, ChatOpened, CodeMapInfo, ExportedTranscript, LoadProgress, McpEdit, McpScope,
    McpView, ModelInfo, ModelList, RulesInfo, ServerForm, ServerReport, Startup, WorkspaceInfo,
};
use lantern_core::agent::Answer;
use lantern_core::chats::ChatSummary;
use lantern_core::checkpoint::{Checkpoint, UndoOutcome};
use lantern_core::code_index::{DefinitionPlace, IndexStatus, OutlineEntry};
use lantern_core::event::Event;
use lantern_core::policy::Grant;
use lantern_core::tool_result::ToolResult;
use lantern_core::tools::ToolSpec;
use lantern_probe::probe::ProbeReport;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use tauri::ipc::Channel;
use tauri::{State, Window};
use tauri_plugin_dialog::DialogExt;

type Shared<'a> = State<'a, Arc<AppState>>;

/// Runs `work` on a blocking thread and returns its result.
async fn off_thread<T: Send + 'static>(
    state: &Shared<'_>,
    work: impl FnOnce(&AppState) -> Result<T, AppError> + Send + 'static,
) -> Result<T, AppError> {
    let state = Arc::clone(state);
    tauri::async_runtime::spawn_blocking(move || work(&state))
        .await
        .map_err(|e| AppError::internal(format!("The work stopped unexpectedly: {e}")))?
}

#[tauri::command]
pub async fn startup(state: Shared<'_>) -> Result<Startup, AppError> {
    off_thread(&state, |s| Ok(s.startup())).await
}

/// Asks for a folder with the system dialog and opens it; `None` when the user cancels.
#[tauri::command]
pub async fn pick_workspace(
    state: Shared<'_>,
    window: Window,
) -> Result<Option<WorkspaceInfo>, AppError> {
    off_thread(&state, move |s| {
        let picked = window
            .dialog()
            .file()
            .set_parent(&window)
            .set_title("Open a project folder")
            .blocking_pick_folder();
        match picked {
            Some(folder) => {
                let path = folder
                    .into_path()
                    .map_err(|e| AppError::invalid(format!("That folder cannot be opened: {e}")))?;
                s.open_workspace(&path).map(Some)
            }
            None => Ok(None),
        }
    })
    .await
}

/// Where the open folder's code index stands (built in the background when it opens).
#[tauri::command]
pub async fn code_index_status(state: Shared<'_>) -> Result<IndexStatus, AppError> {
    off_thread(&state, |s| s.code_index_status()).await
}

/// Where a name is defined in the open folder's code, the surest first.
#[tauri::command]
pub async fn go_to_definition(
    state: Shared<'_>,
    name: String,
) -> Result<Vec<DefinitionPlace>, AppError> {
    off_thread(&state, move |s| s.go_to_definition(&name)).await
}

#[tauri::command]
pub async fn list_tree(state: Shared<'_>) -> Result<Tree, AppError> {
    off_thread(&state, |s| s.tree()).await
}

#[tauri::command]
pub async fn read_file(state: Shared<'_>, path: String) -> Result<TextFile, AppError> {
    off_thread(&state, move |s| s.read_file(&path)).await
}

#[tauri::command]
pub async fn save_file(
    state: Shared<'_>,
    path: String,
    content: String,
) -> Result<SavedFile, AppError> {
    off_thread(&state, move |s| s.save_file(&path, &content)).await
}

/// Runs one message through the agent; the events stream over `on_update` and the call
/// resolves with `turn_finished`.
#[tauri::command]
pub async fn send_message(
    state: Shared<'_>,
    message: String,
    on_update: Channel<Update>,
) -> Result<Event, AppError> {
    off_thread(&state, move |s| s.send(&message, &on_update)).await
}

#[tauri::command]
pub async fn cancel(state: Shared<'_>) -> Result<(), AppError> {
    off_thread(&state, |s| {
        s.cancel();
        Ok(())
    })
    .await
}

#[tauri::command]
pub async fn answer_confirmation(
    state: Shared<'_>,
    id: u64,
    answer: Answer,
) -> Result<(), AppError> {
    off_thread(&state, move |s| s.answer_confirmation(id, answer)).await
}

#[tauri::command]
pub async fn list_models(state: Shared<'_>) -> Result<ModelList, AppError> {
    off_thread(&state, |s| Ok(s.list_models())).await
}

/// Asks for a GGUF file with the system dialog; `None` when the user cancels.
#[tauri::command]
pub async fn pick_model_file(
    state: Shared<'_>,
    window: Window,
) -> Result<Option<String>, AppError> {
    off_thread(&state, move |_| {
        let picked = window
            .dialog()
            .file()
            .set_parent(&window)
            .set_title("Choose a GGUF model")
            .add_filter("GGUF models", &["gguf"])
            .set_directory(lantern_llama::models_dir())
            .blocking_pick_file();
        picked
            .map(|file| {
                file.into_path()
                    .map(|p| p.display().to_string())
                    .map_err(|e| AppError::invalid(format!("That file cannot be used: {e}")))
            })
            .transpose()
    })
    .await
}

/// Loads a model (`None`: the remembered or default one); progress streams over
/// `on_progress`.
#[tauri::command]
pub async fn load_model(
    state: Shared<'_>,
    path: Option<String>,
    on_progress: Channel<LoadProgress>,
) -> Result<ModelInfo, AppError> {
    off_thread(&state, move |s| {
        let last_percent = Arc::new(AtomicI32::new(-1));
        s.load_model(path.map(PathBuf::from), move |progress| {
            // llama.cpp reports many times per percent; the bar needs no more than one each.
            if let LoadProgress::Reading { fraction } = progress {
                let percent = (fraction * 100.0) as i32;
                if last_percent.swap(percent, Ordering::Relaxed) == percent {
                    return;
                }
            }
            let _ = on_progress.send(progress);
        })
    })
    .await
}

/// Starts a new conversation in the open folder.
#[tauri::command]
pub async fn new_chat(state: Shared<'_>) -> Result<WorkspaceInfo, AppError> {
    off_thread(&state, |s| s.new_chat()).await
}

/// The open folder's saved conversations, newest first.
#[tauri::command]
pub async fn list_chats(state: Shared<'_>) -> Result<Vec<ChatSummary>, AppError> {
    off_thread(&state, |s| s.chats()).await
}

/// A saved conversation's events, to read.
#[tauri::command]
pub async fn open_chat(state: Shared<'_>, path: String) -> Result<Vec<Event>, AppError> {
    off_thread(&state, move |s| s.open_chat(&path)).await
}

/// Takes up a saved conversation.
#[tauri::command]
pub async fn continue_chat(state: Shared<'_>, path: String) -> Result<ChatOpened, AppError> {
    off_thread(&state, move |s| s.continue_chat(&path)).await
}

#[tauri::command]
pub async fn delete_chat(state: Shared<'_>, path: String) -> Result<(), AppError> {
    off_thread(&state, move |s| s.delete_chat(&path)).await
}

/// The models a server offers.
#[tauri::command]
pub async fn server_models(state: Shared<'_>, form: ServerForm) -> Result<Vec<String>, AppError> {
    off_thread(&state, move |s| s.server_models(&form)).await
}

/// Lists a server's models and asks which path tool calls take, without using it.
#[tauri::command]
pub async fn test_server(state: Shared<'_>, form: ServerForm) -> Result<ServerReport, AppError> {
    off_thread(&state, move |s| s.test_server(&form)).await
}

/// Makes a server's model the window's model.
#[tauri::command]
pub async fn connect_server(state: Shared<'_>, form: ServerForm) -> Result<ModelInfo, AppError> {
    off_thread(&state, move |s| s.connect_server(&form)).await
}

#[tauri::command]
pub async fn probe_model(state: Shared<'_>) -> Result<ProbeReport, AppError> {
    off_thread(&state, |s| s.probe_model()).await
}

#[tauri::command]
pub async fn list_tools(state: Shared<'_>) -> Result<Vec<ToolSpec>, AppError> {
    off_thread(&state, |s| Ok(s.tools())).await
}

/// A call written by hand or re-run from the inspector; its events stream over `on_update`
/// (a confirmation too) and the call resolves with the result.
#[tauri::command]
pub async fn run_call(
    state: Shared<'_>,
    tool: String,
    args: Value,
    on_update: Channel<Update>,
) -> Result<ToolResult, AppError> {
    off_thread(&state, move |s| s.run_call(&tool, args, &on_update)).await
}

#[tauri::command]
pub async fn list_grants(state: Shared<'_>) -> Result<Vec<Grant>, AppError> {
    off_thread(&state, |s| s.grants()).await
}

#[tauri::command]
pub async fn revoke_grant(state: Shared<'_>, id: String) -> Result<Grant, AppError> {
    off_thread(&state, move |s| s.revoke_grant(&id)).await
}

#[tauri::command]
pub async fn list_checkpoints(state: Shared<'_>) -> Result<Vec<Checkpoint>, AppError> {
    off_thread(&state, |s| s.checkpoints()).await
}

#[tauri::command]
pub async fn undo(state: Shared<'_>, checkpoint: Option<String>) -> Result<UndoOutcome, AppError> {
    off_thread(&state, move |s| s.undo(checkpoint.as_deref())).await
}

/// Asks where to save with the system dialog, then writes the session's events there as JSON
/// lines; `None` when the user cancels. The webview never names the path itself.
#[tauri::command]
pub async fn export_transcript(
    state: Shared<'_>,
    window: Window,
) -> Result<Option<ExportedTranscript>, AppError> {
    off_thread(&state, move |s| {
        let picked = window
            .dialog()
            .file()
            .set_parent(&window)
            .set_title("Export the transcript")
            .set_file_name(s.transcript_file_name())
            .add_filter("JSON lines", &["jsonl"])
            .blocking_save_file();
        match picked {
            Some(file) => {
                let path = file
                    .into_path()
                    .map_err(|e| AppError::invalid(format!("Cannot save there: {e}")))?;
                s.export_transcript(&path).map(Some)
            }
            None => Ok(None),
        }
    })
    .await
}

#[tauri::command]
pub async fn update_settings(state: Shared<'_>, settings: Settings) -> Result<Settings, AppError> {
    off_thread(&state, move |s| s.update_settings(settings)).await
}

/// Names the open folder's code defines that begin with `prefix` (for `@` mentions).
#[tauri::command]
pub async fn complete_symbols(state: Shared<'_>, prefix: String) -> Result<Vec<String>, AppError> {
    off_thread(&state, move |s| s.complete_symbols(&prefix)).await
}

/// What a file of the open folder defines, in order, for the editor's outline.
#[tauri::command]
pub async fn file_outline(state: Shared<'_>, path: String) -> Result<Vec<OutlineEntry>, AppError> {
    off_thread(&state, move |s| s.file_outline(&path)).await
}

/// The open project's own instructions (`AGENTS.md` or the like) and what they cost.
#[tauri::command]
pub async fn project_rules(state: Shared<'_>) -> Result<Option<RulesInfo>, AppError> {
    off_thread(&state, |s| s.project_rules()).await
}

/// The map of the open project's code a conversation opens with, and what it costs.
#[tauri::command]
pub async fn code_map(state: Shared<'_>) -> Result<CodeMapInfo, AppError> {
    off_thread(&state, |s| s.code_map()).await
}

/// The MCP servers: the user's and the open project's, with their state and tools.
#[tauri::command]
pub async fn mcp_servers(state: Shared<'_>) -> Result<McpView, AppError> {
    off_thread(&state, |s| Ok(s.mcp_servers())).await
}

/// Adds, removes, enables, trusts or approves an MCP server, then starts the servers again.
#[tauri::command]
pub async fn change_mcp(
    state: Shared<'_>,
    name: String,
    scope: McpScope,
    edit: McpEdit,
) -> Result<McpView, AppError> {
    off_thread(&state, move |s| s.change_mcp(&name, scope, edit)).await
}

/// Starts the MCP servers again (a crashed one, or after editing a file by hand).
#[tauri::command]
pub async fn restart_mcp(state: Shared<'_>) -> Result<McpView, AppError> {
    off_thread(&state, |s| s.restart_mcp()).await
}
