//! The commands over Lantern's saved state: transcripts, checkpoints and grants.

use super::{open_workspace, print_json, render, usage, Failure, PolicyAction};
use lantern_core::checkpoint::{CheckpointStore, UndoConflict};
use lantern_core::event::load_transcript;
use lantern_core::paths;
use lantern_core::policy::PolicyStore;
use render::three_way_view;
use serde_json::{json, Value};
use std::path::Path;

/// `lantern replay`: a saved transcript printed again, rendered or as JSON lines.
pub(super) fn replay(file: &Path, json: bool) -> Result<u8, Failure> {
    let (events, bad) = load_transcript(file)
        .map_err(|e| usage(format!("cannot read transcript {}: {e}", file.display())))?;
    let mut renderer = render::Human::new();
    for event in &events {
        if json {
            outln!(
                "{}",
                serde_json::to_string(event).expect("events serialise")
            );
        } else {
            renderer.event(event);
        }
    }
    if !bad.is_empty() {
        eprintln!(
            "lantern: skipped unreadable lines {bad:?} of {}",
            file.display()
        );
    }
    Ok(0)
}

/// `lantern undo`: the newest write, or the checkpoint given, undone.
pub(super) fn undo(workspace: &Path, checkpoint: Option<&str>) -> Result<u8, Failure> {
    let ws = open_workspace(workspace)?;
    let store = CheckpointStore::for_workspace(&paths::data_dir(), &ws);
    match store.undo(&ws, checkpoint) {
        Ok(outcome) => {
            print_json(&outcome);
            Ok(0)
        }
        Err(e) => Err(Failure {
            code: 1,
            message: match UndoConflict::from_error(&e) {
                Some(conflict) => format!("{}\n\n{}", e.message, three_way_view(&conflict)),
                None => e.message,
            },
        }),
    }
}

/// `lantern checkpoints`: the writes recorded for a workspace.
pub(super) fn checkpoints(workspace: &Path) -> Result<u8, Failure> {
    let ws = open_workspace(workspace)?;
    let store = CheckpointStore::for_workspace(&paths::data_dir(), &ws);
    let list = store.list().map_err(|e| Failure {
        code: 1,
        message: e.message,
    })?;
    print_json(&list);
    Ok(0)
}

/// `lantern policy list|revoke`: a workspace's saved grants.
pub(super) fn policy(action: PolicyAction) -> Result<u8, Failure> {
    match action {
        PolicyAction::List { workspace } => {
            let ws = open_workspace(&workspace)?;
            let store = PolicyStore::for_workspace(&paths::config_dir(), ws.root());
            let loaded = store.load();
            if let Some(w) = &loaded.warning {
                eprintln!("lantern: {w}");
            }
            let grants: Vec<Value> = loaded
                .grants
                .iter()
                .map(|g| json!({"id": g.id, "tool": g.tool, "scope": g.scope, "effect": g.effect, "description": g.describe()}))
                .collect();
            print_json(&grants);
            Ok(0)
        }
        PolicyAction::Revoke { workspace, id } => {
            let ws = open_workspace(&workspace)?;
            let store = PolicyStore::for_workspace(&paths::config_dir(), ws.root());
            let removed = store.revoke(&id).map_err(|e| Failure {
                code: 1,
                message: e.message,
            })?;
            eprintln!("lantern: revoked: {}", removed.describe());
            Ok(0)
        }
    }
}
