//! Old text that is in the file: when a constrained call opens an argument declared
//! `"x-span-of": KEY` (edit_file's `old_text`), its value can only become a contiguous piece of
//! the current text of the file the call's KEY argument names, and the string can only end
//! where that piece is found exactly once in the file, at a word boundary. A constrained edit
//! therefore always finds its old text.
//!
//! The value is JSON string content, so the model writes the file's newline as `\n` and its
//! quote as `\"`: each token's text is decoded through JSON's escapes before it is compared
//! with the file. The state is the set of places in the file where the text decoded so far
//! can stand; a token is allowed when some of them go on with its text. A piece starts at the
//! start of a line or of a word, so the text never begins inside a name.
//!
//! Where the piece begins is chosen whole, like a path: among the file's lines (from their
//! first non-blank character) that hold the most of the question's words ("from 1000 to 500"
//! points at the line with 1000), by the model's score for each. A word counts for more the
//! fewer lines hold it, and twice when it is shaped like code (a number, `MAX_LENGTH`); a line
//! that defines or assigns a name of the question counts half a word more. A tiny model that has not
//! read the file has no idea what it holds; the line is where its guess would go wrong. From there the model goes on token by token: it ends the string, or goes on into the
//! next lines until the piece is found once.

use super::grounding::{argument_value, question_words_in, Grounded, Grounding};
use super::sampling::{best_by_logit, grammar_allows};
use super::*;
use lantern_core::relevance::defines;

/// The most lines of the file the model scores as the start of the piece.
const MAX_SCORED_LINES: usize = 48;

/// How many of the likeliest tokens are tried before every token is.
const FIRST_TRIED: usize = 64;

/// The state of a span argument being written.
#[derive(Debug, Clone)]
pub(super) struct FileSpan {
    file: std::sync::Arc<[u8]>,
    /// Bytes of decoded text so far.
    len: usize,
    /// An escape begun but not finished (`\` or `\u00`), as written.
    pending: Vec<u8>,
    /// Where in the file the decoded text so far can start.
    starts: Vec<usize>,
}

/// What a token's text does to the span.
#[derive(Debug, Clone)]
pub(super) enum Fed {
    /// It goes on with the piece: the state after it.
    Continues(FileSpan),
    /// It ends the string (a quote) where the piece is found once.
    Closes,
    /// It would leave the file's text or end the string too early.
    Refused,
}

fn is_word(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte >= 0x80
}

impl FileSpan {
    /// A span of `file` yet to be written.
    pub(super) fn new(file: &str) -> Self {
        let bytes = file.as_bytes();
        let starts = (0..bytes.len())
            .filter(|&at| {
                at == 0
                    || bytes[at - 1] == b'\n'
                    || (!is_word(bytes[at - 1]) && !bytes[at].is_ascii_whitespace())
            })
            .collect();
        FileSpan {
            file: bytes.into(),
            len: 0,
            pending: Vec::new(),
            starts,
        }
    }

    /// Can the string end here: something written, no escape open, found once, and not in the
    /// middle of a word or a character?
    pub(super) fn can_close(&self) -> bool {
        let [start] = self.starts.as_slice() else {
            return false;
        };
        if self.len == 0 || !self.pending.is_empty() {
            return false;
        }
        // Found once among all places, not only those a piece may start at: the edit's
        // matcher looks everywhere (`foo = 1` also stands inside `xfoo = 1`).
        let piece = &self.file[*start..start + self.len];
        let elsewhere = (0..=self.file.len() - self.len)
            .filter(|at| at != start)
            .any(|at| &self.file[at..at + self.len] == piece);
        if elsewhere {
            return false;
        }
        let end = start + self.len;
        match self.file.get(end) {
            None => true,
            Some(&next) => {
                let last = self.file[end - 1];
                let inside_a_character = (0x80..0xC0).contains(&next);
                let inside_a_word = is_word(last) && is_word(next);
                !inside_a_character && !inside_a_word
            }
        }
    }

    /// What writing `piece` (a token's text, as JSON string content) does.
    pub(super) fn feed(&self, piece: &[u8]) -> Fed {
        let mut next = self.clone();
        for &byte in piece {
            if next.pending.is_empty() {
                match byte {
                    b'"' => {
                        return match next.can_close() {
                            true => Fed::Closes,
                            false => Fed::Refused,
                        }
                    }
                    b'\\' => next.pending.push(byte),
                    byte if byte < 0x20 => return Fed::Refused,
                    byte => {
                        if !next.advance(&[byte]) {
                            return Fed::Refused;
                        }
                    }
                }
                continue;
            }
            next.pending.push(byte);
            let decoded: Option<Vec<u8>> = match next.pending.as_slice() {
                [b'\\', b'n'] => Some(vec![b'\n']),
                [b'\\', b't'] => Some(vec![b'\t']),
                [b'\\', b'r'] => Some(vec![b'\r']),
                [b'\\', b'"'] => Some(vec![b'"']),
                [b'\\', b'\\'] => Some(vec![b'\\']),
                [b'\\', b'/'] => Some(vec![b'/']),
                [b'\\', b'u', hex @ ..] if hex.iter().all(u8::is_ascii_hexdigit) => {
                    if hex.len() < 4 {
                        None
                    } else {
                        let code =
                            u32::from_str_radix(std::str::from_utf8(hex).ok().unwrap_or(""), 16);
                        match code.ok().and_then(char::from_u32) {
                            Some(c) => Some(c.to_string().into_bytes()),
                            None => return Fed::Refused,
                        }
                    }
                }
                _ => return Fed::Refused,
            };
            if let Some(bytes) = decoded {
                next.pending.clear();
                if !next.advance(&bytes) {
                    return Fed::Refused;
                }
            }
        }
        match next.pending.is_empty() || next.escape_can_go_on() {
            true => Fed::Continues(next),
            false => Fed::Refused,
        }
    }

    /// Can the escape begun (`\` or `\u00…`) still become the next character of the file at
    /// one of the places? Refusing a dead escape at once keeps the text from reaching a point
    /// where nothing can follow.
    fn escape_can_go_on(&self) -> bool {
        self.starts.iter().any(|&start| {
            let rest = &self.file[start + self.len..];
            let Some(next) = std::str::from_utf8(&rest[..rest.len().min(4)])
                .or_else(|e| std::str::from_utf8(&rest[..e.valid_up_to()]))
                .ok()
                .and_then(|t| t.chars().next())
            else {
                return false;
            };
            let short = match next {
                '\n' => "n",
                '\t' => "t",
                '\r' => "r",
                '"' => "\"",
                '\\' => "\\",
                '/' => "/",
                _ => "",
            };
            let long = format!("u{:04x}", next as u32);
            let written = String::from_utf8_lossy(&self.pending[1..]).to_lowercase();
            (!short.is_empty() && short.starts_with(&written))
                // Only a control character needs `\u`; any other is written as it is.
                || (next as u32) < 0x20 && long.starts_with(&written)
        })
    }

    /// Keeps the places that go on with `bytes`; false when none does.
    fn advance(&mut self, bytes: &[u8]) -> bool {
        let (file, len) = (&self.file, self.len);
        self.starts
            .retain(|&start| file.get(start + len..start + len + bytes.len()) == Some(bytes));
        self.len += bytes.len();
        !self.starts.is_empty()
    }
}

impl LocalModel {
    /// The span the call text (after the opening tag) has just opened, with its file's text, if
    /// it opened an argument declared `"x-span-of"` whose file the request can read, and the
    /// lever is on.
    pub(super) fn open_span(
        &self,
        opened: Option<&Grounding>,
        call_text: &str,
        request: &GenerateRequest<'_>,
    ) -> Option<(FileSpan, String)> {
        if !self.settings.options.file_spans {
            return None;
        }
        let Some(Grounding::SpanOf(key)) = opened else {
            return None;
        };
        let path = argument_value(call_text, key)?;
        let text = request.files?.text_of(path)?;
        (!text.trim().is_empty()).then(|| (FileSpan::new(&text), text))
    }

    /// Chooses the line the span begins with (see the module's overview) and writes it; the
    /// span after it and what was written, or the span as it was when nothing was.
    pub(super) fn start_span(
        &mut self,
        span: FileSpan,
        file: &str,
        request: &GenerateRequest<'_>,
        logits: &[f32],
        grammar: &mut LlamaSampler,
    ) -> Result<(Option<FileSpan>, Option<Grounded>), ModelError> {
        let asked = request.question();
        let terms = &asked.terms;
        let mut lines: Vec<&str> = Vec::new();
        // ASCII spaces only: a line cut after a wider space would start inside a "word".
        for line in file
            .lines()
            .map(|l| l.trim_matches(|c: char| c.is_ascii_whitespace()))
        {
            if line.chars().count() >= 2 && line.len() <= 200 && !lines.contains(&line) {
                lines.push(line);
            }
        }
        // Each word of the question a line holds counts, the more the fewer lines hold it, and
        // twice for a word shaped like code.
        let holds: Vec<Vec<bool>> = terms
            .iter()
            .map(|(term, _)| {
                let term = [term.clone()];
                lines
                    .iter()
                    .map(|l| question_words_in(l, &term) == 1)
                    .collect()
            })
            .collect();
        let weight = |line: usize| -> f64 {
            terms
                .iter()
                .zip(&holds)
                .filter(|(_, held)| held[line])
                .map(|((_, code), held)| {
                    let shape = if *code { 2.0 } else { 1.0 };
                    shape / held.iter().filter(|h| **h).count() as f64
                })
                .sum()
        };
        // Of lines that name the same thing, the one that defines or assigns it is the one to
        // change (`const MAX_LENGTH = 256`, not `MAX_LENGTH,` in a list of exports).
        let names = &asked.names;
        let weights: Vec<f64> = (0..lines.len())
            .map(|i| weight(i) + f64::from(u8::from(defines(lines[i], names))) * 0.5)
            .collect();
        // When lines hold words of the question, the ones weighted most are the candidates (a
        // tiny model's score prefers a short, common line to the one the question names);
        // otherwise the first lines of the file are.
        let most = weights.iter().copied().fold(0.0, f64::max);
        let lines: Vec<&str> = lines
            .iter()
            .zip(&weights)
            .filter(|(_, w)| **w >= most - 1e-9)
            .map(|(l, _)| *l)
            .take(MAX_SCORED_LINES)
            .collect();
        let candidates: Vec<(String, f64)> = lines
            .iter()
            .filter_map(|line| {
                let quoted = serde_json::to_string(line).ok()?;
                Some((quoted[1..quoted.len() - 1].to_string(), 0.0))
            })
            .collect();
        let Some(written) = self.write_best(&candidates, logits, grammar, request.cancel)? else {
            return Ok((Some(span), None));
        };
        let after = match span.feed(written.text.as_bytes()) {
            Fed::Continues(next) => Some(next),
            Fed::Closes | Fed::Refused => None,
        };
        Ok((after, Some(written)))
    }

    /// The likeliest token the grammar allows that goes on with the span, or (when `closing`
    /// and the span can end) that ends it; with what it does to the span.
    pub(super) fn choose_in_span(
        &self,
        logits: &[f32],
        grammar: &mut LlamaSampler,
        span: &FileSpan,
        closing: bool,
    ) -> Option<(LlamaToken, Fed)> {
        let vocab = self.model.vocab();
        let closing = closing && span.can_close();
        let mut fits = |token: LlamaToken| {
            if vocab.is_eog(token) {
                return None;
            }
            let fed = span.feed(&vocab.token_to_piece(token, false, None));
            let wanted = match &fed {
                Fed::Refused => false,
                Fed::Closes => true,
                Fed::Continues(_) => !closing,
            };
            (wanted && grammar_allows(grammar, token, logits[token.0 as usize]))
                .then_some((token, fed))
        };
        if let Some(found) = best_by_logit(logits, &[], FIRST_TRIED)
            .into_iter()
            .find_map(&mut fits)
        {
            return Some(found);
        }
        let mut all: Vec<LlamaToken> = (0..logits.len() as i32).map(LlamaToken).collect();
        all.sort_by(|a, b| logits[b.0 as usize].total_cmp(&logits[a.0 as usize]));
        all.into_iter().find_map(fits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(span: &FileSpan, pieces: &[&str]) -> Option<FileSpan> {
        let mut span = span.clone();
        for piece in pieces {
            match span.feed(piece.as_bytes()) {
                Fed::Continues(next) => span = next,
                _ => return None,
            }
        }
        Some(span)
    }

    #[test]
    fn text_of_the_file_goes_on_and_other_text_does_not() {
        let span = FileSpan::new("let total = 10;\nlet count = 2;\n");
        assert!(write(&span, &["let", " total", " = 1"]).is_some());
        assert!(write(&span, &["let", " sum"]).is_none());
    }

    #[test]
    fn the_string_ends_only_where_the_text_is_found_once_at_a_boundary() {
        let span = FileSpan::new("let total = 10;\nlet count = 2;\n");
        let twice = write(&span, &["let "]).unwrap();
        assert!(matches!(twice.feed(b"\""), Fed::Refused));
        let in_a_number = write(&span, &["let total = 1"]).unwrap();
        assert!(matches!(in_a_number.feed(b"\""), Fed::Refused));
        let once = write(&span, &["let total = 10"]).unwrap();
        assert!(matches!(once.feed(b"\","), Fed::Closes));
        assert!(matches!(span.feed(b"\""), Fed::Refused), "empty");
    }

    #[test]
    fn a_piece_found_inside_another_word_too_is_not_found_once() {
        let span = FileSpan::new("xfoo = 1\nfoo = 1\nbar\n");
        let written = write(&span, &["foo = 1"]).unwrap();
        assert!(matches!(written.feed(b"\""), Fed::Refused));
        assert!(write(&span, &["foo = 1\\nbar"]).is_some_and(|s| s.can_close()));
    }

    #[test]
    fn json_escapes_stand_for_the_file_s_characters() {
        let span = FileSpan::new("a = \"x\"\nb = 1\n");
        let s = write(&span, &["a = \\", "\"x\\\"", "\\n", "b"]).unwrap();
        assert!(matches!(s.feed(b"\""), Fed::Closes));
        assert!(write(&span, &["a = \\t"]).is_none());
        assert!(write(&span, &["a = \\u0022x"]).is_some());
    }

    #[test]
    fn an_escape_begins_only_where_the_file_has_an_escaped_character() {
        let span = FileSpan::new("ab\ncd\n");
        assert!(write(&span, &["ab\\"]).is_some());
        assert!(write(&span, &["a\\"]).is_none());
        assert!(write(&span, &["ab\\u000a"]).is_some());
    }

    #[test]
    fn raw_control_characters_are_refused() {
        let span = FileSpan::new("a\nb\n");
        assert!(write(&span, &["a\n"]).is_none());
        assert!(write(&span, &["a\\nb"]).is_some());
    }

    #[test]
    fn a_piece_starts_at_a_line_or_a_word_never_inside_a_name() {
        let span = FileSpan::new("    value = compute()\n");
        assert!(write(&span, &["    value"]).is_some());
        assert!(write(&span, &["value"]).is_some());
        assert!(write(&span, &["compute"]).is_some());
        assert!(write(&span, &["alue"]).is_none());
        assert!(write(&span, &["pute"]).is_none());
    }
}
