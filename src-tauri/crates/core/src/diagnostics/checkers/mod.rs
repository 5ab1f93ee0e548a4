//! The checker adapters: which program each one runs, how it is found, and how its output
//! becomes [`super::Diagnostic`]s. The parsers are pure functions of the output, tested on recorded
//! samples; the programs themselves are exercised by the fixture tests.

mod cargo;
mod eslint;
mod go_vet;
mod python;
mod ruff;
mod tsc;

pub use cargo::parse_cargo;
pub use eslint::parse_eslint;
pub use go_vet::parse_go_vet;
pub use python::{parse_py_compile, PY_COMPILE_SCRIPT};
pub use ruff::parse_ruff;
pub use tsc::parse_tsc;

use serde::Serialize;
use serde_json::Value;
use std::path::{Component, Path, PathBuf};

/// A program that checks a project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Checker {
    /// `cargo check --message-format=json`
    Cargo,
    /// `tsc --noEmit`
    Tsc,
    /// `eslint -f json`, when the project configures ESLint
    Eslint,
    /// `ruff check --output-format=json`
    Ruff,
    /// Python's own compiler (what `python3 -m py_compile` runs), when ruff is absent
    PyCompile,
    /// `go vet -json`
    GoVet,
}

impl Checker {
    pub fn name(self) -> &'static str {
        match self {
            Checker::Cargo => "cargo",
            Checker::Tsc => "tsc",
            Checker::Eslint => "eslint",
            Checker::Ruff => "ruff",
            Checker::PyCompile => "py_compile",
            Checker::GoVet => "go_vet",
        }
    }

    /// The executable looked up.
    pub fn program(self) -> &'static str {
        match self {
            Checker::Cargo => "cargo",
            Checker::Tsc => "tsc",
            Checker::Eslint => "eslint",
            Checker::Ruff => "ruff",
            Checker::PyCompile => "python3",
            Checker::GoVet => "go",
        }
    }

    /// How to get it, for the "missing" list.
    pub fn install_hint(self) -> &'static str {
        match self {
            Checker::Cargo => "install Rust with rustup (https://rustup.rs)",
            Checker::Tsc => "npm install --save-dev typescript (in the project)",
            Checker::Eslint => "npm install --save-dev eslint (in the project)",
            Checker::Ruff => "pip install ruff (or pipx install ruff)",
            Checker::PyCompile => "apt-get install python3",
            Checker::GoVet => "apt-get install golang-go (or https://go.dev/dl)",
        }
    }

    /// Checkers that come with the project's own `node_modules/.bin` or virtualenv.
    fn local_dirs(self) -> &'static [&'static str] {
        match self {
            Checker::Tsc | Checker::Eslint => &["node_modules/.bin"],
            Checker::Ruff | Checker::PyCompile => &[".venv/bin", "venv/bin"],
            _ => &[],
        }
    }
}

/// The search path for checkers: `LANTERN_CHECKER_PATH` when set (tests use it to make a
/// checker missing, or to add one), else `PATH` plus `~/.cargo/bin` (where rustup puts cargo,
/// often not on a desktop app's PATH).
pub fn search_path() -> String {
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
pub fn locate(checker: Checker, root: &Path, project: &Path) -> Option<PathBuf> {
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
pub struct PathMap<'a> {
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

fn u32_of(value: &Value) -> Option<u32> {
    value.as_u64().map(|n| n as u32)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(crate) fn map() -> PathMap<'static> {
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
}
