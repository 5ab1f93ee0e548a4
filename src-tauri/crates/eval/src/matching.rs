//! Whether an answer says what a task expects: a number only as a whole number, a word or path
//! only as a whole word or path, case aside.
//!
//! A ruler that finds `2` in "v20", `0.2` in "0.25", `ff` in "off" or `log` in "login" counts
//! answers that are wrong; these rules are the evaluation's, and a task file is checked against
//! them when it is loaded (an expected string that the prompt itself contains is refused: a
//! model that echoes the question would pass).
//!
//! ```
//! use lantern_eval::matching::mentions;
//! assert!(mentions("It listens on port 8080.", "8080"));
//! assert!(!mentions("Version 20 is out", "2"));
//! assert!(!mentions("a rate of 0.25", "0.2"));
//! assert!(!mentions("turn it off", "ff"));
//! assert!(mentions("Binary search is O(log n).", "log"));
//! assert!(mentions("See lib/parse.js.", "lib/parse.js"));
//! assert!(!mentions("See mylib/parse.js.", "lib/parse.js"));
//! ```

use lantern_core::words::alphanumeric_words;

/// Characters that continue a word, a number or a path: a match must not be glued to one.
fn continues(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Is `expected` a number (digits with dots between, like `8080` or `3.7` or `2.0.0`)?
fn is_number(expected: &str) -> bool {
    !expected.is_empty()
        && expected.chars().all(|c| c.is_ascii_digit() || c == '.')
        && expected.starts_with(|c: char| c.is_ascii_digit())
        && expected.ends_with(|c: char| c.is_ascii_digit())
}

/// Whether `text` says `expected` whole: case aside, not glued to a letter, digit or `_` on
/// either side where `expected` begins or ends with one; a number is not part of a longer number
/// either (`2` is not in `2.5`, `0.2` not in `0.25`, while "3.7." ending a sentence says `3.7`).
pub fn mentions(text: &str, expected: &str) -> bool {
    let text = text.to_lowercase();
    let expected = expected.trim().to_lowercase();
    if expected.is_empty() {
        return false;
    }
    let number = is_number(&expected);
    let starts_glued = expected.starts_with(continues);
    let ends_glued = expected.ends_with(continues);
    text.match_indices(&expected).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let mut after = text[at + expected.len()..].chars();
        let next = after.next();
        let glued_before = starts_glued && before.is_some_and(continues);
        let glued_after = ends_glued && next.is_some_and(continues);
        // A number goes on through a dot followed by a digit, or begins after one.
        let longer_number = number
            && (next == Some('.') && after.next().is_some_and(|c| c.is_ascii_digit())
                || before == Some('.')
                    && text[..at]
                        .chars()
                        .rev()
                        .nth(1)
                        .is_some_and(|c| c.is_ascii_digit()));
        !glued_before && !glued_after && !longer_number
    })
}

/// The whole numbers `text` states (`3`, `8080`, `2.0.0`), in order; digits inside a word
/// (`v2`, `utf8`) are not numbers it states.
pub fn numbers_in(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut numbers = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts = chars[i].is_ascii_digit() && (i == 0 || !continues(chars[i - 1]));
        if !starts {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < chars.len()
            && (chars[end].is_ascii_digit()
                || chars[end] == '.' && chars.get(end + 1).is_some_and(char::is_ascii_digit))
        {
            end += 1;
        }
        if chars.get(end).is_none_or(|c| !continues(*c)) {
            numbers.push(chars[i..end].iter().collect());
        }
        i = end.max(i + 1);
    }
    numbers
}

/// How many words in a row an answer must share with Lantern's own instructions to recite them:
/// more than a name or a phrase a right answer shares with a tool's description ("the files
/// in a folder"), fewer than the shortest sentence of the instructions.
const RECITED_WORDS: usize = 10;

/// The words of `text` as a recital is compared: lower case, split at anything but a letter
/// or digit ([`alphanumeric_words`]), so that `read_file(path` and `read _file (path` are the
/// same words.
fn recital_words(text: &str) -> Vec<String> {
    alphanumeric_words(text).map(str::to_lowercase).collect()
}

/// Does `answer` recite `instructions` (the system prompt, the hint after a result): hold
/// [`RECITED_WORDS`] of its words in a row? A model that repeats what it was told to do has
/// not answered, whatever expected word the recital happens to hold (`string`, a tool's name).
pub fn recites(answer: &str, instructions: &str) -> bool {
    let told = recital_words(instructions);
    let windows: std::collections::HashSet<&[String]> = told.windows(RECITED_WORDS).collect();
    recital_words(answer)
        .windows(RECITED_WORDS)
        .any(|window| windows.contains(window))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_that_repeats_ten_words_of_its_instructions_in_a_row_recites_them() {
        let told = "You are a helper inside a folder of code. Reply with one call, or answer \
                    in plain words once you know the answer.";
        assert!(recites(
            "Sure! you are a HELPER inside a folder-of code; reply with one call.",
            told
        ));
        assert!(!recites(
            "The helper lives inside a folder of code named util.",
            told
        ));
        assert!(!recites("", told));
    }

    #[test]
    fn numbers_match_only_whole() {
        assert!(mentions("The answer is 2.", "2"));
        assert!(mentions("(2)", "2"));
        assert!(!mentions("It has 20 files", "2"));
        assert!(!mentions("It is 2.5", "2"));
        assert!(!mentions("It is 12", "2"));
        assert!(mentions("It needs Python 3.7.", "3.7"));
        assert!(!mentions("It needs Python 3.75", "3.7"));
        assert!(!mentions("1.3.7", "3.7"));
        assert!(mentions("version 7.6.3", "7.6.3"));
        assert!(mentions("20%", "20%"));
    }

    #[test]
    fn words_and_paths_match_only_whole() {
        assert!(!mentions("login", "log"));
        assert!(!mentions("the catalog", "log"));
        assert!(mentions("O(log n)", "log"));
        assert!(mentions("It's in utils.py.", "utils.py"));
        assert!(!mentions("It's in myutils.py.", "utils.py"));
        assert!(!mentions("It's in utils.pyc.", "utils.py"));
        assert!(mentions(
            "JavaScript Object Notation",
            "javascript object notation"
        ));
        assert!(mentions("use `s[::-1]`", "[::-1]"));
        assert!(!mentions("anything", ""));
    }

    #[test]
    fn the_numbers_a_text_states() {
        assert_eq!(
            numbers_in("There are 4 files (v2, utf8) in 3.7 and 2.0.0."),
            ["4", "3.7", "2.0.0"]
        );
        assert!(numbers_in("no numbers here").is_empty());
    }
}
