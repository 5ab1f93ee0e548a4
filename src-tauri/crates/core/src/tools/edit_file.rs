use super::text_match::{find_unique, Miss, Replacement};
use super::write_file::diff_summary;
use super::writes::{current_content, ConfigFormat, Rewrite};
use super::{PreviewKind, Resolved, ResultKind, Risk, Target, Tool, ToolContext};
use crate::error::ToolError;
use crate::sandbox::ResolvedPath;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

/// Change part of an existing file: the old text, copied from the file as it stands there,
/// is replaced by the new text. The old text must be found exactly once in the file; a few
/// whole lines are best. Use it to change, set, raise, lower or bump a value, to fix a bug, to
/// rename something, or to add or remove a line in a file (to add a line, copy the line before
/// it as the old text, and give that line followed by the new one as the new text).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Path of an existing file of this project, relative to the workspace root.
    #[schemars(extend("x-path" = "file"))]
    pub path: String,
    /// The text to replace, exactly as it stands in the file now, found there only once.
    #[schemars(extend("x-span-of" = "path"))]
    pub old_text: String,
    /// The text that takes its place.
    #[schemars(extend("x-replaces" = "old_text"))]
    pub new_text: String,
}

pub struct EditFile;

/// The file's current text and where the edit goes in it.
fn place(input: &Input, path: &ResolvedPath, ctx: &ToolContext) -> Result<Placed, ToolError> {
    if input.old_text.trim().is_empty() {
        return Err(ToolError::invalid(
            "old_text is empty: copy the lines to change from the file",
        )
        .with_hint("To create a file or replace all of it, use write_file."));
    }
    if input.old_text == input.new_text {
        return Err(ToolError::invalid(
            "old_text and new_text are the same: the edit would change nothing",
        ));
    }
    let Some(bytes) = current_content(&ctx.workspace, path)? else {
        return Err(
            ToolError::not_found(format!("File not found: {}", path.rel()))
                .with_hint("To create a file, use write_file."),
        );
    };
    let content = String::from_utf8(bytes).map_err(|_| {
        ToolError::invalid(format!(
            "{} is not UTF-8 text; edit_file only changes text files",
            path.rel()
        ))
    })?;
    match find_unique(&content, &input.old_text, &input.new_text) {
        Ok(replacement) => Ok(Placed {
            content,
            replacement,
        }),
        Err(miss) => Err(explain(path.rel(), miss)),
    }
}

struct Placed {
    content: String,
    replacement: Replacement,
}

impl Placed {
    fn new_content(&self) -> String {
        self.replacement.apply(&self.content)
    }

    /// See [`ConfigFormat`]: the edit must leave a manifest or settings file parsable (another
    /// file's new content is not even made for it).
    fn keeps_whole(&self, rel: &str) -> Result<(), ToolError> {
        match ConfigFormat::of(rel) {
            Some(format) => format.keeps_whole(rel, &self.content, &self.new_content()),
            None => Ok(()),
        }
    }

    /// The diff summary of the edit, with which matcher found the old text and where.
    fn summary(&self, rel: &str) -> Value {
        let mut data = diff_summary(rel, Some(self.content.as_bytes()), &self.new_content());
        data["matched_by"] = json!(self.replacement.matcher);
        data["line"] = json!(self.replacement.line);
        data
    }
}

/// A miss in words the model can act on: where the old text stands several times, or which
/// lines come closest to it.
fn explain(rel: &str, miss: Miss) -> ToolError {
    match miss {
        Miss::Ambiguous { lines, .. } => {
            let at: Vec<String> = lines.iter().map(usize::to_string).collect();
            ToolError::invalid(format!(
                "old_text is found {} times in {rel} (lines {}); it must be found once",
                lines.len(),
                at.join(", ")
            ))
            .with_hint("Copy more of the lines around the place to change into old_text.")
            .with_details(json!({"lines": lines}))
        }
        Miss::NotFound {
            closest,
            new_text_at,
        } => {
            let mut message = format!("old_text is not in {rel}.");
            if let Some(line) = new_text_at {
                message.push_str(&format!(
                    " new_text is already there, at line {line}: the change may have been made."
                ));
            }
            if let Some((line, text)) = closest.first() {
                message.push_str(&format!(
                    " Did you mean line {line}: {}",
                    super::bounded(text, 300)
                ));
            }
            ToolError::not_found(message)
                .with_hint("Copy old_text exactly from the file; read_file shows it.")
                .with_details(json!({
                    "closest": closest
                        .iter()
                        .map(|(line, text)| json!({"line": line, "text": text}))
                        .collect::<Vec<_>>(),
                    "new_text_at": new_text_at,
                }))
        }
    }
}

impl Tool for EditFile {
    type Input = Input;
    const NAME: &'static str = "edit_file";
    const RISK: Risk = Risk::Write;
    const PREVIEW: PreviewKind = PreviewKind::Diff;
    const RESULT: ResultKind = ResultKind::Write;

    fn example() -> Value {
        json!({"path": "config.toml", "old_text": "port = 8080", "new_text": "port = 9090"})
    }

    fn target(input: &Input) -> Target {
        Target::Paths(vec![input.path.clone()])
    }

    fn check(input: &Input, target: &Resolved, ctx: &ToolContext) -> Result<(), ToolError> {
        let path = target.path()?;
        place(input, path, ctx)?.keeps_whole(path.rel())
    }

    fn preview(input: &Input, target: &Resolved, ctx: &ToolContext) -> Option<Value> {
        let path = target.path().ok()?;
        let placed = place(input, path, ctx).ok()?;
        let mut preview = placed.summary(path.rel());
        preview["path"] = json!(path.rel());
        preview["created"] = json!(false);
        preview["old_content"] = json!(placed.content);
        Some(preview)
    }

    fn rewrites(input: &Input, target: &Resolved, ctx: &ToolContext) -> Vec<Rewrite> {
        let Ok(path) = target.path() else {
            return Vec::new();
        };
        let Ok(placed) = place(input, path, ctx) else {
            return Vec::new();
        };
        let new = placed.new_content();
        vec![Rewrite {
            path: path.rel().to_string(),
            old: placed.content,
            new,
        }]
    }

    fn run(input: Input, target: &Resolved, ctx: &ToolContext) -> Result<Value, ToolError> {
        let path = target.path()?;
        // Placed again on the file as it is now: it may have changed while the user decided.
        let placed = place(&input, path, ctx)?;
        placed.keeps_whole(path.rel())?;
        let written = ctx.write(path, placed.new_content().as_bytes())?;
        let mut data = placed.summary(path.rel());
        written.report_into(&mut data);
        Ok(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Workspace;

    fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            std::fs::write(dir.path().join(rel), text).unwrap();
        }
        let ctx = ToolContext::new(Workspace::open(dir.path()).unwrap(), None);
        (dir, ctx)
    }

    fn edit(ctx: &ToolContext, path: &str, old: &str, new: &str) -> Result<Value, ToolError> {
        let input = Input {
            path: path.to_string(),
            old_text: old.to_string(),
            new_text: new.to_string(),
        };
        let target = EditFile::target(&input).resolve(&ctx.workspace).unwrap();
        EditFile::check(&input, &target, ctx)?;
        EditFile::run(input, &target, ctx)
    }

    #[test]
    fn an_edit_that_would_break_a_json_or_toml_file_is_refused_and_the_file_kept() {
        let manifest =
            "{\n  \"name\": \"shop\",\n  \"version\": \"1.2.0\",\n  \"private\": true\n}\n";
        let (dir, ctx) = workspace(&[("package.json", manifest), ("notes.txt", "a: 1\n")]);
        let broken = edit(
            &ctx,
            "package.json",
            "\"version\": \"1.2.0\",\n",
            "version\": \"1.3.0\"},",
        )
        .unwrap_err();
        assert!(
            broken.message.contains("invalid JSON"),
            "{}",
            broken.message
        );
        assert!(broken.hint.is_some());
        let on_disk = std::fs::read_to_string(dir.path().join("package.json")).unwrap();
        assert_eq!(on_disk, manifest, "nothing was written");
        edit(&ctx, "package.json", "\"1.2.0\"", "\"1.3.0\"").unwrap();
        // TOML too: a value left out is refused, a value changed is not.
        std::fs::write(dir.path().join("app.toml"), "[server]\nport = 8080\n").unwrap();
        let broken = edit(&ctx, "app.toml", "port = 8080", "port = ").unwrap_err();
        assert!(
            broken.message.contains("invalid TOML"),
            "{}",
            broken.message
        );
        edit(&ctx, "app.toml", "port = 8080", "port = 9090").unwrap();
        // Other files are not judged, nor a file that did not parse before.
        edit(&ctx, "notes.txt", "a: 1", "a: {").unwrap();
        std::fs::write(
            dir.path().join("tsconfig.json"),
            "{ // strict\n \"a\": 1 }\n",
        )
        .unwrap();
        edit(&ctx, "tsconfig.json", "\"a\": 1", "\"a\": ").unwrap();
    }

    #[test]
    fn an_edit_that_would_break_a_yaml_file_is_refused_and_the_file_kept() {
        let workflow = "on:\n  push:\n    branches: [main]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make test\n";
        let (dir, ctx) = workspace(&[("ci.yml", workflow)]);
        // A bracket left open, and a step out of line with its list: both refused.
        for (old, new) in [
            ("[main]", "[main, dev"),
            (
                "      - run: make test",
                "      - run: make test\n     - run: make lint",
            ),
        ] {
            let broken = edit(&ctx, "ci.yml", old, new).unwrap_err();
            assert!(
                broken.message.contains("invalid YAML"),
                "{}",
                broken.message
            );
        }
        let on_disk = std::fs::read_to_string(dir.path().join("ci.yml")).unwrap();
        assert_eq!(on_disk, workflow, "nothing was written");
        // A list grown in line, and a value changed, are written.
        edit(&ctx, "ci.yml", "[main]", "[main, dev]").unwrap();
        edit(&ctx, "ci.yml", "ubuntu-latest", "debian-12").unwrap();
        let on_disk = std::fs::read_to_string(dir.path().join("ci.yml")).unwrap();
        assert!(on_disk.contains("branches: [main, dev]\n"), "{on_disk}");
        assert!(on_disk.contains("runs-on: debian-12\n"), "{on_disk}");
    }

    #[test]
    fn a_config_file_is_judged_whatever_the_case_of_its_extension() {
        let workflow = "jobs:\n  test:\n    branches: [main]\n";
        let (dir, ctx) = workspace(&[("CI.YML", workflow), ("Settings.JSON", "{\"a\": 1}\n")]);
        let broken = edit(&ctx, "CI.YML", "[main]", "[main, dev").unwrap_err();
        assert!(
            broken.message.contains("invalid YAML"),
            "{}",
            broken.message
        );
        let broken = edit(&ctx, "Settings.JSON", "1}", "1,}").unwrap_err();
        assert!(
            broken.message.contains("invalid JSON"),
            "{}",
            broken.message
        );
        let on_disk = std::fs::read_to_string(dir.path().join("CI.YML")).unwrap();
        assert_eq!(on_disk, workflow, "nothing was written");
    }

    #[test]
    fn an_edit_changes_the_one_place_and_says_how_it_matched() {
        let (dir, ctx) = workspace(&[("a.toml", "name = \"x\"\nport = 8080\n")]);
        let data = edit(&ctx, "a.toml", "port = 8080", "port = 9090").unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.toml")).unwrap(),
            "name = \"x\"\nport = 9090\n"
        );
        assert_eq!(data["matched_by"], "exact");
        assert_eq!(data["line"], 2);
        assert_eq!(
            (data["lines_added"].clone(), data["lines_removed"].clone()),
            (json!(1), json!(1))
        );
    }

    #[test]
    fn a_miss_names_the_closest_line_and_leaves_the_file_alone() {
        let (dir, ctx) = workspace(&[("a.js", "const MAX_LENGTH = 256\n")]);
        let error = edit(
            &ctx,
            "a.js",
            "const MAX_LENGHT = 256",
            "const MAX_LENGTH = 512",
        )
        .unwrap_err();
        assert!(error
            .message
            .contains("Did you mean line 1: const MAX_LENGTH = 256"));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.js")).unwrap(),
            "const MAX_LENGTH = 256\n"
        );
    }

    #[test]
    fn an_edit_already_made_is_recognised() {
        let (_dir, ctx) = workspace(&[("a.txt", "port = 9090\n")]);
        let error = edit(&ctx, "a.txt", "port = 8080", "port = 9090").unwrap_err();
        assert!(
            error.message.contains("already there, at line 1"),
            "{}",
            error.message
        );
    }

    #[test]
    fn an_ambiguous_edit_is_refused_with_the_lines() {
        let (_dir, ctx) = workspace(&[("a.txt", "x\ny\nx\n")]);
        let error = edit(&ctx, "a.txt", "x", "z").unwrap_err();
        assert!(error.message.contains("found 2 times"), "{}", error.message);
        assert!(error.message.contains("lines 1, 3"), "{}", error.message);
    }

    #[test]
    fn a_missing_file_or_empty_or_unchanged_edit_is_refused() {
        let (_dir, ctx) = workspace(&[("a.txt", "x\n")]);
        assert!(edit(&ctx, "b.txt", "x", "y")
            .unwrap_err()
            .message
            .contains("not found"));
        assert!(edit(&ctx, "a.txt", "  ", "y")
            .unwrap_err()
            .message
            .contains("empty"));
        assert!(edit(&ctx, "a.txt", "x", "x")
            .unwrap_err()
            .message
            .contains("same"));
    }
}
