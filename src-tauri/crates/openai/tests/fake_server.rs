//! The backend against a real HTTP server on 127.0.0.1 that streams like llama-server: streaming,
//! stop-sequence restoration, stopping early, errors in words, and a whole agent turn.

mod support;

use lantern_core::agent::{Answer, FixedAnswer, Session, SessionOptions};
use lantern_core::event::{Event, FinishedReason};
use lantern_core::model::{
    CancelToken, FinishReason, Flow, GenerateRequest, Generation, Message, Model, ModelError, Role,
    ToolChoice,
};
use lantern_core::protocol::STOP_SEQUENCES;
use lantern_core::sandbox::Workspace;
use lantern_core::toolbox::Toolbox;
use serde_json::json;
use std::time::Duration;
use support::{FakeServer, Framing, Reply};

fn model(server: &FakeServer) -> lantern_openai::OpenAiModel {
    let mut options = lantern_openai::OpenAiOptions::new(&server.base_url, "smollm2");
    options.timeout = Duration::from_secs(10);
    lantern_openai::OpenAiModel::new(options).unwrap()
}

fn conversation() -> Vec<Message> {
    vec![
        Message::new(Role::System, "You have tools."),
        Message::new(Role::User, "What is in a.txt?"),
    ]
}

/// Runs one generation, returning its result and the pieces `on_text` received.
fn generate_with(
    model: &mut dyn Model,
    tool_choice: ToolChoice,
    cancel: &CancelToken,
    mut on_piece: impl FnMut(&str, usize) -> Flow,
) -> (Result<Generation, ModelError>, Vec<String>) {
    let messages = conversation();
    let request = GenerateRequest::new(&messages, 256, cancel)
        .with_stop(STOP_SEQUENCES)
        .with_tool_choice(tool_choice);
    let mut pieces = Vec::new();
    let result = model.generate(&request, &mut |piece| {
        pieces.push(piece.to_string());
        on_piece(piece, pieces.len())
    });
    (result, pieces)
}

fn generate(model: &mut dyn Model) -> (Result<Generation, ModelError>, Vec<String>) {
    generate_with(model, ToolChoice::Auto, &CancelToken::new(), |_, _| {
        Flow::Continue
    })
}

#[test]
fn text_streams_in_pieces_from_an_openai_shaped_request() {
    let server = FakeServer::start(vec![
        Reply::stream(&["The ", "answer ", "is 42."], "stop").paced(Duration::from_millis(5))
    ]);
    let mut options = lantern_openai::OpenAiOptions::new(&server.base_url, "smollm2");
    options.api_key = Some("sk-local".to_string());
    options.max_tokens = 100;
    let mut model = lantern_openai::OpenAiModel::new(options).unwrap();

    let (result, pieces) = generate(&mut model);
    let generation = result.unwrap();
    assert_eq!(pieces, ["The ", "answer ", "is 42."]);
    assert_eq!(generation.text, "The answer is 42.");
    assert_eq!(generation.finish, FinishReason::EndOfText);
    assert!(!generation.constrained);
    assert_eq!(generation.call_confidence, None);
    assert_eq!(generation.tokens_generated, Some(3));
    assert_eq!(generation.tokens_evaluated, Some(30));

    let served = server.next_served();
    let request = &served.request;
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("authorization"), Some("Bearer sk-local"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.body["model"], "smollm2");
    assert_eq!(request.body["stream"], true);
    assert_eq!(request.body["temperature"], 0.2);
    assert_eq!(request.body["max_tokens"], 100, "capped by the options");
    assert_eq!(request.body["stop"], json!(STOP_SEQUENCES));
    assert_eq!(
        request.body["messages"],
        json!([
            {"role": "system", "content": "You have tools."},
            {"role": "user", "content": "What is in a.txt?"}
        ])
    );
    assert!(
        request.body.get("tools").is_none(),
        "the protocol is in the prompt"
    );
    server.finish();
}

#[test]
fn a_stop_sequence_the_server_stripped_is_put_back() {
    let call = [
        "Let me look.\n",
        "<TOOL_CALL>\n",
        "{\"tool\": \"read_file\", \"args\": {\"path\": \"a.txt\"}}\n",
    ];
    let server = FakeServer::start(vec![
        Reply::stream(&call, "stop"),
        Reply::stream(&["<TOOL_CALL>\n{\"tool\": \"read_f"], "length"),
        Reply::stream(&["<tool_call>{\"name\": \"list_files\"}"], "stop"),
    ]);
    let mut model = model(&server);

    let (result, pieces) = generate(&mut model);
    let generation = result.unwrap();
    assert_eq!(generation.finish, FinishReason::Stop);
    assert!(generation.text.ends_with("\"a.txt\"}}\n</TOOL_CALL>"));
    assert_eq!(
        pieces.last().unwrap(),
        "</TOOL_CALL>",
        "the parser sees it too"
    );

    // Cut off by the token limit: nothing was stopped, nothing is added.
    let generation = generate(&mut model).0.unwrap();
    assert_eq!(generation.finish, FinishReason::Length);
    assert!(generation.text.ends_with("read_f"));

    // Dialects are closed with their own tag.
    let generation = generate(&mut model).0.unwrap();
    assert!(generation.text.ends_with("}</tool_call>"));
    server.finish();
}

#[test]
fn flow_stop_ends_the_generation_and_closes_the_connection() {
    let pieces: Vec<String> = (0..100).map(|i| format!("word{i} ")).collect();
    let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let server = FakeServer::start(vec![
        Reply::stream(&pieces, "stop").paced(Duration::from_millis(20))
    ]);
    let mut model = model(&server);
    let (result, seen) = generate_with(
        &mut model,
        ToolChoice::Auto,
        &CancelToken::new(),
        |_, count| {
            if count == 3 {
                Flow::Stop
            } else {
                Flow::Continue
            }
        },
    );
    let generation = result.unwrap();
    assert_eq!(seen.len(), 3);
    assert_eq!(generation.text, "word0 word1 word2 ");
    assert_eq!(generation.finish, FinishReason::Stop);

    let served = server.next_served();
    assert!(served.client_closed, "the server noticed the client left");
    // Paced over two seconds, the stream was cut long before its end (how soon depends on the
    // machine's load, so only "before the end" is asserted).
    assert!(
        served.parts_written < 103,
        "the server wrote all {} of 103 parts",
        served.parts_written
    );
    server.finish();
}

#[test]
fn the_cancel_token_stops_between_lines() {
    let server = FakeServer::start(vec![Reply::stream(&["a", "b", "c", "d"], "stop")]);
    let mut model = model(&server);
    let cancel = CancelToken::new();
    let (result, seen) = generate_with(&mut model, ToolChoice::Auto, &cancel, |_, count| {
        if count == 2 {
            cancel.cancel();
        }
        Flow::Continue
    });
    let generation = result.unwrap();
    assert_eq!(seen, ["a", "b"]);
    assert_eq!(generation.text, "ab");
    assert_eq!(generation.finish, FinishReason::Cancelled);
    server.finish();

    // Cancelled before it began: no request is made (no server is running any more).
    let (result, seen) =
        generate_with(&mut model, ToolChoice::Auto, &cancel, |_, _| Flow::Continue);
    assert_eq!(result.unwrap().finish, FinishReason::Cancelled);
    assert!(seen.is_empty());
}

#[test]
fn a_server_that_is_not_running_is_named() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let mut model =
        lantern_openai::OpenAiModel::new(lantern_openai::OpenAiOptions::new(&base_url, "m"))
            .unwrap();
    let error = generate(&mut model).0.unwrap_err();
    assert_eq!(
        error.0,
        format!("Could not reach the model server at {base_url}: is it running?")
    );
    assert_eq!(
        model.list_models().unwrap_err().0,
        format!("Could not reach the model server at {base_url}: is it running?")
    );
}

#[test]
fn http_errors_quote_the_server() {
    let server = FakeServer::start(vec![
        // llama-server's shape
        Reply::json(
            404,
            json!({"error": {"code": 404, "message": "model 'smollm2' not found", "type": "not_found_error"}}),
        ),
        // Ollama's shape
        Reply::json(
            404,
            json!({"error": "model \"smollm2\" not found, try pulling it first"}),
        ),
        Reply::json(
            401,
            json!({"error": {"message": "Invalid API Key", "type": "authentication_error"}}),
        ),
        Reply::json(
            500,
            json!({"error": {"code": 500, "message": "out of memory"}}),
        ),
    ]);
    let mut model = model(&server);
    let messages: Vec<String> = (0..4)
        .map(|_| generate(&mut model).0.unwrap_err().0)
        .collect();
    assert!(messages[0].contains("404 Not Found: model 'smollm2' not found."));
    assert!(messages[0].contains("serves the model \"smollm2\""));
    assert!(messages[1].contains("model \"smollm2\" not found, try pulling it first"));
    assert!(messages[2].contains("401 Unauthorized): Invalid API Key. It needs a valid API key."));
    assert!(messages[3].contains("answered 500: out of memory."));
    for message in &messages {
        assert!(message.contains(&server.base_url), "{message}");
    }
    server.finish();
}

#[test]
fn a_reply_that_is_not_a_stream_is_refused_in_words() {
    let server = FakeServer::start(vec![Reply::json(
        200,
        json!({"choices": [{"message": {"role": "assistant", "content": "Hi"}, "finish_reason": "stop"}]}),
    )]);
    let mut model = model(&server);
    let error = generate(&mut model).0.unwrap_err().0;
    assert!(error.contains("did not stream its reply"), "{error}");
    assert!(error.contains("application/json"), "{error}");
    server.finish();
}

#[test]
fn bad_lines_are_skipped_but_only_bad_lines_fail() {
    let good = |text: &str| {
        format!(
            "data: {}",
            json!({"choices": [{"delta": {"content": text}, "finish_reason": null}]})
        )
    };
    let server = FakeServer::start(vec![
        Reply::events(vec![
            ": ping".to_string(),
            "data: {\"choices\": [{\"delta\": {\"content\": \"Hi".to_string(),
            good("Hello"),
            "data: {\"object\": \"chat.completion.chunk\"}".to_string(),
            good(" there"),
            "data: [DONE]".to_string(),
        ]),
        Reply::events(vec![
            "data: <html>".to_string(),
            "data: {\"id\": 1}".to_string(),
            "data: [DONE]".to_string(),
        ]),
        Reply::events(vec![format!(
            "data: {}",
            json!({"error": {"code": 400, "message": "the request exceeds the available context size"}})
        )]),
    ]);
    let mut model = model(&server);
    let generation = generate(&mut model).0.unwrap();
    assert_eq!(generation.text, "Hello there");
    assert_eq!(generation.finish, FinishReason::EndOfText);

    let error = generate(&mut model).0.unwrap_err().0;
    assert!(error.contains("no readable part of a reply"), "{error}");
    assert!(error.contains("not JSON: <html>"), "{error}");

    let error = generate(&mut model).0.unwrap_err().0;
    assert!(
        error.contains("failed during the reply: the request exceeds the available context size"),
        "{error}"
    );
    server.finish();
}

#[test]
fn a_stream_ended_by_closing_the_connection_works_too() {
    let server = FakeServer::start(vec![
        Reply::stream(&["one ", "two"], "stop").framed(Framing::CloseDelimited),
        Reply::stream(&["three"], "stop").framed(Framing::CloseDelimited),
    ]);
    let mut model = model(&server);
    assert_eq!(generate(&mut model).0.unwrap().text, "one two");
    assert_eq!(generate(&mut model).0.unwrap().text, "three");
    server.finish();
}

#[test]
fn list_models_reads_the_model_ids() {
    let server = FakeServer::start(vec![Reply::json(
        200,
        json!({"object": "list", "data": [
            {"id": "smollm2", "object": "model", "owned_by": "llamacpp"},
            {"id": "qwen2.5-coder:1.5b", "object": "model"}
        ]}),
    )]);
    let model = model(&server);
    assert_eq!(
        model.list_models().unwrap(),
        ["smollm2", "qwen2.5-coder:1.5b"]
    );
    let served = server.next_served();
    assert_eq!(
        (served.request.method.as_str(), served.request.path.as_str()),
        ("GET", "/v1/models")
    );
    server.finish();
}

#[test]
fn tool_choice_is_asked_for_in_the_request_only() {
    let server = FakeServer::start(vec![
        Reply::stream(&["ok"], "stop"),
        Reply::stream(&["ok"], "stop"),
    ]);
    let mut model = model(&server);
    let cancel = CancelToken::new();
    for (choice, instruction) in [
        (ToolChoice::Required, "Reply with a tool call."),
        (
            ToolChoice::None,
            "Answer in plain words without a tool call.",
        ),
    ] {
        generate_with(&mut model, choice, &cancel, |_, _| Flow::Continue)
            .0
            .unwrap();
        let body = server.next_served().request.body;
        assert_eq!(
            body["messages"][1]["content"],
            format!("What is in a.txt?\n\n{instruction}")
        );
    }
    server.finish();
}

#[test]
fn a_session_reads_a_file_and_answers_through_the_server() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "the launch code is 0000\n").unwrap();
    let server = FakeServer::start(vec![
        // The server stops at `</TOOL_CALL>` and leaves it out, as llama-server does.
        Reply::stream(
            &[
                "I will read it.\n",
                "<TOOL_CALL>\n{\"tool\": \"read_file\", ",
                "\"args\": {\"path\": \"a.txt\"}, \"reasoning\": \"The user asked\"}\n",
            ],
            "stop",
        ),
        Reply::stream(&["It says the launch ", "code is 0000."], "stop"),
    ]);
    let mut model = model(&server);
    let mut session = Session::new(
        Workspace::open(dir.path()).unwrap(),
        SessionOptions::in_memory(Toolbox::standard().into()),
    );
    let mut events = Vec::new();
    let finished = session.send(
        "What is in a.txt?",
        &mut model,
        &mut FixedAnswer(Answer::AllowOnce),
        &mut |event: &Event| events.push(event.clone()),
        &CancelToken::new(),
    );

    let Event::TurnFinished {
        reason,
        text,
        steps,
        ..
    } = finished
    else {
        panic!("not a turn_finished event");
    };
    assert_eq!(reason, FinishedReason::Answer);
    assert_eq!(text, "It says the launch code is 0000.");
    assert_eq!(steps, 2);
    assert!(events.iter().any(|e| matches!(
        e,
        Event::CallParsed { tool, .. } if tool == "read_file"
    )));
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::ToolFinished { success: true, .. })));

    server.next_served();
    let second = server.next_served().request.body;
    let messages = second["messages"].as_array().unwrap();
    let call = &messages[messages.len() - 2];
    assert_eq!(call["role"], "assistant");
    assert!(call["content"].as_str().unwrap().ends_with("</TOOL_CALL>"));
    let result = messages.last().unwrap()["content"].as_str().unwrap();
    assert!(result.starts_with("TOOL_RESULT"), "{result}");
    assert!(result.contains("the launch code is 0000"), "{result}");
    server.finish();
}

#[test]
fn a_servers_context_and_token_counts_are_read_where_it_gives_them_and_none_otherwise() {
    // llama-server's shapes: `GET /props` and `POST /tokenize`, at the server's root.
    let server = FakeServer::start(vec![
        Reply::json(
            200,
            json!({"default_generation_settings": {"n_ctx": 16384}, "total_slots": 1}),
        ),
        Reply::json(200, json!({"tokens": [12, 7, 9]})),
    ]);
    let mut llama = model(&server);
    assert_eq!(llama.context_size(), Some(16384));
    assert_eq!(llama.context_size(), Some(16384), "asked once, then kept");
    let served = server.next_served();
    assert_eq!(
        (served.request.method.as_str(), served.request.path.as_str()),
        ("GET", "/props")
    );
    assert_eq!(llama.count_tokens("fn main() {}"), Some(3));
    let served = server.next_served();
    assert_eq!(
        (served.request.method.as_str(), served.request.path.as_str()),
        ("POST", "/tokenize")
    );
    assert_eq!(served.request.body, json!({"content": "fn main() {}"}));
    server.finish();

    // A server without them (an OpenAI-style 404) says nothing.
    let server = FakeServer::start(vec![
        Reply::json(404, json!({"error": {"message": "Not found"}})),
        Reply::json(404, json!({"error": {"message": "Not found"}})),
    ]);
    let mut other = model(&server);
    assert_eq!(other.context_size(), None);
    assert_eq!(other.context_size(), None);
    assert_eq!(other.count_tokens("fn main() {}"), None);
    server.finish();
}
