//! What the real-model tests share; each test binary uses part of it.
#![allow(dead_code)]

use lantern_llama::{LocalModel, PromptCache};
use std::path::PathBuf;

/// `model` keeping the call decision's calibration between runs, as the app keeps it for a
/// user: measured once per model and prompt. One file per model, named as the app names it, so
/// every test binary and the end-to-end tests (which copy this folder in) share what any of
/// them measured. Its key holds the system prompt and the probes, so a change of either is
/// measured anew; an empty cache only makes the first run slower.
pub fn keeping_calibration(model: LocalModel) -> LocalModel {
    let name = lantern_llama::calibration_file_name(model.facts());
    let file = user_cache().join("lantern/test-calibration").join(name);
    model.with_calibration_file(file)
}

/// `model` keeping its prompt openings between runs, as the app keeps them for a user: a long
/// system prompt is evaluated once per model and context, and a damaged or stale state is never
/// trusted (it is evaluated again). One folder serves every test binary and the window tests
/// (`tests/e2e/run.mjs`): a state is named by the model, the context and the opening's tokens,
/// so an opening any of them evaluated is evaluated once.
pub fn keeping_openings(model: LocalModel) -> LocalModel {
    let dir = user_cache().join("lantern/test-prompt-openings");
    let facts = model.facts();
    let cache = PromptCache::new(dir, &facts.path, facts.context).unwrap();
    model.with_prompt_cache(cache)
}

fn user_cache() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
}
