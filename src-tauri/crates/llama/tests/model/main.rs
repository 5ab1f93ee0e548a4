//! The llama.cpp backend with the real default model (SmolLM2-135M-Instruct, greedy). These
//! tests assert structure, never wording. They share one loaded model and run one at a time:
//! two cores cannot run two models at once.

use lantern_core::agent::{Answer, FixedAnswer, Session, SessionOptions};
use lantern_core::event::{Event, FinishedReason};
use lantern_core::model::{
    CancelToken, FinishReason, Flow, GenerateRequest, MadeCall, Message, Model, Role, ToolChoice,
};
use lantern_core::protocol::{interpret, parse, Outcome, OPEN_TAG, STOP_SEQUENCES};
use lantern_core::sandbox::Workspace;
use lantern_core::tool_result::ShownResult;
use lantern_core::toolbox::Toolbox;
use lantern_core::tools::{Risk, ToolRegistry, ToolSpec};
use lantern_llama::{default_model_path, LoadOptions, LocalModel};
use std::sync::{Mutex, MutexGuard, OnceLock};

#[path = "../support/mod.rs"]
mod support;

mod answers;
mod engine;
mod lookups;
mod steering;
mod turns;

fn model() -> MutexGuard<'static, LocalModel> {
    static MODEL: OnceLock<Mutex<LocalModel>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let path = default_model_path();
            assert!(
                path.exists(),
                "the default model is missing at {}: run scripts/fetch-model.sh (npm test does)",
                path.display()
            );
            let loaded = support::keeping_calibration(
                LocalModel::load(&LoadOptions::new(path), |_| {}).unwrap(),
            );
            Mutex::new(support::keeping_openings(loaded))
        })
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn toolbox() -> &'static Toolbox {
    static TOOLBOX: OnceLock<Toolbox> = OnceLock::new();
    TOOLBOX.get_or_init(Toolbox::standard)
}

fn system() -> String {
    toolbox().system_prompt().to_string()
}

fn conversation(question: &str) -> Vec<Message> {
    vec![
        Message::new(Role::System, system()),
        Message::new(Role::User, question),
    ]
}

/// Generates one reply; returns the generation and the streamed pieces.
fn generate(
    model: &mut LocalModel,
    messages: &[Message],
    choice: ToolChoice,
    max_tokens: usize,
) -> (lantern_core::model::Generation, Vec<String>) {
    let cancel = CancelToken::new();
    let request = GenerateRequest::new(messages, max_tokens, &cancel)
        .with_tools(toolbox().specs())
        .with_stop(STOP_SEQUENCES)
        .with_tool_choice(choice);
    let mut pieces = Vec::new();
    let generation = model
        .generate(&request, &mut |p| {
            pieces.push(p.to_string());
            Flow::Continue
        })
        .unwrap();
    (generation, pieces)
}

/// A session on `dir` that keeps no grants, checkpoints or transcript.
fn fresh_session(dir: &std::path::Path, toolbox: std::sync::Arc<Toolbox>) -> Session {
    Session::new(
        Workspace::open(dir).unwrap(),
        SessionOptions::in_memory(toolbox),
    )
}

/// A made-up project in a fresh folder named `name`: each file's path and text.
fn made_up_project(name: &str, files: &[(&str, &str)]) -> TestFolder {
    let dir = test_folder(name);
    for (path, text) in files {
        let file = dir.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    dir
}

/// A fresh folder named `name` for one test, removed with all it holds when the test ends
/// (a failing one too), so that test runs leave nothing behind in the temporary folder.
struct TestFolder {
    _root: tempfile::TempDir,
    path: std::path::PathBuf,
}

impl std::ops::Deref for TestFolder {
    type Target = std::path::Path;

    fn deref(&self) -> &std::path::Path {
        &self.path
    }
}

impl AsRef<std::path::Path> for TestFolder {
    fn as_ref(&self) -> &std::path::Path {
        &self.path
    }
}

fn test_folder(name: &str) -> TestFolder {
    let root = tempfile::Builder::new()
        .prefix("lantern-llama-test-")
        .tempdir()
        .unwrap();
    let path = root.path().join(name);
    std::fs::create_dir_all(&path).unwrap();
    TestFolder { _root: root, path }
}
