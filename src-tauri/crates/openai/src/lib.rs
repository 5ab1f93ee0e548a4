//! A [`Model`] backed by an OpenAI-compatible chat server: llama-server, Ollama, LM Studio.
//!
//! Calls take one of two paths ([`CallMode`]). *Native*: the tools go as the API's `tools`, the
//! server's template shows them to the model and its parser returns `tool_calls`, which are
//! assembled here (see `native.rs`). *Text*: Lantern's own protocol (`<TOOL_CALL>…</TOOL_CALL>`,
//! described in the system prompt), which works with any server, whether or not it supports
//! tool calling. [`OpenAiModel::detect_call_path`] asks the server which one it can do. The
//! reply is streamed (`"stream": true`, server-sent events) and each piece goes to the agent
//! loop as it arrives, so the loop can stop the generation as soon as a call is complete.
//!
//! Servers leave the stop sequence out of the text; the closing tag Lantern's parser needs is
//! put back (see `stop.rs`). Only plain `http://` is spoken: the servers this is for run on the
//! user's own machine, and no TLS stack is built for them.

mod errors;
mod native;
mod server_facts;
mod sse;
mod stop;

use lantern_core::intent::{first_step_must_call, FirstStepRules};
use lantern_core::model::{
    CallPath, FinishReason, Flow, GenerateRequest, Generation, GenerationOptions, Message, Model,
    ModelError, Role, ToolChoice,
};
use lantern_core::protocol::markers::text_protocol_messages;
use lantern_core::protocol::native::{native_messages, native_tools, Arguments};
use lantern_core::tools::CallProbe;
use native::CallAssembler;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sse::{Line, Usage};
use std::io::{BufRead, BufReader, Read};
use std::time::Duration;

/// Where the server is and how to ask it.
#[derive(Debug, Clone)]
pub struct OpenAiOptions {
    /// The API root, e.g. `http://127.0.0.1:8080/v1` (llama-server) or
    /// `http://127.0.0.1:11434/v1` (Ollama); `/chat/completions` and `/models` are appended.
    pub base_url: String,
    /// The model's name as the server knows it (see [`OpenAiModel::list_models`]).
    pub model: String,
    /// Sent as `Authorization: Bearer …` when set.
    pub api_key: Option<String>,
    pub temperature: f32,
    /// The most tokens one reply may have; a request asking for more is capped here.
    pub max_tokens: usize,
    /// The longest the server may stay silent: while connecting, while it reads the prompt
    /// before the reply begins, and between two pieces of the reply. A whole reply may take
    /// longer, so slow machines are not cut off mid-answer.
    pub timeout: Duration,
    /// Which path tool calls take.
    pub calls: CallMode,
    /// Which first steps are made calls (the message names a file or folder of the workspace,
    /// something it defines, or the project), as the generation options say.
    pub first_step: FirstStepRules,
}

/// How tool calls travel between Lantern and the server.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CallMode {
    /// Native when the server shows that it can (it is asked when Lantern connects),
    /// otherwise the text protocol.
    #[default]
    Auto,
    /// Always the API's `tools` and `tool_calls`.
    Native,
    /// Always Lantern's `<TOOL_CALL>` text protocol.
    Text,
}

/// What [`OpenAiModel::detect_call_path`] found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Detection {
    pub path: CallPath,
    /// Why, in words for the Model page and `lantern probe`.
    pub why: String,
}

impl OpenAiOptions {
    /// Options with defaults suited to tool use: a low temperature keeps calls well-formed, and
    /// the timeout leaves a CPU-only server time to read a long prompt.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        OpenAiOptions {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            temperature: 0.2,
            max_tokens: 4096,
            timeout: Duration::from_secs(300),
            calls: CallMode::Auto,
            first_step: FirstStepRules::of(&GenerationOptions::default()),
        }
    }
}

/// A model on an OpenAI-compatible server. Keeps one HTTP agent, so the connection is reused
/// between the steps of a turn when the server allows it.
pub struct OpenAiModel {
    options: OpenAiOptions,
    agent: ureq::Agent,
    /// The path calls take now: [`CallMode::Native`] from the start, [`CallMode::Auto`] once
    /// detection found the server able to, otherwise text.
    path: CallPath,
    /// The server's context, once asked (see [`Model::context_size`]).
    context: Option<Option<usize>>,
}

/// The body of `POST /chat/completions`.
#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: Vec<Value>,
    stream: bool,
    temperature: f32,
    max_tokens: usize,
    stop: &'a [&'a str],
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'static str>,
    /// `false` whenever tools are sent: one call per reply is the rule, and a server that
    /// honours this stops after the first call instead of generating more.
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
}

/// The body of `GET /models`.
#[derive(Deserialize)]
struct ModelList {
    data: Vec<ModelEntry>,
}

#[derive(Deserialize)]
struct ModelEntry {
    id: String,
}

/// The body of Ollama's `GET /api/tags`.
#[derive(Deserialize)]
struct OllamaTags {
    models: Vec<OllamaModel>,
}

#[derive(Deserialize)]
struct OllamaModel {
    name: String,
}

/// Added to the last user message (of a copy of the conversation) for [`ToolChoice::Required`]:
/// a server without grammars cannot force a call, so the model is asked for one.
const ASK_FOR_CALL: &str = "Reply with a tool call.";
/// Added likewise for [`ToolChoice::None`].
const ASK_FOR_WORDS: &str = "Answer in plain words without a tool call.";

/// Longest line accepted from the stream; a chunk is a few hundred bytes, so anything near this
/// is not a chat completion stream and must not grow memory without bound.
const MAX_LINE_BYTES: u64 = 1 << 20;

/// Largest error or model-list body read.
const MAX_BODY_BYTES: u64 = 1 << 20;

/// Bytes of reply (text, thinking, call arguments) allowed per token asked for: a token is a
/// few bytes, so a server that streams far more than that is not honouring `max_tokens`.
const BYTES_PER_TOKEN: usize = 32;

/// What a reply's stream held.
#[derive(Default)]
struct Streamed {
    text: String,
    thinking: String,
    /// The pieces of a native tool call, when the reply makes one.
    calls: CallAssembler,
    usage: Option<Usage>,
    chunks: usize,
    /// Why the first line that was no chunk was not one, for the error when none came.
    first_bad_line: Option<String>,
}

/// How the stream ended, before it becomes a [`FinishReason`].
enum Ending {
    /// `finish_reason` as the server gave it.
    Finished(String),
    /// `data: [DONE]`, or the connection closed, without a finish reason.
    StreamEnded,
    CallerStopped,
    Cancelled,
    /// More was streamed than the tokens asked for can hold.
    OverBudget,
}

/// Why a request got no stream.
enum Refusal {
    /// The server answered with an error status; `message` says it in words.
    Status { status: u16, message: String },
    /// It could not be reached, or answered with something that is not a stream.
    Other(String),
}

impl OpenAiModel {
    /// Checks the options; does not contact the server (the first request does).
    pub fn new(mut options: OpenAiOptions) -> Result<Self, ModelError> {
        let base_url = options.base_url.trim().trim_end_matches('/').to_string();
        if base_url.starts_with("https://") {
            return Err(ModelError(format!(
                "{base_url}: this build speaks plain http:// only, which is what local model servers (llama-server, Ollama, LM Studio) use."
            )));
        }
        if !base_url.starts_with("http://") {
            return Err(ModelError(format!(
                "\"{base_url}\" is not a server address: give the API root, e.g. http://127.0.0.1:8080/v1"
            )));
        }
        if options.model.trim().is_empty() {
            return Err(ModelError(
                "Name the model to use, as the server lists it.".to_string(),
            ));
        }
        options.base_url = base_url;
        let path = match options.calls {
            CallMode::Native => CallPath::Native,
            CallMode::Auto | CallMode::Text => CallPath::Text,
        };
        let agent = ureq::Agent::config_builder()
            // Error statuses are read like any answer, so their bodies can be quoted.
            .http_status_as_error(false)
            // The server is the user's own: a proxy from the environment (HTTP_PROXY) would
            // carry the conversation elsewhere, and usually cannot reach 127.0.0.1 anyway.
            .proxy(None)
            .timeout_connect(Some(options.timeout))
            .timeout_recv_response(Some(options.timeout))
            .timeout_per_read(Some(options.timeout))
            .build()
            .into();
        Ok(OpenAiModel {
            options,
            agent,
            path,
            context: None,
        })
    }

    /// Asks the server whether it returns native tool calls, and takes that path if it does
    /// (in [`CallMode::Auto`]; a forced mode stays as it is, and the detection only reports).
    /// The question is one short request with a single tool the model is required to call: a
    /// server whose template knows tools answers with `tool_calls`, one without that support
    /// answers in prose or refuses the `tools` field.
    pub fn detect_call_path(&mut self) -> Result<Detection, ModelError> {
        let probe = CallProbe::clock();
        // No system message and greedy decoding: the plainest request a tool-aware template
        // renders, answered the same way every time.
        let messages = [Message::new(Role::User, probe.question())];
        let cancel = lantern_core::model::CancelToken::new();
        let request = GenerateRequest::new(&messages, 64, &cancel)
            .with_tools(std::slice::from_ref(&probe.tool))
            .with_tool_choice(ToolChoice::Required);
        let temperature = std::mem::replace(&mut self.options.temperature, 0.0);
        let opened = self.open_stream(&request, CallPath::Native);
        self.options.temperature = temperature;
        let found = match opened {
            Ok(stream) => self
                .read_reply(stream, &request, CallPath::Native, &mut |_| Flow::Continue)
                .map(|g| !g.native_deltas.is_empty()),
            // 401, 403 and 404 say the key or the model is wrong, which no path mends.
            Err(Refusal::Status { status, message })
                if (400..500).contains(&status) && ![401, 403, 404].contains(&status) =>
            {
                let detection = Detection {
                    path: CallPath::Text,
                    why: format!("the server refused a request with tools ({status}: {message}); Lantern's text protocol is used"),
                };
                self.take(&detection);
                return Ok(detection);
            }
            Err(Refusal::Status { message, .. }) | Err(Refusal::Other(message)) => {
                return Err(ModelError(message))
            }
        }?;
        let detection = if found {
            Detection {
                path: CallPath::Native,
                why: "the server returned a native tool call for a declared tool".to_string(),
            }
        } else {
            Detection {
                path: CallPath::Text,
                why: "the server answered a request that required a tool call without one (its chat template has no tool support); Lantern's text protocol is used".to_string(),
            }
        };
        self.take(&detection);
        Ok(detection)
    }

    /// Follows a detection when the mode leaves the choice to it.
    fn take(&mut self, detection: &Detection) {
        if self.options.calls == CallMode::Auto {
            self.path = detection.path;
        }
    }

    /// The names of the models the server offers: `GET {base_url}/models`, or, where that is
    /// not found, Ollama's own list (`GET /api/tags` at the server's root).
    pub fn list_models(&self) -> Result<Vec<String>, ModelError> {
        let server = &self.options.base_url;
        let (status, body) = self.get(&format!("{server}/models"))?;
        if status == 404 {
            let root = server.trim_end_matches("/v1");
            if let Ok((200, tags)) = self.get(&format!("{root}/api/tags")) {
                if let Ok(list) = serde_json::from_str::<OllamaTags>(&tags) {
                    return Ok(list.models.into_iter().map(|m| m.name).collect());
                }
            }
        }
        if status != 200 {
            return Err(errors::status(server, status, &body, None));
        }
        let list: ModelList = serde_json::from_str(&body).map_err(|_| {
            ModelError(format!(
                "The model server at {server} answered /models with something that is not a model list: {}",
                errors::snippet(&body)
            ))
        })?;
        Ok(list.data.into_iter().map(|m| m.id).collect())
    }

    /// A short GET (with the key, when there is one): its status and body.
    fn get(&self, url: &str) -> Result<(u16, String), ModelError> {
        let server = &self.options.base_url;
        let mut request = self.agent.get(url);
        if let Some(key) = &self.options.api_key {
            request = request.header("Authorization", format!("Bearer {key}"));
        }
        let response = request
            .call()
            .map_err(|e| errors::request_failed(server, e, self.options.timeout))?;
        let status = response.status().as_u16();
        let body = read_body(response.into_body())
            .map_err(|e| errors::stream_broke(server, e, self.options.timeout))?;
        Ok((status, body))
    }

    /// The request's tool choice, made `Required` for the first step of a turn whose message
    /// names a file or folder of the workspace, something it defines, or the project itself: a
    /// server's model, small ones above all, often answers such a question from memory instead
    /// of reading the file.
    fn tool_choice(&self, request: &GenerateRequest<'_>) -> ToolChoice {
        let first_step = request
            .messages
            .last()
            .is_some_and(|m| m.role == Role::User);
        let named = self.options.first_step;
        let must_call = || first_step_must_call(request, &request.question(), named).is_some();
        match request.tool_choice {
            ToolChoice::Auto if first_step && !request.tools.is_empty() && must_call() => {
                ToolChoice::Required
            }
            choice => choice,
        }
    }

    /// Sends the chat request, the tools declared when calls are native, and returns the open
    /// event stream.
    fn open_stream(
        &self,
        request: &GenerateRequest<'_>,
        path: CallPath,
    ) -> Result<impl BufRead, Refusal> {
        let server = &self.options.base_url;
        let timeout = self.options.timeout;
        let choice = self.tool_choice(request);
        let (messages, tools, tool_choice) = match path {
            CallPath::Native if !request.tools.is_empty() => (
                native_messages(request.messages, Arguments::JsonString),
                Some(native_tools(request.tools)),
                Some(native::wire_choice(choice)),
            ),
            CallPath::Native => (
                native_messages(request.messages, Arguments::JsonString),
                None,
                None,
            ),
            CallPath::Text => (
                steer(request.messages, choice)
                    .iter()
                    .map(|m| serde_json::to_value(m).expect("a message serialises"))
                    .collect(),
                None,
                None,
            ),
        };
        let body = serde_json::to_string(&ChatRequest {
            model: &self.options.model,
            messages,
            stream: true,
            temperature: self.options.temperature,
            max_tokens: request.max_tokens.min(self.options.max_tokens),
            stop: request.stop,
            parallel_tool_calls: tools.as_ref().map(|_| false),
            tools,
            tool_choice,
        })
        .map_err(|e| Refusal::Other(format!("Could not write the chat request: {e}")))?;
        let mut post = self
            .agent
            .post(format!("{server}/chat/completions"))
            .header("Accept", "text/event-stream")
            .content_type("application/json");
        if let Some(key) = &self.options.api_key {
            post = post.header("Authorization", format!("Bearer {key}"));
        }
        let response = post
            .send(body)
            .map_err(|e| Refusal::Other(errors::request_failed(server, e, timeout).0))?;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let body = response.into_body();
        let broke = |e| Refusal::Other(errors::stream_broke(server, e, timeout).0);
        if status != 200 {
            let text = read_body(body).map_err(broke)?;
            return Err(Refusal::Status {
                status,
                message: errors::status(server, status, &text, Some(&self.options.model)).0,
            });
        }
        if !content_type.is_empty() && !content_type.starts_with("text/event-stream") {
            let text = read_body(body).map_err(broke)?;
            return Err(Refusal::Other(
                errors::not_a_stream(server, &content_type, &text).0,
            ));
        }
        Ok(BufReader::new(body.into_reader()))
    }

    /// Reads the event stream until it ends, the caller stops, or the token is cancelled,
    /// passing each piece of text on. Returning drops the reader, which closes the connection
    /// when the reply was not read to its end, so the server stops generating.
    ///
    /// Native tool-call pieces are assembled as they come and returned beside the text, as
    /// calls; thinking is kept apart. A reply longer than
    /// [`BYTES_PER_TOKEN`] bytes per token asked for is cut there and ends as `Length`.
    fn read_reply(
        &self,
        stream: impl BufRead,
        request: &GenerateRequest<'_>,
        path: CallPath,
        on_text: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Generation, ModelError> {
        let (mut streamed, ending) = self.read_stream(stream, request, path, on_text)?;
        if streamed.chunks == 0 && !matches!(ending, Ending::Cancelled) {
            let server = &self.options.base_url;
            return Err(errors::no_reply(server, streamed.first_bad_line.as_deref()));
        }
        let native_call =
            !streamed.calls.is_empty() && !matches!(ending, Ending::Cancelled | Ending::OverBudget);
        let finish = match ending {
            Ending::Cancelled => FinishReason::Cancelled,
            Ending::OverBudget => FinishReason::Length,
            // The call is complete: the same place a stop sequence would have ended the reply.
            _ if native_call => FinishReason::Stop,
            // The callback stops at the end of a call: the same place a stop sequence would.
            Ending::CallerStopped => FinishReason::Stop,
            Ending::Finished(reason) if reason == "length" => FinishReason::Length,
            Ending::Finished(reason) if reason == "stop" => {
                match stop::unclosed_tag(&streamed.text, request.stop) {
                    Some(closer) => {
                        streamed.text.push_str(closer);
                        on_text(closer);
                        FinishReason::Stop
                    }
                    None => FinishReason::EndOfText,
                }
            }
            Ending::Finished(_) | Ending::StreamEnded => FinishReason::EndOfText,
        };
        let mut generation = Generation::text(streamed.text, finish);
        generation.thinking = streamed.thinking;
        if native_call {
            generation.api_calls = streamed.calls.calls();
            generation.native_deltas = streamed.calls.into_pieces();
        }
        if let Some(usage) = streamed.usage {
            generation.tokens_evaluated = usage.evaluated;
            generation.tokens_generated = usage.generated;
        }
        Ok(generation)
    }

    /// Reads the stream's lines until it ends, is cancelled, stopped or over the budget,
    /// passing the text on as it comes; what it held, and how it ended.
    fn read_stream(
        &self,
        mut stream: impl BufRead,
        request: &GenerateRequest<'_>,
        path: CallPath,
        on_text: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<(Streamed, Ending), ModelError> {
        let server = &self.options.base_url;
        let budget = request.max_tokens.min(self.options.max_tokens).max(1) * BYTES_PER_TOKEN;
        let mut got = Streamed::default();
        let mut line = Vec::new();
        let ending = loop {
            if request.cancel.is_cancelled() {
                break Ending::Cancelled;
            }
            line.clear();
            let read = (&mut stream)
                .take(MAX_LINE_BYTES)
                .read_until(b'\n', &mut line)
                .map_err(|e| errors::stream_broke(server, e, self.options.timeout))?;
            if read == 0 {
                break Ending::StreamEnded;
            }
            if read as u64 == MAX_LINE_BYTES && line.last() != Some(&b'\n') {
                return Err(ModelError(format!(
                    "The model server at {server} sent a line longer than {MAX_LINE_BYTES} bytes; that is not a chat completion stream."
                )));
            }
            let chunk = match sse::parse_line(&String::from_utf8_lossy(&line)) {
                Line::Other => continue,
                Line::Done => break Ending::StreamEnded,
                Line::ServerError(message) => {
                    return Err(ModelError(format!(
                        "The model server at {server} failed during the reply: {message}"
                    )))
                }
                Line::Malformed(why) => {
                    got.first_bad_line.get_or_insert(why);
                    continue;
                }
                Line::Chunk(chunk) => chunk,
            };
            got.chunks += 1;
            got.usage = chunk.usage.or(got.usage);
            got.thinking.push_str(&chunk.reasoning);
            if path == CallPath::Native {
                chunk
                    .tool_calls
                    .into_iter()
                    .for_each(|piece| got.calls.push(piece));
            }
            if got.text.len() + got.thinking.len() + got.calls.len() + chunk.content.len() > budget
            {
                break Ending::OverBudget;
            }
            if !chunk.content.is_empty() {
                got.text.push_str(&chunk.content);
                if on_text(&chunk.content) == Flow::Stop {
                    break Ending::CallerStopped;
                }
            }
            if let Some(reason) = chunk.finish_reason {
                break Ending::Finished(reason);
            }
        };
        Ok((got, ending))
    }
}

impl Model for OpenAiModel {
    fn name(&self) -> String {
        format!("openai:{}", self.options.model)
    }

    fn configure(&mut self, options: &GenerationOptions) {
        self.options.temperature = options.temperature;
        self.options.first_step = FirstStepRules::of(options);
    }

    fn call_path(&self) -> CallPath {
        self.path
    }

    fn count_tokens(&mut self, text: &str) -> Option<usize> {
        self.ask_token_count(text)
    }

    fn context_size(&mut self) -> Option<usize> {
        if self.context.is_none() {
            self.context = Some(self.ask_context_size());
        }
        self.context.flatten()
    }

    fn generate(
        &mut self,
        request: &GenerateRequest<'_>,
        on_text: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Generation, ModelError> {
        if request.cancel.is_cancelled() {
            return Ok(Generation::text("", FinishReason::Cancelled));
        }
        let stream = self
            .open_stream(request, self.path)
            .map_err(|refusal| match refusal {
                Refusal::Status { message, .. } | Refusal::Other(message) => ModelError(message),
            })?;
        self.read_reply(stream, request, self.path, on_text)
    }
}

/// The conversation as sent: in the text protocol (tool results as `TOOL_RESULT:` user text),
/// and for `Required` and `None` with an instruction at the end of the last user message. A
/// copy: the history the session keeps (and shows) is never changed.
fn steer(messages: &[Message], choice: ToolChoice) -> Vec<Message> {
    let mut copy = text_protocol_messages(messages);
    let instruction = match choice {
        ToolChoice::Auto => return copy,
        ToolChoice::Required => ASK_FOR_CALL,
        ToolChoice::None => ASK_FOR_WORDS,
    };
    match copy.iter_mut().rev().find(|m| m.role == Role::User) {
        Some(last) => {
            last.content.push_str("\n\n");
            last.content.push_str(instruction);
        }
        None => copy.push(Message::new(Role::User, instruction)),
    }
    copy
}

/// Reads a short body (an error or the model list) as text, bounded.
fn read_body(body: ureq::Body) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    body.into_reader()
        .take(MAX_BODY_BYTES)
        .read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_choice_changes_a_copy_of_the_last_user_message_only() {
        let history = vec![
            Message::new(Role::System, "tools"),
            Message::new(Role::User, "first"),
            Message::new(Role::Assistant, "ok"),
            Message::new(Role::User, "second"),
        ];
        assert_eq!(steer(&history, ToolChoice::Auto), history);
        let required = steer(&history, ToolChoice::Required);
        assert_eq!(required[3].content, "second\n\nReply with a tool call.");
        assert_eq!(required[1].content, "first");
        let none = steer(&history, ToolChoice::None);
        assert_eq!(
            none[3].content,
            "second\n\nAnswer in plain words without a tool call."
        );
        assert_eq!(history[3].content, "second");
    }

    #[test]
    fn tool_results_are_sent_as_text_protocol_user_messages() {
        let history = vec![
            Message::new(Role::User, "version?"),
            Message::assistant_call(
                "call-1",
                "<TOOL_CALL>{}</TOOL_CALL>",
                lantern_core::model::MadeCall::new("", serde_json::json!({})),
            ),
            Message::tool_result("call-1", serde_json::json!({"success": true}).into()),
        ];
        let sent = steer(&history, ToolChoice::None);
        assert_eq!(sent[2].role, Role::User);
        assert!(sent[2]
            .content
            .starts_with(r#"TOOL_RESULT: {"success":true}"#));
        assert!(sent[2].content.ends_with(ASK_FOR_WORDS));
        let body = serde_json::to_value(&sent).unwrap();
        assert_eq!(
            body[1],
            serde_json::json!({"role": "assistant", "content": "<TOOL_CALL>{}</TOOL_CALL>"})
        );
    }

    #[test]
    fn options_are_checked_before_any_request() {
        let model = OpenAiModel::new(OpenAiOptions::new("http://127.0.0.1:8080/v1/", "m")).unwrap();
        assert_eq!(model.options.base_url, "http://127.0.0.1:8080/v1");
        assert_eq!(model.name(), "openai:m");
        let https = OpenAiModel::new(OpenAiOptions::new("https://api.example.com/v1", "m"));
        assert!(https.err().unwrap().0.contains("plain http:// only"));
        let bare = OpenAiModel::new(OpenAiOptions::new("127.0.0.1:8080", "m"));
        assert!(bare.err().unwrap().0.contains("http://127.0.0.1:8080/v1"));
        let nameless = OpenAiModel::new(OpenAiOptions::new("http://127.0.0.1:8080/v1", " "));
        assert!(nameless.err().unwrap().0.contains("Name the model"));
    }
}
