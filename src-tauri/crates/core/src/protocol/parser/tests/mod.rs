//! The parser's tests; the chunking and checking helpers here, with the native call, text,
//! fences and what follows a call.

mod broken;
mod shapes;

use super::*;
use serde_json::json;
use std::time::Instant;

/// Splits `text` at char boundaries into chunks of `sizes` chars (cycling).
fn chunks<'a>(text: &'a str, sizes: &[usize]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut rest = text;
    for &size in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let cut = rest.char_indices().nth(size).map_or(rest.len(), |(i, _)| i);
        out.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    out
}

/// Feeds the chunks to a `TurnParser`; returns its result and everything `push` returned.
/// Also checks `call_complete`: once true it stays true, and the call (or its fatal problem)
/// is already what the whole text gives.
fn stream(pieces: &[&str], whole: &Turn) -> (Turn, String) {
    let mut parser = TurnParser::new();
    let mut shown = String::new();
    let mut seen = String::new();
    let mut complete = false;
    for piece in pieces {
        shown += &parser.push(piece);
        seen += piece;
        if complete {
            assert!(parser.call_complete(), "call_complete went back to false");
        } else if parser.call_complete() {
            complete = true;
            let early = parse(&seen);
            assert_eq!(early.call, whole.call, "call at completion of {seen:?}");
            // A broken Mistral value's message quotes the text after it, so compare kinds.
            let fatal = |t: &Turn| t.fatal_problem().map(|p| (p.kind, p.error_type));
            assert_eq!(fatal(&early), fatal(whole));
        }
    }
    if whole.call.is_some() {
        assert!(parser.call_complete(), "a valid call was never complete");
    }
    (parser.finish(), shown)
}

/// Parses `text` whole, one char at a time, and in chunks of varying size; all must agree,
/// and the streamed user text must be a prefix of the final one. Returns the turn and the
/// text streamed one char at a time.
fn check(text: &str) -> (Turn, String) {
    let whole = parse(text);
    assert_eq!(whole.raw, text);
    let mut by_char = String::new();
    for sizes in [&[1][..], &[1, 2, 3, 5, 8, 13], &[7, 1, 4]] {
        let (turn, shown) = stream(&chunks(text, sizes), &whole);
        assert_eq!(turn, whole, "chunk sizes {sizes:?}");
        assert!(
            whole.text.starts_with(shown.trim()),
            "streamed {shown:?} is not a prefix of {:?}",
            whole.text
        );
        if sizes == [1] {
            by_char = shown;
        }
    }
    (whole, by_char)
}

fn turn(text: &str) -> Turn {
    check(text).0
}

fn call(turn: &Turn) -> &RawCall {
    turn.call.as_ref().expect("a call")
}

fn kinds(turn: &Turn) -> Vec<ProblemKind> {
    turn.problems.iter().map(|p| p.kind).collect()
}

fn only_problem(turn: &Turn) -> &Problem {
    assert_eq!(turn.problems.len(), 1, "{:?}", turn.problems);
    &turn.problems[0]
}

#[test]
fn native_call() {
    let text = "<TOOL_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"package.json\"}, \"reasoning\": \"Need the version\"}\n</TOOL_CALL>";
    let t = turn(text);
    let c = call(&t);
    assert_eq!(c.tool, "read_file");
    assert_eq!(c.args, json!({"path": "package.json"}));
    assert_eq!(c.reasoning.as_deref(), Some("Need the version"));
    assert_eq!(c.dialect, Dialect::Lantern);
    assert_eq!(c.raw, text);
    assert_eq!(
        c.span,
        Span {
            start: 0,
            end: text.len()
        }
    );
    assert_eq!(t.text, "");
    assert!(t.problems.is_empty());
}

#[test]
fn plain_text_streams_whole() {
    for text in [
        "The version is 1.0.0",
        "  Use a < b and list[0] and `code` and ```rust\nfn main() {}\n```\nDone.  ",
        "Unicode: 日本語 🎉 [TOOL] <tool_cal> <function=> </TOOL_CALL>",
    ] {
        let (t, shown) = check(text);
        assert_eq!(t.text, text.trim());
        assert_eq!(shown.trim(), t.text);
        assert!(t.call.is_none() && t.problems.is_empty());
    }
}

#[test]
fn empty_and_whitespace_only() {
    for text in ["", "   \r\n\t \n"] {
        let (t, shown) = check(text);
        assert_eq!(
            t,
            Turn {
                raw: text.to_owned(),
                ..Turn::default()
            }
        );
        assert_eq!(shown.trim(), "");
    }
}

#[test]
fn crlf_and_whitespace_around_and_in_tags() {
    let text = "Checking.\r\n\r\n  <TOOL_CALL \r\n>\r\n  {\r\n  \"tool\": \"read_file\",\r\n  \"args\": {\"path\": \"a.ts\"}\r\n}\r\n  </TOOL_CALL\r\n>\r\n  ";
    let (t, shown) = check(text);
    assert_eq!(call(&t).tool, "read_file");
    assert_eq!(call(&t).args, json!({"path": "a.ts"}));
    assert!(call(&t).raw.ends_with("</TOOL_CALL\r\n>"));
    assert_eq!(t.text, "Checking.");
    assert_eq!(shown.trim(), "Checking.");
    assert!(t.problems.is_empty());
}

#[test]
fn fence_inside_tags() {
    for fence in ["```json", "```", "```JSON "] {
        let text = format!(
            "<TOOL_CALL>\n{fence}\n{{\"tool\": \"list_files\", \"args\": {{\"directory\": \".\"}}}}\n```\n</TOOL_CALL>"
        );
        let t = turn(&text);
        assert_eq!(call(&t).tool, "list_files", "{fence}");
        assert!(t.problems.is_empty());
    }
}

#[test]
fn fence_around_tags() {
    let text = "I'll read it.\n```xml\n<TOOL_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"x\"}}\n</TOOL_CALL>\n```\n";
    let (t, shown) = check(text);
    assert_eq!(t.text, "I'll read it.");
    assert_eq!(shown.trim(), "I'll read it.");
    let c = call(&t);
    assert!(c.raw.starts_with("<TOOL_CALL>") && c.raw.ends_with("</TOOL_CALL>"));
    assert_eq!(&text[c.span.start..c.span.end], c.raw);
    assert!(t.problems.is_empty(), "{:?}", t.problems);
}

#[test]
fn fence_around_tags_and_inside() {
    let text = "```\n<TOOL_CALL>\n```json\n{\"tool\": \"read_file\", \"args\": {\"path\": \"x\"}}\n```\n</TOOL_CALL>\n```";
    let t = turn(text);
    assert_eq!(call(&t).tool, "read_file");
    assert_eq!(t.text, "");
    assert!(t.problems.is_empty());
}

#[test]
fn fence_closing_an_earlier_block_is_user_text() {
    let text = "Here is the fix:\n```rust\nfn main() {}\n```\n<TOOL_CALL>{\"tool\": \"write_file\", \"args\": {}}</TOOL_CALL>";
    let (t, shown) = check(text);
    assert_eq!(t.text, "Here is the fix:\n```rust\nfn main() {}\n```");
    assert!(t.text.starts_with(shown.trim()));
    assert_eq!(call(&t).tool, "write_file");
    assert!(t.problems.is_empty());
}

#[test]
fn text_before_call() {
    let text = "  Let me check the version.\n\n<TOOL_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"p\"}}</TOOL_CALL>";
    let (t, shown) = check(text);
    assert_eq!(t.text, "Let me check the version.");
    assert_eq!(shown.trim(), t.text);
    let start = text.find('<').unwrap();
    assert_eq!(
        call(&t).span,
        Span {
            start,
            end: text.len()
        }
    );
}

#[test]
fn closing_tag_inside_a_string_is_content() {
    let content = "Docs: end a call with </TOOL_CALL>, quote with \\\" and </tool_call> too";
    let text = format!(
        "<TOOL_CALL>{{\"tool\": \"write_file\", \"args\": {{\"path\": \"d.md\", \"content\": \"{content}\"}}}}</TOOL_CALL>"
    );
    let t = turn(&text);
    assert_eq!(
        call(&t).args["content"],
        "Docs: end a call with </TOOL_CALL>, quote with \" and </tool_call> too"
    );
    assert!(t.problems.is_empty());
}

#[test]
fn escaped_backslash_before_quote_ends_the_string() {
    let text = r#"<TOOL_CALL>{"tool": "write_file", "args": {"path": "a", "content": "C:\\"}}</TOOL_CALL>"#;
    let t = turn(text);
    assert_eq!(call(&t).args["content"], "C:\\");
}

#[test]
fn unicode_arguments_split_across_chunks() {
    let text = "好的 🎉\n<TOOL_CALL>{\"tool\": \"write_file\", \"args\": {\"path\": \"文档/说明.md\", \"content\": \"héllo 👩‍💻 世界 🇫🇷\"}}</TOOL_CALL>";
    let t = turn(text);
    assert_eq!(t.text, "好的 🎉");
    assert_eq!(call(&t).args["path"], "文档/说明.md");
    assert_eq!(call(&t).args["content"], "héllo 👩‍💻 世界 🇫🇷");
    // Chunks cut inside multi-char emoji sequences too.
    let whole = parse(text);
    let (streamed, _) = stream(&chunks(text, &[2, 9]), &whole);
    assert_eq!(streamed, whole);
}

#[test]
fn two_calls_take_the_first() {
    let text = "<TOOL_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"a\"}}</TOOL_CALL>\n<TOOL_CALL>{\"tool\": \"write_file\", \"args\": {}}</TOOL_CALL>";
    let t = turn(text);
    assert_eq!(call(&t).tool, "read_file");
    let p = only_problem(&t);
    assert_eq!(p.kind, ProblemKind::ExtraCall);
    assert_eq!(p.error_type, ErrorType::ValidationFailed);
    assert!(!p.fatal);
    assert!(p.message.contains("Only one tool call per response"));
    assert!(p.message.contains("write_file"));
    let second = text.rfind("<TOOL_CALL>").unwrap();
    assert_eq!(
        p.span,
        Some(Span {
            start: second,
            end: text.len()
        })
    );
}

#[test]
fn three_calls_in_fences_and_dialects() {
    let text = "```\n<TOOL_CALL>{\"tool\": \"a\", \"args\": {}}</TOOL_CALL>\n```\n```\n<tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>\n```\n<function=c>{}</function>";
    let t = turn(text);
    assert_eq!(call(&t).tool, "a");
    assert_eq!(kinds(&t), [ProblemKind::ExtraCall, ProblemKind::ExtraCall]);
    assert!(t.problems[1].message.contains("to c"));
}

#[test]
fn trailing_text_is_discarded() {
    let text = "Before.\n<TOOL_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"a\"}}</TOOL_CALL>\nI will now wait for the result.\n";
    let (t, shown) = check(text);
    assert_eq!(t.text, "Before.");
    assert_eq!(shown.trim(), "Before.");
    assert_eq!(call(&t).tool, "read_file");
    let p = only_problem(&t);
    assert_eq!(p.kind, ProblemKind::TrailingText);
    assert!(!p.fatal);
    assert!(p.message.contains("discarded"));
    let start = text.find("I will").unwrap();
    assert_eq!(
        p.span,
        Some(Span {
            start,
            end: text.trim_end().len()
        })
    );
}

#[test]
fn stray_fence_after_call_is_not_trailing_text() {
    let t = turn("<TOOL_CALL>{\"tool\": \"a\", \"args\": {}}</TOOL_CALL>\n```\n");
    assert_eq!(call(&t).tool, "a");
    assert!(t.problems.is_empty());
}

#[test]
fn trailing_text_and_extra_call() {
    let text = "<TOOL_CALL>{\"tool\": \"a\", \"args\": {}}</TOOL_CALL> then <TOOL_CALL>{\"tool\": \"b\", \"args\": {}}</TOOL_CALL> done";
    let t = turn(text);
    assert_eq!(
        kinds(&t),
        [ProblemKind::ExtraCall, ProblemKind::TrailingText]
    );
    let start = text.find("then").unwrap();
    assert_eq!(
        t.problems[1].span,
        Some(Span {
            start,
            end: text.len()
        })
    );
}

#[test]
fn a_reasoning_models_thinking_is_neither_text_nor_a_call() {
    // A call written while thinking is not made; the one after the thinking is.
    let text = "<think>\nMaybe <TOOL_CALL>{\"tool\": \"list_files\", \"args\": {}}</TOOL_CALL>? No, read it.\n</think>\nReading.\n<TOOL_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"a.txt\"}}</TOOL_CALL>";
    let (t, shown) = check(text);
    assert_eq!(call(&t).tool, "read_file");
    assert_eq!(
        t.thinking.as_deref(),
        Some("Maybe <TOOL_CALL>{\"tool\": \"list_files\", \"args\": {}}</TOOL_CALL>? No, read it.")
    );
    assert_eq!(t.text, "Reading.");
    assert_eq!(shown.trim(), "Reading.");
    assert!(t.problems.is_empty(), "{:?}", t.problems);
    assert!(t
        .reply_until(call(&t).span.end)
        .starts_with("Reading.\n<TOOL_CALL>"));

    let answer = "  <think>The user greets me.</think>\n\nHello!";
    let (t, shown) = check(answer);
    assert_eq!(t.text, "Hello!");
    assert_eq!(shown.trim(), "Hello!");
    assert_eq!(t.thinking.as_deref(), Some("The user greets me."));

    // Cut off while thinking: no reply at all.
    let (t, shown) = check("<think>I should look at the fi");
    assert_eq!((t.text.as_str(), shown.as_str()), ("", ""));
    assert_eq!(t.thinking.as_deref(), Some("I should look at the fi"));

    // A tag that only begins like it is text.
    let (t, _) = check("<thin ice> is a phrase.");
    assert_eq!(t.text, "<thin ice> is a phrase.");
    assert_eq!(t.thinking, None);
}

#[test]
fn pythonic_calls_take_python_literals() {
    let t = turn(
        "[f(a=True, b=False, c=None, d=-1.5, e=[1, 'x'], g={\"k\": [None]}, h=\"line\\nbreak\")]",
    );
    assert_eq!(
        call(&t).args,
        json!({"a": true, "b": false, "c": null, "d": -1.5, "e": [1, "x"], "g": {"k": [null]}, "h": "line\nbreak"})
    );
    assert_eq!(call(&t).dialect, Dialect::Pythonic);
    // Cut off inside the call: it was a call, and the model hears what is wrong.
    let t = turn("[read_file(path=\"a.t");
    assert!(t.call.is_none());
    assert!(
        only_problem(&t).message.contains("is not finished"),
        "{:?}",
        t.problems
    );
    assert_eq!(t.text, "");
}

#[test]
fn harmony_keeps_its_analysis_as_thinking_and_shows_only_the_final_message() {
    let answer = "<|channel|>analysis<|message|>The user asks about HTTP.<|end|><|start|>assistant<|channel|>final<|message|>HTTP is HyperText Transfer Protocol.<|return|>";
    let (t, shown) = check(answer);
    assert_eq!(t.text, "HTTP is HyperText Transfer Protocol.");
    assert!(
        shown.starts_with("HTTP is HyperText Transfer Protocol."),
        "{shown:?}"
    );
    assert_eq!(t.thinking.as_deref(), Some("The user asks about HTTP."));

    // A call after the analysis: the header names the tool, the message is its arguments.
    let text = "<|start|>assistant<|channel|>analysis<|message|>Read it.<|end|><|start|>assistant<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{\"path\": \"a.txt\"}<|call|>";
    let (t, shown) = check(text);
    assert_eq!(call(&t).tool, "read_file");
    assert_eq!(call(&t).args, json!({"path": "a.txt"}));
    assert_eq!(call(&t).dialect, Dialect::Harmony);
    assert_eq!(shown, "");
    assert!(t.problems.is_empty(), "{:?}", t.problems);

    // A header addressed to no one, after some text, is not a call.
    let (t, _) = check("Done. <|channel|>commentary<|message|>more");
    assert!(t.call.is_none());
}
