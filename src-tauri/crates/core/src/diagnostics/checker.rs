//! What one checker is: the [`Checker`] trait, which holds everything Lantern knows about one
//! checking program, and what its methods are given. Finding the program (the project's own
//! copy, then the search path) is the same for every checker and lives here too.

use super::{Diagnostic, Language};
use crate::exec::profile::{PrivateDirs, Profile};
use crate::sandbox::Workspace;
use serde_json::Value;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

/// A program that checks a project, and how its findings are read.
///
/// Each checker is a unit struct in a file of its own under `checkers/`, listed once in
/// `checkers::CHECKERS`. The machinery around it (finding the program, launching it in the
/// sandbox profile, the time box, the cache, the report) is shared and asks only this trait.
/// `Sync` lets that list be a `static`.
pub(super) trait Checker: Sync {
    /// The name in reports and in each finding's `source`: `cargo`, `go_vet`.
    fn name(&self) -> &'static str;

    /// The executable looked up.
    fn program(&self) -> &'static str;

    /// How to get it, for the `missing` list.
    fn install_hint(&self) -> &'static str;

    /// The language whose files it checks: a call about one file runs only that language's
    /// checkers, and the files of that language it covers get no syntax check.
    fn language(&self) -> Language;

    /// Files (by name) whose content changes what it reports besides its language's sources;
    /// the cached result is dropped when one of them changes.
    fn config_files(&self) -> &'static [&'static str];

    /// The project folders it checks, workspace-relative (`.` for the root), found among the
    /// workspace's files (see `detect::workspace_files`).
    fn projects(&self, ws: &Workspace, files: &[String]) -> Vec<String>;

    /// Folders where a project keeps its own copy of the program, relative to the project or
    /// a folder above it; they are searched before the search path, so the project's pinned
    /// version wins.
    fn local_dirs(&self) -> &'static [&'static str] {
        &[]
    }

    /// The checker that runs in this one's place when it is not installed; without one, the
    /// files get the syntax check.
    fn fallback(&self) -> Option<&'static dyn Checker> {
        None
    }

    /// Variables its toolchain needs to keep to Lantern's folders and to plain output. Every
    /// checker runs with every checker's variables, since project code run by one checker may
    /// start another's toolchain (a build script calling `go`).
    fn env(&self, _private: &PrivateDirs) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// A step before the run, the only one allowed to write the workspace (the run itself sees
    /// it read-only), for what the checker cannot work without; it must run no project code.
    /// Returns what it did, for the report.
    fn prepare(&self, _setup: &Setup<'_>) -> Option<Note> {
        None
    }

    /// The arguments after the program, narrowed to the asked-for file where the checker can
    /// be narrowed.
    fn args(&self, scope: &Scope<'_>) -> Vec<String>;

    /// The arguments as reports show them; by default as run.
    fn shown_args(&self, args: &[String]) -> Vec<String> {
        args.to_vec()
    }

    /// Whether an exit code means "checked" (with or without findings) rather than "could not
    /// check": a run that found nothing and exited otherwise failed.
    fn exit_is_clean(&self, code: Option<i32>) -> bool {
        code == Some(0)
    }

    /// Its findings, from what it printed.
    fn parse(&self, stdout: &str, stderr: &str, paths: &PathMap<'_>) -> Vec<Diagnostic>;
}

/// What one run of a checker covers.
pub(super) struct Scope<'a> {
    /// The project folder, workspace-relative, `.` for the root; the checker runs in it.
    pub dir: &'a str,
    /// The one file the call asks about, workspace-relative.
    pub file: Option<&'a str>,
    /// The workspace's files worth looking at (see `detect::workspace_files`).
    pub files: &'a [String],
}

impl Scope<'_> {
    /// A workspace-relative path as seen from the project folder.
    pub fn local(&self, rel: &str) -> String {
        if self.dir == "." {
            rel.to_string()
        } else {
            rel.strip_prefix(&format!("{}/", self.dir))
                .unwrap_or(rel)
                .to_string()
        }
    }

    /// The asked-for file as seen from the project folder, or `.` (the whole project).
    pub fn file_or_project(&self) -> String {
        self.file
            .map(|f| self.local(f))
            .unwrap_or_else(|| ".".to_string())
    }
}

/// What [`Checker::prepare`] is given.
pub(super) struct Setup<'a> {
    pub root: &'a Path,
    /// The project folder, where the checker runs.
    pub cwd: &'a Path,
    /// The program as the run calls it.
    pub program: &'a str,
    /// The sandbox profile, the workspace still writable.
    pub profile: &'a Profile,
    /// The environment the run gets.
    pub env: &'a [(&'static str, String)],
    /// What is left of the time box.
    pub remaining: Duration,
}

/// What a preparation did, shown in the checker's report under `field`.
pub(super) struct Note {
    pub field: &'static str,
    pub text: String,
}

/// The search path for checkers: `LANTERN_CHECKER_PATH` when set (tests use it to make a
/// checker missing, or to add one), else `PATH` plus `~/.cargo/bin` (where rustup puts cargo,
/// often not on a desktop app's PATH).
fn search_path() -> String {
    if let Ok(p) = std::env::var("LANTERN_CHECKER_PATH") {
        return p;
    }
    let mut path = std::env::var("PATH").unwrap_or_default();
    let cargo_bin = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".cargo")))
        .map(|d| d.join("bin"));
    if let Some(bin) = cargo_bin {
        path.push(':');
        path.push_str(&bin.to_string_lossy());
    }
    path
}

/// Finds `checker` for the project at `project` (inside the workspace `root`): the project's
/// own local binaries first (`node_modules/.bin`, `.venv/bin`, in the project and each folder
/// above it up to the workspace root), then the search path.
pub(super) fn locate(checker: &dyn Checker, root: &Path, project: &Path) -> Option<PathBuf> {
    for dir in project.ancestors() {
        if !dir.starts_with(root) {
            break;
        }
        for local in checker.local_dirs() {
            let candidate = dir.join(local).join(checker.program());
            if crate::exec::is_executable(&candidate) {
                return Some(candidate);
            }
        }
    }
    crate::exec::find_in(&search_path(), checker.program())
}

/// Turns a file name a checker printed into a workspace-relative path; `None` when it is
/// outside the workspace (a dependency's source, the standard library).
pub(super) struct PathMap<'a> {
    pub root: &'a Path,
    /// Where the checker ran; relative names are relative to it.
    pub cwd: &'a Path,
}

impl PathMap<'_> {
    pub fn rel(&self, file: &str) -> Option<String> {
        let joined = self.cwd.join(file);
        let mut normal = PathBuf::new();
        for part in joined.components() {
            match part {
                Component::ParentDir => {
                    normal.pop();
                }
                Component::CurDir => {}
                other => normal.push(other),
            }
        }
        let rel = normal.strip_prefix(self.root).ok()?;
        let text = rel.to_string_lossy().replace('\\', "/");
        (!text.is_empty()).then_some(text)
    }
}

/// A line or column number in a checker's JSON.
pub(super) fn u32_of(value: &Value) -> Option<u32> {
    value.as_u64().map(|n| n as u32)
}

/// The last `max` bytes of a checker's output, trimmed, marked with `…` when cut.
pub(in crate::diagnostics) fn tail(text: &str, max: usize) -> String {
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
pub(super) mod tests {
    use super::*;

    /// Paths as a checker run in the project `app` of the workspace `/w` sees them.
    pub(in crate::diagnostics) fn map() -> PathMap<'static> {
        PathMap {
            root: Path::new("/w"),
            cwd: Path::new("/w/app"),
        }
    }

    #[test]
    fn paths_map_into_the_workspace_only() {
        let m = map();
        assert_eq!(m.rel("src/a.rs").as_deref(), Some("app/src/a.rs"));
        assert_eq!(m.rel("/w/app/./x.py").as_deref(), Some("app/x.py"));
        assert_eq!(m.rel("../lib/b.ts").as_deref(), Some("lib/b.ts"));
        assert_eq!(m.rel("/home/u/.cargo/registry/x.rs"), None);
        assert_eq!(m.rel("../../etc/passwd"), None);
    }

    #[test]
    fn scope_paths_are_seen_from_the_project() {
        let files = Vec::new();
        let nested = Scope {
            dir: "app",
            file: Some("app/src/a.ts"),
            files: &files,
        };
        assert_eq!(nested.local("app/src/a.ts"), "src/a.ts");
        assert_eq!(nested.file_or_project(), "src/a.ts");
        let root = Scope {
            dir: ".",
            file: None,
            files: &files,
        };
        assert_eq!(root.local("src/a.ts"), "src/a.ts");
        assert_eq!(root.file_or_project(), ".");
    }
}
