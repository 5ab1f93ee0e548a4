//! The llama.cpp backend with the real default model (SmolLM2-135M-Instruct, greedy). These
//! tests assert structure, never wording. They share one loaded model and run one at a time:
//! two cores cannot run two models at once.

use lantern_core::agent::{Answer, FixedAnswer, Session, SessionOptions};
use lantern_core::event::{Event, FinishedReason};
use lantern_core::model::{
    CancelToken, FinishReason, Flow, GenerateRequest, MadeCall, Message, Model, Role, ToolChoice,
};
use lantern_core::protocol::{interpret, parse, Outcome, OPEN_TAG, STOP_SEQUENCES};
use lantern_core::sandbox::Workspace;
use lantern_core::toolbox::Toolbox;
use lantern_core::tools::{Risk, ToolRegistry, ToolSpec};
use lantern_llama::{default_model_path, LoadOptions, LocalModel};
use std::sync::{Mutex, MutexGuard, OnceLock};

mod support;

fn model() -> MutexGuard<'static, LocalModel> {
    static MODEL: OnceLock<Mutex<LocalModel>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let path = default_model_path();
            assert!(
                path.exists(),
                "the default model is missing at {}: run scripts/fetch-model.sh (npm test does)",
                path.display()
            );
            let loaded = LocalModel::load(&LoadOptions::new(path), |_| {})
                .unwrap()
                .with_calibration_file(support::calibration_file("model"));
            Mutex::new(support::keeping_openings(loaded, "model"))
        })
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn toolbox() -> &'static Toolbox {
    static TOOLBOX: OnceLock<Toolbox> = OnceLock::new();
    TOOLBOX.get_or_init(Toolbox::standard)
}

fn system() -> String {
    toolbox().system_prompt().to_string()
}

fn conversation(question: &str) -> Vec<Message> {
    vec![
        Message::new(Role::System, system()),
        Message::new(Role::User, question),
    ]
}

/// Generates one reply; returns the generation and the streamed pieces.
fn generate(
    model: &mut LocalModel,
    messages: &[Message],
    choice: ToolChoice,
    max_tokens: usize,
) -> (lantern_core::model::Generation, Vec<String>) {
    let cancel = CancelToken::new();
    let request = GenerateRequest::new(messages, max_tokens, &cancel)
        .with_tools(toolbox().specs())
        .with_stop(STOP_SEQUENCES)
        .with_tool_choice(choice);
    let mut pieces = Vec::new();
    let generation = model
        .generate(&request, &mut |p| {
            pieces.push(p.to_string());
            Flow::Continue
        })
        .unwrap();
    (generation, pieces)
}

#[test]
fn loads_with_facts_and_renders_its_own_template() {
    let model = model();
    let facts = model.facts();
    assert_eq!(facts.architecture, "llama");
    assert!(
        (100_000_000..200_000_000).contains(&facts.parameters),
        "{}",
        facts.parameters
    );
    assert_eq!(facts.chat_template, "model");
    assert!(facts.trained_context >= 8192);
    assert_eq!(facts.context, lantern_llama::DEFAULT_CONTEXT);
    let text = model.render(&conversation("hello")).unwrap();
    assert!(
        text.contains("<|im_start|>system") && text.contains("read_file(path: string"),
        "{text}"
    );
    assert!(text.trim_end().ends_with("<|im_start|>assistant"), "{text}");
}

#[test]
fn loading_errors_are_plain() {
    let missing = LocalModel::load(&LoadOptions::new("/no/such/model.gguf"), |_| {})
        .err()
        .unwrap();
    assert!(missing.0.contains("Model file not found"), "{missing}");
    let dir = std::env::temp_dir().join(format!("lantern-not-gguf-{}", std::process::id()));
    std::fs::write(&dir, b"{\"this\": \"is json\"}").unwrap();
    let not_gguf = LocalModel::load(&LoadOptions::new(&dir), |_| {})
        .err()
        .unwrap();
    std::fs::remove_file(&dir).unwrap();
    assert!(
        not_gguf.0.contains("is not a GGUF model file"),
        "{not_gguf}"
    );
    let mut too_big = LoadOptions::new(default_model_path());
    too_big.context = Some(10_000_000);
    let err = LocalModel::load(&too_big, |_| {}).err().unwrap();
    assert!(err.0.contains("larger than the"), "{err}");
}

#[test]
fn a_plain_answer_streams_and_writes_no_call_when_tools_are_off() {
    let mut model = model();
    let (g, pieces) = generate(
        &mut model,
        &conversation("Read package.json and tell me the version."),
        ToolChoice::None,
        48,
    );
    assert!(!g.text.is_empty());
    assert_eq!(pieces.concat(), g.text, "the pieces add up to the text");
    assert!(!g.text.contains(OPEN_TAG), "{}", g.text);
    assert!(matches!(
        g.finish,
        FinishReason::EndOfText | FinishReason::Length
    ));
    assert!(!g.constrained);
}

#[test]
fn required_always_yields_a_schema_valid_call() {
    let mut model = model();
    let registry = ToolRegistry::standard();
    for question in [
        "What version is in package.json?",
        "Find the function parse_config.",
        "List the TypeScript files.",
        "What is the capital of France?",
    ] {
        let (g, _) = generate(
            &mut model,
            &conversation(question),
            ToolChoice::Required,
            400,
        );
        assert!(g.constrained);
        assert_eq!(g.finish, FinishReason::Stop, "{question}: {}", g.text);
        match interpret(&parse(&g.text), &registry) {
            Outcome::ToolCall { tool, .. } => assert!(registry.spec(&tool).is_some()),
            other => panic!("{question}: not a valid call: {other:?}\n{}", g.text),
        }
    }
}

#[test]
fn the_grammar_offers_exactly_the_tools_of_the_request() {
    let mut model = model();
    let registry = ToolRegistry::standard();
    let only_listing: Vec<ToolSpec> = toolbox()
        .specs()
        .iter()
        .filter(|s| s.name == "list_files")
        .cloned()
        .collect();
    let cancel = CancelToken::new();
    // A question that asks for reading, while the request offers only listing.
    let messages = conversation("What version is in package.json?");
    let request = GenerateRequest::new(&messages, 200, &cancel)
        .with_tools(&only_listing)
        .with_stop(STOP_SEQUENCES)
        .with_tool_choice(ToolChoice::Required);
    let g = model.generate(&request, &mut |_| Flow::Continue).unwrap();
    assert!(g.constrained);
    match interpret(&parse(&g.text), &registry) {
        Outcome::ToolCall { tool, .. } => assert_eq!(tool, "list_files", "{}", g.text),
        other => panic!("not a valid call: {other:?}\n{}", g.text),
    }
    // The next request offers all tools again and gets its own grammar.
    let (g, _) = generate(&mut model, &messages, ToolChoice::Required, 200);
    assert!(matches!(
        interpret(&parse(&g.text), &registry),
        Outcome::ToolCall { .. }
    ));
}

#[test]
fn a_call_closes_even_when_the_model_loops_or_its_budget_runs_out() {
    let mut model = model();
    let registry = ToolRegistry::standard();
    // This question makes the model loop inside a string argument; with 60 tokens the budget
    // also runs low before any call of this model would end on its own.
    for (question, budget) in [
        ("In one sentence, what is a trait in Rust?", 400),
        ("Write a long poem about the sea into poem.txt.", 60),
        // Writes the closing tag inside the content, then loops on `<`.
        (
            "Use write_file to write notes.py with the content: def count_words(text): return len(text.split())",
            400,
        ),
    ] {
        let (g, _) = generate(
            &mut model,
            &conversation(question),
            ToolChoice::Required,
            budget,
        );
        assert_eq!(g.finish, FinishReason::Stop, "{question}: {}", g.text);
        match interpret(&parse(&g.text), &registry) {
            Outcome::ToolCall { tool, .. } => assert!(registry.spec(&tool).is_some()),
            other => panic!("{question}: not a valid call: {other:?}\n{}", g.text),
        }
    }
}

#[test]
fn auto_records_a_call_confidence_and_decides() {
    let mut model = model();
    let (g, _) = generate(
        &mut model,
        &conversation("What version is in package.json?"),
        ToolChoice::Auto,
        200,
    );
    let confidence = g
        .call_confidence
        .expect("auto measures the call confidence");
    assert!(confidence.is_finite() && confidence <= 0.0, "{confidence}");
    let decision = &model.last_step().decision;
    assert!(
        decision.starts_with("call") || decision.starts_with("answer"),
        "{decision}"
    );
    // A call, when taken, is constrained and complete.
    if decision.starts_with("call") {
        assert!(g.constrained && g.text.starts_with(OPEN_TAG), "{}", g.text);
    }
}

#[test]
fn cancellation_stops_generation() {
    let mut model = model();
    let cancel = CancelToken::new();
    let messages = conversation("Write a long story about a lighthouse.");
    let request = GenerateRequest::new(&messages, 400, &cancel)
        .with_tools(toolbox().specs())
        .with_stop(STOP_SEQUENCES)
        .with_tool_choice(ToolChoice::None);
    let mut pieces = 0;
    let started = std::time::Instant::now();
    let mut cancelled_at = None;
    let g = model
        .generate(&request, &mut |_| {
            pieces += 1;
            if pieces == 3 {
                cancel.cancel();
                cancelled_at = Some(std::time::Instant::now());
            }
            Flow::Continue
        })
        .unwrap();
    assert_eq!(g.finish, FinishReason::Cancelled);
    assert!(
        pieces <= 4,
        "generation went on after cancel: {pieces} pieces"
    );
    let latency = cancelled_at.unwrap().elapsed();
    eprintln!(
        "cancel honoured after {:?} (run took {:?})",
        latency,
        started.elapsed()
    );
}

#[test]
fn follow_up_steps_evaluate_only_their_new_tokens() {
    let mut model = model();
    let mut messages = conversation("What version is in package.json?");
    let (first, _) = generate(&mut model, &messages, ToolChoice::Required, 200);
    let first_prompt = model.last_step().prompt_tokens;
    let read = match interpret(&parse(&first.text), &ToolRegistry::standard()) {
        Outcome::ToolCall {
            tool, args, text, ..
        } => MadeCall {
            said: text,
            tool,
            args,
        },
        other => panic!("the first step is a call: {other:?}"),
    };
    messages.push(Message::assistant_call("call-1", first.text.clone(), read));
    messages.push(Message::tool_result("call-1", "{\"success\":true,\"data\":{\"content\":\"{\\\"version\\\": \\\"2.4.1\\\"}\"},\"error\":null}"));
    generate(&mut model, &messages, ToolChoice::None, 16);
    let step = model.last_step().clone();
    let new_tokens = step.prompt_tokens - first_prompt;
    eprintln!(
        "second step: {} prompt tokens, {} evaluated, {} reused, {} new since step 1",
        step.prompt_tokens, step.tokens_evaluated, step.tokens_reused, new_tokens
    );
    assert!(
        step.tokens_reused >= first_prompt - 1,
        "the first step's prompt came from the cache"
    );
    // The reply is re-tokenized from text, which may split a few tokens differently from
    // how they were generated; everything before it is reused exactly.
    assert!(step.tokens_evaluated <= new_tokens + 8, "{step:?}");
}

#[test]
fn an_overflowing_conversation_drops_its_oldest_turns() {
    let mut small = LoadOptions::new(default_model_path());
    small.context = Some(1024);
    let _guard = model(); // one model at a time
    let mut model = LocalModel::load(&small, |_| {}).unwrap();
    let mut messages = vec![Message::new(Role::System, "You are a helpful assistant.")];
    for i in 0..40 {
        messages.push(Message::new(
            Role::User,
            format!("Note {i}: the quick brown fox jumps over the lazy dog again and again."),
        ));
        messages.push(Message::new(Role::Assistant, "Noted."));
    }
    messages.push(Message::new(Role::User, "Say OK."));
    let (g, _) = generate(&mut model, &messages, ToolChoice::None, 8);
    assert!(g.messages_trimmed > 0);
    assert!(model.last_step().prompt_tokens <= 1024);
    // A single message too large for the context is an error in plain words.
    let huge = vec![Message::new(Role::User, "word ".repeat(3000))];
    let cancel = CancelToken::new();
    let request = GenerateRequest::new(&huge, 8, &cancel)
        .with_tools(toolbox().specs())
        .with_stop(STOP_SEQUENCES)
        .with_tool_choice(ToolChoice::None);
    let err = model
        .generate(&request, &mut |_| Flow::Continue)
        .err()
        .unwrap();
    assert!(
        err.0.contains("does not fit in the model's context"),
        "{err}"
    );
}

#[test]
fn the_agent_reads_a_file_through_a_valid_call() {
    let dir = tempfile_dir();
    std::fs::write(
        dir.join("package.json"),
        "{\n  \"name\": \"shop\",\n  \"version\": \"2.4.1\"\n}\n",
    )
    .unwrap();
    let mut model = model();
    let events = one_call(
        &dir,
        Toolbox::standard().into(),
        "What version is in package.json?",
        &mut model,
    );
    std::fs::remove_dir_all(&dir).unwrap();
    let call = events.iter().find_map(|e| match e {
        Event::CallParsed {
            tool, constrained, ..
        } => Some((tool.clone(), *constrained)),
        _ => None,
    });
    let (tool, constrained) = call.expect("a call was parsed");
    assert!(constrained);
    assert!(ToolRegistry::standard().spec(&tool).is_some());
    // The step says why it was a call: here the tool choice required one.
    let why = events.iter().find_map(|e| match e {
        Event::ResponseFinished { decision, .. } => decision.clone(),
        _ => None,
    });
    assert_eq!(why.as_deref(), Some("call (required)"));
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::ToolFinished { .. })));
    assert!(matches!(
        events.last(),
        Some(Event::TurnFinished {
            reason: FinishedReason::MaxSteps | FinishedReason::Answer,
            ..
        })
    ));
}

/// A session on `dir` that keeps no grants, checkpoints or transcript.
fn fresh_session(dir: &std::path::Path, toolbox: std::sync::Arc<Toolbox>) -> Session {
    Session::new(
        Workspace::open(dir).unwrap(),
        SessionOptions::in_memory(toolbox),
    )
}

/// One step of a fresh session on `dir` that must be a call, approved; its events.
fn one_call(
    dir: &std::path::Path,
    toolbox: std::sync::Arc<Toolbox>,
    question: &str,
    model: &mut LocalModel,
) -> Vec<Event> {
    let mut session = fresh_session(dir, toolbox);
    session.config.tool_choice = ToolChoice::Required;
    session.config.max_steps = 1;
    let mut events = Vec::new();
    session.send(
        question,
        model,
        &mut FixedAnswer(Answer::AllowOnce),
        &mut |e| events.push(e.clone()),
        &CancelToken::new(),
    );
    events
}

/// Reads the files of a fixture folder, for a request's `files`.
struct FixtureTexts(std::path::PathBuf);

impl lantern_core::model::FileTexts for FixtureTexts {
    fn text_of(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.0.join(rel)).ok()
    }
}

#[test]
fn an_edit_s_old_text_is_always_found_once_in_the_file_it_names() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/fixtures");
    let edit = toolbox()
        .specs()
        .iter()
        .find(|s| s.name == "edit_file")
        .unwrap()
        .clone();
    let mut model = model();
    let mut seen = Vec::new();
    for (fixture, question) in [
        ("semver", "Set MAX_LENGTH to 512 in internal/constants.js."),
        ("semver", "Make the version in package.json 7.7.0."),
        (
            "rust-calc",
            "add(2, 3) returns -1 instead of 5. Fix the bug in src/lib.rs.",
        ),
        ("py-notes", "Change the port in config.toml to 8080."),
        (
            "node-shop",
            "removeItem in src/cart.ts keeps the item it should delete. Fix it.",
        ),
    ] {
        let root = fixtures.join(fixture);
        let known = lantern_core::walk::known_paths(&Workspace::open(&root).unwrap());
        let texts = FixtureTexts(root.clone());
        let cancel = CancelToken::new();
        let messages = conversation(question);
        let request = GenerateRequest::new(&messages, 400, &cancel)
            .with_tools(std::slice::from_ref(&edit))
            .with_workspace(&known, &texts)
            .with_stop(STOP_SEQUENCES)
            .with_tool_choice(ToolChoice::Required);
        let generation = model.generate(&request, &mut |_| Flow::Continue).unwrap();
        let turn = parse(&generation.text);
        let call = turn
            .call
            .as_ref()
            .unwrap_or_else(|| panic!("no call: {}", generation.text));
        let path = call.args["path"].as_str().unwrap();
        let old = call.args["old_text"].as_str().unwrap();
        let file = std::fs::read_to_string(root.join(path)).unwrap();
        assert_eq!(
            file.matches(old).count(),
            1,
            "{question}: {old:?} must stand once in {path}"
        );
        seen.push(format!("{question} → {path}: {old:?}"));
    }
    eprintln!("{}", seen.join("\n"));
}

/// Copies a folder tree of plain files (a fixture) to `to`.
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn grounded_calls_name_paths_that_exist_with_only_lean_arguments() {
    let dir = tempfile_dir();
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/fixtures/semver");
    copy_tree(&fixture, &dir);
    let mut model = model();
    let toolbox: std::sync::Arc<Toolbox> = Toolbox::standard().into();
    let mut calls = Vec::new();
    for question in [
        "What is this package's version number?",
        "Show me where coerce is implemented.",
        "What is inside internal/?",
        "Explain functions/clean.js to me.",
    ] {
        let events = one_call(&dir, toolbox.clone(), question, &mut model);
        calls.extend(events.into_iter().filter_map(|e| match e {
            Event::CallParsed { tool, args, .. } => Some((question, tool, args)),
            _ => None,
        }));
    }
    let mut named = 0;
    for (question, tool, args) in &calls {
        // Lean calls (the default): only required and path arguments are offered.
        let spec = toolbox.specs().iter().find(|s| &s.name == tool).unwrap();
        let schema = &spec.input_schema;
        for key in args.as_object().into_iter().flat_map(|a| a.keys()) {
            let required = schema["required"]
                .as_array()
                .is_some_and(|r| r.iter().any(|k| k == key));
            assert!(
                required || schema["properties"][key].get("x-path").is_some(),
                "{question}: {tool} was offered the optional argument {key:?}"
            );
        }
        for key in ["path", "directory", "file"] {
            if let Some(path) = args.get(key).and_then(|v| v.as_str()) {
                if tool == "write_file" {
                    continue;
                }
                named += 1;
                assert!(
                    dir.join(path).exists(),
                    "{question}: {tool} names {path:?}, which does not exist"
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        named >= 2,
        "too few calls named a path to prove anything: {calls:?}"
    );
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "lantern-llama-test-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_context_a_step_reports_is_what_llama_cpp_holds() {
    let mut model = model();
    for (question, choice) in [
        ("What does HTTP stand for?", ToolChoice::None),
        ("What version is in package.json?", ToolChoice::Required),
    ] {
        model.clear_cache();
        let (generation, _) = generate(&mut model, &conversation(question), choice, 24);
        let used = generation.context_used.unwrap() as f64;
        let held = model.kv_positions() as f64;
        assert!(
            (used - held).abs() <= (held * 0.01).max(1.0),
            "{question}: the step reports {used} tokens, llama.cpp holds {held}"
        );
        assert_eq!(
            generation.context_size,
            Some(model.facts().context as usize)
        );
    }
}

#[test]
fn a_question_that_asks_for_no_change_is_answered_by_reading() {
    let dir = tempfile_dir().join("asks");
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/fixtures/semver");
    copy_tree(&fixture, &dir);
    let mut model = model();
    let toolbox: std::sync::Arc<Toolbox> = Toolbox::standard().into();
    model.configure(&lantern_core::model::GenerationOptions {
        changes_when_asked: true,
        ..Default::default()
    });
    let events = one_call(
        &dir,
        toolbox.clone(),
        "Tell me which command this package puts on the PATH when installed.",
        &mut model,
    );
    model.configure(&Default::default());
    std::fs::remove_dir_all(&dir).unwrap();
    let tool = events
        .into_iter()
        .find_map(|e| match e {
            Event::CallParsed { tool, .. } => Some(tool),
            _ => None,
        })
        .expect("a required step is a call");
    let risk = toolbox
        .specs()
        .iter()
        .find(|s| s.name == tool)
        .map(|s| s.risk)
        .unwrap();
    // The lever's effect on the first tool; what the model does without it is the eval's
    // (`--off changes-when-asked`).
    assert_eq!(risk, Risk::Read, "{tool}");
}

#[test]
fn a_message_that_names_the_project_makes_the_first_step_a_call() {
    let dir = tempfile_dir().join("named-project");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("pyproject.toml"),
        "[project]\nname = \"quillpad\"\nrequires-python = \">=3.9\"\n",
    )
    .unwrap();
    let known = lantern_core::model::KnownPaths::from_files(vec!["pyproject.toml".into()]);
    let texts = FixtureTexts(dir.clone());
    let messages = conversation("Does quillpad still run on Python 3.8?");
    let mut model = model();
    model.configure(&lantern_core::model::GenerationOptions {
        named_project: true,
        ..Default::default()
    });
    let cancel = CancelToken::new();
    let request = GenerateRequest::new(&messages, 120, &cancel)
        .with_tools(toolbox().specs())
        .with_workspace(&known, &texts)
        .with_stop(STOP_SEQUENCES);
    model.generate(&request, &mut |_| Flow::Continue).unwrap();
    let decision = model.last_step().decision.clone();
    model.configure(&Default::default());
    std::fs::remove_dir_all(&dir).unwrap();
    // The rule decides, whatever the model's own score; what the model does without it is the
    // eval's (`--off named-project`).
    assert_eq!(decision, "call (the message names the project)");
}

#[test]
fn an_answer_that_loops_is_given_once_and_said_to_be_cut() {
    let dir = tempfile_dir().join("loops");
    std::fs::create_dir_all(&dir).unwrap();
    let mut model = model();
    let mut session = fresh_session(&dir, Toolbox::standard().into());
    session.config.tool_choice = ToolChoice::None;
    let mut events = Vec::new();
    // Greedy, a tiny model tends to answer a general question in a loop (`vendor.vendor.…`);
    // whether it loops is the model's business, what the user is given is asserted.
    session.send(
        "In npm, which versions does a tilde range such as ~2.4.1 accept?",
        &mut *model,
        &mut FixedAnswer(Answer::Deny { message: None }),
        &mut |e| events.push(e.clone()),
        &CancelToken::new(),
    );
    let looped = model.last_step().stopped_looping;
    std::fs::remove_dir_all(&dir).unwrap();
    let streamed: String = events
        .iter()
        .filter_map(|e| match e {
            Event::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let cut = events.iter().find_map(|e| match e {
        Event::AnswerCut { text, .. } => Some(text.clone()),
        _ => None,
    });
    let Some(Event::TurnFinished { reason, text, .. }) = events.last() else {
        panic!("the turn did not finish: {events:?}");
    };
    assert_eq!(*reason, FinishedReason::Answer);
    match cut {
        // A reply the engine ended for looping is given once, said to be cut, and nothing in
        // it repeats.
        Some(cut) => {
            assert!(looped, "cut though the engine saw no loop: {streamed:?}");
            assert_eq!(*text, cut);
            assert!(
                streamed.trim_start().starts_with(&cut),
                "{cut:?} | {streamed:?}"
            );
            assert!(cut.len() < streamed.trim().len(), "{cut:?}");
            assert_eq!(lantern_core::repeats::before_repeats(&cut), None, "{cut:?}");
        }
        // Any other reply is given as it was streamed: one that never looped, and one ended for
        // repeating a phrase here and there rather than its whole tail, which has no single
        // point to cut at.
        None => assert_eq!(text.trim(), streamed.trim()),
    }
}

#[test]
fn a_listing_asked_about_a_glob_is_narrowed_to_it() {
    let dir = tempfile_dir().join("globs");
    for file in [
        "tests/test_parse.py",
        "tests/test_render.py",
        "tests/conftest.py",
        "tests/data/sample.txt",
        "src/app.py",
    ] {
        std::fs::create_dir_all(dir.join(file).parent().unwrap()).unwrap();
        std::fs::write(dir.join(file), "x = 1\n").unwrap();
    }
    let known = lantern_core::walk::known_paths(&Workspace::open(&dir).unwrap());
    let texts = FixtureTexts(dir.clone());
    // Only the listing is offered: which tool the model picks is the eval's to measure; the
    // pattern a listing is given is the lever's.
    let list = toolbox()
        .specs()
        .iter()
        .find(|s| s.name == "list_files")
        .unwrap()
        .clone();
    let messages = conversation("How many test_*.py files does the tests folder hold?");
    let cancel = CancelToken::new();
    let request = GenerateRequest::new(&messages, 120, &cancel)
        .with_tools(std::slice::from_ref(&list))
        .with_workspace(&known, &texts)
        .with_stop(STOP_SEQUENCES)
        .with_tool_choice(ToolChoice::Required);
    let generation = model().generate(&request, &mut |_| Flow::Continue).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let turn = parse(&generation.text);
    let call = turn
        .call
        .as_ref()
        .unwrap_or_else(|| panic!("no call: {}", generation.text));
    // The glob of the message is the listing's pattern; without the lever the model lists the
    // whole folder, which the eval measures (`--off question-globs`).
    assert_eq!(call.args["pattern"], "test_*.py", "{}", generation.text);
}

#[test]
fn a_calculation_is_made_by_the_calculator_and_its_result_quoted_in_the_answer() {
    let dir = tempfile_dir().join("calculation");
    std::fs::create_dir_all(&dir).unwrap();
    let mut session = fresh_session(&dir, Toolbox::standard().into());
    session.config.max_steps = 3;
    let mut events = Vec::new();
    session.send(
        "What is 17 * 23?",
        &mut *model(),
        &mut FixedAnswer(Answer::AllowOnce),
        &mut |e| events.push(e.clone()),
        &CancelToken::new(),
    );
    std::fs::remove_dir_all(&dir).unwrap();
    let first_decision = events.iter().find_map(|e| match e {
        Event::ResponseFinished { decision, .. } => decision.clone(),
        _ => None,
    });
    assert_eq!(
        first_decision.as_deref(),
        Some("call (the message spells out a calculation)")
    );
    let call = events.iter().find_map(|e| match e {
        Event::CallParsed { tool, args, .. } => Some((tool.clone(), args.clone())),
        _ => None,
    });
    let (tool, args) = call.expect("a call was parsed");
    assert_eq!(tool, "calculate");
    // The expression is the one the message spells out, not one the model made up.
    assert_eq!(args["expression"], "17 * 23");
    let result = events.iter().find_map(|e| match e {
        Event::ToolFinished { result, .. } => Some(result.clone()),
        _ => None,
    });
    assert_eq!(result.expect("the tool ran").data.unwrap()["result"], "391");
    // The model's own words (its last reply, before any note of Lantern's) quote the result.
    let answer = events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::ResponseFinished { raw, .. } => Some(raw.clone()),
            _ => None,
        })
        .unwrap();
    assert!(answer.contains("391"), "{answer}");
}
