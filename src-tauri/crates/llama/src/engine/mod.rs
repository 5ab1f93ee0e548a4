//! The llama.cpp engine: one loaded model, one context, the KV cache kept between steps.

mod choosing_tools;
mod copying;
mod decision;
mod grounding;
mod kv;
mod load;
mod made_up;
mod opening;
mod replacing;
mod reply;
mod sampling;
mod spans;
#[cfg(test)]
mod tests;
mod thinking;

use crate::decide::{
    follow_up_probes, log_add, probe_set_fingerprint, Calibration, DecisionRules, ANSWER_PROBES,
    TOOL_PROBES,
};
use crate::grammar::{call_grammar, CallShape};
use crate::template::{CallSyntax, NativeTemplate, TEXT_PROTOCOL};
use crate::utf8::Utf8Stream;
use lantern_core::agent::cut_to_fit;
use lantern_core::model::{
    CallPath, CancelToken, FinishReason, Flow, GenerateRequest, Generation, GenerationOptions,
    Message, Model, ModelError, Role, ToolChoice, ToolOffer,
};
use lantern_core::protocol::markers::{
    leading_system_messages, protocol_tag_start, text_protocol_messages, CALL_KEY, NOT_IN_ANSWERS,
    PROTOCOL_WORDS,
};
use lantern_core::question::Question;
use lantern_core::tools::ToolSpec;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;
pub use load::physical_cores;
pub use opening::{Opening, PreparedOpening, PromptCache};
use sampling::{
    choose, closed_call_end, closer_tokens, inside_json_string, is_looping, pick_closing,
    repeats_itself, stop_sequence_end, would_open_a_call, Closers, CLOSING_RESERVE,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

/// Default context size, when the model was trained for at least this much. SmolLM2 was
/// trained for 8,192 tokens; at that size its KV cache takes about 190 MB, and a search or a
/// file read (up to 12 KB of result) fits beside the system prompt and the reply's budget,
/// where at 4,096 it did not.
pub const DEFAULT_CONTEXT: u32 = 8192;

/// How to load a model.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    pub path: PathBuf,
    /// Context size in tokens; defaults to [`DEFAULT_CONTEXT`] or the model's trained context,
    /// whichever is smaller.
    pub context: Option<u32>,
    /// CPU threads; defaults to the number of physical cores.
    pub threads: Option<i32>,
    /// Layers to offload to a GPU back-end, when one is built in.
    pub gpu_layers: u32,
    /// Prompt the model through its own chat template, with the tools passed natively, when
    /// the template allows it; off, the text protocol is used whatever the template.
    pub native_template: bool,
}

impl LoadOptions {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        LoadOptions {
            path: path.into(),
            context: None,
            threads: None,
            gpu_layers: 0,
            native_template: true,
        }
    }
}

/// What a user should know about the loaded model.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ModelFacts {
    pub path: PathBuf,
    pub name: String,
    pub architecture: String,
    pub parameters: u64,
    pub size_bytes: u64,
    pub trained_context: u32,
    pub context: u32,
    pub threads: i32,
    pub vocab_size: i32,
    /// `model` (the GGUF's own template), `built-in NAME` (llama.cpp's template for the
    /// architecture) or `chatml` (the last resort).
    pub chat_template: String,
    /// How the model is prompted and calls: `native` (its own template renders the tools and
    /// it writes its own call form) or `text` (Lantern's `<TOOL_CALL>` protocol).
    pub call_path: CallPath,
    /// Why, in words for the Model page and `lantern probe`.
    pub call_path_why: String,
    /// Whether llama.cpp may use its flash-attention kernels: only on a GPU; on the CPU the
    /// plain ones are faster.
    pub flash_attention: bool,
    pub load_seconds: f64,
}

/// [`ModelFacts::chat_template`] for a GGUF that carries its own template.
pub(crate) const OWN_TEMPLATE: &str = "model";

impl ModelFacts {
    /// Whether the GGUF carries its own chat template, as instruction-tuned files do: without
    /// one, a stand-in is used, and the file may be a base model that was never taught to
    /// answer.
    pub fn has_own_template(&self) -> bool {
        self.chat_template == OWN_TEMPLATE
    }
}

/// Per-model settings the user can change between steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// What the user chose (the grammar, each lever, temperature and seed), as
    /// [`Model::configure`] was given it.
    pub options: GenerationOptions,
    /// Nucleus and minimum-probability cut-offs when sampling (temperature above 0).
    pub top_p: f32,
    pub min_p: f32,
    /// The most prompt tokens decoded in one batch. Batches are sized by the model's size and
    /// threads to take about 80 ms each (cancellation is checked between them), up to this many.
    pub prompt_batch: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            options: GenerationOptions::default(),
            top_p: 0.95,
            min_p: 0.05,
            prompt_batch: 512,
        }
    }
}

/// What the last step cost, for the inspector, the probe and the benchmarks.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StepStats {
    pub prompt_tokens: usize,
    /// How the conversation's opening came to be in the KV cache.
    pub opening: Opening,
    /// Prompt tokens decoded this step; the rest came from the KV cache.
    pub tokens_evaluated: usize,
    pub tokens_reused: usize,
    pub tokens_generated: usize,
    pub messages_trimmed: usize,
    /// Tool results cut to make the prompt fit.
    pub results_cut: usize,
    /// Path arguments chosen among the workspace's paths.
    pub grounded_paths: usize,
    pub prompt_ms: f64,
    pub scoring_ms: f64,
    /// From the request to the first generated token.
    pub first_token_ms: f64,
    pub generation_ms: f64,
    /// `call` or `answer`, and why (`threshold`, `lexical prior`, `required`, `none`).
    pub decision: String,
    pub call_confidence: Option<f64>,
    pub constrained: bool,
    /// The reply was ended because it kept repeating itself.
    pub stopped_looping: bool,
    /// Tokens a reasoning model wrote while thinking, before its reply.
    pub thinking_tokens: usize,
}

/// Why a model could not be loaded, in words a user understands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError(pub String);

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A GGUF model loaded into llama.cpp, with its context. Implements Lantern's [`Model`].
pub struct LocalModel {
    // Field order matters: the context borrows the model, so it must be dropped first.
    ctx: LlamaContext<'static>,
    model: Box<LlamaModel>,
    template: LlamaChatTemplate,
    /// The model's own template, when it is prompted natively; `None` for the text protocol.
    native: Option<NativeTemplate>,
    /// How a call is written: the native form, or the text protocol's.
    syntax: CallSyntax,
    /// The tools a native template renders: those of the last request (or preparation).
    tools: Vec<ToolSpec>,
    facts: ModelFacts,
    pub settings: Settings,
    /// GBNF for a call after its opening tag, for the tools it was built from (their
    /// fingerprint): rebuilt when a request offers other tools.
    grammar: Option<(u64, String)>,
    /// Tokens of the call opener (`<TOOL_CALL>`) and of it after a newline, at the start of a
    /// reply.
    tag: Vec<LlamaToken>,
    tag_after_newline: Vec<LlamaToken>,
    /// The tokens the KV cache holds for sequence 0, in order.
    cached: Vec<LlamaToken>,
    /// Calibrations by system-prompt hash.
    calibrations: HashMap<String, DecisionRules>,
    calibration_file: Option<PathBuf>,
    last: StepStats,
    /// Which tokens can close something in a call, found on first need.
    closers: Option<Closers>,
    /// Where the opening of conversations is kept between processes.
    prompt_cache: Option<PromptCache>,
    /// What preparing the model did with the opening.
    prepared: Option<PreparedOpening>,
}

// SAFETY: llama.cpp contexts and models may be used from any one thread at a time; the
// `&mut self` methods give exactly that.
unsafe impl Send for LocalModel {}

impl LocalModel {
    /// What the last `generate` cost.
    pub fn last_step(&self) -> &StepStats {
        &self.last
    }

    /// The tools a natively prompted model's template renders until a request brings its own
    /// (a request always does; this is for rendering before one, as the probe does).
    pub fn offer_tools(&mut self, tools: &[ToolSpec]) {
        if self.native.is_some() {
            self.tools = tools.to_vec();
        }
    }
}

impl Model for LocalModel {
    fn name(&self) -> String {
        self.facts.name.clone()
    }

    fn configure(&mut self, options: &GenerationOptions) {
        self.settings.options = *options;
    }

    /// Calibrates the call decision for the toolbox's prompt (once per model and prompt; kept
    /// in the calibration file) and makes the cache hold the conversations' opening (loaded
    /// when it was saved), so the first message waits for neither.
    fn prepare(&mut self, offer: &dyn ToolOffer, cancel: &CancelToken) -> Result<(), ModelError> {
        let system = offer.system_prompt_for(self.call_path());
        self.offer_tools(offer.specs());
        self.calibration(system, offer.specs(), cancel)?;
        let first = [
            Message::new(Role::System, system),
            Message::new(Role::User, "?"),
        ];
        let whole = self.tokenize(&self.render(&first)?);
        let started = Instant::now();
        let (how, _) = self.hold_opening(&first, &whole, cancel)?;
        self.prepared = (how != Opening::None).then(|| PreparedOpening {
            how,
            tokens: self.cached.len(),
            seconds: started.elapsed().as_secs_f64(),
        });
        Ok(())
    }

    fn call_path(&self) -> CallPath {
        self.facts.call_path
    }

    fn count_tokens(&mut self, text: &str) -> Option<usize> {
        self.system_prompt_tokens(text).ok()
    }

    fn context_size(&mut self) -> Option<usize> {
        Some(self.facts.context as usize)
    }

    fn generate(
        &mut self,
        request: &GenerateRequest<'_>,
        on_text: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Generation, ModelError> {
        let started = Instant::now();
        // A request made outside a turn (a calibration, a benchmark) brings no question: it is
        // read once here, since every token of a call may ask for it.
        let (read_here, with_question);
        let request = match request.question {
            Some(_) => request,
            None => {
                read_here = request.question().into_owned();
                with_question = GenerateRequest {
                    question: Some(&read_here),
                    ..*request
                };
                &with_question
            }
        };
        let cancel = request.cancel;
        let mut stats = StepStats::default();
        let cancelled = |text: String| Generation::text(text, FinishReason::Cancelled);
        self.offer_tools(request.tools);

        let rules = match self.rules_for(request) {
            Ok(rules) => rules,
            Err(_) if cancel.is_cancelled() => return Ok(cancelled(String::new())),
            Err(e) => return Err(e),
        };
        let thinks = self.native.as_ref().is_some_and(|n| n.thinks);
        let mut logits = match self.read_prompt(request, thinks, &mut stats) {
            Ok(logits) => logits,
            Err(_) if cancel.is_cancelled() => return Ok(cancelled(String::new())),
            Err(e) => return Err(e),
        };
        stats.prompt_ms = started.elapsed().as_secs_f64() * 1000.0;

        // A reasoning model thinks first; its reply, call or answer, begins after.
        let mut thought = String::new();
        if thinks {
            let budget = self.settings.options.thinking_budget;
            let done = self.think(logits, budget, request.max_tokens, cancel)?;
            if cancel.is_cancelled() {
                return Ok(cancelled(String::new()));
            }
            (logits, thought) = (done.logits, done.text);
            stats.thinking_tokens = done.tokens;
        }

        let prompt_len = self.cached.len();
        let scoring = Instant::now();
        let call = self.decide_call(request, rules.as_ref(), &logits, &mut stats)?;
        if !call {
            // Scoring left the start of a call in the cache.
            self.rewind_to(prompt_len, cancel)?;
        }
        stats.scoring_ms = scoring.elapsed().as_secs_f64() * 1000.0;

        let mut text = String::new();
        let mut grammar: Option<LlamaSampler> = None;
        if call {
            text.push_str(self.syntax.open);
            match self.open_call(request, prompt_len, on_text)? {
                Some((after_tag, constrained)) => (logits, grammar) = (after_tag, constrained),
                None => return Ok(self.finish(text, FinishReason::Stop, stats, started)),
            }
        }
        stats.constrained = grammar.is_some();

        let mut reply = self.start_reply(request, text, logits, grammar, call);
        let finish = self.write_reply(&mut reply, request, on_text, &mut stats, started)?;
        stats.tokens_generated = reply.generated + stats.thinking_tokens;
        Ok(Generation {
            thinking: thought,
            ..self.finish(reply.text, finish, stats, started)
        })
    }
}

/// After a call's opening tag: the logits that begin its body, and the grammar that leads it
/// when it is on.
type OpenedCall = (Vec<f32>, Option<LlamaSampler>);

impl LocalModel {
    /// Writes a call's opening tag for the model after the prompt's `prompt_len` tokens (the
    /// cache may hold its start from scoring) and streams it: the logits after it, and the
    /// grammar that leads from there when it is on; `None` when the listener asked to stop.
    fn open_call(
        &mut self,
        request: &GenerateRequest<'_>,
        prompt_len: usize,
        on_text: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Option<OpenedCall>, ModelError> {
        let tag = self.tag.clone();
        let have = kv::tag_tokens_in_cache(&self.cached, prompt_len, &tag);
        self.rewind_to(prompt_len + have, request.cancel)?;
        let logits = self.append(&tag[have..])?;
        if on_text(self.syntax.open) == Flow::Stop {
            return Ok(None);
        }
        let grammar = match self.settings.options.grammar {
            true => Some(self.grammar_after(&tag, request)?),
            false => None,
        };
        Ok(Some((logits, grammar)))
    }

    /// Generates up to `n` tokens greedily after `prompt`, ignoring end-of-text; returns how
    /// many were generated.
    pub fn generate_free(&mut self, prompt: &[LlamaToken], n: usize) -> usize {
        let Ok((mut logits, _)) = self.evaluate(prompt, &CancelToken::new()) else {
            return 0;
        };
        let mut chain = self.sampling_chain();
        for generated in 0..n {
            let Some(token) = choose(&logits, None, &mut chain, &mut |_| false) else {
                return generated;
            };
            match self.append(&[token]) {
                Ok(l) => logits = l,
                Err(_) => return generated,
            }
        }
        n
    }

    fn finish(
        &mut self,
        text: String,
        finish: FinishReason,
        mut stats: StepStats,
        started: Instant,
    ) -> Generation {
        stats.generation_ms =
            started.elapsed().as_secs_f64() * 1000.0 - stats.prompt_ms - stats.scoring_ms;
        let generation = Generation {
            text,
            finish,
            constrained: stats.constrained,
            call_confidence: stats.call_confidence,
            tokens_evaluated: Some(stats.tokens_evaluated),
            tokens_generated: Some(stats.tokens_generated),
            messages_trimmed: stats.messages_trimmed,
            results_cut: stats.results_cut,
            context_used: Some(stats.prompt_tokens + stats.tokens_generated),
            context_size: Some(self.facts.context as usize),
            native_template: self.native.is_some(),
            decision: (!stats.decision.is_empty()).then(|| stats.decision.clone()),
            ..Generation::text("", finish)
        };
        self.last = stats;
        generation
    }
}

impl LocalModel {
    /// The call decision's calibration for this request's prompt (measured the first time per
    /// system prompt, before the step's own prompt, so that the cache stays warm for the step);
    /// none unless the model decides.
    fn rules_for(
        &mut self,
        request: &GenerateRequest<'_>,
    ) -> Result<Option<DecisionRules>, ModelError> {
        if request.tool_choice != ToolChoice::Auto {
            return Ok(None);
        }
        let system = request.messages.first().filter(|m| m.role == Role::System);
        match request
            .calibrated_for
            .or(system.map(|s| s.content.as_str()))
        {
            Some(system) => self
                .calibration(system, request.tools, request.cancel)
                .map(Some),
            None => Ok(None),
        }
    }

    /// Brings the prompt into the cache (the saved opening first, then what is new) and
    /// returns the logits after it. A reasoning model's thinking comes before the reply, in the
    /// same context: it takes what room the prompt and the reply leave, up to its budget (see
    /// `think`), so a long conversation thinks less rather than losing its history.
    fn read_prompt(
        &mut self,
        request: &GenerateRequest<'_>,
        thinks: bool,
        stats: &mut StepStats,
    ) -> Result<Vec<f32>, ModelError> {
        let tags_room = if thinks { thinking::TAG_TOKENS } else { 0 };
        let (tokens, trimmed, cut) =
            self.prompt_that_fits(request.messages, request.max_tokens + tags_room)?;
        stats.prompt_tokens = tokens.len();
        stats.messages_trimmed = trimmed;
        stats.results_cut = cut;
        let (opening, opening_evaluated) =
            self.hold_opening(request.messages, &tokens, request.cancel)?;
        let (logits, evaluated) = self.evaluate(&tokens, request.cancel)?;
        stats.opening = opening;
        let evaluated = evaluated + opening_evaluated;
        stats.tokens_evaluated = evaluated;
        stats.tokens_reused = tokens.len() - evaluated;
        Ok(logits)
    }

    /// The grammar of the call whose opening `tag` was just written: an opener that begins the
    /// object is the grammar's text too.
    fn grammar_after(
        &mut self,
        tag: &[LlamaToken],
        request: &GenerateRequest<'_>,
    ) -> Result<LlamaSampler, ModelError> {
        let mut grammar = self.new_grammar(request.tools, &request.question())?;
        if self.syntax.open_in_json {
            for token in tag {
                grammar.accept(*token);
            }
        }
        Ok(grammar)
    }
}
