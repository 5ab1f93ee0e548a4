//! # lantern-llama
//!
//! Lantern's local model backend: llama.cpp in-process through `llama-cpp-2`, implementing
//! lantern-core's [`Model`](lantern_core::model::Model). The only crate that links llama.cpp.
//!
//! What it adds on top of plain generation, so that even a 135M-parameter model calls tools
//! correctly:
//!
//! - **Grammar-constrained calls** ([`grammar`]): once a call starts, a GBNF grammar built from
//!   the tool schemas keeps it a valid call of a known tool. It is applied the fast way: the
//!   sampled token is checked alone, and the full grammar pass runs only when it is rejected.
//! - **A calibrated call-or-answer decision** ([`decide`]): in `auto` mode the model's own
//!   log-probability of starting its reply with `<TOOL_CALL>`, plus a weight when a lexical
//!   prior marks the message as being about the project, is compared with a threshold; weight
//!   and threshold are calibrated per model and system prompt. With no signal, the lexical
//!   prior decides alone.
//! - **KV-cache reuse**: each step decodes only the tokens after the longest prefix the cache
//!   already holds; a conversation too long for the context drops its oldest turns.
//!
//! ```no_run
//! use lantern_llama::{LoadOptions, LocalModel};
//! let model = LocalModel::load(&LoadOptions::new("SmolLM2-135M-Instruct.Q4_1.gguf"), |p| {
//!     eprintln!("loading {:.0}%", p * 100.0)
//! })?;
//! println!("{} ({} parameters)", model.facts().name, model.facts().parameters);
//! # Ok::<(), lantern_llama::LoadError>(())
//! ```

pub mod decide;
mod engine;
pub mod grammar;
pub mod template;
mod utf8;

pub use engine::{
    physical_cores, LoadError, LoadOptions, LocalModel, ModelFacts, Opening, PreparedOpening,
    PromptCache, Settings, StepStats, DEFAULT_CONTEXT,
};

use std::path::PathBuf;

/// File name of the default model, as `scripts/fetch-model.sh` installs it.
pub const DEFAULT_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// Where downloaded models live: `$LANTERN_MODEL_DIR`, else `$XDG_CACHE_HOME/lantern/models`,
/// else `~/.cache/lantern/models`.
pub fn models_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("LANTERN_MODEL_DIR").filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(dirs_home_cache)
        .unwrap_or_else(std::env::temp_dir)
        .join("lantern")
        .join("models")
}

fn dirs_home_cache() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache"))
}

/// The default model's path (it may not exist yet: `npm start` or `npm test` fetch it).
pub fn default_model_path() -> PathBuf {
    models_dir().join(DEFAULT_MODEL_FILE)
}

/// The GGUF files in the models folder, sorted by name, with their sizes.
pub fn cached_models() -> Vec<(PathBuf, u64)> {
    let mut found: Vec<(PathBuf, u64)> = std::fs::read_dir(models_dir())
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "gguf"))
        .filter_map(|e| Some((e.path(), e.metadata().ok()?.len())))
        .collect();
    found.sort();
    found
}

/// Where calibrations for a model are kept between runs, under Lantern's data folder.
pub fn calibration_file(model: &ModelFacts) -> PathBuf {
    lantern_core::paths::data_dir()
        .join("calibration")
        .join(calibration_file_name(model))
}

/// The name of a model's calibration file: the model file's name and size, so that a model
/// replaced by another of the same name is measured again.
pub fn calibration_file_name(model: &ModelFacts) -> String {
    let stem = model
        .path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{stem}-{}.json", model.size_bytes)
}
