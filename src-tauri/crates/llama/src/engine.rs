//! The llama.cpp engine: one loaded model, one context, the KV cache kept between steps.

use crate::decide::{
    lexical_prior, log_add, probe_set_fingerprint, Calibration, DecisionRules, ANSWER_PROBES,
    FOLLOW_UP_PROBES, TOOL_PROBES,
};
use crate::grammar::call_grammar;
use crate::utf8::Utf8Stream;
use lantern_core::model::{
    CancelToken, FinishReason, Flow, GenerateRequest, Generation, Message, Model, ModelError, Role,
    ToolChoice,
};
use lantern_core::protocol::{with_follow_up_hint, CLOSE_TAG, OPEN_TAG};
use lantern_core::tools::ToolRegistry;
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
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

/// Default context size, when the model was trained for at least this much.
pub const DEFAULT_CONTEXT: u32 = 4096;

/// How long one prompt batch should take: cancellation is checked between batches.
const CHUNK_MS: f64 = 80.0;

/// Text an answer never contains: the openers of calls in every dialect, and the protocol's
/// own markers, which small models otherwise parrot back (`<TOOL_CALL_RESULT>`). Written
/// neither when the step's tool choice is `none` nor when it was decided to be an answer.
const NOT_IN_ANSWERS: &[&str] = &[
    "<TOOL_",
    "<tool",
    "[TOOL_CALLS]",
    "<function=",
    "TOOL_RESULT:",
    "TOOL_ERROR:",
];

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
}

impl LoadOptions {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        LoadOptions {
            path: path.into(),
            context: None,
            threads: None,
            gpu_layers: 0,
        }
    }
}

/// What a user should know about the loaded model.
#[derive(Debug, Clone, Serialize)]
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
    pub load_seconds: f64,
}

/// Sampling settings. A temperature of 0 is greedy decoding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    pub temperature: f32,
    pub top_p: f32,
    pub min_p: f32,
    pub seed: u32,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            temperature: 0.0,
            top_p: 0.95,
            min_p: 0.05,
            seed: 42,
        }
    }
}

/// Per-model settings the user can change between steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub sampling: Sampling,
    /// Constrain calls with the grammar built from the tool schemas.
    pub grammar: bool,
    /// The most prompt tokens decoded in one batch. Batches are sized to take about 80 ms each
    /// (cancellation is checked between them), up to this many.
    pub prompt_batch: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            sampling: Sampling::default(),
            grammar: true,
            prompt_batch: 512,
        }
    }
}

/// What the last step cost, for the inspector, the probe and the benchmarks.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StepStats {
    pub prompt_tokens: usize,
    /// Prompt tokens decoded this step; the rest came from the KV cache.
    pub tokens_evaluated: usize,
    pub tokens_reused: usize,
    pub tokens_generated: usize,
    pub messages_trimmed: usize,
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
}

/// Why a model could not be loaded, in words a user understands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError(pub String);

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LoadError {}

fn backend() -> Result<&'static LlamaBackend, LoadError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            LlamaBackend::init()
                .map(|mut b| {
                    // llama.cpp logs every load and decode to stderr; Lantern reports what matters.
                    b.void_logs();
                    b
                })
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| LoadError(format!("llama.cpp could not start: {e}")))
}

/// Physical cores: llama.cpp runs best with one thread per core, not per hyper-thread.
pub fn physical_cores() -> i32 {
    let logical = std::thread::available_parallelism().map_or(1, |n| n.get()) as i32;
    let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
        return logical;
    };
    let mut cores = std::collections::HashSet::new();
    let mut physical = "";
    for line in info.lines() {
        if let Some(v) = line.strip_prefix("physical id") {
            physical = v.trim_start_matches([' ', '\t', ':']);
        } else if let Some(v) = line.strip_prefix("core id") {
            cores.insert((
                physical.to_string(),
                v.trim_start_matches([' ', '\t', ':']).to_string(),
            ));
        }
    }
    if cores.is_empty() {
        logical
    } else {
        (cores.len() as i32).min(logical).max(1)
    }
}

/// Checks what can be checked before llama.cpp sees the file, for clear errors.
fn check_file(path: &Path) -> Result<u64, LoadError> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            LoadError(format!("Model file not found: {}", path.display()))
        }
        _ => LoadError(format!(
            "Cannot read the model file {}: {e}",
            path.display()
        )),
    })?;
    if !meta.is_file() {
        return Err(LoadError(format!("{} is not a file", path.display())));
    }
    let mut magic = [0u8; 4];
    use std::io::Read;
    let read = std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok();
    if !read || &magic != b"GGUF" {
        return Err(LoadError(format!(
            "{} is not a GGUF model file (GGUF files start with the bytes \"GGUF\"); convert it with llama.cpp's convert script or download a .gguf",
            path.display()
        )));
    }
    if let Some(available) = available_memory() {
        if meta.len() > available {
            return Err(LoadError(format!(
                "Not enough memory: the model needs about {} MiB and {} MiB are available",
                meta.len() >> 20,
                available >> 20
            )));
        }
    }
    Ok(meta.len())
}

fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A GGUF model loaded into llama.cpp, with its context. Implements Lantern's [`Model`].
pub struct LocalModel {
    // Field order matters: the context borrows the model, so it must be dropped first.
    ctx: LlamaContext<'static>,
    model: Box<LlamaModel>,
    template: LlamaChatTemplate,
    facts: ModelFacts,
    pub settings: Settings,
    /// GBNF for a call after its opening tag.
    grammar: String,
    /// Tokens of `<TOOL_CALL>` and of `\n<TOOL_CALL>` at the start of a reply.
    tag: Vec<LlamaToken>,
    tag_after_newline: Vec<LlamaToken>,
    /// The tokens the KV cache holds for sequence 0, in order.
    cached: Vec<LlamaToken>,
    /// Calibrations by system-prompt hash.
    calibrations: HashMap<String, DecisionRules>,
    calibration_file: Option<PathBuf>,
    last: StepStats,
    /// Measured prompt-processing speed, for sizing prompt batches.
    prompt_tokens_per_ms: Option<f64>,
    /// Which tokens can close something in a call, found on first need.
    closers: Option<Closers>,
}

/// The last tokens of a reply's budget are kept for closing a call that is still open.
const CLOSING_RESERVE: usize = 48;

// SAFETY: llama.cpp contexts and models may be used from any one thread at a time; the
// `&mut self` methods give exactly that.
unsafe impl Send for LocalModel {}

impl LocalModel {
    /// Loads a GGUF model. `progress` gets 0.0 ..= 1.0 as the weights load.
    pub fn load(
        options: &LoadOptions,
        mut progress: impl FnMut(f32) + 'static,
    ) -> Result<Self, LoadError> {
        let started = Instant::now();
        let size_bytes = check_file(&options.path)?;
        let backend = backend()?;
        let params = LlamaModelParams::default()
            .with_n_gpu_layers(options.gpu_layers)
            .with_progress_callback(move |p| {
                progress(p);
                true
            });
        let model = LlamaModel::load_from_file(backend, &options.path, &params).map_err(|e| {
            LoadError(format!(
                "llama.cpp could not load {}: {e}. The architecture may be unsupported by this build, or the file damaged.",
                options.path.display()
            ))
        })?;
        let model = Box::new(model);
        let trained_context = model.n_ctx_train();
        let context = match options.context {
            Some(n) if n > trained_context => {
                return Err(LoadError(format!(
                    "A context of {n} tokens is larger than the {trained_context} this model was trained for"
                )))
            }
            Some(0) => return Err(LoadError("The context size must be at least 1 token".into())),
            Some(n) => n,
            None => DEFAULT_CONTEXT.min(trained_context),
        };
        let threads = options.threads.unwrap_or_else(physical_cores).max(1);
        let ctx_params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(context))
            .with_n_batch(512)
            .with_n_ubatch(512)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let ctx = model.new_context(backend, ctx_params).map_err(|e| {
            LoadError(format!(
                "Could not create a {context}-token context ({e}); try a smaller context"
            ))
        })?;
        // SAFETY: the context borrows the model. The model is boxed, so its address is stable
        // when the box moves into `Self`; it is never replaced; and it is dropped after the
        // context (field order). The 'static lifetime never escapes this struct.
        let ctx: LlamaContext<'static> = unsafe { std::mem::transmute(ctx) };

        let meta = |key: &str| model.meta_val_str(key).ok().filter(|v| !v.is_empty());
        let architecture = meta("general.architecture").unwrap_or_else(|| "unknown".into());
        let name = meta("general.name").unwrap_or_else(|| {
            options
                .path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        let (template, chat_template) = pick_template(&model, &architecture);

        let specs = ToolRegistry::standard();
        let grammar = call_grammar(&specs.specs()).map_err(LoadError)?;
        let vocab = model.vocab();
        let tag = vocab.tokenize(OPEN_TAG.as_bytes(), false, false);
        let tag_after_newline = vocab.tokenize(format!("\n{OPEN_TAG}").as_bytes(), false, false);
        let facts = ModelFacts {
            path: options.path.clone(),
            name,
            architecture,
            parameters: model.n_params(),
            size_bytes,
            trained_context,
            context,
            threads,
            vocab_size: model.n_vocab(),
            chat_template,
            load_seconds: started.elapsed().as_secs_f64(),
        };
        let mut loaded = LocalModel {
            ctx,
            model,
            template,
            facts,
            settings: Settings::default(),
            grammar,
            tag,
            tag_after_newline,
            cached: Vec::new(),
            calibrations: HashMap::new(),
            calibration_file: None,
            last: StepStats::default(),
            prompt_tokens_per_ms: None,
            closers: None,
        };
        loaded.facts.load_seconds = started.elapsed().as_secs_f64();
        Ok(loaded)
    }

    pub fn facts(&self) -> &ModelFacts {
        &self.facts
    }

    /// What the last `generate` cost.
    pub fn last_step(&self) -> &StepStats {
        &self.last
    }

    /// Keeps calibrations in this JSON file (per model), so a new process need not redo them.
    pub fn with_calibration_file(mut self, path: PathBuf) -> Self {
        if let Ok(bytes) = lantern_core::paths::read_state_file(&path) {
            if let Ok(saved) = serde_json::from_slice::<HashMap<String, DecisionRules>>(&bytes) {
                self.calibrations = saved;
            }
        }
        self.calibration_file = Some(path);
        self
    }

    /// Renders messages with the model's chat template, ready for the assistant's reply.
    pub fn render(&self, messages: &[Message]) -> Result<String, ModelError> {
        let chat: Vec<LlamaChatMessage> = messages
            .iter()
            .map(|m| {
                let role = match m.role {
                    Role::System => "system",
                    Role::User => "user",
                    Role::Assistant => "assistant",
                };
                LlamaChatMessage::new(role.to_string(), m.content.clone())
                    .map_err(|e| ModelError(format!("A message cannot be rendered: {e}")))
            })
            .collect::<Result<_, _>>()?;
        self.model
            .apply_chat_template(&self.template, &chat, true)
            .map_err(|e| ModelError(format!("The chat template failed: {e}")))
    }

    /// Tokenizes rendered text the way llama.cpp's own chat front-ends do.
    pub fn tokenize(&self, text: &str) -> Vec<LlamaToken> {
        self.model.vocab().tokenize(text.as_bytes(), true, true)
    }

    /// Renders and tokenizes `messages`, dropping the oldest turns (never the system prompt,
    /// never the last message) until the prompt leaves room for `reserve` new tokens.
    fn prompt_that_fits(
        &self,
        messages: &[Message],
        reserve: usize,
    ) -> Result<(Vec<LlamaToken>, usize), ModelError> {
        let n_ctx = self.facts.context as usize;
        let reserve = reserve.min(n_ctx / 4);
        let fixed = usize::from(messages.first().is_some_and(|m| m.role == Role::System));
        let mut start = fixed;
        loop {
            let kept: Vec<Message> = messages[..fixed]
                .iter()
                .chain(&messages[start..])
                .cloned()
                .collect();
            let tokens = self.tokenize(&self.render(&kept)?);
            if tokens.len() + reserve <= n_ctx {
                return Ok((tokens, start - fixed));
            }
            if start + 1 >= messages.len() {
                return Err(ModelError(format!(
                    "The conversation does not fit in the model's context: {} tokens with {reserve} kept free for the reply, the context holds {n_ctx}. Start a new conversation, shorten the message, or load the model with a larger context.",
                    tokens.len()
                )));
            }
            start += 1;
            // A kept history should start with the user's turn.
            while start + 1 < messages.len() && messages[start].role != Role::User {
                start += 1;
            }
        }
    }

    /// Makes the KV cache hold `tokens`, decoding only what differs from what it holds now.
    /// Returns the logits after the last token and how many tokens were decoded.
    fn evaluate(
        &mut self,
        tokens: &[LlamaToken],
        cancel: &CancelToken,
    ) -> Result<(Vec<f32>, usize), ModelError> {
        self.evaluate_batched(tokens, cancel, None)
    }

    /// [`evaluate`](Self::evaluate) with batches of a fixed size instead of timed ones (for
    /// measurements comparable with llama-bench).
    fn evaluate_batched(
        &mut self,
        tokens: &[LlamaToken],
        cancel: &CancelToken,
        fixed_batch: Option<usize>,
    ) -> Result<(Vec<f32>, usize), ModelError> {
        let common = self
            .cached
            .iter()
            .zip(tokens)
            .take_while(|(a, b)| a == b)
            .count();
        // The last token is always decoded again: its logits start the reply.
        let mut keep = common.min(tokens.len().saturating_sub(1));
        if !matches!(
            self.ctx
                .clear_kv_cache_seq(Some(0), Some(keep as u32), None),
            Ok(true)
        ) {
            // Some caches (sliding-window attention) cannot drop a suffix: start over.
            self.ctx.clear_kv_cache();
            keep = 0;
        }
        self.cached.truncate(keep);
        let max_batch = fixed_batch
            .unwrap_or(self.settings.prompt_batch)
            .clamp(1, 512);
        let mut batch = LlamaBatch::new(max_batch, 1);
        let mut last_index = 0;
        let mut pos = keep;
        while pos < tokens.len() {
            if cancel.is_cancelled() {
                return Err(ModelError("cancelled".into()));
            }
            // Chunks sized to about CHUNK_MS each, so cancel is honoured that fast on any
            // machine, while fast machines still decode in large batches.
            let size = match (fixed_batch, self.prompt_tokens_per_ms) {
                (Some(_), _) => max_batch,
                (None, Some(rate)) => ((rate * CHUNK_MS) as usize).clamp(8, max_batch),
                (None, None) => 16.min(max_batch),
            };
            let chunk = &tokens[pos..(pos + size).min(tokens.len())];
            batch.clear();
            for (i, token) in chunk.iter().enumerate() {
                let is_last = pos + i + 1 == tokens.len();
                batch
                    .add(*token, (pos + i) as i32, &[0], is_last)
                    .map_err(|e| ModelError(format!("batch: {e}")))?;
                if is_last {
                    last_index = i as i32;
                }
            }
            let started = Instant::now();
            self.ctx
                .decode(&mut batch)
                .map_err(|e| ModelError(format!("llama.cpp could not evaluate the prompt: {e}")))?;
            let rate = chunk.len() as f64 / (started.elapsed().as_secs_f64() * 1000.0).max(0.01);
            self.prompt_tokens_per_ms = Some(match self.prompt_tokens_per_ms {
                Some(old) => 0.7 * old + 0.3 * rate,
                None => rate,
            });
            self.cached.extend_from_slice(chunk);
            pos += chunk.len();
        }
        Ok((
            self.ctx.get_logits_ith(last_index).to_vec(),
            tokens.len() - keep,
        ))
    }

    /// Decodes `tokens` right after what the cache holds; returns the logits after the last.
    fn append(&mut self, tokens: &[LlamaToken]) -> Result<Vec<f32>, ModelError> {
        let mut batch = LlamaBatch::new(tokens.len().max(1), 1);
        let start = self.cached.len();
        for (i, token) in tokens.iter().enumerate() {
            batch
                .add(*token, (start + i) as i32, &[0], i + 1 == tokens.len())
                .map_err(|e| ModelError(format!("batch: {e}")))?;
        }
        self.ctx
            .decode(&mut batch)
            .map_err(|e| ModelError(format!("llama.cpp could not decode: {e}")))?;
        self.cached.extend_from_slice(tokens);
        Ok(self.ctx.get_logits_ith(tokens.len() as i32 - 1).to_vec())
    }

    /// Forgets cached tokens from position `len` on.
    fn truncate_cache(&mut self, len: usize) {
        if !matches!(
            self.ctx.clear_kv_cache_seq(Some(0), Some(len as u32), None),
            Ok(true)
        ) {
            self.ctx.clear_kv_cache();
            self.cached.clear();
            return;
        }
        self.cached.truncate(len);
    }

    /// log P(the reply starts with `tag`), given the logits after the prompt. The tag's tokens
    /// are decoded in one batch; they stay in the cache (the caller keeps or drops them).
    fn score(&mut self, first_logits: &[f32], tag: &[LlamaToken]) -> Result<f64, ModelError> {
        let mut total = log_softmax_at(first_logits, tag[0]);
        if tag.len() > 1 {
            let start = self.cached.len();
            let mut batch = LlamaBatch::new(tag.len(), 1);
            for (i, token) in tag[..tag.len() - 1].iter().enumerate() {
                batch
                    .add(*token, (start + i) as i32, &[0], true)
                    .map_err(|e| ModelError(format!("batch: {e}")))?;
            }
            self.ctx.decode(&mut batch).map_err(|e| {
                ModelError(format!("llama.cpp could not score the reply start: {e}"))
            })?;
            self.cached.extend_from_slice(&tag[..tag.len() - 1]);
            for (i, next) in tag[1..].iter().enumerate() {
                total += log_softmax_at(self.ctx.get_logits_ith(i as i32), *next);
            }
        }
        Ok(total)
    }

    /// The model's confidence that the reply is a call: log P(starts with the tag, with or
    /// without a newline first). Leaves the plain tag (all but its last token) in the cache.
    fn call_confidence(&mut self, first_logits: &[f32]) -> Result<f64, ModelError> {
        let base = self.cached.len();
        let tag_after_newline = self.tag_after_newline.clone();
        let with_newline = self.score(first_logits, &tag_after_newline)?;
        self.truncate_cache(base);
        let tag = self.tag.clone();
        let plain = self.score(first_logits, &tag)?;
        Ok(log_add(plain, with_newline))
    }

    /// The calibration for a system prompt: from memory, from the calibration file, or measured
    /// now on the probe questions.
    pub fn calibration(
        &mut self,
        system_prompt: &str,
        cancel: &CancelToken,
    ) -> Result<DecisionRules, ModelError> {
        // The probes are part of the key: a new probe set must be measured again.
        let key = lantern_core::paths::sha256_hex(
            format!("{system_prompt}\n{}", probe_set_fingerprint()).as_bytes(),
        );
        if let Some(c) = self.calibrations.get(&key) {
            return Ok(c.clone());
        }
        let system = Message::new(Role::System, system_prompt);
        let started = Instant::now();
        let mut first = [Vec::new(), Vec::new()];
        for (class, probes) in [TOOL_PROBES, ANSWER_PROBES].iter().enumerate() {
            for probe in *probes {
                let messages = [system.clone(), Message::new(Role::User, *probe)];
                let score = self.confidence_for(&messages, cancel)?;
                first[class].push((score, lexical_prior(probe)));
            }
        }
        let first_step =
            Calibration::with_prior(&first[0], &first[1], started.elapsed().as_secs_f64());
        let started = Instant::now();
        let mut follow = [Vec::new(), Vec::new()];
        for probe in FOLLOW_UP_PROBES {
            let messages = [
                system.clone(),
                Message::new(Role::User, probe.question),
                Message::new(
                    Role::Assistant,
                    format!("{OPEN_TAG}\n{}\n{CLOSE_TAG}", probe.call),
                ),
                Message::new(
                    Role::User,
                    with_follow_up_hint(&format!("TOOL_RESULT: {}", probe.result)),
                ),
            ];
            let class = usize::from(!probe.needs_call);
            follow[class].push(self.confidence_for(&messages, cancel)?);
        }
        let follow_up =
            Calibration::from_scores(&follow[0], &follow[1], started.elapsed().as_secs_f64());
        let rules = DecisionRules {
            first_step,
            follow_up,
        };
        self.calibrations.insert(key, rules.clone());
        if let Some(path) = &self.calibration_file {
            if let Ok(text) = serde_json::to_string_pretty(&self.calibrations) {
                // Best effort: a cache that cannot be written is measured again next time.
                let _ = lantern_core::paths::write_state_file(path, text.as_bytes());
            }
        }
        Ok(rules)
    }

    /// The call confidence at the start of the reply to `messages`, leaving the cache as it
    /// was after the prompt.
    fn confidence_for(
        &mut self,
        messages: &[Message],
        cancel: &CancelToken,
    ) -> Result<f64, ModelError> {
        let tokens = self.tokenize(&self.render(messages)?);
        let (logits, _) = self.evaluate(&tokens, cancel)?;
        let base = self.cached.len();
        let confidence = self.call_confidence(&logits)?;
        self.truncate_cache(base);
        Ok(confidence)
    }
}

/// Picks the next token: sample without the grammar, check only that token against it, and
/// run the full grammar pass over the vocabulary only when the token is rejected (a full pass
/// every token costs a large vocabulary much of its speed). Greedy decoding goes further and
/// checks the next-best tokens one by one first (see [`greedy_allowed`]). Tokens `banned`
/// rejects are never picked.
fn choose(
    logits: &[f32],
    mut grammar: Option<&mut LlamaSampler>,
    chain: &mut Option<LlamaSampler>,
    banned: &mut dyn FnMut(LlamaToken) -> bool,
) -> Option<LlamaToken> {
    let mut excluded: Vec<LlamaToken> = Vec::new();
    for _ in 0..16 {
        let token = match (grammar.as_deref_mut(), chain.is_none()) {
            (Some(g), true) => greedy_allowed(logits, &excluded, g)?,
            (Some(g), false) => {
                let sampled = pick(logits, &excluded, None, chain)?;
                if grammar_allows(g, sampled, logits[sampled.0 as usize]) {
                    sampled
                } else {
                    pick(logits, &excluded, Some(g), chain)?
                }
            }
            (None, _) => pick(logits, &excluded, None, chain)?,
        };
        if banned(token) {
            excluded.push(token);
            continue;
        }
        return Some(token);
    }
    None
}

/// How many of the best tokens [`greedy_allowed`] checks one by one before it falls back to a
/// full grammar pass.
const GRAMMAR_CANDIDATES: usize = 16;

/// The greedy pick under the grammar: the best token by logit that the grammar allows, the
/// token a full grammar pass and then a greedy pick would give. The best few candidates are
/// checked one at a time, best first, and the full pass (costly for a large vocabulary) runs
/// only when none of them is allowed.
fn greedy_allowed(
    logits: &[f32],
    excluded: &[LlamaToken],
    grammar: &mut LlamaSampler,
) -> Option<LlamaToken> {
    best_by_logit(logits, excluded, GRAMMAR_CANDIDATES)
        .into_iter()
        .find(|t| grammar_allows(grammar, *t, logits[t.0 as usize]))
        .or_else(|| pick(logits, excluded, Some(grammar), &mut None))
}

/// The `k` tokens with the highest finite logits, best first, leaving out `excluded`. Of equal
/// logits the later token comes first, as with the last maximum the greedy pick takes.
fn best_by_logit(logits: &[f32], excluded: &[LlamaToken], k: usize) -> Vec<LlamaToken> {
    // Later tokens win ties, so (logit, index) pairs compare as a whole.
    let beats = |a: (f32, usize), b: (f32, usize)| a.0 > b.0 || (a.0 == b.0 && a.1 > b.1);
    let mut best: Vec<(f32, usize)> = Vec::with_capacity(k + 1);
    for (i, &logit) in logits.iter().enumerate() {
        if !logit.is_finite() || (best.len() == k && !beats((logit, i), best[k - 1])) {
            continue;
        }
        if excluded.contains(&LlamaToken(i as i32)) {
            continue;
        }
        let at = best.partition_point(|&b| beats(b, (logit, i)));
        best.insert(at, (logit, i));
        best.truncate(k);
    }
    best.into_iter()
        .map(|(_, i)| LlamaToken(i as i32))
        .collect()
}

/// Picks a token from `logits`, never one in `excluded`: greedy when `chain` is `None`.
fn pick(
    logits: &[f32],
    excluded: &[LlamaToken],
    grammar: Option<&mut LlamaSampler>,
    chain: &mut Option<LlamaSampler>,
) -> Option<LlamaToken> {
    if grammar.is_none() && chain.is_none() {
        // The hot path: greedy, no allocation.
        return logits
            .iter()
            .enumerate()
            .filter(|(i, l)| l.is_finite() && !excluded.contains(&LlamaToken(*i as i32)))
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(i, _)| LlamaToken(i as i32));
    }
    let mut data = LlamaTokenDataArray::from_iter(
        logits.iter().enumerate().map(|(i, l)| {
            let token = LlamaToken(i as i32);
            let logit = if excluded.contains(&token) {
                f32::NEG_INFINITY
            } else {
                *l
            };
            LlamaTokenData::new(token, logit, 0.0)
        }),
        false,
    );
    if let Some(g) = grammar {
        data.apply_sampler(g);
    }
    match chain {
        Some(chain) => {
            data.apply_sampler(chain);
            data.selected_token()
        }
        None => data
            .data
            .iter()
            .filter(|d| d.logit().is_finite())
            .max_by(|a, b| a.logit().total_cmp(&b.logit()))
            .map(|d| d.id()),
    }
}

/// Where a constrained call (`text` starts with the opening tag) ends: just after a closing tag,
/// found at or after `from`, that follows a complete JSON object.
fn closed_call_end(text: &str, from: usize) -> Option<usize> {
    let from = (from..=text.len()).find(|i| text.is_char_boundary(*i))?;
    let mut at = from;
    while let Some(i) = text[at..].find(CLOSE_TAG) {
        let tag = at + i;
        let body = text.get(OPEN_TAG.len()..tag).unwrap_or("");
        if serde_json::from_str::<serde_json::Value>(body).is_ok() {
            return Some(tag + CLOSE_TAG.len());
        }
        at = tag + 1;
    }
    None
}

/// The tokens that close what is open in a call: inside a string only a quote does (a brace
/// there is content); outside one, a closing brace or bracket. Once the JSON is complete the
/// grammar allows nothing but the closing tag, so that needs no preference.
struct Closers {
    quote: Vec<bool>,
    bracket: Vec<bool>,
}

impl Closers {
    fn for_position(&self, in_string: bool) -> &[bool] {
        if in_string {
            &self.quote
        } else {
            &self.bracket
        }
    }
}

/// Marks the tokens whose text, after leading spaces, begins with a quote, or with `}` or `]`.
fn closer_tokens(model: &LlamaModel) -> Closers {
    let (mut quote, mut bracket) = (Vec::new(), Vec::new());
    for i in 0..model.n_vocab() {
        let piece = model.vocab().token_to_piece(LlamaToken(i), false, None);
        let text = String::from_utf8_lossy(&piece);
        let text = text.trim_start();
        quote.push(text.starts_with('"'));
        bracket.push(text.starts_with(['}', ']']));
    }
    Closers { quote, bracket }
}

/// Does this JSON text end inside a string?
fn inside_json_string(json: &str) -> bool {
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        match (in_string, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (_, false, '"') => in_string = !in_string,
            _ => {}
        }
    }
    in_string
}

/// The grammar-allowed token to close an open call with: the likeliest closer, else the
/// likeliest allowed token (when the grammar requires more first, such as a missing field).
fn pick_closing(
    logits: &[f32],
    grammar: &mut LlamaSampler,
    closers: &[bool],
) -> Option<LlamaToken> {
    const PREFERENCE: f32 = 1.0e4;
    let preferred: Vec<f32> = logits
        .iter()
        .zip(closers)
        .map(|(l, c)| if *c { l + PREFERENCE } else { *l })
        .collect();
    greedy_allowed(&preferred, &[], grammar)
}

/// Does the reply end in the same run of one to 32 tokens repeated over and over (at least
/// four times, and over at least 16 tokens, so "----" or a blank line or two are not loops)?
fn is_looping(tokens: &[LlamaToken]) -> bool {
    (1..=32).any(|period| {
        let span = (period * 4).max(16);
        tokens.len() >= span && {
            let tail = &tokens[tokens.len() - span..];
            tail.iter().zip(&tail[period..]).all(|(a, b)| a == b)
        }
    })
}

/// Would the grammar accept `token` next? Checks that one candidate only.
fn grammar_allows(grammar: &mut LlamaSampler, token: LlamaToken, logit: f32) -> bool {
    let mut one = LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, logit, 0.0)], false);
    one.apply_sampler(grammar);
    one.data[0].logit().is_finite()
}

fn log_softmax_at(logits: &[f32], token: LlamaToken) -> f64 {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    let sum: f64 = logits.iter().map(|l| (*l as f64 - max).exp()).sum();
    logits[token.0 as usize] as f64 - max - sum.ln()
}

/// The model's own template, else llama.cpp's built-in one for the architecture, else ChatML.
fn pick_template(model: &LlamaModel, architecture: &str) -> (LlamaChatTemplate, String) {
    if let Ok(t) = model.chat_template(None) {
        return (t, "model".to_string());
    }
    let probe = [LlamaChatMessage::new("user".into(), "hi".into()).expect("no NUL")];
    let family: String = architecture
        .trim_end_matches(|c: char| c.is_ascii_digit())
        .to_string();
    for name in [architecture.to_string(), family] {
        if let Ok(t) = LlamaChatTemplate::new(&name) {
            if model.apply_chat_template(&t, &probe, true).is_ok() {
                return (t, format!("built-in {name}"));
            }
        }
    }
    (
        LlamaChatTemplate::new("chatml").expect("no NUL"),
        "chatml".to_string(),
    )
}

/// The last user message that is not a tool result: what the user actually asked.
fn user_question(messages: &[Message]) -> &str {
    messages
        .iter()
        .rev()
        .find(|m| {
            m.role == Role::User
                && !m.content.starts_with("TOOL_RESULT:")
                && !m.content.starts_with("TOOL_ERROR:")
        })
        .map(|m| m.content.as_str())
        .unwrap_or_default()
}

impl Model for LocalModel {
    fn name(&self) -> String {
        self.facts.name.clone()
    }

    fn generate(
        &mut self,
        request: &GenerateRequest<'_>,
        on_text: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Generation, ModelError> {
        let started = Instant::now();
        let cancel = request.cancel;
        let mut stats = StepStats::default();
        let cancelled = |text: String| Generation::text(text, FinishReason::Cancelled);

        // The calibration (first time per system prompt) runs before this step's prompt, so the
        // prompt's cache stays warm for the step itself.
        let rules = if request.tool_choice == ToolChoice::Auto {
            let system = request.messages.first().filter(|m| m.role == Role::System);
            match system {
                Some(system) => match self.calibration(&system.content, cancel) {
                    Ok(c) => Some(c),
                    Err(_) if cancel.is_cancelled() => return Ok(cancelled(String::new())),
                    Err(e) => return Err(e),
                },
                None => None,
            }
        } else {
            None
        };

        let (tokens, trimmed) = self.prompt_that_fits(request.messages, request.max_tokens)?;
        stats.prompt_tokens = tokens.len();
        stats.messages_trimmed = trimmed;
        let (mut logits, evaluated) = match self.evaluate(&tokens, cancel) {
            Ok(r) => r,
            Err(_) if cancel.is_cancelled() => return Ok(cancelled(String::new())),
            Err(e) => return Err(e),
        };
        stats.tokens_evaluated = evaluated;
        stats.tokens_reused = tokens.len() - evaluated;
        stats.prompt_ms = started.elapsed().as_secs_f64() * 1000.0;

        // Call or answer?
        let prompt_len = self.cached.len();
        let scoring = Instant::now();
        let call = match request.tool_choice {
            ToolChoice::Required => {
                stats.decision = "call (required)".into();
                true
            }
            ToolChoice::None => {
                stats.decision = "answer (tools off)".into();
                false
            }
            ToolChoice::Auto => {
                let confidence = self.call_confidence(&logits)?;
                stats.call_confidence = Some(confidence);
                let after_result = request
                    .messages
                    .last()
                    .is_some_and(|m| m.role == Role::User && m.content.starts_with("TOOL_RESULT:"));
                let (call, why) = match (&rules, after_result) {
                    (Some(r), false) if r.first_step.trusted => r
                        .first_step
                        .decide_first_step(confidence, user_question(request.messages)),
                    (Some(r), true) if r.follow_up.trusted => (
                        confidence >= r.follow_up.threshold,
                        format!("follow-up threshold {:.2}", r.follow_up.threshold),
                    ),
                    // Small models repeat their call once they see its result: answer.
                    (_, true) => (false, "after a tool result".to_string()),
                    (_, false) => (
                        lexical_prior(user_question(request.messages)),
                        "lexical prior".to_string(),
                    ),
                };
                stats.decision = format!("{} ({why})", if call { "call" } else { "answer" });
                if !call {
                    self.truncate_cache(prompt_len);
                }
                call
            }
        };
        stats.scoring_ms = scoring.elapsed().as_secs_f64() * 1000.0;

        let mut text = String::new();
        let mut grammar: Option<LlamaSampler> = None;
        if call {
            // The opening tag is written for the model; after it the grammar leads.
            let tag = self.tag.clone();
            let in_cache = self.cached.len() - prompt_len;
            if self.cached.len() > prompt_len && self.cached[prompt_len..] != tag[..in_cache] {
                self.truncate_cache(prompt_len);
            }
            let have = self.cached.len() - prompt_len;
            logits = self.append(&tag[have..])?;
            text.push_str(OPEN_TAG);
            if on_text(OPEN_TAG) == Flow::Stop {
                return Ok(self.finish(text, FinishReason::Stop, stats, started));
            }
            if self.settings.grammar {
                grammar = Some(self.new_grammar()?);
            }
        }
        stats.constrained = grammar.is_some();

        let mut chain = self.sampling_chain();
        let mut utf8 = Utf8Stream::default();
        let eog = |model: &LlamaModel, t: LlamaToken| model.vocab().is_eog(t);
        // An answer is an answer: once the step is decided (or forced) to be one, the model
        // cannot open a call after all.
        let ban_openers = !call;
        let longest_stop = request.stop.iter().map(|s| s.len()).max().unwrap_or(0);
        let mut generated = 0;
        let mut reply_tokens: Vec<LlamaToken> = Vec::new();
        // A call must end well-formed even when the model loops inside it or its budget runs
        // low: from then on the grammar-allowed token that closes something is preferred.
        let closing_from = request.max_tokens.saturating_sub(CLOSING_RESERVE);
        let mut closing = false;
        let finish = loop {
            if cancel.is_cancelled() {
                break FinishReason::Cancelled;
            }
            if generated >= request.max_tokens {
                break FinishReason::Length;
            }
            // Greedy decoding of a tiny model can fall into a loop; outside a call (the
            // grammar bounds those) a reply that only repeats itself is ended.
            let looping = !closing && is_looping(&reply_tokens);
            if grammar.is_none() && looping {
                stats.stopped_looping = true;
                break FinishReason::Length;
            }
            if grammar.is_some() && !closing && (looping || generated >= closing_from) {
                closing = true;
                stats.stopped_looping |= looping;
                if self.closers.is_none() {
                    self.closers = Some(closer_tokens(&self.model));
                }
            }
            let chosen = match (closing, grammar.as_mut(), &self.closers) {
                (true, Some(g), Some(closers)) => {
                    let in_string = inside_json_string(&text[OPEN_TAG.len()..]);
                    pick_closing(&logits, g, closers.for_position(in_string))
                }
                (_, grammar, _) => {
                    let model = &*self.model;
                    let so_far = &text;
                    let mut banned = |t: LlamaToken| {
                        if eog(model, t) || !ban_openers {
                            return false;
                        }
                        let piece =
                            String::from_utf8_lossy(&model.vocab().token_to_piece(t, false, None))
                                .into_owned();
                        // The last 16 characters, where an opener may have begun.
                        let tail_start = so_far.char_indices().rev().nth(15).map_or(0, |(i, _)| i);
                        let joined = format!("{}{piece}", &so_far[tail_start..]).to_lowercase();
                        NOT_IN_ANSWERS
                            .iter()
                            .any(|o| joined.contains(&o.to_lowercase()))
                    };
                    choose(&logits, grammar, &mut chain, &mut banned)
                }
            };
            let Some(token) = chosen else {
                break FinishReason::EndOfText;
            };
            if generated == 0 {
                stats.first_token_ms = started.elapsed().as_secs_f64() * 1000.0;
            }
            generated += 1;
            if let Some(g) = grammar.as_mut() {
                g.accept(token);
            }
            if eog(&self.model, token) {
                break FinishReason::EndOfText;
            }
            let piece = utf8.push(&self.model.vocab().token_to_piece(token, false, None));
            let before = text.len();
            text.push_str(&piece);
            // A stop sequence ends the reply right after itself. A constrained call ends only
            // where its grammar does: a closing tag inside a string argument is content.
            let search_from = before.saturating_sub(longest_stop);
            let stop_end = if grammar.is_some() {
                closed_call_end(&text, search_from)
            } else {
                request
                    .stop
                    .iter()
                    .filter_map(|s| {
                        let from = (search_from..=before)
                            .find(|i| text.is_char_boundary(*i))
                            .unwrap_or(before);
                        text[from..].find(s).map(|i| from + i + s.len())
                    })
                    .min()
            };
            if let Some(end) = stop_end {
                text.truncate(end);
                if end > before {
                    on_text(&text[before..]);
                }
                break FinishReason::Stop;
            }
            if !piece.is_empty() && on_text(&piece) == Flow::Stop {
                break FinishReason::Stop;
            }
            logits = self.append(&[token])?;
            reply_tokens.push(token);
        };
        let rest = utf8.finish();
        if !rest.is_empty() && finish != FinishReason::Stop {
            text.push_str(&rest);
            on_text(&rest);
        }
        stats.tokens_generated = generated;
        Ok(self.finish(text, finish, stats, started))
    }
}

impl LocalModel {
    /// Forgets everything the KV cache holds.
    pub fn clear_cache(&mut self) {
        self.ctx.clear_kv_cache();
        self.cached.clear();
    }

    /// `n` ordinary tokens (repeated text), for throughput measurements.
    pub(crate) fn filler_tokens(&self, n: usize) -> Vec<LlamaToken> {
        let text = "The quick brown fox jumps over the lazy dog. ".repeat(n / 4 + 2);
        let mut tokens = self.model.vocab().tokenize(text.as_bytes(), false, false);
        tokens.truncate(n);
        tokens
    }

    /// Decodes `tokens` into the cache in batches of `batch`, for throughput measurements.
    pub(crate) fn evaluate_tokens(
        &mut self,
        tokens: &[LlamaToken],
        batch: usize,
    ) -> Result<(), ModelError> {
        self.evaluate_batched(tokens, &CancelToken::new(), Some(batch))
            .map(|_| ())
    }

    /// Generates up to `n` tokens greedily after `prompt`, ignoring end-of-text; returns how
    /// many were generated.
    pub(crate) fn generate_free(&mut self, prompt: &[LlamaToken], n: usize) -> usize {
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

    fn new_grammar(&self) -> Result<LlamaSampler, ModelError> {
        LlamaSampler::grammar(&self.model, &self.grammar, "root")
            .map_err(|e| ModelError(format!("The call grammar could not be loaded: {e}")))
    }

    fn sampling_chain(&self) -> Option<LlamaSampler> {
        let s = &self.settings.sampling;
        if s.temperature <= 0.0 {
            return None;
        }
        Some(LlamaSampler::chain_simple([
            LlamaSampler::top_p(s.top_p, 1),
            LlamaSampler::min_p(s.min_p, 1),
            LlamaSampler::temp(s.temperature),
            LlamaSampler::dist(s.seed),
        ]))
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
        };
        self.last = stats;
        generation
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(ids: &[i32]) -> Vec<LlamaToken> {
        ids.iter().map(|i| LlamaToken(*i)).collect()
    }

    #[test]
    fn the_json_position_knows_strings_and_escapes() {
        assert!(!inside_json_string(r#"{"tool": "x", "args": {"#));
        assert!(inside_json_string(
            r#"{"tool": "x", "args": {"content": "a }"#
        ));
        assert!(inside_json_string(r#"{"content": "say \"hi"#));
        assert!(!inside_json_string(r#"{"content": "say \"hi\"""#));
        assert!(inside_json_string(r#"{"content": "back\\slash\"#));
    }

    #[test]
    fn a_closing_tag_inside_a_string_does_not_end_a_call() {
        let open = "<TOOL_CALL>\n{\"tool\": \"write_file\", \"args\": {\"path\": \"a.md\", \"content\": \"x</TOOL_CALL>";
        assert_eq!(closed_call_end(open, 0), None);
        let closed = format!("{open} y\"}}}}\n</TOOL_CALL>");
        assert_eq!(closed_call_end(&closed, 0), Some(closed.len()));
        // Only tags at or after `from` count.
        assert_eq!(closed_call_end(&closed, closed.len()), None);
    }

    #[test]
    fn the_best_tokens_come_best_first_and_ties_go_to_the_later_token() {
        let logits = [1.0, 5.0, f32::NEG_INFINITY, 3.0, 5.0, 2.0, f32::NAN];
        let ids = |tokens: Vec<LlamaToken>| tokens.iter().map(|t| t.0).collect::<Vec<_>>();
        assert_eq!(ids(best_by_logit(&logits, &[], 3)), [4, 1, 3]);
        assert_eq!(ids(best_by_logit(&logits, &[LlamaToken(4)], 3)), [1, 3, 5]);
        assert_eq!(ids(best_by_logit(&logits, &[], 10)), [4, 1, 3, 5, 0]);
        // The first is the greedy pick's token.
        assert_eq!(
            pick(&logits, &[], None, &mut None),
            Some(best_by_logit(&logits, &[], 1)[0])
        );
        assert!(best_by_logit(&[f32::NEG_INFINITY], &[], 4).is_empty());
    }

    #[test]
    fn a_reply_repeating_itself_is_a_loop() {
        assert!(is_looping(&tokens(&[
            9, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3
        ])));
        assert!(is_looping(&tokens(&[5; 16])));
        assert!(!is_looping(&tokens(&[5; 6])));
        assert!(!is_looping(&tokens(&[1, 2, 3, 1, 2, 3, 1, 2, 3])));
        assert!(!is_looping(&tokens(&[
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
        ])));
    }
}
