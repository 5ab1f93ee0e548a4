//! What the workspace is: its files, and the marker-file helpers checkers find their projects
//! with.

use super::*;

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

/// The folders holding a file named one of `names`: the projects those marker files mark.
pub(super) fn marker_dirs(files: &[String], names: &[&str]) -> Vec<String> {
    files
        .iter()
        .filter(|f| names.contains(&file_name(f)))
        .map(|f| parent_of(f).to_string())
        .collect()
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
        let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
        Some(match ext.as_str() {
            "rs" => Language::Rust,
            "ts" | "tsx" | "mts" | "cts" | "js" | "jsx" | "mjs" | "cjs" => Language::Script,
            "py" | "pyi" => Language::Python,
            "go" => Language::Go,
            "json" => Language::Json,
            "toml" => Language::Toml,
            "yml" | "yaml" => Language::Yaml,
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
            Language::Yaml => "yaml",
        }
    }
}
