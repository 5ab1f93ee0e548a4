//! How a turn is kept in bounds: step and repetition limits, protocol errors, confinement, failures, cancelling, a full context.

use super::*;

#[test]
fn the_step_limit_ends_a_runaway_turn() {
    let dir = workspace();
    let mut s = session(dir.path());
    s.config.max_steps = 4;
    let replies: Vec<String> = (0..10)
        .map(|i| call("read_file", &format!(r#"{{"path": "f{i}.txt"}}"#)))
        .collect();
    let (events, model) = run(&mut s, replies, &mut FixedAnswer(Answer::AllowOnce));
    assert_eq!(finished(&events).0, FinishedReason::MaxSteps);
    assert_eq!(model.seen.len(), 4);
    match events.last().unwrap() {
        Event::TurnFinished {
            explanation, steps, ..
        } => {
            assert_eq!(*steps, 4);
            assert!(explanation.contains("4 steps"));
        }
        _ => unreachable!(),
    }
}

#[test]
fn the_same_call_three_times_in_a_row_stops() {
    let dir = workspace();
    let mut s = session(dir.path());
    let same = call("read_file", r#"{"path": "package.json"}"#);
    let (events, _) = run(
        &mut s,
        vec![same.clone(), same.clone(), same, "never".into()],
        &mut FixedAnswer(Answer::AllowOnce),
    );
    assert_eq!(finished(&events).0, FinishedReason::Repetition);
    let runs = events
        .iter()
        .filter(|e| matches!(e, Event::ToolStarted { .. }))
        .count();
    assert_eq!(runs, 2, "the third identical call is not run");
}

#[test]
fn three_protocol_errors_in_a_row_stop_with_feedback_each_time() {
    let dir = workspace();
    let mut s = session(dir.path());
    let (events, model) = run(
        &mut s,
        vec![
            "<TOOL_CALL>\n{tool: \"read_file\"}\n</TOOL_CALL>".into(),
            call("Read_File", r#"{"path": "a"}"#),
            call("read_file", "{}"),
            "never".into(),
        ],
        &mut FixedAnswer(Answer::AllowOnce),
    );
    assert_eq!(finished(&events).0, FinishedReason::ProtocolErrors);
    let rejected: Vec<(ErrorType, String)> = events
        .iter()
        .filter_map(|e| match e {
            Event::CallRejected {
                error_type,
                feedback,
                ..
            } => Some((*error_type, feedback.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(rejected.len(), 3);
    assert_eq!(rejected[0].0, ErrorType::ParseError);
    assert!(
        rejected[1].1.contains("case-sensitive"),
        "{}",
        rejected[1].1
    );
    assert!(
        rejected[2].1.contains("missing required argument \"path\""),
        "{}",
        rejected[2].1
    );
    // Each feedback was the next user message the model saw.
    assert!(model.seen[1].last().unwrap().rejected);
    assert!(last_read(&model, 1).starts_with("TOOL_ERROR:"));
}

#[test]
fn a_good_call_resets_the_protocol_error_count() {
    let dir = workspace();
    let mut s = session(dir.path());
    let bad = "<TOOL_CALL>{oops}</TOOL_CALL>".to_string();
    let good = call("list_files", "{}");
    let (events, _) = run(
        &mut s,
        vec![
            bad.clone(),
            bad.clone(),
            good,
            bad.clone(),
            bad,
            "answer".into(),
        ],
        &mut FixedAnswer(Answer::AllowOnce),
    );
    assert_eq!(finished(&events).0, FinishedReason::Answer);
}

#[test]
fn text_after_a_call_and_a_second_call_are_discarded() {
    let dir = workspace();
    let mut s = session(dir.path());
    let reply = format!(
        "{}\nand more text\n{}",
        call("read_file", r#"{"path": "package.json"}"#),
        call("write_file", r#"{"path": "x", "content": "y"}"#)
    );
    let (events, model) = run(
        &mut s,
        vec![reply, "done".into()],
        &mut FixedAnswer(Answer::AllowOnce),
    );
    assert!(!dir.path().join("x").exists());
    let runs = events
        .iter()
        .filter(|e| matches!(e, Event::ToolStarted { .. }))
        .count();
    assert_eq!(runs, 1);
    // The history keeps the reply only up to the end of the call.
    let assistant = &model.seen[1][model.seen[1].len() - 2];
    assert_eq!(assistant.role, Role::Assistant);
    assert!(assistant.content.ends_with("</TOOL_CALL>"));
    assert!(!assistant.content.contains("more text"));
}

#[test]
fn paths_outside_the_workspace_are_refused_before_the_policy() {
    let dir = workspace();
    let mut s = session(dir.path());
    let (events, model) = run(
        &mut s,
        vec![
            call("read_file", r#"{"path": "../../../etc/passwd"}"#),
            "ok".into(),
        ],
        &mut FixedAnswer(Answer::AllowOnce),
    );
    let feedback = &last_read(&model, 1);
    assert!(feedback.starts_with("TOOL_ERROR:"), "{feedback}");
    assert!(!feedback.contains("root:"), "no outside content leaks");
    assert!(events.iter().any(|e| matches!(e, Event::PermissionAnswered { decision, rule, .. } if *decision == Effect::Deny && rule.starts_with("sandbox"))));
}

#[test]
fn hard_rules_hold_even_when_everything_is_approved() {
    let dir = workspace();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let mut s = session(dir.path());
    let (events, _) = run(
        &mut s,
        vec![
            call("write_file", r#"{"path": ".git/config", "content": "x"}"#),
            "ok".into(),
        ],
        &mut FixedAnswer(Answer::AllowOnce),
    );
    assert!(!dir.path().join(".git/config").exists());
    assert!(events.iter().any(
        |e| matches!(e, Event::PermissionAnswered { rule, .. } if rule.starts_with("hard rule"))
    ));
    assert!(!events
        .iter()
        .any(|e| matches!(e, Event::PermissionAsked { .. })));
}

#[test]
fn tool_failures_are_results_not_protocol_errors() {
    let dir = workspace();
    let mut s = session(dir.path());
    let (events, model) = run(
        &mut s,
        vec![
            call("read_file", r#"{"path": "missing.txt"}"#),
            "It does not exist.".into(),
        ],
        &mut FixedAnswer(Answer::AllowOnce),
    );
    let feedback = &last_read(&model, 1);
    assert!(
        feedback.starts_with("TOOL_RESULT: {\"success\":false"),
        "{feedback}"
    );
    assert!(feedback.contains("not_found"));
    assert!(events.iter().any(|e| matches!(
        e,
        Event::ToolFinished {
            success: false,
            error_type: ErrorType::NotFound,
            ..
        }
    )));
    assert_eq!(finished(&events).0, FinishedReason::Answer);
}

#[test]
fn dialects_are_normalised_and_recorded() {
    let dir = workspace();
    let mut s = session(dir.path());
    let reply = "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"package.json\"}}\n</tool_call>";
    let (events, _) = run(
        &mut s,
        vec![reply.into(), "2.4.1".into()],
        &mut FixedAnswer(Answer::AllowOnce),
    );
    let dialect = events.iter().find_map(|e| match e {
        Event::CallParsed { dialect, .. } => Some(dialect.as_str()),
        _ => None,
    });
    assert_eq!(dialect, Some("hermes"));
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::ToolFinished { success: true, .. })));
}

#[test]
fn cancel_stops_the_turn() {
    let dir = workspace();
    let mut s = session(dir.path());
    let cancel = CancelToken::new();
    struct CancelOnAsk(CancelToken);
    impl Confirmer for CancelOnAsk {
        fn confirm(&mut self, _: &PermissionRequest) -> Answer {
            self.0.cancel();
            Answer::Deny { message: None }
        }
    }
    let mut model = ScriptedModel::new(vec![
        call("write_file", r#"{"path": "a", "content": "b"}"#),
        "never".into(),
    ]);
    let mut events = Vec::new();
    s.send(
        "q",
        &mut model,
        &mut CancelOnAsk(cancel.clone()),
        &mut |e| events.push(e.clone()),
        &cancel,
    );
    assert_eq!(finished(&events).0, FinishedReason::Cancelled);
    assert_eq!(model.seen.len(), 1);
}

#[test]
fn a_failing_model_ends_the_turn_with_its_error() {
    struct Broken;
    impl Model for Broken {
        fn name(&self) -> String {
            "broken".into()
        }
        fn generate(
            &mut self,
            _: &GenerateRequest<'_>,
            _: &mut dyn FnMut(&str) -> Flow,
        ) -> Result<Generation, ModelError> {
            Err(ModelError("the model file vanished".into()))
        }
    }
    let dir = workspace();
    let mut s = session(dir.path());
    let mut events = Vec::new();
    s.send(
        "q",
        &mut Broken,
        &mut FixedAnswer(Answer::AllowOnce),
        &mut |e| events.push(e.clone()),
        &CancelToken::new(),
    );
    assert_eq!(
        finished(&events),
        (FinishedReason::Error, "the model file vanished".to_string())
    );
}

#[test]
fn generation_stops_as_soon_as_the_call_is_complete() {
    // A backend that ignores stop sequences: the loop's callback must stop it.
    struct Chatty {
        sent: usize,
    }
    impl Model for Chatty {
        fn name(&self) -> String {
            "chatty".into()
        }
        fn generate(
            &mut self,
            _: &GenerateRequest<'_>,
            on_text: &mut dyn FnMut(&str) -> Flow,
        ) -> Result<Generation, ModelError> {
            let text = "<TOOL_CALL>{\"tool\": \"list_tasks\", \"args\": {}}</TOOL_CALL> and then it rambles on and on";
            let mut out = String::new();
            for c in text.chars() {
                out.push(c);
                self.sent += 1;
                if on_text(&c.to_string()) == Flow::Stop {
                    return Ok(Generation::text(out, FinishReason::Stop));
                }
            }
            Ok(Generation::text(out, FinishReason::EndOfText))
        }
    }
    let dir = workspace();
    let mut s = session(dir.path());
    let mut model = Chatty { sent: 0 };
    let mut events = Vec::new();
    s.config.max_steps = 1;
    s.send(
        "q",
        &mut model,
        &mut FixedAnswer(Answer::AllowOnce),
        &mut |e| events.push(e.clone()),
        &CancelToken::new(),
    );
    assert_eq!(
        model.sent,
        "<TOOL_CALL>{\"tool\": \"list_tasks\", \"args\": {}}</TOOL_CALL>"
            .chars()
            .count()
    );
}

/// A scripted model that says the context is 90 % full after every step.
struct Crowded(ScriptedModel);

impl Model for Crowded {
    fn name(&self) -> String {
        "crowded".into()
    }

    fn generate(
        &mut self,
        request: &GenerateRequest<'_>,
        on_text: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Generation, ModelError> {
        let generation = self.0.generate(request, on_text)?;
        Ok(Generation {
            context_used: Some(900),
            context_size: Some(1000),
            ..generation
        })
    }
}

#[test]
fn a_nearly_full_context_shortens_earlier_results_then_summarises_earlier_turns_and_says_so() {
    let dir = workspace();
    let mut s = session(dir.path());
    let mut model = Crowded(ScriptedModel::new(vec![
        call("read_file", r#"{"path": "package.json"}"#),
        "2.4.1".into(),
        call("read_file", r#"{"path": "src/lib.rs"}"#),
        "The user asked for the version in package.json: 2.4.1.".into(),
        "parse_config".into(),
    ]));
    let mut events = Vec::new();
    for question in ["version?", "what is in lib.rs?"] {
        s.send(
            question,
            &mut model,
            &mut FixedAnswer(Answer::AllowOnce),
            &mut |e| events.push(e.clone()),
            &CancelToken::new(),
        );
    }
    let compacted: Vec<(usize, usize, usize)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ContextCompacted {
                step,
                results_shortened,
                messages_summarised,
                ..
            } => Some((*step, *results_shortened, *messages_summarised)),
            _ => None,
        })
        .collect();
    // The second turn: its first step shortens the first turn's result; with nothing left to
    // shorten, its second step has the first turn summarised.
    assert_eq!(compacted, [(1, 1, 0), (2, 0, 4)]);
    let seen = &model.0.seen;
    let shortened: Vec<&str> = seen[2]
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(shortened.len(), 1);
    assert!(
        shortened[0].contains("\"summary\":\"package.json, 1 lines\""),
        "{}",
        shortened[0]
    );
    let last = seen.last().unwrap();
    assert_eq!(last[0].role, Role::System, "the system prompt stays");
    assert!(last[1]
        .content
        .contains("The user asked for the version in package.json: 2.4.1."));
    assert_eq!(
        last[3].content, "what is in lib.rs?",
        "the current turn stays"
    );
    let results: Vec<&str> = last
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(results.len(), 1);
    assert!(
        results[0].contains("parse_config"),
        "this turn's result is whole"
    );
    // The full result is still in the events (and so in the transcript).
    assert!(events.iter().any(|e| matches!(e,
        Event::ToolFinished { result, .. } if result.data.as_ref().is_some_and(|d| d.to_string().contains("2.4.1")))));
}
