//! The adversarial suite: hostile paths, links, special files, huge and deep trees, and grants
//! that try to widen themselves, thrown at every tool through the same path a model's call
//! takes (`Session::run_call`: schema validation, sandbox, policy, the tool), on real folders.
//!
//! Every case asserts the exact `error_type` (or the exact success) and that nothing outside
//! the workspace was read or changed: the folder `outside/` next to the workspace is compared
//! byte for byte before and after, and no result may contain its secret.
//!
//! What the sandbox cannot see, and these cases document:
//!
//! * A **hard link** to an outside file is, to every system call, an ordinary file of the
//!   workspace: reading it reads the outside content. What *is* detectable is only that the
//!   file has more than one link (`st_nlink > 1`), not where the others are. Writing it is safe:
//!   the write replaces the link with a new file, and the outside file keeps its content.
//! * `%2e%2e`, `..\`, `‥`, `．．` and other look-alikes are **literal names** on Linux, not
//!   parent folders: they stay inside the workspace (reads say not found, writes create a file
//!   with that odd name inside).
//! * `~` and `$HOME` are not expanded: they are literal names too.

use lantern_core::agent::{
    Answer, CallOutcome, Confirmer, FixedAnswer, PermissionRequest, Session, SessionOptions,
};
use lantern_core::checkpoint::CheckpointStore;
use lantern_core::policy::Scope;
use lantern_core::sandbox::Workspace;
use lantern_core::tool_result::ToolResult;
use lantern_core::toolbox::Toolbox;
use lantern_core::ErrorType;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

mod grants;
mod paths;
mod trees;

const SECRET: &str = "TOP-SECRET-OUTSIDE-CONTENT";
const INSIDE: &str = "inside content";

/// A workspace `ws/` beside `outside/` (holding the secret) and Lantern's data folder.
struct Fx {
    base: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    session: Session,
    before: BTreeMap<PathBuf, String>,
}

impl Fx {
    fn new() -> Fx {
        let base = tempfile::tempdir().unwrap();
        let base_path = base.path().canonicalize().unwrap();
        std::fs::create_dir(base_path.join("ws")).unwrap();
        let outside = base_path.join("outside");
        std::fs::create_dir_all(outside.join("sub")).unwrap();
        std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
        std::fs::write(outside.join("sub/f.txt"), SECRET).unwrap();
        let workspace = Workspace::open(base_path.join("ws")).unwrap();
        let root = workspace.root().to_path_buf();
        let checkpoints = CheckpointStore::for_workspace(&base_path.join("data"), &workspace);
        let session = Session::new(
            workspace,
            SessionOptions {
                checkpoints: Some(checkpoints),
                ..SessionOptions::in_memory(Toolbox::standard().into())
            },
        );
        let before = snapshot(&outside);
        Fx {
            base,
            root,
            outside,
            session,
            before,
        }
    }

    fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    fn link(&self, rel: &str, target: impl AsRef<Path>) {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        symlink(target, path).unwrap();
    }

    /// Runs a call as the model would, with the user answering yes to any question, so that
    /// only the sandbox and the hard rules stand in the way.
    fn call(&mut self, tool: &str, args: Value) -> ToolResult {
        self.call_with(tool, args, &mut FixedAnswer(Answer::AllowOnce))
    }

    fn call_with(&mut self, tool: &str, args: Value, confirmer: &mut dyn Confirmer) -> ToolResult {
        // Echoing a path the model gave reveals nothing it did not know.
        let echoes_outside = args.to_string().contains(self.outside.to_str().unwrap());
        let outcome = self.session.run_call(tool, args, confirmer, &mut |_| {});
        let result = match outcome {
            CallOutcome::Ran(result) => result,
            refused => refused.into_result(),
        };
        self.assert_no_leak(&result, echoes_outside);
        result
    }

    fn assert_no_leak(&self, result: &ToolResult, echoes_outside: bool) {
        let text = serde_json::to_string(result).unwrap();
        assert!(!text.contains(SECRET), "outside content leaked: {text}");
        assert!(
            echoes_outside || !text.contains(self.outside.to_str().unwrap()),
            "an outside path leaked: {text}"
        );
    }

    /// Nothing outside the workspace changed: `outside/` is as it was, and nothing new sits
    /// next to the workspace.
    fn assert_outside_untouched(&self) {
        assert_eq!(snapshot(&self.outside), self.before, "outside/ changed");
        let mut names: Vec<String> = std::fs::read_dir(self.base.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names.retain(|n| n != "data");
        assert_eq!(
            names,
            ["outside", "ws"],
            "something was created beside the workspace"
        );
    }
}

/// Every path below `dir` with its content (files) or target (links).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let value = if meta.file_type().is_symlink() {
                format!("-> {}", std::fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                pending.push(path.clone());
                "dir".to_string()
            } else {
                String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned()
            };
            out.insert(path, value);
        }
    }
    out
}

#[track_caller]
fn assert_error(result: &ToolResult, expected: ErrorType, case: &str) {
    assert!(
        !result.success,
        "{case}: expected {expected}, got success: {result:?}"
    );
    assert_eq!(result.error_type, expected, "{case}: {result:?}");
}

#[track_caller]
fn assert_ok(result: &ToolResult, case: &str) -> Value {
    assert!(result.success, "{case}: {result:?}");
    result.data.clone().unwrap()
}

fn read(path: &str) -> Value {
    json!({"path": path})
}

fn write(path: &str) -> Value {
    json!({"path": path, "content": "overwritten by the model"})
}

fn list(directory: &str) -> Value {
    json!({"directory": directory})
}

// ---- traversal ----
