//! Confirmations in the window: the agent thread asks, the webview answers.
//!
//! A [`WindowConfirmer`] sends the request to the webview as an [`Update::Confirm`] with a fresh
//! id, then blocks the agent thread on a channel until `answer_confirmation` delivers the
//! user's answer for that id. Pending requests are kept by id, so several can wait at once and
//! none is lost; cancelling denies them all.

use crate::error::{AppError, ErrorCode};
use lantern_core::agent::{Answer, Confirmer, PermissionRequest};
use lantern_core::event::Event;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Mutex;
use tauri::ipc::Channel;

/// What the backend streams to the webview while it works.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Update {
    /// A step of the agent loop or of a manual call.
    Agent { event: Event },
    /// The user must answer request `id` with `answer_confirmation`.
    Confirm { id: u64, request: PermissionRequest },
}

/// The confirmations waiting for the user, by id.
#[derive(Default)]
pub struct Confirmations {
    pending: Mutex<HashMap<u64, Sender<Answer>>>,
    next_id: AtomicU64,
}

impl Confirmations {
    /// A new pending confirmation: its id and where its answer arrives.
    pub fn register(&self) -> (u64, Receiver<Answer>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let (sender, receiver) = channel();
        self.lock().insert(id, sender);
        (id, receiver)
    }

    /// Delivers the user's answer to request `id`.
    pub fn answer(&self, id: u64, answer: Answer) -> Result<(), AppError> {
        let sender = self.lock().remove(&id).ok_or_else(|| {
            AppError::new(
                ErrorCode::NotFound,
                format!("Confirmation {id} is no longer waiting (it was answered or cancelled)."),
            )
        })?;
        // The asking thread may have given up (cancelled); the answer then has no one to tell.
        let _ = sender.send(answer);
        Ok(())
    }

    /// Denies every pending request (on cancel), so no agent thread waits for an answer that
    /// will never come.
    pub fn deny_all(&self) {
        for (_, sender) in self.lock().drain() {
            let _ = sender.send(Answer::Deny { message: None });
        }
    }

    #[cfg(test)]
    fn pending(&self) -> usize {
        self.lock().len()
    }

    fn forget(&self, id: u64) {
        self.lock().remove(&id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Sender<Answer>>> {
        // A panic elsewhere must not stop answers from being delivered.
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Asks the user in the window and waits for the answer.
pub struct WindowConfirmer<'a> {
    pub confirmations: &'a Confirmations,
    pub updates: &'a Channel<Update>,
}

impl Confirmer for WindowConfirmer<'_> {
    fn confirm(&mut self, request: &PermissionRequest) -> Answer {
        let (id, answer) = self.confirmations.register();
        let asked = self.updates.send(Update::Confirm {
            id,
            request: request.clone(),
        });
        if asked.is_err() {
            self.confirmations.forget(id);
            return Answer::Unanswerable {
                reason: "the window that should ask is gone".to_string(),
            };
        }
        // A dropped sender means the request was discarded without an answer: that is a no.
        answer.recv().unwrap_or(Answer::Deny { message: None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lantern_core::policy::Scope;

    #[test]
    fn answers_reach_the_request_they_name() {
        let confirmations = Confirmations::default();
        let (first, first_answer) = confirmations.register();
        let (second, second_answer) = confirmations.register();
        assert_eq!(confirmations.pending(), 2);
        confirmations
            .answer(second, Answer::AllowSession { scope: Scope::Tool })
            .unwrap();
        confirmations.answer(first, Answer::AllowOnce).unwrap();
        assert_eq!(first_answer.recv().unwrap(), Answer::AllowOnce);
        assert_eq!(
            second_answer.recv().unwrap(),
            Answer::AllowSession { scope: Scope::Tool }
        );
        assert_eq!(confirmations.pending(), 0);
    }

    #[test]
    fn an_answer_counts_once() {
        let confirmations = Confirmations::default();
        let (id, _answer) = confirmations.register();
        confirmations.answer(id, Answer::AllowOnce).unwrap();
        let again = confirmations.answer(id, Answer::AllowOnce).unwrap_err();
        assert_eq!(again.code, ErrorCode::NotFound);
    }

    #[test]
    fn cancelling_denies_everything_pending() {
        let confirmations = Confirmations::default();
        let (_, first) = confirmations.register();
        let (_, second) = confirmations.register();
        confirmations.deny_all();
        for answer in [first, second] {
            assert_eq!(answer.recv().unwrap(), Answer::Deny { message: None });
        }
        assert_eq!(confirmations.pending(), 0);
    }
}
