//! Golden protocol cases (`tests/golden/protocol.json`): every valid and invalid example of the
//! protocol, the dialects and the edge cases. Each case is parsed whole, fed one character at a
//! time, and fed in uneven chunks; all three must agree, and the outcome must match.

use lantern_core::model::ApiCall;
use lantern_core::protocol::markers::tool_error_text;
use lantern_core::protocol::{
    interpret, parse, with_api_calls, InvalidCall, Outcome, Turn, TurnParser,
};
use lantern_core::tools::ToolRegistry;
use serde_json::Value;

const CASES: &str = include_str!("../../../../tests/golden/protocol.json");

fn streamed(input: &str, sizes: &[usize]) -> Turn {
    let mut parser = TurnParser::new();
    let chars: Vec<char> = input.chars().collect();
    let mut i = 0;
    let mut k = 0;
    while i < chars.len() {
        let n = sizes[k % sizes.len()].min(chars.len() - i);
        let chunk: String = chars[i..i + n].iter().collect();
        parser.push(&chunk);
        i += n;
        k += 1;
    }
    parser.finish()
}

fn check(name: &str, outcome: &Outcome, expect: &Value) -> Vec<String> {
    let got = serde_json::to_value(outcome).unwrap();
    let mut errors = Vec::new();
    for (key, want) in expect.as_object().unwrap() {
        match key.as_str() {
            "feedback_contains" => {
                // As the model reads it in the text protocol.
                let feedback = tool_error_text(got["feedback"].as_str().unwrap_or_default());
                for needle in want.as_array().unwrap() {
                    let needle = needle.as_str().unwrap();
                    if !feedback.contains(needle) {
                        errors.push(format!("{name}: feedback lacks {needle:?}:\n{feedback}"));
                    }
                }
            }
            "problems" => {
                let kinds: Vec<&Value> = got["problems"]
                    .as_array()
                    .map(|p| p.iter().map(|p| &p["kind"]).collect())
                    .unwrap_or_default();
                for kind in want.as_array().unwrap() {
                    if !kinds.contains(&kind) {
                        errors.push(format!("{name}: problems {kinds:?} lack {kind}"));
                    }
                }
            }
            _ => {
                if &got[key] != want {
                    errors.push(format!(
                        "{name}: {key} is {} not {want}\nfull outcome: {got}",
                        got[key]
                    ));
                }
            }
        }
    }
    errors
}

#[test]
fn golden_protocol_cases() {
    let registry = ToolRegistry::standard();
    let cases: Vec<Value> = serde_json::from_str(CASES).unwrap();
    assert!(cases.len() >= 40, "at least 40 golden cases");
    let mut errors = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let input = case["input"].as_str().unwrap();
        let whole = parse(input);
        for sizes in [&[1usize][..], &[1, 2, 3, 5, 8, 13], &[7, 64]] {
            if streamed(input, sizes) != whole {
                errors.push(format!(
                    "{name}: streaming in chunks {sizes:?} gave a different turn"
                ));
            }
        }
        errors.extend(check(name, &interpret(&whole, &registry), &case["expect"]));
    }
    assert!(
        errors.is_empty(),
        "{} failures:\n{}",
        errors.len(),
        errors.join("\n\n")
    );
}

#[test]
fn invalid_outcomes_always_carry_a_correct_example_call() {
    let registry = ToolRegistry::standard();
    let cases: Vec<Value> = serde_json::from_str(CASES).unwrap();
    for case in &cases {
        if let Outcome::Invalid(InvalidCall { feedback, .. }) =
            interpret(&parse(case["input"].as_str().unwrap()), &registry)
        {
            let example = feedback
                .split_once("A correct call looks like:\n")
                .map(|(_, e)| e)
                .unwrap_or_else(|| panic!("{feedback}"));
            // The example in the feedback is itself a valid call.
            match interpret(&parse(example), &registry) {
                Outcome::ToolCall(_) => {}
                other => panic!(
                    "{}: the example is not a valid call: {other:?}",
                    case["name"]
                ),
            }
        }
    }
}

#[test]
fn a_server_s_refused_call_is_answered_in_its_own_terms_not_the_text_protocol() {
    let registry = ToolRegistry::standard();
    let call = |name: &str, arguments: &str| ApiCall {
        id: Some("srv-1".into()),
        name: name.into(),
        arguments: arguments.into(),
    };
    for refused in [
        call("read_flie", r#"{"path": "a.txt"}"#),
        call("read_file", r#"{"file": "a.txt"}"#),
        call("read_file", r#"{"path": "a.txt""#),
    ] {
        let turn = with_api_calls(parse(""), std::slice::from_ref(&refused));
        let Outcome::Invalid(InvalidCall { feedback, .. }) = interpret(&turn, &registry) else {
            panic!("{refused:?} was not refused");
        };
        assert!(!feedback.contains("<TOOL_CALL>"), "{feedback}");
        // The arguments shown are themselves arguments the tool takes.
        let (tool, example) = feedback
            .split_once("Arguments of ")
            .and_then(|(_, rest)| rest.split_once(" look like: "))
            .unwrap_or_else(|| panic!("{feedback}"));
        let args: Value = serde_json::from_str(example).unwrap();
        assert!(registry.check_args(tool, &args).is_ok(), "{feedback}");
    }
}
