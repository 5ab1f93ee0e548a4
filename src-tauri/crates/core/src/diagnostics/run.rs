//! Running one checker job: its command line, its launch in the sandbox (the workspace
//! read-only, build output in Lantern's own folder), the cache by content, the report.

use super::checker::{tail, Note, PathMap, Scope, Setup};
use super::checkers::CHECKERS;
use super::detect::{abs_of, file_name, inside, read_bytes, read_text};
use super::*;
use std::iter::once;

/// A fingerprint of the content of the files a job depends on; `None` when they are too many
/// to hash, in which case the result is not cached.
pub(super) fn fingerprint(
    ws: &Workspace,
    job: &Job,
    files: &[String],
    narrow: &str,
) -> Option<String> {
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
                let meta = std::fs::metadata(path.abs()).ok()?;
                format!("{}:{:?}", meta.len(), meta.modified().ok())
            }
        };
        text.push_str(&format!("{rel}\u{0}{digest}\n"));
    }
    Some(sha256_hex(text.as_bytes()))
}

/// The command line for a job, narrowed to `file` where the checker allows, and how reports
/// show it (the program by name).
fn command_line(
    job: &Job,
    program: &Path,
    file: Option<&str>,
    files: &[String],
) -> (Vec<String>, String) {
    let scope = Scope {
        dir: &job.dir,
        file,
        files,
    };
    let args = job.checker.args(&scope);
    let shown: Vec<String> = once(job.checker.program().to_string())
        .chain(job.checker.shown_args(&args))
        .collect();
    let command = once(program.to_string_lossy().into_owned())
        .chain(args)
        .collect();
    (command, shown.join(" "))
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

pub(super) fn run_job(
    ws: &Workspace,
    cache: &std::sync::Mutex<Cache>,
    request: &Request,
    job: &Job,
    program: &Path,
    files: &[String],
    deadline: Instant,
) -> Report {
    let cwd = abs_of(ws.root(), &job.dir);
    let program = &in_real_folder(program);
    let (args, shown) = command_line(job, program, request.file.as_deref(), files);
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
            return cached(json, prev);
        }
    }
    let finished = match launched(ws, &cwd, job, program, &args, deadline, &mut json) {
        Ok(finished) => finished,
        Err((status, note)) => {
            json["status"] = json!(status);
            json["note"] = json!(note);
            return stale_report(json, previous);
        }
    };
    let paths = PathMap {
        root: ws.root(),
        cwd: &cwd,
    };
    let report = judged(job, &finished, &paths, json, previous);
    if report.fresh {
        if let (Some(print), Ok(mut c)) = (print, cache.lock()) {
            c.entries.insert(
                key,
                Entry {
                    fingerprint: print,
                    diagnostics: report.diagnostics.clone(),
                },
            );
        }
    }
    report
}

/// The findings of the last run, unchanged: the files it depends on are as they were.
fn cached(mut json: Value, previous: &Entry) -> Report {
    json["status"] = json!("cached");
    json["freshness"] = json!("fresh");
    json["found"] = json!(previous.diagnostics.len());
    json["new_since_last"] = json!(0);
    json["resolved_since_last"] = json!(0);
    Report {
        json,
        diagnostics: previous.diagnostics.clone(),
        fresh: true,
        new: Vec::new(),
    }
}

/// Runs the checker in its sandbox within what is left of the time box; when it cannot run,
/// the status and why.
fn launched(
    ws: &Workspace,
    cwd: &Path,
    job: &Job,
    program: &Path,
    args: &[String],
    deadline: Instant,
    json: &mut Value,
) -> Result<exec::Finished, (&'static str, String)> {
    let remaining = deadline.saturating_duration_since(Instant::now());
    if remaining.is_zero() {
        let why = "the time box ran out before this checker could start";
        return Err(("skipped", why.to_string()));
    }
    let prepared = prepare(ws, cwd, job, program, args, remaining);
    json["sandboxed"] = json!(prepared.launch.sandbox.is_ok());
    if let Some(note) = prepared.note {
        json[note.field] = json!(note.text);
    }
    let spec = prepared.launch.spec(
        cwd,
        deadline.saturating_duration_since(Instant::now()),
        CHECKER_OUTPUT_CAP,
    );
    exec::run(&spec).map_err(|e| {
        let why = format!("could not start {}: {e}", job.checker.program());
        ("failed", why)
    })
}

/// What a run found: fresh findings (with what is new and resolved since the last run), or,
/// when it timed out or failed without findings, the last good ones marked stale.
fn judged(
    job: &Job,
    finished: &exec::Finished,
    paths: &PathMap<'_>,
    mut json: Value,
    previous: Option<Entry>,
) -> Report {
    let stdout = finished.stdout.text();
    let stderr = finished.stderr.text();
    let found = job.checker.parse(&stdout, &stderr, paths);
    json["exit_code"] = json!(finished.exit_code);
    json["found"] = json!(found.len());
    if finished.timed_out {
        json["status"] = json!(super::TIMED_OUT);
        json["freshness"] = json!("stale");
        json["note"] = json!(
            "stopped at the time box; only what it reported by then is shown. Pass a larger timeout_s or narrow the check with \"file\"."
        );
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
    if found.is_empty() && !job.checker.exit_is_clean(finished.exit_code) {
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
    /// What the checker's preparation did, for the report.
    note: Option<Note>,
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
    // Every checker's variables, whether sandboxed or not: project code run by one checker
    // may start another's toolchain (see `Checker::env`).
    let private = exec::profile::PrivateDirs::for_workspace(root);
    let env: Vec<(&'static str, String)> = CHECKERS.iter().flat_map(|c| c.env(&private)).collect();
    let note = job.checker.prepare(&Setup {
        root,
        cwd,
        program: &args[0],
        profile: &profile,
        env: &env,
        remaining,
    });
    profile.workspace_writable = false;
    Prepared {
        launch: exec::launch(&profile, &env, args),
        note,
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
pub(super) fn difference(before: &[Diagnostic], now: &[Diagnostic]) -> (Vec<Diagnostic>, usize) {
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

pub(super) fn run_syntax(ws: &Workspace, targets: &[String]) -> Report {
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
