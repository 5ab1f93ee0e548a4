//! # lantern-app
//!
//! Lantern's desktop window: a thin Tauri shell over `lantern-core` (the agent, tools, sandbox
//! and policy) and `lantern-llama` (the local model). The webview draws everything; this crate
//! only exposes commands, streams the agent's events over a Tauri channel, and blocks the agent
//! thread on the user's answer when a call needs confirmation.
//!
//! - [`commands`] — the commands the webview calls, each delegating to [`state::AppState`].
//! - [`state`] — the open folder and session, the model, the transcript, the settings.
//! - [`confirm`] — confirmations between the agent thread and the window.
//! - [`files`] — the editor's file tree, reads and saves, through the sandbox.
//! - [`settings`] — what is remembered between runs.
//! - [`error`] — the one error type the webview receives: `{code, message, details}`.
//! - `ipc_types` (tests only) — the webview's TypeScript types, generated from these types'
//!   JSON Schemas and checked against `ui/src/ipc/generated/`.

pub mod command_list;
pub mod commands;
pub mod confirm;
pub mod error;
pub mod files;
#[cfg(test)]
mod ipc_types;
pub mod server_keys;
pub mod settings;
pub mod state;

use settings::AppConfig;
use state::AppState;
use std::path::PathBuf;
use std::sync::Arc;

/// Registers the handlers and records their names, from one list, so the test below can hold
/// them against the permissions.
macro_rules! app_commands {
    ($($command:ident),+ $(,)?) => {
        /// The command handlers registered with Tauri, by name.
        pub const REGISTERED_COMMANDS: &[&str] = &[$(stringify!($command)),+];

        fn invoke_handler() -> impl Fn(tauri::ipc::Invoke) -> bool + Send + Sync + 'static {
            tauri::generate_handler![$(commands::$command),+]
        }
    };
}

app_commands![
    startup,
    pick_workspace,
    list_tree,
    code_index_status,
    go_to_definition,
    read_file,
    save_file,
    send_message,
    cancel,
    answer_confirmation,
    list_models,
    pick_model_file,
    load_model,
    server_models,
    test_server,
    connect_server,
    probe_model,
    list_tools,
    run_call,
    list_grants,
    revoke_grant,
    list_checkpoints,
    undo,
    export_transcript,
    new_chat,
    list_chats,
    open_chat,
    continue_chat,
    delete_chat,
    update_settings,
    file_outline,
    complete_symbols,
    project_rules,
    code_map,
    mcp_servers,
    change_mcp,
    restart_mcp,
];

/// The folder to open, from the command line: the first argument that is not an option.
fn folder_argument() -> Option<PathBuf> {
    std::env::args_os()
        .skip(1)
        .find(|arg| !arg.to_string_lossy().starts_with('-'))
        .map(PathBuf::from)
}

/// Opens the window and runs until it is closed.
pub fn run() {
    let state = Arc::new(AppState::new(folder_argument(), AppConfig::default_path()));
    let built = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .manage(Arc::clone(&state))
        .invoke_handler(invoke_handler())
        .build(tauri::generate_context!());
    match built {
        // The MCP servers stop with the window: a trusted one is no child of a sandbox that
        // would end it.
        Ok(app) => app.run(move |_, event| {
            if let tauri::RunEvent::Exit = event {
                state.stop_mcp();
            }
        }),
        Err(e) => {
            eprintln!("lantern: the window could not be opened: {e}");
            std::process::exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn capability() -> serde_json::Value {
        let text = include_str!("../capabilities/main.json");
        serde_json::from_str(text).expect("capabilities/main.json is JSON")
    }

    #[test]
    fn every_registered_command_has_a_permission_and_no_more() {
        let registered: BTreeSet<&str> = REGISTERED_COMMANDS.iter().copied().collect();
        let permitted: BTreeSet<&str> = command_list::APP_COMMANDS.iter().copied().collect();
        assert_eq!(registered, permitted);
        assert_eq!(registered.len(), REGISTERED_COMMANDS.len(), "no duplicates");
    }

    #[test]
    fn the_main_window_is_granted_exactly_the_app_commands() {
        let capability = capability();
        assert_eq!(capability["windows"], serde_json::json!(["main"]));
        let granted: BTreeSet<String> = capability["permissions"]
            .as_array()
            .expect("a permission list")
            .iter()
            .map(|p| p.as_str().expect("plain permission names").to_string())
            .collect();
        // tauri-build names a command's permission `allow-` + the name with dashes.
        let expected: BTreeSet<String> = command_list::APP_COMMANDS
            .iter()
            .map(|c| format!("allow-{}", c.replace('_', "-")))
            .collect();
        assert_eq!(granted, expected);
    }
}
