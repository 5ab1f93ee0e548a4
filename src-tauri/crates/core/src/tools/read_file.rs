use super::{ExampleFollowUp, PreviewKind, Resolved, ResultKind, Risk, Target, Tool, ToolContext};
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
/// A file read whole from its first line that is longer than this is led by its outline (the
/// definitions it holds, with their lines), when its language is one the code index reads.
pub const OUTLINE_FROM_LINES: u64 = 200;
/// The most definitions an outline lists.
const MAX_OUTLINE: usize = 60;

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
    /// Read only the definition of this name in the file (a function, class, method or other
    /// definition it holds), e.g. "parse_args", or "Config.load" for a member; instead of a
    /// line range.
    #[schemars(length(min = 1, max = 200))]
    pub symbol: Option<String>,
}

pub struct ReadFile;

impl Tool for ReadFile {
    type Input = Input;
    const NAME: &'static str = "read_file";
    const RISK: Risk = Risk::Read;
    const PREVIEW: PreviewKind = PreviewKind::None;
    const RESULT: ResultKind = ResultKind::FileContent;
    const FOLLOW_UPS: &'static [ExampleFollowUp] = &[
        ExampleFollowUp {
            question: "What's in package.json?",
            args: r#"{"path": "package.json"}"#,
            reasoning: "Read the manifest",
            result: r##"{"success":true,"data":{"path":"package.json","content":"{\"name\": \"shop\", \"version\": \"1.2.0\"}","total_lines":1},"error":null}"##,
            needs_call: false,
        },
        ExampleFollowUp {
            question: "What version does Cargo.toml declare?",
            args: r#"{"path": "Cargo.toml"}"#,
            reasoning: "The version is in the manifest",
            result: r##"{"success":true,"data":{"path":"Cargo.toml","content":"[package]\nname = \"calc\"\nversion = \"0.3.1\"\n","total_lines":3},"error":null}"##,
            needs_call: false,
        },
        ExampleFollowUp {
            question: "Fix the typo in the title of README.md.",
            args: r#"{"path": "README.md"}"#,
            reasoning: "See the title first",
            result: r##"{"success":true,"data":{"path":"README.md","content":"# Shpo\n","total_lines":1},"error":null}"##,
            needs_call: true,
        },
        ExampleFollowUp {
            question: "Add the line 'done' to the end of notes.md.",
            args: r#"{"path": "notes.md"}"#,
            reasoning: "Read it before changing it",
            result: r##"{"success":true,"data":{"path":"notes.md","content":"- buy milk\n","total_lines":1},"error":null}"##,
            needs_call: true,
        },
    ];

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
        match input.symbol.as_deref().map(str::trim) {
            Some(_) if input.start_line.is_some() || input.end_line.is_some() => Err(
                ToolError::invalid("give either symbol or a line range, not both")
                    .with_hint("Leave out start_line and end_line to read a definition."),
            ),
            Some(symbol) => read_definition(path.rel(), &text, symbol),
            None => {
                let data = page(path.rel(), &text, input.start_line, input.end_line)?;
                let whole = input.start_line.unwrap_or(1) == 1 && input.end_line.is_none();
                Ok(match whole {
                    true => led_by_outline(path.rel(), &text, data),
                    false => data,
                })
            }
        }
    }
}

/// The lines of the definition of `symbol` in the file `rel` (its text), found by the code
/// index's reading of the file; a name the file does not define is an error that lists what
/// it does define.
fn read_definition(rel: &str, text: &str, symbol: &str) -> Result<Value, ToolError> {
    let Some(language) = lantern_index::Language::of_path(rel) else {
        return Err(ToolError::invalid(format!(
            "{rel} is not in a language whose definitions can be found (Rust, Python, JavaScript, TypeScript, Go)"
        ))
        .with_hint("Use search_code to find the line, then read_file with start_line."));
    };
    let symbols = lantern_index::symbols_of(language, text);
    let member = lantern_index::split_member(symbol);
    let found = symbols.definitions.iter().find(|d| d.is(member));
    let Some(definition) = found else {
        let names: Vec<&str> = symbols
            .definitions
            .iter()
            .map(|d| d.name.as_str())
            .take(MAX_OUTLINE)
            .collect();
        let hint = match names.is_empty() {
            true => "It defines nothing the index recognises; read it by lines.".to_string(),
            false => format!("It defines: {}.", names.join(", ")),
        };
        return Err(
            ToolError::not_found(format!("{rel} does not define {symbol}")).with_hint(hint),
        );
    };
    let mut data = page(
        rel,
        text,
        Some(u64::from(definition.start_line)),
        Some(u64::from(definition.end_line)),
    )?;
    data["symbol"] = json!(symbol);
    data["kind"] = json!(definition.kind.as_str());
    Ok(data)
}

/// A long file read from its start, its outline first: what it defines and where, so that the
/// next read can be of the part that matters.
fn led_by_outline(rel: &str, text: &str, data: Value) -> Value {
    let long = data["total_lines"].as_u64().unwrap_or(0) > OUTLINE_FROM_LINES;
    let Some(language) = lantern_index::Language::of_path(rel).filter(|_| long) else {
        return data;
    };
    let definitions = lantern_index::symbols_of(language, text).definitions;
    if definitions.is_empty() {
        return data;
    }
    let outline: Vec<String> = definitions
        .iter()
        .take(MAX_OUTLINE)
        .map(|d| {
            let member = d.parent.as_ref().map_or(String::new(), |p| format!("{p}."));
            format!(
                "{}-{} {} {member}{}",
                d.start_line,
                d.end_line,
                d.kind.as_str(),
                d.name
            )
        })
        .collect();
    let mut led = json!({"path": rel, "outline": outline});
    if definitions.len() > MAX_OUTLINE {
        led["outline_cut"] = json!(definitions.len() - MAX_OUTLINE);
    }
    if let (Value::Object(led), Value::Object(rest)) = (&mut led, data) {
        led.extend(rest.into_iter().filter(|(k, _)| k != "path"));
    }
    led
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
    fn a_symbol_reads_just_its_definition() {
        let text = "import os\n\nclass Cart:\n    def total(self):\n        return 0\n\ndef other():\n    pass\n";
        let v = read_definition("shop/cart.py", text, "Cart.total").unwrap();
        assert_eq!(v["content"], "    def total(self):\n        return 0\n");
        assert_eq!(
            (v["start_line"].as_u64(), v["end_line"].as_u64()),
            (Some(4), Some(5))
        );
        assert_eq!(v["kind"], "method");
        let e = read_definition("shop/cart.py", text, "missing").unwrap_err();
        assert!(
            format!("{e:?}").contains("It defines: Cart, total, other."),
            "{e:?}"
        );
        let e = read_definition("notes.txt", "text\n", "x").unwrap_err();
        assert!(e.message.contains("not in a language"), "{}", e.message);
    }

    #[test]
    fn a_long_source_file_read_whole_is_led_by_its_outline() {
        let mut text = String::from("fn first() {}\n");
        text.push_str(&"// filler\n".repeat(300));
        text.push_str("struct Late;\n");
        let data = page("src/lib.rs", &text, None, None).unwrap();
        let led = led_by_outline("src/lib.rs", &text, data);
        let keys: Vec<&String> = led.as_object().unwrap().keys().collect();
        assert_eq!(keys[..3], ["path", "outline", "content"]);
        assert_eq!(
            led["outline"],
            json!(["1-1 function first", "302-302 struct Late"])
        );
        // A short one, or one of no indexed language, is left as it is.
        let short = page("src/lib.rs", "fn a() {}\n", None, None).unwrap();
        assert!(led_by_outline("src/lib.rs", "fn a() {}\n", short)
            .get("outline")
            .is_none());
        let prose = page("notes.md", &text, None, None).unwrap();
        assert!(led_by_outline("notes.md", &text, prose)
            .get("outline")
            .is_none());
    }

    #[test]
    fn empty_file_reads_as_empty() {
        let v = page("a", "", None, None).unwrap();
        assert_eq!(v["content"], "");
        assert_eq!(v["total_lines"], 0);
    }
}
