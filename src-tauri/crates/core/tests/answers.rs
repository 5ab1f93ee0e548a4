//! The answer the user is given for the reply that ends a turn: without the repeats it ended
//! on, with files named by their paths, and followed by what the results say in answer to the
//! question's form. A scripted model against real temp workspaces.

use lantern_core::agent::{Answer, FixedAnswer};
use lantern_core::event::{Event, FinishedReason};
use lantern_core::model::{
    CancelToken, FinishReason, Flow, GenerateRequest, Generation, Model, ModelError,
};

mod common;
use common::{asking, call, finished, run, session, workspace};

#[test]
fn an_answer_ended_for_repeating_itself_is_given_without_the_repeats() {
    /// A backend whose answer loops until it ends it, as the local engine does.
    struct Looping(FinishReason);
    impl Model for Looping {
        fn name(&self) -> String {
            "looping".into()
        }
        fn generate(
            &mut self,
            _: &GenerateRequest<'_>,
            on_text: &mut dyn FnMut(&str) -> Flow,
        ) -> Result<Generation, ModelError> {
            let text = "It is in utils.py.\n\nIt is in utils.py.\n\nIt is in utils.";
            on_text(text);
            Ok(Generation::text(text, self.0))
        }
    }
    let dir = workspace();
    let mut events = Vec::new();
    session(dir.path()).send(
        "Where is banner defined?",
        &mut Looping(FinishReason::Repeating),
        &mut FixedAnswer(Answer::Deny { message: None }),
        &mut |e| events.push(e.clone()),
        &CancelToken::new(),
    );
    assert_eq!(
        finished(&events),
        (FinishedReason::Answer, "It is in utils.py.".to_string())
    );
    assert!(events.iter().any(|e| matches!(
        e,
        Event::AnswerCut { text, .. } if text == "It is in utils.py."
    )));

    // An answer the backend ended for another reason is the model's text as it stands.
    let mut events = Vec::new();
    session(dir.path()).send(
        "Where is banner defined?",
        &mut Looping(FinishReason::Length),
        &mut FixedAnswer(Answer::Deny { message: None }),
        &mut |e| events.push(e.clone()),
        &CancelToken::new(),
    );
    assert!(finished(&events).1.ends_with("It is in utils."));
    assert!(!events.iter().any(|e| matches!(e, Event::AnswerCut { .. })));
}

#[test]
fn a_file_the_answer_names_by_its_name_alone_is_given_by_the_path_the_result_showed() {
    let dir = workspace();
    std::fs::create_dir_all(dir.path().join("lib/models")).unwrap();
    std::fs::write(
        dir.path().join("lib/models/tokenizer.js"),
        "class Tokenizer {}\nmodule.exports = Tokenizer\n",
    )
    .unwrap();
    let search = call("search_code", r#"{"query": "Tokenizer"}"#);
    let answer = "The Tokenizer class is defined in Tokenizer.js.";
    let mut s = session(dir.path());
    let (events, model) = run(
        &mut s,
        vec![search.clone(), answer.into()],
        &mut FixedAnswer(Answer::Deny { message: None }),
    );
    let given = "The Tokenizer class is defined in lib/models/tokenizer.js.";
    assert_eq!(
        finished(&events),
        (FinishedReason::Answer, given.to_string())
    );
    assert!(events.iter().any(|e| matches!(
        e,
        Event::AnswerPathsGiven { text, paths, .. }
            if text == given && paths[0].name == "Tokenizer.js"
                && paths[0].path == "lib/models/tokenizer.js"
    )));
    // The model reads its reply back as it wrote it.
    assert_eq!(s.history().last().unwrap().content, answer);
    assert_eq!(model.seen.len(), 2);

    // Named before any result showed the file, or with the lever off, the name stays.
    let (events, _) = run(
        &mut session(dir.path()),
        vec![answer.into()],
        &mut FixedAnswer(Answer::Deny { message: None }),
    );
    assert_eq!(finished(&events).1, answer);
    let mut off = session(dir.path());
    off.config.answer_paths = false;
    let (events, _) = run(
        &mut off,
        vec![search, answer.into()],
        &mut FixedAnswer(Answer::Deny { message: None }),
    );
    assert_eq!(finished(&events).1, answer);
    assert!(!events
        .iter()
        .any(|e| matches!(e, Event::AnswerPathsGiven { .. })));
}

#[test]
fn an_answer_to_how_many_files_that_leaves_the_count_out_is_followed_by_the_listing_s_count() {
    let dir = workspace();
    for name in ["a.rs", "b.rs", "c.txt"] {
        std::fs::write(dir.path().join("src").join(name), "\n").unwrap();
    }
    let listing = call("list_files", r#"{"directory": "src", "pattern": "*.rs"}"#);
    let answer = "The files are src/a.rs, src/b.rs and src/lib.rs.";
    let question = "How many Rust files are in src?";
    let mut s = session(dir.path());
    let (events, _) = asking(
        &mut s,
        question,
        vec![listing.clone(), answer.into()],
        &mut FixedAnswer(Answer::Deny { message: None }),
    );
    let noted = format!("{answer}\n\nThe listing of `src` matching `*.rs` found 3 files.");
    assert_eq!(finished(&events), (FinishedReason::Answer, noted.clone()));
    assert!(events.iter().any(|e| matches!(
        e,
        Event::AnswerNoted { text, notes, .. } if *text == noted && notes.len() == 1
    )));
    // The model reads its reply back as it wrote it.
    assert_eq!(s.history().last().unwrap().content, answer);

    // An answer that gives the count, or the lever off, is left as the model wrote it.
    let (events, _) = asking(
        &mut session(dir.path()),
        question,
        vec![listing.clone(), "There are 3.".into()],
        &mut FixedAnswer(Answer::Deny { message: None }),
    );
    assert_eq!(finished(&events).1, "There are 3.");
    let mut off = session(dir.path());
    off.config.count_notes = false;
    let (events, _) = asking(
        &mut off,
        question,
        vec![listing, answer.into()],
        &mut FixedAnswer(Answer::Deny { message: None }),
    );
    assert_eq!(finished(&events).1, answer);
    assert!(!events
        .iter()
        .any(|e| matches!(e, Event::AnswerNoted { .. })));
}

#[test]
fn an_answer_to_where_that_names_another_place_is_followed_by_where_the_search_found_it_defined() {
    let dir = workspace();
    std::fs::write(
        dir.path().join("src/config.rs"),
        "use crate::parse_config;\n\npub fn load() {\n    parse_config();\n}\n",
    )
    .unwrap();
    let search = call("search_code", r#"{"query": "parse_config"}"#);
    let question = "Where is parse_config defined?";
    let answer = "It is defined in src/config.rs.";
    let (events, _) = asking(
        &mut session(dir.path()),
        question,
        vec![search.clone(), answer.into()],
        &mut FixedAnswer(Answer::Deny { message: None }),
    );
    assert_eq!(
        finished(&events).1,
        format!("{answer}\n\nThe search shows `parse_config` defined in src/lib.rs (line 1).")
    );

    // Not for a question of another form, nor with the lever off.
    let (events, _) = asking(
        &mut session(dir.path()),
        "What does parse_config do?",
        vec![search.clone(), answer.into()],
        &mut FixedAnswer(Answer::Deny { message: None }),
    );
    assert_eq!(finished(&events).1, answer);
    let mut off = session(dir.path());
    off.config.definition_notes = false;
    let (events, _) = asking(
        &mut off,
        question,
        vec![search, answer.into()],
        &mut FixedAnswer(Answer::Deny { message: None }),
    );
    assert_eq!(finished(&events).1, answer);
}

#[test]
fn a_reply_of_nothing_but_repeated_blank_lines_says_there_is_no_answer() {
    /// A backend whose reply is blank lines until it ends it for repeating.
    struct Blank;
    impl Model for Blank {
        fn name(&self) -> String {
            "blank".into()
        }
        fn generate(
            &mut self,
            _: &GenerateRequest<'_>,
            on_text: &mut dyn FnMut(&str) -> Flow,
        ) -> Result<Generation, ModelError> {
            let text = "\n".repeat(40);
            on_text(&text);
            Ok(Generation::text(text, FinishReason::Repeating))
        }
    }
    let dir = workspace();
    let mut events = Vec::new();
    session(dir.path()).send(
        "Where is banner defined?",
        &mut Blank,
        &mut FixedAnswer(Answer::Deny { message: None }),
        &mut |e| events.push(e.clone()),
        &CancelToken::new(),
    );
    match events.last() {
        Some(Event::TurnFinished {
            text, explanation, ..
        }) => {
            assert_eq!(text.trim(), "");
            assert_eq!(explanation, lantern_core::event::NO_ANSWER);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_answer_that_talks_about_the_protocol_is_an_answer_not_a_broken_call() {
    let dir = workspace();
    let prose =
        "To call a tool you write a TOOL_CALL block; I do not need one here. The answer is 42.";
    let (events, _) = asking(
        &mut session(dir.path()),
        "What is six times seven?",
        vec![prose.to_string()],
        &mut FixedAnswer(Answer::Deny { message: None }),
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::CallRejected { .. })),
        "{events:?}"
    );
    assert_eq!(
        finished(&events),
        (FinishedReason::Answer, prose.to_string())
    );

    // The same word where the protocol puts it is still refused as a broken call.
    let soup = "TOOL_RESULT: {\"answer\": 42}";
    let (events, _) = asking(
        &mut session(dir.path()),
        "What is six times seven?",
        vec![soup.to_string(), "It is 42.".to_string()],
        &mut FixedAnswer(Answer::Deny { message: None }),
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::CallRejected { .. })));
    assert_eq!(
        finished(&events),
        (FinishedReason::Answer, "It is 42.".to_string())
    );
}
