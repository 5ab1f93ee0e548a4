//! `lantern index`: builds or brings up to date a workspace's code index, showing progress on
//! stderr, and prints what it holds and what the refresh cost.

use super::{open_workspace, print_json, Failure};
use lantern_core::code_index::{saved_index_path, ProjectIndex};
use lantern_core::sandbox::Workspace;
use lantern_index::{CodeIndex, Refreshed};
use serde_json::json;
use std::path::Path;
use std::sync::MutexGuard;
use std::time::{Duration, Instant};

/// How often progress is shown.
const PROGRESS_EVERY: Duration = Duration::from_millis(500);

pub(super) fn index(
    workspace: &Path,
    rebuild: bool,
    map: Option<usize>,
    json: bool,
) -> Result<u8, Failure> {
    let ws = open_workspace(workspace)?;
    let saved = saved_index_path(ws.root());
    if rebuild {
        match std::fs::remove_file(&saved) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Failure {
                    code: 1,
                    message: format!("cannot remove the saved index {}: {e}", saved.display()),
                })
            }
            _ => {}
        }
    }
    let project = ProjectIndex::saved_at(saved.clone());
    let started = Instant::now();
    let (index, refreshed) = refresh_showing_progress(&project, &ws)?;
    let seconds = started.elapsed().as_secs_f64();
    let (files, definitions) = index.as_ref().map_or((0, 0), |i| i.counts());
    if let (Some(budget), Some(index)) = (map, index.as_ref()) {
        let map = lantern_index::repo_map(index, &Default::default(), budget);
        match json {
            true => print_json(&json!({"map": map, "characters": map.chars().count()})),
            false => outln!("{map}"),
        }
        return Ok(0);
    }
    if json {
        print_json(&json!({
            "files": files,
            "definitions": definitions,
            "parsed": refreshed.parsed,
            "kept": refreshed.kept,
            "removed": refreshed.removed,
            "skipped": refreshed.skipped,
            "seconds": seconds,
            "saved": saved,
        }));
    } else {
        outln!(
            "{files} files, {definitions} definitions ({} read, {} unchanged, {} gone, {} skipped) in {seconds:.2} s; saved in {}",
            refreshed.parsed,
            refreshed.kept,
            refreshed.removed,
            refreshed.skipped,
            saved.display()
        );
    }
    Ok(0)
}

/// Brings `project`'s index of `ws` up to date, saying on stderr how far it is every half
/// second while it reads files (a first build of a large project takes a while).
pub(super) fn refresh_showing_progress<'a>(
    project: &'a ProjectIndex,
    ws: &Workspace,
) -> Result<(MutexGuard<'a, Option<CodeIndex>>, Refreshed), Failure> {
    let mut shown = Instant::now();
    project
        .refresh(ws, |progress| {
            if shown.elapsed() >= PROGRESS_EVERY && progress.done < progress.total {
                eprintln!(
                    "lantern: indexing {}/{} files",
                    progress.done, progress.total
                );
                shown = Instant::now();
            }
        })
        .map_err(|e| Failure {
            code: 1,
            message: format!("cannot index {}: {}", ws.root().display(), e.message),
        })
}
