//! One line of a streamed chat completion, and what it means.
//!
//! OpenAI-compatible servers send each chunk of a streamed reply as a server-sent event whose
//! single `data:` line holds a JSON object, and end with `data: [DONE]`. Blank lines separate
//! events; comments (`: ping`) and other fields (`event:`, `id:`) carry nothing this backend
//! needs. Every server this is for puts a whole chunk on one line, so lines are read one by one
//! and multi-line `data` events are not joined.

use crate::errors::{error_in, snippet};
use serde::Deserialize;
use serde_json::Value;

/// What one line of the stream says.
#[derive(Debug, PartialEq)]
pub(crate) enum Line {
    Chunk(Chunk),
    /// `data: [DONE]`: the reply is complete.
    Done,
    /// The server reported a failure inside the stream (e.g. the context is full).
    ServerError(String),
    /// A `data:` line that is not a chunk, described for the error if nothing valid arrives.
    Malformed(String),
    /// Blank lines, comments and fields other than `data`.
    Other,
}

/// One chunk of the reply.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Chunk {
    /// New text of the first choice; empty when the chunk carries none.
    pub content: String,
    /// Set on the last chunk: `"stop"`, `"length"`, …
    pub finish_reason: Option<String>,
    pub usage: Option<Usage>,
    /// The pieces of native tool calls this chunk carries, as the server sent them (each with
    /// its `index`; the id, name and arguments arrive in parts across chunks).
    pub tool_calls: Vec<Value>,
    /// New text of the model's thinking, which a reasoning model's server sends apart from the
    /// reply (`reasoning_content`, or `reasoning`).
    pub reasoning: String,
}

/// Token counts, when the server reports them: as OpenAI's `usage` (Ollama, LM Studio) or as
/// llama-server's `timings`, which it sends instead unless asked for usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Usage {
    /// Prompt tokens the server had to evaluate: the prompt less what it reused from its cache.
    pub evaluated: Option<usize>,
    pub generated: Option<usize>,
}

#[derive(Deserialize)]
struct WireChunk {
    choices: Option<Vec<WireChoice>>,
    usage: Option<WireUsage>,
    timings: Option<WireTimings>,
}

#[derive(Deserialize)]
struct WireChoice {
    delta: Option<WireDelta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireDelta {
    content: Option<String>,
    tool_calls: Option<Vec<Value>>,
    reasoning_content: Option<String>,
    reasoning: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    prompt_tokens: Option<usize>,
    completion_tokens: Option<usize>,
    prompt_tokens_details: Option<WirePromptDetails>,
}

#[derive(Deserialize)]
struct WirePromptDetails {
    cached_tokens: Option<usize>,
}

/// llama-server's counts: `prompt_n` is already the prompt less its cached part.
#[derive(Deserialize)]
struct WireTimings {
    prompt_n: Option<usize>,
    predicted_n: Option<usize>,
}

/// Reads one line (with or without its line ending).
pub(crate) fn parse_line(line: &str) -> Line {
    let line = line.trim_end_matches(['\r', '\n']);
    let Some(data) = line.strip_prefix("data:") else {
        return Line::Other;
    };
    let data = data.trim();
    if data == "[DONE]" {
        return Line::Done;
    }
    let value: Value = match serde_json::from_str(data) {
        Ok(value) => value,
        Err(_) => return Line::Malformed(format!("not JSON: {}", snippet(data))),
    };
    if let Some(message) = error_in(&value) {
        return Line::ServerError(message);
    }
    let chunk: WireChunk = match serde_json::from_value(value) {
        Ok(chunk) => chunk,
        Err(e) => return Line::Malformed(format!("{e}: {}", snippet(data))),
    };
    let Some(choices) = chunk.choices else {
        return Line::Malformed(format!("no \"choices\": {}", snippet(data)));
    };
    let first = choices.into_iter().next();
    let (delta, finish_reason) = match first {
        Some(choice) => (choice.delta, choice.finish_reason),
        None => (None, None),
    };
    let from_usage = chunk.usage.map(|u| Usage {
        evaluated: u.prompt_tokens.map(|prompt| {
            let cached = u
                .prompt_tokens_details
                .and_then(|d| d.cached_tokens)
                .unwrap_or(0);
            prompt.saturating_sub(cached)
        }),
        generated: u.completion_tokens,
    });
    let from_timings = chunk.timings.map(|t| Usage {
        evaluated: t.prompt_n,
        generated: t.predicted_n,
    });
    let (content, tool_calls, reasoning) = match delta {
        Some(d) => (
            d.content.unwrap_or_default(),
            d.tool_calls.unwrap_or_default(),
            d.reasoning_content.or(d.reasoning).unwrap_or_default(),
        ),
        None => Default::default(),
    };
    Line::Chunk(Chunk {
        content,
        finish_reason,
        usage: from_usage.or(from_timings),
        tool_calls,
        reasoning,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(content: &str, finish_reason: Option<&str>) -> Line {
        Line::Chunk(Chunk {
            content: content.to_string(),
            finish_reason: finish_reason.map(str::to_string),
            ..Chunk::default()
        })
    }

    #[test]
    fn reads_content_deltas_and_the_end() {
        assert_eq!(
            parse_line("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}\r\n"),
            chunk("Hi", None)
        );
        assert_eq!(
            parse_line(
                "data:{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":null}}]}"
            ),
            chunk("", None)
        );
        assert_eq!(
            parse_line("data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}"),
            chunk("", Some("length"))
        );
        assert_eq!(parse_line("data: [DONE]"), Line::Done);
    }

    #[test]
    fn ignores_what_is_not_data() {
        for line in ["", "\r\n", ": keep-alive", "event: message", "id: 7"] {
            assert_eq!(parse_line(line), Line::Other, "{line:?}");
        }
    }

    #[test]
    fn reports_bad_data_and_server_errors() {
        assert!(
            matches!(parse_line("data: {\"choi"), Line::Malformed(why) if why.starts_with("not JSON"))
        );
        assert!(
            matches!(parse_line("data: {\"id\": 1}"), Line::Malformed(why) if why.contains("choices"))
        );
        assert!(matches!(
            parse_line("data: {\"choices\": 3}"),
            Line::Malformed(_)
        ));
        assert_eq!(
            parse_line("data: {\"error\":{\"code\":400,\"message\":\"context full\"}}"),
            Line::ServerError("context full".to_string())
        );
    }

    #[test]
    fn keeps_tool_call_pieces_and_thinking_apart_from_the_text() {
        let line = r#"data: {"choices":[{"delta":{"content":null,"reasoning_content":"Hmm.","tool_calls":[{"index":0,"id":"c1","function":{"name":"read_file","arguments":"{\"pa"}}]}}]}"#;
        let Line::Chunk(chunk) = parse_line(line) else {
            panic!("not a chunk");
        };
        assert_eq!(chunk.content, "");
        assert_eq!(chunk.reasoning, "Hmm.");
        assert_eq!(chunk.tool_calls.len(), 1);
        assert_eq!(chunk.tool_calls[0]["function"]["arguments"], "{\"pa");
        let ollama = r#"data: {"choices":[{"delta":{"reasoning":"Let me see."}}]}"#;
        let Line::Chunk(chunk) = parse_line(ollama) else {
            panic!("not a chunk");
        };
        assert_eq!(chunk.reasoning, "Let me see.");
    }

    #[test]
    fn counts_tokens_less_the_cached_prompt() {
        let line = "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":120,\"completion_tokens\":9,\"prompt_tokens_details\":{\"cached_tokens\":100}}}";
        let Line::Chunk(chunk) = parse_line(line) else {
            panic!("not a chunk");
        };
        assert_eq!(
            chunk.usage,
            Some(Usage {
                evaluated: Some(20),
                generated: Some(9)
            })
        );
    }

    #[test]
    fn reads_llama_server_timings_as_counts() {
        let line = "data: {\"choices\":[{\"finish_reason\":\"stop\",\"index\":0,\"delta\":{}}],\"timings\":{\"cache_n\":30,\"prompt_n\":12,\"prompt_ms\":50.1,\"predicted_n\":7,\"predicted_ms\":80.2}}";
        let Line::Chunk(chunk) = parse_line(line) else {
            panic!("not a chunk");
        };
        assert_eq!(chunk.finish_reason.as_deref(), Some("stop"));
        assert_eq!(
            chunk.usage,
            Some(Usage {
                evaluated: Some(12),
                generated: Some(7)
            })
        );
    }
}
