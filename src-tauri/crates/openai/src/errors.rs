//! Failures in words for the user: what went wrong with the model server and what to try.
//!
//! These messages end up in the `turn_finished` event and on the terminal, so they name the
//! server, quote what it said, and suggest the likely fix.

use lantern_core::model::ModelError;
use serde_json::Value;
use std::io;
use std::time::Duration;

/// The server's own explanation in an error body: `{"error": {"message": …}}` (OpenAI,
/// llama-server, LM Studio), `{"error": "…"}` (Ollama), or else the start of the body's text.
pub(crate) fn server_message(body: &str) -> String {
    let said = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|value| error_in(&value))
        .unwrap_or_else(|| snippet(body));
    if said.is_empty() {
        "(no message)".to_string()
    } else {
        said
    }
}

/// The message of an `error` member, in either of the shapes servers use.
pub(crate) fn error_in(value: &Value) -> Option<String> {
    let error = value.get("error")?;
    error
        .as_str()
        .or_else(|| error.get("message")?.as_str())
        .map(str::to_string)
}

/// The start of a text on one line, short enough to quote in a message.
pub(crate) fn snippet(text: &str) -> String {
    const MAX_CHARS: usize = 200;
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

/// The request could not be sent or its answer not received.
pub(crate) fn request_failed(server: &str, error: ureq::Error, timeout: Duration) -> ModelError {
    ModelError(match &error {
        ureq::Error::Io(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
            format!("Could not reach the model server at {server}: is it running?")
        }
        ureq::Error::ConnectionFailed => {
            format!("Could not reach the model server at {server}: is it running?")
        }
        ureq::Error::HostNotFound => {
            format!("Could not find the host of the model server at {server}: check the base URL.")
        }
        ureq::Error::Timeout(_) => format!(
            "The model server at {server} did not answer within {} s.",
            timeout.as_secs()
        ),
        _ => format!("Could not talk to the model server at {server}: {error}."),
    })
}

/// Reading the streamed reply failed part way.
pub(crate) fn stream_broke(server: &str, error: io::Error, timeout: Duration) -> ModelError {
    ModelError(match ureq::Error::from(error) {
        ureq::Error::Timeout(_) => format!(
            "The model server at {server} sent nothing for {} s during the reply; gave up waiting.",
            timeout.as_secs()
        ),
        other => format!(
            "The connection to the model server at {server} broke during the reply: {other}."
        ),
    })
}

/// A status other than 200. `model` is the model asked for, when the request named one.
pub(crate) fn status(server: &str, status: u16, body: &str, model: Option<&str>) -> ModelError {
    let said = server_message(body);
    ModelError(match (status, model) {
        (401 | 403, _) => format!(
            "The model server at {server} refused the request ({status} {}): {said}. It needs a valid API key.",
            if status == 401 { "Unauthorized" } else { "Forbidden" }
        ),
        (404, Some(model)) => format!(
            "The model server at {server} answered 404 Not Found: {said}. Check that it serves the model \"{model}\" and that the base URL is its API root (usually ending in /v1)."
        ),
        (404, None) => format!(
            "The model server at {server} answered 404 Not Found: {said}. Check that the base URL is its API root (usually ending in /v1)."
        ),
        _ => format!("The model server at {server} answered {status}: {said}."),
    })
}

/// A 200 answer that is not an event stream, such as a whole JSON reply from a server that
/// ignores `"stream": true`, or a web page from something else listening on that port.
pub(crate) fn not_a_stream(server: &str, content_type: &str, body: &str) -> ModelError {
    ModelError(format!(
        "The model server at {server} did not stream its reply: it sent {content_type} (\"{}\") where an OpenAI-compatible server sends text/event-stream.",
        snippet(body)
    ))
}

/// The stream ended and nothing in it was a chunk of a reply.
pub(crate) fn no_reply(server: &str, first_bad_line: Option<&str>) -> ModelError {
    ModelError(match first_bad_line {
        Some(line) => format!(
            "The model server at {server} sent no readable part of a reply; the first unreadable line was: {line}"
        ),
        None => format!("The model server at {server} ended the reply without sending any of it."),
    })
}
