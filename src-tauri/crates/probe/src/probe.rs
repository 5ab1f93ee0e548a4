//! `lantern probe`: is this model usable with Lantern, and how well? Checks that the system
//! prompt fits the context with room to spare, calibrates the call decision, runs three quick
//! single-step tasks, and measures speed.

use crate::bench::{generation_speed, prompt_speed};
use lantern_core::model::{CancelToken, Flow, GenerateRequest, Message, Model, Role};
use lantern_core::protocol::{interpret, parse, Outcome, STOP_SEQUENCES};
use lantern_core::toolbox::Toolbox;
use lantern_llama::decide::DecisionRules;
use lantern_llama::{LocalModel, ModelFacts};
use schemars::JsonSchema;
use serde::Serialize;

/// The system prompt should leave at least this share of the context for the conversation.
pub const MIN_FREE_CONTEXT: f64 = 0.5;

/// One quick task: a question, and whether it needs a tool (and which).
const TASKS: &[(&str, Option<&str>)] = &[
    (
        "What version is declared in package.json?",
        Some("read_file"),
    ),
    (
        "Which Rust source files does this project have?",
        Some("list_files"),
    ),
    ("What is two plus two?", None),
];

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProbeTask {
    pub question: String,
    pub expected_tool: Option<String>,
    /// What the model did: `call TOOL`, `invalid call`, or `answer`.
    pub outcome: String,
    pub decision_right: bool,
    pub valid_call: Option<bool>,
    pub call_confidence: Option<f64>,
    pub seconds: f64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProbeReport {
    pub facts: ModelFacts,
    pub system_prompt_tokens: usize,
    pub context: u32,
    /// The system prompt leaves at least half the context free.
    pub fits: bool,
    pub calibration: DecisionRules,
    pub tasks: Vec<ProbeTask>,
    pub prompt_tokens_per_second: f64,
    pub generation_tokens_per_second: f64,
    /// What a user should know, in plain words.
    pub verdict: String,
}

pub fn probe(model: &mut LocalModel, toolbox: &Toolbox) -> Result<ProbeReport, String> {
    let system_prompt = toolbox.system_prompt_for(model.call_path());
    model.offer_tools(toolbox.specs());
    let cancel = CancelToken::new();
    let system_prompt_tokens = model.system_prompt_tokens(system_prompt).map_err(|e| e.0)?;
    let context = model.facts().context;
    let fits = (system_prompt_tokens as f64) <= context as f64 * (1.0 - MIN_FREE_CONTEXT);
    let calibration = model
        .calibration(system_prompt, toolbox.specs(), &cancel)
        .map_err(|e| e.0)?;
    let mut tasks = Vec::new();
    for (question, expected) in TASKS {
        let messages = [
            Message::new(Role::System, system_prompt),
            Message::new(Role::User, *question),
        ];
        let request = GenerateRequest::new(&messages, 200, &cancel)
            .with_tools(toolbox.specs())
            .with_stop(STOP_SEQUENCES);
        let started = std::time::Instant::now();
        let generation = model
            .generate(&request, &mut |_| Flow::Continue)
            .map_err(|e| e.0)?;
        let (outcome, called, valid) = match interpret(&parse(&generation.text), toolbox.registry())
        {
            Outcome::ToolCall(parsed) => (format!("call {}", parsed.call.tool), true, Some(true)),
            Outcome::Invalid(_) => ("invalid call".to_string(), true, Some(false)),
            Outcome::Text { .. } => ("answer".to_string(), false, None),
        };
        tasks.push(ProbeTask {
            question: question.to_string(),
            expected_tool: expected.map(str::to_string),
            outcome,
            decision_right: called == expected.is_some(),
            valid_call: valid,
            call_confidence: generation.call_confidence,
            seconds: started.elapsed().as_secs_f64(),
        });
    }
    let prompt_tokens_per_second = prompt_speed(model, 256, 512);
    let generation_tokens_per_second = generation_speed(model, 64);
    let right = tasks.iter().filter(|t| t.decision_right).count();
    let invalid = tasks.iter().filter(|t| t.valid_call == Some(false)).count();
    let mut verdict = format!(
        "{right} of {} quick tasks decided right; {} calls invalid. ",
        tasks.len(),
        invalid
    );
    verdict.push_str(if calibration.first_step.trusted {
        "The model's own call probability separates tool questions from others (calibrated). "
    } else {
        "The model's call probability does not separate tool questions from others: a word-based rule decides instead. "
    });
    if !model.facts().has_own_template() {
        verdict.push_str(
            "The file carries no chat template, so a stand-in is used: instruction-tuned files carry their own, and a file without one may be a base model, which repeats or continues the prompt instead of answering it. ",
        );
    }
    if !fits {
        verdict.push_str(
            "The system prompt takes more than half the context: load with a larger context. ",
        );
    }
    Ok(ProbeReport {
        facts: model.facts().clone(),
        system_prompt_tokens,
        context,
        fits,
        calibration,
        tasks,
        prompt_tokens_per_second,
        generation_tokens_per_second,
        verdict: verdict.trim_end().to_string(),
    })
}
