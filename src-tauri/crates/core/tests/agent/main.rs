//! The agent loop, driven by a scripted model against real temp workspaces.

use lantern_core::agent::{
    Answer, Confirmer, FixedAnswer, PermissionRequest, Session, SessionOptions,
};
use lantern_core::checkpoint::CheckpointStore;
use lantern_core::event::{load_transcript, Event, FinishedReason, TranscriptWriter};
use lantern_core::model::{
    CancelToken, FinishReason, Flow, GenerateRequest, Generation, Model, ModelError, Role,
    ScriptedModel,
};
use lantern_core::policy::{Effect, PolicyStore, Scope};
use lantern_core::protocol::markers::text_protocol_messages;
use lantern_core::sandbox::Workspace;
use lantern_core::toolbox::Toolbox;
use lantern_core::ErrorType;
#[path = "../common/mod.rs"]
mod common;
use common::{asking, call, finished, run, session, workspace};

mod context;
mod limits;
mod record;
mod writes;

/// The last message of request `step` as a model that speaks the text protocol reads it.
fn last_read(model: &ScriptedModel, step: usize) -> String {
    let read = text_protocol_messages(&model.seen[step]);
    read.last().unwrap().content.clone()
}

/// Event names, with runs of `text_delta` (one per streamed piece) folded into one.
fn names(events: &[Event]) -> Vec<String> {
    let mut names: Vec<String> = events
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["event"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    names.dedup_by(|a, b| a == "text_delta" && b == "text_delta");
    names
}

/// A confirmer that records requests and answers from a list.
struct Recorder {
    answers: Vec<Answer>,
    asked: Vec<PermissionRequest>,
}

impl Confirmer for Recorder {
    fn confirm(&mut self, request: &PermissionRequest) -> Answer {
        self.asked.push(request.clone());
        self.answers.remove(0)
    }
}
