//! Throughput measurements of the in-process engine, shaped like llama.cpp's `llama-bench`
//! (prompt processing of N tokens in one batch, generation of N tokens one at a time), plus
//! what only Lantern has: grammar-constrained calls and follow-up steps with KV reuse.

mod grounding;
mod opening;

pub use grounding::GroundingSpeed;
pub use opening::FirstAnswer;

use lantern_core::model::{
    CancelToken, Flow, GenerateRequest, MadeCall, Message, Model, Role, ToolChoice,
};
use lantern_core::protocol::{interpret, parse, Outcome, STOP_SEQUENCES};
use lantern_core::tool_result::ShownResult;
use lantern_core::toolbox::Toolbox;
use lantern_llama::{LocalModel, ModelFacts};
use serde::Serialize;
use std::time::Instant;

/// Tokens per second for prompt processing of `n` tokens decoded in batches of `batch`, from an
/// empty cache (as `llama-bench -p n`).
pub fn prompt_speed(model: &mut LocalModel, n: usize, batch: usize) -> f64 {
    let tokens = model.filler_tokens(n);
    model.clear_cache();
    let started = Instant::now();
    let result = model.evaluate_tokens(&tokens, batch);
    let seconds = started.elapsed().as_secs_f64();
    result.map(|_| n as f64 / seconds).unwrap_or(0.0)
}

/// Tokens per second generating `n` tokens one at a time after a one-token prompt (as
/// `llama-bench -n n`), including Lantern's sampling of each token.
pub fn generation_speed(model: &mut LocalModel, n: usize) -> f64 {
    model.clear_cache();
    let first = model.filler_tokens(1);
    let started = Instant::now();
    let generated = model.generate_free(&first, n);
    generated as f64 / started.elapsed().as_secs_f64()
}

#[derive(Debug, Clone, Serialize)]
pub struct GrammarSpeed {
    pub with_grammar_tok_s: f64,
    pub without_grammar_tok_s: f64,
    pub ratio: f64,
    pub tokens_with: usize,
    pub tokens_without: usize,
}

/// Generation speed of calls with and without the grammar, over the same questions in
/// `required` mode (the call is forced either way; only the grammar differs).
pub fn grammar_speed(
    model: &mut LocalModel,
    toolbox: &Toolbox,
    questions: &[&str],
) -> GrammarSpeed {
    let system = toolbox.system_prompt();
    let saved = model.settings.options.grammar;
    let mut measure = |grammar: bool| {
        model.settings.options.grammar = grammar;
        let (mut tokens, mut seconds) = (0usize, 0.0f64);
        for q in questions {
            let messages = [
                Message::new(Role::System, system),
                Message::new(Role::User, *q),
            ];
            let cancel = CancelToken::new();
            let request = GenerateRequest::new(&messages, 160, &cancel)
                .with_tools(toolbox.specs())
                .with_stop(STOP_SEQUENCES)
                .with_tool_choice(ToolChoice::Required);
            if model.generate(&request, &mut |_| Flow::Continue).is_ok() {
                let step = model.last_step();
                tokens += step.tokens_generated;
                seconds += step.generation_ms / 1000.0;
            }
        }
        (tokens, tokens as f64 / seconds.max(1e-9))
    };
    let (tokens_with, with_grammar_tok_s) = measure(true);
    let (tokens_without, without_grammar_tok_s) = measure(false);
    model.settings.options.grammar = saved;
    GrammarSpeed {
        with_grammar_tok_s,
        without_grammar_tok_s,
        ratio: with_grammar_tok_s / without_grammar_tok_s.max(1e-9),
        tokens_with,
        tokens_without,
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct FollowUp {
    pub prompt_tokens: usize,
    pub new_tokens: usize,
    pub reuse_tokens_evaluated: usize,
    pub reuse_first_token_ms: f64,
    pub full_tokens_evaluated: usize,
    pub full_first_token_ms: f64,
}

/// A follow-up step (the tool result after a call) with the cache kept, and the same step
/// after clearing the cache.
pub fn follow_up(model: &mut LocalModel, toolbox: &Toolbox) -> FollowUp {
    let system = toolbox.system_prompt();
    let mut messages = vec![
        Message::new(Role::System, system),
        Message::new(Role::User, "What version is in package.json?"),
    ];
    let step = |model: &mut LocalModel, messages: &[Message], choice: ToolChoice| {
        let cancel = CancelToken::new();
        let request = GenerateRequest::new(messages, 160, &cancel)
            .with_tools(toolbox.specs())
            .with_stop(STOP_SEQUENCES)
            .with_tool_choice(choice);
        model
            .generate(&request, &mut |_| Flow::Continue)
            .map(|g| g.text)
            .unwrap_or_default()
    };
    model.clear_cache();
    let call = step(model, &messages, ToolChoice::Required);
    let first_prompt = model.last_step().prompt_tokens;
    // The call is read as the agent reads it; a reply that is no call stays plain text.
    messages.push(match interpret(&parse(&call), toolbox.registry()) {
        Outcome::ToolCall(parsed) => Message::assistant_call(
            "call-1",
            call.trim(),
            MadeCall {
                said: parsed.text,
                tool: parsed.call.tool,
                args: parsed.call.args,
            },
        ),
        _ => Message::new(Role::Assistant, call.trim()),
    });
    let read = r#"{"success":true,"data":{"path":"package.json","content":"{\n  \"name\": \"shop\",\n  \"version\": \"2.4.1\"\n}\n","total_lines":4},"error":null}"#;
    let read = ShownResult::from_json(read).expect("the example result is JSON");
    messages.push(Message::tool_result("call-1", read));
    step(model, &messages, ToolChoice::None);
    let reuse = model.last_step().clone();
    model.clear_cache();
    step(model, &messages, ToolChoice::None);
    let full = model.last_step().clone();
    FollowUp {
        prompt_tokens: reuse.prompt_tokens,
        new_tokens: reuse.prompt_tokens - first_prompt,
        reuse_tokens_evaluated: reuse.tokens_evaluated,
        reuse_first_token_ms: reuse.first_token_ms,
        full_tokens_evaluated: full.tokens_evaluated,
        full_first_token_ms: full.first_token_ms,
    }
}

/// Call questions for [`grammar_speed`] in a whole run.
const GRAMMAR_QUESTIONS: [&str; 4] = [
    "What version is in package.json?",
    "Find the function parse_config.",
    "List the TypeScript files in src.",
    "Read the README.",
];

/// A whole run of `lantern bench-model`; the field names are what scripts/bench-model.sh reads.
#[derive(Debug, Clone, Serialize)]
pub struct ModelBench {
    pub model: ModelFacts,
    pub threads: i32,
    pub prompt_tokens: usize,
    pub gen_tokens: usize,
    /// Median of `pp_runs`: prompt processing in one batch of up to 512 tokens.
    pub pp_tok_s: f64,
    pub pp_runs: Vec<f64>,
    pub pp_default_batch: usize,
    /// Median prompt processing in the app's chunk size.
    pub pp_default_batch_tok_s: f64,
    /// Median of `tg_runs`: generation.
    pub tg_tok_s: f64,
    pub tg_runs: Vec<f64>,
    pub grammar: GrammarSpeed,
    pub grounding: GroundingSpeed,
    pub follow_up: FollowUp,
    /// `None` when the temporary folder or the model file could not be used.
    pub first_answer: Option<FirstAnswer>,
}

/// Prompt processing and generation, `repetitions` times each after one untimed run (as
/// llama-bench does: the first run touches every weight page), then grammar on against off and
/// a follow-up step, with `toolbox`'s tools and system prompt.
pub fn bench_model(
    model: &mut LocalModel,
    toolbox: &Toolbox,
    prompt_tokens: usize,
    gen_tokens: usize,
    repetitions: usize,
) -> ModelBench {
    let reps = repetitions.max(1);
    prompt_speed(model, prompt_tokens, 512);
    generation_speed(model, gen_tokens.min(16));
    let pp_runs: Vec<f64> = (0..reps)
        .map(|_| prompt_speed(model, prompt_tokens, 512))
        .collect();
    // The batch the app cuts this model's prompts into (about 80 ms of work each).
    let app_batch = model.prompt_batch();
    let pp_small: Vec<f64> = (0..reps)
        .map(|_| prompt_speed(model, prompt_tokens, app_batch))
        .collect();
    let tg_runs: Vec<f64> = (0..reps)
        .map(|_| generation_speed(model, gen_tokens))
        .collect();
    let grammar = grammar_speed(model, toolbox, &GRAMMAR_QUESTIONS);
    let grounding = grounding::grounding_speed(model, toolbox);
    let follow_up = follow_up(model, toolbox);
    let first_answer = opening::first_answer(model, toolbox);
    ModelBench {
        model: model.facts().clone(),
        threads: model.facts().threads,
        prompt_tokens,
        gen_tokens,
        pp_tok_s: median(&pp_runs),
        pp_runs,
        pp_default_batch: app_batch,
        pp_default_batch_tok_s: median(&pp_small),
        tg_tok_s: median(&tg_runs),
        tg_runs,
        grammar,
        grounding,
        follow_up,
        first_answer,
    }
}

/// The middle value (the upper of the two middle ones for an even count; 0 for none).
pub(crate) fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
}
