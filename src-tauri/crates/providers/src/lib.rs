//! # lantern-providers
//!
//! The one place that turns "which model" into a running [`Model`]: a local GGUF through
//! llama.cpp, an OpenAI-compatible server (llama-server, Ollama, LM Studio, vLLM), or a script
//! of replies. The desktop app and the command line both open their models here, so a backend
//! added here is available to both, and neither knows more about a backend than the [`Model`]
//! contract says.
//!
//! ```
//! use lantern_core::model::{GenerationOptions, Model};
//! use lantern_providers::{open, ProviderSpec};
//!
//! let script = std::env::temp_dir().join("lantern-providers-doc.json");
//! std::fs::write(&script, r#"["Hello."]"#).unwrap();
//! let model = open(&ProviderSpec::Scripted { path: script }, &GenerationOptions::default(), |_| {})
//!     .unwrap();
//! assert_eq!(model.name(), "scripted");
//! ```

use lantern_core::model::{CallPath, GenerationOptions, Model, ModelError, ScriptedModel};
pub use lantern_openai::{CallMode, Detection};
use lantern_openai::{OpenAiModel, OpenAiOptions};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Which model to open.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProviderSpec {
    /// A GGUF file run in this process.
    Local(LocalSpec),
    /// A model on an OpenAI-compatible server.
    Server(ServerSpec),
    /// Prepared replies from a JSON file (demos and tests of the loop).
    Scripted { path: PathBuf },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalSpec {
    pub path: PathBuf,
    /// Context size in tokens; `None` for the engine's default.
    pub context: Option<u32>,
    /// CPU threads; `None` for the number of physical cores.
    pub threads: Option<i32>,
    /// Native: the model's own chat template gets the tools (an error when it cannot); text:
    /// Lantern's text protocol; auto: native when the template allows.
    #[serde(default)]
    pub calls: CallMode,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerSpec {
    /// The API root, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    /// The model's name on the server.
    pub model: String,
    /// Sent as a bearer token when set. Never part of a transcript or a log line.
    #[serde(skip_serializing)]
    pub api_key: Option<String>,
    /// Native tool calls, the text protocol, or whichever the server shows it can do.
    #[serde(default)]
    pub calls: CallMode,
}

/// Opens the model `spec` names with `options` applied. `progress` hears the share of a local
/// model's file read so far (0 to 1); other backends open at once.
pub fn open(
    spec: &ProviderSpec,
    options: &GenerationOptions,
    progress: impl Fn(f32) + 'static,
) -> Result<Box<dyn Model>, ModelError> {
    let mut model: Box<dyn Model> = match spec {
        ProviderSpec::Local(local) => open_local_boxed(local, progress)?,
        ProviderSpec::Server(server) => Box::new(open_server(server)?.0),
        ProviderSpec::Scripted { path } => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                ModelError(format!("Cannot read the script {}: {e}", path.display()))
            })?;
            Box::new(ScriptedModel::from_json(&text)?)
        }
    };
    model.configure(options);
    Ok(model)
}

/// A model on a server, and which path its tool calls take and why. In [`CallMode::Auto`] the
/// server is asked (one short request, see [`OpenAiModel::detect_call_path`]), so a server
/// that cannot be reached is reported here; a forced mode sends nothing before the first step.
pub fn open_server(spec: &ServerSpec) -> Result<(OpenAiModel, Detection), ModelError> {
    let mut options = OpenAiOptions::new(&spec.base_url, &spec.model);
    options.api_key = spec.api_key.clone();
    options.calls = spec.calls;
    let mut model = OpenAiModel::new(options)?;
    let detection = match spec.calls {
        CallMode::Auto => model.detect_call_path()?,
        CallMode::Native => Detection {
            path: CallPath::Native,
            why: "native tool calls were chosen".to_string(),
        },
        CallMode::Text => Detection {
            path: CallPath::Text,
            why: "the text protocol was chosen".to_string(),
        },
    };
    Ok((model, detection))
}

/// The names of the models the server of `spec` offers (its model name is not needed).
pub fn server_models(spec: &ServerSpec) -> Result<Vec<String>, ModelError> {
    let mut options = OpenAiOptions::new(&spec.base_url, "any");
    options.api_key = spec.api_key.clone();
    OpenAiModel::new(options)?.list_models()
}

/// What asking a server about one of its models found.
pub struct ServerCheck {
    /// The models the server lists.
    pub models: Vec<String>,
    /// The model asked about: the one named, or the first listed when none was.
    pub model: String,
    pub listed: bool,
    /// Which path calls take with it; `None` when it is not listed.
    pub detection: Option<Detection>,
}

/// Lists the server's models and, when the model `spec` names (or, with none named, the
/// first) is among them, asks which path tool calls take with it.
pub fn check_server(spec: &ServerSpec) -> Result<ServerCheck, ModelError> {
    let models = server_models(spec)?;
    let model = match spec.model.trim() {
        "" => models.first().cloned().unwrap_or_default(),
        named => named.to_string(),
    };
    let listed = models.contains(&model);
    let detection = if listed {
        let asked = ServerSpec {
            model: model.clone(),
            calls: CallMode::Auto,
            ..spec.clone()
        };
        Some(open_server(&asked)?.1)
    } else {
        None
    };
    Ok(ServerCheck {
        models,
        model,
        listed,
        detection,
    })
}

/// A local GGUF model, with its calibrations and prompt cache kept in the user's cache.
/// [`open`] boxes it as a [`Model`]; a caller that also needs what only the local engine does
/// (its facts, token counts, the probe, the benchmarks) opens it here and keeps its type.
#[cfg(feature = "llama")]
pub fn open_local(
    spec: &LocalSpec,
    progress: impl Fn(f32) + 'static,
) -> Result<lantern_llama::LocalModel, ModelError> {
    let options = lantern_llama::LoadOptions {
        path: spec.path.clone(),
        context: spec.context,
        threads: spec.threads,
        gpu_layers: 0,
        native_template: spec.calls != CallMode::Text,
    };
    let model = lantern_llama::LocalModel::load(&options, progress).map_err(|e| ModelError(e.0))?;
    if spec.calls == CallMode::Native && model.facts().call_path != CallPath::Native {
        return Err(ModelError(format!(
            "Native tool calls were asked for, but this model cannot take them: {}",
            model.facts().call_path_why
        )));
    }
    let calibrations = lantern_llama::calibration_file(model.facts());
    let model = model.with_calibration_file(calibrations);
    let facts = model.facts();
    // Without a readable model file there is nothing to key a saved state by; the model
    // then evaluates its prompt each time, as it would anyway.
    Ok(
        match lantern_llama::PromptCache::new(
            lantern_core::paths::cache_dir().join("prompt-cache"),
            &facts.path,
            facts.context,
        ) {
            Ok(cache) => model.with_prompt_cache(cache),
            Err(_) => model,
        },
    )
}

#[cfg(feature = "llama")]
fn open_local_boxed(
    spec: &LocalSpec,
    progress: impl Fn(f32) + 'static,
) -> Result<Box<dyn Model>, ModelError> {
    Ok(Box::new(open_local(spec, progress)?))
}

#[cfg(not(feature = "llama"))]
fn open_local_boxed(
    _: &LocalSpec,
    _: impl Fn(f32) + 'static,
) -> Result<Box<dyn Model>, ModelError> {
    Err(ModelError(
        "This build has no local model backend; use a server or a script.".to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lantern_core::model::{CancelToken, Flow, GenerateRequest};

    #[test]
    fn a_script_opens_and_replies() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("script.json");
        std::fs::write(&path, r#"["The answer."]"#).unwrap();
        let mut model = open(
            &ProviderSpec::Scripted { path },
            &GenerationOptions::default(),
            |_| {},
        )
        .unwrap();
        let cancel = CancelToken::new();
        let g = model
            .generate(&GenerateRequest::new(&[], 16, &cancel), &mut |_| {
                Flow::Continue
            })
            .unwrap();
        assert_eq!(g.text, "The answer.");
    }

    #[test]
    fn what_cannot_be_opened_is_said_in_words() {
        let missing = open(
            &ProviderSpec::Scripted {
                path: "/nonexistent/script.json".into(),
            },
            &GenerationOptions::default(),
            |_| {},
        );
        assert!(missing.err().unwrap().0.contains("Cannot read the script"));
        let bad_url = open(
            &ProviderSpec::Server(ServerSpec {
                base_url: "127.0.0.1:8080".into(),
                model: "m".into(),
                api_key: None,
                calls: CallMode::Text,
            }),
            &GenerationOptions::default(),
            |_| {},
        );
        assert!(bad_url
            .err()
            .unwrap()
            .0
            .contains("http://127.0.0.1:8080/v1"));
    }

    #[test]
    fn an_api_key_is_never_serialised() {
        let spec = ProviderSpec::Server(ServerSpec {
            base_url: "http://127.0.0.1:8080/v1".into(),
            model: "m".into(),
            api_key: Some("sk-secret".into()),
            calls: CallMode::Auto,
        });
        let text = serde_json::to_string(&spec).unwrap();
        assert!(!text.contains("sk-secret"), "{text}");
    }
}
