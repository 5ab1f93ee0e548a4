//! The webview's TypeScript types for everything that crosses IPC, generated from the Rust
//! types so the two cannot drift apart.
//!
//! `schemars` derives a JSON Schema for each type (the serialize contract: the shape Rust puts
//! on the wire, which is also a shape it accepts back); [`typescript`] turns those schemas into
//! `ui/src/ipc/generated.ts`. The test below fails when the checked-in file is not what the
//! types give; with `LANTERN_UPDATE_IPC_TYPES` set it writes the file instead. Test-only: the
//! app itself never needs the TypeScript.

mod typescript;
mod typescript_tests;

use crate::confirm::Update;
use crate::error::AppError;
use crate::files::{SavedFile, TextFile, Tree};
use crate::settings::Settings;
use crate::state::{
    ChatOpened, ExportedTranscript, LoadProgress, ModelInfo, ModelList, ServerForm, ServerReport,
    Startup, WorkspaceInfo,
};
use lantern_core::agent::Answer;
use lantern_core::chats::ChatSummary;
use lantern_core::checkpoint::{Checkpoint, UndoConflict, UndoOutcome};
use lantern_core::event::Event;
use lantern_core::policy::Grant;
use lantern_core::tool_result::ToolResult;
use lantern_core::tools::ToolSpec;
use lantern_llama::probe::ProbeReport;
use schemars::generate::{Contract, SchemaGenerator, SchemaSettings};
use schemars::JsonSchema;
use serde_json::{Map, Value};
use std::path::PathBuf;

const UPDATE: &str = "LANTERN_UPDATE_IPC_TYPES";
const UPDATE_COMMAND: &str =
    "cd src-tauri && LANTERN_UPDATE_IPC_TYPES=1 cargo test -p lantern-app ipc_types";

/// The schemas of the types a command takes or returns, a channel streams, or an error
/// carries in its details, with every type they contain, by name. A command with a new
/// argument or result type adds it here.
fn definitions() -> Map<String, Value> {
    let mut settings = SchemaSettings::draft2020_12();
    settings.contract = Contract::Serialize;
    let mut generator = settings.into_generator();
    fn add<T: JsonSchema>(generator: &mut SchemaGenerator) {
        // A derived type is always a definition; the reference to it is not needed here.
        let _ = generator.subschema_for::<T>();
    }
    // Command results.
    add::<Startup>(&mut generator);
    add::<WorkspaceInfo>(&mut generator);
    add::<Tree>(&mut generator);
    add::<TextFile>(&mut generator);
    add::<SavedFile>(&mut generator);
    add::<Event>(&mut generator);
    add::<ModelList>(&mut generator);
    add::<ModelInfo>(&mut generator);
    add::<ProbeReport>(&mut generator);
    add::<ServerReport>(&mut generator);
    add::<ToolSpec>(&mut generator);
    add::<ToolResult>(&mut generator);
    add::<Grant>(&mut generator);
    add::<Checkpoint>(&mut generator);
    add::<UndoOutcome>(&mut generator);
    add::<ExportedTranscript>(&mut generator);
    add::<ChatSummary>(&mut generator);
    add::<ChatOpened>(&mut generator);
    add::<Settings>(&mut generator);
    // Command arguments.
    add::<Answer>(&mut generator);
    add::<ServerForm>(&mut generator);
    // Channels.
    add::<Update>(&mut generator);
    add::<LoadProgress>(&mut generator);
    // Every command's error, and the details of a refused undo.
    add::<AppError>(&mut generator);
    add::<UndoConflict>(&mut generator);
    generator.take_definitions(true)
}

/// The text of `generated.ts`.
fn generate() -> String {
    let body = typescript::module(&definitions())
        .unwrap_or_else(|e| panic!("the IPC types cannot be written in TypeScript: {e}"));
    format!(
        "// Generated from the Rust types' JSON Schemas by src-tauri/src/ipc_types; do not edit.\n\
         // Regenerate: {UPDATE_COMMAND}\n{body}"
    )
}

/// Where the generated file is checked in, from the repository root.
const GENERATED: &str = "ui/src/ipc/generated.ts";

#[test]
fn the_generated_typescript_matches_the_rust_types() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(GENERATED);
    let expected = generate();
    if std::env::var_os(UPDATE).is_some() {
        std::fs::write(&path, &expected).expect("generated.ts can be written");
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current != expected {
        let line = current
            .lines()
            .zip(expected.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| current.lines().count().min(expected.lines().count()));
        panic!(
            "{GENERATED} does not match the Rust types (first difference at line {}: {:?} should \
             be {:?}). Regenerate it with\n    {UPDATE_COMMAND}",
            line + 1,
            current.lines().nth(line).unwrap_or("<end>"),
            expected.lines().nth(line).unwrap_or("<end>"),
        );
    }
}
