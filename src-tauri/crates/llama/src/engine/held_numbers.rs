//! Numbers an answer writes after reading: only those the conversation holds.
//!
//! A tiny model that has read a file often answers with a number it did not read: a version
//! with a part too many (`2.0.0.1` for `2.0.0`), a run of zeros, a port from nowhere. Once a
//! result of the turn is there, a token is refused when it would make the answer's current
//! word a number, two characters or more, that no number of the conversation begins with. A
//! number is a word's run from its first digit, after a range's sign or a `v` (`^4.18.2`,
//! `~1.2`, `v3` are the numbers `4.18.2`, `1.2`, `3`). The conversation is what the user wrote,
//! later system messages and the results' values, not the model's own words (see
//! [`super::made_up`]). One digit is never refused: it is too common to say anything, and a
//! count may be the model's own. An answer with no result in its turn (general knowledge) is
//! not held at all.

use super::copying::{Facts, NextWord};
use super::made_up::conversation_texts;
use lantern_core::model::{Message, Role};
use lantern_core::words::ends_a_word;

/// The numbers an answer may write.
pub(super) struct HeldNumbers {
    held: Facts,
}

impl HeldNumbers {
    /// The numbers of `messages` after their system prompt, for an answer in a turn (`turn`:
    /// the messages since the user's last) that has a result; `None` when it has none.
    pub(super) fn of(messages: &[Message], turn: &[Message]) -> Option<HeldNumbers> {
        turn.iter().find_map(Message::result)?;
        let after_prompt = match messages.split_first() {
            Some((prompt, rest)) if prompt.role == Role::System => rest,
            _ => messages,
        };
        let texts = conversation_texts(after_prompt);
        let numbers = texts
            .iter()
            .flat_map(|text| text.split(ends_a_word))
            .flat_map(numbers_in);
        Some(HeldNumbers {
            held: Facts::of(numbers),
        })
    }

    /// Would writing `piece` after `answer` make the answer's current word a number that no
    /// number of the conversation begins with?
    pub(super) fn refuses(&self, answer: &str, piece: &str) -> bool {
        let Some(next) = NextWord::of(answer, piece) else {
            return false;
        };
        let word = next.whole();
        // A stop or a comma after a number ends the sentence, not the number.
        let Some(number) = number_of(word.trim_end_matches(['.', ','])) else {
            return false;
        };
        number.chars().count() >= 2 && !self.held.has_prefix(number)
    }
}

/// The number a word is, after a range's sign or a `v`; `None` when it is no number.
fn number_of(word: &str) -> Option<&str> {
    let number = word.trim_start_matches(['^', '~', 'v', 'V']);
    number
        .starts_with(|c: char| c.is_ascii_digit())
        .then_some(number)
}

/// Every number a word holds: its runs from a digit that follows no digit and no dot, without
/// the stop or comma that may end a sentence after them (`python3.8` holds `3.8`).
fn numbers_in(word: &str) -> impl Iterator<Item = &str> {
    let mut previous = None;
    word.char_indices().filter_map(move |(at, c)| {
        let starts =
            c.is_ascii_digit() && !previous.is_some_and(|p: char| p.is_ascii_digit() || p == '.');
        previous = Some(c);
        starts.then(|| word[at..].trim_end_matches(['.', ',']))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lantern_core::tool_result::ShownResult;

    fn after_reading(question: &str, result: &str) -> HeldNumbers {
        let turn = vec![
            Message::new(Role::User, question),
            Message::tool_result("call_1", ShownResult::from_json(result).unwrap()),
        ];
        HeldNumbers::of(&turn, &turn[1..]).expect("the turn has a result")
    }

    #[test]
    fn a_number_no_result_holds_is_refused_once_it_has_two_characters() {
        let held = after_reading(
            "Which release is the ledger at?",
            r#"{"path": "ledger.toml", "content": "release = \"4.12.0\"\nworkers = 16"}"#,
        );
        assert!(!held.refuses("It is at ", "4"), "one digit");
        assert!(!held.refuses("It is at 4", ".12"));
        assert!(!held.refuses("It is at 4.12.", "0"));
        assert!(held.refuses("It is at 4.12.0", ".1"), "a part too many");
        assert!(held.refuses("It is at ", "45"));
        assert!(held.refuses("It runs 1", "00"));
        assert!(!held.refuses("It runs ", "16"));
        assert!(
            !held.refuses("It is at 4.12.0", ". It"),
            "the sentence ends"
        );
        assert!(!held.refuses("It is at", " release"), "a plain word");
    }

    #[test]
    fn a_ranges_sign_or_a_v_is_not_part_of_the_number() {
        let held = after_reading(
            "Which parser does it need?",
            r#"{"path": "deps.json", "content": "\"parser\": \"^7.3.1\", \"python_requires\": \">=3.9\""}"#,
        );
        assert!(!held.refuses("It needs ", "7.3"));
        assert!(!held.refuses("It needs ^", "7.3"));
        assert!(!held.refuses("It needs v", "7.3"));
        assert!(!held.refuses("Python ", "3.9"));
        assert!(held.refuses("It needs ^", "8.0"));
    }

    #[test]
    fn the_users_numbers_are_held_and_the_models_own_are_not() {
        let turn = vec![
            Message::new(Role::User, "Is port 8443 still used?"),
            Message::new(Role::Assistant, "It listens on 7777."),
            Message::tool_result(
                "call_1",
                ShownResult::from_json(r#"{"path": "a.cfg", "content": "tls = on"}"#).unwrap(),
            ),
        ];
        let held = HeldNumbers::of(&turn, &turn[1..]).unwrap();
        assert!(!held.refuses("Port ", "8443"));
        assert!(held.refuses("Port ", "7777"));
    }

    #[test]
    fn an_answer_without_a_result_in_its_turn_is_not_held() {
        let turn = vec![Message::new(Role::User, "What does status 418 mean?")];
        assert!(HeldNumbers::of(&turn, &turn[1..]).is_none());
    }
}
