//! `lantern`: the headless command line over lantern-core, for scripting, tests and benchmarks.
//! Every command prints JSON on stdout (or readable text where a person is the reader) and
//! exits 0 on success, 1 when a tool reports an error, 2 on a usage error.

mod confirm;
mod render;

use clap::{Parser, Subcommand, ValueEnum};
use lantern_core::agent::{Answer, Confirmer, FixedAnswer, Session, SessionOptions};
use lantern_core::checkpoint::CheckpointStore;
use lantern_core::event::{load_transcript, Event, FinishedReason, TranscriptWriter};
use lantern_core::model::{CancelToken, Model, ScriptedModel};
use lantern_core::paths;
use lantern_core::policy::PolicyStore;
use lantern_core::prompt::render_system_prompt;
use lantern_core::protocol::{interpret, parse};
use lantern_core::sandbox::Workspace;
use lantern_core::tools::ToolRegistry;
use serde_json::{json, Value};
use std::io::{IsTerminal, Read};
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
        /// The project folder (its name appears in the prompt). Defaults to the current folder.
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
        /// The model: `scripted:FILE` (a JSON array of replies).
        #[arg(long)]
        model: Option<String>,
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
            eprintln!("lantern: {}", failure.message);
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
            let dir = match workspace {
                Some(dir) => open_workspace(&dir)?.root().to_path_buf(),
                None => {
                    std::env::current_dir().map_err(|e| usage(format!("no current folder: {e}")))?
                }
            };
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            print!(
                "{}",
                render_system_prompt(&ToolRegistry::standard().specs(), &name)
            );
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
            &workspace,
            model.as_deref(),
            &prompt,
            approve,
            json,
            max_steps,
            transcript,
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
                    message: e.message,
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

fn load_model(spec: Option<&str>) -> Result<Box<dyn Model>, Failure> {
    match spec {
        Some(s) if s.starts_with("scripted:") => {
            let path = &s["scripted:".len()..];
            let text = std::fs::read_to_string(path)
                .map_err(|e| usage(format!("cannot read the script {path}: {e}")))?;
            let model = ScriptedModel::from_json(&text).map_err(|e| usage(format!("{path}: {e}")))?;
            Ok(Box::new(model))
        }
        Some(other) => Err(usage(format!(
            "unknown model {other:?}: this build of lantern runs scripted models only (--model scripted:FILE, a JSON array of replies)"
        ))),
        None => Err(usage(
            "no model given: this build of lantern runs scripted models only (--model scripted:FILE, a JSON array of replies)",
        )),
    }
}

fn agent_run(
    workspace: &Path,
    model: Option<&str>,
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
    let mut model = load_model(model)?;
    let transcript_path = transcript.unwrap_or_else(|| paths::new_transcript_path(ws.root()));
    let mut writer = TranscriptWriter::create(&transcript_path).map_err(|e| {
        usage(format!(
            "cannot write the transcript {}: {e}",
            transcript_path.display()
        ))
    })?;
    let mut options = SessionOptions::persistent(&ws);
    options.config.max_steps = max_steps;
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
