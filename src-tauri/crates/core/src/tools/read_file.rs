use super::{PreviewKind, Resolved, ResultKind, Risk, Target, Tool, ToolContext};
use crate::error::ToolError;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::io::Read;

/// The most bytes of a file read_file returns in one call.
pub const MAX_RETURN_BYTES: usize = 64 * 1024;
/// The most lines read_file returns in one call.
pub const MAX_RETURN_LINES: usize = 2000;
/// Files larger than this are not read at all; the model is told to search instead.
pub const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// Read a text file from the workspace. Returns its content (or the requested line range), the
/// total number of lines, and a notice with the next start_line when the output was cut. Use it
/// to look up a value in a file, such as a version or a setting, or to explain what its code
/// does.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Path of an existing file of this project, relative to the workspace root.
    #[schemars(extend("x-path" = "file"))]
    pub path: String,
    /// First line to return, counting from 1. Defaults to 1.
    #[schemars(range(min = 1))]
    pub start_line: Option<u64>,
    /// Last line to return, inclusive. Defaults to the end of the file.
    #[schemars(range(min = 1))]
    pub end_line: Option<u64>,
}

pub struct ReadFile;

impl Tool for ReadFile {
    type Input = Input;
    const NAME: &'static str = "read_file";
    const RISK: Risk = Risk::Read;
    const PREVIEW: PreviewKind = PreviewKind::None;
    const RESULT: ResultKind = ResultKind::FileContent;

    fn example() -> Value {
        json!({"path": "package.json"})
    }

    fn target(input: &Input) -> Target {
        Target::Paths(vec![input.path.clone()])
    }

    fn run(input: Input, target: &Resolved, ctx: &ToolContext) -> Result<Value, ToolError> {
        let path = target.path()?;
        if !path.exists() {
            return Err(
                ToolError::not_found(format!("File not found: {}", path.rel()))
                    .with_hint("Use list_files to see which files exist."),
            );
        }
        let file = ctx.workspace.open_read(path)?;
        let size = file
            .metadata()
            .map_err(|e| ToolError::from_io(&e, path.rel()))?
            .len();
        if size > MAX_FILE_BYTES {
            return Err(ToolError::invalid(format!(
                "{} is {size} bytes, over the {MAX_FILE_BYTES}-byte limit for read_file",
                path.rel()
            ))
            .with_hint("Use search_code to find the part you need."));
        }
        let mut bytes = Vec::with_capacity(size as usize);
        file.take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| ToolError::from_io(&e, path.rel()))?;
        if looks_binary(&bytes) {
            return Err(ToolError::invalid(format!(
                "{} is a binary file ({size} bytes); read_file only returns text",
                path.rel()
            )));
        }
        let text = String::from_utf8(bytes).map_err(|e| {
            ToolError::invalid(format!(
                "{} is not valid UTF-8 text (invalid byte at offset {})",
                path.rel(),
                e.utf8_error().valid_up_to()
            ))
        })?;
        page(path.rel(), &text, input.start_line, input.end_line)
    }
}

/// A NUL byte in the first 8 KiB marks a binary file, as git and ripgrep decide.
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8192)].contains(&0)
}

/// Cuts the requested line window out of `text`, bounded by lines and bytes.
fn page(rel: &str, text: &str, start: Option<u64>, end: Option<u64>) -> Result<Value, ToolError> {
    let total_lines = text.lines().count() as u64;
    let start = start.unwrap_or(1);
    if start > total_lines.max(1) {
        return Err(ToolError::invalid(format!(
            "start_line {start} is past the end of {rel}, which has {total_lines} lines"
        )));
    }
    let end = end.unwrap_or(total_lines.max(1));
    if end < start {
        return Err(ToolError::invalid(format!(
            "end_line {end} is before start_line {start}"
        )));
    }
    let mut content = String::new();
    let mut last = start - 1;
    for (n, line) in text
        .split_inclusive('\n')
        .enumerate()
        .skip(start as usize - 1)
    {
        let n = n as u64 + 1;
        if n > end
            || (n - start) as usize >= MAX_RETURN_LINES
            || content.len() + line.len() > MAX_RETURN_BYTES
        {
            break;
        }
        content.push_str(line);
        last = n;
    }
    let mut data = json!({
        "path": rel,
        "content": content,
        "start_line": start,
        "end_line": last,
        "total_lines": total_lines,
    });
    let wanted_end = end.min(total_lines);
    if last < wanted_end {
        if last < start {
            // A single line longer than the byte budget.
            data["content"] = Value::String(text_prefix(text, start, MAX_RETURN_BYTES));
            data["notice"] = Value::String(format!(
                "Line {start} is longer than {MAX_RETURN_BYTES} bytes and was cut."
            ));
        } else {
            data["truncated"] = Value::Bool(true);
            data["notice"] = Value::String(format!(
                "Showing lines {start}-{last} of {total_lines}. Call read_file with start_line={} to read on.",
                last + 1
            ));
        }
    }
    Ok(data)
}

fn text_prefix(text: &str, line: u64, max: usize) -> String {
    let line_text = text.lines().nth(line as usize - 1).unwrap_or_default();
    let mut cut = max.min(line_text.len());
    while !line_text.is_char_boundary(cut) {
        cut -= 1;
    }
    line_text[..cut].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_with_notice() {
        let text: String = (1..=3000).map(|i| format!("line {i}\n")).collect();
        let v = page("a.txt", &text, None, None).unwrap();
        assert_eq!(v["total_lines"], 3000);
        assert_eq!(v["end_line"], 2000);
        assert!(v["notice"].as_str().unwrap().contains("start_line=2001"));
        let v = page("a.txt", &text, Some(2001), None).unwrap();
        assert_eq!(v["end_line"], 3000);
        assert!(v.get("notice").is_none());
    }

    #[test]
    fn line_range_is_inclusive() {
        let v = page("a", "a\nb\nc\nd\n", Some(2), Some(3)).unwrap();
        assert_eq!(v["content"], "b\nc\n");
        assert_eq!(v["total_lines"], 4);
    }

    #[test]
    fn bad_ranges_are_explained() {
        let e = page("a", "a\nb\n", Some(5), None).unwrap_err();
        assert!(e.message.contains("has 2 lines"), "{}", e.message);
        let e = page("a", "a\nb\n", Some(2), Some(1)).unwrap_err();
        assert!(e.message.contains("before start_line"));
    }

    #[test]
    fn empty_file_reads_as_empty() {
        let v = page("a", "", None, None).unwrap();
        assert_eq!(v["content"], "");
        assert_eq!(v["total_lines"], 0);
    }
}
