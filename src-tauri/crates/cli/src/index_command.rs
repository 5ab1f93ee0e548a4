//! `lantern index`: builds or brings up to date a workspace's code index, showing progress on
//! stderr, and prints what it holds and what the refresh cost.

use super::{open_workspace, print_json, Failure};
use lantern_core::code_index::{saved_index_path, IndexState, ProjectIndex};
use serde_json::json;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
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
    let project = Arc::new(ProjectIndex::saved_at(saved.clone()));
    let started = Instant::now();
    let shown = ShownProgress::of(Arc::clone(&project));
    let (index, refreshed) = project.refresh(&ws, |_| {}).map_err(|e| Failure {
        code: 1,
        message: format!("cannot index {}: {}", workspace.display(), e.message),
    })?;
    drop(shown);
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

/// While it lives, says on stderr every half second how far a refresh of the index has come,
/// when one is reading files: the index is built where it is first needed (a turn's search,
/// the map of the code), and the wait is shown there rather than added before.
pub(super) struct ShownProgress {
    stop: Arc<AtomicBool>,
    watcher: Option<JoinHandle<()>>,
}

impl ShownProgress {
    pub(super) fn of(index: Arc<ProjectIndex>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let watcher = std::thread::spawn(move || {
            let mut said = (0, 0);
            loop {
                std::thread::park_timeout(PROGRESS_EVERY);
                if stopped.load(Ordering::Relaxed) {
                    break;
                }
                let status = index.status();
                let now = (status.done, status.total);
                let reading = status.state == IndexState::Building && now.0 < now.1;
                if reading && now != said {
                    eprintln!("lantern: indexing {}/{} files", now.0, now.1);
                    said = now;
                }
            }
        });
        ShownProgress {
            stop,
            watcher: Some(watcher),
        }
    }
}

impl Drop for ShownProgress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(watcher) = self.watcher.take() {
            watcher.thread().unpark();
            let _ = watcher.join();
        }
    }
}
