//! The backend against a real llama-server (llama.cpp's own OpenAI-compatible server): the
//! server built by scripts/build-llama-tools.sh (part of the test set-up), Gemma 3 270M fetched
//! by scripts/fetch-model.sh. Without either the tests fail and say why: a test of a server that
//! is not there proves nothing.
//!
//! One server serves every test of this file (started by the first, stopped when the test
//! process ends), with `--jinja` and a tool-aware ChatML template
//! (`tests/templates/chatml-tools.jinja`), so that it can return native tool calls. Two paths
//! through it: Lantern's text protocol, and native tool calls. Only the structure is asserted
//! (text streams in, a call arrives natively, the turn ends with a reason): a tiny model's
//! wording is not something to test. That a server whose template knows no tools is taken for
//! the text path is proved against the scripted server (`native_calls.rs`).

use lantern_core::agent::{AgentConfig, Answer, FixedAnswer, Session, SessionOptions};
use lantern_core::event::{Event, FinishedReason};
use lantern_core::model::CallPath;
use lantern_core::model::{CancelToken, FinishReason, Flow, GenerateRequest, Message, Model, Role};
use lantern_core::protocol::STOP_SEQUENCES;
use lantern_core::sandbox::Workspace;
use lantern_core::toolbox::Toolbox;
use lantern_openai::{CallMode, OpenAiModel, OpenAiOptions};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

/// How long the server may take to load the model and answer `/health`.
const STARTUP: Duration = Duration::from_secs(180);

fn cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cache")))
}

/// Where scripts/build-llama-tools.sh installs the server.
fn server_binary() -> Option<PathBuf> {
    Some(cache_dir()?.join("lantern/llama-tools/bin/llama-server"))
}

/// Where scripts/fetch-model.sh installs its models (honouring its LANTERN_MODEL_DIR).
fn model_file(name: &str) -> Option<PathBuf> {
    let dir = match std::env::var_os("LANTERN_MODEL_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => cache_dir()?.join("lantern/models"),
    };
    Some(dir.join(name))
}

/// Gemma 3 270M (`scripts/fetch-model.sh gemma3`): unlike the default model, it makes a native
/// call when the server's grammar asks for one (the default model answers in prose first).
const GEMMA3: &str = "gemma-3-270m-q4_k_m.gguf";

/// The one llama-server of this test process. A shell stands between: it starts the server and
/// kills it when its standard input closes, which happens when the test process ends however
/// it ends (a static is never dropped).
struct LlamaServer {
    child: Child,
    _lifeline: ChildStdin,
    base_url: String,
    log: PathBuf,
    _log_dir: tempfile::TempDir,
}

/// The server every test of this file talks to, one test at a time (one slot, two cores).
fn server() -> MutexGuard<'static, LlamaServer> {
    static SERVER: OnceLock<Mutex<LlamaServer>> = OnceLock::new();
    SERVER
        .get_or_init(|| Mutex::new(LlamaServer::start_with(GEMMA3, &tool_template())))
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl LlamaServer {
    /// The server with one of the fetched models and the tool-aware template, or a failure
    /// that says what is missing.
    fn start_with(model: &str, template: &Path) -> LlamaServer {
        let binary = server_binary().expect("HOME or XDG_CACHE_HOME is set");
        let model = model_file(model).expect("HOME or XDG_CACHE_HOME is set");
        assert!(
            binary.is_file(),
            "no llama-server at {} (scripts/build-llama-tools.sh builds it; npm test runs it)",
            binary.display()
        );
        assert!(
            model.is_file(),
            "no model at {} (scripts/fetch-model.sh fetches it; npm test runs it)",
            model.display()
        );
        LlamaServer::start(&binary, &model, template)
    }

    fn start(binary: &Path, model: &Path, template: &Path) -> LlamaServer {
        // A port that was free a moment ago.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // The log goes to a file: an undrained pipe would stall the server once it fills.
        let log_dir = tempfile::tempdir().unwrap();
        let log = log_dir.path().join("llama-server.log");
        let log_file = File::create(&log).unwrap();
        // The shell keeps the pipe on fd 3 and gives the server none of it; a reader in the
        // background kills the server at the pipe's end; the shell ends with the server.
        let script =
            r#"exec 3<&0 </dev/null; "$0" "$@" & pid=$!; (read _ <&3; kill $pid) & wait $pid"#;
        let mut child = Command::new("sh")
            .args(["-c", script])
            .arg(binary)
            .arg("-m")
            .arg(model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            // Room for the tools' schemas, which a tool-aware template adds to the prompt.
            .args(["-c", "8192", "-t", "2"])
            // One slot, so the whole context serves the one conversation.
            .args(["-np", "1"])
            .arg("--jinja")
            .arg("--chat-template-file")
            .arg(template)
            .stdin(Stdio::piped())
            .stdout(log_file.try_clone().unwrap())
            .stderr(log_file)
            .spawn()
            .unwrap();
        let lifeline = child.stdin.take().unwrap();
        let mut server = LlamaServer {
            child,
            _lifeline: lifeline,
            base_url: format!("http://127.0.0.1:{port}/v1"),
            log,
            _log_dir: log_dir,
        };
        server.wait_until_healthy(port);
        server
    }

    /// Polls `/health` until it answers 200 (503 while the model loads), within [`STARTUP`].
    fn wait_until_healthy(&mut self, port: u16) {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(2)))
            .build()
            .into();
        let url = format!("http://127.0.0.1:{port}/health");
        let deadline = Instant::now() + STARTUP;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("llama-server exited ({status}):\n{}", self.log_tail());
            }
            if let Ok(response) = agent.get(&url).call() {
                if response.status() == 200 {
                    return;
                }
            }
            thread::sleep(Duration::from_millis(250));
        }
        panic!(
            "llama-server was not healthy within {} s:\n{}",
            STARTUP.as_secs(),
            self.log_tail()
        );
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }
}

#[test]
fn streams_and_runs_a_turn_against_a_real_llama_server() {
    let server = server();
    let mut options = OpenAiOptions::new(&server.base_url, "gemma-3-270m");
    options.calls = CallMode::Text;
    let mut model = OpenAiModel::new(options).unwrap();

    let offered = model.list_models().unwrap();
    assert!(!offered.is_empty(), "the server lists its model");

    // One streamed generation.
    let messages = [
        Message::new(Role::System, "You are a helpful assistant."),
        Message::new(Role::User, "Say hello in one short sentence."),
    ];
    let cancel = CancelToken::new();
    let request = GenerateRequest::new(&messages, 32, &cancel).with_stop(STOP_SEQUENCES);
    let mut pieces = Vec::new();
    let generation = model
        .generate(&request, &mut |piece| {
            pieces.push(piece.to_string());
            Flow::Continue
        })
        .unwrap();
    assert!(!pieces.is_empty(), "text arrived");
    assert_eq!(generation.text, pieces.concat());
    assert!(
        matches!(
            generation.finish,
            FinishReason::EndOfText | FinishReason::Length | FinishReason::Stop
        ),
        "{:?}",
        generation.finish
    );
    assert!(
        generation.tokens_generated.is_some() && generation.tokens_evaluated.is_some(),
        "llama-server reports its token counts"
    );
    eprintln!(
        "llama-server streamed {} pieces, {:?}: {:?}",
        pieces.len(),
        generation.finish,
        generation.text
    );

    // A whole turn of the agent loop, tools and all.
    let (reason, text, steps, events) = turn_about_notes(&mut model, 64);
    let responses = events
        .iter()
        .filter(|e| matches!(e, Event::ResponseFinished { .. }))
        .count();
    eprintln!("the turn ended after {steps} steps: {reason:?} {text:?}");
    assert_ne!(reason, FinishedReason::Error, "{text}");
    assert!(steps >= 1);
    assert_eq!(responses, steps, "every step got a reply from the server");
}

/// Asks "What is in notes.txt?" in a workspace that has one, in a turn of at most three
/// steps; returns how it ended and every event.
fn turn_about_notes(
    model: &mut OpenAiModel,
    max_tokens: usize,
) -> (FinishedReason, String, usize, Vec<Event>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "Buy milk.\n").unwrap();
    let mut session = Session::new(
        Workspace::open(dir.path()).unwrap(),
        SessionOptions {
            config: AgentConfig {
                max_steps: 3,
                max_tokens,
                ..AgentConfig::default()
            },
            ..SessionOptions::in_memory(Toolbox::standard().into())
        },
    );
    let mut events = Vec::new();
    let finished = session.send(
        "What is in notes.txt?",
        model,
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
    (reason, text, steps, events)
}

/// The tool-aware template, from the repository's tests folder.
fn tool_template() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/templates/chatml-tools.jinja")
}

#[test]
fn a_real_llama_server_with_a_tool_aware_template_is_found_to_return_native_calls() {
    let server = server();
    let options = OpenAiOptions::new(&server.base_url, "gemma-3-270m");
    let mut model = OpenAiModel::new(options).unwrap();
    let detection = model.detect_call_path().unwrap();
    assert_eq!(
        detection.path,
        CallPath::Native,
        "{}\n{}",
        detection.why,
        server.log_tail()
    );
    assert_eq!(model.call_path(), CallPath::Native);
}

/// A whole turn of native calls: the call streamed as `tool_calls` pieces, run, and its result
/// sent back as a `tool` message. Gemma 3 270M, because it makes the call: the default model
/// answers a question about a file in prose even when the server's grammar asks for a call
/// (the grammar lets text come first), and never reaches the call within the reply's budget.
#[test]
fn native_tool_calls_through_a_real_llama_server_read_a_file_and_answer() {
    let server = server();
    let mut options = OpenAiOptions::new(&server.base_url, "gemma-3-270m");
    options.calls = CallMode::Native;
    options.temperature = 0.0;
    let mut model = OpenAiModel::new(options).unwrap();

    let (reason, text, steps, events) = turn_about_notes(&mut model, 96);
    eprintln!("the native turn ended after {steps} steps: {reason:?} {text:?}");
    for event in &events {
        if let Event::ResponseFinished {
            raw, native_deltas, ..
        } = event
        {
            eprintln!("reply: {raw:?} ({} native pieces)", native_deltas.len());
        }
    }
    let call = events.iter().find_map(|e| match e {
        Event::CallParsed {
            tool, args, via, ..
        } => Some((tool.clone(), args.clone(), *via)),
        _ => None,
    });
    let (tool, args, via) = call.expect("the model made a call");
    // The conversation names the call by the id the server gave it.
    let server_id = events.iter().find_map(|e| match e {
        Event::ResponseFinished { native_deltas, .. } => native_deltas
            .iter()
            .find_map(|piece| piece["id"].as_str().map(str::to_string)),
        _ => None,
    });
    let call_id = events.iter().find_map(|e| match e {
        Event::CallParsed { call_id, .. } => Some(call_id.clone()),
        _ => None,
    });
    assert!(server_id.is_some(), "llama-server names its calls");
    assert_eq!(call_id, server_id);
    assert_eq!(
        via,
        CallPath::Native,
        "the call came as the server's tool call"
    );
    assert_eq!(tool, "read_file", "{args}");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::ToolFinished { .. })),
        "the call ran"
    );
    // The result went back as a `tool` message naming the call, which the server's template
    // rendered: the step after it got a reply. What a 270M base model makes of the result (and
    // which path it names) is not asserted.
    let replies = events
        .iter()
        .filter(|e| matches!(e, Event::ResponseFinished { .. }))
        .count();
    assert!(
        replies >= 2,
        "the server answered the step after the result"
    );
    assert_ne!(reason, FinishedReason::Error, "{text}");
}

#[test]
fn a_real_llama_server_says_how_large_its_context_is_and_counts_a_texts_tokens() {
    let server = server();
    let options = OpenAiOptions::new(&server.base_url, "gemma-3-270m");
    let mut model = OpenAiModel::new(options).unwrap();
    assert_eq!(
        model.context_size(),
        Some(8192),
        "the server was started with -c 8192"
    );
    let line = "pub fn total(cart: &Cart) -> u64 {}\n";
    let one = model.count_tokens(line).expect("llama-server tokenizes");
    let ten = model.count_tokens(&line.repeat(10)).unwrap();
    assert!(one >= 5, "a line of code is several tokens: {one}");
    assert!(
        ten >= one * 9,
        "ten lines are about ten times one: {one} and {ten}"
    );
}
