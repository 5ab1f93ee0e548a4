//! The new text of an edit, where it differs from the old text as the question says.
//!
//! A tiny model writing an edit's `new_text` copies its `old_text` and stops: "Raise
//! MAX_LENGTH to 512" comes out as `const MAX_LENGTH = 256` twice, an edit that changes nothing.
//! When a constrained call opens an argument declared `"x-replaces": KEY`, three rules steer it,
//! each from what the old text and the question hold:
//!
//! - where the copy reaches a number or version of the old text (`256`, `7.6.3`), a token that
//!   begins a number of the question not in the old text (`512`) gets a large bonus;
//! - where it reaches the one name the question names in the old text (`subtract` in "rename
//!   subtract to minus"), a token that begins the question's one other name gets it, when
//!   there is exactly one of each;
//! - once the whole old text is copied, a word that begins a value of the question gets a
//!   smaller bonus (an inserted line), and the string may not end there: a new text equal to
//!   the old text is no edit.
//!
//! A new file's content (`"x-from": "question"`) gets the last rule alone, for the question's
//! values shaped like code and the phrases it quotes, with the large bonus for its first word.
//! For both, the paths the question names other than the file written are values too: a
//! `.gitignore` is made of paths (`build/`, `.cache`).
//!
//! After the whole old text, a value begun is finished as the question writes it (the next
//! token of its rest, as the rest is tokenized, gets the largest bonus), and a value written
//! once is not favoured again.
//!
//! A value begun is continued with the continuing bonus; right after the whole old text, a line
//! break gets the smaller bonus; and once the new text has changed something and ends as the
//! old text ends, ending the string gets a bonus, so a changed function is not followed by
//! whatever the model writes next. The rest is the model's own choice.

use super::copying::last_word;
use super::grounding::{argument_value, raw_argument, Grounding};
use super::sampling::best_by_logit;
use lantern_core::question::Question;
use lantern_core::words::{between_edit_words, edit_words, EDIT_WORDS};
use llama_cpp_2::token::LlamaToken;

/// Log-probability (nats) for a token that begins the question's value where the old text has
/// the value it replaces.
const REPLACE_BONUS: f32 = 8.0;

/// Log-probability (nats) for a token that begins a value of the question after the copied old
/// text.
const INSERT_BONUS: f32 = 3.0;

/// Log-probability (nats) for a line break right after the whole old text.
const NEW_LINE_BONUS: f32 = 6.0;

/// Log-probability (nats) for ending the new text where it ends as the old text did.
const END_BONUS: f32 = 6.0;

/// How many characters of the end of the old text (as written) the new text must end with for
/// the end bonus.
const END_CHARS: usize = 8;

/// Log-probability (nats) for a token that goes on with a value begun.
const CONTINUE_BONUS: f32 = 6.0;

/// Log-probability (nats) for the token a begun value is written with next, as the value
/// itself is tokenized: a value begun is finished as the question writes it.
const FINISH_BONUS: f32 = 12.0;

/// How many of the likeliest tokens are looked at each step.
const CANDIDATES: usize = 32;

/// A number or a version (`512`, `7.6.3`), not a name with a digit in it (`i64`, `utf8`).
fn is_number(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_digit())
}

/// JSON string content with its escapes undone; an escape not yet finished is left out.
fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(other @ ('"' | '\\' | '/')) => out.push(other),
            // A `\u` escape, its digits included, and an unfinished escape: nothing a word is
            // made of.
            Some('u') => {
                for _ in 0..4 {
                    if chars.clone().next().is_some_and(|c| c.is_ascii_hexdigit()) {
                        chars.next();
                    }
                }
                out.push(' ');
            }
            _ => out.push(' '),
        }
    }
    out
}

/// The paths `asked` names, as written, but for `target` (the file the call writes), named by
/// its path or its file name.
fn paths_besides(asked: &Question, target: Option<&str>) -> Vec<String> {
    let target = target.map(|t| t.trim_start_matches("./"));
    let file_name = target.map(|t| t.rsplit('/').next().unwrap_or(t));
    asked
        .paths
        .iter()
        .filter(|p| {
            let p = p.trim_start_matches("./");
            Some(p) != target && Some(p) != file_name
        })
        .cloned()
        .collect()
}

/// What the new text of one edit is steered by.
#[derive(Debug, Clone)]
pub(super) struct Replacement {
    /// The old text as the call wrote it (JSON string content, escapes as written).
    old_raw: String,
    /// The old text, its escapes undone.
    old: String,
    /// Numbers and versions of the question the old text does not hold.
    numbers: Vec<String>,
    /// The question's one name not in the old text, with the old text's one name in the
    /// question it replaces.
    rename: Option<(String, String)>,
    /// Every value of the question not in the old text, for an insertion.
    values: Vec<String>,
    /// The tokens a value begins with (alone or after a space), looked at every step beside
    /// the likeliest: a value the model does not expect at all would otherwise never be seen.
    first_tokens: Vec<LlamaToken>,
}

impl Replacement {
    /// The steering of an edit's new text that replaces `old_raw`, by what `question` holds
    /// that the old text does not: even when it holds nothing, the new text may not end as the
    /// old one (an edit that changes nothing is refused, and a tiny model sends it again).
    pub(super) fn new(question: &Question, old_raw: &str) -> Self {
        let old = unescape(old_raw);
        let question = question.outside_paths.as_str();
        let old_words = edit_words(&old);
        let holds = |w: &str| old_words.iter().any(|o| o.eq_ignore_ascii_case(w));
        let plain = |w: &str| {
            (w.chars().count() >= 3 || is_number(w))
                && !EDIT_WORDS.iter().any(|e| e.eq_ignore_ascii_case(w))
                && !lantern_core::words::names_a_path(w)
        };
        let question_words = edit_words(question);
        let mut values: Vec<String> = Vec::new();
        for word in &question_words {
            if plain(word) && !holds(word) && !values.iter().any(|v| v == word) {
                values.push(word.to_string());
            }
        }
        let numbers: Vec<String> = values.iter().filter(|v| is_number(v)).cloned().collect();
        let names: Vec<&String> = values.iter().filter(|v| !is_number(v)).collect();
        // The old text's names the question names too, each once.
        let mut named: Vec<&str> = old_words
            .iter()
            .copied()
            .filter(|o| !is_number(o) && plain(o))
            .filter(|o| question_words.iter().any(|q| q.eq_ignore_ascii_case(o)))
            .collect();
        named.sort_unstable();
        named.dedup();
        let rename = match (names.as_slice(), named.as_slice()) {
            ([new], [old]) => Some(((*new).clone(), old.to_string())),
            _ => None,
        };
        Replacement {
            old_raw: old_raw.to_string(),
            old,
            numbers,
            rename,
            values,
            first_tokens: Vec::new(),
        }
    }

    /// The steering of a new file's content (an argument declared `"x-from": "question"`): the
    /// question's values shaped like code (`__pycache__`, `*.log`, `42`), the phrases it
    /// quotes ('Reviewed by Lantern') and the paths it names other than `target`, the file
    /// written (`build/` for a `.gitignore`), get the insertion bonus at word starts. `None` when
    /// the question has none.
    pub(super) fn new_content(asked: &Question, target: Option<&str>) -> Option<Self> {
        let question = asked.text.as_str();
        let mut values: Vec<String> = Vec::new();
        for quote in ['\'', '"', '`'] {
            let parts: Vec<&str> = question.split(quote).collect();
            // The odd parts are inside quotes, when the quotes pair up.
            if parts.len() >= 3 && parts.len() % 2 == 1 {
                values.extend(
                    parts
                        .iter()
                        .skip(1)
                        .step_by(2)
                        .map(|p| p.trim().to_string()),
                );
            }
        }
        // The file's own name is no content for it.
        for word in asked.outside_paths.split_whitespace() {
            let code = word
                .chars()
                .any(|c| c.is_ascii_digit() || "_*/.".contains(c))
                || word.chars().skip(1).any(char::is_uppercase);
            if code && word.chars().any(char::is_alphanumeric) {
                values.push(word.to_string());
            }
        }
        values.extend(paths_besides(asked, target));
        values.retain(|v| !v.is_empty());
        values.dedup();
        (!values.is_empty()).then(|| Replacement {
            old_raw: String::new(),
            old: String::new(),
            numbers: Vec::new(),
            rename: None,
            values,
            first_tokens: Vec::new(),
        })
    }

    /// The paths the question names other than `target`, the file edited, among the values an
    /// insertion is steered to, unless the old text holds them already: what a `.gitignore` or
    /// a list of links is made of ("Ignore build/ and .cache as well").
    pub(super) fn with_paths_besides(mut self, asked: &Question, target: Option<&str>) -> Self {
        let old_words = edit_words(&self.old);
        for path in paths_besides(asked, target) {
            let held = edit_words(&path)
                .iter()
                .all(|w| old_words.iter().any(|o| o.eq_ignore_ascii_case(w)));
            if !held && !self.values.contains(&path) {
                self.values.push(path);
            }
        }
        self
    }

    /// May the new text end after `written`? Not while it is the old text itself.
    fn may_end(&self, written: &str) -> bool {
        written != self.old_raw
    }

    /// Would `piece`, written after `written` (the new text so far, both as JSON string
    /// content), close the new text's string while it is the old text itself? A token may
    /// finish the copy and close the string at once (`get"` after `/tar`), not only open with
    /// the quote.
    pub(super) fn would_end_unchanged(&self, written: &str, piece: &str) -> bool {
        let mut escaped = (written.len() - written.trim_end_matches('\\').len()) % 2 == 1;
        for (at, c) in piece.char_indices() {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => return !self.may_end(&format!("{written}{}", &piece[..at])),
                _ => {}
            }
        }
        false
    }

    /// The bonus for writing `piece` after `written` (the new text so far), both as JSON string
    /// content.
    fn bonus(&self, written_raw: &str, piece_raw: &str) -> f32 {
        if piece_raw.starts_with('"') {
            return self.end_bonus(written_raw);
        }
        // All the old text copied, the edit adds to it: on a new line (`\n`, maybe written as
        // `\` and `n`).
        if written_raw == self.old_raw && (piece_raw.starts_with("\\n") || piece_raw == "\\") {
            return NEW_LINE_BONUS;
        }
        // An escape the new text has begun but not finished is not part of its words yet.
        let open_escape = written_raw.len() - written_raw.trim_end_matches('\\').len();
        let written = unescape(&written_raw[..written_raw.len() - open_escape % 2]);
        let Some(piece) = unescape(&format!("{written_raw}{piece_raw}"))
            .strip_prefix(written.as_str())
            .map(str::to_string)
        else {
            return 0.0;
        };
        let (written, piece) = (written.as_str(), piece.as_str());
        let word = last_word(written, between_edit_words);
        let head_start = piece.len() - piece.trim_start_matches(between_edit_words).len();
        let head: &str = piece[head_start..]
            .split(between_edit_words)
            .next()
            .unwrap_or_default();
        if head.is_empty() {
            return 0.0;
        }
        let begins = |values: &[String], w: &str| values.iter().any(|v| v.starts_with(w));
        if head_start == 0 && !word.is_empty() {
            // Inside a word: going on with a value already begun.
            let longer = format!("{word}{head}");
            return match begins(&self.values, word) && begins(&self.values, &longer) {
                true => CONTINUE_BONUS,
                false => 0.0,
            };
        }
        // At a word start: what would the copy of the old text write here?
        let at = written.len() + head_start;
        if written.len() >= self.old.len() && written.starts_with(&self.old) {
            // A new file's content begins with what the question asks for; each value is
            // inserted once (see `unwritten`).
            let first = self.old.is_empty() && written.trim().is_empty();
            let added = &written[self.old.len()..];
            let begins_one = self.unwritten(added).any(|v| v.starts_with(head));
            return match (begins_one, first) {
                (true, true) => REPLACE_BONUS,
                (true, false) => INSERT_BONUS,
                (false, _) => 0.0,
            };
        }
        let Some(copied) = self.old.get(..at.min(self.old.len())) else {
            return 0.0;
        };
        if !format!("{written}{}", &piece[..head_start]).starts_with(copied) || at > self.old.len()
        {
            return 0.0;
        }
        let next_old = edit_words(&self.old[at..])
            .into_iter()
            .next()
            .unwrap_or_default();
        if !self.old[at..].starts_with(next_old) {
            return 0.0;
        }
        if is_number(next_old) && begins(&self.numbers, head) {
            return REPLACE_BONUS;
        }
        match &self.rename {
            Some((new, old)) if next_old == old && new.starts_with(head) => REPLACE_BONUS,
            _ => 0.0,
        }
    }

    /// The bonus for ending the new text after `written_raw`: when it has changed something
    /// and now ends as the old text ends (`}\n` after a changed function), the edit is whole.
    fn end_bonus(&self, written_raw: &str) -> f32 {
        if self.old_raw.is_empty() {
            return 0.0;
        }
        let cut = self
            .old_raw
            .char_indices()
            .rev()
            .nth(END_CHARS - 1)
            .map_or(0, |(i, _)| i);
        let tail = &self.old_raw[cut..];
        match self.may_end(written_raw) && written_raw.ends_with(tail) {
            true => END_BONUS,
            false => 0.0,
        }
    }

    /// The values `added` (what the new text holds after the old text, escapes undone) does not
    /// hold yet: each value is inserted once.
    fn unwritten<'v, 'w>(
        &'v self,
        added: &'w str,
    ) -> impl Iterator<Item = &'v String> + use<'v, 'w> {
        self.values
            .iter()
            .filter(move |v| !added.contains(v.as_str()))
    }

    /// What the values begun by the new text's last word (as JSON string content) have left
    /// to write, once the whole old text is copied: `_dir/` once `out` of `out_dir/` is
    /// written. None at a word's start, inside the copy of the old text, for a value already
    /// written, or where the rest would need escaping.
    fn rests_of_begun_values(&self, written_raw: &str) -> Vec<&str> {
        let Some(added_raw) = written_raw.strip_prefix(self.old_raw.as_str()) else {
            return Vec::new();
        };
        let word = last_word(added_raw, between_edit_words);
        if word.is_empty() || word.contains('\\') {
            return Vec::new();
        }
        let added = unescape(added_raw);
        self.unwritten(&added)
            .filter_map(|v| v.strip_prefix(word))
            .filter(|rest| !rest.is_empty() && !rest.contains(['"', '\\']))
            .collect()
    }

    /// Adds the bonuses to the likeliest tokens' logits, given the new text so far, each
    /// token's text, and how a text is tokenized: the first tokens of the question's values
    /// and of what a begun value has left are looked at too, since a value the model does not
    /// expect may be nowhere among its likeliest tokens.
    pub(super) fn favour(
        &self,
        written: &str,
        logits: &mut [f32],
        piece: &mut dyn FnMut(LlamaToken) -> String,
        tokenize: &mut dyn FnMut(&str) -> Vec<LlamaToken>,
    ) {
        let mut seen = best_by_logit(logits, &[], CANDIDATES);
        let rests = self.rests_of_begun_values(written);
        let going_on: Vec<LlamaToken> = (rests.iter())
            .filter_map(|rest| tokenize(rest).first().copied())
            .collect();
        for token in self.first_tokens.iter().chain(&going_on) {
            if !seen.contains(token) {
                seen.push(*token);
            }
        }
        for token in seen {
            let mut bonus = self.bonus(written, &piece(token));
            if going_on.contains(&token) {
                bonus = bonus.max(FINISH_BONUS);
            }
            logits[token.0 as usize] += bonus;
        }
    }
}

impl super::LocalModel {
    /// The steering of the text the call text (after the opening tag) has just opened, if it
    /// opened an argument declared `"x-replaces"` whose other argument is written, or one
    /// declared `"x-from": "question"`, and the lever is on.
    pub(super) fn open_replacement(
        &self,
        opened: Option<&Grounding>,
        call_text: &str,
        request: &lantern_core::model::GenerateRequest<'_>,
    ) -> Option<Replacement> {
        if !self.settings.options.replace_values {
            return None;
        }
        let asked = request.question();
        let target = argument_value(call_text, "path");
        let mut replacement = match opened? {
            Grounding::Replaces(key) => Some(
                Replacement::new(&asked, raw_argument(call_text, key)?)
                    .with_paths_besides(&asked, target),
            ),
            Grounding::FromQuestion => Replacement::new_content(&asked, target),
            _ => None,
        }?;
        let vocab = self.model.vocab();
        for value in &replacement.values {
            for text in [value.clone(), format!(" {value}")] {
                let tokens = vocab.tokenize(text.as_bytes(), false, false);
                if let Some(first) = tokens.first() {
                    replacement.first_tokens.push(*first);
                }
            }
        }
        Some(replacement)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_of_the_old_text_gives_way_to_the_question_s() {
        let r = Replacement::new(
            &Question::read("Make BUFFER_SIZE in src/limits.js 4096."),
            "const BUFFER_SIZE = 1024",
        );
        assert_eq!(r.bonus("const BUFFER_SIZE = ", "4"), REPLACE_BONUS);
        assert_eq!(r.bonus("const BUFFER_SIZE =", " 4"), REPLACE_BONUS);
        assert_eq!(r.bonus("const BUFFER_SIZE = ", "1"), 0.0);
        assert_eq!(r.bonus("const ", "4"), 0.0, "BUFFER_SIZE is no number");
        assert_eq!(r.bonus("const BUFFER_SIZE = 4", "0"), CONTINUE_BONUS);
    }

    #[test]
    fn a_name_with_a_digit_is_no_number_to_replace() {
        let r = Replacement::new(
            &Question::read("mul(4, 5) gives 9 rather than 20. Repair it."),
            "pub fn mul(a: u32, b: u32) -> u32 {",
        );
        assert_eq!(r.bonus("pub fn mul(a: ", "2"), 0.0);
    }

    #[test]
    fn the_one_name_asked_about_gives_way_to_the_one_new_name() {
        let r = Replacement::new(
            &Question::read("Rename divide_by to quotient in src/ops.rs."),
            "pub fn divide_by(a: f64, b: f64) -> f64 {",
        );
        assert_eq!(r.bonus("pub fn ", "quot"), REPLACE_BONUS);
        assert_eq!(r.bonus("pub ", "quot"), 0.0);
    }

    #[test]
    fn after_the_whole_old_text_a_value_of_the_question_may_follow() {
        let old = "name = \\\"ledger\\\"";
        let r = Replacement::new(
            &Question::read("Below the name setting, insert verbose = true."),
            old,
        );
        assert!(!r.may_end(old));
        assert!(r.would_end_unchanged(old, "\""));
        assert_eq!(r.bonus(&format!("{old}\\n"), "verbose"), INSERT_BONUS);
        assert_eq!(r.bonus("name = ", "verbose"), 0.0, "two names: no rename");
    }

    #[test]
    fn a_changed_text_that_ends_as_the_old_one_did_may_end_there() {
        let old = "fn multiply() {\\n    a * b\\n}\\n";
        let r = Replacement::new(&Question::read("multiply should be named times."), old);
        assert_eq!(r.bonus("fn times() {\\n    a * b\\n}\\n", "\""), END_BONUS);
        assert_eq!(r.bonus(old, "\""), 0.0, "unchanged");
        assert_eq!(r.bonus("fn times() {", "\""), 0.0, "not at the old end");
        assert_eq!(
            r.bonus(old, "\\n"),
            NEW_LINE_BONUS,
            "a new line after the copy"
        );
    }

    #[test]
    fn the_new_text_never_ends_as_the_old_one_even_when_one_token_finishes_the_copy_and_closes() {
        let r = Replacement::new(&Question::read("Ignore scratch files as well."), "/build");
        assert!(r.would_end_unchanged("/build", "\""));
        assert!(
            r.would_end_unchanged("/bui", "ld\""),
            "the copy finished and closed at once"
        );
        assert!(r.would_end_unchanged("/bui", "ld\"},"));
        assert!(!r.would_end_unchanged("/bui", "ld"), "not closed");
        assert!(!r.would_end_unchanged("/build\\n*.tmp", "\""), "changed");
        assert!(
            !r.would_end_unchanged("/build\\", "\""),
            "an escaped quote closes nothing"
        );
    }

    #[test]
    fn escapes_are_read_as_the_characters_they_stand_for() {
        let r = Replacement::new(&Question::read("Put verbose = true after it."), "a = 1");
        assert_eq!(r.bonus("a = 1\\", "nverb"), INSERT_BONUS);
        assert_eq!(r.bonus("a = 1\\n", "ver"), INSERT_BONUS);
        assert_eq!(unescape("x\\\"y\\\\"), "x\"y\\");
    }

    #[test]
    fn a_new_file_s_content_draws_on_the_question_s_code_and_quotes() {
        let r = Replacement::new_content(
            &Question::read("Create a .gitignore here so that __pycache__ folders are ignored."),
            Some(".gitignore"),
        )
        .unwrap();
        assert_eq!(r.bonus("", "__"), REPLACE_BONUS, "the content's first word");
        assert_eq!(r.bonus("x\\n", "__"), INSERT_BONUS);
        assert_eq!(r.bonus("", "folders"), 0.0);
        assert_eq!(r.bonus("x", "\""), 0.0, "ending is the model's choice");
        let r = Replacement::new_content(
            &Question::read("Create REVIEW.md saying 'Checked by the team'."),
            Some("REVIEW.md"),
        )
        .unwrap();
        assert_eq!(r.bonus("", "Check"), REPLACE_BONUS);
        assert!(
            Replacement::new_content(&Question::read("Write a haiku about the sea."), None)
                .is_none()
        );
    }

    #[test]
    fn the_paths_a_question_names_are_content_for_another_file() {
        let asked = Question::read("Make a .gitignore listing build/ and .cache in this repo.");
        let r = Replacement::new_content(&asked, Some(".gitignore")).unwrap();
        assert_eq!(r.bonus("", "build"), REPLACE_BONUS);
        assert_eq!(r.bonus("build/\\n", ".cache"), INSERT_BONUS);
        assert_eq!(
            r.bonus("build/\\n", ".git"),
            0.0,
            "the file written is no content"
        );
        let asked = Question::read("Ignore coverage/ and build/ too, in the .gitignore.");
        let r = Replacement::new(&asked, "build/").with_paths_besides(&asked, Some(".gitignore"));
        assert!(r.values.contains(&"coverage/".to_string()));
        assert!(!r.values.contains(&"build/".to_string()), "there already");
        assert_eq!(r.bonus("build/\\n", "cover"), INSERT_BONUS);
        let asked = Question::read("Link docs/setup.md from README.md.");
        let r = Replacement::new(&asked, "# Tool").with_paths_besides(&asked, Some("./README.md"));
        assert!(r.values.contains(&"docs/setup.md".to_string()));
        assert!(!r.values.iter().any(|v| v.contains("README")));
    }

    #[test]
    fn a_value_begun_after_the_old_text_is_finished_and_written_once() {
        let asked = Question::read("Make a .gitignore listing build/ and .cache in this repo.");
        let r = Replacement::new_content(&asked, Some(".gitignore")).unwrap();
        assert_eq!(r.rests_of_begun_values("bu"), ["ild/"]);
        assert!(
            r.rests_of_begun_values("build/\\n").is_empty(),
            "a word's start"
        );
        assert!(
            r.rests_of_begun_values("build/\\nbu").is_empty(),
            "written already"
        );
        assert_eq!(r.bonus("build/\\n", "build"), 0.0, "written already");
        assert_eq!(r.bonus("build/\\n", ".cache"), INSERT_BONUS);
        // Inside the copy of the old text nothing is finished for it.
        let asked = Question::read("Ignore out_dir/ as well, please.");
        let r = Replacement::new(&asked, "out_version\\n")
            .with_paths_besides(&asked, Some(".gitignore"));
        assert!(r.rests_of_begun_values("out").is_empty());
        assert_eq!(r.rests_of_begun_values("out_version\\nout"), ["_dir/"]);
    }

    #[test]
    fn a_question_with_nothing_new_favours_nothing_but_still_asks_for_a_change() {
        let old = "pub fn add(a: i64) {";
        let r = Replacement::new(&Question::read("Fix the bug in add."), old);
        assert_eq!(r.bonus("pub fn ", "add"), 0.0);
        assert_eq!(r.bonus("pub fn add(a: ", "i64"), 0.0);
        assert!(r.would_end_unchanged(old, "\""));
    }
}
