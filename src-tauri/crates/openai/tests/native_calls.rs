//! Native tool calls against a real HTTP server on 127.0.0.1 that streams like llama-server
//! with `--jinja`: detection, calls assembled from pieces, several calls in one reply,
//! arguments as an object, thinking kept apart, an over-long stream cut, and a whole turn.

// Shared with fake_server.rs; these tests need only part of it.
#[allow(dead_code)]
mod support;

use lantern_core::agent::{history_from_events, Answer, FixedAnswer, Session, SessionOptions};
use lantern_core::event::{Event, FinishedReason};
use lantern_core::model::{CallPath, CancelToken, FinishReason, Flow, GenerateRequest, Model};
use lantern_core::protocol::{Dialect, STOP_SEQUENCES};
use lantern_core::sandbox::Workspace;
use lantern_core::toolbox::Toolbox;
use lantern_openai::{CallMode, OpenAiModel, OpenAiOptions};
use serde_json::{json, Value};
use std::time::Duration;
use support::{FakeServer, Reply};

fn model(server: &FakeServer, calls: CallMode) -> OpenAiModel {
    let mut options = OpenAiOptions::new(&server.base_url, "qwen");
    options.timeout = Duration::from_secs(10);
    options.calls = calls;
    OpenAiModel::new(options).unwrap()
}

/// The pieces of one call as a server streams them: the name first, then the arguments in
/// parts of `step` characters.
fn call_pieces(index: u64, id: &str, name: &str, arguments: &str, step: usize) -> Vec<Value> {
    let mut pieces = vec![
        json!({"tool_calls": [{"index": index, "id": id, "type": "function",
        "function": {"name": name, "arguments": ""}}]}),
    ];
    let chars: Vec<char> = arguments.chars().collect();
    for part in chars.chunks(step) {
        let part: String = part.iter().collect();
        pieces.push(json!({"tool_calls": [{"index": index, "function": {"arguments": part}}]}));
    }
    pieces
}

/// A server whose first reply says `said` and calls `read_file` on a.txt natively (its
/// arguments in parts of 3 characters, id `srv-1`), and whose second reply streams `answer`.
fn reads_a_txt_then_answers(said: Value, answer: &[&str]) -> FakeServer {
    let mut first = vec![json!({"role": "assistant", "content": said})];
    first.extend(call_pieces(
        0,
        "srv-1",
        "read_file",
        r#"{"path": "a.txt"}"#,
        3,
    ));
    FakeServer::start(vec![
        Reply::deltas(first, "tool_calls"),
        Reply::stream(answer, "stop"),
    ])
}

fn session(dir: &std::path::Path) -> Session {
    Session::new(
        Workspace::open(dir).unwrap(),
        SessionOptions::in_memory(Toolbox::standard().into()),
    )
}

fn run(session: &mut Session, model: &mut dyn Model, message: &str) -> (Event, Vec<Event>) {
    let mut events = Vec::new();
    let finished = session.send(
        message,
        model,
        &mut FixedAnswer(Answer::AllowOnce),
        &mut |event: &Event| events.push(event.clone()),
        &CancelToken::new(),
    );
    (finished, events)
}

#[test]
fn detection_takes_native_calls_only_from_a_server_that_returns_them() {
    let server = FakeServer::start(vec![
        Reply::deltas(
            call_pieces(0, "c1", "get_current_time", "{}", 1),
            "tool_calls",
        ),
        Reply::stream(&["It is ", "noon."], "stop"),
        Reply::json(
            400,
            json!({"error": {"code": 400, "message": "tools param requires --jinja flag"}}),
        ),
        Reply::json(401, json!({"error": {"message": "Invalid API key"}})),
    ]);
    // Each model in its own scope: the fake server serves one connection at a time, and a
    // model keeps its connection open until it is dropped.
    {
        let mut native = model(&server, CallMode::Auto);
        assert_eq!(
            native.call_path(),
            CallPath::Text,
            "nothing is assumed before asking"
        );
        let found = native.detect_call_path().unwrap();
        assert_eq!(found.path, CallPath::Native);
        assert_eq!(native.call_path(), CallPath::Native);
    }
    let asked = server.next_served().request.body;
    assert_eq!(asked["tool_choice"], "required");
    assert_eq!(asked["tools"][0]["function"]["name"], "get_current_time");
    {
        let mut prose = model(&server, CallMode::Auto);
        let found = prose.detect_call_path().unwrap();
        assert_eq!(found.path, CallPath::Text);
        assert!(found.why.contains("without one"), "{}", found.why);
        assert_eq!(prose.call_path(), CallPath::Text);
    }
    {
        let mut refusing = model(&server, CallMode::Auto);
        let found = refusing.detect_call_path().unwrap();
        assert_eq!(found.path, CallPath::Text);
        assert!(found.why.contains("--jinja"), "{}", found.why);
    }
    {
        let mut forced = model(&server, CallMode::Native);
        let error = forced.detect_call_path().unwrap_err();
        assert!(error.0.contains("401"), "{error}");
        assert_eq!(forced.call_path(), CallPath::Native, "a forced path stays");
    }
    server.next_served();
    server.next_served();
    server.next_served();
    server.finish();
}

#[test]
fn a_session_reads_a_file_through_native_calls_and_answers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "the launch code is 0000\n").unwrap();
    let server = reads_a_txt_then_answers(Value::Null, &["It says the launch ", "code is 0000."]);
    let mut model = model(&server, CallMode::Native);
    let mut session = session(dir.path());
    let (finished, events) = run(&mut session, &mut model, "What is in a.txt?");
    let Event::TurnFinished { reason, text, .. } = finished else {
        panic!("not a turn_finished event");
    };
    assert_eq!(reason, FinishedReason::Answer, "{text}");
    assert_eq!(text, "It says the launch code is 0000.");
    let parsed = events.iter().find_map(|e| match e {
        Event::CallParsed {
            tool, via, dialect, ..
        } if tool == "read_file" => Some((*via, *dialect)),
        _ => None,
    });
    assert_eq!(
        parsed.expect("the call was parsed"),
        (CallPath::Native, Dialect::Api)
    );
    let (reply, deltas) = events
        .iter()
        .find_map(|e| match e {
            Event::ResponseFinished {
                raw, native_deltas, ..
            } if !native_deltas.is_empty() => Some((raw.clone(), native_deltas.len())),
            _ => None,
        })
        .expect("the call's step finished");
    assert_eq!(reply, "", "the call came typed and was not written as text");
    assert_eq!(deltas, 7, "every piece is kept for the inspector");

    let asked = server.next_served().request.body;
    assert_eq!(
        asked["tool_choice"], "required",
        "the message names a file of the workspace"
    );
    assert!(asked["tools"].as_array().unwrap().len() >= 5);
    let system = asked["messages"][0]["content"].as_str().unwrap();
    assert!(!system.contains("<TOOL_CALL>"), "{system}");
    let second = server.next_served().request.body;
    assert_eq!(
        second["tool_choice"], "auto",
        "after a result the model chooses"
    );
    let messages = second["messages"].as_array().unwrap();
    let call = &messages[messages.len() - 2];
    assert_eq!(call["role"], "assistant");
    assert_eq!(call["tool_calls"][0]["function"]["name"], "read_file");
    let id = call["tool_calls"][0]["id"].as_str().unwrap();
    assert_eq!(id, "srv-1", "the call keeps the id the server gave it");
    let result = messages.last().unwrap();
    assert_eq!(result["role"], "tool");
    assert_eq!(result["tool_call_id"], id);
    assert!(result["content"]
        .as_str()
        .unwrap()
        .contains("the launch code is 0000"));
    server.finish();
}

#[test]
fn of_several_calls_in_one_reply_the_first_runs_and_the_model_hears_the_rest_did_not() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "beta\n").unwrap();
    let mut both = call_pieces(0, "x", "read_file", r#"{"path": "a.txt"}"#, 100);
    // Some servers send the arguments whole, as an object.
    both.push(
        json!({"tool_calls": [{"index": 1, "id": "y", "type": "function",
        "function": {"name": "read_file", "arguments": {"path": "b.txt"}}}]}),
    );
    let server = FakeServer::start(vec![
        Reply::deltas(both, "tool_calls"),
        Reply::stream(&["a.txt says alpha."], "stop"),
    ]);
    let mut model = model(&server, CallMode::Native);
    let mut session = session(dir.path());
    let (finished, events) = run(&mut session, &mut model, "Read a.txt and b.txt");
    assert!(matches!(
        finished,
        Event::TurnFinished {
            reason: FinishedReason::Answer,
            ..
        }
    ));
    let ran: Vec<&Value> = events
        .iter()
        .filter_map(|e| match e {
            Event::CallParsed { args, .. } => Some(args),
            _ => None,
        })
        .collect();
    assert_eq!(ran, [&json!({"path": "a.txt"})]);
    server.next_served();
    let second = server.next_served().request.body;
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(
        messages[messages.len() - 2]["tool_calls"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "the history holds the call that ran"
    );
    let result = messages.last().unwrap()["content"].as_str().unwrap();
    assert!(result.contains("was not run"), "{result}");
    server.finish();
}

#[test]
fn thinking_is_kept_apart_and_an_over_long_stream_is_cut() {
    let thinking: Vec<Value> = ["The user ", "wants a ", "greeting."]
        .iter()
        .map(|t| json!({"reasoning_content": t}))
        .chain(std::iter::once(json!({"content": "Hello."})))
        .collect();
    let endless: Vec<Value> = (0..2000).map(|_| json!({"content": "blah "})).collect();
    let server = FakeServer::start(vec![
        Reply::deltas(thinking, "stop"),
        Reply::deltas(endless, "stop"),
    ]);
    let mut model = model(&server, CallMode::Native);
    let messages = [lantern_core::model::Message::new(
        lantern_core::model::Role::User,
        "Hi",
    )];
    let cancel = CancelToken::new();
    let request = GenerateRequest::new(&messages, 16, &cancel)
        .with_stop(STOP_SEQUENCES)
        .with_tool_choice(lantern_core::model::ToolChoice::Auto);
    let mut pieces = String::new();
    let greeting = model
        .generate(&request, &mut |piece| {
            pieces.push_str(piece);
            Flow::Continue
        })
        .unwrap();
    assert_eq!(greeting.text, "Hello.");
    assert_eq!(pieces, "Hello.", "thinking never reaches the reply");
    assert_eq!(greeting.thinking, "The user wants a greeting.");

    let cut = model.generate(&request, &mut |_| Flow::Continue).unwrap();
    assert_eq!(cut.finish, FinishReason::Length);
    assert!(cut.text.len() <= 16 * 32, "{} bytes kept", cut.text.len());
    server.finish();
}

#[test]
fn a_server_without_a_model_list_at_v1_is_asked_the_ollama_way() {
    let server = FakeServer::start(vec![
        Reply::json(404, json!({"error": "404 page not found"})),
        Reply::json(
            200,
            json!({"models": [{"name": "qwen2.5-coder:1.5b", "size": 986000000}]}),
        ),
    ]);
    let model = model(&server, CallMode::Auto);
    assert_eq!(model.list_models().unwrap(), ["qwen2.5-coder:1.5b"]);
    assert_eq!(server.next_served().request.path, "/v1/models");
    assert_eq!(server.next_served().request.path, "/api/tags");
    server.finish();
}

#[test]
fn text_said_before_a_server_call_reaches_the_user_whole() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    // The text ends in what could open a call, so the parser holds it back while it streams.
    let server = reads_a_txt_then_answers(json!("Reading a.txt <"), &["It says hello."]);
    let mut model = model(&server, CallMode::Native);
    let mut session = session(dir.path());
    let (_, events) = run(&mut session, &mut model, "What is in a.txt?");
    let call_step = events
        .iter()
        .find_map(|e| match e {
            Event::CallParsed { step, .. } => Some(*step),
            _ => None,
        })
        .expect("the call was parsed");
    let said: String = events
        .iter()
        .filter_map(|e| match e {
            Event::TextDelta { step, text } if *step == call_step => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(said.trim(), "Reading a.txt <");
    server.finish();
}

#[test]
fn a_refused_server_call_is_sent_back_as_its_call_answered_by_the_refusal() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    // read_file takes `path`; the server's call names the file under another key.
    let server = FakeServer::start(vec![
        Reply::deltas(
            call_pieces(0, "srv-1", "read_file", r#"{"file": "a.txt"}"#, 4),
            "tool_calls",
        ),
        Reply::stream(&["I could not read it."], "stop"),
    ]);
    let mut model = model(&server, CallMode::Native);
    let mut session = session(dir.path());
    let (_, events) = run(&mut session, &mut model, "What is in a.txt?");
    let (message, feedback, refused) = events
        .iter()
        .find_map(|e| match e {
            Event::CallRejected {
                message,
                feedback,
                server_call,
                ..
            } => Some((message.clone(), feedback.clone(), server_call.clone())),
            _ => None,
        })
        .expect("the call was refused");
    let refused = refused.expect("the refusal names the server's call");
    assert_eq!(
        (refused.call_id.as_str(), refused.tool.as_str()),
        ("srv-1", "read_file")
    );
    assert_eq!(refused.args, json!({"file": "a.txt"}));
    assert!(
        !feedback.contains("<TOOL_CALL>"),
        "a server that calls through its API is not taught the text protocol: {feedback}"
    );

    server.next_served();
    let second = server.next_served().request.body;
    let messages = second["messages"].as_array().unwrap();
    let call = &messages[messages.len() - 2];
    assert_eq!(call["role"], "assistant");
    assert_eq!(call["tool_calls"][0]["id"], "srv-1");
    assert_eq!(call["tool_calls"][0]["function"]["name"], "read_file");
    let sent: Value = serde_json::from_str(
        call["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        sent,
        json!({"file": "a.txt"}),
        "the call as the server made it"
    );
    let answer = messages.last().unwrap();
    assert_eq!(answer["role"], "tool");
    assert_eq!(answer["tool_call_id"], "srv-1");
    let content = answer["content"].as_str().unwrap();
    assert!(
        content.starts_with(message.trim_end_matches('.')),
        "the refusal says what was wrong: {content}"
    );

    assert_eq!(
        history_from_events(&events),
        session.history()[1..].to_vec(),
        "a saved conversation takes the refused call up as it was"
    );
    server.finish();
}
