//! The reply's text as it goes out live. A backend may hand its text over a character at a
//! time (a server's stream, a script); one event per piece made the live events (the command
//! line's NDJSON, the window's updates) some 45 times the size of the text itself. Pieces are
//! joined until they are worth an event — a few hundred bytes, or a short while since the last
//! one, so that a person still sees the text as it comes.

use std::time::{Duration, Instant};

/// Enough text for an event of its own: the event's frame is then a small part of it.
const MIN_PIECE_BYTES: usize = 256;

/// The longest text waits to be sent, so that slow text still streams as it comes.
const MAX_HOLD: Duration = Duration::from_millis(40);

/// The text of one reply not sent yet, and when text was last sent.
pub(super) struct LiveText {
    pending: String,
    sent_at: Instant,
}

impl LiveText {
    pub(super) fn new() -> Self {
        LiveText {
            pending: String::new(),
            sent_at: Instant::now(),
        }
    }

    /// Joins `piece` to the text that waits; returns the text to send now, if it is worth it.
    pub(super) fn push(&mut self, piece: &str) -> Option<String> {
        self.pending.push_str(piece);
        (self.pending.len() >= MIN_PIECE_BYTES || self.sent_at.elapsed() >= MAX_HOLD)
            .then(|| self.take())
    }

    /// The text that waits, to send before anything else of the step.
    pub(super) fn flush(&mut self) -> Option<String> {
        (!self.pending.is_empty()).then(|| self.take())
    }

    fn take(&mut self) -> String {
        self.sent_at = Instant::now();
        std::mem::take(&mut self.pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_joined_until_they_are_worth_an_event_and_nothing_is_lost() {
        let mut live = LiveText::new();
        let mut sent = Vec::new();
        for _ in 0..1000 {
            sent.extend(live.push("ab"));
        }
        sent.extend(live.flush());
        assert_eq!(sent.concat(), "ab".repeat(1000));
        // About one event per MIN_PIECE_BYTES; a stalled machine sends a few more, never one
        // per piece.
        assert!(sent.len() < 100, "{} events for 1000 pieces", sent.len());
        assert_eq!(live.flush(), None);
    }

    #[test]
    fn slow_text_is_sent_as_it_comes() {
        let mut live = LiveText::new();
        std::thread::sleep(MAX_HOLD);
        assert_eq!(live.push("It").as_deref(), Some("It"));
        live.push(" is");
        std::thread::sleep(MAX_HOLD);
        // Whatever waited goes with the next piece once the wait is over.
        assert!(live.push(" 42.").is_some_and(|sent| sent.ends_with(" 42.")));
    }
}
