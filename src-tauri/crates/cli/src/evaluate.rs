//! `lantern eval`: the tool-use evaluation, with its progress on the terminal and its
//! report.

use crate::models::ModelArgs;
use crate::{print_json, usage, Failure};
use lantern_core::agent::AgentConfig;
use lantern_core::event::FinishedReason;
use lantern_eval as eval;
use serde_json::json;
use std::io::Write;
use std::path::Path;

/// `lantern eval`: every task in order, a progress line per task on stderr, then the report.
/// Exits 0 once every task has run, whatever the scores; bad input is a usage error found
/// before the model is loaded.
pub(super) fn evaluate(
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
    let toolbox = crate::toolbox();
    let tasks = eval::load_tasks(tasks_file, toolbox.registry()).map_err(usage)?;
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
        let outcome = eval::run_task(task, fixtures, &toolbox, model.as_mut(), config);
        eprintln!("{} {:.1} s", progress_verdict(&outcome), outcome.seconds);
        outcomes.push(outcome);
    }
    let summary = eval::summarize(&outcomes);
    let markdown = eval::markdown_table(label, &summary, &outcomes);
    if json {
        print_json(&json!({"label": label, "summary": summary, "outcomes": outcomes}));
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
