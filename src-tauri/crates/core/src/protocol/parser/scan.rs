//! Streaming scanners for a call's body: where a tagged call or a Mistral call ends, found
//! byte by byte as the text arrives.

use super::openers::{is_name_byte, opener_at, tag, Probe};
use super::*;

/// Walks the body of a tagged call looking for its closing tag outside JSON strings, so a
/// closing tag written inside a string argument (file content, say) is content. Resumable:
/// streaming calls `advance` again as text arrives.
#[derive(Debug, Clone, Copy)]
pub(super) struct BodyScan {
    pub(super) pos: usize,
    pub(super) in_string: bool,
    pub(super) escaped: bool,
    pub(super) track_strings: bool,
}

pub(super) enum BodyEnd {
    Closer {
        start: usize,
        end: usize,
    },
    /// Another opener (or the fence before it) came first: the call was never closed.
    NextOpener(usize),
}

impl BodyScan {
    pub(super) fn new(pos: usize, track_strings: bool) -> Self {
        BodyScan {
            pos,
            in_string: false,
            escaped: false,
            track_strings,
        }
    }

    /// Scans on from where it stopped. `None` means the end was not found in the text so far.
    pub(super) fn advance(&mut self, text: &str, closer: &str, at_end: bool) -> Option<BodyEnd> {
        let bytes = text.as_bytes();
        while self.pos < bytes.len() {
            let at = self.pos;
            let b = bytes[at];
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
            } else if b == b'"' {
                self.in_string = self.track_strings;
            } else if matches!(b, b'<' | b'[' | b'`') {
                let close = tag(&bytes[at..], closer, true);
                if let Probe::Match(len) = close {
                    return Some(BodyEnd::Closer {
                        start: at,
                        end: at + len,
                    });
                }
                let open = opener_at(text, at);
                if let Probe::Match(_) = open {
                    return Some(BodyEnd::NextOpener(at));
                }
                if !at_end && (close == Probe::Partial || matches!(open, Probe::Partial)) {
                    // Wait here for the rest of the tag.
                    return None;
                }
            }
            self.pos += 1;
        }
        None
    }
}

/// Follows a Mistral call while it streams, to tell when its JSON value has closed. Mirrors
/// the forms `read_mistral` accepts: `name[ARGS]{…}`, `name{…}`, `[…]` and `{…}`.
#[derive(Debug, Clone, Copy)]
pub(super) struct MistralScan {
    pub(super) pos: usize,
    pub(super) state: MistralState,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum MistralState {
    Lead,
    Name,
    AfterName,
    /// This many bytes of `[ARGS]` seen.
    ArgsTag(usize),
    AfterArgs,
    InValue {
        depth: usize,
        in_string: bool,
        escaped: bool,
    },
    Complete,
    /// Not a form whose end can be seen early (a scalar value, or junk): wait for the stream
    /// to end on its own.
    Unknown,
}

impl MistralScan {
    pub(super) fn new(pos: usize) -> Self {
        MistralScan {
            pos,
            state: MistralState::Lead,
        }
    }

    pub(super) fn is_complete(&self) -> bool {
        matches!(self.state, MistralState::Complete)
    }

    pub(super) fn advance(&mut self, text: &str) {
        use MistralState::*;
        let bytes = text.as_bytes();
        while self.pos < bytes.len() {
            let b = bytes[self.pos];
            let ws = b.is_ascii_whitespace();
            let opens_value = b == b'{' || b == b'[';
            let value = InValue {
                depth: 1,
                in_string: false,
                escaped: false,
            };
            self.state = match self.state {
                Complete | Unknown => return,
                Lead if ws => Lead,
                Lead if opens_value => value,
                Lead if is_name_byte(b) => Name,
                Name if is_name_byte(b) => Name,
                Name | AfterName if ws => AfterName,
                Name | AfterName if b == b'{' => value,
                Name | AfterName if b == b'[' => ArgsTag(1),
                ArgsTag(seen) if b == MISTRAL_ARGS.as_bytes()[seen] => {
                    if seen + 1 == MISTRAL_ARGS.len() {
                        AfterArgs
                    } else {
                        ArgsTag(seen + 1)
                    }
                }
                AfterArgs if ws => AfterArgs,
                AfterArgs if opens_value => value,
                InValue {
                    depth,
                    in_string,
                    escaped,
                } => json_step(depth, in_string, escaped, b),
                _ => Unknown,
            };
            self.pos += 1;
        }
    }
}

/// One byte of a JSON value whose nesting depth is being tracked.
fn json_step(depth: usize, in_string: bool, escaped: bool, b: u8) -> MistralState {
    let (depth, in_string, escaped) = match (in_string, escaped, b) {
        (true, true, _) => (depth, true, false),
        (true, false, b'\\') => (depth, true, true),
        (true, false, b'"') => (depth, false, false),
        (true, false, _) => (depth, true, false),
        (false, _, b'"') => (depth, true, false),
        (false, _, b'{' | b'[') => (depth + 1, false, false),
        (false, _, b'}' | b']') => (depth - 1, false, false),
        (false, _, _) => (depth, false, false),
    };
    if depth == 0 {
        MistralState::Complete
    } else {
        MistralState::InValue {
            depth,
            in_string,
            escaped,
        }
    }
}
