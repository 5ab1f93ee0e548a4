use super::{ExampleFollowUp, PreviewKind, Resolved, ResultKind, Risk, Target, Tool, ToolContext};
use crate::error::ToolError;
use crate::walk::{add_notice, compile_glob, walk_checked};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

const DEFAULT_MAX_RESULTS: usize = 200;
const MAX_MAX_RESULTS: usize = 2000;

/// List the files in a workspace folder and all its subfolders, sorted by path, optionally
/// only those matching a glob pattern. Dotfiles such as .gitignore are listed; files ignored by
/// .gitignore/.ignore and the .git folder are not, and the result says how many entries were
/// skipped. Use it to see which files a
/// folder holds, or to count them.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Folder to list, relative to the workspace root. Defaults to "." (the whole workspace).
    #[schemars(extend("x-path" = "folder"))]
    pub directory: Option<String>,
    /// Glob the file path (relative to `directory`) must match, e.g. "*.rs" or "src/**/*.ts".
    /// `*` also matches inside subfolders; a pattern without "/" matches file names in any
    /// folder, e.g. "Cargo.toml".
    #[schemars(length(max = 1024), extend("x-glob" = "question"))]
    pub pattern: Option<String>,
    /// At most this many paths are returned (default 200, at most 2000).
    #[schemars(range(min = 1))]
    pub max_results: Option<u64>,
}

pub struct ListFiles;

impl Tool for ListFiles {
    type Input = Input;
    const NAME: &'static str = "list_files";
    const RISK: Risk = Risk::Read;
    const PREVIEW: PreviewKind = PreviewKind::None;
    const RESULT: ResultKind = ResultKind::FileList;
    const FOLLOW_UPS: &'static [ExampleFollowUp] = &[
        ExampleFollowUp {
            question: "List the Rust files in src.",
            args: r#"{"directory": "src", "pattern": "*.rs"}"#,
            reasoning: "List them",
            result: r##"{"success":true,"data":{"files":["src/lib.rs","src/main.rs"],"count":2},"error":null}"##,
            needs_call: false,
        },
        ExampleFollowUp {
            question: "Read the first Rust file in src.",
            args: r#"{"directory": "src", "pattern": "*.rs"}"#,
            reasoning: "Find the files first",
            result: r##"{"success":true,"data":{"files":["src/lib.rs","src/main.rs"],"count":2},"error":null}"##,
            needs_call: true,
        },
        ExampleFollowUp {
            question: "Read the test file for the parser.",
            args: r#"{"directory": "tests"}"#,
            reasoning: "Find the tests",
            result: r##"{"success":true,"data":{"files":["tests/parser.rs","tests/cli.rs"],"count":2},"error":null}"##,
            needs_call: true,
        },
    ];

    fn example() -> Value {
        json!({"directory": "src", "pattern": "*.ts"})
    }

    fn target(input: &Input) -> Target {
        Target::Paths(vec![input
            .directory
            .clone()
            .unwrap_or_else(|| ".".to_string())])
    }

    fn run(input: Input, target: &Resolved, ctx: &ToolContext) -> Result<Value, ToolError> {
        let dir = target.path()?;
        if !dir.exists() {
            return Err(
                ToolError::not_found(format!("Folder not found: {}", dir.rel()))
                    .with_hint("Call list_files without a directory to see the whole workspace."),
            );
        }
        if !dir.abs().is_dir() {
            return Err(
                ToolError::invalid(format!("{} is a file, not a folder", dir.rel()))
                    .with_hint("Use read_file to read a file."),
            );
        }
        let glob = input.pattern.as_deref().map(compile_glob).transpose()?;
        let limit = input
            .max_results
            .map_or(DEFAULT_MAX_RESULTS, |n| (n as usize).min(MAX_MAX_RESULTS));
        let walked = walk_checked(&ctx.workspace, dir, glob.as_ref())?;
        let count = walked.files.len();
        let files: Vec<&str> = walked
            .files
            .iter()
            .take(limit)
            .map(|f| f.rel.as_str())
            .collect();
        let mut data = json!({
            "directory": dir.rel(),
            "files": files,
            "count": count,
            "skipped_ignored_or_hidden": walked.tally.skipped.unwrap_or(0),
        });
        if let Some(p) = &input.pattern {
            data["pattern"] = Value::String(p.clone());
        }
        if count > limit {
            data["truncated"] = Value::Bool(true);
            data["notice"] = Value::String(format!(
                "Showing the first {limit} of {count} files. Narrow the directory or pattern, or raise max_results (up to {MAX_MAX_RESULTS})."
            ));
        }
        if walked.tally.stopped.is_some() {
            data["walk_incomplete"] = Value::Bool(true);
            data["entries_walked"] = json!(walked.tally.entries_walked);
        }
        for notice in walked.notices() {
            add_notice(&mut data, &notice);
        }
        if walked.tally.errors > 0 {
            data["unreadable_entries"] = json!(walked.tally.errors);
        }
        Ok(data)
    }
}
