//! What is kept and shown: transcripts, manual calls, a reasoning model's thinking, tools from servers.

use super::*;

#[test]
fn transcripts_round_trip() {
    let dir = workspace();
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("t.jsonl");
    let mut s = session(dir.path());
    let mut writer = TranscriptWriter::create(&path).unwrap();
    let mut events = Vec::new();
    let mut model = ScriptedModel::new(vec![
        call("read_file", r#"{"path": "package.json"}"#),
        "2.4.1".into(),
    ]);
    s.send(
        "q",
        &mut model,
        &mut FixedAnswer(Answer::AllowOnce),
        &mut |e| {
            writer.write(e).unwrap();
            events.push(e.clone());
        },
        &CancelToken::new(),
    );
    drop(writer);
    // A torn last line (a crash mid-write) is reported, not fatal.
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("{\"event\":\"turn_sta");
    std::fs::write(&path, text).unwrap();
    // The transcript holds the same events, the text deltas of a step joined into one.
    let mut joined: Vec<Event> = Vec::new();
    for event in events {
        match (joined.last_mut(), event) {
            (
                Some(Event::TextDelta { step, text }),
                Event::TextDelta {
                    step: next,
                    text: more,
                },
            ) if *step == next => text.push_str(&more),
            (_, event) => joined.push(event),
        }
    }
    let (loaded, bad) = load_transcript(&path).unwrap();
    assert_eq!(loaded, joined);
    assert_eq!(bad, vec![joined.len() + 1]);
}

#[test]
fn manual_calls_go_through_the_same_checks() {
    let dir = workspace();
    let mut s = session(dir.path());
    let mut confirmer = FixedAnswer(Answer::Deny { message: None });
    let r = s
        .run_call(
            "write_file",
            serde_json::json!({"path": "a.txt", "content": "x"}),
            &mut confirmer,
            &mut |_| {},
        )
        .into_result();
    assert_eq!(r.error_type, ErrorType::PermissionDenied);
    assert!(!dir.path().join("a.txt").exists());
    let r = s
        .run_call(
            "read_file",
            serde_json::json!({"path": 3}),
            &mut confirmer,
            &mut |_| {},
        )
        .into_result();
    assert_eq!(r.error_type, ErrorType::ValidationFailed);
    assert!(r.error_message.unwrap().contains("must be \"string\""));
    let r = s
        .run_call(
            "read_file",
            serde_json::json!({"path": "package.json"}),
            &mut confirmer,
            &mut |_| {},
        )
        .into_result();
    assert!(r.success);
}

#[test]
fn a_reasoning_models_thinking_is_shown_apart_and_left_out_of_the_history() {
    let dir = workspace();
    let mut s = session(dir.path());
    let (events, model) = run(
        &mut s,
        vec![
            format!(
                "<think>The version is in package.json; list_files would not show it.</think>\n{}",
                call("read_file", r#"{"path": "package.json"}"#)
            ),
            "<think>It says 2.4.1.</think>The version is 2.4.1.".to_string(),
        ],
        &mut FixedAnswer(Answer::AllowOnce),
    );
    assert_eq!(
        finished(&events),
        (FinishedReason::Answer, "The version is 2.4.1.".to_string())
    );
    let tools: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::CallParsed { tool, .. } => Some(tool.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        tools,
        ["read_file"],
        "a call written while thinking is not made"
    );
    let thoughts: Vec<Option<&str>> = events
        .iter()
        .filter_map(|e| match e {
            Event::ResponseFinished { thinking, .. } => Some(thinking.as_deref()),
            _ => None,
        })
        .collect();
    assert!(thoughts[0]
        .unwrap()
        .starts_with("The version is in package.json;"));
    assert_eq!(thoughts[1], Some("It says 2.4.1."));
    let shown: String = events
        .iter()
        .filter_map(|e| match e {
            Event::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        !shown.contains("think") && !shown.contains("It says"),
        "{shown}"
    );
    // The second request's history holds the call without the thinking before it.
    let sent = &model.seen[1];
    let call_message = &sent[sent.len() - 2];
    assert!(
        call_message.content.starts_with("<TOOL_CALL>"),
        "{}",
        call_message.content
    );
    assert!(!s.history().iter().any(|m| m.content.contains("<think>")));
}

/// A tool from elsewhere that answers with its own name (the real servers are
/// `crates/mcp/tests`; this is about which of many a turn is offered).
struct Echo(&'static str);

impl lantern_core::tools::RemoteTool for Echo {
    fn call(
        &self,
        _args: serde_json::Value,
        _cancel: &CancelToken,
    ) -> lantern_core::tools::RemoteOutcome {
        lantern_core::tools::RemoteOutcome {
            result: Ok(serde_json::json!({"text": self.0})),
            exchange: serde_json::json!({"server": "fake"}),
        }
    }
}

#[test]
fn with_many_tools_from_servers_a_turn_is_offered_the_ones_that_fit_and_asks_before_one_runs() {
    use lantern_core::tools::{PreviewKind, ResultKind, Risk, ToolRegistry, ToolSource, ToolSpec};
    let mut registry = ToolRegistry::standard();
    let subjects = [
        "weather forecast",
        "stock prices",
        "music playlists",
        "calendar events",
        "email inbox",
        "translation",
        "maps directions",
        "recipes",
        "flight bookings",
        "news headlines",
    ];
    for (i, subject) in subjects.iter().enumerate() {
        let name: &'static str = Box::leak(format!("srv{i}.lookup").into_boxed_str());
        let spec = ToolSpec {
            name: name.to_string(),
            description: format!("Look up {subject}."),
            risk: Risk::Remote,
            input_schema: serde_json::json!({"type": "object", "properties": {}}),
            example: serde_json::json!({}),
            preview_kind: PreviewKind::None,
            result_kind: ResultKind::Plain,
            source: Some(ToolSource {
                server: format!("srv{i}"),
                transport: "stdio".into(),
                sandbox: "sandboxed".into(),
            }),
            follow_ups: &[],
        };
        registry
            .register_remote(spec, std::sync::Arc::new(Echo(name)))
            .unwrap();
    }
    let toolbox = std::sync::Arc::new(Toolbox::new(registry));
    let dir = workspace();
    let mut s = Session::new(
        Workspace::open(dir.path()).unwrap(),
        SessionOptions::in_memory(toolbox.clone()),
    );
    s.config.max_remote_tools = 3;
    let mut model = ScriptedModel::new([
        r#"<TOOL_CALL>{"tool": "srv8.lookup", "args": {}}</TOOL_CALL>"#,
        "Flights found.",
    ]);
    let mut confirmer = Recorder {
        answers: vec![Answer::AllowOnce],
        asked: Vec::new(),
    };
    let mut events = Vec::new();
    s.send(
        "Which flight bookings do I have?",
        &mut model,
        &mut confirmer,
        &mut |e| events.push(e.clone()),
        &CancelToken::new(),
    );
    let offered = &model.offered[0];
    let remote: Vec<&String> = offered.iter().filter(|n| n.contains('.')).collect();
    // Only the one that fits: the others share no word with the message.
    assert_eq!(remote, [&"srv8.lookup".to_string()], "{offered:?}");
    assert!(offered.contains(&"read_file".to_string()));
    // Kept out of the prompt too.
    let system = &model.seen[0][0].content;
    assert!(
        system.contains("srv8.lookup") && !system.contains("srv9.lookup"),
        "{system}"
    );
    assert!(toolbox.system_prompt().contains("srv9.lookup"));
    // The call asks first (a remote tool's default), names its server, and its exchange is kept
    // for the inspector, not given to the model.
    assert_eq!(confirmer.asked[0].source.as_ref().unwrap().server, "srv8");
    let result = events
        .iter()
        .find_map(|e| match e {
            Event::ToolFinished { result, .. } => Some(result.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(result.metadata.exchange.as_ref().unwrap()["server"], "fake");
    assert!(
        !last_read(&model, 1).contains("\"fake\""),
        "{}",
        last_read(&model, 1)
    );
}
