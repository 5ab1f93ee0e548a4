//! Calls with no tag at all, which some models write as their whole reply: a bare JSON object
//! (`{"name": "read_file", "arguments": {"path": "a.txt"}}`) and a pythonic list
//! (`[read_file(path="a.txt")]`, Llama 3.2 and LFM2). Without a tag they are only read as calls
//! when they open the reply; the same text later in prose is an example, not a call.

use super::read::{decode_call_object, place, CallRead};
use super::*;

/// What the start of a reply holds, as far as the text goes.
pub(super) enum Start {
    /// A complete call (or a broken one that can only be a call), read.
    Call(CallRead),
    /// Still streaming, and it may yet be a call.
    Undecided,
    /// Not a tagless call: the reply is read as usual.
    No,
}

/// The longest reply held back while it may still become a tagless call; a longer one is text.
const MAX_HELD: usize = 64 * 1024;

/// Reads a tagless call at `from` (the start of the reply). With `at_end` the text is
/// complete, so what is undecided is not a call.
pub(super) fn call_at_start(text: &str, from: usize, at_end: bool) -> Start {
    let start = skip_ws(text.as_bytes(), from);
    let rest = &text[start..];
    let found = match rest.as_bytes().first() {
        Some(b'{') => bare_object(text, start),
        Some(b'[') => pythonic(text, start, at_end),
        None => Start::Undecided,
        _ => Start::No,
    };
    match found {
        Start::Undecided if at_end || rest.len() > MAX_HELD => Start::No,
        other => other,
    }
}

fn skip_ws(bytes: &[u8], from: usize) -> usize {
    from + bytes[from..]
        .iter()
        .take_while(|b| b.is_ascii_whitespace())
        .count()
}

/// A JSON object with a tool name and arguments.
fn bare_object(text: &str, start: usize) -> Start {
    let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
    let value = match values.next() {
        Some(Ok(value)) => value,
        Some(Err(err)) if err.is_eof() => return Start::Undecided,
        _ => return Start::No,
    };
    let Value::Object(fields) = &value else {
        return Start::No;
    };
    let named = TOOL_KEYS
        .iter()
        .any(|k| fields.get(*k).is_some_and(Value::is_string));
    let with_args = ARG_KEYS.iter().any(|k| fields.contains_key(*k));
    if !(named && with_args) {
        return Start::No;
    }
    let end = start + values.byte_offset();
    let span = Span { start, end };
    Start::Call(CallRead {
        end,
        call: place(text, span, Dialect::BareJson, decode_call_object(value)),
        extra: Vec::new(),
    })
}

/// `[name(key="value", n=1), other()]`: the first call is taken, the others are extra. Once
/// `[name(` is there it is a call: cut off (`at_end`) or malformed, it is reported as broken.
fn pythonic(text: &str, start: usize, at_end: bool) -> Start {
    let mut reader = Py {
        s: text.as_bytes(),
        pos: start + 1,
    };
    let mut calls = Vec::new();
    loop {
        reader.ws();
        let name_start = reader.pos;
        while reader
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
        {
            reader.pos += 1;
        }
        let name = &text[name_start..reader.pos];
        let first_char_ok = name
            .as_bytes()
            .first()
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_');
        match reader.peek() {
            None => return Start::Undecided,
            Some(b'(') if first_char_ok => reader.pos += 1,
            _ => return Start::No,
        }
        let args = match reader.kwargs() {
            Ok(args) => args,
            Err(Py::EOF) if !at_end => return Start::Undecided,
            Err(why) => {
                let span = Span {
                    start,
                    end: start + text[start..].trim_end().len(),
                };
                let message = format!(
                    "The call {name}(…) is not valid: {why}. Write it as [{name}(name=\"value\")]."
                );
                return Start::Call(CallRead {
                    end: text.len(),
                    call: Err(read::problem(ProblemKind::InvalidJson, message, span)),
                    extra: Vec::new(),
                });
            }
        };
        calls.push((name.to_owned(), args));
        reader.ws();
        match reader.peek() {
            None => return Start::Undecided,
            Some(b',') => reader.pos += 1,
            Some(b']') => {
                reader.pos += 1;
                break;
            }
            _ => return Start::No,
        }
    }
    let end = reader.pos;
    let span = Span { start, end };
    let mut calls = calls.into_iter();
    let (tool, args) = calls.next().expect("the loop reads a call before it ends");
    let extra = calls
        .map(|(name, _)| read::extra_call_problem(Some(&name), span))
        .collect();
    Start::Call(CallRead {
        end,
        call: Ok(RawCall {
            tool,
            args,
            reasoning: None,
            dialect: Dialect::Pythonic,
            raw: text[start..end].to_owned(),
            span,
        }),
        extra,
    })
}

/// A reader of Python call arguments: keyword arguments whose values are literals.
struct Py<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Py<'_> {
    /// The text ended inside the call.
    const EOF: &'static str = "the call is not finished";

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8, what: &'static str) -> Result<(), &'static str> {
        self.ws();
        match self.peek() {
            None => Err(Self::EOF),
            Some(b) if b == byte => {
                self.pos += 1;
                Ok(())
            }
            Some(_) => Err(what),
        }
    }

    /// `key=value, …)` after the opening parenthesis.
    fn kwargs(&mut self) -> Result<Value, &'static str> {
        let mut args = Map::new();
        loop {
            self.ws();
            match self.peek() {
                None => return Err(Self::EOF),
                Some(b')') => {
                    self.pos += 1;
                    return Ok(Value::Object(args));
                }
                _ => {}
            }
            let key_start = self.pos;
            while self
                .peek()
                .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
            {
                self.pos += 1;
            }
            if self.pos == key_start {
                return Err("arguments must be given by name (name=value)");
            }
            let key = String::from_utf8_lossy(&self.s[key_start..self.pos]).into_owned();
            self.expect(b'=', "arguments must be given by name (name=value)")?;
            let value = self.value()?;
            args.insert(key, value);
            self.ws();
            match self.peek() {
                None => return Err(Self::EOF),
                Some(b',') => self.pos += 1,
                Some(b')') => {}
                Some(_) => return Err("arguments must be separated by commas"),
            }
        }
    }

    /// A Python literal: a string, a number, True/False/None, a list or a dict.
    fn value(&mut self) -> Result<Value, &'static str> {
        self.ws();
        match self.peek() {
            None => Err(Self::EOF),
            Some(q @ (b'"' | b'\'')) => self.string(q).map(Value::String),
            Some(b'[') => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    self.ws();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        return Ok(Value::Array(items));
                    }
                    items.push(self.value()?);
                    self.ws();
                    match self.peek() {
                        None => return Err(Self::EOF),
                        Some(b',') => self.pos += 1,
                        Some(b']') => {}
                        Some(_) => return Err("list items must be separated by commas"),
                    }
                }
            }
            Some(b'{') => {
                self.pos += 1;
                let mut object = Map::new();
                loop {
                    self.ws();
                    match self.peek() {
                        None => return Err(Self::EOF),
                        Some(b'}') => {
                            self.pos += 1;
                            return Ok(Value::Object(object));
                        }
                        Some(q @ (b'"' | b'\'')) => {
                            let key = self.string(q)?;
                            self.expect(b':', "a dict key must be followed by a colon")?;
                            object.insert(key, self.value()?);
                        }
                        Some(_) => return Err("dict keys must be strings"),
                    }
                    self.ws();
                    match self.peek() {
                        None => return Err(Self::EOF),
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {}
                        Some(_) => return Err("dict entries must be separated by commas"),
                    }
                }
            }
            Some(_) => self.word(),
        }
    }

    /// A quoted string with Python's common escapes.
    fn string(&mut self, quote: u8) -> Result<String, &'static str> {
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return Err(Self::EOF),
                Some(b) if b == quote => {
                    self.pos += 1;
                    return String::from_utf8(out).map_err(|_| "a string is not valid UTF-8");
                }
                Some(b'\\') => {
                    let Some(&escaped) = self.s.get(self.pos + 1) else {
                        return Err(Self::EOF);
                    };
                    out.push(match escaped {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'r' => b'\r',
                        other => other,
                    });
                    self.pos += 2;
                }
                Some(b) => {
                    out.push(b);
                    self.pos += 1;
                }
            }
        }
    }

    /// A number, True, False or None.
    fn word(&mut self) -> Result<Value, &'static str> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+' | b'_'))
        {
            self.pos += 1;
        }
        if self.pos == self.s.len() {
            return Err(Self::EOF);
        }
        let word = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
        match word {
            "True" | "true" => Ok(Value::Bool(true)),
            "False" | "false" => Ok(Value::Bool(false)),
            "None" | "null" => Ok(Value::Null),
            _ => serde_json::from_str::<serde_json::Number>(word)
                .map(Value::Number)
                .map_err(|_| {
                    "a value must be a string, a number, True, False, None, a list or a dict"
                }),
        }
    }
}
