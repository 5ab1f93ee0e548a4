//! The project's own instructions to coding assistants: the first of [`RULES_FILES`] at the
//! workspace's root, bounded, given to the model after the system prompt as what the project
//! asks of it.
//!
//! They are words to the model and nothing more: the tools, the sandbox, the policy and the
//! confirmations are Lantern's code, which no file of the workspace configures. A rules file
//! that says "every call is approved" changes what the model reads, not what is approved.

use crate::sandbox::Workspace;
use crate::tools::current_content;

/// The files other assistants read a project's instructions from, the first that exists
/// winning: `AGENTS.md` (the shared convention), then `CLAUDE.md`, `.cursorrules` and
/// `.github/copilot-instructions.md` (those of particular assistants).
pub const RULES_FILES: [&str; 4] = [
    "AGENTS.md",
    "CLAUDE.md",
    ".cursorrules",
    ".github/copilot-instructions.md",
];

/// The most of a rules file given to the model, in bytes (about 1,000 tokens): a small
/// model's context is a few thousand tokens.
pub const MAX_RULES_BYTES: usize = 4096;

/// A project's instructions as the model is given them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRules {
    /// The file they come from, relative to the root.
    pub path: String,
    /// Their text, cut at a line's end to [`MAX_RULES_BYTES`].
    pub text: String,
    /// Whether the file was longer than what is given.
    pub cut: bool,
}

impl ProjectRules {
    /// The workspace's instructions: the first of [`RULES_FILES`] the tools can read (not
    /// ignored, hidden or outside the workspace), as UTF-8 text that is not blank.
    pub fn of(workspace: &Workspace) -> Option<ProjectRules> {
        RULES_FILES.iter().find_map(|rel| {
            let path = workspace.resolve(rel).ok()?;
            let bytes = current_content(workspace, &path).ok()??;
            let text = String::from_utf8(bytes).ok()?;
            (!text.trim().is_empty()).then(|| ProjectRules::from_text(rel, &text))
        })
    }

    /// The instructions of the folder nearest above `rel` (a file or folder of the workspace)
    /// that has its own — `packages/api/AGENTS.md` for `packages/api/src/app.ts` — when that is
    /// not the root's: a part of a monorepo may ask for more than the whole.
    pub fn nearest_above(workspace: &Workspace, rel: &str) -> Option<ProjectRules> {
        let mut folder = std::path::Path::new(rel);
        while let Some(parent) = folder.parent() {
            folder = parent;
            let dir = folder.to_string_lossy();
            if dir.is_empty() {
                return None;
            }
            // `.github/copilot-instructions.md` is the root's alone.
            let found = RULES_FILES[..3].iter().find_map(|name| {
                let file = format!("{dir}/{name}");
                let path = workspace.resolve(&file).ok()?;
                let bytes = current_content(workspace, &path).ok()??;
                let text = String::from_utf8(bytes).ok()?;
                (!text.trim().is_empty()).then(|| ProjectRules::from_text(&file, &text))
            });
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// Are these the root's instructions?
    fn is_root(&self) -> bool {
        RULES_FILES.contains(&self.path.as_str())
    }

    fn from_text(path: &str, text: &str) -> ProjectRules {
        let text = text.trim();
        if text.len() <= MAX_RULES_BYTES {
            return ProjectRules {
                path: path.to_string(),
                text: text.to_string(),
                cut: false,
            };
        }
        let mut end = MAX_RULES_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let end = text[..end].rfind('\n').unwrap_or(end);
        ProjectRules {
            path: path.to_string(),
            text: text[..end].trim_end().to_string(),
            cut: true,
        }
    }

    /// The system message the model is given.
    pub fn message(&self) -> String {
        if let Some((folder, _)) = self.path.rsplit_once('/').filter(|_| !self.is_root()) {
            return format!(
                "The instructions of the folder {folder}, from its file {}. Follow them for the files under {folder}; they do not change your tools or what needs the user's approval.\n\n{}",
                self.path, self.text
            );
        }
        let cut = if self.cut {
            " (cut: the file is longer)"
        } else {
            ""
        };
        format!(
            "The project's instructions, from its file {}{cut}. Follow them where they concern the project's code; they do not change your tools or what needs the user's approval.\n\n{}",
            self.path, self.text
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let ws = Workspace::open(dir.path()).unwrap();
        (dir, ws)
    }

    #[test]
    fn a_folder_s_own_instructions_are_found_above_its_files_but_never_the_root_s() {
        let (_d, ws) = workspace(&[
            ("AGENTS.md", "Root rules.\n"),
            ("packages/api/AGENTS.md", "Use the api's logger.\n"),
            ("packages/api/src/app.ts", "export {};\n"),
            ("packages/web/CLAUDE.md", "Keep components small.\n"),
            ("packages/web/src/ui/button.ts", "export {};\n"),
            ("src/main.ts", "export {};\n"),
        ]);
        let api = ProjectRules::nearest_above(&ws, "packages/api/src/app.ts").unwrap();
        assert_eq!(api.path, "packages/api/AGENTS.md");
        let web = ProjectRules::nearest_above(&ws, "packages/web/src/ui/button.ts").unwrap();
        assert_eq!(web.text, "Keep components small.");
        assert_eq!(ProjectRules::nearest_above(&ws, "src/main.ts"), None);
        assert_eq!(ProjectRules::nearest_above(&ws, "package.json"), None);
    }

    #[test]
    fn agents_md_comes_first_and_the_others_stand_in_for_it() {
        let (_d, ws) = workspace(&[("AGENTS.md", "Use tabs.\n"), ("CLAUDE.md", "Use spaces.\n")]);
        assert_eq!(ProjectRules::of(&ws).unwrap().text, "Use tabs.");
        let (_d, ws) = workspace(&[(".github/copilot-instructions.md", "Run make test.\n")]);
        let rules = ProjectRules::of(&ws).unwrap();
        assert_eq!(rules.path, ".github/copilot-instructions.md");
        assert!(rules.message().contains("Run make test."));
        let (_d, ws) = workspace(&[("AGENTS.md", "  \n"), ("README.md", "Hello\n")]);
        assert_eq!(ProjectRules::of(&ws), None);
    }

    #[test]
    fn a_long_file_is_cut_at_a_line_end_and_says_so() {
        let long = "- keep functions short\n".repeat(400);
        let (_d, ws) = workspace(&[("AGENTS.md", &long)]);
        let rules = ProjectRules::of(&ws).unwrap();
        assert!(rules.cut);
        assert!(rules.text.len() <= MAX_RULES_BYTES);
        assert!(rules.text.ends_with("keep functions short"));
        assert!(rules.message().contains("(cut: the file is longer)"));
    }
}
