//! What a run adds up to: per set (dev, held-out test) with the three-phrasing rule, per
//! category, and the markdown report. The model's own words come first everywhere; what the
//! user is shown with Lantern's notes is counted apart.

use crate::task::{Split, PHRASING_NAMES};
use crate::TaskOutcome;
use serde::{Deserialize, Serialize};

/// The scores of a whole run. Rates are fractions from 0 to 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalSummary {
    pub tasks: usize,
    /// Tasks whose first reply should be a call, and those that should not.
    pub tool_tasks: usize,
    pub no_tool_tasks: usize,
    /// First replies that called when a tool was needed and answered when not (0 for no tasks).
    pub call_decision_accuracy: f64,
    /// Of the tasks that need a tool, the share whose first reply called one.
    pub called_when_needed: Option<f64>,
    /// Of the tasks that need no tool, the share answered without a call.
    pub answered_when_no_tool_needed: Option<f64>,
    pub calls_made: usize,
    pub valid_calls: usize,
    pub invalid_calls: usize,
    /// Valid calls over all attempted calls, every step of every task.
    pub valid_call_rate: Option<f64>,
    /// Over the tasks that needed a tool and whose first reply named one: an acceptable tool.
    pub right_tool_rate: Option<f64>,
    /// Runs that succeeded in the model's own words.
    pub successes: usize,
    pub success_rate: f64,
    /// Runs that succeeded as the user was shown them (with Lantern's paths and notes).
    pub shown_successes: usize,
    /// Runs whose answer said another number or file than one of Lantern's notes.
    pub contradicted_notes: usize,
    /// Runs that created, changed or removed a file the task did not concern.
    pub stray_edit_runs: usize,
    /// Runs that wrote over lines of the fixture's files (see [`TaskOutcome::written_over`]).
    #[serde(default)]
    pub runs_writing_over_lines: usize,
    /// Runs in which a checker was stopped at its time box (see
    /// [`TaskOutcome::checks_out_of_time`]): their verdicts depend on the machine's load.
    #[serde(default)]
    pub runs_with_checks_out_of_time: usize,
    pub mean_steps: f64,
    pub mean_seconds: f64,
    pub total_seconds: f64,
    /// Of the valid calls that name workspace paths, those whose paths are grounded.
    pub grounded_path_rate: Option<f64>,
    /// Final answers that are protocol-shaped (tag soup the user would see).
    pub mangled_answers: usize,
    /// Replies with no call that look like the protocol, every step of every task.
    pub protocol_shaped_replies: usize,
    /// `edit_file` calls that reached the tool, and those that applied.
    #[serde(default)]
    pub edit_calls: usize,
    #[serde(default)]
    pub edits_applied: usize,
    /// The same scores per task category, in the order categories first appear.
    pub categories: Vec<CategorySummary>,
}

/// The scores of one category of tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategorySummary {
    pub category: String,
    pub tasks: usize,
    pub successes: usize,
    pub success_rate: f64,
    pub right_tool_rate: Option<f64>,
    pub grounded_path_rate: Option<f64>,
    pub mangled_answers: usize,
    pub mean_steps: f64,
    pub mean_seconds: f64,
}

fn category_summary(category: &str, outcomes: &[&TaskOutcome]) -> CategorySummary {
    let tasks = outcomes.len();
    let ratio = |part: usize, whole: usize| (whole > 0).then(|| part as f64 / whole as f64);
    let successes = outcomes.iter().filter(|o| o.success).count();
    let judged = outcomes.iter().filter(|o| o.right_tool.is_some()).count();
    let right = outcomes
        .iter()
        .filter(|o| o.right_tool == Some(true))
        .count();
    let path_calls: usize = outcomes.iter().map(|o| o.path_calls).sum();
    let grounded: usize = outcomes.iter().map(|o| o.grounded_path_calls).sum();
    CategorySummary {
        category: category.to_string(),
        tasks,
        successes,
        success_rate: ratio(successes, tasks).unwrap_or(0.0),
        right_tool_rate: ratio(right, judged),
        grounded_path_rate: ratio(grounded, path_calls),
        mangled_answers: outcomes.iter().filter(|o| o.mangled_answer).count(),
        mean_steps: ratio(outcomes.iter().map(|o| o.steps).sum(), tasks).unwrap_or(0.0),
        mean_seconds: ratio(1, tasks).map_or(0.0, |inv| {
            inv * outcomes.iter().map(|o| o.seconds).sum::<f64>()
        }),
    }
}

/// The outcomes grouped by category, in the order each category first appears.
fn by_category(outcomes: &[TaskOutcome]) -> Vec<CategorySummary> {
    let mut order: Vec<&str> = Vec::new();
    for o in outcomes {
        if !order.contains(&o.category.as_str()) {
            order.push(&o.category);
        }
    }
    order
        .into_iter()
        .map(|c| {
            let members: Vec<&TaskOutcome> = outcomes.iter().filter(|o| o.category == c).collect();
            category_summary(c, &members)
        })
        .collect()
}

/// Aggregates outcomes. A rate whose population is empty is `None` (or 0 for whole-run rates).
pub fn summarize(outcomes: &[TaskOutcome]) -> EvalSummary {
    let count = |pred: &dyn Fn(&TaskOutcome) -> bool| outcomes.iter().filter(|o| pred(o)).count();
    let ratio = |part: usize, whole: usize| (whole > 0).then(|| part as f64 / whole as f64);
    let tasks = outcomes.len();
    let tool_tasks = count(&|o| o.needs_tool);
    let no_tool_tasks = tasks - tool_tasks;
    let valid_calls: usize = outcomes.iter().map(|o| o.valid_calls).sum();
    let invalid_calls: usize = outcomes.iter().map(|o| o.invalid_calls).sum();
    let judged_tools = count(&|o| o.right_tool.is_some());
    let successes = count(&|o| o.success);
    let total_seconds: f64 = outcomes.iter().map(|o| o.seconds).sum();
    let total_steps: usize = outcomes.iter().map(|o| o.steps).sum();
    EvalSummary {
        tasks,
        tool_tasks,
        no_tool_tasks,
        call_decision_accuracy: ratio(count(&TaskOutcome::decision_correct), tasks).unwrap_or(0.0),
        called_when_needed: ratio(count(&|o| o.needs_tool && o.decision_correct()), tool_tasks),
        answered_when_no_tool_needed: ratio(
            count(&|o| !o.needs_tool && o.decision_correct()),
            no_tool_tasks,
        ),
        calls_made: valid_calls + invalid_calls,
        valid_calls,
        invalid_calls,
        valid_call_rate: ratio(valid_calls, valid_calls + invalid_calls),
        right_tool_rate: ratio(count(&|o| o.right_tool == Some(true)), judged_tools),
        successes,
        success_rate: ratio(successes, tasks).unwrap_or(0.0),
        shown_successes: count(&|o| o.shown_success),
        contradicted_notes: count(&|o| o.contradicts_note),
        stray_edit_runs: count(&|o| !o.stray_edits.is_empty()),
        runs_writing_over_lines: count(&|o| !o.written_over.is_empty()),
        runs_with_checks_out_of_time: count(&|o| o.checks_out_of_time > 0),
        mean_steps: ratio(total_steps, tasks).unwrap_or(0.0),
        mean_seconds: if tasks > 0 {
            total_seconds / tasks as f64
        } else {
            0.0
        },
        total_seconds,
        grounded_path_rate: ratio(
            outcomes.iter().map(|o| o.grounded_path_calls).sum(),
            outcomes.iter().map(|o| o.path_calls).sum(),
        ),
        mangled_answers: count(&|o| o.mangled_answer),
        protocol_shaped_replies: outcomes.iter().map(|o| o.protocol_shaped_replies).sum(),
        edit_calls: outcomes.iter().map(|o| o.edit_calls).sum(),
        edits_applied: outcomes.iter().map(|o| o.edits_applied).sum(),
        categories: by_category(outcomes),
    }
}

/// One set's headline: how many of its tasks were right, a task that needs a tool counting
/// only when every phrasing of it was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SplitSummary {
    pub split: Split,
    /// Tasks that need a tool, and those right in every phrasing: in the model's own words, and
    /// as the user was shown them.
    pub tool_tasks: usize,
    pub tool_tasks_right: usize,
    pub tool_tasks_right_shown: usize,
    /// Per phrasing (terse, polite, indirect): the runs of tasks that need a tool, and those
    /// right in the model's own words.
    pub per_phrasing: Vec<PhrasingScore>,
    /// Questions that need no tool, and those answered right (model's own words; shown).
    pub no_tool_tasks: usize,
    pub no_tool_right: usize,
    pub no_tool_right_shown: usize,
    /// Every run of the set.
    pub runs: EvalSummary,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhrasingScore {
    pub phrasing: String,
    pub runs: usize,
    pub right: usize,
}

/// The headline of each set that has runs, dev first.
pub fn summarize_splits(outcomes: &[TaskOutcome]) -> Vec<SplitSummary> {
    [Split::Dev, Split::Test]
        .into_iter()
        .filter_map(|split| {
            let runs: Vec<TaskOutcome> = outcomes
                .iter()
                .filter(|o| o.split == split)
                .cloned()
                .collect();
            (!runs.is_empty()).then(|| split_summary(split, &runs))
        })
        .collect()
}

fn split_summary(split: Split, runs: &[TaskOutcome]) -> SplitSummary {
    // Each task with every run of it, in the order tasks first appear.
    let mut tasks: Vec<(&str, bool, Vec<&TaskOutcome>)> = Vec::new();
    for o in runs {
        match tasks.iter_mut().find(|(id, _, _)| *id == o.task) {
            Some((_, _, members)) => members.push(o),
            None => tasks.push((&o.task, o.needs_tool, vec![o])),
        }
    }
    let right = |needs_tool: bool, shown: bool| {
        tasks
            .iter()
            .filter(|(_, needs, members)| {
                *needs == needs_tool
                    && members
                        .iter()
                        .all(|o| if shown { o.shown_success } else { o.success })
            })
            .count()
    };
    let per_phrasing = (0..PHRASING_NAMES.len())
        .map(|i| {
            let of: Vec<&TaskOutcome> = runs
                .iter()
                .filter(|o| o.needs_tool && o.phrasing == i)
                .collect();
            PhrasingScore {
                phrasing: PHRASING_NAMES[i].to_string(),
                runs: of.len(),
                right: of.iter().filter(|o| o.success).count(),
            }
        })
        .filter(|p| p.runs > 0)
        .collect();
    SplitSummary {
        split,
        tool_tasks: tasks.iter().filter(|(_, needs, _)| *needs).count(),
        tool_tasks_right: right(true, false),
        tool_tasks_right_shown: right(true, true),
        per_phrasing,
        no_tool_tasks: tasks.iter().filter(|(_, needs, _)| !*needs).count(),
        no_tool_right: right(false, false),
        no_tool_right_shown: right(false, true),
        runs: summarize(runs),
    }
}

fn percent(rate: Option<f64>) -> String {
    match rate {
        Some(r) => format!("{:.1} %", r * 100.0),
        None => "–".to_string(),
    }
}

/// `part of whole (p %)`.
fn share(part: usize, whole: usize) -> String {
    let rate = (whole > 0).then(|| part as f64 / whole as f64);
    format!("{part} of {whole} ({})", percent(rate))
}

/// The headline table: one row per set, the model's own words first.
fn headline(splits: &[SplitSummary]) -> String {
    let mut out = String::from(
        "| set | tool tasks right, model's own words (every phrasing) | per phrasing | questions without a tool | shown to the user, with notes (tool / no tool) | protocol-shaped answers | edits to other files | runs that wrote over lines |\n|---|---|---|---|---|---|---|---|\n",
    );
    for s in splits {
        let phrasings: Vec<String> = s
            .per_phrasing
            .iter()
            .map(|p| format!("{} {}", p.phrasing, share(p.right, p.runs)))
            .collect();
        out.push_str(&format!(
            "| {} | **{}** | {} | {} | {} / {} | {} | {} | {} |\n",
            s.split.name(),
            share(s.tool_tasks_right, s.tool_tasks),
            phrasings.join("; "),
            share(s.no_tool_right, s.no_tool_tasks),
            share(s.tool_tasks_right_shown, s.tool_tasks),
            share(s.no_tool_right_shown, s.no_tool_tasks),
            s.runs.mangled_answers,
            s.runs.stray_edit_runs,
            s.runs.runs_writing_over_lines,
        ));
    }
    out
}

/// A markdown report: a heading, the headline per set, then per set its run metrics and
/// categories, and one row per run. Runs with different models or settings append to the same
/// file and compare at a glance.
pub fn markdown_table(label: &str, splits: &[SplitSummary], outcomes: &[TaskOutcome]) -> String {
    let mut out = format!("### {}\n\n", cell(label));
    out.push_str(&headline(splits));
    for s in splits {
        out.push_str(&format!("\n#### {} set: every run\n\n", s.split.name()));
        out.push_str(&metrics(&s.runs));
    }
    out.push_str(&runs_table(outcomes));
    out
}

/// The run metrics of one set, and its categories.
fn metrics(s: &EvalSummary) -> String {
    let mut out = String::from("| metric | value |\n|---|---|\n");
    let rows = [
        (
            "runs",
            format!(
                "{} ({} need a tool, {} do not)",
                s.tasks, s.tool_tasks, s.no_tool_tasks
            ),
        ),
        ("right, model's own words", share(s.successes, s.tasks)),
        (
            "right as shown, with Lantern's notes",
            share(s.shown_successes, s.tasks),
        ),
        (
            "answers that contradict a note",
            s.contradicted_notes.to_string(),
        ),
        (
            "call decision accuracy",
            percent(Some(s.call_decision_accuracy)),
        ),
        (
            "called when a tool was needed",
            percent(s.called_when_needed),
        ),
        (
            "answered directly when none was",
            percent(s.answered_when_no_tool_needed),
        ),
        (
            "valid call rate",
            format!(
                "{} ({} of {} calls)",
                percent(s.valid_call_rate),
                s.valid_calls,
                s.calls_made
            ),
        ),
        ("right first tool", percent(s.right_tool_rate)),
        ("grounded paths", percent(s.grounded_path_rate)),
        (
            "edit_file calls that applied",
            format!("{} of {}", s.edits_applied, s.edit_calls),
        ),
        (
            "runs that changed a file the task did not concern",
            s.stray_edit_runs.to_string(),
        ),
        (
            "runs that wrote over lines of a file (kept nothing like them)",
            s.runs_writing_over_lines.to_string(),
        ),
        (
            "runs with a check stopped at its time box (verdict depends on the load)",
            s.runs_with_checks_out_of_time.to_string(),
        ),
        (
            "protocol-shaped replies (answers)",
            format!("{} ({})", s.protocol_shaped_replies, s.mangled_answers),
        ),
        ("mean steps", format!("{:.2}", s.mean_steps)),
        (
            "mean time",
            format!("{:.2} s (total {:.1} s)", s.mean_seconds, s.total_seconds),
        ),
    ];
    for (name, value) in rows {
        out.push_str(&format!("| {name} | {value} |\n"));
    }
    out.push_str(&categories_table(&s.categories));
    out
}

/// The scores of one set per category.
fn categories_table(categories: &[CategorySummary]) -> String {
    let mut out = String::from("\n| category | runs | right (model's words) | right first tool | grounded paths | mangled answers | mean steps | mean time |\n|---|---|---|---|---|---|---|---|\n");
    for c in categories {
        out.push_str(&format!(
            "| {} | {} | {} ({}) | {} | {} | {} | {:.2} | {:.1} s |\n",
            cell(&c.category),
            c.tasks,
            percent(Some(c.success_rate)),
            c.successes,
            percent(c.right_tool_rate),
            percent(c.grounded_path_rate),
            c.mangled_answers,
            c.mean_steps,
            c.mean_seconds
        ));
    }
    out
}

/// One row per run.
fn runs_table(outcomes: &[TaskOutcome]) -> String {
    let mut out = String::from(
        "\n| run | set | needs tool | first reply | first tool | calls (invalid) | steps | end | right (model) | right (shown) | time | answer |\n",
    );
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for o in outcomes {
        let first_reply = match (o.responded, o.first_call_valid) {
            (false, _) => "none",
            (true, None) => "answer",
            (true, Some(true)) => "call",
            (true, Some(false)) => "invalid call",
        };
        let first_tool = match (&o.first_tool, o.right_tool) {
            (None, _) => "–".to_string(),
            (Some(tool), Some(false)) => format!("{} (wrong)", cell(tool)),
            (Some(tool), _) => cell(tool),
        };
        let end = match (o.finish_reason, &o.error) {
            (Some(reason), _) => serde_json::to_value(reason)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            (None, Some(_)) => "not run".to_string(),
            (None, None) => "–".to_string(),
        };
        let mut answer: String = o.model_answer.chars().take(80).collect();
        if o.model_answer.chars().count() > 80 {
            answer.push('…');
        }
        let mut verdict = if o.success { "yes" } else { "no" }.to_string();
        if !o.stray_edits.is_empty() {
            verdict += &format!(" (changed {})", o.stray_edits.join(", "));
        }
        for over in &o.written_over {
            verdict += &format!(" (wrote over {} of {})", lines(over.lines), over.path);
        }
        if o.contradicts_note {
            verdict += " (contradicts a note)";
        }
        if o.recites_instructions {
            verdict += " (recites Lantern's instructions)";
        }
        out.push_str(&format!(
            "| {} | {} | {} | {}{} | {} | {} ({}) | {} | {} | {} | {} | {:.1} s | {} |\n",
            cell(&o.id),
            o.split.name(),
            if o.needs_tool { "yes" } else { "no" },
            first_reply,
            if o.decision_correct() || !o.responded {
                ""
            } else {
                " ✗"
            },
            first_tool,
            o.calls_made,
            o.invalid_calls,
            o.steps,
            end,
            cell(&verdict),
            if o.shown_success { "yes" } else { "no" },
            o.seconds,
            cell(&answer.replace('`', "'")),
        ));
    }
    out
}

/// "1 line", "3 lines".
fn lines(count: usize) -> String {
    format!("{count} line{}", if count == 1 { "" } else { "s" })
}

/// Text made safe for a table cell: no pipes or line breaks.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}
