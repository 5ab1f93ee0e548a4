//! The app's state driven the way the window drives it: a workspace on disk, updates streamed
//! over a Tauri channel, confirmations answered through `answer_confirmation`, all with
//! Lantern's own state in a temporary `LANTERN_HOME`.

use lantern_app::error::ErrorCode;
use lantern_app::settings::AppConfig;
use lantern_app::state::AppState;
use lantern_core::agent::Answer;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tauri::ipc::{Channel, InvokeResponseBody};

/// One `LANTERN_HOME` for the whole test process, in Cargo's scratch folder for tests, emptied
/// and set before any test touches Lantern's paths.
fn lantern_home() -> &'static Path {
    static HOME: OnceLock<PathBuf> = OnceLock::new();
    HOME.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("lantern-app-state");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::env::set_var("LANTERN_HOME", &dir);
        dir
    })
}

/// A configuration file of its own for each app state, so tests running side by side do not
/// share one.
fn config_file() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    lantern_home().join(format!("app-{}.json", NEXT.fetch_add(1, Ordering::Relaxed)))
}

fn workspace() -> tempfile::TempDir {
    lantern_home();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/cart.ts"), "export const total = 1;\n").unwrap();
    std::fs::write(
        dir.path().join("package.json"),
        "{\"version\": \"1.4.2\"}\n",
    )
    .unwrap();
    dir
}

/// A channel that records every update and answers each confirmation with `answer`.
fn answering_channel(
    state: &Arc<AppState>,
    answer: Answer,
) -> (
    Channel<lantern_app::confirm::Update>,
    Arc<Mutex<Vec<Value>>>,
) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (record, state) = (seen.clone(), state.clone());
    let channel = Channel::new(move |body: InvokeResponseBody| {
        let InvokeResponseBody::Json(text) = body else {
            panic!("updates are JSON")
        };
        let update: Value = serde_json::from_str(&text).unwrap();
        if update["type"] == "confirm" {
            let id = update["id"].as_u64().unwrap();
            state.answer_confirmation(id, answer.clone()).unwrap();
        }
        record.lock().unwrap().push(update);
        Ok(())
    });
    (channel, seen)
}

fn events(seen: &Mutex<Vec<Value>>) -> Vec<String> {
    seen.lock()
        .unwrap()
        .iter()
        .map(|u| match u["type"].as_str().unwrap() {
            "agent" => u["event"]["event"].as_str().unwrap().to_string(),
            other => other.to_string(),
        })
        .collect()
}

fn opened(dir: &Path) -> Arc<AppState> {
    Arc::new(AppState::new(Some(dir.to_path_buf()), config_file()))
}

#[test]
fn opens_the_folder_given_at_start_and_serves_the_editor() {
    let dir = workspace();
    let state = opened(dir.path());
    let startup = state.startup();
    let info = startup.workspace.expect("the folder is open");
    assert_eq!(Path::new(&info.root), dir.path().canonicalize().unwrap());
    assert_eq!(startup.workspace_error, None);
    assert_eq!(
        state.tree().unwrap().files,
        vec!["package.json", "src/cart.ts"]
    );
    state
        .save_file("src/cart.ts", "export const total = 2;\n")
        .unwrap();
    assert_eq!(
        state.read_file("src/cart.ts").unwrap().content,
        "export const total = 2;\n"
    );
}

#[test]
fn a_folder_that_does_not_exist_is_reported_at_start() {
    lantern_home();
    let state = AppState::new(Some("/no/such/folder/anywhere".into()), config_file());
    let startup = state.startup();
    assert!(startup.workspace.is_none());
    assert!(startup.workspace_error.unwrap().contains("does not exist"));
    assert_eq!(state.tree().unwrap_err().code, ErrorCode::NoWorkspace);
}

#[test]
fn an_allowed_write_runs_after_the_confirmation_and_can_be_undone() {
    let dir = workspace();
    let state = opened(dir.path());
    let (channel, seen) = answering_channel(&state, Answer::AllowOnce);
    let args = json!({"path": "src/cart.ts", "content": "export const total = 3;\n"});
    let result = state.run_call("write_file", args, &channel).unwrap();
    assert!(result.success, "{result:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("src/cart.ts")).unwrap(),
        "export const total = 3;\n"
    );
    assert_eq!(
        events(&seen),
        [
            "permission_asked",
            "confirm",
            "permission_answered",
            "tool_started",
            "tool_finished"
        ]
    );
    let confirm = seen.lock().unwrap()[1].clone();
    assert_eq!(confirm["request"]["tool"], "write_file");
    assert!(confirm["request"]["preview"]["unified"]
        .as_str()
        .unwrap()
        .contains("+export const total = 3;"));

    let checkpoints = state.checkpoints().unwrap();
    assert_eq!(checkpoints.len(), 1);
    let undone = state.undo(Some(&checkpoints[0].id)).unwrap();
    assert_eq!(undone.path, "src/cart.ts");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("src/cart.ts")).unwrap(),
        "export const total = 1;\n"
    );
}

#[test]
fn an_undo_after_a_later_edit_is_refused_with_the_three_versions() {
    let dir = workspace();
    let state = opened(dir.path());
    let (channel, _seen) = answering_channel(&state, Answer::AllowOnce);
    let args = json!({"path": "src/cart.ts", "content": "export const total = 3;\n"});
    assert!(
        state
            .run_call("write_file", args, &channel)
            .unwrap()
            .success
    );
    // The user edits the file after the agent's write.
    let file = dir.path().join("src/cart.ts");
    std::fs::write(&file, "export const total = 4;\n").unwrap();

    let checkpoints = state.checkpoints().unwrap();
    let refused = state.undo(Some(&checkpoints[0].id)).unwrap_err();
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "export const total = 4;\n"
    );
    let conflict = &refused.details.as_ref().expect("details")["undo_conflict"];
    assert_eq!(conflict["path"], "src/cart.ts");
    for version in ["before", "agent", "now"] {
        assert_eq!(conflict[version]["exists"], true, "{version}");
    }
    assert!(conflict["agent_changes"]
        .as_str()
        .unwrap()
        .contains("+export const total = 3;"));
    assert!(conflict["later_changes"]
        .as_str()
        .unwrap()
        .contains("+export const total = 4;"));
}

#[test]
fn a_denied_write_leaves_the_file_alone_and_tells_the_model_why() {
    let dir = workspace();
    let state = opened(dir.path());
    let (channel, seen) = answering_channel(
        &state,
        Answer::Deny {
            message: Some("not now".into()),
        },
    );
    let args = json!({"path": "src/cart.ts", "content": "broken"});
    let result = state.run_call("write_file", args, &channel).unwrap();
    assert!(!result.success);
    assert!(result.error_message.unwrap().contains("not now"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("src/cart.ts")).unwrap(),
        "export const total = 1;\n"
    );
    assert_eq!(
        events(&seen),
        ["permission_asked", "confirm", "permission_answered"]
    );
    assert!(state.checkpoints().unwrap().is_empty());
}

#[test]
fn a_session_grant_is_listed_and_can_be_revoked() {
    let dir = workspace();
    let state = opened(dir.path());
    let (channel, _) = answering_channel(
        &state,
        Answer::AllowSession {
            scope: lantern_core::policy::Scope::Glob("src/**".into()),
        },
    );
    let args = json!({"path": "src/new.ts", "content": "x\n"});
    assert!(
        state
            .run_call("write_file", args, &channel)
            .unwrap()
            .success
    );
    let grants = state.grants().unwrap();
    assert_eq!(grants.len(), 1);
    // The grant covers the next write in src/ without asking.
    let (quiet, seen) = answering_channel(&state, Answer::AllowOnce);
    let args = json!({"path": "src/other.ts", "content": "y\n"});
    assert!(state.run_call("write_file", args, &quiet).unwrap().success);
    assert!(!events(&seen).contains(&"confirm".to_string()));
    state.revoke_grant(&grants[0].id).unwrap();
    assert!(state.grants().unwrap().is_empty());
}

#[test]
fn while_a_call_waits_for_the_user_the_session_is_busy_and_cancel_denies() {
    let dir = workspace();
    let state = opened(dir.path());
    let (asked_tx, asked_rx) = std::sync::mpsc::channel();
    let channel = Channel::new(move |body: InvokeResponseBody| {
        if let InvokeResponseBody::Json(text) = body {
            if text.contains("\"type\":\"confirm\"") {
                let _ = asked_tx.send(());
            }
        }
        Ok(())
    });
    let waiting = {
        let state = state.clone();
        std::thread::spawn(move || {
            let args = json!({"path": "src/cart.ts", "content": "changed"});
            state.run_call("write_file", args, &channel).unwrap()
        })
    };
    asked_rx.recv().unwrap();
    assert_eq!(state.grants().unwrap_err().code, ErrorCode::Busy);
    // The editor is never blocked by the agent.
    assert!(state.read_file("package.json").is_ok());
    state.cancel();
    let result = waiting.join().unwrap();
    assert!(!result.success);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("src/cart.ts")).unwrap(),
        "export const total = 1;\n"
    );
    assert!(state.grants().is_ok());
}

#[test]
fn sending_without_a_model_says_how_to_get_one() {
    let dir = workspace();
    let state = opened(dir.path());
    let (channel, _) = answering_channel(&state, Answer::AllowOnce);
    let error = state.send("What version is this?", &channel).unwrap_err();
    assert_eq!(error.code, ErrorCode::NoModel);
    assert!(error.message.contains("Model panel"));
    assert_eq!(
        state.send("   ", &channel).unwrap_err().code,
        ErrorCode::Invalid
    );
}

#[test]
fn the_transcript_exports_every_event_as_json_lines() {
    let dir = workspace();
    let state = opened(dir.path());
    let (channel, _) = answering_channel(&state, Answer::AllowOnce);
    let args = json!({"path": "package.json"});
    assert!(state.run_call("read_file", args, &channel).unwrap().success);
    let out = dir.path().join("exported.jsonl");
    let exported = state.export_transcript(&out).unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), exported.events);
    assert!(text.contains("\"event\":\"tool_finished\""));
}

#[test]
fn settings_are_checked_and_kept() {
    lantern_home();
    let file = config_file();
    let state = AppState::new(None, file.clone());
    let mut settings = state.settings();
    settings.max_steps = 0;
    assert_eq!(
        state.update_settings(settings.clone()).unwrap_err().code,
        ErrorCode::Invalid
    );
    settings.max_steps = 4;
    settings.grammar = false;
    state.update_settings(settings.clone()).unwrap();
    assert_eq!(state.settings(), settings);
    assert_eq!(AppConfig::load(&file).settings, settings);
    // A new start reads them back.
    assert_eq!(AppState::new(None, file).settings(), settings);
}

#[test]
fn a_server_is_remembered_with_its_key_kept_apart_and_a_failed_connection_changes_nothing() {
    use lantern_app::state::{ModelInfo, ServerForm};
    use lantern_providers::CallMode;
    let dir = workspace();
    let config = config_file();
    let state = AppState::new(Some(dir.path().to_path_buf()), config.clone());
    // Nothing listens on this port: asking the server (auto) fails, in words.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let form = |calls, key: Option<&str>| ServerForm {
        base_url: base_url.clone(),
        model: "qwen".to_string(),
        api_key: key.map(str::to_string),
        calls,
    };
    let refused = state
        .connect_server(&form(CallMode::Auto, Some("sk-never")))
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::Model);
    assert!(
        refused.message.contains("is it running?"),
        "{}",
        refused.message
    );
    assert!(state.startup().model.is_none());
    assert_eq!(AppConfig::load(&config).last_server, None);
    let keys = config.with_file_name("server-keys.json");
    assert!(!std::fs::read_to_string(&keys)
        .unwrap_or_default()
        .contains("sk-never"));

    // With the path chosen nothing is sent before the first message, so this connects.
    let info = state
        .connect_server(&form(CallMode::Text, Some("sk-local")))
        .unwrap();
    let ModelInfo::Server { server } = info else {
        panic!("not a server model");
    };
    assert!(server.has_key);
    let startup = state.startup();
    let again = startup
        .server_to_connect
        .expect("the server is connected at start");
    assert_eq!(
        (again.base_url.as_str(), again.model.as_str()),
        (base_url.as_str(), "qwen")
    );
    let settings = std::fs::read_to_string(&config).unwrap();
    assert!(!settings.contains("sk-local"), "{settings}");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&keys).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(std::fs::read_to_string(&keys).unwrap().contains("sk-local"));
    // The next connection without a typed key uses the saved one.
    let info = state.connect_server(&form(CallMode::Text, None)).unwrap();
    assert!(matches!(info, ModelInfo::Server { server } if server.has_key));
}

#[test]
fn saved_conversations_are_listed_read_continued_and_deleted() {
    use lantern_core::chats::transcripts_dir;
    use lantern_core::event::{Event, FinishedReason, TranscriptWriter};
    let dir = workspace();
    let state = opened(dir.path());
    let root = dir.path().canonicalize().unwrap();
    let saved = transcripts_dir(&root).join("20261124-090000.000-1.jsonl");
    let mut writer = TranscriptWriter::create(&saved).unwrap();
    for event in [
        Event::TurnStarted {
            message: "What version is this?".into(),
            model: "smollm2".into(),
            form: Some(lantern_core::question::Form::LookUp),
        },
        Event::TextDelta {
            step: 1,
            text: "It is 1.4.2.".into(),
        },
        Event::TurnFinished {
            reason: FinishedReason::Answer,
            explanation: String::new(),
            text: "It is 1.4.2.".into(),
            steps: 1,
        },
    ] {
        writer.write(&event).unwrap();
    }
    drop(writer);
    let saved = saved.display().to_string();

    let chats = state.chats().unwrap();
    assert_eq!(chats.len(), 1, "{chats:?}");
    assert_eq!(chats[0].first_message, "What version is this?");
    assert_eq!(state.open_chat(&saved).unwrap().len(), 3);

    let before = state.startup().workspace.unwrap().transcript;
    let taken_up = state.continue_chat(&saved).unwrap();
    assert_eq!(taken_up.events.len(), 3);
    let current = taken_up.workspace.transcript;
    assert_ne!(current, before, "it goes on in a new transcript");
    assert_eq!(
        lantern_core::event::load_transcript(Path::new(&current))
            .unwrap()
            .0
            .len(),
        3,
        "which starts with the conversation so far"
    );
    let refused = state.delete_chat(&current).unwrap_err();
    assert!(
        refused.message.contains("in progress"),
        "{}",
        refused.message
    );
    state.delete_chat(&saved).unwrap();
    assert!(!Path::new(&saved).exists());
    assert_eq!(
        state.delete_chat("/etc/passwd").unwrap_err().code,
        ErrorCode::NotFound
    );
    let fresh = state.new_chat().unwrap();
    assert_ne!(fresh.transcript, current);
    state.delete_chat(&current).unwrap();
}

#[test]
fn the_project_s_instructions_are_shown_with_their_size() {
    let dir = workspace();
    let state = opened(dir.path());
    assert!(state.project_rules().unwrap().is_none());
    std::fs::write(
        dir.path().join("AGENTS.md"),
        "Run `make check` before a commit.\n",
    )
    .unwrap();
    let rules = state.project_rules().unwrap().expect("AGENTS.md is read");
    assert_eq!(rules.path, "AGENTS.md");
    assert!(rules.text.contains("make check") && !rules.cut);
    assert!(rules.chars > rules.text.len());
    // No local model is loaded here: nothing counts its tokens.
    assert_eq!(rules.tokens, None);
}

#[test]
fn the_open_folder_s_mcp_servers_are_listed_and_a_pasted_definition_is_checked() {
    use lantern_app::state::{McpEdit, McpScope};
    let dir = workspace();
    let state = opened(dir.path());
    let view = state.mcp_servers();
    assert!(view.workspace_file.unwrap().ends_with(".lantern/mcp.json"));
    // A definition that names no transport is refused with the reason, and nothing is saved.
    let refused = state
        .change_mcp(
            "bad",
            McpScope::Workspace,
            McpEdit::Add {
                definition: r#"{"args": ["x"]}"#.into(),
            },
        )
        .unwrap_err();
    assert!(
        refused.message.contains("needs \"command\""),
        "{}",
        refused.message
    );
    assert!(!dir.path().join(".lantern/mcp.json").exists());
}

#[test]
fn the_editor_s_outline_lists_what_a_file_defines_in_order() {
    let dir = workspace();
    std::fs::write(
        dir.path().join("src/shop.ts"),
        "export class Cart {\n  total(): number {\n    return 1;\n  }\n}\n\nexport function checkout() {}\n",
    )
    .unwrap();
    let state = opened(dir.path());
    let outline = state.file_outline("src/shop.ts").unwrap();
    let shown: Vec<(&str, Option<&str>, u32)> = outline
        .iter()
        .map(|e| (e.name.as_str(), e.parent.as_deref(), e.line))
        .collect();
    assert_eq!(
        shown,
        [
            ("Cart", None, 1),
            ("total", Some("Cart"), 2),
            ("checkout", None, 7)
        ]
    );
    assert_eq!(outline[0].end_line, 5);
    // A file of a language the index does not read has no outline.
    assert!(state.file_outline("package.json").unwrap().is_empty());
    // `@` mentions complete from the same index, shortest first.
    assert_eq!(state.complete_symbols("c").unwrap(), ["Cart", "checkout"]);
    assert!(state.complete_symbols("zz").unwrap().is_empty());
}
