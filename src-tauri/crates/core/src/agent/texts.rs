//! The text of the files a step's call may name, for a backend that grounds an argument in a
//! file's content, and for the lines of a definition shown with a search's result.

use crate::code_index::ProjectIndex;
use crate::mentions::NamedPaths;
use crate::model::{FileTexts, KnownPaths};
use crate::question::Question;
use crate::sandbox::Workspace;
use crate::spec::ToolSpec;
use crate::tools::{current_content, ToolContext};
use crate::walk::{known_paths_of, walk_workspace};

/// Reads only the files the step offers as paths (visible to the tools: not ignored, hidden or
/// Lantern's own), through the sandbox, as text.
pub(super) struct VisibleTexts<'a> {
    pub workspace: &'a Workspace,
    pub known: &'a KnownPaths,
    /// Where the definitions of the files' code end, when it is asked.
    pub code_index: Option<&'a ProjectIndex>,
}

/// What a conversation has seen of the workspace since the files last changed: the files and
/// folders the tools see, and the names its code defines. Both come from one walk, made when
/// first needed in a turn and again after a call that may write.
#[derive(Default)]
pub(super) struct FilesSeen {
    known: Option<KnownPaths>,
    names: Option<Vec<String>>,
}

impl FilesSeen {
    /// The files may have changed: look again when next asked.
    pub fn forget(&mut self) {
        *self = FilesSeen::default();
    }

    /// The files the tools see, and the names the code defines when one of `tools` takes such
    /// a name (`"x-symbol"`; none otherwise, or when the index cannot be made), from the
    /// index brought up to date. Walks the workspace at most once for both.
    pub fn look(&mut self, ctx: &ToolContext, tools: &[ToolSpec]) -> (&KnownPaths, &[String]) {
        let takes_names = tools
            .iter()
            .any(|tool| tool.has_argument_marked("x-symbol"));
        let needs_walk = self.known.is_none() || (takes_names && self.names.is_none());
        let mut walked = needs_walk.then(|| walk_workspace(&ctx.workspace));
        let known = self.known.get_or_insert_with(|| match &walked {
            Some(Ok(walked)) => known_paths_of(walked),
            _ => KnownPaths::default(),
        });
        let names = self.names.get_or_insert_with(|| {
            if !takes_names {
                return Vec::new();
            }
            let walked = walked
                .take()
                .unwrap_or_else(|| walk_workspace(&ctx.workspace));
            match ctx.code_index.refresh_from(&ctx.workspace, walked, |_| {}) {
                Ok((index, _)) => index
                    .as_ref()
                    .map(|index| index.names().to_vec())
                    .unwrap_or_default(),
                Err(_) => Vec::new(),
            }
        });
        (known, names)
    }
}

/// The map of the workspace's code (see [`lantern_index::repo_map`]) in `budget` characters,
/// ranked toward the files `question` names (`named`) and the defined names it mentions, with
/// its heading; empty when the code defines nothing the index reads.
pub(super) fn code_map(
    workspace: &Workspace,
    code_index: &ProjectIndex,
    question: &Question,
    named: &NamedPaths,
    budget: usize,
) -> String {
    let Ok((index, _)) = code_index.refresh(workspace, |_| {}) else {
        return String::new();
    };
    let Some(index) = index.as_ref() else {
        return String::new();
    };
    let words: Vec<&str> = question
        .written
        .iter()
        .map(|w| w.trim_end_matches(['.', '/']))
        .filter(|w| !w.is_empty())
        .collect();
    let focus = lantern_index::Focus {
        files: index
            .files()
            .map(|(path, _)| path)
            .filter(|path| {
                named
                    .files
                    .binary_search_by(|f| f.as_str().cmp(path))
                    .is_ok()
            })
            .map(str::to_string)
            .collect(),
        names: words
            .iter()
            .map(|w| lantern_index::split_member(w).1)
            .filter(|w| !index.definitions(w).is_empty())
            .map(str::to_string)
            .collect(),
    };
    const HEADING: &str = "MAP OF THE PROJECT'S CODE (its most used definitions, by file):\n";
    let map = lantern_index::repo_map(index, &focus, budget.saturating_sub(HEADING.len()));
    match map.is_empty() {
        true => map,
        false => format!("{HEADING}{map}"),
    }
}

impl FileTexts for VisibleTexts<'_> {
    fn text_of(&self, rel: &str) -> Option<String> {
        if !self.known.has_file(rel) {
            return None;
        }
        let path = self.workspace.resolve(rel).ok()?;
        let bytes = current_content(self.workspace, &path).ok()??;
        String::from_utf8(bytes).ok()
    }

    fn definition_ends(&self, lines: &[(&str, u64)]) -> Vec<Option<u32>> {
        let Some(index) = self.code_index else {
            return vec![None; lines.len()];
        };
        // Only the files the step may name are read.
        let visible = lines.iter().filter(|(rel, _)| self.known.has_file(rel));
        let mut ends = index
            .definition_ends(self.workspace, visible.copied())
            .into_iter();
        lines
            .iter()
            .map(|(rel, _)| match self.known.has_file(rel) {
                true => ends.next().flatten(),
                false => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_known_files_are_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "hidden\n").unwrap();
        let workspace = Workspace::open(dir.path()).unwrap();
        let known = KnownPaths {
            files: vec!["a.txt".to_string()],
            folders: vec![".".to_string()],
        };
        let texts = VisibleTexts {
            workspace: &workspace,
            known: &known,
            code_index: None,
        };
        assert_eq!(texts.text_of("a.txt").as_deref(), Some("alpha\n"));
        assert_eq!(texts.text_of("secret.txt"), None);
        assert_eq!(texts.text_of("../a.txt"), None);
    }
}
