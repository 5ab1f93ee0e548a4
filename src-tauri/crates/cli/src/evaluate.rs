//! `lantern eval`: the tool-use evaluation, with its progress on the terminal and its
//! report.

use crate::models::ModelArgs;
use crate::{print_json, usage, Failure};
use lantern_core::agent::AgentConfig;
use lantern_core::event::FinishedReason;
use lantern_core::levers::AGENT_LEVERS;
use lantern_eval as eval;
use lantern_eval::{EvalTask, Shown, Split, TaskSet};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The arguments of `lantern eval`.
#[derive(clap::Args)]
pub(super) struct EvalArgs {
    /// The tasks: a JSON array of tasks, or a folder of such files (see tests/eval/tasks/).
    #[arg(long)]
    tasks: PathBuf,
    /// The folder holding the fixture workspaces the tasks name.
    #[arg(long)]
    fixtures: PathBuf,
    /// Run only this set: `dev` (the one to tune on) or `test` (held out: only report it).
    #[arg(long, value_parser = Split::ALL.map(Split::name))]
    split: Option<String>,
    /// Run only the tasks of this category or fixture (repeatable; a task is run when it
    /// matches any).
    #[arg(long)]
    only: Vec<String>,
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
    /// Turn one of the agent's levers off to measure what it is worth (repeatable).
    #[arg(long = "off", value_parser = agent_lever_names())]
    off: Vec<String>,
    /// The most characters of the project map each task's conversation starts with (0: no
    /// map, the default).
    #[arg(long, default_value_t = AgentConfig::default().project_map)]
    map_budget: usize,
    /// The most characters of the map of the project's code each task's conversation opens
    /// with (left out: none for a local model, and for a model on a server the size given one
    /// that does not say its context, 6,000: the evaluation does not ask it).
    #[arg(long, value_name = "CHARACTERS")]
    code_map: Option<usize>,
    /// How many tasks run at once, each on its own copy of the model (give each one thread
    /// with `--threads 1`; a scripted model's replies start over in each job). The outcomes
    /// are the same as one at a time, in the same order; on a machine doing nothing else, one
    /// job per core takes the run's time down by as much.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    jobs: u16,
    /// A diagnostic, not a setting: run only the tasks whose answer some line of the project
    /// says (look-ups, searches and two-step questions), with each run's first call given as
    /// a read of the lines around that line (`lines`) or of its whole file (`file`). How often
    /// the model's own words are then right is the most better calls could win.
    #[arg(long, value_parser = Shown::ALL.map(Shown::name))]
    given_reads: Option<String>,
}

/// `lantern eval`: runs the chosen tasks and prints their scores.
pub(super) fn eval_command(args: EvalArgs) -> Result<u8, Failure> {
    let set = TaskSet {
        tasks: args.tasks,
        fixtures: args.fixtures,
        split: args.split.as_deref().and_then(Split::from_name),
        only: args.only,
    };
    let (config, mut label) = configured(
        &args.model,
        args.max_steps,
        args.map_budget,
        args.code_map,
        &args.off,
        args.label,
    );
    let given_reads = args.given_reads.as_deref().and_then(Shown::from_name);
    if let Some(shown) = given_reads {
        label.push_str(&format!(", {}", shown.describe()));
    }
    evaluate(
        &set,
        &Running {
            model: &args.model,
            config: &config,
            jobs: usize::from(args.jobs),
            given_reads,
        },
        &label,
        args.out.as_deref(),
        args.json,
    )
}

/// How the runs of an evaluation are made: the model, the agent's settings, and how many
/// run at once.
struct Running<'a> {
    model: &'a ModelArgs,
    config: &'a AgentConfig,
    jobs: usize,
    /// Only the tasks with a [`eval::given_read`] showing this much run, each run's first call
    /// that read.
    given_reads: Option<Shown>,
}

/// The agent's levers an evaluation can turn off, by name (see [`AGENT_LEVERS`]).
fn agent_lever_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        AGENT_LEVERS
            .iter()
            .map(|lever| clap::builder::PossibleValue::new(lever.name).help(lever.purpose)),
    )
}

/// `lantern eval`: every phrasing of every task, a progress line per run on stderr, then the
/// report. Exits 0 once every task has run, whatever the scores; bad input is a usage error
/// found before the model is loaded.
fn evaluate(
    set: &TaskSet,
    running: &Running,
    label: &str,
    out: Option<&Path>,
    json: bool,
) -> Result<u8, Failure> {
    if running.config.max_steps == 0 {
        return Err(usage("--max-steps must be at least 1"));
    }
    let toolbox = crate::toolbox();
    let mut tasks = set.load(toolbox.registry()).map_err(usage)?;
    let leftovers = eval::remove_leftovers();
    if leftovers > 0 {
        let copies = if leftovers == 1 { "copy" } else { "copies" };
        eprintln!("removed {leftovers} fixture {copies} left by an evaluation that was stopped");
    }
    let given_reads =
        (running.given_reads).map(|shown| eval::given_reads(&tasks, &set.fixtures, shown));
    if let Some(reads) = &given_reads {
        let count = tasks.len();
        tasks.retain(|task| reads.contains_key(&task.id));
        eprintln!(
            "{} of {count} tasks have an answer a line of the project says; only they run, each \
             with its first call given",
            tasks.len()
        );
        if tasks.is_empty() {
            return Err(usage(
                "no task chosen has an answer a line of its project says",
            ));
        }
    }
    let runs: Vec<(&EvalTask, usize)> = tasks
        .iter()
        .flat_map(|t| (0..t.phrasings().count()).map(move |p| (t, p)))
        .collect();
    let jobs = eval::Jobs {
        count: running.jobs,
        load: &|| running.model.load(),
        given_reads: given_reads.as_ref(),
        ended: &|ended, outcome| {
            eprintln!(
                "[{ended}/{}] {} {} {:.1} s",
                runs.len(),
                outcome.id,
                progress_verdict(outcome),
                outcome.seconds
            )
        },
    };
    let outcomes = eval::run_all(&runs, &set.fixtures, &toolbox, running.config, &jobs)?;
    let splits = eval::summarize_splits(&outcomes);
    let markdown = eval::markdown_table(label, &splits, &outcomes);
    if json {
        print_json(&json!({"label": label, "splits": splits, "outcomes": outcomes}));
    } else {
        out!("{markdown}");
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
pub(super) fn progress_verdict(outcome: &eval::TaskOutcome) -> String {
    if outcome.success {
        return "ok".to_string();
    }
    let why = if let Some(error) = &outcome.error {
        error.clone()
    } else if !outcome.stray_edits.is_empty() {
        format!("changed {}", outcome.stray_edits.join(", "))
    } else if outcome.contradicts_note {
        "the answer contradicts a note".to_string()
    } else if outcome.recites_instructions {
        "the answer recites Lantern's instructions".to_string()
    } else if outcome.shown_success {
        "right only with Lantern's notes".to_string()
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
pub(super) fn append_report(path: &Path, markdown: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let separator = if file.metadata()?.len() > 0 { "\n" } else { "" };
    write!(file, "{separator}{markdown}")
}

/// The agent's settings and the results' heading for an evaluation: the model's tool choice,
/// `max_steps`, the project map's and the code map's budgets, and the levers named in `off`
/// turned off.
fn configured(
    model: &ModelArgs,
    max_steps: usize,
    map_budget: usize,
    code_map: Option<usize>,
    off: &[String],
    label: Option<String>,
) -> (AgentConfig, String) {
    let on_server = matches!(model.provider, crate::models::Provider::Openai);
    let mut config = AgentConfig {
        tool_choice: model.tool_choice,
        max_steps,
        project_map: map_budget,
        repo_map: lantern_core::agent::repo_map_budget(code_map, on_server, || None),
        ..AgentConfig::default()
    };
    for lever in AGENT_LEVERS
        .iter()
        .filter(|l| off.iter().any(|o| o == l.name))
    {
        (lever.set)(&mut config, false);
    }
    let label = label.unwrap_or_else(|| {
        let mut label = model.describe();
        if let Some(chars) = code_map {
            label.push_str(&format!(", code map {chars}"));
        }
        if !off.is_empty() {
            label.push_str(&format!(", off: {}", off.join(", ")));
        }
        label
    });
    (config, label)
}
