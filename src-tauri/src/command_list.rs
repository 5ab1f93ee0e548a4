// The commands the webview may call, by name. `build.rs` generates one `allow-…` permission per
// name (Tauri refuses any command without one), `capabilities/main.json` grants exactly these to
// the main window, and a test in `lib.rs` keeps this list, the capability and the registered
// handlers in step. Plain comments only: build.rs includes this file.

pub const APP_COMMANDS: &[&str] = &[
    "startup",
    "pick_workspace",
    "list_tree",
    "code_index_status",
    "go_to_definition",
    "read_file",
    "save_file",
    "send_message",
    "cancel",
    "answer_confirmation",
    "list_models",
    "pick_model_file",
    "load_model",
    "server_models",
    "test_server",
    "connect_server",
    "probe_model",
    "list_tools",
    "run_call",
    "list_grants",
    "revoke_grant",
    "list_checkpoints",
    "undo",
    "export_transcript",
    "new_chat",
    "list_chats",
    "open_chat",
    "continue_chat",
    "delete_chat",
    "update_settings",
];
