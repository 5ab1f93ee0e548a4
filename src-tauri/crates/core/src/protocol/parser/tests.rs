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
    assert_eq!(c.dialect, Dialect::Native);
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
fn args_as_json_string_are_decoded() {
    let text = r#"<TOOL_CALL>{"tool": "read_file", "args": "{\"path\": \"a.ts\"}"}</TOOL_CALL>"#;
    assert_eq!(call(&turn(text)).args, json!({"path": "a.ts"}));
}

#[test]
fn args_string_without_object_is_bad_shape() {
    for args in [r#""a.ts""#, r#""[1, 2]""#, r#""{broken""#] {
        let text = format!(r#"<TOOL_CALL>{{"tool": "read_file", "args": {args}}}</TOOL_CALL>"#);
        let t = turn(&text);
        assert!(t.call.is_none());
        let p = only_problem(&t);
        assert_eq!(p.kind, ProblemKind::BadCallShape);
        assert!(p.fatal);
        assert!(
            p.message.contains("does not hold a JSON object"),
            "{}",
            p.message
        );
    }
}

#[test]
fn missing_args_are_empty() {
    let t = turn("<TOOL_CALL>\n{\"tool\": \"read_file\"}\n</TOOL_CALL>");
    assert_eq!(call(&t).args, json!({}));
    assert!(t.problems.is_empty());
}

#[test]
fn non_object_args_are_bad_shape() {
    for (args, got) in [
        ("42", "a number"),
        ("[\"a\"]", "an array"),
        ("null", "null"),
        ("true", "a boolean"),
    ] {
        let text = format!("<TOOL_CALL>{{\"tool\": \"read_file\", \"args\": {args}}}</TOOL_CALL>");
        let t = turn(&text);
        assert!(t.call.is_none());
        let p = only_problem(&t);
        assert_eq!(p.kind, ProblemKind::BadCallShape);
        assert_eq!(p.error_type, ErrorType::ValidationFailed);
        assert!(p.fatal);
        assert_eq!(
            p.message,
            format!("\"args\" must be a JSON object, got {got}.")
        );
        assert_eq!(
            p.span,
            Some(Span {
                start: 0,
                end: text.len()
            })
        );
    }
}

#[test]
fn missing_or_bad_tool_name() {
    let t = turn("<TOOL_CALL>{\"args\": {\"path\": \"a\"}}</TOOL_CALL>");
    let p = only_problem(&t);
    assert_eq!(p.kind, ProblemKind::BadCallShape);
    assert!(p.message.starts_with("The call has no \"tool\" field"));

    let t = turn("<TOOL_CALL>{\"tool\": 7, \"args\": {}}</TOOL_CALL>");
    assert!(only_problem(&t)
        .message
        .contains("\"tool\" field must be a string"));

    let t = turn("<TOOL_CALL>[\"read_file\", {}]</TOOL_CALL>");
    let p = only_problem(&t);
    assert_eq!(p.kind, ProblemKind::BadCallShape);
    assert!(p.message.contains("got an array"));
}

#[test]
fn unknown_tool_names_pass_through_with_case() {
    let t = turn("<TOOL_CALL>{\"tool\": \"Read_File\", \"args\": {}}</TOOL_CALL>");
    assert_eq!(call(&t).tool, "Read_File");
}

#[test]
fn field_names_are_normalised() {
    for (tool_key, args_key) in [
        ("name", "arguments"),
        ("tool", "params"),
        ("name", "parameters"),
    ] {
        let text = format!(
            "<TOOL_CALL>{{\"{tool_key}\": \"x\", \"{args_key}\": {{\"a\": 1}}}}</TOOL_CALL>"
        );
        let t = turn(&text);
        assert_eq!(call(&t).tool, "x");
        assert_eq!(call(&t).args, json!({"a": 1}));
    }
}

#[test]
fn hermes_dialect() {
    let text =
        "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>";
    let t = turn(text);
    assert_eq!(call(&t).dialect, Dialect::Hermes);
    assert_eq!(call(&t).tool, "read_file");
    assert_eq!(call(&t).args, json!({"path": "a"}));
    assert_eq!(call(&t).raw, text);
}

#[test]
fn tool_tag_dialect() {
    let t = turn("<tool>{\"name\": \"search_code\", \"params\": {\"query\": \"fn\"}}</tool>");
    assert_eq!(call(&t).dialect, Dialect::ToolTag);
    assert_eq!(call(&t).tool, "search_code");
    assert_eq!(call(&t).args, json!({"query": "fn"}));
}

#[test]
fn llama3_dialect() {
    let text = "Sure.\n<function=read_file>{\"path\": \"src/main.rs\"}</function>";
    let t = turn(text);
    let c = call(&t);
    assert_eq!(c.dialect, Dialect::Llama3);
    assert_eq!(c.tool, "read_file");
    assert_eq!(c.args, json!({"path": "src/main.rs"}));
    assert_eq!(
        c.raw,
        "<function=read_file>{\"path\": \"src/main.rs\"}</function>"
    );
    assert_eq!(t.text, "Sure.");

    let t = turn("<function=get_diagnostics >\n</function>");
    assert_eq!(call(&t).tool, "get_diagnostics");
    assert_eq!(call(&t).args, json!({}));

    let t = turn("<function=read_file>[1]</function>");
    let p = only_problem(&t);
    assert_eq!(p.kind, ProblemKind::BadCallShape);
    assert!(p.message.contains("<function=read_file>"), "{}", p.message);
}

#[test]
fn mistral_name_and_args() {
    let text = "[TOOL_CALLS]read_file[ARGS]{\"path\": \"a.ts\"}";
    let t = turn(text);
    let c = call(&t);
    assert_eq!(c.dialect, Dialect::Mistral);
    assert_eq!(c.tool, "read_file");
    assert_eq!(c.args, json!({"path": "a.ts"}));
    assert_eq!(c.raw, text);

    let t = turn("Ok. [TOOL_CALLS] read_file {\"path\": \"a.ts\"}");
    assert_eq!(call(&t).tool, "read_file");
    assert_eq!(t.text, "Ok.");
}

#[test]
fn mistral_list_and_object() {
    let text = "[TOOL_CALLS] [{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}]\n";
    let t = turn(text);
    assert_eq!(call(&t).tool, "read_file");
    assert_eq!(call(&t).raw, text.trim_end());
    assert!(t.problems.is_empty());

    let t =
        turn("[TOOL_CALLS]{\"name\": \"read_file\", \"arguments\": \"{\\\"path\\\": \\\"a\\\"}\"}");
    assert_eq!(call(&t).args, json!({"path": "a"}));

    let t = turn("[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", \"arguments\": {}}, {\"name\": \"c\"}]");
    assert_eq!(call(&t).tool, "a");
    assert_eq!(kinds(&t), [ProblemKind::ExtraCall, ProblemKind::ExtraCall]);
    assert!(t.problems[0].message.contains("to b"));

    let t = turn("[TOOL_CALLS][]");
    assert_eq!(only_problem(&t).kind, ProblemKind::BadCallShape);
}

#[test]
fn mistral_two_calls_and_trailing_text() {
    let t = turn("[TOOL_CALLS]a[ARGS]{}[TOOL_CALLS]b[ARGS]{\"x\": \"}\"} bye");
    assert_eq!(call(&t).tool, "a");
    assert_eq!(
        kinds(&t),
        [ProblemKind::ExtraCall, ProblemKind::TrailingText]
    );
}

#[test]
fn mistral_broken() {
    for text in [
        "[TOOL_CALLS]read_file[ARGS]{\"path\": \"a.ts\"",
        "[TOOL_CALLS]",
        "[TOOL_CALLS]read_file",
        "[TOOL_CALLS]read_file then",
        "[TOOL_CALLS]{name: 1}",
    ] {
        let t = turn(text);
        assert!(t.call.is_none());
        let p = only_problem(&t);
        assert_eq!(p.kind, ProblemKind::InvalidJson, "{text}");
        assert_eq!(p.error_type, ErrorType::ParseError);
        assert!(p.fatal);
    }
    let t = turn("[TOOL_CALLS] \"read_file\"");
    assert_eq!(only_problem(&t).kind, ProblemKind::BadCallShape);
}

#[test]
fn missing_closing_tag() {
    let text = "<TOOL_CALL>\n{\"tool\": \"read_file\"}\n";
    let t = turn(text);
    assert!(t.call.is_none());
    let p = only_problem(&t);
    assert_eq!(p.kind, ProblemKind::MissingClosingTag);
    assert_eq!(p.error_type, ErrorType::ParseError);
    assert!(p.fatal);
    assert!(p.message.contains("</TOOL_CALL>"));
    assert_eq!(
        p.span,
        Some(Span {
            start: 0,
            end: text.trim_end().len()
        })
    );

    let t = turn("<tool_call>{\"name\": \"read_file\"}");
    assert!(only_problem(&t).message.contains("</tool_call>"));
    let t = turn("<function=read_file>{}");
    assert!(only_problem(&t).message.contains("</function>"));
}

#[test]
fn missing_closing_tag_then_second_call() {
    let text = "<TOOL_CALL>{\"tool\": \"a\", \"args\": {}}\n<TOOL_CALL>{\"tool\": \"b\", \"args\": {}}</TOOL_CALL>";
    let t = turn(text);
    assert!(t.call.is_none());
    assert_eq!(
        kinds(&t),
        [ProblemKind::MissingClosingTag, ProblemKind::ExtraCall]
    );
    assert_eq!(
        t.problems[0].span,
        Some(Span {
            start: 0,
            end: text.find('\n').unwrap()
        })
    );
    assert!(t.problems[1].message.contains("to b"));
}

#[test]
fn invalid_json() {
    let text = "<TOOL_CALL>\n{tool: \"read_file\", args: {path: \"test.ts\"}}\n</TOOL_CALL>";
    let t = turn(text);
    assert!(t.call.is_none());
    let p = only_problem(&t);
    assert_eq!(p.kind, ProblemKind::InvalidJson);
    assert_eq!(p.error_type, ErrorType::ParseError);
    assert!(p.fatal);
    assert!(p.message.contains("line 1 column 2"), "{}", p.message);
    assert!(
        p.message.contains("near `{tool: \"read_file\", a`"),
        "{}",
        p.message
    );
    assert!(p.message.contains("double quotes"), "{}", p.message);
    assert_eq!(
        p.span,
        Some(Span {
            start: 0,
            end: text.len()
        })
    );
}

#[test]
fn invalid_json_messages() {
    let cases = [
        (
            "{\"tool\": \"a\", \"args\": {},}",
            "trailing comma",
            "line 1 column 26",
        ),
        (
            "{\"tool\": \"a\",\n \"args\": {\"x\": 'y'}}",
            "expected value",
            "line 2 column 16",
        ),
        (
            "{\"tool\": \"a\", \"args\": {\"c\": \"tab\there\"}}",
            "written as \\n and \\t",
            "line 1",
        ),
        (
            "{\"tool\": \"a\"} {\"tool\": \"b\"}",
            "trailing characters",
            "line 1 column 15",
        ),
        ("{\"tool\": \"a\", \"args\": {", "ends too early", "EOF"),
    ];
    for (body, expect, position) in cases {
        let t = turn(&format!("<TOOL_CALL>{body}</TOOL_CALL>"));
        let p = only_problem(&t);
        assert_eq!(p.kind, ProblemKind::InvalidJson);
        assert!(p.message.contains(expect), "{body}: {}", p.message);
        assert!(p.message.contains(position), "{body}: {}", p.message);
        assert!(!p.message.contains('\n'), "{}", p.message);
    }
    let p = only_problem(&turn("<TOOL_CALL>\n\n</TOOL_CALL>")).clone();
    assert_eq!(p.kind, ProblemKind::InvalidJson);
    assert!(p.message.contains("empty"));
}

#[test]
fn unbalanced_quote_does_not_hide_the_closer() {
    let t = turn("<TOOL_CALL>{\"tool\": \"read_file, \"args\": {}}</TOOL_CALL>");
    assert_eq!(only_problem(&t).kind, ProblemKind::InvalidJson);
}

#[test]
fn broken_first_call_is_not_replaced_by_a_second() {
    let text = "<TOOL_CALL>{bad}</TOOL_CALL><TOOL_CALL>{\"tool\": \"b\", \"args\": {}}</TOOL_CALL>";
    let t = turn(text);
    assert!(t.call.is_none());
    assert_eq!(
        kinds(&t),
        [ProblemKind::InvalidJson, ProblemKind::ExtraCall]
    );
}

#[test]
fn mismatched_case_closer_is_accepted() {
    let t = turn("<TOOL_CALL>{\"tool\": \"a\", \"args\": {}}</tool_call>");
    assert_eq!(call(&t).dialect, Dialect::Native);
    assert!(t.problems.is_empty());
    let t = turn("<tool_call>{\"name\": \"a\"}</TOOL_CALL>");
    assert_eq!(call(&t).dialect, Dialect::Hermes);
}

#[test]
fn tags_are_case_sensitive_openers() {
    let t = turn("<Tool_Call>{\"tool\": \"a\"}</Tool_Call>");
    assert!(t.call.is_none() && t.problems.is_empty());
}

#[test]
fn lone_opener_at_end() {
    let (t, shown) = check("Reading now <TOOL_CALL>");
    assert_eq!(t.text, "Reading now");
    assert_eq!(shown.trim(), "Reading now");
    assert_eq!(only_problem(&t).kind, ProblemKind::MissingClosingTag);
}

#[test]
fn partial_opener_at_end_is_text_but_held_back() {
    for tail in [
        "<TOOL_CALL",
        "<TOOL_CALL  ",
        "```json\n<tool",
        "<function=read",
        "[TOOL_CA",
        "```",
    ] {
        let text = format!("Hello {tail}");
        let (t, shown) = check(&text);
        assert_eq!(t.text, text.trim());
        assert!(t.call.is_none() && t.problems.is_empty());
        assert_eq!(shown, "Hello ", "{tail}");
    }
}

#[test]
fn lone_and_odd_tags_are_text() {
    for text in [
        "</TOOL_CALL>",
        "a </tool> b",
        "<function=>x</function>",
        "<function=a b>",
        "[ARGS]{}",
    ] {
        let (t, shown) = check(text);
        assert_eq!(t.text, text.trim(), "{text}");
        assert_eq!(shown.trim(), t.text);
        assert!(t.call.is_none() && t.problems.is_empty());
    }
}

#[test]
fn call_complete_as_soon_as_the_closer_arrives() {
    let mut parser = TurnParser::new();
    assert_eq!(
        parser.push("Hi <TOOL_CALL>{\"tool\": \"a\", \"args\": {\"c\": \"</TOOL_CALL>"),
        "Hi "
    );
    assert!(!parser.call_complete());
    parser.push("\"}}</TOOL_CAL");
    assert!(!parser.call_complete());
    assert_eq!(parser.push("L>"), "");
    assert!(parser.call_complete());
    assert_eq!(call(&parser.finish()).args["c"], "</TOOL_CALL>");

    let mut parser = TurnParser::new();
    parser.push("[TOOL_CALLS]a[ARGS]{\"x\": [\"}\"]");
    assert!(!parser.call_complete());
    parser.push("}");
    assert!(parser.call_complete());
}

#[test]
fn deeply_nested_junk() {
    let deep = "[".repeat(100_000) + &"{\"a\":".repeat(50_000);
    for text in [
        deep.clone(),
        format!("<TOOL_CALL>{deep}</TOOL_CALL>"),
        format!("[TOOL_CALLS]{deep}"),
        format!(
            "<TOOL_CALL>{{\"tool\": \"a\", \"args\": {}{}}}</TOOL_CALL>",
            "[".repeat(10_000),
            "]".repeat(10_000)
        ),
    ] {
        let t = parse(&text);
        let mut parser = TurnParser::new();
        for piece in chunks(&text, &[1, 2, 3, 5, 8, 13]) {
            parser.push(piece);
        }
        assert_eq!(parser.finish(), t);
    }
}

/// Responses stitched from fragments that stress the grammar; no panics, and streaming
/// always agrees with the whole parse.
#[test]
fn generated_responses_agree() {
    const FRAGMENTS: [&str; 34] = [
        "<TOOL_CALL>",
        "</TOOL_CALL>",
        "<tool_call>",
        "</tool_call>",
        "<tool>",
        "</tool>",
        "<function=read_file>",
        "</function>",
        "[TOOL_CALLS]",
        "[ARGS]",
        "```",
        "```json\n",
        "\"",
        "\\",
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "\"tool\"",
        "\"args\"",
        "\"name\"",
        "\"read_file\"",
        "{\"path\": \"a\"}",
        " ",
        "\n",
        "\r\n",
        "text",
        "日本",
        "🎉",
        "<",
        "<TOOL_",
        "null",
    ];
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move |bound: usize| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) as usize % bound
    };
    for _ in 0..400 {
        let len = next(24);
        let text: String = (0..len).map(|_| FRAGMENTS[next(FRAGMENTS.len())]).collect();
        check(&text);
    }
    // And well-formed calls with noise around them.
    for _ in 0..100 {
        let noise: String = (0..next(6))
            .map(|_| FRAGMENTS[next(FRAGMENTS.len())])
            .collect();
        let text = format!(
            "{noise}<TOOL_CALL>{{\"tool\": \"a\", \"args\": {{\"s\": \"{}\"}}}}</TOOL_CALL>{noise}",
            noise.replace(['\\', '"'], "")
        );
        check(&text);
    }
}

#[test]
fn a_megabyte_char_by_char_is_linear() {
    let line = "Some text with < and [ and ` and \"quotes\" — ünïcödé 日本 🎉 <TOOL_ and [TOOL_C\n";
    let text = line.repeat(1_000_000 / line.len() + 1);
    let content = "x\\\"</TOOL_CALL>".repeat(70_000);
    let call_text = format!("{text}<TOOL_CALL>{{\"tool\": \"write_file\", \"args\": {{\"path\": \"a\", \"content\": \"{content}\"}}}}</TOOL_CALL>");
    for text in [&text, &call_text] {
        let started = Instant::now();
        let mut parser = TurnParser::new();
        let mut shown = String::new();
        for (i, c) in text.char_indices() {
            shown += &parser.push(&text[i..i + c.len_utf8()]);
        }
        let streamed = parser.finish();
        eprintln!("{} bytes char by char: {:?}", text.len(), started.elapsed());
        assert_eq!(streamed, parse(text));
        assert_eq!(shown.trim(), streamed.text);
    }
}
