//! Writes: asked with their diff, denied, granted for the session or always, checkpointed and undone.

use super::*;

#[test]
fn an_edit_asks_with_its_diff_and_the_matcher_and_changes_only_its_place() {
    let dir = workspace();
    let mut s = session(dir.path());
    let mut confirmer = Recorder {
        answers: vec![Answer::AllowOnce],
        asked: vec![],
    };
    let (events, model) = run(
        &mut s,
        vec![
            call(
                "edit_file",
                r#"{"path": "package.json", "old_text": "\"version\": \"2.4.1\"", "new_text": "\"version\": \"2.5.0\""}"#,
            ),
            "Done.".into(),
        ],
        &mut confirmer,
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("package.json")).unwrap(),
        "{\"name\": \"shop\", \"version\": \"2.5.0\"}\n"
    );
    let preview = confirmer.asked[0].preview.as_ref().unwrap();
    assert!(preview["unified"]
        .as_str()
        .unwrap()
        .contains("+{\"name\": \"shop\", \"version\": \"2.5.0\"}"));
    assert_eq!(preview["matched_by"], "exact");
    assert!(last_read(&model, 1).contains("\"matched_by\":\"exact\""));
    assert_eq!(finished(&events).0, FinishedReason::Answer);
}

#[test]
fn an_edit_whose_old_text_is_missing_fails_with_the_closest_line_and_asks_nothing() {
    let dir = workspace();
    let mut s = session(dir.path());
    let mut confirmer = Recorder {
        answers: vec![],
        asked: vec![],
    };
    let (events, model) = run(
        &mut s,
        vec![
            call(
                "edit_file",
                r#"{"path": "src/lib.rs", "old_text": "pub fn parse_conf() {}", "new_text": "pub fn parse() {}"}"#,
            ),
            "Sorry.".into(),
        ],
        &mut confirmer,
    );
    assert!(confirmer.asked.is_empty(), "nothing to approve");
    let feedback = last_read(&model, 1);
    assert!(
        feedback.contains("old_text is not in src/lib.rs"),
        "{feedback}"
    );
    assert!(
        feedback.contains("Did you mean line 1: pub fn parse_config() {}"),
        "{feedback}"
    );
    assert!(names(&events).contains(&"tool_finished".to_string()));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("src/lib.rs")).unwrap(),
        "pub fn parse_config() {}\n"
    );
}

#[test]
fn a_denied_write_leaves_the_file_alone_and_tells_the_model_why() {
    let dir = workspace();
    let mut s = session(dir.path());
    let mut confirmer = Recorder {
        answers: vec![Answer::Deny {
            message: Some("use docs/ instead".into()),
        }],
        asked: vec![],
    };
    let (events, model) = run(
        &mut s,
        vec![
            call("write_file", r#"{"path": "notes.md", "content": "hi\n"}"#),
            "OK.".into(),
        ],
        &mut confirmer,
    );
    assert!(!dir.path().join("notes.md").exists());
    assert_eq!(confirmer.asked.len(), 1);
    let preview = confirmer.asked[0].preview.as_ref().unwrap();
    assert!(preview["unified"].as_str().unwrap().contains("+hi"));
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::PermissionAsked { .. })));
    let feedback = &last_read(&model, 1);
    assert!(
        feedback.starts_with("TOOL_ERROR: Permission denied"),
        "{feedback}"
    );
    assert!(feedback.contains("use docs/ instead"));
    assert!(!names(&events).contains(&"tool_started".to_string()));
}

#[test]
fn allow_for_the_session_stops_asking_for_that_file_only() {
    let dir = workspace();
    let mut s = session(dir.path());
    let mut confirmer = Recorder {
        answers: vec![
            Answer::AllowSession {
                scope: Scope::Path("notes.md".into()),
            },
            Answer::Deny { message: None },
        ],
        asked: vec![],
    };
    asking(
        &mut s,
        "Put one, then two, into notes.md.",
        vec![
            call("write_file", r#"{"path": "notes.md", "content": "one\n"}"#),
            call(
                "write_file",
                r#"{"path": "notes.md", "content": "one\ntwo\n"}"#,
            ),
            call("write_file", r#"{"path": "other.md", "content": "x\n"}"#),
            "done".into(),
        ],
        &mut confirmer,
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.md")).unwrap(),
        "one\ntwo\n"
    );
    assert!(!dir.path().join("other.md").exists());
    assert_eq!(
        confirmer.asked.len(),
        2,
        "asked for notes.md once and other.md once"
    );
    assert_eq!(s.grants().count(), 1);
}

#[test]
fn always_grants_are_saved_for_the_workspace() {
    let dir = workspace();
    let config = tempfile::tempdir().unwrap();
    let ws = Workspace::open(dir.path()).unwrap();
    let store =
        || PolicyStore::for_workspace(config.path(), &std::fs::canonicalize(dir.path()).unwrap());
    let mut s = Session::new(
        ws,
        SessionOptions {
            policy: Some(store()),
            ..SessionOptions::in_memory(Toolbox::standard().into())
        },
    );
    let mut confirmer = Recorder {
        answers: vec![Answer::AllowAlways {
            scope: Scope::Glob("docs/**".into()),
        }],
        asked: vec![],
    };
    run(
        &mut s,
        vec![
            call("write_file", r#"{"path": "docs/a.md", "content": "a\n"}"#),
            "done".into(),
        ],
        &mut confirmer,
    );
    let saved = store().load().grants;
    assert_eq!(saved.len(), 1);
    assert_eq!(saved[0].scope, Scope::Glob("docs/**".into()));

    // A new session in the same workspace does not ask again inside docs/.
    let mut s2 = Session::new(
        Workspace::open(dir.path()).unwrap(),
        SessionOptions {
            policy: Some(store()),
            ..SessionOptions::in_memory(Toolbox::standard().into())
        },
    );
    let mut never = Recorder {
        answers: vec![],
        asked: vec![],
    };
    asking(
        &mut s2,
        "Write docs/b/c.md.",
        vec![
            call("write_file", r#"{"path": "docs/b/c.md", "content": "c\n"}"#),
            "done".into(),
        ],
        &mut never,
    );
    assert!(dir.path().join("docs/b/c.md").exists());
    assert!(never.asked.is_empty());
}

#[test]
fn writes_are_checkpointed_and_undoable() {
    let dir = workspace();
    let data = tempfile::tempdir().unwrap();
    let ws = Workspace::open(dir.path()).unwrap();
    let store = CheckpointStore::for_workspace(data.path(), &ws);
    let mut s = Session::new(
        ws,
        SessionOptions {
            checkpoints: Some(store),
            ..SessionOptions::in_memory(Toolbox::standard().into())
        },
    );
    asking(
        &mut s,
        "Empty package.json.",
        vec![
            call(
                "write_file",
                r#"{"path": "package.json", "content": "{}\n"}"#,
            ),
            "done".into(),
        ],
        // A person: an automatic yes does not approve a rewrite that drops lines.
        &mut Recorder {
            answers: vec![Answer::AllowOnce],
            asked: vec![],
        },
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("package.json")).unwrap(),
        "{}\n"
    );
    let store = s.checkpoints().unwrap();
    store.undo(s.workspace(), None).unwrap();
    assert!(std::fs::read_to_string(dir.path().join("package.json"))
        .unwrap()
        .contains("2.4.1"));
}
