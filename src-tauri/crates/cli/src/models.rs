//! Choosing and loading the model a command runs: a local GGUF through llama.cpp (the default
//! model when none is named), a scripted model, or an OpenAI-compatible server.

use crate::{usage, Failure};
use clap::ValueEnum;
use lantern_core::levers::{changed, GENERATION_LEVERS};
use lantern_core::model::{GenerationOptions, Model, ToolChoice};
#[cfg(feature = "llama")]
use lantern_llama::{default_model_path, LocalModel};
use lantern_providers::{self as providers, CallMode, LocalSpec, ProviderSpec, ServerSpec};
use serde_json::Value;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// Which backend runs the model.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Provider {
    /// In this process: a GGUF file through llama.cpp, or `scripted:FILE`.
    Local,
    /// An OpenAI-compatible server (llama-server, Ollama, LM Studio) at `--base-url`.
    Openai,
}

/// `--server-calls` and `--local-calls`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Calls {
    Auto,
    Native,
    Text,
}

impl From<Calls> for CallMode {
    fn from(calls: Calls) -> Self {
        match calls {
            Calls::Auto => CallMode::Auto,
            Calls::Native => CallMode::Native,
            Calls::Text => CallMode::Text,
        }
    }
}

/// The generation settings the lever flags choose: one `--NAME on|off` flag per lever of
/// [`GENERATION_LEVERS`], its help the lever's purpose and its default the lever's own.
pub struct LeverFlags(pub GenerationOptions);

impl clap::FromArgMatches for LeverFlags {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut options = GenerationOptions::default();
        for lever in GENERATION_LEVERS {
            if let Some(value) = matches.get_one::<String>(lever.name) {
                (lever.set)(&mut options, value == "on");
            }
        }
        Ok(LeverFlags(options))
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Args for LeverFlags {
    fn augment_args(command: clap::Command) -> clap::Command {
        GENERATION_LEVERS.iter().fold(command, |command, lever| {
            command.arg(
                clap::Arg::new(lever.name)
                    .long(lever.name)
                    .value_name("on|off")
                    .value_parser(["on", "off"])
                    .default_value(if lever.default() { "on" } else { "off" })
                    .help(lever.purpose),
            )
        })
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Self::augment_args(command)
    }
}

/// The model options shared by `run`, `eval`, `probe` and `bench-model`. They are resolved to
/// a model only after the other arguments are checked, since loading can take a while.
#[derive(clap::Args)]
pub struct ModelArgs {
    /// Which backend runs the model.
    #[arg(long, value_enum, default_value_t = Provider::Local)]
    pub provider: Provider,
    /// A GGUF file (default: the downloaded SmolLM2-135M-Instruct), or `scripted:FILE` (a JSON
    /// array of replies); with `--provider openai`, the model's name on the server.
    #[arg(long)]
    pub model: Option<String>,
    /// The API root of the OpenAI-compatible server (with `--provider openai`). An API key, if
    /// the server wants one, is read from the LANTERN_API_KEY environment variable.
    #[arg(long, default_value = "http://127.0.0.1:8080/v1")]
    pub base_url: String,
    /// How tool calls travel with `--provider openai`: the server's native tool calls, Lantern's
    /// text protocol, or auto (ask the server which it can do).
    #[arg(long, value_enum, default_value_t = Calls::Auto)]
    pub server_calls: Calls,
    /// How a local model is prompted and calls: natively (its own chat template gets the
    /// tools and it writes its own call form, when the template allows), Lantern's text
    /// protocol, or auto (native when the template allows).
    #[arg(long, value_enum, default_value_t = Calls::Auto)]
    pub local_calls: Calls,
    /// Whether each step may (auto), must (required) or must not (none) be a tool call.
    #[arg(long, default_value = "auto", value_parser = parse_tool_choice)]
    pub tool_choice: ToolChoice,
    /// One `--NAME on|off` flag per lever of the lever table.
    #[command(flatten)]
    pub levers: LeverFlags,
    /// The most tokens a local reasoning model may think before its reply (0: no thinking).
    #[arg(long, default_value_t = GenerationOptions::default().thinking_budget)]
    pub thinking_budget: u32,
    /// Sampling temperature; 0 decodes greedily.
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f32,
    /// Sampling seed.
    #[arg(long, default_value_t = 42)]
    pub seed: u32,
    /// Context size in tokens (local models; default 8192, or less if the model was trained
    /// for less).
    #[arg(long)]
    pub context: Option<u32>,
    /// CPU threads (local models; default: the number of physical cores).
    #[arg(long)]
    pub threads: Option<i32>,
}

/// Reads `--tool-choice` through the core's own serde names, so the two cannot drift apart.
pub fn parse_tool_choice(text: &str) -> Result<ToolChoice, String> {
    serde_json::from_value(Value::String(text.to_string()))
        .map_err(|_| format!("{text:?} is not a tool choice; use auto, required or none"))
}

pub fn tool_choice_name(choice: ToolChoice) -> String {
    serde_json::to_value(choice)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

impl ModelArgs {
    /// A short description for report headings: the model and the settings that matter.
    pub fn describe(&self) -> String {
        let choice = tool_choice_name(self.tool_choice);
        let file_name = |m: &str| {
            PathBuf::from(m)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| m.to_string())
        };
        match (self.provider, self.model.as_deref()) {
            (Provider::Openai, model) => {
                format!(
                    "{} at {}, tool choice {choice}",
                    model.unwrap_or("?"),
                    self.base_url
                )
            }
            (Provider::Local, Some(spec)) if spec.starts_with("scripted:") => {
                format!(
                    "scripted:{}, tool choice {choice}",
                    file_name(&spec["scripted:".len()..])
                )
            }
            (Provider::Local, model) => {
                let options = &self.levers.0;
                let grammar = match options.grammar {
                    true => std::iter::once("grammar on")
                        .chain(changed(GENERATION_LEVERS, options))
                        .collect::<Vec<_>>()
                        .join(", "),
                    false => "grammar off".to_string(),
                };
                let model = model.map_or_else(|| DEFAULT_MODEL_FILE.to_string(), file_name);
                format!("{model}, tool choice {choice}, {grammar}")
            }
        }
    }

    /// The generation settings these options ask for.
    fn generation(&self) -> GenerationOptions {
        GenerationOptions {
            thinking_budget: self.thinking_budget,
            temperature: self.temperature,
            seed: self.seed,
            ..self.levers.0
        }
    }

    /// The server these options name, with `--provider openai`.
    pub fn server_spec(&self) -> Option<Result<ServerSpec, Failure>> {
        (self.provider == Provider::Openai).then(|| match self.spec()? {
            ProviderSpec::Server(spec) => Ok(spec),
            _ => unreachable!("--provider openai names a server"),
        })
    }

    /// Which model these options name, checked before anything is loaded.
    fn spec(&self) -> Result<ProviderSpec, Failure> {
        match (self.provider, self.model.as_deref()) {
            (Provider::Openai, None) => Err(usage(format!(
                "--provider openai needs --model NAME: the model's name on the server at {}",
                self.base_url
            ))),
            (Provider::Openai, Some(name)) => Ok(ProviderSpec::Server(ServerSpec {
                base_url: self.base_url.clone(),
                model: name.to_string(),
                api_key: std::env::var("LANTERN_API_KEY")
                    .ok()
                    .filter(|key| !key.is_empty()),
                calls: self.server_calls.into(),
            })),
            (Provider::Local, Some(spec)) if spec.starts_with("scripted:") => {
                Ok(ProviderSpec::Scripted {
                    path: PathBuf::from(&spec["scripted:".len()..]),
                })
            }
            (Provider::Local, _) => self.local_spec().map(ProviderSpec::Local),
        }
    }

    /// The model the arguments name: a server's (a server that is not running is reported in
    /// words: when it is asked which path calls take, or else by the first step), a local GGUF
    /// (see [`Self::load_local`]) or a script.
    pub fn load(&self) -> Result<Box<dyn Model>, Failure> {
        let spec = self.spec()?;
        if let ProviderSpec::Server(server) = &spec {
            let (mut model, detection) = providers::open_server(server).map_err(|e| Failure {
                code: 1,
                message: e.0,
            })?;
            eprintln!(
                "server: {} at {}; tool calls: {} ({})",
                server.model,
                server.base_url,
                match detection.path {
                    lantern_core::model::CallPath::Native => "native",
                    lantern_core::model::CallPath::Text => "text protocol",
                },
                detection.why
            );
            model.configure(&self.generation());
            return Ok(Box::new(model));
        }
        #[cfg(feature = "llama")]
        if let ProviderSpec::Local(local) = &spec {
            return Ok(Box::new(self.open_local(local)?));
        }
        // A script (a local spec without the llama backend failed in `spec` already).
        providers::open(&spec, &self.generation(), loading_progress()).map_err(|e| usage(e.0))
    }

    /// A local GGUF model, for what only the local engine does (`probe`, `bench-model`).
    #[cfg(feature = "llama")]
    pub fn load_local(&self) -> Result<LocalModel, Failure> {
        if self.provider == Provider::Openai
            || self
                .model
                .as_deref()
                .is_some_and(|m| m.starts_with("scripted:"))
        {
            return Err(usage(
                "this command needs a local GGUF model (--model PATH, or none for the default)",
            ));
        }
        self.open_local(&self.local_spec()?)
    }

    /// The local GGUF `spec` names, configured, its facts reported on stderr.
    #[cfg(feature = "llama")]
    fn open_local(&self, spec: &LocalSpec) -> Result<LocalModel, Failure> {
        let mut model = providers::open_local(spec, loading_progress()).map_err(|e| Failure {
            code: 1,
            message: e.0,
        })?;
        model.configure(&self.generation());
        report_loaded(&model);
        Ok(model)
    }

    /// `--model PATH`, or the default model once it is downloaded.
    fn local_spec(&self) -> Result<LocalSpec, Failure> {
        #[cfg(not(feature = "llama"))]
        return Err(no_local_backend());
        #[cfg(feature = "llama")]
        {
            let path = match &self.model {
                Some(p) => PathBuf::from(p),
                None => {
                    let path = default_model_path();
                    if !path.exists() {
                        return Err(usage(format!(
                            "the default model is not downloaded yet ({}); run `bash scripts/fetch-model.sh` (npm start does it), or pass --model PATH",
                            path.display()
                        )));
                    }
                    path
                }
            };
            Ok(LocalSpec {
                path,
                context: self.context,
                threads: self.threads,
                calls: self.local_calls.into(),
            })
        }
    }
}

/// Shows how far a local model's file has been read, on a terminal only.
fn loading_progress() -> impl Fn(f32) + 'static {
    let show = std::io::stderr().is_terminal();
    move |p| {
        if show {
            eprint!("\rloading model {:>3.0}%", p * 100.0);
            let _ = std::io::stderr().flush();
        }
    }
}

#[cfg(feature = "llama")]
fn report_loaded(model: &LocalModel) {
    if std::io::stderr().is_terminal() {
        eprint!("\r");
    }
    let facts = model.facts();
    eprintln!(
        "model: {} ({}, {:.0}M parameters, chat template: {}, context {}, {} threads) loaded in {:.2} s",
        facts.name,
        facts.architecture,
        facts.parameters as f64 / 1e6,
        facts.chat_template,
        facts.context,
        facts.threads,
        facts.load_seconds
    );
}

#[cfg(feature = "llama")]
use lantern_llama::DEFAULT_MODEL_FILE;
/// The default model's file name, for report headings.
#[cfg(not(feature = "llama"))]
const DEFAULT_MODEL_FILE: &str = "the default model";

/// The error of a command that needs the local backend in a build without it.
#[cfg(not(feature = "llama"))]
pub fn no_local_backend() -> Failure {
    usage("this lantern was built without the local model backend (--no-default-features); build it with the default features to load a GGUF, or use --provider openai or --model scripted:FILE")
}
