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

/// The default options with one change.
fn options(change: impl FnOnce(&mut GenerationOptions)) -> GenerationOptions {
    let mut options = GenerationOptions::default();
    change(&mut options);
    options
}

/// What a turn on `question` did, every call approved: its calls (tool and arguments) and its
/// last reply in the model's own words.
fn turn(
    model: &mut LocalModel,
    dir: &std::path::Path,
    options: GenerationOptions,
    question: &str,
) -> (Vec<(String, Value)>, String) {
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
    let dir = store_project();
    let mut model = model();
    let question = "Read store/settings.py: on which port does the server listen?";
    let off = options(|o| o.asked_values = false);
    let (calls, without) = turn(&mut model, &dir, off, question);
    assert!(
        calls.iter().any(|(tool, _)| tool == "read_file"),
        "precondition: the file is read: {calls:?}"
    );
    assert_ne!(
        first_number(&without),
        Some("7311"),
        "precondition: the rule has work to do: {without:?}"
    );
    let on = options(|o| o.asked_values = true);
    let (_, with) = turn(&mut model, &dir, on, question);
    assert_eq!(first_number(&with), Some("7311"), "{with:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_tool_without_arguments_is_called_once_a_turn() {
    let dir = store_project();
    let mut model = model();
    let question = "What is on my task list?";
    let listed =
        |calls: &[(String, Value)]| calls.iter().filter(|(t, _)| t == "list_tasks").count();
    let off = options(|o| o.spent_tools = false);
    let (calls, _) = turn(&mut model, &dir, off, question);
    assert!(listed(&calls) >= 2, "precondition: {calls:?}");
    let (calls, _) = turn(&mut model, &dir, GenerationOptions::default(), question);
    assert!(listed(&calls) <= 1, "{calls:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_path_argument_is_the_file_the_message_names() {
    let dir = store_project();
    let mut model = model();
    let question = "Explain what expire in keys.py does.";
    let first_path = |calls: &[(String, Value)]| -> Option<String> {
        calls
            .iter()
            .find_map(|(_, args)| args.get("path").and_then(Value::as_str).map(str::to_string))
    };
    let off = options(|o| o.named_files = false);
    let (calls, _) = turn(&mut model, &dir, off, question);
    assert_ne!(
        first_path(&calls).as_deref(),
        Some("store/keys.py"),
        "precondition: {calls:?}"
    );
    let on = options(|o| o.named_files = true);
    let (calls, _) = turn(&mut model, &dir, on, question);
    assert_eq!(
        first_path(&calls).as_deref(),
        Some("store/keys.py"),
        "{calls:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
