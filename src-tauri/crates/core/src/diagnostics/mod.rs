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
//! Checkers are looked up in the project's own `node_modules/.bin` (or `.venv/bin`) first,
//! then on the search path (see [`checkers::search_path`]). A checker that is not installed is
//! listed under `missing` with how to install it, and the files it would have checked get a
//! tree-sitter syntax check instead ([`syntax`]); JSON and TOML files only ever get that.
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

pub mod checkers;
pub mod syntax;

use crate::error::ToolError;
use crate::exec;
use crate::paths::sha256_hex;
use crate::sandbox::Workspace;
use crate::tools::walk::{walk_checked, Found};
use checkers::{locate, Checker, PathMap};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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
}

impl Language {
    fn of(path: &str) -> Option<Language> {
        let ext = path.rsplit_once('.')?.1;
        Some(match ext {
            "rs" => Language::Rust,
            "ts" | "tsx" | "mts" | "cts" | "js" | "jsx" | "mjs" | "cjs" => Language::Script,
            "py" | "pyi" => Language::Python,
            "go" => Language::Go,
            "json" => Language::Json,
            "toml" => Language::Toml,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Script => "typescript/javascript",
            Language::Python => "python",
            Language::Go => "go",
            Language::Json => "json",
            Language::Toml => "toml",
        }
    }
}

impl Checker {
    fn language(self) -> Language {
        match self {
            Checker::Cargo => Language::Rust,
            Checker::Tsc | Checker::Eslint => Language::Script,
            Checker::Ruff | Checker::PyCompile => Language::Python,
            Checker::GoVet => Language::Go,
        }
    }

    /// Files (by name) whose content changes what the checker reports, besides sources.
    fn config_files(self) -> &'static [&'static str] {
        match self {
            Checker::Cargo => &["Cargo.toml", "Cargo.lock", "build.rs"],
            Checker::Tsc | Checker::Eslint => &[
                "package.json",
                "tsconfig.json",
                "eslint.config.js",
                "eslint.config.mjs",
                "eslint.config.cjs",
            ],
            Checker::Ruff | Checker::PyCompile => {
                &["pyproject.toml", "setup.cfg", "ruff.toml", ".ruff.toml"]
            }
            Checker::GoVet => &["go.mod", "go.sum"],
        }
    }
}

const ESLINT_CONFIGS: &[&str] = &[
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
    "eslint.config.ts",
    ".eslintrc",
    ".eslintrc.js",
    ".eslintrc.cjs",
    ".eslintrc.json",
    ".eslintrc.yml",
    ".eslintrc.yaml",
];

/// One checker to run on one project folder.
#[derive(Debug, Clone)]
struct Job {
    checker: Checker,
    /// Workspace-relative folder, `.` for the root.
    dir: String,
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

fn parent_of(rel: &str) -> &str {
    rel.rsplit_once('/').map(|(d, _)| d).unwrap_or(".")
}

fn file_name(rel: &str) -> &str {
    rel.rsplit_once('/').map(|(_, n)| n).unwrap_or(rel)
}

/// Is `rel` inside the folder `dir` (`.` is the root)?
fn inside(rel: &str, dir: &str) -> bool {
    dir == "." || rel.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}

fn abs_of(root: &Path, dir: &str) -> PathBuf {
    if dir == "." {
        root.to_path_buf()
    } else {
        root.join(dir)
    }
}

/// Keeps only folders that have no ancestor in the list.
fn outermost(mut dirs: Vec<String>) -> Vec<String> {
    dirs.sort();
    dirs.dedup();
    let all = dirs.clone();
    dirs.retain(|d| !all.iter().any(|a| a != d && inside(d, a)));
    dirs
}

/// The checkers the workspace's marker files call for.
fn detect(ws: &Workspace, files: &[String]) -> Vec<Job> {
    let markers = |names: &[&str]| -> Vec<String> {
        files
            .iter()
            .filter(|f| names.contains(&file_name(f)))
            .map(|f| parent_of(f).to_string())
            .collect()
    };
    let mut jobs = Vec::new();
    for dir in outermost(markers(&["Cargo.toml"])) {
        jobs.push(Job {
            checker: Checker::Cargo,
            dir,
        });
    }
    for dir in outermost(markers(&["tsconfig.json"])) {
        jobs.push(Job {
            checker: Checker::Tsc,
            dir,
        });
    }
    let eslint_dirs: Vec<String> = markers(&["package.json"])
        .into_iter()
        .filter(|d| has_eslint_config(ws, d))
        .collect();
    for dir in outermost(eslint_dirs) {
        jobs.push(Job {
            checker: Checker::Eslint,
            dir,
        });
    }
    let mut python = outermost(markers(&["pyproject.toml", "setup.cfg", "setup.py"]));
    if python.is_empty()
        && files
            .iter()
            .any(|f| Language::of(f) == Some(Language::Python))
    {
        python.push(".".to_string());
    }
    for dir in python {
        jobs.push(Job {
            checker: Checker::Ruff,
            dir,
        });
    }
    for dir in outermost(markers(&["go.mod"])) {
        jobs.push(Job {
            checker: Checker::GoVet,
            dir,
        });
    }
    jobs
}

fn has_eslint_config(ws: &Workspace, dir: &str) -> bool {
    let exists = |name: &str| {
        let rel = if dir == "." {
            name.to_string()
        } else {
            format!("{dir}/{name}")
        };
        ws.resolve(&rel).map(|p| p.exists).unwrap_or(false)
    };
    if ESLINT_CONFIGS.iter().any(|c| exists(c)) {
        return true;
    }
    let package = if dir == "." {
        "package.json".to_string()
    } else {
        format!("{dir}/package.json")
    };
    read_text(ws, &package)
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .is_some_and(|v| v.get("eslintConfig").is_some())
}

fn read_bytes(ws: &Workspace, rel: &str, limit: u64) -> Option<Vec<u8>> {
    let path = ws.resolve(rel).ok()?;
    let file = ws.open_read(&path).ok()?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= limit).then_some(bytes)
}

fn read_text(ws: &Workspace, rel: &str) -> Option<String> {
    String::from_utf8(read_bytes(ws, rel, MAX_HASHED_BYTES)?).ok()
}

/// The files of the workspace worth looking at: known languages and marker files, outside
/// dependency and build folders.
fn workspace_files(ws: &Workspace) -> Result<Vec<String>, ToolError> {
    let root = ws.resolve(".")?;
    let walked = walk_checked(ws, &root, None)?;
    Ok(walked
        .files
        .into_iter()
        .filter(|f: &Found| f.utf8)
        .map(|f| f.rel)
        .filter(|rel| {
            !rel.split('/')
                .any(|part| SKIPPED_DIRS.contains(&part) || part.starts_with('.'))
        })
        .filter(|rel| {
            Language::of(rel).is_some()
                || ["go.mod", "go.sum", "Cargo.lock", "setup.cfg"].contains(&file_name(rel))
        })
        .collect())
}

/// A fingerprint of the content of the files a job depends on; `None` when they are too many
/// to hash, in which case the result is not cached.
fn fingerprint(ws: &Workspace, job: &Job, files: &[String], narrow: &str) -> Option<String> {
    let language = job.checker.language();
    let mut text = format!("{}\u{0}{}\u{0}{narrow}\u{0}", job.checker.name(), job.dir);
    let mut count = 0;
    for rel in files.iter().filter(|f| inside(f, &job.dir)) {
        let relevant = Language::of(rel) == Some(language)
            || job.checker.config_files().contains(&file_name(rel));
        if !relevant {
            continue;
        }
        count += 1;
        if count > 20_000 {
            return None;
        }
        let digest = match read_bytes(ws, rel, MAX_HASHED_BYTES) {
            Some(bytes) => sha256_hex(&bytes),
            None => {
                // Too large (or unreadable): its size and modification time stand in.
                let path = ws.resolve(rel).ok()?;
                let meta = std::fs::metadata(&path.abs).ok()?;
                format!("{}:{:?}", meta.len(), meta.modified().ok())
            }
        };
        text.push_str(&format!("{rel}\u{0}{digest}\n"));
    }
    Some(sha256_hex(text.as_bytes()))
}

/// What one checker did in this call, as the result reports it.
struct Report {
    json: Value,
    diagnostics: Vec<Diagnostic>,
    fresh: bool,
    new: Vec<Diagnostic>,
}

/// The command line for a job, narrowed to `file` where the checker allows.
fn command_for(job: &Job, program: &Path, file: Option<&str>, files: &[String]) -> Vec<String> {
    let local = |rel: &str| -> String {
        if job.dir == "." {
            rel.to_string()
        } else {
            rel.strip_prefix(&format!("{}/", job.dir))
                .unwrap_or(rel)
                .to_string()
        }
    };
    let mut args: Vec<String> = vec![program.to_string_lossy().into_owned()];
    let push = |args: &mut Vec<String>, items: &[&str]| {
        args.extend(items.iter().map(|s| s.to_string()));
    };
    match job.checker {
        Checker::Cargo => push(
            &mut args,
            &["check", "--message-format=json", "--quiet", "--color=never"],
        ),
        Checker::Tsc => push(&mut args, &["--noEmit", "--pretty", "false", "-p", "."]),
        Checker::Eslint => {
            push(&mut args, &["-f", "json", "--no-color"]);
            args.push(file.map(local).unwrap_or_else(|| ".".to_string()));
        }
        Checker::Ruff => {
            push(
                &mut args,
                &[
                    "check",
                    "--output-format=json",
                    "--no-cache",
                    "--exit-zero",
                    "--no-fix",
                ],
            );
            args.push(file.map(local).unwrap_or_else(|| ".".to_string()));
        }
        Checker::PyCompile => {
            // Isolated: the project's folder is not on the import path, so a `json.py` in the
            // workspace is never imported by the compiler script.
            args.push("-I".to_string());
            args.push("-c".to_string());
            args.push(checkers::PY_COMPILE_SCRIPT.to_string());
            match file {
                Some(f) => args.push(local(f)),
                None => args.extend(
                    files
                        .iter()
                        .filter(|f| {
                            inside(f, &job.dir) && Language::of(f) == Some(Language::Python)
                        })
                        .take(MAX_SYNTAX_FILES)
                        .map(|f| local(f)),
                ),
            }
        }
        Checker::GoVet => {
            push(&mut args, &["vet", "-json"]);
            args.push(match file {
                Some(f) => match parent_of(&local(f)) {
                    "." => ".".to_string(),
                    d => format!("./{d}"),
                },
                None => "./...".to_string(),
            });
        }
    }
    args
}

/// How a command line is shown: the program by name, the Python script elided.
fn shown_command(job: &Job, args: &[String]) -> String {
    let mut shown: Vec<String> = args.to_vec();
    shown[0] = job.checker.program().to_string();
    if job.checker == Checker::PyCompile {
        shown[3] = "<compile each file>".to_string();
    }
    shown.join(" ")
}

/// Runs every applicable checker and returns the tool's result data.
pub fn check(
    ws: &Workspace,
    cache: &std::sync::Mutex<Cache>,
    request: &Request,
) -> Result<Value, ToolError> {
    let started = Instant::now();
    let deadline = started + request.timeout;
    let root = ws.root().to_path_buf();
    let files = workspace_files(ws)?;
    let mut jobs = detect(ws, &files);
    let file_language = request.file.as_deref().and_then(Language::of);
    if let Some(file) = &request.file {
        jobs.retain(|j| Some(j.checker.language()) == file_language && inside(file, &j.dir));
    }

    let mut reports: Vec<Report> = Vec::new();
    let mut missing: Vec<Value> = Vec::new();
    // Languages a checker is looking at, with the folder it covers.
    let mut covered: Vec<(Language, String)> = Vec::new();
    for mut job in jobs {
        let mut program = locate(job.checker, &root, &abs_of(&root, &job.dir));
        if program.is_none() && job.checker == Checker::Ruff {
            missing.push(json!({
                "checker": "ruff",
                "language": "python",
                "project": job.dir,
                "install": Checker::Ruff.install_hint(),
                "instead": "py_compile",
            }));
            job.checker = Checker::PyCompile;
            program = locate(job.checker, &root, &abs_of(&root, &job.dir));
        }
        let Some(program) = program else {
            missing.push(json!({
                "checker": job.checker.name(),
                "language": job.checker.language().name(),
                "project": job.dir,
                "install": job.checker.install_hint(),
                "instead": "syntax",
            }));
            continue;
        };
        covered.push((job.checker.language(), job.dir.clone()));
        reports.push(run_job(
            ws, cache, request, &job, &program, &files, deadline,
        ));
    }

    // Files no checker covered get a syntax check: the requested file, or every file of a
    // checked language whose checker is missing (JSON and TOML only when asked for by name).
    let syntax_targets: Vec<String> = match &request.file {
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
                Some(Language::Json) | Some(Language::Toml) | None => false,
                Some(l) => !covered.iter().any(|(cl, dir)| *cl == l && inside(f, dir)),
            })
            .take(MAX_SYNTAX_FILES)
            .cloned()
            .collect(),
    };
    if !syntax_targets.is_empty() {
        reports.push(run_syntax(ws, &syntax_targets));
    }

    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let mut new_count = 0;
    for report in &reports {
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
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for d in &diagnostics {
        let key = match d.severity {
            Severity::Error => "errors",
            Severity::Warning => "warnings",
            Severity::Info | Severity::Hint => "notes",
        };
        *counts.entry(key).or_default() += 1;
    }
    let total = diagnostics.len();
    let omitted = total.saturating_sub(MAX_LISTED);
    diagnostics.truncate(MAX_LISTED);
    let fresh = reports.iter().all(|r| r.fresh);
    let errors = counts.get("errors").copied().unwrap_or(0);
    let warnings = counts.get("warnings").copied().unwrap_or(0);
    let ran: Vec<String> = reports
        .iter()
        .map(|r| r.json["checker"].as_str().unwrap_or_default().to_string())
        .collect();
    let summary = if reports.is_empty() {
        "No checker applies: no Cargo.toml, tsconfig.json, package.json with ESLint, Python or Go files found here.".to_string()
    } else {
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
    };
    let mut data = json!({
        "summary": summary,
        "diagnostics": diagnostics,
        "errors": errors,
        "warnings": warnings,
        "notes": counts.get("notes").copied().unwrap_or(0),
        "fresh": fresh,
        "new_since_last": new_count,
        "checkers": reports.iter().map(|r| r.json.clone()).collect::<Vec<_>>(),
        "missing": missing,
        "duration_ms": started.elapsed().as_millis() as u64,
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
    Ok(data)
}

/// The program with its folder's real path: the sandbox shows only real folders, so a path
/// through `..` or a linked folder would not resolve inside it. The name itself stays (rustup's
/// proxies, such as `cargo`, go by the name they are called with).
fn in_real_folder(program: &Path) -> PathBuf {
    match (
        program.parent().map(std::fs::canonicalize),
        program.file_name(),
    ) {
        (Some(Ok(folder)), Some(name)) => folder.join(name),
        _ => program.to_path_buf(),
    }
}

/// What a checker needs to see inside the sandbox, whose private /tmp hides the real one: its
/// folder, or the whole `node_modules`/`.venv` it belongs to (`.bin` entries link into it).
fn checker_visible(program: &Path) -> Vec<PathBuf> {
    let Some(folder) = program.parent() else {
        return Vec::new();
    };
    let package_root = folder.ancestors().find(|a| {
        a.file_name()
            .is_some_and(|n| n == "node_modules" || n == ".venv")
    });
    vec![package_root.unwrap_or(folder).to_path_buf()]
}

fn run_job(
    ws: &Workspace,
    cache: &std::sync::Mutex<Cache>,
    request: &Request,
    job: &Job,
    program: &Path,
    files: &[String],
    deadline: Instant,
) -> Report {
    let root = ws.root();
    let cwd = abs_of(root, &job.dir);
    let program = &in_real_folder(program);
    let args = command_for(job, program, request.file.as_deref(), files);
    let shown = shown_command(job, &args);
    let narrow = request.file.clone().unwrap_or_default();
    let key = format!("{}\u{0}{}\u{0}{narrow}", job.checker.name(), job.dir);
    let print = fingerprint(ws, job, files, &narrow);
    let previous = cache
        .lock()
        .map(|c| c.entries.get(&key).cloned())
        .unwrap_or(None);
    let mut json = json!({
        "checker": job.checker.name(),
        "project": job.dir,
        "command": shown,
    });
    if let (Some(prev), Some(print)) = (&previous, &print) {
        if &prev.fingerprint == print {
            json["status"] = json!("cached");
            json["freshness"] = json!("fresh");
            json["duration_ms"] = json!(0);
            json["found"] = json!(prev.diagnostics.len());
            json["new_since_last"] = json!(0);
            json["resolved_since_last"] = json!(0);
            return Report {
                json,
                diagnostics: prev.diagnostics.clone(),
                fresh: true,
                new: Vec::new(),
            };
        }
    }
    let remaining = deadline.saturating_duration_since(Instant::now());
    if remaining.is_zero() {
        json["status"] = json!("skipped");
        json["note"] = json!("the time box ran out before this checker could start");
        return stale_report(json, previous);
    }
    let prepared = prepare(ws, &cwd, job, program, &args, remaining);
    json["sandboxed"] = json!(prepared.launch.sandbox.is_ok());
    if let Some(note) = &prepared.note {
        json["lockfile"] = json!(note);
    }
    let spec = prepared.launch.spec(
        &cwd,
        deadline.saturating_duration_since(Instant::now()),
        CHECKER_OUTPUT_CAP,
    );
    let finished = match exec::run(&spec) {
        Ok(f) => f,
        Err(e) => {
            json["status"] = json!("failed");
            json["note"] = json!(format!("could not start {}: {e}", job.checker.program()));
            return stale_report(json, previous);
        }
    };
    let paths = PathMap { root, cwd: &cwd };
    let stdout = finished.stdout.text();
    let stderr = finished.stderr.text();
    let found = match job.checker {
        Checker::Cargo => checkers::parse_cargo(&stdout, &paths),
        Checker::Tsc => checkers::parse_tsc(&stdout, &paths),
        Checker::Eslint => checkers::parse_eslint(&stdout, &paths),
        Checker::Ruff => checkers::parse_ruff(&stdout, &paths),
        Checker::PyCompile => checkers::parse_py_compile(&stdout, &paths),
        Checker::GoVet => checkers::parse_go_vet(&stderr, &paths),
    };
    json["duration_ms"] = json!(finished.duration.as_millis() as u64);
    json["exit_code"] = json!(finished.exit_code);
    json["found"] = json!(found.len());
    if finished.timed_out {
        json["status"] = json!("timed_out");
        json["freshness"] = json!("stale");
        json["note"] = json!(format!(
            "stopped after {:.1} s (the time box); only what it reported by then is shown. Pass a larger timeout_s or narrow the check with \"file\".",
            finished.duration.as_secs_f64()
        ));
        if found.is_empty() {
            return stale_report(json, previous);
        }
        return Report {
            json,
            diagnostics: found,
            fresh: false,
            new: Vec::new(),
        };
    }
    let failed = found.is_empty() && !exit_is_clean(job.checker, finished.exit_code);
    if failed {
        json["status"] = json!("failed");
        let output = if stderr.trim().is_empty() {
            &stdout
        } else {
            &stderr
        };
        json["note"] = json!(tail(output, 800));
        return stale_report(json, previous);
    }
    json["status"] = json!("ran");
    json["freshness"] = json!("fresh");
    let (new, resolved) = match &previous {
        Some(prev) => difference(&prev.diagnostics, &found),
        None => (found.clone(), 0),
    };
    json["new_since_last"] = json!(new.len());
    json["resolved_since_last"] = json!(resolved);
    if let (Some(print), Ok(mut c)) = (print, cache.lock()) {
        c.entries.insert(
            key,
            Entry {
                fingerprint: print,
                diagnostics: found.clone(),
            },
        );
    }
    Report {
        json,
        diagnostics: found,
        fresh: true,
        new,
    }
}

/// A checker's launch, and what was done first to make it possible.
struct Prepared {
    launch: exec::Launch,
    /// Set when Cargo had to write a missing `Cargo.lock` first.
    note: Option<String>,
}

/// The checker in the sandbox profile: the workspace read-only (checkers report, they never
/// change the project), build output and caches in Lantern's own folders for this workspace,
/// the checker's own folder visible.
fn prepare(
    ws: &Workspace,
    cwd: &Path,
    job: &Job,
    program: &Path,
    args: &[String],
    remaining: Duration,
) -> Prepared {
    let root = ws.root();
    let mut profile = exec::profile::for_workspace(ws, cwd);
    profile.readable.extend(checker_visible(program));
    let target = exec::profile::PrivateDirs::for_workspace(root).cargo_target();
    // Set whether sandboxed or not: build output never goes into the workspace, Go never
    // fetches a newer toolchain, output is plain text.
    let env = [
        ("CARGO_TARGET_DIR", target.to_string_lossy().into_owned()),
        ("CARGO_TERM_COLOR", "never".to_string()),
        ("CARGO_NET_OFFLINE", "true".to_string()),
        ("GOTOOLCHAIN", "local".to_string()),
        ("PYTHONDONTWRITEBYTECODE", "1".to_string()),
    ];
    let mut note = None;
    if job.checker == Checker::Cargo && !has_cargo_lock(root, cwd) {
        // Cargo cannot check a project without a lock file and writes one first. Resolving
        // runs no project code, so that one step may write the workspace.
        let lock = [
            args[0].clone(),
            "generate-lockfile".to_string(),
            "--offline".to_string(),
        ];
        let spec = exec::launch(&profile, &env, &lock).spec(
            cwd,
            remaining.min(Duration::from_secs(30)),
            64 * 1024,
        );
        note = Some(match exec::run(&spec) {
            Ok(f) if f.exit_code == Some(0) => {
                "Cargo.lock was missing; cargo generate-lockfile --offline wrote it".to_string()
            }
            Ok(f) => format!(
                "Cargo.lock is missing and could not be written offline: {}",
                tail(&f.stderr.text(), 400)
            ),
            Err(e) => format!("Cargo.lock is missing and cargo could not be started: {e}"),
        });
    }
    profile.workspace_writable = false;
    Prepared {
        launch: exec::launch(&profile, &env, args),
        note,
    }
}

/// Whether a `Cargo.lock` exists in `cwd` or a folder above it inside the workspace.
fn has_cargo_lock(root: &Path, cwd: &Path) -> bool {
    cwd.ancestors()
        .take_while(|d| d.starts_with(root))
        .any(|d| d.join("Cargo.lock").is_file())
}

/// Exit codes that mean "checked" (with or without findings) rather than "could not check".
fn exit_is_clean(checker: Checker, code: Option<i32>) -> bool {
    match checker {
        Checker::Cargo | Checker::Ruff | Checker::PyCompile => code == Some(0),
        // tsc: 1 and 2 both occur with findings; without findings only 0 is a clean run.
        Checker::Tsc => code == Some(0),
        Checker::Eslint => matches!(code, Some(0) | Some(1)),
        Checker::GoVet => code == Some(0),
    }
}

/// A report for a checker that produced nothing usable now: the earlier result, if any,
/// labelled stale.
fn stale_report(mut json: Value, previous: Option<Entry>) -> Report {
    json["freshness"] = json!("stale");
    let diagnostics = match previous {
        Some(prev) => {
            json["shown"] = json!("the result of an earlier run, before the files changed");
            prev.diagnostics
        }
        None => Vec::new(),
    };
    Report {
        json,
        diagnostics,
        fresh: false,
        new: Vec::new(),
    }
}

/// The findings in `now` that `before` did not have, and how many of `before` are gone.
/// Findings are matched by file, severity, code and message (not line: edits move them).
fn difference(before: &[Diagnostic], now: &[Diagnostic]) -> (Vec<Diagnostic>, usize) {
    let mut pool: HashMap<_, usize> = HashMap::new();
    for d in before {
        *pool.entry(d.identity()).or_default() += 1;
    }
    let mut new = Vec::new();
    for d in now {
        match pool.get_mut(&d.identity()) {
            Some(n) if *n > 0 => *n -= 1,
            _ => new.push(d.clone()),
        }
    }
    let resolved = pool.values().sum();
    (new, resolved)
}

fn run_syntax(ws: &Workspace, targets: &[String]) -> Report {
    let started = Instant::now();
    let mut found = Vec::new();
    let mut skipped = 0;
    for rel in targets {
        match read_text(ws, rel) {
            Some(text) => found.extend(syntax::check(rel, &text)),
            None => skipped += 1,
        }
    }
    let mut json = json!({
        "checker": "syntax",
        "project": ".",
        "command": "tree-sitter parse",
        "status": "ran",
        "freshness": "fresh",
        "duration_ms": started.elapsed().as_millis() as u64,
        "files": targets.len(),
        "found": found.len(),
    });
    if skipped > 0 {
        json["note"] = json!(format!(
            "{skipped} file(s) not parsed (over 2 MiB or not UTF-8)"
        ));
    }
    Report {
        json,
        new: found.clone(),
        diagnostics: found,
        fresh: true,
    }
}

fn tail(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.len() <= max {
        return text.to_string();
    }
    let mut cut = text.len() - max;
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    format!("…{}", &text[cut..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(path: &str, line: u32, message: &str) -> Diagnostic {
        Diagnostic {
            path: path.into(),
            line,
            column: 1,
            end_line: None,
            end_column: None,
            severity: Severity::Error,
            code: None,
            message: message.into(),
            source: "t".into(),
        }
    }

    #[test]
    fn differences_ignore_moved_lines() {
        let before = [d("a", 1, "x"), d("a", 5, "y")];
        let now = [d("a", 2, "x"), d("a", 9, "z")];
        let (new, resolved) = difference(&before, &now);
        assert_eq!(new, vec![d("a", 9, "z")]);
        assert_eq!(resolved, 1);
    }

    #[test]
    fn outermost_markers_win() {
        assert_eq!(
            outermost(vec!["a/b".into(), "a".into(), "c".into(), "ab".into()]),
            vec!["a".to_string(), "ab".into(), "c".into()]
        );
        assert_eq!(
            outermost(vec![".".into(), "x".into()]),
            vec![".".to_string()]
        );
    }

    #[test]
    fn inside_is_by_folder() {
        assert!(inside("src/a.rs", "."));
        assert!(inside("app/src/a.rs", "app"));
        assert!(!inside("apple/a.rs", "app"));
    }
}
