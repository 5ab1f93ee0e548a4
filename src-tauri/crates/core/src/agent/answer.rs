//! The answer the user is given for a reply that ends the turn: the model's text, without the
//! repeats it ended on, with the files it named by their names alone given by their paths, and
//! followed by what the turn's results say in answer to the question's form when it leaves
//! that out.
//! The history keeps the reply as the model wrote it, so the next message reuses the tokens
//! the model already holds for it.

use super::Session;
use crate::answer_notes::{count_note, definition_note, AnswerNote};
use crate::answer_paths::{files_shown, with_paths};
use crate::event::Event;
use crate::model::{FinishReason, Message};
use crate::question::Question;
use crate::repeats::before_repeats;
use crate::seen_result::SeenResult;
use crate::tool_result::ShownResult;

impl Session {
    /// The answer to give for the reply `text` of step `step`, which ended for `finish`, to
    /// the user's `question`; each change is reported as an event. `turn_start` is where the
    /// turn's messages begin.
    pub(super) fn answer_from(
        &mut self,
        mut text: String,
        finish: FinishReason,
        step: usize,
        turn_start: usize,
        question: &Question,
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
        let results: Vec<&Message> = self.history[turn_start..]
            .iter()
            .filter(|m| m.result().is_some())
            .collect();
        if results.is_empty() {
            return text;
        }
        if self.config.answer_paths {
            let (known, _) = self.seen.look(&self.ctx, self.toolbox.specs());
            let shown = files_shown(results.iter().map(|m| m.content.as_str()), known);
            if let Some((given_text, paths)) = with_paths(&text, &shown, known) {
                text = given_text;
                emit(&Event::AnswerPathsGiven {
                    step,
                    text: text.clone(),
                    paths,
                });
            }
        }
        // The results are read only for a question a note can answer; a refusal is no result
        // and gives no note.
        let counts = self.config.count_notes && question.asks_how_many_files;
        let places = self.config.definition_notes && question.asks_where;
        let parsed: Vec<SeenResult> = match counts || places {
            true => results
                .iter()
                .filter_map(|m| m.result())
                .map(ShownResult::seen)
                .collect(),
            false => Vec::new(),
        };
        let notes: Vec<AnswerNote> = [
            self.config
                .count_notes
                .then(|| count_note(question, &parsed, &text)),
            self.config
                .definition_notes
                .then(|| definition_note(question, &parsed, &text)),
        ]
        .into_iter()
        .flatten()
        .flatten()
        .collect();
        if !notes.is_empty() {
            for note in &notes {
                text = match text.trim_end() {
                    "" => note.text.clone(),
                    said => format!("{said}\n\n{}", note.text),
                };
            }
            emit(&Event::AnswerNoted {
                step,
                text: text.clone(),
                notes,
            });
        }
        text
    }
}
