//! What an answer may write: never a value that only the prompt's worked examples hold.
//! Structure only: which values are absent from the answer, never what it says.

use super::*;
use lantern_core::model::GenerationOptions;
use lantern_core::prompt::examples_of;

/// The numbers and versions of the prompt's worked examples, of three characters or more
/// (`2.4.1`, `9090`): values of an imagined project.
fn example_numbers() -> Vec<String> {
    let prompt = system();
    let examples = examples_of(&prompt).expect("the prompt has worked examples");
    let mut numbers: Vec<String> = examples
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map(|w| w.trim_matches('.'))
        .filter(|w| w.len() >= 3 && w.starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_string)
        .collect();
    numbers.sort();
    numbers.dedup();
    numbers
}

/// The answer, in plain words, to a question about a setting the file read does not hold.
fn answer_about_a_missing_setting(model: &mut LocalModel) -> String {
    let messages = [
        Message::new(Role::System, system()),
        Message::new(Role::User, "Which port does the tally server listen on?"),
        Message::assistant_call(
            "call-1",
            "<TOOL_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"package.json\"}}\n</TOOL_CALL>",
            MadeCall::new("read_file", serde_json::json!({"path": "package.json"})),
        ),
        Message::tool_result(
            "call-1",
            ShownResult::from_json(r#"{"success":true,"data":{"path":"package.json","content":"{\n  \"name\": \"tally\",\n  \"version\": \"0.3.0\"\n}\n","total_lines":4},"error":null}"#).unwrap(),
        ),
    ];
    generate(model, &messages, ToolChoice::None, 60).0.text
}

#[test]
fn an_answer_never_states_a_value_only_the_examples_hold() {
    let numbers = example_numbers();
    assert!(numbers.iter().any(|n| n == "9090"), "{numbers:?}");
    let mut model = model();
    let states_one = |answer: &str| {
        numbers
            .iter()
            .find(|n| answer.contains(n.as_str()))
            .cloned()
    };

    // Without the rule this conversation draws one: the rule has something to refuse.
    model.configure(&GenerationOptions {
        shun_examples: false,
        ..GenerationOptions::default()
    });
    let free = answer_about_a_missing_setting(&mut model);
    assert!(states_one(&free).is_some(), "precondition: {free:?}");

    model.configure(&GenerationOptions::default());
    let answer = answer_about_a_missing_setting(&mut model);
    assert_eq!(states_one(&answer), None, "{answer:?}");
}
