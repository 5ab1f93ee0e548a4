//! `lantern`: the headless command line over lantern-core, for scripting, tests and benchmarks.
//! Every command prints JSON on stdout (or readable text where a person is the reader) and
//! exits 0 on success, 1 when a tool reports an error, 2 on a usage error.

mod confirm;
mod models;
mod render;

use clap::{Parser, Subcommand, ValueEnum};
use lantern_core::agent::{AgentConfig, Answer, Confirmer, FixedAnswer, Session, SessionOptions};
use lantern_core::checkpoint::{CheckpointStore, UndoConflict, Version};
use lantern_core::eval;
use lantern_core::event::{load_transcript, Event, FinishedReason, TranscriptWriter};
use lantern_core::model::CancelToken;
use lantern_core::paths;
use lantern_core::policy::PolicyStore;
use lantern_core::prompt::render_system_prompt;
use lantern_core::protocol::{interpret, parse};
use lantern_core::sandbox::Workspace;
use lantern_core::tools::ToolRegistry;
use models::ModelArgs;
use serde_json::{json, Value};
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
    /// Print the tool specs (name, description, risk, input_schema) as a JSON array.
    Tools,
    /// Print the system prompt the model is given.
    Prompt {
        /// The project folder the prompt is for (the prompt is the same for every project).
        #[arg(long)]
        workspace: Option<PathBuf>,
    },
    /// Read raw model output on stdin and print what it means as one JSON object.
    Parse,
    /// Run one tool through validation, sandbox and policy; print the structured result.
    Tool {
        /// The tool's name, e.g. read_file (see `lantern tools`).
        name: String,
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
    },
    /// Print a saved transcript again.
    Replay {
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Undo a write (the newest one, or the checkpoint given). Refuses if the file was changed
    /// after that write.
    Undo {
        #[arg(long)]
        workspace: PathBuf,
        checkpoint: Option<String>,
    },
    /// List the writes recorded for a workspace, oldest first.
    Checkpoints {
        #[arg(long)]
        workspace: PathBuf,
    },
    /// List or revoke saved ("always") grants.
    Policy {
        #[command(subcommand)]
        action: PolicyAction,
    },
    /// Measure how well a model uses the tools: run every task of an evaluation set, each on a
    /// fresh copy of its fixture with every call approved, and print the scores as markdown.
    /// List the GGUF models in Lantern's model folder.
    Models,
    /// Load a local model and report whether it suits Lantern: model facts, prompt size,
    /// the calibrated call decision, three quick tasks, speed.
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
    Eval {
        /// The tasks: a JSON array (see tests/eval/tasks.json).
        #[arg(long)]
        tasks: PathBuf,
        /// The folder holding the fixture workspaces the tasks name.
        #[arg(long)]
        fixtures: PathBuf,
        /// The model; it is loaded once for all tasks.
        #[command(flatten)]
        model: ModelArgs,
        /// Most model replies per task.
        #[arg(long, default_value_t = AgentConfig::default().max_steps)]
        max_steps: usize,
        /// The heading of the results. Defaults to the model and the tool choice.
        #[arg(long)]
        label: Option<String>,
        /// Append the markdown results to this file.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Print the outcomes and the summary as JSON instead of the markdown table.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum PolicyAction {
    /// Print the saved grants of a workspace as JSON.
    List {
        #[arg(long)]
        workspace: PathBuf,
    },
    /// Remove a saved grant by its id (as `list` shows it).
    Revoke {
        #[arg(long)]
        workspace: PathBuf,
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
    match run(cli.command) {
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

fn print_json(value: &impl serde::Serialize) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).expect("output serialises")
    );
}

fn run(command: Command) -> Result<u8, Failure> {
    match command {
        Command::Tools => {
            let registry = ToolRegistry::standard();
            print_json(&registry.specs());
            Ok(0)
        }
        Command::Prompt { workspace } => {
            // The prompt names no project, so it is the same everywhere; a workspace given is
            // still checked, as every command that takes one does.
            if let Some(dir) = workspace {
                open_workspace(&dir)?;
            }
            print!("{}", system_prompt());
            Ok(0)
        }
        Command::Parse => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| usage(format!("could not read stdin as UTF-8 text: {e}")))?;
            print_json(&interpret(&parse(&text), &ToolRegistry::standard()));
            Ok(0)
        }
        Command::Tool {
            name,
            workspace,
            args,
            yes,
            deny,
        } => tool(&name, &workspace, &args, yes, deny),
        Command::Run {
            workspace,
            model,
            prompt,
            approve,
            json,
            max_steps,
            transcript,
        } => agent_run(
            &workspace, &model, &prompt, approve, json, max_steps, transcript,
        ),
        Command::Replay { file, json } => {
            let (events, bad) = load_transcript(&file)
                .map_err(|e| usage(format!("cannot read transcript {}: {e}", file.display())))?;
            let mut renderer = render::Human::new();
            for event in &events {
                if json {
                    println!(
                        "{}",
                        serde_json::to_string(event).expect("events serialise")
                    );
                } else {
                    renderer.event(event);
                }
            }
            if !bad.is_empty() {
                eprintln!(
                    "lantern: skipped unreadable lines {bad:?} of {}",
                    file.display()
                );
            }
            Ok(0)
        }
        Command::Undo {
            workspace,
            checkpoint,
        } => {
            let ws = open_workspace(&workspace)?;
            let store = CheckpointStore::for_workspace(&paths::data_dir(), &ws);
            match store.undo(&ws, checkpoint.as_deref()) {
                Ok(outcome) => {
                    print_json(&outcome);
                    Ok(0)
                }
                Err(e) => Err(Failure {
                    code: 1,
                    message: match UndoConflict::from_error(&e) {
                        Some(conflict) => format!("{}\n\n{}", e.message, three_way_view(&conflict)),
                        None => e.message,
                    },
                }),
            }
        }
        Command::Checkpoints { workspace } => {
            let ws = open_workspace(&workspace)?;
            let store = CheckpointStore::for_workspace(&paths::data_dir(), &ws);
            let list = store.list().map_err(|e| Failure {
                code: 1,
                message: e.message,
            })?;
            print_json(&list);
            Ok(0)
        }
        Command::Policy { action } => match action {
            PolicyAction::List { workspace } => {
                let ws = open_workspace(&workspace)?;
                let store = PolicyStore::for_workspace(&paths::config_dir(), ws.root());
                let loaded = store.load();
                if let Some(w) = &loaded.warning {
                    eprintln!("lantern: {w}");
                }
                let grants: Vec<Value> = loaded
                    .grants
                    .iter()
                    .map(|g| json!({"id": g.id, "tool": g.tool, "scope": g.scope, "effect": g.effect, "description": g.describe()}))
                    .collect();
                print_json(&grants);
                Ok(0)
            }
            PolicyAction::Revoke { workspace, id } => {
                let ws = open_workspace(&workspace)?;
                let store = PolicyStore::for_workspace(&paths::config_dir(), ws.root());
                let removed = store.revoke(&id).map_err(|e| Failure {
                    code: 1,
                    message: e.message,
                })?;
                eprintln!("lantern: revoked: {}", removed.describe());
                Ok(0)
            }
        },
        Command::Models => list_models(),
        Command::Probe { model, json } => probe(&model, json),
        Command::BenchModel {
            model,
            prompt_tokens,
            gen_tokens,
            repetitions,
        } => bench_model(&model, prompt_tokens, gen_tokens, repetitions),
        Command::Eval {
            tasks,
            fixtures,
            model,
            max_steps,
            label,
            out,
            json,
        } => {
            let config = AgentConfig {
                tool_choice: model.tool_choice,
                max_steps,
                ..AgentConfig::default()
            };
            let label = label.unwrap_or_else(|| model.describe());
            evaluate(
                &tasks,
                &fixtures,
                &model,
                &config,
                &label,
                out.as_deref(),
                json,
            )
        }
    }
}

fn tool(name: &str, workspace: &Path, args: &str, yes: bool, deny: bool) -> Result<u8, Failure> {
    let ws = open_workspace(workspace)?;
    let args_from_stdin = args == "-";
    let text = if args_from_stdin {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| usage(format!("could not read the arguments from stdin: {e}")))?;
        text
    } else {
        args.to_string()
    };
    let args: Value = serde_json::from_str(&text).map_err(|e| {
        usage(format!(
            "--args is not valid JSON ({e}); give an object such as '{{\"path\": \"README.md\"}}'"
        ))
    })?;
    if !args.is_object() {
        return Err(usage(
            "--args must be a JSON object, e.g. '{\"path\": \"README.md\"}'",
        ));
    }
    let options = SessionOptions::persistent(&ws);
    let mut session = Session::new(ws, options);
    if session.registry().spec(name).is_none() {
        return Err(usage(format!(
            "unknown tool \"{name}\"; the tools are: {}",
            session.registry().names().join(", ")
        )));
    }
    if let Some(w) = &session.policy_warning {
        eprintln!("lantern: {w}");
    }
    let mut confirmer = pick_confirmer(
        yes,
        deny,
        !args_from_stdin && std::io::stdin().is_terminal(),
    );
    let outcome = session.run_call(name, args, confirmer.as_mut(), &mut |_| {});
    let result = outcome.into_result();
    print_json(&result);
    Ok(if result.success { 0 } else { 1 })
}

/// A refused undo's three versions for a person: where each is, and what changed between
/// them.
fn three_way_view(conflict: &UndoConflict) -> String {
    let describe = |version: &Version| match (&version.file, version.bytes) {
        (Some(file), Some(bytes)) => format!("{bytes} bytes, {}", file.display()),
        (Some(file), None) => file.display().to_string(),
        _ => "did not exist".to_string(),
    };
    let mut view = format!(
        "Three versions of {}:\n  before the write:  {}\n  the write's own:   {}\n  now:               {}\n",
        conflict.path,
        describe(&conflict.before),
        describe(&conflict.agent),
        if conflict.now.exists { describe(&conflict.now) } else { "does not exist".to_string() },
    );
    for (title, diff) in [
        (
            "What the write changed (before → the write's own)",
            &conflict.agent_changes,
        ),
        (
            "What changed since (the write's own → now)",
            &conflict.later_changes,
        ),
    ] {
        match diff {
            Some(diff) => view.push_str(&format!("\n{title}:\n{diff}")),
            None => view.push_str(&format!(
                "\n{title}: not shown (binary or over 1 MiB); compare the files above\n"
            )),
        }
    }
    view.push_str("\nNothing was changed. Merge by hand if you want parts of both.");
    view
}

/// Trait objects for the three ways a call can be approved.
fn pick_confirmer(yes: bool, deny: bool, terminal: bool) -> Box<dyn Confirmer> {
    if yes {
        Box::new(FixedAnswer(Answer::AllowOnce))
    } else if deny {
        Box::new(FixedAnswer(Answer::Unanswerable {
            reason: "refused with --deny".to_string(),
        }))
    } else if terminal {
        Box::new(confirm::Terminal)
    } else {
        Box::new(FixedAnswer(Answer::Unanswerable {
            reason: "this call needs approval and there is no terminal to ask on; pass --yes (or --approve all) to allow it".to_string(),
        }))
    }
}

fn agent_run(
    workspace: &Path,
    model_args: &ModelArgs,
    prompt: &str,
    approve: Approve,
    json: bool,
    max_steps: usize,
    transcript: Option<PathBuf>,
) -> Result<u8, Failure> {
    if max_steps == 0 {
        return Err(usage("--max-steps must be at least 1"));
    }
    let ws = open_workspace(workspace)?;
    let mut model = model_args.load()?;
    let transcript_path = transcript.unwrap_or_else(|| paths::new_transcript_path(ws.root()));
    let mut writer = TranscriptWriter::create(&transcript_path).map_err(|e| {
        usage(format!(
            "cannot write the transcript {}: {e}",
            transcript_path.display()
        ))
    })?;
    let mut options = SessionOptions::persistent(&ws);
    options.config.max_steps = max_steps;
    options.config.tool_choice = model_args.tool_choice;
    let mut session = Session::new(ws, options);
    if let Some(w) = &session.policy_warning {
        eprintln!("lantern: {w}");
    }
    let mut confirmer: Box<dyn Confirmer> = match approve {
        Approve::All => pick_confirmer(true, false, false),
        Approve::None => Box::new(FixedAnswer(Answer::Unanswerable {
            reason: "calls that need approval are refused in this run (--approve none)".to_string(),
        })),
        Approve::Ask => pick_confirmer(false, false, std::io::stdin().is_terminal()),
    };
    let mut human = render::Human::new();
    let mut write_failed = false;
    let finished = session.send(
        prompt,
        model.as_mut(),
        confirmer.as_mut(),
        &mut |event: &Event| {
            if writer.write(event).is_err() && !write_failed {
                write_failed = true;
                eprintln!("lantern: could not write the transcript; carrying on without it");
            }
            if json {
                println!(
                    "{}",
                    serde_json::to_string(event).expect("events serialise")
                );
            } else {
                human.event(event);
            }
        },
        &CancelToken::new(),
    );
    if !json {
        eprintln!("transcript: {}", transcript_path.display());
    }
    Ok(match finished {
        Event::TurnFinished {
            reason: FinishedReason::Answer,
            ..
        } => 0,
        _ => 1,
    })
}

/// `lantern eval`: every task in order, a progress line per task on stderr, then the report.
/// Exits 0 once every task has run, whatever the scores; bad input is a usage error found
/// before the model is loaded.
fn evaluate(
    tasks_file: &Path,
    fixtures: &Path,
    model: &ModelArgs,
    config: &AgentConfig,
    label: &str,
    out: Option<&Path>,
    json: bool,
) -> Result<u8, Failure> {
    if config.max_steps == 0 {
        return Err(usage("--max-steps must be at least 1"));
    }
    let tasks = eval::load_tasks(tasks_file).map_err(usage)?;
    if tasks.is_empty() {
        return Err(usage(format!("{} holds no tasks", tasks_file.display())));
    }
    let missing: Vec<&str> = tasks
        .iter()
        .map(|t| t.fixture.as_str())
        .filter(|name| !fixtures.join(name).is_dir())
        .collect();
    if let Some(name) = missing.first() {
        return Err(usage(format!(
            "fixture {name:?} is not a folder in {}",
            fixtures.display()
        )));
    }
    let mut model = model.load()?;
    let mut outcomes = Vec::with_capacity(tasks.len());
    for (i, task) in tasks.iter().enumerate() {
        eprint!("[{}/{}] {} … ", i + 1, tasks.len(), task.id);
        let _ = std::io::stderr().flush();
        let outcome = eval::run_task(task, fixtures, model.as_mut(), config);
        eprintln!("{} {:.1} s", progress_verdict(&outcome), outcome.seconds);
        outcomes.push(outcome);
    }
    let summary = eval::summarize(&outcomes);
    let markdown = eval::markdown_table(label, &summary, &outcomes);
    if json {
        print_json(&json!({"label": label, "summary": summary, "outcomes": outcomes}));
    } else {
        print!("{markdown}");
    }
    if let Some(path) = out {
        append_report(path, &markdown).map_err(|e| Failure {
            code: 1,
            message: format!("cannot append the report to {}: {e}", path.display()),
        })?;
    }
    Ok(0)
}

/// `ok`, or `FAIL` with what went wrong first, for the progress line.
fn progress_verdict(outcome: &eval::TaskOutcome) -> String {
    if outcome.success {
        return "ok".to_string();
    }
    let why = if let Some(error) = &outcome.error {
        error.clone()
    } else if !outcome.decision_correct() {
        if outcome.needs_tool {
            "answered without a tool".to_string()
        } else {
            "called a tool when none was needed".to_string()
        }
    } else if outcome.first_call_valid == Some(false) {
        "invalid first call".to_string()
    } else if outcome.right_tool == Some(false) {
        "wrong first tool".to_string()
    } else if outcome.finish_reason != Some(FinishedReason::Answer) {
        "no final answer".to_string()
    } else {
        "criteria not met".to_string()
    };
    format!("FAIL ({why})")
}

/// Appends the markdown after a blank line, creating the file if needed.
fn append_report(path: &Path, markdown: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let separator = if file.metadata()?.len() > 0 { "\n" } else { "" };
    write!(file, "{separator}{markdown}")
}

/// The system prompt, as sessions render it.
fn system_prompt() -> String {
    render_system_prompt(&ToolRegistry::standard().specs())
}

#[cfg(feature = "llama")]
fn list_models() -> Result<u8, Failure> {
    let default = lantern_llama::default_model_path();
    let models: Vec<Value> = lantern_llama::cached_models()
        .into_iter()
        .map(|(path, size)| json!({"path": path, "size_bytes": size, "default": path == default}))
        .collect();
    print_json(&json!({"folder": lantern_llama::models_dir(), "models": models}));
    Ok(0)
}

#[cfg(not(feature = "llama"))]
fn list_models() -> Result<u8, Failure> {
    Err(models::no_local_backend())
}

#[cfg(not(feature = "llama"))]
fn probe(_: &ModelArgs, _: bool) -> Result<u8, Failure> {
    Err(models::no_local_backend())
}

#[cfg(not(feature = "llama"))]
fn bench_model(_: &ModelArgs, _: usize, _: usize, _: usize) -> Result<u8, Failure> {
    Err(models::no_local_backend())
}

#[cfg(feature = "llama")]
fn probe(args: &ModelArgs, json: bool) -> Result<u8, Failure> {
    let mut model = args.load_local()?;
    let report =
        lantern_llama::probe::probe(&mut model, &system_prompt()).map_err(|e| Failure {
            code: 1,
            message: e,
        })?;
    if json {
        print_json(&report);
        return Ok(0);
    }
    let f = &report.facts;
    println!(
        "{} — {}, {:.0}M parameters, {:.0} MiB, trained context {}",
        f.name,
        f.architecture,
        f.parameters as f64 / 1e6,
        f.size_bytes as f64 / 1048576.0,
        f.trained_context
    );
    println!("chat template: {}", f.chat_template);
    println!(
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
        println!(
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
        println!(
            "  {:<50} → {:<18} {}",
            t.question,
            t.outcome,
            if t.decision_right { "right" } else { "WRONG" }
        );
    }
    println!(
        "speed: prompt {:.0} tok/s, generation {:.0} tok/s",
        report.prompt_tokens_per_second, report.generation_tokens_per_second
    );
    println!("{}", report.verdict);
    Ok(0)
}

#[cfg(feature = "llama")]
fn bench_model(
    args: &ModelArgs,
    prompt_tokens: usize,
    gen_tokens: usize,
    repetitions: usize,
) -> Result<u8, Failure> {
    let mut model = args.load_local()?;
    print_json(&lantern_llama::bench::bench_model(
        &mut model,
        &system_prompt(),
        prompt_tokens,
        gen_tokens,
        repetitions,
    ));
    Ok(0)
}
