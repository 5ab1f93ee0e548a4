use super::writes::{current_content, ConfigFormat, Rewrite};
use super::{PreviewKind, Resolved, ResultKind, Risk, Target, Tool, ToolContext};
use crate::error::ToolError;
use crate::sandbox::ResolvedPath;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use similar::{ChangeTag, TextDiff};
use std::time::Duration;

/// The most bytes of unified diff returned with a write.
const MAX_DIFF_BYTES: usize = 4096;

/// Write a text file in the workspace, replacing its whole content (or creating it, with any
/// missing folders). Returns what it wrote as a unified diff. The user may be asked
/// to approve the write first. Use it to create or add a new file, or to rewrite a file whole.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Path of the file to write, relative to the workspace root: an existing file, or a new
    /// name in a folder of the project.
    #[schemars(extend("x-path" = "new_or_existing_file"))]
    pub path: String,
    /// The complete new content of the file.
    #[schemars(extend("x-from" = "question"))]
    pub content: String,
}

pub struct WriteFile;

/// Line counts and a bounded unified diff of `old` → `new`.
pub(crate) fn diff_summary(rel: &str, old: Option<&[u8]>, new: &str) -> Value {
    let old_text = old.map(String::from_utf8_lossy).unwrap_or_default();
    // Line matching gives up after a second and falls back to a coarser diff, so a write of a
    // huge, wholly rewritten file is never held up by its summary.
    let diff = TextDiff::configure()
        .timeout(Duration::from_secs(1))
        .diff_lines(old_text.as_ref(), new);
    let (mut added, mut removed) = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    let from = if old.is_some() {
        format!("a/{rel}")
    } else {
        "/dev/null".to_string()
    };
    let mut unified = diff
        .unified_diff()
        .context_radius(3)
        .header(&from, &format!("b/{rel}"))
        .to_string();
    let total = unified.len();
    if total > MAX_DIFF_BYTES {
        let mut cut = MAX_DIFF_BYTES;
        while !unified.is_char_boundary(cut) {
            cut -= 1;
        }
        unified.truncate(cut);
        unified.push_str(&format!("\n… diff cut: {} more bytes\n", total - cut));
    }
    json!({"lines_added": added, "lines_removed": removed, "unified": unified})
}

/// See [`ConfigFormat`]: a manifest or settings file as it stands against the content the call
/// gives it (another file is not read for it). A path that cannot be read as a file is left to
/// the steps after, which say why.
fn keeps_whole(input: &Input, path: &ResolvedPath, ctx: &ToolContext) -> Result<(), ToolError> {
    let Some(format) = ConfigFormat::of(path.rel()) else {
        return Ok(());
    };
    match current_content(&ctx.workspace, path) {
        Ok(Some(old)) => {
            format.keeps_whole(path.rel(), &String::from_utf8_lossy(&old), &input.content)
        }
        _ => Ok(()),
    }
}

impl Tool for WriteFile {
    type Input = Input;
    const NAME: &'static str = "write_file";
    const RISK: Risk = Risk::Write;
    const PREVIEW: PreviewKind = PreviewKind::Diff;
    const RESULT: ResultKind = ResultKind::Write;

    fn example() -> Value {
        json!({"path": "notes/todo.md", "content": "# To do\n- write tests\n"})
    }

    fn target(input: &Input) -> Target {
        Target::Paths(vec![input.path.clone()])
    }

    fn check(input: &Input, target: &Resolved, ctx: &ToolContext) -> Result<(), ToolError> {
        keeps_whole(input, target.path()?, ctx)
    }

    fn preview(input: &Input, target: &Resolved, ctx: &ToolContext) -> Option<Value> {
        let path = target.path().ok()?;
        let old = current_content(&ctx.workspace, path).ok()?;
        let mut preview = diff_summary(path.rel(), old.as_deref(), &input.content);
        preview["path"] = Value::String(path.rel().to_string());
        preview["created"] = Value::Bool(old.is_none());
        preview["old_content"] = old
            .map(|b| Value::String(String::from_utf8_lossy(&b).into_owned()))
            .unwrap_or(Value::Null);
        Some(preview)
    }

    fn rewrites(input: &Input, target: &Resolved, ctx: &ToolContext) -> Vec<Rewrite> {
        let Ok(path) = target.path() else {
            return Vec::new();
        };
        match current_content(&ctx.workspace, path) {
            Ok(Some(old)) => vec![Rewrite {
                path: path.rel().to_string(),
                old: String::from_utf8_lossy(&old).into_owned(),
                new: input.content.clone(),
            }],
            _ => Vec::new(),
        }
    }

    fn run(input: Input, target: &Resolved, ctx: &ToolContext) -> Result<Value, ToolError> {
        let path = target.path()?;
        if path.rel() == "." {
            return Err(ToolError::invalid(
                "write_file needs a file path, not the workspace root",
            ));
        }
        // Judged again on the file as it is now: it may have changed while the user decided.
        keeps_whole(&input, path, ctx)?;
        // Through the checkpointed write, so that undo covers it.
        let written = ctx.write(path, input.content.as_bytes())?;
        let mut data = diff_summary(path.rel(), written.before.as_deref(), &input.content);
        written.report_into(&mut data);
        Ok(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_that_would_break_a_json_file_is_refused_but_a_new_one_is_written() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("app.json"), "{\"port\": 8080}\n").unwrap();
        let ctx = ToolContext::new(crate::sandbox::Workspace::open(dir.path()).unwrap(), None);
        let write = |path: &str, content: &str| {
            let input = Input {
                path: path.to_string(),
                content: content.to_string(),
            };
            let target = WriteFile::target(&input).resolve(&ctx.workspace).unwrap();
            WriteFile::check(&input, &target, &ctx)?;
            WriteFile::run(input, &target, &ctx)
        };
        let refused = write("app.json", "{\"port\": 9090\n").unwrap_err();
        assert!(
            refused.message.contains("invalid JSON"),
            "{}",
            refused.message
        );
        let kept = std::fs::read_to_string(dir.path().join("app.json")).unwrap();
        assert_eq!(kept, "{\"port\": 8080}\n");
        write("app.json", "{\"port\": 9090}\n").unwrap();
        // A new file is the model's own to shape: nothing to keep whole.
        write("draft.json", "{\"port\":").unwrap();
    }

    #[test]
    fn diff_counts_lines() {
        let d = diff_summary("a.txt", Some(b"one\ntwo\n"), "one\nthree\nfour\n");
        assert_eq!(d["lines_added"], 2);
        assert_eq!(d["lines_removed"], 1);
        assert!(d["unified"].as_str().unwrap().contains("+three"));
    }

    #[test]
    fn new_file_diffs_from_dev_null() {
        let d = diff_summary("a.txt", None, "x\n");
        assert!(d["unified"].as_str().unwrap().starts_with("--- /dev/null"));
    }

    #[test]
    fn huge_diffs_are_cut() {
        let new: String = (0..10_000).map(|i| format!("line {i}\n")).collect();
        let d = diff_summary("a.txt", None, &new);
        let u = d["unified"].as_str().unwrap();
        assert!(u.len() < MAX_DIFF_BYTES + 100);
        assert!(u.contains("diff cut"));
        assert_eq!(d["lines_added"], 10_000);
    }
}
