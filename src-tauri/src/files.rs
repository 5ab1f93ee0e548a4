//! The editor's access to the workspace: the file tree and reading and saving text files, all
//! through the same sandbox as the tools, so the editor can open exactly what the model can.

use crate::error::AppError;
use lantern_core::sandbox::Workspace;
use lantern_core::walk::walk_files;
use schemars::JsonSchema;
use serde::Serialize;
use std::io::Read;

/// The most files the tree lists; a folder this large is browsed better by search.
pub const TREE_LIMIT: usize = 20_000;
/// The largest file the editor opens.
pub const EDITOR_MAX_BYTES: u64 = 4 * 1024 * 1024;

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Tree {
    /// Workspace-relative file paths, sorted; folders are implied by the paths.
    pub files: Vec<String>,
    /// Files found, including any beyond the limit.
    pub total: usize,
    pub truncated: bool,
    /// Entries left out by .gitignore/.ignore, and version-control and Lantern's state folders.
    pub skipped: usize,
}

/// Every file the tools can see, as the walk of `list_files` finds them.
pub fn tree(workspace: &Workspace) -> Result<Tree, AppError> {
    let root = workspace.resolve(".")?;
    let walked = walk_files(workspace.root(), &root, None);
    let total = walked.files.len();
    Ok(Tree {
        files: walked
            .files
            .into_iter()
            .take(TREE_LIMIT)
            .map(|f| f.rel)
            .collect(),
        total,
        truncated: total > TREE_LIMIT,
        skipped: walked.tally.skipped.unwrap_or(0),
    })
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TextFile {
    /// Workspace-relative path.
    pub path: String,
    pub content: String,
}

pub fn read_text(workspace: &Workspace, path: &str) -> Result<TextFile, AppError> {
    let resolved = workspace.resolve(path)?;
    let file = workspace.open_read(&resolved)?;
    let mut bytes = Vec::new();
    // One byte past the limit tells a file at the limit from a larger one.
    file.take(EDITOR_MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| lantern_core::ToolError::from_io(&e, resolved.rel()))?;
    if bytes.len() as u64 > EDITOR_MAX_BYTES {
        return Err(AppError::invalid(format!(
            "{} is larger than {} MiB; the editor opens smaller files.",
            resolved.rel(),
            EDITOR_MAX_BYTES / 1024 / 1024
        )));
    }
    let content = String::from_utf8(bytes)
        .ok()
        .filter(|text| !text.contains('\0'))
        .ok_or_else(|| {
            AppError::invalid(format!(
                "{} is not a text file; the editor opens UTF-8 text only.",
                resolved.rel()
            ))
        })?;
    Ok(TextFile {
        path: resolved.rel().to_string(),
        content,
    })
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SavedFile {
    pub path: String,
    pub bytes_written: u64,
    pub created: bool,
}

/// Saves the user's own edit, atomically. The user's saves are not checkpointed: undo is for
/// the assistant's writes, and refuses to undo one the user has edited since.
pub fn save_text(workspace: &Workspace, path: &str, content: &str) -> Result<SavedFile, AppError> {
    let resolved = workspace.resolve(path)?;
    let outcome = workspace.save_user_edit(&resolved, content.as_bytes())?;
    Ok(SavedFile {
        path: resolved.rel().to_string(),
        bytes_written: outcome.bytes_written,
        created: outcome.created,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn workspace() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/main.ts"), "console.log(1)\n").unwrap();
        std::fs::write(dir.path().join(".gitignore"), "build/\n").unwrap();
        std::fs::create_dir_all(dir.path().join("build")).unwrap();
        std::fs::write(dir.path().join("build/out.js"), "x").unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        (dir, ws)
    }

    #[test]
    fn the_tree_lists_what_the_tools_see() {
        let (_dir, ws) = workspace();
        let tree = tree(&ws).unwrap();
        assert_eq!(tree.files, vec![".gitignore", "src/main.ts"]);
        assert!(!tree.truncated);
        assert!(tree.skipped >= 2, "build/ and .git/ are skipped");
    }

    #[test]
    fn reads_and_saves_text_inside_the_workspace() {
        let (dir, ws) = workspace();
        let saved = save_text(&ws, "src/new.ts", "export {}\n").unwrap();
        assert!(saved.created);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("src/new.ts")).unwrap(),
            "export {}\n"
        );
        assert_eq!(read_text(&ws, "src/new.ts").unwrap().content, "export {}\n");
    }

    #[test]
    fn refuses_paths_outside_and_binary_files() {
        let (dir, ws) = workspace();
        let outside = read_text(&ws, "../etc/passwd").unwrap_err();
        assert_eq!(outside.code, ErrorCode::PermissionDenied);
        assert!(save_text(&ws, "../escape.txt", "x").is_err());
        std::fs::write(dir.path().join("image.bin"), [0u8, 159, 146, 150]).unwrap();
        let binary = read_text(&ws, "image.bin").unwrap_err();
        assert_eq!(binary.code, ErrorCode::Invalid);
        assert!(binary.message.contains("not a text file"));
    }

    #[test]
    fn saving_under_git_is_refused() {
        let (_dir, ws) = workspace();
        let refused = save_text(&ws, ".git/config", "x").unwrap_err();
        assert_eq!(refused.code, ErrorCode::PermissionDenied);
    }
}
