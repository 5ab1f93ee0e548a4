//! Three rules that steer a turn by what the conversation already holds: an answer begins the
//! value of the lines shown as those about the question, a tool without arguments runs once a
//! turn, and a path argument is the file the message names (the first and the last are off by
//! default). Each test first shows the rule has work to do (without it the model goes
//! elsewhere), then that with it the turn goes there.
//! The project, its files and its questions are made up for these tests.

use super::*;
use lantern_core::model::GenerationOptions;
use serde_json::Value;

/// A small Python project: a key-value store with its settings in one module.
fn store_project() -> TestFolder {
    made_up_project(
        "store-project",
        &[
        ("README.md", "# store\n\nA tiny key-value store served over HTTP.\n"),
        (
            "store/settings.py",
            "# How the store server runs.\nHOST = \"127.0.0.1\"\nLISTEN_PORT = 7311\nMAX_KEYS = 250\nSNAPSHOT_EVERY = 60\n",
        ),
        (
            "store/server.py",
            "from .settings import HOST, LISTEN_PORT\n\n\ndef serve(app):\n    app.run(HOST, LISTEN_PORT)\n",
        ),
        (
            "store/keys.py",
            "def expire(store, key):\n    \"\"\"Drops a key whose time is up.\"\"\"\n    store.pop(key, None)\n",
        ),
        ],
    )
}

/// Calls and last reply, as [`turn`] gives them.
type Turn = (Vec<(String, Value)>, String);

/// Two turns on `question` in the store project, one with a lever off and one with it on
/// (`set` turns it), the other options at their defaults.
fn lever_off_and_on(set: fn(&mut GenerationOptions, bool), question: &str) -> (Turn, Turn) {
    let dir = store_project();
    let mut model = model();
    let mut with = |on: bool| {
        let mut options = GenerationOptions::default();
        set(&mut options, on);
        turn(&mut model, &dir, options, question)
    };
    (with(false), with(true))
}

/// What a turn on `question` did, every call approved: its calls (tool and arguments) and its
/// last reply in the model's own words.
fn turn(
    model: &mut LocalModel,
    dir: &std::path::Path,
    options: GenerationOptions,
    question: &str,
) -> Turn {
    model.configure(&options);
    let mut session = fresh_session(dir, Toolbox::standard().into());
    session.config.max_steps = 4;
    let (mut calls, mut last) = (Vec::new(), String::new());
    session.send(
        question,
        model,
        &mut FixedAnswer(Answer::AllowOnce),
        &mut |e| match e {
            Event::CallParsed { tool, args, .. } => calls.push((tool.clone(), args.clone())),
            Event::ResponseFinished { raw, .. } => last = raw.clone(),
            _ => {}
        },
        &CancelToken::new(),
    );
    (calls, last)
}

/// The first number an answer gives: its first run of digits and dots.
fn first_number(answer: &str) -> Option<&str> {
    answer
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map(|w| w.trim_matches('.'))
        .find(|w| !w.is_empty())
}

#[test]
fn an_answer_after_a_read_begins_the_value_of_the_line_asked_about() {
    let question = "Read store/settings.py and tell me the port the server takes.";
    let ((calls, without), (_, with)) = lever_off_and_on(|o, on| o.asked_values = on, question);
    assert!(
        calls.iter().any(|(tool, _)| tool == "read_file"),
        "precondition: the file is read: {calls:?}"
    );
    assert_ne!(
        first_number(&without),
        Some("7311"),
        "precondition: the rule has work to do: {without:?}"
    );
    assert_eq!(first_number(&with), Some("7311"), "{with:?}");
}

#[test]
fn a_tool_without_arguments_is_called_once_a_turn() {
    let listed =
        |calls: &[(String, Value)]| calls.iter().filter(|(t, _)| t == "list_tasks").count();
    let ((off, _), (on, _)) =
        lever_off_and_on(|o, on| o.spent_tools = on, "What is on my task list?");
    assert!(listed(&off) >= 2, "precondition: {off:?}");
    assert!(listed(&on) <= 1, "{on:?}");
}

#[test]
fn a_path_argument_is_the_file_the_message_names() {
    let first_path = |calls: &[(String, Value)]| -> Option<String> {
        calls
            .iter()
            .find_map(|(_, args)| args.get("path").and_then(Value::as_str).map(str::to_string))
    };
    let ((off, _), (on, _)) = lever_off_and_on(
        |o, on| o.named_files = on,
        "Walk me through the expire logic of keys.py.",
    );
    assert_ne!(
        first_path(&off).as_deref(),
        Some("store/keys.py"),
        "precondition: {off:?}"
    );
    assert_eq!(first_path(&on).as_deref(), Some("store/keys.py"), "{on:?}");
}
