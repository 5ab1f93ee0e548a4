//! A write to a file the user never pointed at: the model's own guess is flagged, asked about
//! whatever the grants say, and never approved by an automatic yes.

use lantern_core::agent::{Answer, Confirmer, FixedAnswer, PermissionRequest};
use lantern_core::event::Event;
use lantern_core::model::ScriptedModel;
use lantern_core::policy::Scope;
use lantern_core::protocol::markers::text_protocol_messages;
mod common;
use common::{asking, call, session, workspace};

const PACKAGE: &str = "{\"name\": \"shop\", \"version\": \"2.4.1\"}\n";

fn read_back(dir: &std::path::Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap()
}

/// What the model read after its call of step `step`.
fn feedback(model: &ScriptedModel, step: usize) -> String {
    text_protocol_messages(&model.seen[step])
        .last()
        .unwrap()
        .content
        .clone()
}

/// The rules under which the user was asked, in order.
fn rules_asked(events: &[Event]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::PermissionAsked { rule, .. } => Some(rule.as_str()),
            _ => None,
        })
        .collect()
}

/// Answers every request with `answer` and keeps what it was asked.
struct Recorder {
    answer: Answer,
    asked: Vec<PermissionRequest>,
}

impl Confirmer for Recorder {
    fn confirm(&mut self, request: &PermissionRequest) -> Answer {
        self.asked.push(request.clone());
        self.answer.clone()
    }
}

#[test]
fn an_automatic_yes_does_not_approve_an_edit_of_a_file_the_user_did_not_name() {
    let dir = workspace();
    std::fs::write(dir.path().join(".gitignore"), "node_modules\n").unwrap();
    let mut s = session(dir.path());
    let (events, model) = asking(
        &mut s,
        "Add *.log to .gitignore on a new line, keeping the existing entries.",
        vec![
            call(
                "edit_file",
                r#"{"path": "package.json", "old_text": "\"version\": \"2.4.1\"", "new_text": "\"version\": \"2.4.1\", \"log\": true"}"#,
            ),
            call(
                "edit_file",
                r#"{"path": ".gitignore", "old_text": "node_modules", "new_text": "node_modules\n*.log"}"#,
            ),
            "Done.".into(),
        ],
        &mut FixedAnswer(Answer::AllowOnce),
    );
    assert_eq!(read_back(dir.path(), "package.json"), PACKAGE);
    let refusal = feedback(&model, 1);
    assert!(refusal.contains("Permission denied"), "{refusal}");
    assert!(
        refusal.contains("package.json, which the user did not name"),
        "{refusal}"
    );
    // The file the user named is edited under the same automatic yes.
    assert_eq!(read_back(dir.path(), ".gitignore"), "node_modules\n*.log\n");
    let asked = rules_asked(&events);
    assert!(asked[0].starts_with("unsure target"), "{asked:?}");
    assert!(
        asked[1].starts_with("default: writes ask first"),
        "{asked:?}"
    );
    // The transcript keeps what the confirmation flagged, beside the rule.
    let flagged: Vec<&Vec<String>> = events
        .iter()
        .filter_map(|e| match e {
            Event::PermissionAsked { unpointed, .. } => Some(unpointed),
            _ => None,
        })
        .collect();
    assert_eq!(flagged, [&vec!["package.json".to_string()], &vec![]]);
}

#[test]
fn the_confirmation_names_the_files_the_model_chose_on_its_own() {
    let dir = workspace();
    let mut s = session(dir.path());
    let mut confirmer = Recorder {
        answer: Answer::Deny { message: None },
        asked: Vec::new(),
    };
    asking(
        &mut s,
        "Bump the version of the shop to 2.5.0.",
        vec![
            call(
                "write_file",
                r#"{"path": "release-notes.txt", "content": "2.5.0\n"}"#,
            ),
            call(
                "edit_file",
                r#"{"path": "package.json", "old_text": "2.4.1", "new_text": "2.5.0"}"#,
            ),
            "Done.".into(),
        ],
        &mut confirmer,
    );
    assert_eq!(confirmer.asked[0].unpointed, ["release-notes.txt"]);
    assert_eq!(confirmer.asked[1].unpointed, ["package.json"]);
    assert!(confirmer.asked[1]
        .rule
        .contains("you did not name package.json"));
}

#[test]
fn a_grant_does_not_silently_allow_a_write_nobody_pointed_at() {
    let dir = workspace();
    let mut s = session(dir.path());
    let mut confirmer = Recorder {
        answer: Answer::AllowSession { scope: Scope::Tool },
        asked: Vec::new(),
    };
    asking(
        &mut s,
        "Write hello to notes.md.",
        vec![
            call(
                "write_file",
                r#"{"path": "notes.md", "content": "hello\n"}"#,
            ),
            call(
                "write_file",
                r#"{"path": "notes.md", "content": "hello\nagain\n"}"#,
            ),
            call("write_file", r#"{"path": "other.md", "content": "x\n"}"#),
            "Done.".into(),
        ],
        &mut confirmer,
    );
    // Asked for the first write (the default), not the second (the grant), and again for
    // the file nobody named, though the grant covers every write_file call.
    let asked: Vec<&[String]> = confirmer.asked.iter().map(|r| r.paths.as_slice()).collect();
    assert_eq!(asked, [["notes.md"], ["other.md"]]);
    assert_eq!(confirmer.asked[1].unpointed, ["other.md"]);
}

#[test]
fn a_file_a_search_of_the_turn_found_may_be_edited_under_an_automatic_yes() {
    let dir = workspace();
    let mut s = session(dir.path());
    let (_, model) = asking(
        &mut s,
        "The config parser should be public in the crate only; fix it.",
        vec![
            call("search_code", r#"{"query": "parse_config"}"#),
            call(
                "edit_file",
                r#"{"path": "src/lib.rs", "old_text": "pub fn", "new_text": "pub(crate) fn"}"#,
            ),
            "Done.".into(),
        ],
        &mut FixedAnswer(Answer::AllowOnce),
    );
    assert_eq!(
        read_back(dir.path(), "src/lib.rs"),
        "pub(crate) fn parse_config() {}\n",
        "{}",
        feedback(&model, 2)
    );
}

#[test]
fn a_call_written_by_hand_is_the_user_s_own_choice() {
    let dir = workspace();
    let mut s = session(dir.path());
    let outcome = s.run_call(
        "write_file",
        serde_json::json!({"path": "notes.md", "content": "by hand\n"}),
        &mut FixedAnswer(Answer::AllowOnce),
        &mut |_| {},
    );
    assert!(outcome.into_result().success);
    assert_eq!(read_back(dir.path(), "notes.md"), "by hand\n");
}

#[test]
fn a_new_file_named_as_what_goes_into_another_is_not_one_to_create() {
    let dir = workspace();
    std::fs::write(dir.path().join(".gitignore"), "node_modules\n").unwrap();
    let mut s = session(dir.path());
    let (_, model) = asking(
        &mut s,
        "Add a coverage.xml entry to the .gitignore.",
        vec![
            call(
                "write_file",
                r#"{"path": "coverage.xml", "content": "<coverage/>\n"}"#,
            ),
            call(
                "edit_file",
                r#"{"path": ".gitignore", "old_text": "node_modules", "new_text": "node_modules\ncoverage.xml"}"#,
            ),
            "Done.".into(),
        ],
        &mut FixedAnswer(Answer::AllowOnce),
    );
    assert!(!dir.path().join("coverage.xml").exists());
    let refusal = feedback(&model, 1);
    assert!(
        refusal.contains("coverage.xml, which the user did not name"),
        "{refusal}"
    );
    assert_eq!(
        read_back(dir.path(), ".gitignore"),
        "node_modules\ncoverage.xml\n"
    );
}

#[test]
fn a_new_file_the_user_asks_for_is_created_under_an_automatic_yes() {
    let dir = workspace();
    let mut s = session(dir.path());
    asking(
        &mut s,
        "Please create docs/faq.md with a heading.",
        vec![
            call(
                "write_file",
                r##"{"path": "docs/faq.md", "content": "# FAQ\n"}"##,
            ),
            "Done.".into(),
        ],
        &mut FixedAnswer(Answer::AllowOnce),
    );
    assert_eq!(read_back(dir.path(), "docs/faq.md"), "# FAQ\n");
}

#[test]
fn an_automatic_yes_does_not_approve_a_rewrite_that_drops_lines() {
    let dir = workspace();
    std::fs::write(dir.path().join(".gitignore"), "node_modules\n\ndist\n").unwrap();
    let mut s = session(dir.path());
    let (events, model) = asking(
        &mut s,
        "Have .gitignore cover *.tmp as well.",
        vec![
            call(
                "write_file",
                r#"{"path": ".gitignore", "content": "*.tmp\n"}"#,
            ),
            call(
                "write_file",
                r#"{"path": ".gitignore", "content": "node_modules\ndist\n*.tmp\n"}"#,
            ),
            "Done.".into(),
        ],
        &mut FixedAnswer(Answer::AllowOnce),
    );
    let refusal = feedback(&model, 1);
    assert!(
        refusal.contains("the write would drop 2 of the 2 non-blank lines of .gitignore"),
        "{refusal}"
    );
    // The rewrite that keeps every line (a blank one aside) is approved.
    assert_eq!(
        read_back(dir.path(), ".gitignore"),
        "node_modules\ndist\n*.tmp\n"
    );
    let asked = rules_asked(&events);
    assert!(asked[0].starts_with("lines dropped"), "{asked:?}");
}

#[test]
fn a_person_is_shown_the_lines_a_rewrite_drops_even_under_a_grant() {
    let dir = workspace();
    std::fs::write(dir.path().join("notes.md"), "one\ntwo\nthree\n").unwrap();
    let mut s = session(dir.path());
    let mut confirmer = Recorder {
        answer: Answer::AllowSession { scope: Scope::Tool },
        asked: Vec::new(),
    };
    let (events, _) = asking(
        &mut s,
        "Tidy notes.md.",
        vec![
            call(
                "write_file",
                r#"{"path": "notes.md", "content": "one\ntwo\nthree\nfour\n"}"#,
            ),
            call("write_file", r#"{"path": "notes.md", "content": "one\n"}"#),
            "Done.".into(),
        ],
        &mut confirmer,
    );
    // The first write keeps every line and is asked by default; the grant then covers
    // write_file, but not the rewrite that drops most of the file.
    assert_eq!(confirmer.asked.len(), 2);
    assert!(confirmer.asked[0].drops.is_empty());
    // Counted from what the file held when the turn began: two of its three lines.
    let drops = &confirmer.asked[1].drops;
    assert_eq!(
        (drops[0].path.as_str(), drops[0].dropped, drops[0].of),
        ("notes.md", 2, 3)
    );
    // The transcript keeps the loss the person was shown.
    let logged = events.iter().rev().find_map(|e| match e {
        Event::PermissionAsked { drops, .. } => Some(drops),
        _ => None,
    });
    assert_eq!(logged, Some(drops));
}

#[test]
fn an_edit_whose_old_text_is_most_of_the_file_needs_a_person_too() {
    let dir = workspace();
    std::fs::write(dir.path().join("notes.md"), "# Notes\n- one\n- two\n").unwrap();
    let mut s = session(dir.path());
    let (_, model) = asking(
        &mut s,
        "Add a third item to notes.md.",
        vec![
            call(
                "edit_file",
                r##"{"path": "notes.md", "old_text": "# Notes\n- one\n- two", "new_text": "- three"}"##,
            ),
            call(
                "edit_file",
                r#"{"path": "notes.md", "old_text": "- two", "new_text": "- two\n- three"}"#,
            ),
            "Done.".into(),
        ],
        &mut FixedAnswer(Answer::AllowOnce),
    );
    let refusal = feedback(&model, 1);
    assert!(
        refusal.contains("drop 3 of the 3 non-blank lines of notes.md"),
        "{refusal}"
    );
    assert_eq!(
        read_back(dir.path(), "notes.md"),
        "# Notes\n- one\n- two\n- three\n"
    );
}

#[test]
fn an_automatic_yes_does_not_approve_writing_over_a_line_the_user_did_not_ask_to_change() {
    let dir = workspace();
    std::fs::write(dir.path().join(".gitignore"), "node_modules\ncoverage\n").unwrap();
    let mut s = session(dir.path());
    let (events, model) = asking(
        &mut s,
        "Put the scratch files (*.tmp) into .gitignore too.",
        vec![
            call(
                "edit_file",
                r#"{"path": ".gitignore", "old_text": "coverage", "new_text": "*.tmp"}"#,
            ),
            call(
                "edit_file",
                r#"{"path": ".gitignore", "old_text": "coverage", "new_text": "coverage\n*.tmp"}"#,
            ),
            "Done.".into(),
        ],
        &mut FixedAnswer(Answer::AllowOnce),
    );
    let refusal = feedback(&model, 1);
    assert!(
        refusal.contains(
            "1 of the 2 non-blank lines of .gitignore (1 written over, though the user asked to change nothing there)"
        ),
        "{refusal}"
    );
    assert_eq!(
        read_back(dir.path(), ".gitignore"),
        "node_modules\ncoverage\n*.tmp\n"
    );
    let logged = events.iter().find_map(|e| match e {
        Event::PermissionAsked { drops, .. } => drops.first(),
        _ => None,
    });
    assert!(
        logged.is_some_and(|d| d.asked_to_keep && d.lost == 1),
        "{logged:?}"
    );
}

#[test]
fn a_line_changed_in_place_is_approved_whether_the_user_asked_to_add_or_to_change() {
    let dir = workspace();
    std::fs::write(
        dir.path().join("client.py"),
        "def fetch(url):\n    return url\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("server.env"), "PORT=8080\n").unwrap();
    for (message, edit) in [
        (
            "Put a retries argument on fetch in client.py.",
            r#"{"path": "client.py", "old_text": "def fetch(url):", "new_text": "def fetch(url, retries=3):"}"#,
        ),
        (
            "Set the port in server.env to 9090.",
            r#"{"path": "server.env", "old_text": "PORT=8080", "new_text": "PORT=9090"}"#,
        ),
    ] {
        let mut s = session(dir.path());
        asking(
            &mut s,
            message,
            vec![call("edit_file", edit), "Done.".into()],
            &mut FixedAnswer(Answer::AllowOnce),
        );
    }
    assert_eq!(
        read_back(dir.path(), "client.py"),
        "def fetch(url, retries=3):\n    return url\n"
    );
    assert_eq!(read_back(dir.path(), "server.env"), "PORT=9090\n");
}

#[test]
fn lines_lost_one_call_at_a_time_add_up_over_the_turn() {
    let dir = workspace();
    std::fs::write(
        dir.path().join("todo.md"),
        "- one\n- two\n- three\n- four\n",
    )
    .unwrap();
    let take = |line: &str| {
        call(
            "edit_file",
            &format!(r#"{{"path": "todo.md", "old_text": "- {line}\n", "new_text": ""}}"#),
        )
    };
    let mut s = session(dir.path());
    let (_, model) = asking(
        &mut s,
        "Remove the finished items from todo.md.",
        vec![take("one"), take("two"), take("three"), "Done.".into()],
        &mut FixedAnswer(Answer::AllowOnce),
    );
    // Each call takes one line of what is left; the third makes three of the four lines
    // the file had when the turn began.
    let refusal = feedback(&model, 3);
    assert!(
        refusal.contains("drop 3 of the 4 non-blank lines of todo.md"),
        "{refusal}"
    );
    assert_eq!(read_back(dir.path(), "todo.md"), "- three\n- four\n");
    // A new turn starts counting again.
    let (_, model) = asking(
        &mut s,
        "Remove the finished items from todo.md.",
        vec![take("three"), "Done.".into()],
        &mut FixedAnswer(Answer::AllowOnce),
    );
    assert!(
        !feedback(&model, 1).contains("drop"),
        "{}",
        feedback(&model, 1)
    );
    assert_eq!(read_back(dir.path(), "todo.md"), "- four\n");
}

#[test]
fn a_file_named_like_a_function_defined_elsewhere_is_not_pointed_at_by_that_name() {
    let dir = workspace();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::create_dir_all(dir.path().join("tests")).unwrap();
    std::fs::write(
        dir.path().join("src/text.rs"),
        "pub fn shout(s: &str) -> String {\n    s.to_uppercase()\n}\n",
    )
    .unwrap();
    let test = "#[test]\nfn loud() {\n    assert_eq!(shout(\"a\"), \"A!\");\n}\n";
    std::fs::write(dir.path().join("tests/shout.rs"), test).unwrap();
    let mut s = session(dir.path());
    let (_, model) = asking(
        &mut s,
        "The shout helper forgets the exclamation mark. Please fix it.",
        vec![
            call(
                "edit_file",
                r#"{"path": "tests/shout.rs", "old_text": "\"A!\"", "new_text": "\"A\""}"#,
            ),
            "Done.".into(),
        ],
        &mut FixedAnswer(Answer::AllowOnce),
    );
    // `shout` is defined in src/text.rs: the test file named after it is the model's guess.
    let refusal = feedback(&model, 1);
    assert!(
        refusal.contains("tests/shout.rs, which the user did not name"),
        "{refusal}"
    );
    assert_eq!(read_back(dir.path(), "tests/shout.rs"), test);
}

#[test]
fn a_value_changed_in_place_is_shown_by_its_diff_alone_and_a_line_taken_out_as_a_loss() {
    let dir = workspace();
    std::fs::write(
        dir.path().join("cache.js"),
        "class Cache {\n  constructor () {\n    this.max = 1000\n    this.map = new Map()\n  }\n}\n",
    )
    .unwrap();
    let mut s = session(dir.path());
    let mut confirmer = Recorder {
        answer: Answer::AllowOnce,
        asked: Vec::new(),
    };
    asking(
        &mut s,
        "Adjust this.max in cache.js by half.",
        vec![
            call(
                "edit_file",
                r#"{"path": "cache.js", "old_text": "this.max = 1000", "new_text": "this.max = 500"}"#,
            ),
            call(
                "edit_file",
                r#"{"path": "cache.js", "old_text": "    this.max = 500\n    this.map = new Map()\n", "new_text": "    this.max = 400\n"}"#,
            ),
            "Done.".into(),
        ],
        &mut confirmer,
    );
    assert_eq!(confirmer.asked.len(), 2);
    // The value's line lives on, changed: nothing is lost, and no loss is shown.
    assert!(
        confirmer.asked[0].drops.is_empty(),
        "{:?}",
        confirmer.asked[0].drops
    );
    // The second edit takes a line out: shown as lost, the changed value counted apart.
    let drops = &confirmer.asked[1].drops;
    assert_eq!(
        (drops[0].dropped, drops[0].lost, drops[0].of),
        (2, 1, 6),
        "{drops:?}"
    );
    assert_eq!(
        lantern_core::policy::dropped_lines(drops),
        "the write would drop 2 of the 6 non-blank lines of cache.js (1 of them only changed)"
    );
}
