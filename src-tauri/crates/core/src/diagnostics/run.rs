//! Running one checker job: its command line, its launch in the sandbox (the workspace
//! read-only, build output in Lantern's own folder), the cache by content, the report.

use super::detect::{abs_of, file_name, inside, parent_of, read_bytes, read_text};
use super::*;

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
                let meta = std::fs::metadata(&path.abs).ok()?;
                format!("{}:{:?}", meta.len(), meta.modified().ok())
            }
        };
        text.push_str(&format!("{rel}\u{0}{digest}\n"));
    }
    Some(sha256_hex(text.as_bytes()))
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
