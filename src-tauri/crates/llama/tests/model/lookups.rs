//! Questions of where something is defined: the call goes to the tool that looks names up,
//! and the answer written from its result never names the tool. Structure only: which tool,
//! which names are absent, never what the answer says.

use super::*;
use lantern_core::model::GenerationOptions;

/// What the code of an imagined project defines (sorted, as the code index gives them).
fn defined() -> Vec<String> {
    let mut names: Vec<String> = ["Ledger", "Posting", "balance_of", "open_ledger"]
        .map(str::to_string)
        .to_vec();
    names.sort();
    names
}

/// The tool of the first call a where-question about a defined name gets.
fn first_tool(model: &mut LocalModel, question: &str) -> String {
    let messages = conversation(question);
    let names = defined();
    let cancel = CancelToken::new();
    let request = GenerateRequest::new(&messages, 120, &cancel)
        .with_tools(toolbox().specs())
        .with_defined_names(&names)
        .with_stop(STOP_SEQUENCES)
        .with_tool_choice(ToolChoice::Required);
    let generation = model.generate(&request, &mut |_| Flow::Continue).unwrap();
    match interpret(&parse(&generation.text), &ToolRegistry::standard()) {
        Outcome::ToolCall(parsed) => parsed.call.tool,
        other => panic!("a required step is a call: {other:?}\n{}", generation.text),
    }
}

#[test]
fn a_where_question_about_a_defined_name_calls_the_name_lookup() {
    let mut model = model();
    let question = "Where is the Ledger class defined?";
    model.configure(&GenerationOptions {
        where_lookups: false,
        ..GenerationOptions::default()
    });
    let without = first_tool(&mut model, question);
    assert_ne!(
        without, "find_definition",
        "precondition: the rule has work to do"
    );

    model.configure(&GenerationOptions::default());
    assert_eq!(first_tool(&mut model, question), "find_definition");
    // Not a where-question: the rule leaves the choice alone.
    model.configure(&GenerationOptions::default());
    let asked_what = first_tool(&mut model, "What does the Ledger class hold?");
    model.configure(&GenerationOptions {
        where_lookups: false,
        ..GenerationOptions::default()
    });
    assert_eq!(
        asked_what,
        first_tool(&mut model, "What does the Ledger class hold?")
    );
}

/// A small Python project: a ledger with two classes and two functions in two modules.
fn ledger_project() -> TestFolder {
    made_up_project(
        "ledger-project",
        &[
        (
            "README.md",
            "# ledger\n\nA tiny double-entry ledger. Use the Ledger class to post entries.\n",
        ),
        ("ledger/__init__.py", "from .books import Ledger, open_ledger\n"),
        (
            "ledger/books.py",
            "import json\n\n\nclass Posting:\n    def __init__(self, account, amount):\n        self.account = account\n        self.amount = amount\n\n\nclass Ledger:\n    def __init__(self):\n        self.postings = []\n\n    def post(self, account, amount):\n        self.postings.append(Posting(account, amount))\n\n\ndef open_ledger(path):\n    with open(path) as f:\n        return json.load(f)\n",
        ),
        (
            "ledger/report.py",
            "from .books import Ledger\n\n\ndef render(ledger: Ledger):\n    return str(len(ledger.postings))\n",
        ),
        ],
    )
}

/// The last reply of a turn on `question` in the ledger project, in the model's own words
/// (before any note Lantern adds), every call approved.
fn last_reply(model: &mut LocalModel, dir: &std::path::Path, question: &str) -> String {
    let mut session = fresh_session(dir, Toolbox::standard().into());
    session.config.max_steps = 3;
    let mut last = String::new();
    session.send(
        question,
        model,
        &mut FixedAnswer(Answer::AllowOnce),
        &mut |e| {
            if let Event::ResponseFinished { raw, .. } = e {
                last = raw.clone();
            }
        },
        &CancelToken::new(),
    );
    last
}

#[test]
fn an_answer_never_names_a_tool_the_conversation_does_not() {
    let names_a_tool = |answer: &str| {
        let answer = answer.replace('-', "_");
        toolbox()
            .specs()
            .iter()
            .map(|t| t.name.clone())
            .find(|name| name.contains('_') && answer.contains(name.as_str()))
    };
    let dir = ledger_project();
    let questions = [
        "Which file has the Posting class?",
        "Where does render live?",
    ];
    let mut model = model();
    model.configure(&GenerationOptions {
        shun_examples: false,
        ..GenerationOptions::default()
    });
    let free: Vec<String> = questions
        .iter()
        .map(|q| last_reply(&mut model, &dir, q))
        .collect();
    assert!(
        free.iter().any(|a| names_a_tool(a).is_some()),
        "precondition: {free:?}"
    );

    model.configure(&GenerationOptions::default());
    for question in questions {
        let answer = last_reply(&mut model, &dir, question);
        assert_eq!(names_a_tool(&answer), None, "{question}: {answer:?}");
    }
}
