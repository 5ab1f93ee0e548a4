//! The backend against a real llama-server (llama.cpp's own OpenAI-compatible server) running the
//! default model. It runs when both are installed: the server by scripts/build-llama-tools.sh
//! (many minutes of C++ build, so not part of setup), the model by scripts/fetch-model.sh.
//! Without either it says why and passes.
//!
//! Only the structure is asserted (text streams in, the turn ends with a reason): a 135M model's
//! wording is not something to test.

use lantern_core::agent::{AgentConfig, Answer, FixedAnswer, Session, SessionOptions};
use lantern_core::event::{Event, FinishedReason};
use lantern_core::model::{
    CancelToken, FinishReason, Flow, GenerateRequest, Message, Model, Role, ToolChoice,
};
use lantern_core::protocol::STOP_SEQUENCES;
use lantern_core::sandbox::Workspace;
use lantern_core::toolbox::Toolbox;
use lantern_openai::{OpenAiModel, OpenAiOptions};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// How long the server may take to load the model and answer `/health`.
const STARTUP: Duration = Duration::from_secs(60);

fn cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cache")))
}

/// Where scripts/build-llama-tools.sh installs the server.
fn server_binary() -> Option<PathBuf> {
    Some(cache_dir()?.join("lantern/llama-tools/bin/llama-server"))
}

/// Where scripts/fetch-model.sh installs the default model (honouring its LANTERN_MODEL_DIR).
fn default_model() -> Option<PathBuf> {
    let dir = match std::env::var_os("LANTERN_MODEL_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => cache_dir()?.join("lantern/models"),
    };
    Some(dir.join("SmolLM2-135M-Instruct.Q4_1.gguf"))
}

/// A llama-server child process, killed when dropped (also when a test fails).
struct LlamaServer {
    child: Child,
    base_url: String,
    log: PathBuf,
    _log_dir: tempfile::TempDir,
}

impl LlamaServer {
    fn start(binary: &Path, model: &Path) -> LlamaServer {
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
        let child = Command::new(binary)
            .arg("-m")
            .arg(model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["-c", "2048", "-t", "2"])
            // One slot, so the whole context serves the one conversation.
            .args(["-np", "1"])
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().unwrap())
            .stderr(log_file)
            .spawn()
            .unwrap();
        let mut server = LlamaServer {
            child,
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

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn streams_and_runs_a_turn_against_a_real_llama_server() {
    let (Some(binary), Some(model_file)) = (server_binary(), default_model()) else {
        eprintln!("skipped: neither XDG_CACHE_HOME nor HOME is set");
        return;
    };
    if !binary.is_file() {
        eprintln!(
            "skipped: no llama-server at {} (build it with scripts/build-llama-tools.sh)",
            binary.display()
        );
        return;
    }
    if !model_file.is_file() {
        eprintln!(
            "skipped: no model at {} (fetch it with scripts/fetch-model.sh)",
            model_file.display()
        );
        return;
    }
    let server = LlamaServer::start(&binary, &model_file);
    let mut options = OpenAiOptions::new(&server.base_url, "SmolLM2-135M-Instruct");
    options.timeout = Duration::from_secs(60);
    let mut model = OpenAiModel::new(options).unwrap();

    let offered = model.list_models().unwrap();
    assert!(!offered.is_empty(), "the server lists its model");

    // One streamed generation.
    let messages = [
        Message::new(Role::System, "You are a helpful assistant."),
        Message::new(Role::User, "Say hello in one short sentence."),
    ];
    let request = GenerateRequest {
        messages: &messages,
        tools: &[],
        paths: None,
        files: None,
        stop: STOP_SEQUENCES,
        tool_choice: ToolChoice::Auto,
        max_tokens: 32,
        cancel: &CancelToken::new(),
    };
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
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "Buy milk.\n").unwrap();
    let mut session = Session::new(
        Workspace::open(dir.path()).unwrap(),
        SessionOptions {
            toolbox: Toolbox::standard().into(),
            policy: None,
            checkpoints: None,
            config: AgentConfig {
                max_steps: 3,
                max_tokens: 64,
                ..AgentConfig::default()
            },
        },
    );
    let mut responses = 0;
    let finished = session.send(
        "What is in notes.txt?",
        &mut model,
        &mut FixedAnswer(Answer::AllowOnce),
        &mut |event: &Event| {
            if matches!(event, Event::ResponseFinished { .. }) {
                responses += 1;
            }
        },
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
    eprintln!("the turn ended after {steps} steps: {reason:?} {text:?}");
    assert_ne!(reason, FinishedReason::Error, "{text}");
    assert!(steps >= 1);
    assert_eq!(responses, steps, "every step got a reply from the server");
}
