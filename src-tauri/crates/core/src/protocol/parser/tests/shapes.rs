//! Argument and name shapes, and the dialects small models write.

use super::*;

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
