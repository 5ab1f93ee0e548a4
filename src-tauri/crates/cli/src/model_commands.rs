//! `lantern models`, `lantern probe` and `lantern bench-model`: what the models are and how
//! they do.

use crate::models::ModelArgs;
#[cfg(feature = "llama")]
use crate::print_json;
use crate::Failure;
use lantern_core::toolbox::Toolbox;
#[cfg(feature = "llama")]
use serde_json::{json, Value};

#[cfg(feature = "llama")]
pub(super) fn list_models() -> Result<u8, Failure> {
    let default = lantern_llama::default_model_path();
    let models: Vec<Value> = lantern_llama::cached_models()
        .into_iter()
        .map(|(path, size)| json!({"path": path, "size_bytes": size, "default": path == default}))
        .collect();
    print_json(&json!({"folder": lantern_llama::models_dir(), "models": models}));
    Ok(0)
}

/// How many tokens each of `texts` is as a system message, as the default model's template
/// and tokenizer make it.
#[cfg(feature = "llama")]
pub(super) fn prompt_tokens(texts: &[&str]) -> Result<Vec<usize>, Failure> {
    use lantern_core::model::Model;
    let path = lantern_llama::default_model_path();
    let mut model = lantern_llama::LocalModel::load(&lantern_llama::LoadOptions::new(path), |_| {})
        .map_err(|e| crate::usage(format!("the default model cannot be loaded: {e}")))?;
    texts
        .iter()
        .map(|text| {
            model.count_tokens(text).ok_or_else(|| {
                crate::usage("the default model's template cannot render a system message")
            })
        })
        .collect()
}

#[cfg(not(feature = "llama"))]
pub(super) fn prompt_tokens(_: &[&str]) -> Result<Vec<usize>, Failure> {
    Err(crate::models::no_local_backend())
}

#[cfg(not(feature = "llama"))]
pub(super) fn list_models() -> Result<u8, Failure> {
    Err(crate::models::no_local_backend())
}

/// `lantern probe`: a server's models and the path its tool calls take, or a local model's
/// report.
pub(super) fn probe(toolbox: &Toolbox, args: &ModelArgs, json: bool) -> Result<u8, Failure> {
    match args.server_spec() {
        Some(spec) => probe_server(&spec?, json),
        None => probe_local(toolbox, args, json),
    }
}

/// Which models a server offers, whether the named one is among them, and which path tool
/// calls take with it and why.
fn probe_server(spec: &lantern_providers::ServerSpec, json: bool) -> Result<u8, Failure> {
    let failed = |e: lantern_core::model::ModelError| Failure {
        code: 1,
        message: e.0,
    };
    let check = lantern_providers::check_server(spec).map_err(failed)?;
    let (models, listed, detection) = (check.models, check.listed, check.detection);
    let path = detection.as_ref().map(|d| match d.path {
        lantern_core::model::CallPath::Native => "native",
        lantern_core::model::CallPath::Text => "text",
    });
    if json {
        crate::print_json(&serde_json::json!({
            "server": spec.base_url,
            "models": models,
            "model": spec.model,
            "model_listed": listed,
            "tool_calls": path,
            "why": detection.as_ref().map(|d| d.why.as_str()),
        }));
        return Ok(if listed { 0 } else { 1 });
    }
    outln!("server: {} — models: {}", spec.base_url, models.join(", "));
    match detection {
        Some(d) => {
            outln!(
                "{}: tool calls {} — {}",
                spec.model,
                if path == Some("native") {
                    "native"
                } else {
                    "by Lantern's text protocol"
                },
                d.why
            );
            Ok(0)
        }
        None => {
            outln!("{}: the server does not offer this model", spec.model);
            Ok(1)
        }
    }
}

#[cfg(not(feature = "llama"))]
fn probe_local(_: &Toolbox, _: &ModelArgs, _: bool) -> Result<u8, Failure> {
    Err(crate::models::no_local_backend())
}

#[cfg(not(feature = "llama"))]
pub(super) fn bench_model(
    _: &Toolbox,
    _: &ModelArgs,
    _: usize,
    _: usize,
    _: usize,
) -> Result<u8, Failure> {
    Err(crate::models::no_local_backend())
}

#[cfg(feature = "llama")]
fn probe_local(toolbox: &Toolbox, args: &ModelArgs, json: bool) -> Result<u8, Failure> {
    let mut model = args.load_local()?;
    let report = lantern_probe::probe::probe(&mut model, toolbox).map_err(|e| Failure {
        code: 1,
        message: e,
    })?;
    if json {
        print_json(&report);
        return Ok(0);
    }
    let f = &report.facts;
    outln!(
        "{} — {}, {:.0}M parameters, {:.0} MiB, trained context {}",
        f.name,
        f.architecture,
        f.parameters as f64 / 1e6,
        f.size_bytes as f64 / 1048576.0,
        f.trained_context
    );
    outln!("chat template: {}", f.chat_template);
    outln!("tool calls: {}", f.call_path_why);
    outln!(
        "attention: {}",
        match f.flash_attention {
            true => "flash attention (layers on the GPU)",
            false => "plain (flash attention is slower on the CPU)",
        }
    );
    outln!(
        "system prompt: {} tokens of a {}-token context{}",
        report.system_prompt_tokens,
        report.context,
        if report.fits {
            ""
        } else {
            " — too large, load with a larger --context"
        }
    );
    for (name, c, fallback) in [
        (
            "first step",
            &report.calibration.first_step,
            "a word-based rule decides",
        ),
        (
            "after a result",
            &report.calibration.follow_up,
            "the model answers",
        ),
    ] {
        outln!(
            "call decision, {name}: threshold {:.2} nats{}, probe AUC {:.2}, probe accuracy {:.0}%{} ({:.1} s)",
            c.threshold,
            if c.prior_weight > 0.0 {
                format!(" (score + {:.1} when the word-based rule marks the message)", c.prior_weight)
            } else {
                String::new()
            },
            c.auc,
            c.probe_accuracy * 100.0,
            if c.trusted { String::new() } else { format!(" — not trusted, {fallback}") },
            c.seconds
        );
    }
    for t in &report.tasks {
        outln!(
            "  {:<50} → {:<18} {}",
            t.question,
            t.outcome,
            if t.decision_right { "right" } else { "WRONG" }
        );
    }
    outln!(
        "speed: prompt {:.0} tok/s, generation {:.0} tok/s",
        report.prompt_tokens_per_second,
        report.generation_tokens_per_second
    );
    outln!("{}", report.verdict);
    Ok(0)
}

#[cfg(feature = "llama")]
pub(super) fn bench_model(
    toolbox: &Toolbox,
    args: &ModelArgs,
    prompt_tokens: usize,
    gen_tokens: usize,
    repetitions: usize,
) -> Result<u8, Failure> {
    let mut model = args.load_local()?;
    print_json(&lantern_probe::bench::bench_model(
        &mut model,
        toolbox,
        prompt_tokens,
        gen_tokens,
        repetitions,
    ));
    Ok(0)
}
