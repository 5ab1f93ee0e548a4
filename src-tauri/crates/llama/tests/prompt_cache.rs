//! The persisted prompt cache with the real default model: a fresh process (here, a freshly
//! loaded model) loads the opening another one saved, evaluates only what follows it, and
//! answers exactly as if it had evaluated everything; a damaged state is never trusted.

use lantern_core::model::{CancelToken, Flow, GenerateRequest, Message, Model, Role, ToolChoice};
use lantern_core::protocol::STOP_SEQUENCES;
use lantern_core::toolbox::Toolbox;
use lantern_llama::{default_model_path, LoadOptions, LocalModel, Opening, PromptCache};
use std::path::Path;

fn fresh_model(cache: &Path) -> LocalModel {
    let path = default_model_path();
    assert!(
        path.exists(),
        "the default model is missing at {}: run scripts/fetch-model.sh (npm test does)",
        path.display()
    );
    let mut model = LocalModel::load(&LoadOptions::new(path.clone()), |_| {}).unwrap();
    // Batches sized by the measured speed would split the prompt differently from run to run,
    // and greedy decoding can turn on the last bits of the sums: the same split every time.
    model.settings.prompt_batch = 8;
    let context = model.facts().context;
    model.with_prompt_cache(PromptCache::new(cache.to_path_buf(), &path, context).unwrap())
}

/// One answer (tools off, so no calibration runs): its text and the step's stats.
fn answer(model: &mut LocalModel, question: &str) -> (String, lantern_llama::StepStats) {
    let toolbox = Toolbox::standard();
    let messages = [
        Message::new(Role::System, toolbox.system_prompt()),
        Message::new(Role::User, question),
    ];
    let cancel = CancelToken::new();
    let request = GenerateRequest::new(&messages, 12, &cancel)
        .with_tools(toolbox.specs())
        .with_stop(STOP_SEQUENCES)
        .with_tool_choice(ToolChoice::None);
    let text = model
        .generate(&request, &mut |_| Flow::Continue)
        .unwrap()
        .text;
    (text, model.last_step().clone())
}

#[test]
fn a_fresh_model_loads_the_saved_opening_and_evaluates_only_what_follows() {
    let cache = tempfile::tempdir().unwrap();
    let question = "What does HTTP stand for?";

    let (first_text, first) = answer(&mut fresh_model(cache.path()), question);
    assert_eq!(first.opening, Opening::Saved);
    assert_eq!(first.tokens_evaluated, first.prompt_tokens);
    let states: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "state"))
        .collect();
    assert_eq!(states.len(), 1, "one opening, one state");

    let (text, loaded) = answer(&mut fresh_model(cache.path()), question);
    assert_eq!(loaded.opening, Opening::Loaded);
    assert!(
        loaded.tokens_evaluated < 40,
        "only the question and the template's glue: {} of {} evaluated",
        loaded.tokens_evaluated,
        loaded.prompt_tokens
    );
    assert_eq!(
        text, first_text,
        "a loaded opening answers as an evaluated one"
    );

    // A damaged state is removed and the opening evaluated (and saved) again.
    let mut bytes = std::fs::read(&states[0]).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&states[0], bytes).unwrap();
    let (text, recomputed) = answer(&mut fresh_model(cache.path()), question);
    assert_eq!(recomputed.opening, Opening::Saved);
    assert_eq!(recomputed.tokens_evaluated, recomputed.prompt_tokens);
    assert_eq!(text, first_text);

    // A state saved under another context size is not this model's.
    let other = PromptCache::new(cache.path().to_path_buf(), &default_model_path(), 2048);
    let mut small = LocalModel::load(
        &LoadOptions {
            context: Some(2048),
            ..LoadOptions::new(default_model_path())
        },
        |_| {},
    )
    .unwrap()
    .with_prompt_cache(other.unwrap());
    let (_, separate) = answer(&mut small, question);
    assert_eq!(separate.opening, Opening::Saved);
}
