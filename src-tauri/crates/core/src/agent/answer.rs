//! The answer the user is given for a reply that ends the turn: the model's text, without the
//! repeats it ended on and with the files it named by their names alone given by their paths.
//! The history keeps the reply as the model wrote it, so the next message reuses the tokens
//! the model already holds for it.

use super::Session;
use crate::answer_paths::{files_shown, with_paths};
use crate::event::Event;
use crate::model::{FinishReason, Role};
use crate::repeats::before_repeats;
use crate::tools::walk::known_paths;

impl Session {
    /// The answer to give for the reply `text` of step `step`, which ended for `finish`;
    /// each change is reported as an event. `turn_start` is where the turn's messages begin.
    pub(super) fn answer_from(
        &mut self,
        mut text: String,
        finish: FinishReason,
        step: usize,
        turn_start: usize,
        emit: &mut dyn FnMut(&Event),
    ) -> String {
        if let Some(cut) = (finish == FinishReason::Repeating)
            .then(|| before_repeats(&text))
            .flatten()
        {
            text = cut.to_string();
            emit(&Event::AnswerCut {
                step,
                text: text.clone(),
            });
        }
        let results: Vec<&str> = self.history[turn_start..]
            .iter()
            .filter(|m| m.role == Role::Tool && !m.rejected)
            .map(|m| m.content.as_str())
            .collect();
        if !self.config.answer_paths || results.is_empty() {
            return text;
        }
        let known = self
            .known_paths
            .get_or_insert_with(|| known_paths(&self.ctx.workspace));
        let shown = files_shown(results, known);
        if let Some((given_text, paths)) = with_paths(&text, &shown, known) {
            text = given_text;
            emit(&Event::AnswerPathsGiven {
                step,
                text: text.clone(),
                paths,
            });
        }
        text
    }
}
