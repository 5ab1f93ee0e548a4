//! The persisted prompt cache: the KV state of a conversation's opening (the system messages:
//! the prompt and the tool catalog) is saved to the user cache the first time it is evaluated,
//! and a fresh process loads it instead of evaluating those tokens again.
//!
//! A saved state is keyed by the model (its file's size and the SHA-256 of its first and last
//! 4 MiB — hashing the whole file would cost more than the state saves), the context settings,
//! and the opening's tokens. Beside it lies the SHA-256 of the state file. A state whose hash,
//! or whose tokens, do not match is removed and the opening evaluated again: a damaged or
//! foreign file is never trusted. The folder is capped; the states used least recently go
//! first.

use super::*;
use lantern_core::paths::sha256_hex;
use std::io::{Read, Seek, SeekFrom};

/// The most bytes the saved states may take together.
const FOLDER_LIMIT: u64 = 1 << 30;

/// The shortest opening worth a saved state. A template that folds the system prompt into the
/// first user turn (Gemma's) renders the system messages alone as little more than the
/// beginning-of-text token.
const MIN_OPENING: usize = 32;

/// How much of the model file's head and tail its key hashes.
const MODEL_SAMPLE: u64 = 4 << 20;

/// Where saved openings are kept, and what they are keyed by besides their tokens.
#[derive(Debug, Clone)]
pub struct PromptCache {
    dir: PathBuf,
    /// The model and the context settings.
    key: String,
}

/// What making the cache hold the opening took.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Opening {
    /// Nothing: no cache, no system message, or the template does not render it apart.
    #[default]
    None,
    /// The KV cache already held it.
    Held,
    /// Loaded from a saved state.
    Loaded,
    /// Evaluated, and saved for the next process.
    Saved,
}

/// How the opening came to be in the cache when the model was prepared: what the user waits
/// for at load, and why the first message of a fresh process is quick.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct PreparedOpening {
    pub how: Opening,
    /// The opening's length in tokens.
    pub tokens: usize,
    /// What holding it took, evaluating or loading.
    pub seconds: f64,
}

impl PromptCache {
    /// A cache in `dir` for the model file at `model` loaded with a `context`-token context.
    pub fn new(dir: PathBuf, model: &Path, context: u32) -> std::io::Result<Self> {
        let mut file = std::fs::File::open(model)?;
        let size = file.metadata()?.len();
        let mut sample = Vec::new();
        (&mut file).take(MODEL_SAMPLE).read_to_end(&mut sample)?;
        file.seek(SeekFrom::Start(size.saturating_sub(MODEL_SAMPLE)))?;
        file.take(MODEL_SAMPLE).read_to_end(&mut sample)?;
        let key = format!("{size}:{}:ctx{context}", sha256_hex(&sample));
        Ok(PromptCache { dir, key })
    }

    /// The state file and its checksum file for `opening`, in a context that computes
    /// attention with flash attention or without (llama.cpp lays its cache out differently
    /// for each, and refuses the other's state).
    pub(super) fn files(
        &self,
        opening: &[LlamaToken],
        flash_attention: bool,
    ) -> (PathBuf, PathBuf) {
        let ids: Vec<String> = opening.iter().map(|t| t.0.to_string()).collect();
        let key = format!("{}:fa{}", self.key, u8::from(flash_attention));
        let name = sha256_hex(format!("{key}\n{}", ids.join(" ")).as_bytes());
        (
            self.dir.join(format!("{name}.state")),
            self.dir.join(format!("{name}.sha256")),
        )
    }

    /// Removes the least recently used states until the folder is under its limit.
    fn evict(&self) {
        let mut states: Vec<(std::time::SystemTime, u64, PathBuf)> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "state"))
            .filter_map(|e| {
                let meta = e.metadata().ok()?;
                Some((meta.modified().ok()?, meta.len(), e.path()))
            })
            .collect();
        let mut total: u64 = states.iter().map(|(_, len, _)| len).sum();
        states.sort();
        for (_, len, path) in states {
            if total <= FOLDER_LIMIT {
                break;
            }
            remove_state(&path);
            total -= len;
        }
    }
}

fn remove_state(state: &Path) {
    let _ = std::fs::remove_file(state);
    let _ = std::fs::remove_file(state.with_extension("sha256"));
}

fn checksum_of(path: &Path) -> Option<String> {
    std::fs::read(path).ok().map(|bytes| sha256_hex(&bytes))
}

impl LocalModel {
    /// Keeps the opening of conversations in `cache` between processes.
    pub fn with_prompt_cache(mut self, cache: PromptCache) -> Self {
        self.replace_prompt_cache(Some(cache));
        self
    }

    /// Keeps the opening of conversations in `cache` between processes, or nowhere; returns
    /// where it was kept until now.
    pub fn replace_prompt_cache(&mut self, cache: Option<PromptCache>) -> Option<PromptCache> {
        std::mem::replace(&mut self.prompt_cache, cache)
    }

    /// How [`Model::prepare`] made the cache hold the opening, once it has.
    pub fn prepared_opening(&self) -> Option<PreparedOpening> {
        self.prepared
    }

    /// For the benchmarks: the opening of `messages` in tokens, the milliseconds evaluating it
    /// from an empty cache takes, and those loading its saved state takes (saved first).
    pub fn opening_costs(&mut self, messages: &[Message]) -> Option<(usize, f64, f64)> {
        let whole = self.tokenize(&self.render(messages).ok()?);
        let opening = self.opening_tokens(messages, &whole)?;
        let cancel = CancelToken::new();
        self.clear_cache();
        let started = Instant::now();
        self.evaluate(&opening, &cancel).ok()?;
        let evaluate_ms = started.elapsed().as_secs_f64() * 1000.0;
        self.save_opening(&opening);
        self.clear_cache();
        let started = Instant::now();
        let loaded = self.load_opening(&opening);
        let load_ms = started.elapsed().as_secs_f64() * 1000.0;
        loaded.then_some((opening.len(), evaluate_ms, load_ms))
    }

    /// The tokens of `messages`' opening system messages as they begin the rendered
    /// conversation; `None` when there are none, or the template does not render them as a
    /// prefix of the whole (some fold the system prompt into the first user turn), or they are
    /// too short to be worth saving.
    fn opening_tokens(
        &self,
        messages: &[Message],
        whole: &[LlamaToken],
    ) -> Option<Vec<LlamaToken>> {
        let n = leading_system_messages(messages);
        if n == 0 {
            return None;
        }
        let text = match &self.native {
            Some(native) => native.render(&messages[..n], &self.tools, false).ok()?,
            None => {
                let chat: Vec<LlamaChatMessage> = text_protocol_messages(&messages[..n])
                    .into_iter()
                    .map(|m| LlamaChatMessage::new("system".into(), m.content).ok())
                    .collect::<Option<_>>()?;
                self.model
                    .apply_chat_template(&self.template, &chat, false)
                    .ok()?
            }
        };
        let opening = self.tokenize(&text);
        (opening.len() >= MIN_OPENING && opening.len() < whole.len() && whole.starts_with(&opening))
            .then_some(opening)
    }

    /// Makes the KV cache hold the opening of `messages` (rendered whole as `whole`): kept
    /// when it does, else loaded from a saved state, else evaluated and saved. Returns what it
    /// took and how many tokens it evaluated.
    pub(super) fn hold_opening(
        &mut self,
        messages: &[Message],
        whole: &[LlamaToken],
        cancel: &CancelToken,
    ) -> Result<(Opening, usize), ModelError> {
        if self.prompt_cache.is_none() {
            return Ok((Opening::None, 0));
        }
        let Some(opening) = self.opening_tokens(messages, whole) else {
            return Ok((Opening::None, 0));
        };
        if self.cached.starts_with(&opening) {
            return Ok((Opening::Held, 0));
        }
        if self.load_opening(&opening) {
            return Ok((Opening::Loaded, 0));
        }
        let (_, evaluated) = self.evaluate(&opening, cancel)?;
        self.save_opening(&opening);
        Ok((Opening::Saved, evaluated))
    }

    /// Loads the saved state of `opening` when there is one that can be trusted; a damaged or
    /// mismatched one is removed.
    fn load_opening(&mut self, opening: &[LlamaToken]) -> bool {
        let Some(cache) = &self.prompt_cache else {
            return false;
        };
        let (state, sum) = cache.files(opening, self.facts.flash_attention);
        if !state.exists() {
            return false;
        }
        let expected = std::fs::read_to_string(&sum).unwrap_or_default();
        if checksum_of(&state).as_deref() != Some(expected.trim()) {
            remove_state(&state);
            return false;
        }
        self.clear_cache();
        match self.ctx.state_seq_load_file(&state, 0, opening.len()) {
            Ok((tokens, _)) if tokens == opening => {
                self.cached = tokens;
                // Touched, so eviction takes the states not used for longest.
                let _ = std::fs::File::options()
                    .append(true)
                    .open(&state)
                    .and_then(|f| f.set_modified(std::time::SystemTime::now()));
                true
            }
            _ => {
                self.clear_cache();
                remove_state(&state);
                false
            }
        }
    }

    /// Saves the cache, which holds exactly `opening`, for the next process; a failure only
    /// means the next process evaluates it again.
    fn save_opening(&mut self, opening: &[LlamaToken]) {
        let Some(cache) = &self.prompt_cache else {
            return;
        };
        if self.cached != opening || std::fs::create_dir_all(&cache.dir).is_err() {
            return;
        }
        let (state, sum) = cache.files(opening, self.facts.flash_attention);
        // Unfinished, the file is this save's own: two models of one process (tests run on
        // threads) may save the same opening at once.
        static SAVES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let save = SAVES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let partial = state.with_extension(format!("partial-{}-{save}", std::process::id()));
        let saved = self.ctx.state_seq_save_file(&partial, 0, opening).is_ok()
            && checksum_of(&partial).is_some_and(|hash| std::fs::write(&sum, hash).is_ok())
            && std::fs::rename(&partial, &state).is_ok();
        if !saved {
            let _ = std::fs::remove_file(&partial);
            remove_state(&state);
            return;
        }
        cache.evict();
    }
}
