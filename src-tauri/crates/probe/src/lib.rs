//! # lantern-probe
//!
//! What a local model is worth to Lantern, measured from outside the engine: the [`probe`]
//! (does the system prompt fit, is the call decision calibrated, are three quick tasks right,
//! how fast) that the window's Model page and `lantern probe` show, and the
//! [benchmarks](mod@bench) of `lantern bench-model` (throughput shaped like llama.cpp's
//! `llama-bench`, constrained calls, follow-up steps with KV reuse, grounding, the first answer
//! with and without the prompt cache).
//!
//! The engine ([`lantern_llama`]) generates, and exposes what can be measured of it (filler
//! tokens, evaluating a batch, generating freely, the opening's costs); the measuring itself,
//! its tasks and its reports live here.
//!
//! ```no_run
//! use lantern_core::toolbox::Toolbox;
//! use lantern_llama::{LoadOptions, LocalModel};
//! let mut model = LocalModel::load(&LoadOptions::new("model.gguf"), |_| {}).map_err(|e| e.0)?;
//! let report = lantern_probe::probe::probe(&mut model, &Toolbox::standard())?;
//! println!("{}", report.verdict);
//! # Ok::<(), String>(())
//! ```

pub mod bench;
pub mod probe;
