//! Finding where a call opens, in every dialect: a `Probe` says yes, no, or "not yet" while
//! the text is still streaming.

use super::*;

/// What the text at a position holds, as far as the text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Probe<T> {
    Match(T),
    /// The text ends while it still looks like the start of a match.
    Partial,
    NoMatch,
}

impl<T> Probe<T> {
    pub(super) fn map<U>(self, f: impl FnOnce(T) -> U) -> Probe<U> {
        match self {
            Probe::Match(t) => Probe::Match(f(t)),
            Probe::Partial => Probe::Partial,
            Probe::NoMatch => Probe::NoMatch,
        }
    }
}

/// `lit` at the start of `s`; the length on a match.
fn literal(s: &[u8], lit: &str, ignore_case: bool) -> Probe<usize> {
    let lit = lit.as_bytes();
    let n = s.len().min(lit.len());
    let same = if ignore_case {
        s[..n].eq_ignore_ascii_case(&lit[..n])
    } else {
        s[..n] == lit[..n]
    };
    match (same, n == lit.len()) {
        (false, _) => Probe::NoMatch,
        (true, true) => Probe::Match(n),
        (true, false) => Probe::Partial,
    }
}

/// Optional whitespace and the `>` that ends a tag.
fn tag_end(s: &[u8]) -> Probe<usize> {
    for (i, &b) in s.iter().enumerate() {
        if b == b'>' {
            return Probe::Match(i + 1);
        }
        if i >= MAX_TAG_SPACE || !b.is_ascii_whitespace() {
            return Probe::NoMatch;
        }
    }
    Probe::Partial
}

/// A tag: `name` (which includes the `<` or `</`) then [`tag_end`].
pub(super) fn tag(s: &[u8], name: &str, ignore_case: bool) -> Probe<usize> {
    match literal(s, name, ignore_case) {
        Probe::Match(n) => tag_end(&s[n..]).map(|m| n + m),
        other => other,
    }
}

pub(super) fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

pub(super) fn is_fence_lang_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'.')
}

/// An opener tag at the start of `s`: its dialect and length.
fn opener_tag(s: &[u8]) -> Probe<(Dialect, usize)> {
    let forms = TAG_OPENERS
        .map(|(name, dialect)| (dialect, tag(s, name, false)))
        .into_iter()
        .chain([
            (Dialect::Llama3, llama_opener(s)),
            (Dialect::Mistral, literal(s, MISTRAL_OPEN, false)),
            (Dialect::Harmony, harmony_opener(s)),
        ]);
    let mut partial = false;
    for (dialect, probe) in forms {
        match probe {
            Probe::Match(len) => return Probe::Match((dialect, len)),
            Probe::Partial => partial = true,
            Probe::NoMatch => {}
        }
    }
    if partial {
        Probe::Partial
    } else {
        Probe::NoMatch
    }
}

/// `<function=NAME>`.
fn llama_opener(s: &[u8]) -> Probe<usize> {
    let n = match literal(s, LLAMA_OPEN, false) {
        Probe::Match(n) => n,
        other => return other,
    };
    let rest = &s[n..];
    let name_len = rest
        .iter()
        .take(MAX_LLAMA_NAME + 1)
        .take_while(|b| is_name_byte(**b))
        .count();
    if name_len > MAX_LLAMA_NAME {
        Probe::NoMatch
    } else if name_len == rest.len() {
        Probe::Partial
    } else if name_len == 0 {
        Probe::NoMatch
    } else {
        tag_end(&rest[name_len..]).map(|m| n + name_len + m)
    }
}

/// A Harmony header addressed to a tool, through its `<|message|>`: `<|channel|>commentary
/// to=functions.NAME <|constrain|>json<|message|>`, or the same after `<|start|>assistant`, with
/// the recipient before or after the channel. A header addressed to no one (the `final` or
/// `analysis` channel) is not a call.
fn harmony_opener(s: &[u8]) -> Probe<usize> {
    let mut partial = false;
    if !HARMONY_STARTS
        .iter()
        .any(|start| match literal(s, start, false) {
            Probe::Match(_) => true,
            Probe::Partial => {
                partial = true;
                false
            }
            Probe::NoMatch => false,
        })
    {
        return if partial {
            Probe::Partial
        } else {
            Probe::NoMatch
        };
    }
    let window = &s[..s.len().min(MAX_HARMONY_HEADER + HARMONY_MESSAGE.len())];
    let message = HARMONY_MESSAGE.as_bytes();
    match window.windows(message.len()).position(|w| w == message) {
        Some(at) if harmony_recipient(&s[..at]).is_some() => Probe::Match(at + message.len()),
        Some(_) => Probe::NoMatch,
        None if s.len() < MAX_HARMONY_HEADER => Probe::Partial,
        None => Probe::NoMatch,
    }
}

/// The tool a Harmony header is addressed to: the name after `to=`, without `functions.`.
pub(super) fn harmony_recipient(header: &[u8]) -> Option<&str> {
    let to = HARMONY_RECIPIENT.as_bytes();
    let at = header.windows(to.len()).position(|w| w == to)? + to.len();
    let len = header[at..]
        .iter()
        .take_while(|b| is_name_byte(**b))
        .count();
    let name = std::str::from_utf8(&header[at..at + len]).ok()?;
    let name = name.strip_prefix("functions.").unwrap_or(name);
    (!name.is_empty()).then_some(name)
}

/// A code fence (```` ``` ```` plus an optional info string) followed by an opener: the
/// opener's offset in `s`, its dialect and its length.
fn fenced_opener(s: &[u8]) -> Probe<(usize, Dialect, usize)> {
    let fence = match literal(s, FENCE, false) {
        Probe::Match(n) => n,
        Probe::Partial => return Probe::Partial,
        Probe::NoMatch => return Probe::NoMatch,
    };
    let lang = s[fence..]
        .iter()
        .take(MAX_FENCE_LANG + 1)
        .take_while(|b| is_fence_lang_byte(**b))
        .count();
    let gap = s[fence + lang..]
        .iter()
        .take(MAX_FENCE_GAP + 1)
        .take_while(|b| b.is_ascii_whitespace())
        .count();
    let offset = fence + lang + gap;
    if lang > MAX_FENCE_LANG || gap > MAX_FENCE_GAP {
        Probe::NoMatch
    } else if offset == s.len() {
        Probe::Partial
    } else {
        opener_tag(&s[offset..]).map(|(dialect, len)| (offset, dialect, len))
    }
}

/// An opener found in the text. Positions are byte offsets into the whole text.
#[derive(Debug, Clone, Copy)]
pub(super) struct Opener {
    /// Where the call starts, including a code fence wrapped around it.
    pub(super) start: usize,
    /// Where the tag itself starts.
    pub(super) tag_start: usize,
    /// Just past the tag.
    pub(super) end: usize,
    pub(super) dialect: Dialect,
    /// Whether a code fence opens right before the tag (so one may close right after the call).
    pub(super) fenced: bool,
}

/// An opener (fenced or not) starting exactly at `at`.
pub(super) fn opener_at(text: &str, at: usize) -> Probe<Opener> {
    let s = &text.as_bytes()[at..];
    let found = match s.first() {
        Some(b'`') => fenced_opener(s),
        Some(b'<' | b'[') => opener_tag(s).map(|(dialect, len)| (0, dialect, len)),
        _ => Probe::NoMatch,
    };
    found.map(|(offset, dialect, len)| Opener {
        start: at,
        tag_start: at + offset,
        end: at + offset + len,
        dialect,
        fenced: offset > 0,
    })
}

pub(super) enum Search {
    Found(Opener),
    /// Something at this position may become an opener once more text arrives.
    Pending(usize),
    NotFound,
}

/// The first opener at or after `from`. With `at_end` the text is complete, so a partial
/// opener at its end is just text.
pub(super) fn find_opener(text: &str, from: usize, at_end: bool) -> Search {
    let bytes = text.as_bytes();
    let mut at = from;
    while let Some(skip) = bytes[at..]
        .iter()
        .position(|b| matches!(b, b'<' | b'[' | b'`'))
    {
        at += skip;
        match opener_at(text, at) {
            Probe::Match(opener) => return Search::Found(opener),
            Probe::Partial if !at_end => return Search::Pending(at),
            _ => at += 1,
        }
    }
    Search::NotFound
}

/// A fence right before the first opener is only wrapped around the call if it opens a block;
/// if it closes one (say, a code sample the model just showed), it belongs to the user text.
/// Fences are counted as lines starting with ```, which is how models write them.
pub(super) fn settle_fence(text: &str, opener: Opener) -> Opener {
    if !opener.fenced {
        return opener;
    }
    let fences_before = text[..opener.start]
        .lines()
        .filter(|line| line.trim_start().starts_with(FENCE))
        .count();
    if fences_before % 2 == 0 {
        opener
    } else {
        Opener {
            start: opener.tag_start,
            fenced: false,
            ..opener
        }
    }
}

/// Just past the fence that closes a fenced call, or `end` when there is none.
pub(super) fn past_fence(text: &str, end: usize, fenced: bool) -> usize {
    if !fenced {
        return end;
    }
    let after = skip_ws(text.as_bytes(), end);
    if text[after..].starts_with(FENCE) {
        after + FENCE.len()
    } else {
        end
    }
}

pub(super) fn skip_ws(bytes: &[u8], from: usize) -> usize {
    from + bytes[from..]
        .iter()
        .take_while(|b| b.is_ascii_whitespace())
        .count()
}

/// The closing tag of a tag dialect, without its `>`. Mistral calls have none.
pub(super) fn closer_tag(dialect: Dialect) -> Option<&'static str> {
    match dialect {
        Dialect::Lantern => Some("</TOOL_CALL"),
        Dialect::Hermes => Some("</tool_call"),
        Dialect::Llama3 => Some("</function"),
        Dialect::ToolTag => Some("</tool"),
        // Tagless calls open the reply and are read whole (see bare.rs), never from an opener.
        // Mistral and Harmony calls end with their JSON value: `<|call|>` is an end-of-generation
        // token that a backend may never show.
        Dialect::Mistral | Dialect::BareJson | Dialect::Pythonic | Dialect::Harmony => None,
        // A server's own calls are never text.
        Dialect::Api => None,
    }
}
