//! `lantern`: the headless command line over lantern-core, for scripting, tests and benchmarks.
//! Every command prints JSON on stdout (or readable text where a person is the reader) and
//! exits 0 on success, 1 when a tool reports an error, 2 on a usage error.

/// `print!` that ends the program quietly when the reader has gone (`lantern … | head`), as
/// other command-line tools do, instead of panicking on the closed pipe.
macro_rules! out {
    ($($arg:tt)*) => { $crate::write_stdout(format_args!($($arg)*)) };
}

/// `println!` with [`out!`]'s handling of a closed pipe.
macro_rules! outln {
    () => { $crate::write_stdout(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::write_stdout(format_args!("{}\n", format_args!($($arg)*))) };
}

mod agent_run;
mod confirm;
mod evaluate;
mod index_command;
mod mcp_commands;
mod model_commands;
mod models;
mod render;
mod state_commands;

use agent_run::{agent_run, tool};
use clap::{Parser, Subcommand, ValueEnum};
use evaluate::EvalArgs;
use lantern_core::agent::AgentConfig;
use lantern_core::project_rules::ProjectRules;
use lantern_core::protocol::{interpret, parse};
use lantern_core::sandbox::Workspace;
use lantern_core::toolbox::Toolbox;
use model_commands::{bench_model, list_models, probe};
use models::ModelArgs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};

#[derive(Parser)]
#[command(
    name = "lantern",
    version,
    about = "A local-first coding assistant whose every tool call is visible, validated and confined to your project folder."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the tool specs (name, description, risk, input_schema) as a JSON array: the
    /// built-in tools and those of the configured MCP servers (`lantern mcp`).
    Tools {
        /// Also the tools of this project's approved MCP servers.
        #[arg(long)]
        workspace: Option<PathBuf>,
    },
    /// Tools from MCP servers: list, add, remove and approve servers, print their tools.
    Mcp {
        #[command(subcommand)]
        action: mcp_commands::McpAction,
    },
    /// Build, or bring up to date, the code index of a project (what its Rust, Python,
    /// JavaScript, TypeScript and Go files define and use); progress on stderr. Tools such as
    /// find_definition do this themselves; this shows what it holds and what it costs.
    Index {
        /// The project folder.
        #[arg(long)]
        workspace: PathBuf,
        /// Build it from nothing instead of from the saved index.
        #[arg(long)]
        rebuild: bool,
        /// Print the map of the project's code a server model is given, in at most this many
        /// characters (its most used definitions by file; a server model's default when left
        /// out), instead of the figures.
        #[arg(long, value_name = "CHARACTERS", num_args = 0..=1)]
        map: Option<Option<usize>>,
        /// Print the figures as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the system prompt the model is given.
    Prompt {
        /// The project folder the prompt is for: its own instructions (`AGENTS.md`, or else
        /// `CLAUDE.md`, `.cursorrules`, `.github/copilot-instructions.md`) follow the prompt.
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// Print the prompt a turn on this message is given: with many tools from MCP
        /// servers, only those that fit the message are listed.
        #[arg(long)]
        message: Option<String>,
        /// Also print the map of the folder's code a conversation opens with, in at most this
        /// many characters (a server model's default when left out), after its instructions.
        #[arg(long, value_name = "CHARACTERS", num_args = 0..=1, requires = "workspace")]
        map: Option<Option<usize>>,
        /// Also say on stderr how many tokens each part printed is for the default model.
        #[arg(long)]
        tokens: bool,
    },
    /// Read raw model output on stdin and print what it means as one JSON object.
    Parse,
    /// Run one tool through validation, sandbox and policy; print the structured result.
    Tool {
        /// The tool's name, e.g. read_file (see `lantern tools`).
        name: String,
        /// The project folder; every path the tools take is confined to it.
        #[arg(long)]
        workspace: PathBuf,
        /// The arguments as a JSON object, or `-` to read them from stdin.
        #[arg(long, default_value = "{}")]
        args: String,
        /// Approve the call if the policy asks.
        #[arg(long, conflicts_with = "deny")]
        yes: bool,
        /// Refuse the call if the policy asks.
        #[arg(long)]
        deny: bool,
    },
    /// Run the agent on one message.
    Run {
        /// The project folder; every path the tools take is confined to it.
        #[arg(long)]
        workspace: PathBuf,
        #[command(flatten)]
        model: ModelArgs,
        /// The user's message.
        #[arg(long)]
        prompt: String,
        /// How calls that need approval are answered.
        #[arg(long, value_enum, default_value_t = Approve::Ask)]
        approve: Approve,
        /// Print one JSON event per line.
        #[arg(long)]
        json: bool,
        /// Most model replies for this message.
        #[arg(long, default_value_t = 10)]
        max_steps: usize,
        /// Where to save the transcript (JSON lines). Defaults to Lantern's data folder.
        #[arg(long)]
        transcript: Option<PathBuf>,
        /// Take up the conversation a saved transcript records: its history is given to the
        /// model before the message, and the new transcript holds the whole conversation.
        #[arg(long = "continue", value_name = "TRANSCRIPT")]
        continue_from: Option<PathBuf>,
    },
    /// Print a saved transcript again.
    Replay {
        /// The transcript file (JSON lines, as `run --transcript` writes).
        file: PathBuf,
        /// Print the saved events as JSON lines instead of the rendered conversation.
        #[arg(long)]
        json: bool,
    },
    /// Undo a write (the newest one, or the checkpoint given). Refuses if the file was changed
    /// after that write.
    Undo {
        /// The project folder whose writes are recorded.
        #[arg(long)]
        workspace: PathBuf,
        /// The checkpoint's id (as `checkpoints` lists it); the newest write when left out.
        checkpoint: Option<String>,
    },
    /// List the writes recorded for a workspace, oldest first.
    Checkpoints {
        /// The project folder whose writes are recorded.
        #[arg(long)]
        workspace: PathBuf,
    },
    /// List or revoke saved ("always") grants.
    Policy {
        #[command(subcommand)]
        action: PolicyAction,
    },
    /// List the GGUF models in Lantern's model folder.
    Models,
    /// Load a local model and report whether it suits Lantern: model facts, prompt size,
    /// the calibrated call decision, three quick tasks, speed. With `--provider openai`: the
    /// server's models and whether tool calls go natively or by the text protocol, and why.
    Probe {
        #[command(flatten)]
        model: ModelArgs,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Measure a local model's speed: prompt processing and generation (as llama-bench does),
    /// grammar on vs off, and a follow-up step with and without KV-cache reuse. Prints JSON.
    BenchModel {
        #[command(flatten)]
        model: ModelArgs,
        /// Prompt tokens for the prompt-processing test.
        #[arg(long, default_value_t = 256)]
        prompt_tokens: usize,
        /// Tokens for the generation test.
        #[arg(long, default_value_t = 128)]
        gen_tokens: usize,
        /// Repetitions; the median is reported.
        #[arg(long, default_value_t = 3)]
        repetitions: usize,
    },
    /// Measure how well a model uses the tools: run every task of an evaluation set, each on a
    /// fresh copy of its fixture with every call approved, and print the scores per category as
    /// markdown (or JSON).
    Eval(EvalArgs),
}

#[derive(Subcommand)]
enum PolicyAction {
    /// Print the saved grants of a workspace as JSON.
    List {
        /// The project folder the grants were saved for.
        #[arg(long)]
        workspace: PathBuf,
    },
    /// Remove a saved grant by its id (as `list` shows it).
    Revoke {
        /// The project folder the grant was saved for.
        #[arg(long)]
        workspace: PathBuf,
        /// The grant's id.
        id: String,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Approve {
    /// Ask on the terminal; without one, refuse.
    Ask,
    /// Approve every call the policy asks about.
    All,
    /// Refuse every call the policy asks about.
    None,
}

/// A failure to report: a message and the exit code.
struct Failure {
    code: u8,
    message: String,
}

fn usage(message: impl Into<String>) -> Failure {
    Failure {
        code: 2,
        message: message.into(),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command, &toolbox()) {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            eprintln!("lantern: {}", render::visible(&failure.message, true));
            ExitCode::from(failure.code)
        }
    }
}

fn open_workspace(dir: &Path) -> Result<Workspace, Failure> {
    Workspace::open(dir).map_err(|e| {
        usage(format!(
            "cannot open workspace {}: {}",
            dir.display(),
            e.message
        ))
    })
}

/// Writes and flushes standard output. A reader that stopped early is not a failure: the
/// program ends with success; any other write error ends it with a message.
fn write_stdout(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("lantern: cannot write the output: {e}");
        std::process::exit(1);
    }
}

/// The size a `--map` option asks for: the one given, or a server model's default when the
/// option stands alone.
fn map_budget(map: Option<Option<usize>>) -> Option<usize> {
    map.map(|chars| chars.unwrap_or(lantern_core::agent::SERVER_REPO_MAP))
}

/// `lantern prompt`: the system prompt, then what the agent gives a conversation on the
/// folder at its start: the project's own instructions and, when asked, the map of its code.
fn prompt(
    toolbox: &Arc<Toolbox>,
    workspace: Option<&Path>,
    message: Option<&str>,
    map: Option<usize>,
    tokens: bool,
) -> Result<u8, Failure> {
    let offer = message.and_then(|m| {
        let asked = lantern_core::question::Question::read(m);
        lantern_core::agent::offer_for(toolbox, &asked, AgentConfig::default().max_remote_tools)
    });
    let (system, offered) = match &offer {
        Some(offer) => (offer.system_prompt.as_str(), offer.specs.len()),
        None => (toolbox.system_prompt(), toolbox.specs().len()),
    };
    let mut parts = vec![("the system prompt", system.to_string())];
    if let Some(dir) = workspace {
        let ws = open_workspace(dir)?;
        if let Some(rules) = ProjectRules::of(&ws) {
            parts.push(("the project's instructions", rules.message()));
        }
        if let Some(budget) = map {
            let saved = lantern_core::code_index::saved_index_path(ws.root());
            let project = Arc::new(lantern_core::code_index::ProjectIndex::saved_at(saved));
            let _shown = index_command::ShownProgress::of(Arc::clone(&project));
            let map = lantern_core::agent::opening_code_map(&ws, &project, budget);
            parts.push(("the map of its code", map));
        }
    }
    out!("{}", parts[0].1);
    for (_, text) in parts.iter().skip(1).filter(|(_, text)| !text.is_empty()) {
        out!("\n\n{text}\n");
    }
    if tokens {
        let texts: Vec<&str> = parts.iter().map(|(_, text)| text.as_str()).collect();
        let counts = model_commands::prompt_tokens(&texts)?;
        let each: Vec<String> = parts
            .iter()
            .zip(&counts)
            .map(|((what, _), count)| format!("{what} {count}"))
            .collect();
        eprintln!(
            "lantern: tokens for the default model: {} ({offered} of {} tools listed)",
            each.join(", "),
            toolbox.specs().len()
        );
    }
    Ok(0)
}

/// `lantern parse`: raw model output on stdin, and what it means.
fn parse_stdin(toolbox: &Arc<Toolbox>) -> Result<u8, Failure> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| usage(format!("could not read stdin as UTF-8 text: {e}")))?;
    print_json(&interpret(&parse(&text), toolbox.registry()));
    Ok(0)
}

/// The composition root of this process: every command sees these tools and this prompt.
fn toolbox() -> Arc<Toolbox> {
    static TOOLBOX: OnceLock<Arc<Toolbox>> = OnceLock::new();
    TOOLBOX
        .get_or_init(|| Arc::new(Toolbox::standard()))
        .clone()
}

fn print_json(value: &impl serde::Serialize) {
    outln!(
        "{}",
        serde_json::to_string_pretty(value).expect("output serialises")
    );
}

fn run(command: Command, toolbox: &Arc<Toolbox>) -> Result<u8, Failure> {
    match command {
        Command::Tools { workspace } => {
            let tools = mcp_commands::Tools::start(workspace.as_deref())?;
            print_json(&tools.toolbox.specs());
            Ok(0)
        }
        Command::Mcp { action } => mcp_commands::mcp(action),
        Command::Index {
            workspace,
            rebuild,
            map,
            json,
        } => index_command::index(&workspace, rebuild, map_budget(map), json),
        Command::Prompt {
            workspace,
            message,
            map,
            tokens,
        } => {
            let tools = mcp_commands::Tools::start(workspace.as_deref())?;
            prompt(
                &tools.toolbox,
                workspace.as_deref(),
                message.as_deref(),
                map_budget(map),
                tokens,
            )
        }
        Command::Parse => parse_stdin(toolbox),
        Command::Tool {
            name,
            workspace,
            args,
            yes,
            deny,
        } => {
            let tools = mcp_commands::Tools::start(Some(&workspace))?;
            tool(&tools.toolbox, &name, &workspace, &args, yes, deny)
        }
        Command::Run {
            workspace,
            model,
            prompt,
            approve,
            json,
            max_steps,
            transcript,
            continue_from,
        } => agent_run(
            &workspace,
            &model,
            &prompt,
            approve,
            json,
            max_steps,
            agent_run::Transcripts {
                save: transcript,
                continue_from,
            },
        ),
        Command::Replay { file, json } => state_commands::replay(&file, json),
        Command::Undo {
            workspace,
            checkpoint,
        } => state_commands::undo(&workspace, checkpoint.as_deref()),
        Command::Checkpoints { workspace } => state_commands::checkpoints(&workspace),
        Command::Policy { action } => state_commands::policy(action),
        Command::Models => list_models(),
        Command::Probe { model, json } => probe(toolbox, &model, json),
        Command::BenchModel {
            model,
            prompt_tokens,
            gen_tokens,
            repetitions,
        } => bench_model(toolbox, &model, prompt_tokens, gen_tokens, repetitions),
        Command::Eval(args) => evaluate::eval_command(args),
    }
}
