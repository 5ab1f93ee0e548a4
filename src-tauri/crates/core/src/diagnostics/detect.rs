//! What the workspace is: its files, the project kinds their marker files name, and the
//! checker job for each.

use super::*;

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

pub(super) fn parent_of(rel: &str) -> &str {
    rel.rsplit_once('/').map(|(d, _)| d).unwrap_or(".")
}

pub(super) fn file_name(rel: &str) -> &str {
    rel.rsplit_once('/').map(|(_, n)| n).unwrap_or(rel)
}

/// Is `rel` inside the folder `dir` (`.` is the root)?
pub(super) fn inside(rel: &str, dir: &str) -> bool {
    dir == "." || rel.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}

pub(super) fn abs_of(root: &Path, dir: &str) -> PathBuf {
    if dir == "." {
        root.to_path_buf()
    } else {
        root.join(dir)
    }
}

/// Keeps only folders that have no ancestor in the list.
pub(super) fn outermost(mut dirs: Vec<String>) -> Vec<String> {
    dirs.sort();
    dirs.dedup();
    let all = dirs.clone();
    dirs.retain(|d| !all.iter().any(|a| a != d && inside(d, a)));
    dirs
}

/// The checkers the workspace's marker files call for.
pub(super) fn detect(ws: &Workspace, files: &[String]) -> Vec<Job> {
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

pub(super) fn read_bytes(ws: &Workspace, rel: &str, limit: u64) -> Option<Vec<u8>> {
    let path = ws.resolve(rel).ok()?;
    let file = ws.open_read(&path).ok()?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= limit).then_some(bytes)
}

pub(super) fn read_text(ws: &Workspace, rel: &str) -> Option<String> {
    String::from_utf8(read_bytes(ws, rel, MAX_HASHED_BYTES)?).ok()
}

/// The files of the workspace worth looking at: known languages and marker files, outside
/// dependency and build folders.
pub(super) fn workspace_files(ws: &Workspace) -> Result<Vec<String>, ToolError> {
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

impl Language {
    pub(super) fn of(path: &str) -> Option<Language> {
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

    pub(super) fn name(self) -> &'static str {
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
    pub(super) fn language(self) -> Language {
        match self {
            Checker::Cargo => Language::Rust,
            Checker::Tsc | Checker::Eslint => Language::Script,
            Checker::Ruff | Checker::PyCompile => Language::Python,
            Checker::GoVet => Language::Go,
        }
    }

    /// Files (by name) whose content changes what the checker reports, besides sources.
    pub(super) fn config_files(self) -> &'static [&'static str] {
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
