//! Broken and odd output: unclosed calls, invalid JSON, stray tags, junk, and speed.

use super::*;

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
    assert_eq!(call(&t).dialect, Dialect::Lantern);
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

/// Feeds `text` to the streaming parser one character at a time; returns how long it took and
/// checks that the stream and the whole text read the same.
fn char_by_char(text: &str) -> std::time::Duration {
    let started = Instant::now();
    let mut parser = TurnParser::new();
    let mut shown = String::new();
    for (i, c) in text.char_indices() {
        shown += &parser.push(&text[i..i + c.len_utf8()]);
    }
    let streamed = parser.finish();
    let took = started.elapsed();
    assert_eq!(streamed, parse(text));
    assert_eq!(shown.trim(), streamed.text);
    took
}

/// Prose and a call of `size` bytes or so, the call's content full of escapes and false ends.
fn noisy_texts(size: usize) -> [String; 2] {
    let line = "Some text with < and [ and ` and \"quotes\" — ünïcödé 日本 🎉 <TOOL_ and [TOOL_C\n";
    let text = line.repeat(size / line.len() + 1);
    let content = "x\\\"</TOOL_CALL>".repeat(size * 7 / 100);
    let call_text = format!("{text}<TOOL_CALL>{{\"tool\": \"write_file\", \"args\": {{\"path\": \"a\", \"content\": \"{content}\"}}}}</TOOL_CALL>");
    [text, call_text]
}

#[test]
fn parsing_char_by_char_takes_time_linear_in_the_text() {
    // Four times the text may take about four times as long, never sixteen (quadratic). Both
    // sizes are timed in the same run, the best of three each, so a busy machine slows both.
    let best = |size: usize, which: usize| {
        (0..3)
            .map(|_| char_by_char(&noisy_texts(size)[which]))
            .min()
            .unwrap()
    };
    for which in 0..2 {
        let small = best(128_000, which);
        let large = best(512_000, which);
        let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-6);
        eprintln!("char by char: 128 kB {small:?}, 512 kB {large:?}, ratio {ratio:.1}");
        assert!(ratio < 9.0, "4x the text took {ratio:.1}x as long");
    }
}
