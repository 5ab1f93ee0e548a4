//! A reasoning model's thinking, before its reply: kept within the budget, closed for the model
//! when the budget runs out, and kept out of the reply's text, so the call decision and the
//! grammar begin after `</think>`.

use super::*;
use crate::template::{THINK_CLOSE, THINK_OPEN};

/// Room for the tags Lantern writes around the thinking (`<think>`, `</think>` and the line
/// breaks), in tokens.
pub(super) const TAG_TOKENS: usize = 16;

/// What thinking left behind.
pub(super) struct Thought {
    /// The thinking, without its tags.
    pub text: String,
    /// The logits after `</think>`, where the reply begins.
    pub logits: Vec<f32>,
    /// Tokens the model wrote while thinking.
    pub tokens: usize,
}

impl LocalModel {
    /// Lets the model think after the prompt (the cache holds it and `logits` follow it) for
    /// at most `budget` tokens, and never into the room the reply's `reply_tokens` need; with a
    /// budget of 0 the thinking is closed at once, empty. Opens `<think>` unless the template's
    /// prompt already did.
    pub(super) fn think(
        &mut self,
        mut logits: Vec<f32>,
        budget: u32,
        reply_tokens: usize,
        cancel: &CancelToken,
    ) -> Result<Thought, ModelError> {
        let room = (self.facts.context as usize)
            .saturating_sub(self.cached.len() + reply_tokens + TAG_TOKENS);
        let budget = (budget as usize).min(room);
        let opened = self.thinking_left_open();
        let open = if opened {
            String::new()
        } else {
            format!("{THINK_OPEN}\n")
        };
        if budget == 0 {
            let tokens = self.special_tokens(&format!("{open}\n{THINK_CLOSE}\n\n"));
            return Ok(Thought {
                text: String::new(),
                logits: self.append(&tokens)?,
                tokens: 0,
            });
        }
        if !opened {
            let tokens = self.special_tokens(&open);
            logits = self.append(&tokens)?;
        }
        let mut chain = self.sampling_chain();
        let mut utf8 = Utf8Stream::default();
        let mut text = String::new();
        let mut written = 0;
        let closed = loop {
            if written >= budget || cancel.is_cancelled() {
                break false;
            }
            let Some(token) = choose(&logits, None, &mut chain, &mut |_| false) else {
                break false;
            };
            if self.model.vocab().is_eog(token) {
                break false;
            }
            written += 1;
            text.push_str(&utf8.push(&self.model.vocab().token_to_piece(token, true, None)));
            logits = self.append(&[token])?;
            if let Some(end) = text.find(THINK_CLOSE) {
                text.truncate(end);
                break true;
            }
        };
        if !closed && !cancel.is_cancelled() {
            let tokens = self.special_tokens(&format!("\n{THINK_CLOSE}\n\n"));
            logits = self.append(&tokens)?;
        }
        Ok(Thought {
            text: text.trim().to_string(),
            logits,
            tokens: written,
        })
    }

    /// Has the template's prompt opened the thinking itself (`<think>`, maybe with its first
    /// words), without closing it? Only the prompt's last tokens, the reply's opening, are read.
    fn thinking_left_open(&self) -> bool {
        let vocab = self.model.vocab();
        let start = self.cached.len().saturating_sub(32);
        let bytes: Vec<u8> = self.cached[start..]
            .iter()
            .flat_map(|t| vocab.token_to_piece(*t, true, None))
            .collect();
        let tail = String::from_utf8_lossy(&bytes);
        match (tail.rfind(THINK_OPEN), tail.rfind(THINK_CLOSE)) {
            (Some(open), Some(close)) => open > close,
            (open, _) => open.is_some(),
        }
    }

    /// `text` as tokens, its special tokens (a model's own `<think>`) recognised.
    fn special_tokens(&self, text: &str) -> Vec<LlamaToken> {
        self.model.vocab().tokenize(text.as_bytes(), false, true)
    }
}
