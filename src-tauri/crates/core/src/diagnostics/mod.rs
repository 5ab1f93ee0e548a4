//! Errors and warnings from the project's own checkers, in one shape.
//!
//! A desktop app has no editor language server to ask, so `get_diagnostics` finds out what
//! the workspace is from its marker files and runs the matching checkers:
//!
//! | marker (outermost wins, several kinds at once in a monorepo) | checker |
//! |---|---|
//! | `Cargo.toml` | `cargo check --message-format=json` |
//! | `tsconfig.json` | `tsc --noEmit --pretty false` |
//! | `package.json` with an ESLint configuration | `eslint -f json` |
//! | `pyproject.toml`, `setup.cfg`, `setup.py`, or any `.py` file | `ruff check --output-format=json`; without ruff, Python's own compiler (`py_compile`) |
//! | `go.mod` | `go vet -json ./...` |
//!
//! Each checker is one file under `checkers/` implementing the `Checker` trait (`checker.rs`):
//! its markers, program, command line, environment and output parser. `checkers::CHECKERS` is
//! the one list of them; detection, running and caching here go through the trait only.
//!
//! Checkers are looked up in the project's own `node_modules/.bin` (or `.venv/bin`) first,
//! then on the search path (`LANTERN_CHECKER_PATH`, else `PATH` and `~/.cargo/bin`). A checker
//! that is not installed is listed under `missing` with how to install it, and the files it
//! would have checked get a tree-sitter syntax check instead ([`syntax`]); JSON, TOML and YAML
//! files only ever get that.
//!
//! **Time box.** All checkers of one call share one deadline (60 s unless the call says
//! otherwise); a checker still running then is killed with its whole process group, and its
//! report says `timed_out` and keeps whatever it had printed.
//!
//! **Cache and freshness.** A checker's result is kept with a fingerprint of the content of
//! every file it depends on (its language's sources and its configuration files). The next
//! call reuses it while the fingerprint is unchanged (`status: "cached"`) and runs the checker
//! again as soon as any of those files changed, e.g. after a `write_file`. A result is
//! `fresh` when it describes the files as they are now; `stale` when the checker could not
//! finish (timeout, failure) and what is shown is partial or from an earlier run. Each run is
//! compared with the previous one: `new_since_last` / `resolved_since_last` count the
//! difference, and `only_new` reports just the new findings.
//!
//! **Trust.** Checkers run the project's own code (Cargo build scripts and proc macros, an
//! ESLint configuration, a project-local `node_modules/.bin` or `.venv/bin` checker). They run
//! in the sandbox profile every program Lantern starts runs in ([`crate::exec::profile`]): no
//! capabilities, no network, none of the user's home or Lantern's state visible, and for
//! checkers the workspace itself **read-only**: build output goes to Lantern's own folder for
//! the workspace (`CARGO_TARGET_DIR`, Go's build cache), the user's Cargo registry and Go
//! modules are shown read-only, so dependencies must already be fetched (`cargo fetch`, which
//! runs no project code, through `run_command`). Only a missing `Cargo.lock` is written first,
//! by `cargo generate-lockfile --offline`, which runs no project code either. Where bubblewrap
//! is unavailable nothing of this holds, so `get_diagnostics` then counts as running a program
//! and asks first (see the tool). Each checker's report says whether it was `sandboxed`.

mod checker;
mod checkers;
mod detect;
mod run;

#[cfg(test)]
mod tests;

use crate::error::ToolError;
use crate::exec;
use crate::paths::sha256_hex;
use crate::sandbox::Workspace;
use crate::walk::{walk_checked, Found};
use checker::{locate, Checker};
use checkers::CHECKERS;
use detect::{abs_of, inside, workspace_files};
use run::{run_job, run_syntax};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub mod syntax;

/// The `status` of a checker's report that was stopped at the time box.
const TIMED_OUT: &str = "timed_out";

/// Was a checker of this `get_diagnostics` result's data stopped at the time box? What such
/// a result shows, and what a model does next, depends on how busy the machine was.
pub fn a_check_ran_out_of_time(data: &Value) -> bool {
    #[derive(Deserialize)]
    struct Checker {
        #[serde(default)]
        status: Option<String>,
    }
    #[derive(Deserialize)]
    struct Data {
        #[serde(default)]
        checkers: Vec<Checker>,
    }
    Data::deserialize(data).is_ok_and(|data| {
        data.checkers
            .iter()
            .any(|c| c.status.as_deref() == Some(TIMED_OUT))
    })
}

/// How long the checkers of one call may take together, unless the call says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The most diagnostics one result lists (errors first); the rest are counted.
pub const MAX_LISTED: usize = 200;

/// The most files one syntax-check fallback parses.
const MAX_SYNTAX_FILES: usize = 500;

/// Files larger than this are neither parsed by the fallback nor hashed whole.
const MAX_HASHED_BYTES: u64 = 2 * 1024 * 1024;

/// Bytes of each output stream kept from a checker (its findings are parsed from them).
const CHECKER_OUTPUT_CAP: usize = 32 * 1024 * 1024;

/// Folders that hold dependencies or build output, never the project's own sources.
const SKIPPED_DIRS: &[&str] = &["node_modules", "target", "__pycache__", "venv", "vendor"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
    Info,
    Hint,
}

/// One finding, whatever checker reported it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Workspace-relative, `/`-separated.
    pub path: String,
    /// 1-based.
    pub line: u32,
    /// 1-based.
    pub column: u32,
    pub end_line: Option<u32>,
    pub end_column: Option<u32>,
    pub severity: Severity,
    /// The checker's code for it (`E0308`, `TS2322`, `F821`, `printf`), when it has one.
    pub code: Option<String>,
    pub message: String,
    /// The checker: cargo, tsc, eslint, ruff, py_compile, go_vet or syntax.
    pub source: String,
}

impl Diagnostic {
    /// What identifies a finding across edits that move it to another line.
    fn identity(&self) -> (String, Severity, Option<String>, String, String) {
        (
            self.path.clone(),
            self.severity,
            self.code.clone(),
            self.message.clone(),
            self.source.clone(),
        )
    }
}

/// Languages Lantern knows by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Language {
    Rust,
    Script,
    Python,
    Go,
    Json,
    Toml,
    Yaml,
}

/// One checker to run on one project folder.
struct Job {
    checker: &'static dyn Checker,
    /// Workspace-relative folder, `.` for the root.
    dir: String,
}

/// The checker jobs for the workspace: each checker on each of its projects.
fn detect(ws: &Workspace, files: &[String]) -> Vec<Job> {
    CHECKERS
        .iter()
        .flat_map(|&checker| {
            checker
                .projects(ws, files)
                .into_iter()
                .map(move |dir| Job { checker, dir })
        })
        .collect()
}

/// A kept result.
#[derive(Debug, Clone)]
struct Entry {
    fingerprint: String,
    diagnostics: Vec<Diagnostic>,
}

/// Results of earlier runs, by checker, project and narrowing. Lives as long as the session.
#[derive(Debug, Default)]
pub struct Cache {
    entries: HashMap<String, Entry>,
}

/// One `get_diagnostics` call.
#[derive(Debug, Clone)]
pub struct Request {
    /// Workspace-relative file to report on, already resolved by the sandbox.
    pub file: Option<String>,
    pub timeout: Duration,
    pub only_new: bool,
}

/// What one checker did in this call, as the result reports it.
struct Report {
    json: Value,
    diagnostics: Vec<Diagnostic>,
    fresh: bool,
    new: Vec<Diagnostic>,
}

/// Runs every applicable checker and returns the tool's result data.
pub fn check(
    ws: &Workspace,
    cache: &std::sync::Mutex<Cache>,
    request: &Request,
) -> Result<Value, ToolError> {
    let started = Instant::now();
    let files = workspace_files(ws)?;
    let mut jobs = detect(ws, &files);
    let file_language = request.file.as_deref().and_then(Language::of);
    if let Some(file) = &request.file {
        jobs.retain(|j| Some(j.checker.language()) == file_language && inside(file, &j.dir));
    }
    let mut ran = run_checkers(ws, cache, request, jobs, &files, started + request.timeout);
    let targets = syntax_targets(request, file_language, &files, &ran.covered);
    if !targets.is_empty() {
        ran.reports.push(run_syntax(ws, &targets));
    }
    Ok(summarised(request, &ran))
}

/// What the checkers that ran found, the ones missing (with what stood in), and the
/// languages each checked folder covers.
struct Ran {
    reports: Vec<Report>,
    missing: Vec<Value>,
    covered: Vec<(Language, String)>,
}

/// Runs each job's checker, or the first fallback that is installed, within `deadline`.
fn run_checkers(
    ws: &Workspace,
    cache: &std::sync::Mutex<Cache>,
    request: &Request,
    jobs: Vec<Job>,
    files: &[String],
    deadline: Instant,
) -> Ran {
    let root = ws.root().to_path_buf();
    let mut ran = Ran {
        reports: Vec::new(),
        missing: Vec::new(),
        covered: Vec::new(),
    };
    for job in jobs {
        let project = abs_of(&root, &job.dir);
        let mut checker = job.checker;
        let program = loop {
            if let Some(program) = locate(checker, &root, &project) {
                break Some(program);
            }
            let instead = checker.fallback();
            ran.missing.push(json!({
                "checker": checker.name(),
                "language": checker.language().name(),
                "project": job.dir,
                "install": checker.install_hint(),
                "instead": instead.map_or("syntax", |c| c.name()),
            }));
            match instead {
                Some(next) => checker = next,
                None => break None,
            }
        };
        let Some(program) = program else {
            continue;
        };
        let job = Job {
            checker,
            dir: job.dir,
        };
        ran.covered.push((checker.language(), job.dir.clone()));
        ran.reports
            .push(run_job(ws, cache, request, &job, &program, files, deadline));
    }
    ran
}

/// Files no checker covered get a syntax check: the requested file, or every file of a
/// checked language whose checker is missing (JSON, TOML and YAML only when asked for by name).
fn syntax_targets(
    request: &Request,
    file_language: Option<Language>,
    files: &[String],
    covered: &[(Language, String)],
) -> Vec<String> {
    match &request.file {
        Some(file) => {
            if file_language.is_some() && !covered.iter().any(|(l, _)| Some(*l) == file_language) {
                vec![file.clone()]
            } else {
                Vec::new()
            }
        }
        None => files
            .iter()
            .filter(|f| match Language::of(f) {
                Some(Language::Json | Language::Toml | Language::Yaml) | None => false,
                Some(l) => !covered.iter().any(|(cl, dir)| *cl == l && inside(f, dir)),
            })
            .take(MAX_SYNTAX_FILES)
            .cloned()
            .collect(),
    }
}

/// The reports' findings, merged, sorted and deduplicated (only the new ones when asked),
/// and how many are new since the last check.
fn merged(request: &Request, reports: &[Report]) -> (Vec<Diagnostic>, usize) {
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let mut new_count = 0;
    for report in reports {
        if request.only_new {
            diagnostics.extend(report.new.iter().cloned());
        } else {
            diagnostics.extend(report.diagnostics.iter().cloned());
        }
        new_count += report.new.len();
    }
    if let Some(file) = &request.file {
        diagnostics.retain(|d| &d.path == file);
    }
    diagnostics.sort_by(|a, b| {
        (a.severity, &a.path, a.line, a.column, &a.message)
            .cmp(&(b.severity, &b.path, b.line, b.column, &b.message))
    });
    diagnostics.dedup();
    (diagnostics, new_count)
}

/// The result: the findings (at most [`MAX_LISTED`]), their counts, a summary line, and what
/// ran and what was missing. How long it took is the call's own metadata, not data: a model
/// that read the milliseconds would answer differently as the machine's load changed.
fn summarised(request: &Request, ran: &Ran) -> Value {
    let (mut diagnostics, new_count) = merged(request, &ran.reports);
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for d in &diagnostics {
        let key = match d.severity {
            Severity::Error => "errors",
            Severity::Warning => "warnings",
            Severity::Info | Severity::Hint => "notes",
        };
        *counts.entry(key).or_default() += 1;
    }
    let omitted = diagnostics.len().saturating_sub(MAX_LISTED);
    diagnostics.truncate(MAX_LISTED);
    let fresh = ran.reports.iter().all(|r| r.fresh);
    let errors = counts.get("errors").copied().unwrap_or(0);
    let warnings = counts.get("warnings").copied().unwrap_or(0);
    let mut data = json!({
        "summary": summary_line(request, &ran.reports, errors, warnings, fresh),
        "diagnostics": diagnostics,
        "errors": errors,
        "warnings": warnings,
        "notes": counts.get("notes").copied().unwrap_or(0),
        "fresh": fresh,
        "new_since_last": new_count,
        "checkers": ran.reports.iter().map(|r| r.json.clone()).collect::<Vec<_>>(),
        "missing": ran.missing,
    });
    if let Some(file) = &request.file {
        data["file"] = json!(file);
    }
    if omitted > 0 {
        data["omitted"] = json!(omitted);
        data["notice"] = json!(format!(
            "{omitted} more diagnostics not listed; ask for one file at a time with \"file\"."
        ));
    }
    data
}

/// "2 error(s), 1 warning(s) from cargo check", or why no checker applies: to the file asked
/// about (the workspace may well have checkers, just none for that kind of file), or here.
fn summary_line(
    request: &Request,
    reports: &[Report],
    errors: usize,
    warnings: usize,
    fresh: bool,
) -> String {
    if reports.is_empty() {
        return match &request.file {
            Some(file) => format!("No checker reads {file}: diagnostics cover Rust, TypeScript, JavaScript, Python and Go code, and the syntax of JSON, TOML and YAML files."),
            None => "No checker applies: no Cargo.toml, tsconfig.json, package.json with ESLint, Python or Go files found here.".to_string(),
        };
    }
    let ran: Vec<&str> = reports
        .iter()
        .map(|r| r.json["checker"].as_str().unwrap_or_default())
        .collect();
    format!(
        "{errors} error(s), {warnings} warning(s){} from {}{}",
        if request.only_new {
            " new since the last check"
        } else {
            ""
        },
        ran.join(", "),
        if fresh {
            ""
        } else {
            "; some results are stale (see checkers)"
        }
    )
}
