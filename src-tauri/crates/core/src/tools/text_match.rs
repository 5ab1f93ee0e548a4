//! Finding the one place an edit's old text stands in a file.
//!
//! A model copies text imperfectly: the file has CRLF line endings and the model writes LF, a
//! line's trailing spaces are lost, the whole block is indented one level less than in the
//! file. [`find_unique`] tries the exact text first and then tolerant matchers, in order, that
//! never change what the text means: each compares lines with less of their whitespace, and
//! the first matcher that finds anything decides. It finds one place or refuses — several
//! places are refused with their line numbers, since replacing the wrong one silently is worse
//! than asking — and when nothing matches it says which lines come closest.

use serde::Serialize;

/// How the old text was found. Reported with every edit, so the user sees how literal the
/// match was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Matcher {
    /// The text as given.
    Exact,
    /// The text with its line endings turned into the file's (`\n` for `\r\n` or back).
    LineEndings,
    /// Whole lines, equal once trailing spaces and tabs are left out.
    TrailingWhitespace,
    /// Whole lines, equal but for one indentation shared by all of them; the new text is
    /// indented the same way.
    Indentation,
    /// Whole lines, equal once leading and trailing whitespace are left out.
    LineTrimmed,
}

/// The one place the old text was found, and what replaces it there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    /// Byte range of the file's content that is replaced.
    pub range: std::ops::Range<usize>,
    /// The text that goes there: the new text, with the file's line endings and indentation
    /// where the matcher adjusted for them.
    pub text: String,
    pub matcher: Matcher,
    /// Line (from 1) where the replaced text begins.
    pub line: usize,
}

impl Replacement {
    /// `content` with the replacement made.
    pub fn apply(&self, content: &str) -> String {
        let mut out = String::with_capacity(content.len() + self.text.len());
        out.push_str(&content[..self.range.start]);
        out.push_str(&self.text);
        out.push_str(&content[self.range.end..]);
        out
    }
}

/// Why an edit could not be placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Miss {
    /// The old text stands in more than one place (lines from 1), as `matcher` compares.
    Ambiguous { matcher: Matcher, lines: Vec<usize> },
    /// Nowhere: the closest stretches of the file (first line, text), best first, and the line
    /// where the new text already stands, if it does.
    NotFound {
        closest: Vec<(usize, String)>,
        new_text_at: Option<usize>,
    },
}

/// The most closest stretches a miss shows.
const MAX_CLOSEST: usize = 3;

/// Finds the one place `old` stands in `content` and what `new` becomes there.
pub fn find_unique(content: &str, old: &str, new: &str) -> Result<Replacement, Miss> {
    let crlf = content.contains("\r\n");
    // The new text takes the file's line endings whichever matcher places it.
    let (old_eol, new_eol) = if crlf {
        (to_crlf(old), to_crlf(new))
    } else {
        (old.replace("\r\n", "\n"), new.replace("\r\n", "\n"))
    };
    if let Some(found) = by_exact(content, old, &new_eol, Matcher::Exact)? {
        return Ok(found);
    }
    if old_eol != old {
        if let Some(found) = by_exact(content, &old_eol, &new_eol, Matcher::LineEndings)? {
            return Ok(found);
        }
    }
    let lines = Lines::of(content);
    let old_lines = split_lines(old);
    for matcher in [
        Matcher::TrailingWhitespace,
        Matcher::Indentation,
        Matcher::LineTrimmed,
    ] {
        let old_ends_line = old.ends_with('\n');
        if let Some(found) = by_lines(&lines, &old_lines, &new_eol, matcher, crlf, old_ends_line)? {
            return Ok(found);
        }
    }
    Err(Miss::NotFound {
        closest: closest(&lines, &old_lines),
        new_text_at: (!new.trim().is_empty())
            .then(|| content.find(new.trim()).map(|at| line_of(content, at)))
            .flatten(),
    })
}

fn to_crlf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// Line (from 1) of byte offset `at`.
fn line_of(content: &str, at: usize) -> usize {
    content[..at].matches('\n').count() + 1
}

/// The exact matcher (or exact after line endings): one occurrence, or a refusal naming all.
fn by_exact(
    content: &str,
    old: &str,
    new: &str,
    matcher: Matcher,
) -> Result<Option<Replacement>, Miss> {
    if old.trim().is_empty() {
        return Ok(None);
    }
    // Overlapping places count too (`}\n}\n` stands twice in `}\n}\n}\n`).
    let mut starts: Vec<usize> = Vec::new();
    let mut from = 0;
    while let Some(i) = content[from..].find(old) {
        let at = from + i;
        starts.push(at);
        from = at + content[at..].chars().next().map_or(1, char::len_utf8);
    }
    match starts.as_slice() {
        [] => Ok(None),
        [at] => Ok(Some(Replacement {
            range: *at..at + old.len(),
            text: new.to_string(),
            matcher,
            line: line_of(content, *at),
        })),
        many => Err(Miss::Ambiguous {
            matcher,
            lines: many.iter().map(|at| line_of(content, *at)).collect(),
        }),
    }
}

/// A file's lines with the byte range each covers (without its line ending).
struct Lines<'a> {
    text: Vec<&'a str>,
    ranges: Vec<std::ops::Range<usize>>,
    /// Where the line after each one starts (its line ending included).
    next: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn of(content: &'a str) -> Self {
        let (mut text, mut ranges, mut next) = (Vec::new(), Vec::new(), Vec::new());
        let mut start = 0;
        for piece in content.split_inclusive('\n') {
            let body = piece.trim_end_matches('\n').trim_end_matches('\r');
            text.push(body);
            ranges.push(start..start + body.len());
            start += piece.len();
            next.push(start);
        }
        Lines { text, ranges, next }
    }
}

/// The lines of an old or new text; a final line ending does not start another line.
fn split_lines(text: &str) -> Vec<&str> {
    let text = text.strip_suffix('\n').unwrap_or(text);
    let text = text.strip_suffix('\r').unwrap_or(text);
    text.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

fn leading_whitespace(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// How an indented block of the file differs from the edit's: every line of the file has
/// `prefix` more indentation than the edit's line (`deeper`), or `prefix` less.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shift<'a> {
    deeper: bool,
    prefix: &'a str,
}

impl<'a> Shift<'a> {
    /// The shift between one line of the file and one of the edit, if their indentations are
    /// one a prefix-extension of the other.
    fn between(file: &'a str, edit: &'a str) -> Option<Self> {
        let (f, e) = (leading_whitespace(file), leading_whitespace(edit));
        if let Some(prefix) = f.strip_suffix(e) {
            Some(Shift {
                deeper: true,
                prefix,
            })
        } else {
            e.strip_suffix(f).map(|prefix| Shift {
                deeper: false,
                prefix,
            })
        }
    }

    /// `text` (the edit's new text) indented the way the file is.
    fn apply(self, text: &str) -> String {
        text.split_inclusive('\n')
            .map(|line| match (self.deeper, line.trim().is_empty()) {
                (_, true) => line.to_string(),
                (true, false) => format!("{}{line}", self.prefix),
                (false, false) => line.strip_prefix(self.prefix).unwrap_or(line).to_string(),
            })
            .collect()
    }
}

/// Does `line` of the file stand for `old` of the edit, as `matcher` compares? For the
/// indentation matcher, `shift` is the one the block shares, set by its first non-blank line.
fn line_matches<'a>(
    matcher: Matcher,
    line: &'a str,
    old: &'a str,
    shift: &mut Option<Shift<'a>>,
) -> bool {
    match matcher {
        Matcher::TrailingWhitespace => line.trim_end() == old.trim_end(),
        Matcher::LineTrimmed => line.trim() == old.trim(),
        Matcher::Indentation => {
            if old.trim().is_empty() {
                return line.trim().is_empty();
            }
            if line.trim() != old.trim() {
                return false;
            }
            let Some(this) = Shift::between(line, old) else {
                return false;
            };
            // The same shift on every line: a line more or less indented than its neighbours
            // keeps that difference.
            *shift.get_or_insert(this) == this
        }
        Matcher::Exact | Matcher::LineEndings => line == old,
    }
}

/// A line-based matcher: windows of whole lines of the file that stand for the old text's
/// lines.
fn by_lines(
    lines: &Lines<'_>,
    old: &[&str],
    new: &str,
    matcher: Matcher,
    crlf: bool,
    old_ends_line: bool,
) -> Result<Option<Replacement>, Miss> {
    if old.iter().all(|l| l.trim().is_empty()) || old.len() > lines.text.len() {
        return Ok(None);
    }
    let mut found: Vec<(usize, Option<Shift>)> = Vec::new();
    for first in 0..=lines.text.len() - old.len() {
        let mut shift = None;
        let all = old
            .iter()
            .enumerate()
            .all(|(i, o)| line_matches(matcher, lines.text[first + i], o, &mut shift));
        if all {
            found.push((first, shift));
        }
    }
    match found.as_slice() {
        [] => Ok(None),
        [(first, shift)] => {
            let last = first + old.len() - 1;
            let mut text = match (matcher, shift) {
                (Matcher::Indentation, Some(shift)) => shift.apply(new),
                _ => new.to_string(),
            };
            // The replaced range ends before the last line's line ending, so the new text's
            // own final line ending would add a line.
            if text.ends_with('\n') {
                text.pop();
                if text.ends_with('\r') {
                    text.pop();
                }
            }
            if crlf {
                text = to_crlf(&text);
            }
            // Whole lines deleted go with their line ending, as an exact match would.
            let end = match old_ends_line && text.is_empty() {
                true => lines.next[last],
                false => lines.ranges[last].end,
            };
            Ok(Some(Replacement {
                range: lines.ranges[*first].start..end,
                text,
                matcher,
                line: first + 1,
            }))
        }
        many => Err(Miss::Ambiguous {
            matcher,
            lines: many.iter().map(|(first, _)| first + 1).collect(),
        }),
    }
}

/// The stretches of the file, as long as the old text, that share the most with it.
fn closest(lines: &Lines<'_>, old: &[&str]) -> Vec<(usize, String)> {
    let wanted = old.join("\n");
    let wanted = wanted.trim();
    if wanted.is_empty() || lines.text.is_empty() {
        return Vec::new();
    }
    let span = old.len().min(lines.text.len());
    let mut scored: Vec<(f64, usize)> = (0..=lines.text.len() - span)
        .filter(|first| !lines.text[*first].trim().is_empty())
        .map(|first| {
            let window = lines.text[first..first + span].join("\n");
            (strsim::normalized_levenshtein(window.trim(), wanted), first)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(MAX_CLOSEST)
        .filter(|(score, _)| *score > 0.3)
        .map(|(_, first)| (first + 1, lines.text[first..first + span].join("\n")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replaced(content: &str, old: &str, new: &str) -> (String, Matcher) {
        let r = find_unique(content, old, new).unwrap();
        (r.apply(content), r.matcher)
    }

    #[test]
    fn exact_text_is_replaced_once() {
        let (out, how) = replaced("a = 1\nb = 2\n", "b = 2", "b = 3");
        assert_eq!((out.as_str(), how), ("a = 1\nb = 3\n", Matcher::Exact));
    }

    #[test]
    fn text_found_twice_is_refused_with_both_lines() {
        let miss = find_unique("x = 1\ny = 2\nx = 1\n", "x = 1", "x = 9").unwrap_err();
        assert_eq!(
            miss,
            Miss::Ambiguous {
                matcher: Matcher::Exact,
                lines: vec![1, 3]
            }
        );
    }

    #[test]
    fn lf_text_matches_a_crlf_file_and_keeps_its_endings() {
        let (out, how) = replaced("one\r\ntwo\r\nthree\r\n", "one\ntwo\n", "uno\ndos\n");
        assert_eq!(how, Matcher::LineEndings);
        assert_eq!(out, "uno\r\ndos\r\nthree\r\n");
    }

    #[test]
    fn trailing_spaces_do_not_stop_a_match() {
        let (out, how) = replaced(
            "fn a() {  \n    1\n}\n",
            "fn a() {\n    1",
            "fn a() {\n    2",
        );
        assert_eq!(how, Matcher::TrailingWhitespace);
        assert_eq!(out, "fn a() {\n    2\n}\n");
    }

    #[test]
    fn a_block_indented_differently_is_found_and_the_new_text_follows_the_file() {
        let content = "class A:\n    def f(self):\n        return 1\n";
        let (out, how) = replaced(
            content,
            "def f(self):\n    return 1",
            "def f(self):\n    return 2",
        );
        assert_eq!(how, Matcher::Indentation);
        assert_eq!(out, "class A:\n    def f(self):\n        return 2\n");
    }

    #[test]
    fn a_block_that_ends_less_indented_than_it_starts_is_shifted_as_a_whole() {
        let content = "fn f() {\n    if x {\n        y();\n    }\n}\n";
        let (out, how) = replaced(content, "    y();\n}", "    z();\n}");
        assert_eq!(how, Matcher::Indentation);
        assert_eq!(out, "fn f() {\n    if x {\n        z();\n    }\n}\n");
    }

    #[test]
    fn indentation_must_shift_every_line_alike() {
        // The second line is shifted by a different amount than the first: not the same block
        // under another indentation, so only the looser trimmed matcher takes it.
        let content = "  a\n      b\n";
        let r = find_unique(content, "a\n  b", "a\n  c").unwrap();
        assert_eq!(r.matcher, Matcher::LineTrimmed);
    }

    #[test]
    fn line_trimmed_is_the_last_resort() {
        let (out, how) = replaced("\tlet x = 1;\n", "  let x = 1;  ", "let x = 2;");
        assert_eq!(how, Matcher::LineTrimmed);
        assert_eq!(out, "let x = 2;\n");
    }

    #[test]
    fn a_tolerant_match_found_twice_is_refused() {
        let miss = find_unique("  a\nb\n    a\n", "a  \n", "c").unwrap_err();
        assert!(matches!(miss, Miss::Ambiguous { lines, .. } if lines == vec![1, 3]));
    }

    #[test]
    fn a_miss_shows_the_closest_lines() {
        let content = "const MAX = 256\nconst MIN = 0\nmodule.exports = { MAX }\n";
        let Miss::NotFound {
            closest,
            new_text_at,
        } = find_unique(content, "const MAX = 265", "const MAX = 512").unwrap_err()
        else {
            panic!("expected a miss");
        };
        assert_eq!(closest[0], (1, "const MAX = 256".to_string()));
        assert_eq!(new_text_at, None);
    }

    #[test]
    fn a_miss_says_when_the_new_text_is_already_there() {
        let miss = find_unique("x = 2\n", "x = 1", "x = 2").unwrap_err();
        assert!(matches!(
            miss,
            Miss::NotFound {
                new_text_at: Some(1),
                ..
            }
        ));
    }

    #[test]
    fn a_new_line_takes_the_file_s_line_endings() {
        let (out, how) = replaced("a\r\nb\r\n", "a", "a\nc");
        assert_eq!((out.as_str(), how), ("a\r\nc\r\nb\r\n", Matcher::Exact));
        let (out, _) = replaced("a  \nb\n", "a\r\n", "x\r\ny");
        assert_eq!(out, "x\ny\nb\n");
    }

    #[test]
    fn lines_deleted_by_a_tolerant_matcher_leave_no_blank_line() {
        let (out, how) = replaced("foo  \nbar\n", "foo\n", "");
        assert_eq!((out.as_str(), how), ("bar\n", Matcher::TrailingWhitespace));
    }

    #[test]
    fn overlapping_places_are_both_found() {
        let miss = find_unique("}\n}\n}\n", "}\n}\n", "}\n").unwrap_err();
        assert!(matches!(miss, Miss::Ambiguous { lines, .. } if lines == vec![1, 2]));
    }

    #[test]
    fn blank_old_text_matches_nothing() {
        assert!(matches!(
            find_unique("a\n\nb\n", "\n", "x").unwrap_err(),
            Miss::NotFound { .. }
        ));
    }
}
