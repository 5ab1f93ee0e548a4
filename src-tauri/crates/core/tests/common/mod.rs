//! What the agent's tests share: a real temp workspace, a session over it, and a scripted
//! model's run through one message.

// Each test binary uses some of these.
#![allow(dead_code)]

use lantern_core::agent::{Confirmer, Session, SessionOptions};
use lantern_core::event::{Event, FinishedReason};
use lantern_core::model::{CancelToken, ScriptedModel};
use lantern_core::sandbox::Workspace;
use lantern_core::toolbox::Toolbox;
use std::path::Path;

pub fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("package.json"),
        "{\"name\": \"shop\", \"version\": \"2.4.1\"}\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "pub fn parse_config() {}\n").unwrap();
    dir
}

pub fn session(dir: &Path) -> Session {
    Session::new(
        Workspace::open(dir).unwrap(),
        SessionOptions::in_memory(Toolbox::standard().into()),
    )
}

pub fn call(tool: &str, args: &str) -> String {
    format!("<TOOL_CALL>\n{{\"tool\": \"{tool}\", \"args\": {args}, \"reasoning\": \"test\"}}\n</TOOL_CALL>")
}

/// Runs one message; returns the events and the model (to inspect what it was sent).
pub fn run(
    session: &mut Session,
    replies: Vec<String>,
    confirmer: &mut dyn Confirmer,
) -> (Vec<Event>, ScriptedModel) {
    asking(session, "question", replies, confirmer)
}

/// Runs the message `question`; returns the events and the model.
pub fn asking(
    session: &mut Session,
    question: &str,
    replies: Vec<String>,
    confirmer: &mut dyn Confirmer,
) -> (Vec<Event>, ScriptedModel) {
    let mut model = ScriptedModel::new(replies);
    let mut events = Vec::new();
    session.send(
        question,
        &mut model,
        confirmer,
        &mut |e| events.push(e.clone()),
        &CancelToken::new(),
    );
    (events, model)
}

pub fn finished(events: &[Event]) -> (FinishedReason, String) {
    match events.last() {
        Some(Event::TurnFinished { reason, text, .. }) => (*reason, text.clone()),
        other => panic!("last event is not turn_finished: {other:?}"),
    }
}
