//! Copying from the evidence: in an answer written after a tool result, tokens that copy a fact
//! of the result exactly are favoured.
//!
//! A tiny model that has just read `"version": "3.2.0"` often answers "3.2.2", and after a
//! search that found `helpers/slugify.js` it may still name a path from its prompt's example.
//! The facts of a result — paths, numbers, versions, dotted or underscored names — are kept as
//! spans. At the start of a word (not the answer's first), a token of three characters or more
//! that begins one of them gets a small bonus; once the
//! answer's current word is the beginning of a span, a token that continues it gets a large
//! one, so the copy is finished as it stands in the result. Everything else keeps the model's
//! own score: the bonus steers among the likely tokens, it never forbids one.
//!
//! The answer a question asks for is most often a value of the lines Lantern put first as
//! those about it (`"version": "0.4.0"` for "Which version is this?", `exit_code = 2` under the
//! definition asked about), or a listing's count when it asks how many files there are: a
//! token that begins one of those values gets a larger bonus, even a lone digit, since a
//! number's first digit is where a small model strays to a number of its own.

use super::sampling::best_by_logit;
use lantern_core::model::Message;
use lantern_core::question::Question;
use lantern_core::seen_result::SeenResult;
use lantern_core::words::{ends_a_word, lower_words};
use llama_cpp_2::token::LlamaToken;
use serde_json::Value;

/// Log-probability (nats) added to a token that begins a fact of the result at a word start.
const START_BONUS: f32 = 2.0;

/// Log-probability (nats) added instead of [`START_BONUS`] to a token that begins a path of the
/// result when the question asks where something is: the answer it asks for is a place.
const PLACE_BONUS: f32 = 5.0;

/// Log-probability (nats) added instead of [`START_BONUS`] to a token that begins a value that
/// answers the question (see [`Evidence::asked`]): the value it asks for.
const ASKED_BONUS: f32 = 5.0;

/// Log-probability (nats) added to a token that goes on copying the fact the word has begun.
const CONTINUE_BONUS: f32 = 6.0;

/// How many of the likeliest tokens are looked at each step.
const CANDIDATES: usize = 32;

/// The word `text` ends with: what follows its last separator.
pub(super) fn last_word(text: &str, is_separator: fn(char) -> bool) -> &str {
    let start = text
        .char_indices()
        .rev()
        .find(|(_, c)| is_separator(*c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    &text[start..]
}

/// Is this word a fact worth copying exactly: a path, a number or version, or a name with a
/// dot, an underscore or a dash in it? Plain words are left to the model.
pub(super) fn is_fact(word: &str) -> bool {
    word.chars().count() >= 2
        && word.chars().any(|c| c.is_alphanumeric())
        && word
            .chars()
            .any(|c| c.is_ascii_digit() || matches!(c, '/' | '.' | '_' | '-'))
}

/// The facts a text states, in its order: its words that are facts, without the stop or comma
/// that may end a sentence after them.
pub(super) fn facts_in(text: &str) -> impl Iterator<Item = &str> {
    text.split(ends_a_word)
        .map(|w| w.trim_end_matches(['.', ',']))
        .filter(|w| is_fact(w))
}

/// The strings and numbers of a result, not its keys (`total_lines` is no fact about the
/// project), and with its escapes undone (a line after `\n` starts a word).
pub(super) fn values_of(value: &Value, into: &mut Vec<String>) {
    match value {
        Value::String(s) => into.push(s.clone()),
        Value::Number(n) => into.push(n.to_string()),
        Value::Array(items) => items.iter().for_each(|v| values_of(v, into)),
        Value::Object(members) => members.values().for_each(|v| values_of(v, into)),
        Value::Bool(_) | Value::Null => {}
    }
}

/// What a token's text does to the answer's current word.
pub(super) struct NextWord<'a> {
    /// The answer's current word before the piece.
    pub(super) before: &'a str,
    /// What the piece adds to a word, up to its first separator.
    pub(super) head: &'a str,
    /// The piece begins a new word (it starts with a separator, or no word is begun).
    pub(super) starts: bool,
    /// The piece also ends that word.
    pub(super) ends: bool,
}

impl<'a> NextWord<'a> {
    /// What `piece` does after `answer`; `None` when it adds nothing to a word.
    pub(super) fn of(answer: &'a str, piece: &'a str) -> Option<NextWord<'a>> {
        let before = last_word(answer, ends_a_word);
        let rest = piece.trim_start_matches(ends_a_word);
        let (head, ends) = match rest.find(ends_a_word) {
            Some(i) => (&rest[..i], true),
            None => (rest, false),
        };
        let starts = rest.len() < piece.len() || before.is_empty();
        (!head.is_empty()).then_some(NextWord {
            before,
            head,
            starts,
            ends,
        })
    }

    /// The word as the piece leaves it.
    pub(super) fn whole(&self) -> String {
        match self.starts {
            true => self.head.to_string(),
            false => format!("{}{}", self.before, self.head),
        }
    }
}

/// Facts, sorted and without duplicates, for exact and prefix look-ups.
pub(super) struct Facts(Vec<String>);

impl Facts {
    /// The facts `texts` state (see [`facts_in`]).
    pub(super) fn in_texts(texts: &[String]) -> Facts {
        Facts::of(texts.iter().flat_map(|t| facts_in(t)))
    }

    /// These facts, sorted.
    pub(super) fn of<'a>(facts: impl Iterator<Item = &'a str>) -> Facts {
        let mut facts: Vec<String> = facts.map(str::to_string).collect();
        facts.sort();
        facts.dedup();
        Facts(facts)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Is `word` one of the facts?
    pub(super) fn has(&self, word: &str) -> bool {
        self.0.binary_search_by(|s| s.as_str().cmp(word)).is_ok()
    }

    /// Does one of the facts begin with `prefix`?
    pub(super) fn has_prefix(&self, prefix: &str) -> bool {
        let at = self.0.partition_point(|s| s.as_str() < prefix);
        self.0.get(at).is_some_and(|s| s.starts_with(prefix))
    }

    /// Can `word` be, or go on to be, one of the facts: is it one when it `ends` there, does
    /// one begin with it when it goes on?
    fn fits(&self, word: &str, ends: bool) -> bool {
        match ends {
            true => self.has(word),
            false => self.has_prefix(word),
        }
    }
}

/// Is this word of a line that answers the question a value worth copying: a fact, or a
/// number however short (`exit_code = 2`)?
fn is_value(word: &str) -> bool {
    is_fact(word) || (!word.is_empty() && word.chars().all(|c| c.is_ascii_digit()))
}

/// The values `results` hold that answer `question`: those of the lines Lantern put first as
/// about it (their facts and numbers, but not a name made only of the question's own words,
/// `unicode-width` asked about), and for a question that asks how many files there are, the
/// last listing's count. A question that asks where something is asks for a place, not for a
/// value of its definition's line (`app_name` of `def get_app_dir(app_name)`): none.
fn values_answering(results: &[SeenResult], question: &Question) -> Facts {
    if question.asks_where {
        return Facts::of(std::iter::empty());
    }
    let own_words = |value: &str| {
        let parts = lower_words(value);
        !parts.is_empty() && parts.iter().all(|p| question.words.contains(p))
    };
    let count = question
        .asks_how_many_files
        .then(|| {
            let listings = results.iter().filter(|r| r.succeeded());
            listings
                .rev()
                .find_map(|r| r.data.files.as_ref().and(r.data.count))
        })
        .flatten()
        .map(|count| count.to_string());
    let mut values: Vec<&str> = results
        .iter()
        .flat_map(SeenResult::lines_answering)
        .flat_map(|line| line.split(ends_a_word))
        .map(|w| w.trim_end_matches(['.', ',']))
        .filter(|w| is_value(w) && !own_words(w))
        .collect();
    values.extend(count.as_deref());
    Facts::of(values.into_iter())
}

/// The facts of the tool results an answer is written from.
pub(super) struct Evidence {
    spans: Facts,
    /// The values of those results that answer the question (see [`values_answering`]); empty
    /// when the lever `asked_values` is off.
    asked: Facts,
    /// The question asks where something is (see
    /// [`lantern_core::question::Question::asks_where`]).
    asks_where: bool,
}

impl Evidence {
    /// The facts of the tool results of this turn (`turn`: the messages since the user's
    /// last, see [`lantern_core::model::GenerateRequest::this_turn`]), for an answer to
    /// `question`, with the values of the lines that answer it when `asked_values`; `None`
    /// when the answer follows no result.
    pub(super) fn of_last_results(
        turn: &[Message],
        question: &Question,
        asked_values: bool,
    ) -> Option<Evidence> {
        let results: Vec<_> = turn.iter().filter_map(Message::result).collect();
        let mut texts = Vec::new();
        for result in &results {
            values_of(result.value(), &mut texts);
        }
        let spans = Facts::in_texts(&texts);
        let seen: Vec<SeenResult> = match asked_values {
            true => results.iter().map(|r| r.seen()).collect(),
            false => Vec::new(),
        };
        let asked = values_answering(&seen, question);
        (!spans.is_empty() || !asked.is_empty()).then_some(Evidence {
            spans,
            asked,
            asks_where: question.asks_where,
        })
    }

    /// The bonus for writing `piece` after `answer`.
    fn bonus(&self, answer: &str, piece: &str) -> f32 {
        let Some(next) = NextWord::of(answer, piece) else {
            return 0.0;
        };
        if next.starts {
            if answer.trim().is_empty() {
                return 0.0;
            }
            if self.asked.fits(next.head, next.ends) {
                return ASKED_BONUS;
            }
            // Not a lone digit or letter: those begin many facts and would pull an answer
            // into a list of numbers.
            let begun = next.head.chars().count() >= 3;
            let place = self.asks_where && self.spans.has_prefix(&format!("{}/", next.head));
            return match (begun && self.spans.fits(next.head, next.ends), place) {
                (true, true) => PLACE_BONUS,
                (true, false) => START_BONUS,
                (false, _) => 0.0,
            };
        }
        // Going on copying: the word so far must already be the start of a fact (or of an
        // asked value, which may begin with a lone digit).
        let whole = next.whole();
        let going_on_asked =
            self.asked.has_prefix(next.before) && self.asked.fits(&whole, next.ends);
        let going_on = next.before.chars().count() >= 2 && self.spans.has_prefix(next.before);
        if going_on_asked || (going_on && self.spans.fits(&whole, next.ends)) {
            CONTINUE_BONUS
        } else {
            0.0
        }
    }

    /// Adds the copying bonus to the likeliest tokens' logits, given the answer so far and
    /// each token's text.
    pub(super) fn favour(
        &self,
        answer: &str,
        logits: &mut [f32],
        piece: &mut dyn FnMut(LlamaToken) -> String,
    ) {
        for token in best_by_logit(logits, &[], CANDIDATES) {
            let bonus = self.bonus(answer, &piece(token));
            logits[token.0 as usize] += bonus;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lantern_core::tool_result::ShownResult;

    fn evidence(result: &str) -> Evidence {
        evidence_for(result, "Which version is this?")
    }

    fn evidence_for(result: &str, question: &str) -> Evidence {
        evidence_with(result, question, true)
    }

    fn evidence_with(result: &str, question: &str, asked_values: bool) -> Evidence {
        Evidence::of_last_results(
            &[Message::tool_result(
                "call_1",
                ShownResult::from_json(result).unwrap(),
            )],
            &Question::read(question),
            asked_values,
        )
        .expect("the result has facts")
    }

    #[test]
    fn facts_are_paths_numbers_and_marked_names_not_plain_words() {
        let e = evidence(
            r#"{"path": "package.json", "content": "\"version\": \"3.2.0\", the parse_config name"}"#,
        );
        assert!(e.spans.has("package.json"));
        assert!(e.spans.has("3.2.0"));
        assert!(e.spans.has("parse_config"));
        assert!(!e.spans.has("the"));
        assert!(!e.spans.has("version"));
        let keys = evidence(r#"{"data": {"total_lines": 77, "content": "x\nMAX_LENGTH = 256"}}"#);
        assert!(!keys.spans.has("total_lines"), "a key is not a fact");
        assert!(
            keys.spans.has("MAX_LENGTH"),
            "an escaped line break ends a word"
        );
        assert!(keys.spans.has("77"));
    }

    #[test]
    fn a_begun_fact_is_continued_as_it_stands_in_the_result() {
        let e = evidence(r#"{"content": "\"version\": \"3.2.0\""}"#);
        assert_eq!(e.bonus("The version is 3.2.", "0"), CONTINUE_BONUS);
        assert_eq!(e.bonus("The version is 3.2.", "2"), 0.0);
        // Ending the word early is left to the model.
        assert_eq!(e.bonus("The version is 3.2", " and"), 0.0);
    }

    #[test]
    fn a_word_start_that_begins_a_fact_gets_the_small_bonus() {
        let e = evidence(r#"{"path": "helpers/slugify.js", "line": 5}"#);
        assert_eq!(e.bonus("It is defined in", " helpers"), START_BONUS);
        assert_eq!(e.bonus("It is defined in", " src"), 0.0);
        assert_eq!(e.bonus("", "helpers"), 0.0, "not the answer's first word");
        assert_eq!(e.bonus("It is", " f"), 0.0, "not a lone letter");
        assert_eq!(e.bonus("It is defined in helpers", "/sl"), CONTINUE_BONUS);
        assert_eq!(
            e.bonus("It is defined in helpers/slugify", ".js"),
            CONTINUE_BONUS
        );
    }

    #[test]
    fn a_path_is_begun_more_readily_when_the_question_asks_where() {
        let result = r#"{"path": "helpers/slugify.js", "text": "const MAX_SAFE = 16"}"#;
        let e = evidence_for(result, "Which file holds slugify?");
        assert_eq!(e.bonus("It is defined in", " helpers"), PLACE_BONUS);
        assert_eq!(e.bonus("It is", " MAX_SAFE"), START_BONUS, "not a path");
        assert_eq!(e.bonus("It is defined in", " src"), 0.0);
        let e = evidence_for(result, "What does slugify do?");
        assert_eq!(e.bonus("It is defined in", " helpers"), START_BONUS);
    }

    #[test]
    fn a_value_of_the_lines_about_the_question_is_begun_readily_even_by_a_lone_digit() {
        let result = r#"{"success": true,
            "lines_about_the_question": ["4: edition = \"2021\""],
            "data": {"path": "Cargo.toml", "content": "[package]\nname = \"calc\"\nversion = \"0.4.0\"\nedition = \"2021\"\n"}}"#;
        let e = evidence_for(result, "Cargo.toml: edition?");
        assert_eq!(e.bonus("It is on", " 2"), ASKED_BONUS);
        assert_eq!(e.bonus("It is on 2", "0"), CONTINUE_BONUS);
        assert_eq!(e.bonus("It is on 202", "1"), CONTINUE_BONUS);
        assert_eq!(
            e.bonus("It is on", " 0"),
            0.0,
            "a lone digit of another line"
        );
        assert_eq!(
            e.bonus("It is on", " 0.4.0"),
            START_BONUS,
            "a fact, not asked"
        );
        assert_eq!(e.bonus("", "2"), 0.0, "not the answer's first word");
        let off = evidence_with(result, "Cargo.toml: edition?", false);
        assert_eq!(off.bonus("It is on", " 2"), 0.0, "the lever off");
    }

    #[test]
    fn a_where_question_asks_for_no_value_of_the_definition_s_line() {
        let result = r#"{"success": true,
            "definitions": ["src/dirs.py:12: def app_dir(app_name, roaming=True):"],
            "data": {}}"#;
        let e = evidence_for(result, "Where is app_dir defined?");
        assert!(e.asked.is_empty());
        let e = evidence_for(result, "What does app_dir take?");
        assert!(e.asked.has("app_name"));
    }

    #[test]
    fn a_name_made_of_the_question_s_own_words_is_no_value_asked_for() {
        let result = r#"{"success": true,
            "lines_about_the_question": ["9: unicode-width = { version = \"0.1.10\" }"],
            "data": {}}"#;
        let e = evidence_for(result, "What does the manifest ask of unicode-width?");
        assert!(e.asked.has("0.1.10"));
        assert!(!e.asked.has("unicode-width"));
    }

    #[test]
    fn the_count_of_a_listing_is_the_value_a_question_of_how_many_files_asks_for() {
        let listing = r#"{"success": true, "data": {"directory": "fixtures", "files": ["fixtures/a.py", "fixtures/b.py"], "count": 2}}"#;
        let e = evidence_for(listing, "How many files does fixtures hold?");
        assert_eq!(e.bonus("There are", " 2"), ASKED_BONUS);
        let e = evidence_for(listing, "Which files does fixtures hold?");
        assert_eq!(e.bonus("There are", " 2"), 0.0, "no count asked for");
    }

    #[test]
    fn an_answer_after_no_result_has_no_evidence() {
        let question = Question::read("What does HTTP stand for?");
        assert!(Evidence::of_last_results(&[], &question, true).is_none());
    }
}
