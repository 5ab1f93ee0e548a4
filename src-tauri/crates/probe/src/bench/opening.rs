//! The first answer of a fresh process, with and without the persisted prompt cache: how many
//! prompt tokens it evaluates and how long its first token takes, against a cache that already
//! holds the opening (evaluating the message's own tokens alone); and loading the saved opening
//! against evaluating it.

use lantern_core::model::{CancelToken, Flow, GenerateRequest, Message, Model, Role, ToolChoice};
use lantern_core::protocol::STOP_SEQUENCES;
use lantern_core::toolbox::Toolbox;
use lantern_llama::{LocalModel, Opening, PromptCache};
use serde::Serialize;

const QUESTION: &str = "What does HTTP stand for?";

/// One first step.
#[derive(Debug, Clone, Serialize)]
pub struct FirstStep {
    pub opening: Opening,
    pub prompt_tokens: usize,
    pub tokens_evaluated: usize,
    pub first_token_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct FirstAnswer {
    pub opening_tokens: usize,
    /// No saved opening: the whole prompt is evaluated (and the opening saved).
    pub cold: FirstStep,
    /// The saved opening loaded: only the message and the template's glue are evaluated.
    pub loaded: FirstStep,
    /// The opening already in the KV cache: the message's own tokens alone.
    pub held: FirstStep,
    /// `loaded` over `held` first-token time.
    pub first_token_ratio: f64,
    pub opening_evaluate_ms: f64,
    pub opening_load_ms: f64,
    /// Loading over evaluating the opening.
    pub load_ratio: f64,
}

/// Measures with a prompt cache in a fresh temporary folder; the model's own cache is put
/// back afterwards. `None` when the folder or the model file cannot be used.
pub fn first_answer(model: &mut LocalModel, toolbox: &Toolbox) -> Option<FirstAnswer> {
    let folder = std::env::temp_dir().join(format!("lantern-bench-opening-{}", std::process::id()));
    let facts = model.facts().clone();
    let cache = PromptCache::new(folder.clone(), &facts.path, facts.context).ok()?;
    let own = model.replace_prompt_cache(Some(cache));
    let messages = [
        Message::new(Role::System, toolbox.system_prompt()),
        Message::new(Role::User, QUESTION),
    ];
    model.clear_cache();
    let cold = first_step(model, toolbox, &messages);
    model.clear_cache();
    let loaded = first_step(model, toolbox, &messages);
    // The cache now holds the opening and the question: back to the opening alone.
    let costs = model.opening_costs(&messages);
    let held = first_step(model, toolbox, &messages);
    model.replace_prompt_cache(own);
    let _ = std::fs::remove_dir_all(&folder);
    let (opening_tokens, opening_evaluate_ms, opening_load_ms) = costs?;
    Some(FirstAnswer {
        opening_tokens,
        first_token_ratio: loaded.first_token_ms / held.first_token_ms.max(1e-9),
        load_ratio: opening_load_ms / opening_evaluate_ms.max(1e-9),
        cold,
        loaded,
        held,
        opening_evaluate_ms,
        opening_load_ms,
    })
}

fn first_step(model: &mut LocalModel, toolbox: &Toolbox, messages: &[Message]) -> FirstStep {
    let cancel = CancelToken::new();
    let request = GenerateRequest::new(messages, 4, &cancel)
        .with_tools(toolbox.specs())
        .with_stop(STOP_SEQUENCES)
        .with_tool_choice(ToolChoice::None);
    let _ = model.generate(&request, &mut |_| Flow::Continue);
    let step = model.last_step();
    FirstStep {
        opening: step.opening,
        prompt_tokens: step.prompt_tokens,
        tokens_evaluated: step.tokens_evaluated,
        first_token_ms: step.first_token_ms,
    }
}
