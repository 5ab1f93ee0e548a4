//! An answer that began repeating itself, cut back to one copy.
//!
//! Greedy decoding of a tiny model can fall into a loop ("The version is 7.6.3. The version is
//! 7.6.3. The version is 7.6."); the backend ends such a reply
//! ([`crate::model::FinishReason::Repeating`]). What the user is given is the text before the
//! repeats began, with the sentence it was in finished: nothing is lost, since the cut part
//! only says again what the kept part says.
//!
//! ```
//! use lantern_core::repeats::before_repeats;
//! let looped = "It is defined in utils.py.\n\nIt is defined in utils.py.\n\nIt is defined in utils.";
//! assert_eq!(before_repeats(looped), Some("It is defined in utils.py."));
//! assert_eq!(before_repeats("It is defined in utils.py."), None);
//! ```

/// The fewest characters a repeated run must cover to count: shorter echoes ("...", "ll")
/// are text, not a loop.
const MIN_REPEATED_CHARS: usize = 16;

/// `text` up to where its end began repeating an earlier part of it, that part's sentence
/// finished; `None` when its end repeats nothing.
pub fn before_repeats(text: &str) -> Option<&str> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let n = chars.len();
    // For each period, the tail in which every character equals the one a period before it;
    // the earliest such tail that holds at least one whole period is where the repeats began.
    let mut best: Option<(usize, usize)> = None;
    for period in 1..=n / 2 {
        let mut start = n;
        while start > period && chars[start - 1].1 == chars[start - 1 - period].1 {
            start -= 1;
        }
        let covered = n - start;
        if covered >= period && covered >= MIN_REPEATED_CHARS && best.is_none_or(|(s, _)| start < s)
        {
            best = Some((start, period));
        }
    }
    let (start, period) = best?;
    let byte_at = |i: usize| chars.get(i).map_or(text.len(), |(b, _)| *b);
    // Cut inside a sentence (the copies differ early in it: "Node.js 11. Node.js 10. Node.js
    // 10."), the sentence is finished from the first copy.
    let mid_sentence = start > 0 && !chars[start - 1].1.is_whitespace();
    let end = match mid_sentence {
        true => (start..(start + period).min(n))
            .find(|&i| ends_sentence(&chars, i))
            .map_or(start, |i| i + 1),
        false => start,
    };
    let kept = text[..byte_at(end)].trim_end();
    (!kept.is_empty()).then_some(kept)
}

/// Does the character at `i` end a sentence: a line break, or `.`, `!` or `?` before
/// whitespace or the end?
fn ends_sentence(chars: &[(usize, char)], i: usize) -> bool {
    match chars[i].1 {
        '\n' => true,
        '.' | '!' | '?' => chars.get(i + 1).is_none_or(|(_, c)| c.is_whitespace()),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repeats_are_cut_and_the_first_copy_is_kept_whole() {
        assert_eq!(
            before_repeats("The longest is 256.  The version is 2.0.0.1.  The version is 2.0.0.1.  The version is 2.0.0.1."),
            Some("The longest is 256.  The version is 2.0.0.1.")
        );
    }

    #[test]
    fn copies_that_differ_early_keep_the_sentence_they_differ_in() {
        assert_eq!(
            before_repeats("It supports Node.js 11.  It supports Node.js 10.  It supports Node.js 10.  It supports Node.js 10"),
            Some("It supports Node.js 11.  It supports Node.js 10.")
        );
    }

    #[test]
    fn a_run_repeated_within_a_sentence_is_cut_after_its_first_copy() {
        assert_eq!(
            before_repeats("It allows the `npm.config.vendor.vendor.vendor.vendor.vendor."),
            Some("It allows the `npm.config.vendor")
        );
    }

    #[test]
    fn text_without_a_repeated_run_is_left_alone() {
        assert_eq!(before_repeats(""), None);
        assert_eq!(before_repeats("Wait..."), None);
        assert_eq!(
            before_repeats("The files are a.js, b.js and c.js; the tests are in test/."),
            None
        );
    }

    #[test]
    fn characters_beyond_ascii_are_cut_on_their_boundaries() {
        assert_eq!(
            before_repeats("Größe ist 45 — ja. Größe ist 45 — ja. Größe ist 45 — j"),
            Some("Größe ist 45 — ja.")
        );
    }
}
