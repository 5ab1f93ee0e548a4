//! The webview's TypeScript types for everything that crosses IPC, generated from the Rust
//! types so the two cannot drift apart.
//!
//! `schemars` derives a JSON Schema for each type (the serialize contract: the shape Rust puts
//! on the wire, which is also a shape it accepts back); [`typescript`] turns those schemas into
//! the modules of `ui/src/ipc/generated/` (split by [`modules`]). The test below fails when a
//! checked-in file is not what the types give; with `LANTERN_UPDATE_IPC_TYPES` set it writes
//! the files instead. Test-only: the app itself never needs the TypeScript.

mod modules;
mod typescript;
mod typescript_tests;

use crate::confirm::Update;
use crate::error::AppError;
use crate::files::{SavedFile, TextFile, Tree};
use crate::settings::Settings;
use crate::state::{
    ChatOpened, CodeMapInfo, ExportedTranscript, LoadProgress, McpEdit, McpScope, McpView,
    ModelInfo, ModelList, RulesInfo, ServerForm, ServerReport, Startup, WorkspaceInfo,
};
use lantern_core::agent::Answer;
use lantern_core::chats::ChatSummary;
use lantern_core::checkpoint::{Checkpoint, UndoConflict, UndoOutcome};
use lantern_core::code_index::{DefinitionPlace, IndexStatus, OutlineEntry};
use lantern_core::event::Event;
use lantern_core::policy::Grant;
use lantern_core::tool_result::ToolResult;
use lantern_core::tools::ToolSpec;
use lantern_probe::probe::ProbeReport;
use modules::Module;
use schemars::generate::{Contract, SchemaGenerator, SchemaSettings};
use schemars::JsonSchema;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::path::PathBuf;

const UPDATE: &str = "LANTERN_UPDATE_IPC_TYPES";
const UPDATE_COMMAND: &str =
    "cd src-tauri && LANTERN_UPDATE_IPC_TYPES=1 cargo test -p lantern-app ipc_types";

/// The schemas of the types a command takes or returns, a channel streams, or an error
/// carries in its details, with every type they contain, by name; and the modules they are
/// written to, each with the types it starts from. A command with a new argument or result
/// type adds it here.
fn definitions() -> (Map<String, Value>, Vec<Module>) {
    let mut settings = SchemaSettings::draft2020_12();
    settings.contract = Contract::Serialize;
    let mut generator = settings.into_generator();
    fn add<T: JsonSchema>(generator: &mut SchemaGenerator) -> String {
        // A derived type is always a definition; the reference to it is not needed here.
        let _ = generator.subschema_for::<T>();
        T::schema_name().into_owned()
    }
    let g = &mut generator;
    // From the lowest up (see `modules`).
    let modules = vec![
        Module {
            file: "tools.ts",
            about: "Tools, their calls and results, what the user allows, and undo.",
            roots: vec![
                add::<ToolSpec>(g),
                add::<ToolResult>(g),
                add::<Answer>(g),
                add::<Grant>(g),
                add::<Checkpoint>(g),
                add::<UndoOutcome>(g),
                add::<UndoConflict>(g),
            ],
        },
        Module {
            file: "events.ts",
            about: "What a turn streams: the agent's events, and the channels' updates.",
            roots: vec![add::<Event>(g), add::<Update>(g), add::<LoadProgress>(g)],
        },
        Module {
            file: "app.ts",
            about: "The commands' other results and arguments, the settings, and every error.",
            roots: vec![
                add::<Startup>(g),
                add::<WorkspaceInfo>(g),
                add::<Tree>(g),
                add::<IndexStatus>(g),
                add::<DefinitionPlace>(g),
                add::<OutlineEntry>(g),
                add::<TextFile>(g),
                add::<SavedFile>(g),
                add::<ModelList>(g),
                add::<ModelInfo>(g),
                add::<ProbeReport>(g),
                add::<ServerReport>(g),
                add::<ExportedTranscript>(g),
                add::<ChatSummary>(g),
                add::<ChatOpened>(g),
                add::<Settings>(g),
                add::<ServerForm>(g),
                add::<McpView>(g),
                add::<RulesInfo>(g),
                add::<CodeMapInfo>(g),
                add::<McpScope>(g),
                add::<McpEdit>(g),
                add::<AppError>(g),
            ],
        },
    ];
    (generator.take_definitions(true), modules)
}

/// Each generated file's name and text.
fn generate() -> Vec<(&'static str, String)> {
    let (definitions, modules) = definitions();
    let header = format!(
        "// Generated from the Rust types' JSON Schemas by src-tauri/src/ipc_types; do not edit.\n\
         // Regenerate: {UPDATE_COMMAND}\n"
    );
    modules::write(&definitions, &modules, &header)
        .unwrap_or_else(|e| panic!("the IPC types cannot be written in TypeScript: {e}"))
}

/// Where the generated files are checked in, from the repository root.
const GENERATED: &str = "ui/src/ipc/generated";

#[test]
fn the_generated_typescript_matches_the_rust_types() {
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(GENERATED);
    let expected = generate();
    let on_disk: BTreeSet<String> = std::fs::read_dir(&folder)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let written: BTreeSet<String> = expected.iter().map(|(f, _)| f.to_string()).collect();
    if std::env::var_os(UPDATE).is_some() {
        std::fs::create_dir_all(&folder).expect("the generated folder can be made");
        for stale in on_disk.difference(&written) {
            std::fs::remove_file(folder.join(stale)).expect("a stale file can be removed");
        }
        for (file, text) in &expected {
            std::fs::write(folder.join(file), text).expect("a generated file can be written");
        }
        return;
    }
    assert_eq!(
        on_disk, written,
        "{GENERATED} holds other files than the Rust types give. Regenerate it with\n    \
         {UPDATE_COMMAND}"
    );
    for (file, expected) in &expected {
        let current = std::fs::read_to_string(folder.join(file)).unwrap_or_default();
        if current != *expected {
            let line = current
                .lines()
                .zip(expected.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| current.lines().count().min(expected.lines().count()));
            panic!(
                "{GENERATED}/{file} does not match the Rust types (first difference at line {}: \
                 {:?} should be {:?}). Regenerate it with\n    {UPDATE_COMMAND}",
                line + 1,
                current.lines().nth(line).unwrap_or("<end>"),
                expected.lines().nth(line).unwrap_or("<end>"),
            );
        }
    }
}
