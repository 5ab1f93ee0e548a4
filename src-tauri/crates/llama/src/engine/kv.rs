//! The KV cache kept in step with the tokens it holds: rendering, tokenising, fitting the
//! prompt to the context, and evaluating only what is new.

use super::*;

/// About how long one prompt batch should take: cancellation is checked between batches.
const CHUNK_MS: f64 = 80.0;

/// Prompt tokens a billion parameters' model evaluates per millisecond and thread: the default
/// model (135 M parameters) evaluates about 138 tokens a second at one thread. A model's rate
/// goes about inversely with its size, and in proportion to its threads.
const PROMPT_RATE_PER_THREAD: f64 = 0.0186;

/// How many prompt tokens one batch holds for a model of `parameters` at `threads`: about
/// [`CHUNK_MS`]' worth by that estimate, at least 8, at most `max_batch`. It is fixed for a
/// model and its threads, never timed, so a prompt is cut the same way on a busy machine as on
/// an idle one: llama.cpp's logits can differ slightly with how a prompt is cut into batches,
/// and a greedy answer with them.
pub(super) fn prompt_chunk(parameters: u64, threads: i32, max_batch: usize) -> usize {
    let billions = (parameters as f64 / 1e9).max(1e-3);
    let rate = PROMPT_RATE_PER_THREAD * f64::from(threads.max(1)) / billions;
    ((rate * CHUNK_MS) as usize).max(8).min(max_batch)
}

impl LocalModel {
    /// How many prompt tokens one batch of this model's prompts holds (see `prompt_chunk`).
    pub fn prompt_batch(&self) -> usize {
        prompt_chunk(
            self.facts.parameters,
            self.facts.threads,
            self.settings.prompt_batch.clamp(1, 512),
        )
    }

    /// Renders messages with the model's chat template, ready for the assistant's reply.
    /// A model prompted natively gets its own template with the tools.
    pub fn render(&self, messages: &[Message]) -> Result<String, ModelError> {
        if let Some(native) = &self.native {
            return native
                .render(messages, &self.tools, true)
                .map_err(|e| ModelError(format!("The model's chat template failed: {e}")));
        }
        let chat: Vec<LlamaChatMessage> = text_protocol_messages(messages)
            .iter()
            .map(|m| {
                let role = match m.role {
                    Role::System => "system",
                    // Tool messages were turned into user text above.
                    Role::User | Role::Tool => "user",
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

    /// The tokens a conversation that opens with `system_prompt` spends before the user's
    /// words. Counted with an empty user message after it: a template without a system role
    /// (Gemma's) folds the system prompt into the first user turn, and renders it alone as
    /// nothing.
    pub fn system_prompt_tokens(&self, system_prompt: &str) -> Result<usize, ModelError> {
        let opening = [
            Message::new(Role::System, system_prompt),
            Message::new(Role::User, ""),
        ];
        Ok(self.tokenize(&self.render(&opening)?).len())
    }

    /// Tokenizes rendered text the way llama.cpp's own chat front-ends do.
    pub fn tokenize(&self, text: &str) -> Vec<LlamaToken> {
        self.model.vocab().tokenize(text.as_bytes(), true, true)
    }

    /// Renders and tokenizes `messages`, dropping the oldest turns (never the opening system
    /// messages, never the last message) until the prompt leaves room for `reserve` new tokens.
    /// When nothing is left to drop, the longest tool result still shown is cut in half (see
    /// [`cut_to_fit`]) until it fits. Returns the tokens, the messages dropped and the results
    /// cut.
    pub(super) fn prompt_that_fits(
        &self,
        messages: &[Message],
        reserve: usize,
    ) -> Result<(Vec<LlamaToken>, usize, usize), ModelError> {
        let n_ctx = self.facts.context as usize;
        let reserve = reserve.min(n_ctx / 4);
        let fixed = leading_system_messages(messages);
        let mut messages = messages.to_vec();
        let mut start = fixed;
        let mut cut = 0;
        loop {
            let kept: Vec<Message> = messages[..fixed]
                .iter()
                .chain(&messages[start..])
                .cloned()
                .collect();
            let tokens = self.tokenize(&self.render(&kept)?);
            if tokens.len() + reserve <= n_ctx {
                return Ok((tokens, start - fixed, cut));
            }
            if start + 1 >= messages.len() {
                let longest = (start..messages.len())
                    .filter(|&i| messages[i].role == Role::Tool)
                    .max_by_key(|&i| messages[i].content.len());
                if let Some((i, shorter)) =
                    longest.and_then(|i| Some((i, cut_to_fit(&messages[i])?)))
                {
                    messages[i] = shorter;
                    cut += 1;
                    continue;
                }
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
    pub(super) fn evaluate(
        &mut self,
        tokens: &[LlamaToken],
        cancel: &CancelToken,
    ) -> Result<(Vec<f32>, usize), ModelError> {
        self.evaluate_batched(tokens, cancel, None)
    }

    /// [`evaluate`](Self::evaluate) with batches of a given size instead of the model's own
    /// (for measurements comparable with llama-bench).
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
            // Chunks of about CHUNK_MS each, so cancel is honoured about that fast, while
            // smaller models and more threads decode in larger batches.
            let size = match fixed_batch {
                Some(_) => max_batch,
                None => self.prompt_batch(),
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
            self.ctx
                .decode(&mut batch)
                .map_err(|e| ModelError(format!("llama.cpp could not evaluate the prompt: {e}")))?;
            self.cached.extend_from_slice(chunk);
            pos += chunk.len();
        }
        Ok((
            self.ctx.get_logits_ith(last_index).to_vec(),
            tokens.len() - keep,
        ))
    }

    /// Decodes `tokens` right after what the cache holds; returns the logits after the last.
    pub(super) fn append(&mut self, tokens: &[LlamaToken]) -> Result<Vec<f32>, ModelError> {
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
    pub(super) fn truncate_cache(&mut self, len: usize) {
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

    /// Keeps only the first `len` cached tokens. Where the cache cannot drop a suffix and had to
    /// be cleared, the kept tokens are evaluated again: what comes next always has its context.
    pub(super) fn rewind_to(&mut self, len: usize, cancel: &CancelToken) -> Result<(), ModelError> {
        let kept = self.cached[..len.min(self.cached.len())].to_vec();
        self.truncate_cache(len);
        if self.cached.len() < kept.len() {
            self.evaluate(&kept, cancel)?;
        }
        Ok(())
    }

    /// How many positions llama.cpp's own KV cache holds for the conversation (its count, not
    /// Lantern's), for checking what the context meter shows.
    pub fn kv_positions(&self) -> usize {
        usize::try_from(self.ctx.kv_cache_seq_pos_max(0) + 1).unwrap_or(0)
    }

    /// Forgets everything the KV cache holds.
    pub fn clear_cache(&mut self) {
        self.ctx.clear_kv_cache();
        self.cached.clear();
    }

    /// `n` ordinary tokens (repeated text), for throughput measurements.
    pub fn filler_tokens(&self, n: usize) -> Vec<LlamaToken> {
        let text = "The quick brown fox jumps over the lazy dog. ".repeat(n / 4 + 2);
        let mut tokens = self.model.vocab().tokenize(text.as_bytes(), false, false);
        tokens.truncate(n);
        tokens
    }

    /// Decodes `tokens` into the cache in batches of `batch`, for throughput measurements.
    pub fn evaluate_tokens(
        &mut self,
        tokens: &[LlamaToken],
        batch: usize,
    ) -> Result<(), ModelError> {
        self.evaluate_batched(tokens, &CancelToken::new(), Some(batch))
            .map(|_| ())
    }
}

/// How many of the opening tag's tokens the cache already holds right after the first
/// `prompt_len` tokens (scoring a call leaves part of the tag there). 0 when what follows the
/// prompt is not the tag's start — or when the cache no longer holds the whole prompt. Never
/// the whole tag: its last token must be decoded for the logits that follow it.
pub(super) fn tag_tokens_in_cache<T: PartialEq>(
    cached: &[T],
    prompt_len: usize,
    tag: &[T],
) -> usize {
    let Some(after) = cached.get(prompt_len..) else {
        return 0;
    };
    if after.len() < tag.len() && tag.starts_with(after) {
        after.len()
    } else {
        0
    }
}
