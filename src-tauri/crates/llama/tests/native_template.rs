//! A local model prompted through its own tool-aware chat template: the default model with
//! `tests/templates/chatml-tools.jinja` written into a copy of its GGUF (made by
//! `scripts/tool-template-model.sh`, which `npm test` runs). The template is rendered with the
//! tools, the model writes its native `<tool_call>` form held to the schemas by the grammar, and
//! the agent runs the call and feeds the result back through the template.

use lantern_core::agent::{Answer, FixedAnswer, Session, SessionOptions};
use lantern_core::event::{Event, FinishedReason};
use lantern_core::model::{
    CallPath, CancelToken, Flow, GenerateRequest, Generation, GenerationOptions, Message, Model,
    Role, ToolChoice,
};
use lantern_core::protocol::{interpret, parse, Dialect, Outcome, STOP_SEQUENCES};
use lantern_core::sandbox::Workspace;
use lantern_core::toolbox::Toolbox;
use lantern_core::tools::{ToolRegistry, ToolSpec};
use lantern_llama::{default_model_path, LoadOptions, LocalModel};
use std::path::PathBuf;
use std::sync::Arc;

mod support;

/// A copy of the default model with a tool-aware template, made by
/// `scripts/tool-template-model.sh VARIANT`.
fn test_model(variant: &str) -> PathBuf {
    let path =
        default_model_path().with_file_name(format!("SmolLM2-135M-Instruct.{variant}.Q4_1.gguf"));
    assert!(
        path.exists(),
        "the test model with a tool-aware template is missing at {}: run scripts/tool-template-model.sh (npm test does)",
        path.display()
    );
    path
}

fn load(native_template: bool) -> LocalModel {
    load_variant("tools", native_template)
}

fn load_variant(variant: &str, native_template: bool) -> LocalModel {
    let options = LoadOptions {
        threads: Some(1),
        native_template,
        ..LoadOptions::new(test_model(variant))
    };
    let model = support::keeping_calibration(LocalModel::load(&options, |_| {}).unwrap());
    support::keeping_openings(model)
}

#[test]
fn a_tool_aware_template_is_used_natively_unless_the_text_protocol_is_chosen() {
    let native = load(true);
    assert_eq!(native.facts().call_path, CallPath::Native);
    assert_eq!(native.call_path(), CallPath::Native);
    assert!(native.facts().call_path_why.contains("<tool_call>"));
    drop(native);

    let text = load(false);
    assert_eq!(text.facts().call_path, CallPath::Text);
    assert!(text
        .facts()
        .call_path_why
        .contains("text protocol was chosen"));
    drop(text);

    // The default model's own template takes no tools.
    let plain = LocalModel::load(&LoadOptions::new(default_model_path()), |_| {}).unwrap();
    assert_eq!(plain.facts().call_path, CallPath::Text);
    assert!(plain.facts().call_path_why.contains("takes no tools"));
}

#[test]
fn a_turn_through_the_model_s_own_template_reads_a_file_and_answers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("package.json"),
        "{\n  \"name\": \"corner-shop\",\n  \"version\": \"3.7.2\"\n}\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/cart.js"), "export const total = 0;\n").unwrap();
    let mut model = load(true);
    let toolbox = Arc::new(Toolbox::standard());

    // What the model reads: its own template with the tools, and no text protocol.
    let system = toolbox.system_prompt_for(model.call_path()).to_string();
    assert!(!system.contains("<TOOL_CALL>"));
    model.offer_tools(toolbox.specs());
    let prompt = model
        .render(&[
            Message::new(Role::System, system),
            Message::new(Role::User, "?"),
        ])
        .unwrap();
    assert!(prompt.contains("<tools>") && prompt.contains("\"name\":\"read_file\""));

    let mut session = Session::new(
        Workspace::open(dir.path()).unwrap(),
        SessionOptions::in_memory(toolbox),
    );
    session.config.tool_choice = ToolChoice::Auto;
    session.config.max_steps = 3;
    session.config.max_tokens = 160;
    let mut events = Vec::new();
    session.send(
        "What version is declared in package.json?",
        &mut model,
        &mut FixedAnswer(Answer::AllowOnce),
        &mut |e| events.push(e.clone()),
        &CancelToken::new(),
    );

    let call = events
        .iter()
        .find_map(|e| match e {
            Event::CallParsed {
                tool,
                args,
                dialect,
                constrained,
                via,
                raw,
                ..
            } => Some((tool, args, dialect, constrained, via, raw)),
            _ => None,
        })
        .expect("the first step is a call");
    let (tool, args, dialect, constrained, via, raw) = call;
    assert_eq!(tool, "read_file");
    assert_eq!(args["path"], "package.json");
    assert_eq!(*dialect, Dialect::Hermes);
    assert!(*constrained, "the grammar holds a native call too");
    assert_eq!(*via, CallPath::Native);
    assert!(
        raw.starts_with("<tool_call>") && raw.ends_with("</tool_call>"),
        "{raw}"
    );
    assert!(
        !raw.contains("reasoning"),
        "a native call has no reasoning: {raw}"
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::ToolFinished { success: true, .. })));
    // The result went back through the template and the model answered in words.
    let Some(Event::TurnFinished { reason, text, .. }) = events.last() else {
        panic!("the turn did not finish: {events:?}");
    };
    assert_eq!(*reason, FinishedReason::Answer, "{text}");
    assert!(
        !text.trim().is_empty() && !text.contains("<tool_call>"),
        "{text}"
    );
    let steps = events
        .iter()
        .filter(|e| matches!(e, Event::StepStarted { .. }))
        .count();
    assert_eq!(steps, 2);
}

/// The native copy `variant`, checked to be prompted natively for the reason `why` names.
fn native_model(variant: &str, why: &str) -> LocalModel {
    let model = load_variant(variant, true);
    assert_eq!(model.call_path(), CallPath::Native);
    assert!(
        model.facts().call_path_why.contains(why),
        "{}",
        model.facts().call_path_why
    );
    model
}

/// The reading tools: enough for a call's form, and a prompt a third the size of all tools'.
fn reading_tools() -> Vec<ToolSpec> {
    Toolbox::standard()
        .specs()
        .iter()
        .filter(|s| ["read_file", "list_files", "search_code"].contains(&s.name.as_str()))
        .cloned()
        .collect()
}

/// The conversation of [`required_call`]: the native system prompt and a question about the
/// manifest.
fn manifest_question() -> [Message; 2] {
    [
        Message::new(
            Role::System,
            Toolbox::standard().system_prompt_for(CallPath::Native),
        ),
        Message::new(Role::User, "What version is declared in package.json?"),
    ]
}

/// One step of `model` on a question about the manifest, with the reading tools, which must be
/// a call; what was streamed, and the generation.
fn required_call(model: &mut LocalModel) -> (String, Generation) {
    let messages = manifest_question();
    let tools = reading_tools();
    let cancel = CancelToken::new();
    let request = GenerateRequest::new(&messages, 120, &cancel)
        .with_tools(&tools)
        .with_stop(STOP_SEQUENCES)
        .with_tool_choice(ToolChoice::Required);
    let mut shown = String::new();
    let generation = model
        .generate(&request, &mut |piece| {
            shown.push_str(piece);
            Flow::Continue
        })
        .unwrap();
    assert!(generation.constrained);
    (shown, generation)
}

/// Reads `text` with the one parser: a valid call, in `dialect`.
fn assert_valid_call(text: &str, dialect: Dialect) {
    let turn = parse(text);
    assert_eq!(
        turn.call.as_ref().map(|c| c.dialect),
        Some(dialect),
        "{text}"
    );
    assert!(
        matches!(
            interpret(&turn, &ToolRegistry::standard()),
            Outcome::ToolCall(_)
        ),
        "{text}"
    );
}

#[test]
fn a_thinking_model_thinks_within_its_budget_and_then_calls_under_the_grammar() {
    let mut model = native_model("thinking-tools", "thinks");
    for budget in [24, 0] {
        model.configure(&GenerationOptions {
            thinking_budget: budget,
            ..GenerationOptions::default()
        });
        let (shown, generation) = required_call(&mut model);
        let thought = model.last_step().thinking_tokens;
        assert!(
            thought <= budget as usize,
            "{thought} tokens over a budget of {budget}"
        );
        assert_eq!(
            generation.thinking.is_empty(),
            budget == 0,
            "{generation:?}"
        );
        // The thinking is neither the reply nor shown as it; the call after it is whole.
        assert!(!generation.text.contains("think>") && !shown.contains("think>"));
        assert!(
            generation.text.starts_with("<tool_call>"),
            "{}",
            generation.text
        );
        assert_valid_call(&generation.text, Dialect::Hermes);
    }
}

#[test]
fn thinking_never_takes_the_room_the_reply_needs() {
    // A context that holds the prompt and the reply, with less room to think than the budget
    // asks: the prompt's size is measured first.
    let prompt = {
        let mut model = native_model("thinking-tools", "thinks");
        model.offer_tools(&reading_tools());
        model
            .tokenize(&model.render(&manifest_question()).unwrap())
            .len()
    };
    let context = (prompt + 192) as u32;
    let options = LoadOptions {
        threads: Some(1),
        context: Some(context),
        ..LoadOptions::new(test_model("thinking-tools"))
    };
    let mut model = LocalModel::load(&options, |_| {}).unwrap();
    model.configure(&GenerationOptions {
        thinking_budget: 8192,
        ..GenerationOptions::default()
    });
    let (_, generation) = required_call(&mut model);
    let step = model.last_step();
    assert!(step.thinking_tokens > 0, "it had room to think");
    assert!(
        step.prompt_tokens + step.tokens_generated <= context as usize,
        "{} prompt tokens, {} generated",
        step.prompt_tokens,
        step.tokens_generated
    );
    assert_valid_call(&generation.text, Dialect::Hermes);
}

#[test]
fn a_llama_3_style_model_calls_with_the_bare_object_held_to_the_schemas() {
    let mut model = native_model("llama3-tools", "{\"name\": \"");
    let (_, generation) = required_call(&mut model);
    assert!(
        generation.text.starts_with("{\"name\": \""),
        "{}",
        generation.text
    );
    // The reply is the object and nothing else.
    let value: serde_json::Value = serde_json::from_str(&generation.text).unwrap();
    assert!(value["parameters"].is_object(), "{value}");
    assert_valid_call(&generation.text, Dialect::BareJson);
}

#[test]
fn a_mistral_style_model_calls_with_a_list_of_one_object_held_to_the_schemas() {
    let mut model = native_model("mistral-tools", "[TOOL_CALLS]");
    let (_, generation) = required_call(&mut model);
    let list = generation
        .text
        .strip_prefix("[TOOL_CALLS]")
        .unwrap_or_else(|| panic!("{}", generation.text));
    // The opener and a list of one call, nothing else.
    let value: serde_json::Value = serde_json::from_str(list).unwrap();
    assert!(value[0]["arguments"].is_object(), "{value}");
    assert_valid_call(&generation.text, Dialect::Mistral);
}
