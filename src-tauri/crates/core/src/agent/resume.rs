//! A saved conversation taken up again: its history rebuilt from the events of its transcript,
//! in the form the loop keeps it (user messages, replies up to their call, results by call id,
//! refusals, answers), so the model reads it as if the conversation had never stopped.

use super::calls::{lantern_number, refused_reply};
use super::Session;
use crate::event::{Event, FinishedReason};
use crate::model::{MadeCall, Message, Role};
use crate::protocol::parse;

impl Session {
    /// Takes up the saved conversation `events` record: its history (see
    /// [`history_from_events`]) follows the system prompt, and new calls are numbered after
    /// every call the events name. A call written by hand is among them: it runs and is
    /// recorded, but never enters the history, and its id must not be given again.
    pub fn resume(&mut self, events: &[Event]) {
        self.history.truncate(1);
        self.history.extend(history_from_events(events));
        self.given_ids = events
            .iter()
            .filter_map(named_call)
            .map(str::to_string)
            .collect();
        self.calls = self
            .given_ids
            .iter()
            .filter_map(|id| lantern_number(id))
            .max()
            .unwrap_or(0);
    }
}

/// The id of the call an event is about, if it is about one.
fn named_call(event: &Event) -> Option<&str> {
    match event {
        Event::CallParsed { call_id, .. }
        | Event::PermissionAsked { call_id, .. }
        | Event::PermissionAnswered { call_id, .. }
        | Event::ToolStarted { call_id, .. }
        | Event::ToolFinished { call_id, .. } => Some(call_id),
        Event::CallRejected { server_call, .. } => server_call.as_ref().map(|c| c.call_id.as_str()),
        _ => None,
    }
}

/// The conversation the events of a transcript record, without the system prompt. Results
/// are given whole (not focused on the question, not shortened): the next step fits them to
/// the context as it would any history.
pub fn history_from_events(events: &[Event]) -> Vec<Message> {
    let mut history = Vec::new();
    let mut last_reply = String::new();
    // Calls made but not answered by a result yet (a refusal has no tool_finished).
    let mut open_call: Option<String> = None;
    let mut refusal: Option<String> = None;
    for event in events {
        match event {
            Event::TurnStarted { message, .. } => {
                close_call(&mut history, &mut open_call, &mut refusal);
                history.push(Message::new(Role::User, message.clone()));
            }
            Event::ResponseFinished { raw, .. } => last_reply = raw.clone(),
            Event::CallParsed {
                call_id,
                tool,
                args,
                span,
                ..
            } => {
                close_call(&mut history, &mut open_call, &mut refusal);
                // The step's reply is read once, for what the model said around its call.
                let turn = parse(&last_reply);
                let end = span.end.min(last_reply.len());
                let made = MadeCall {
                    said: turn.text.clone(),
                    tool: tool.clone(),
                    args: args.clone(),
                };
                history.push(Message::assistant_call(
                    call_id,
                    turn.reply_until(end),
                    made,
                ));
                open_call = Some(call_id.clone());
            }
            Event::PermissionAnswered {
                call_id, message, ..
            } if open_call.as_deref() == Some(call_id.as_str()) => {
                refusal = message.clone();
            }
            Event::ToolFinished {
                call_id, result, ..
            } if open_call.as_deref() == Some(call_id.as_str()) => {
                history.push(Message::tool_result(call_id, result.shown()));
                open_call = None;
                refusal = None;
            }
            Event::CallRejected {
                feedback,
                server_call,
                ..
            } => {
                close_call(&mut history, &mut open_call, &mut refusal);
                let turn = parse(&last_reply);
                history.extend(refused_reply(&turn, feedback, server_call.as_ref()));
            }
            Event::TurnFinished { reason, .. } => {
                close_call(&mut history, &mut open_call, &mut refusal);
                if *reason == FinishedReason::Answer {
                    let turn = parse(&last_reply);
                    history.push(Message::new(
                        Role::Assistant,
                        turn.reply_until(last_reply.len()),
                    ));
                }
            }
            _ => {}
        }
    }
    close_call(&mut history, &mut open_call, &mut refusal);
    history
}

/// A call that got no result was not run (denied, or the turn stopped): the model hears so,
/// as it did when it happened.
fn close_call(history: &mut Vec<Message>, open: &mut Option<String>, refusal: &mut Option<String>) {
    if let Some(call_id) = open.take() {
        let why = refusal
            .take()
            .unwrap_or_else(|| "The call was not run.".to_string());
        history.push(Message::call_refused(call_id, why));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{Answer, FixedAnswer, Session, SessionOptions};
    use crate::model::{
        ApiCall, CallPath, CancelToken, FinishReason, Flow, GenerateRequest, Generation, Model,
        ModelError, ScriptedModel,
    };
    use crate::sandbox::Workspace;
    use crate::toolbox::Toolbox;

    fn session(dir: &std::path::Path) -> Session {
        Session::new(
            Workspace::open(dir).unwrap(),
            SessionOptions::in_memory(Toolbox::standard().into()),
        )
    }

    #[test]
    fn the_history_rebuilt_from_the_events_is_the_history_the_loop_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "Buy milk.\n").unwrap();
        let mut live = session(dir.path());
        let mut events = Vec::new();
        let replies = vec![
            "<think>Read it.</think><TOOL_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"notes.txt\"}}</TOOL_CALL>".to_string(),
            "It says to buy milk.".to_string(),
            "<TOOL_CALL>{\"tool\": \"write_file\", \"args\": {\"path\": \"notes.txt\", \"content\": \"x\"}}</TOOL_CALL>".to_string(),
            "<TOOL_CALL>{bad json</TOOL_CALL>".to_string(),
            "I left it as it is.".to_string(),
        ];
        let mut model = ScriptedModel::new(replies);
        let cancel = CancelToken::new();
        live.config.focus_results = false;
        for (message, answer) in [
            ("What is in notes.txt?", Answer::AllowOnce),
            (
                "Empty it.",
                Answer::Deny {
                    message: Some("Not now.".to_string()),
                },
            ),
        ] {
            live.send(
                message,
                &mut model,
                &mut FixedAnswer(answer),
                &mut |e| events.push(e.clone()),
                &cancel,
            );
        }
        let rebuilt = history_from_events(&events);
        assert_eq!(rebuilt, live.history()[1..].to_vec());
        let mut resumed = session(dir.path());
        resumed.resume(&events);
        assert_eq!(resumed.history(), live.history());
    }

    /// A server that names its calls itself, and names its first one as Lantern would.
    struct NamingServer(Vec<Generation>);

    impl Model for NamingServer {
        fn name(&self) -> String {
            "naming".to_string()
        }

        fn call_path(&self) -> CallPath {
            CallPath::Native
        }

        fn generate(
            &mut self,
            _request: &GenerateRequest<'_>,
            on_text: &mut dyn FnMut(&str) -> Flow,
        ) -> Result<Generation, ModelError> {
            let generation = self.0.remove(0);
            on_text(&generation.text);
            Ok(generation)
        }
    }

    #[test]
    fn a_server_s_own_id_is_not_taken_when_a_call_written_by_hand_has_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "Buy milk.\n").unwrap();
        let mut session = session(dir.path());
        let mut allow = FixedAnswer(Answer::AllowOnce);
        let mut events = Vec::new();
        let read = serde_json::json!({"path": "notes.txt"});
        session.run_call("read_file", read, &mut allow, &mut |e| {
            events.push(e.clone())
        });
        let manual = events.iter().find_map(named_call).unwrap().to_string();
        let mut call = Generation::text("", FinishReason::Stop);
        call.api_calls.push(ApiCall {
            id: Some(manual.clone()),
            name: "read_file".to_string(),
            arguments: r#"{"path": "notes.txt"}"#.to_string(),
        });
        let mut server = NamingServer(vec![call, Generation::text("Milk.", FinishReason::Stop)]);
        let mut later = Vec::new();
        session.send(
            "What is in notes.txt?",
            &mut server,
            &mut allow,
            &mut |e| later.push(e.clone()),
            &CancelToken::new(),
        );
        let ids: Vec<&str> = later.iter().filter_map(named_call).collect();
        assert!(!ids.is_empty(), "the server's call was made: {later:?}");
        assert!(
            ids.iter().all(|id| *id != manual),
            "{manual} given twice: {ids:?}"
        );
    }

    #[test]
    fn a_call_written_by_hand_never_takes_the_id_a_server_gave_its_own_call() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "Buy milk.\n").unwrap();
        let mut session = session(dir.path());
        let mut allow = FixedAnswer(Answer::AllowOnce);
        let mut call = Generation::text("", FinishReason::Stop);
        call.api_calls.push(ApiCall {
            id: Some("call-2".to_string()),
            name: "read_file".to_string(),
            arguments: r#"{"path": "notes.txt"}"#.to_string(),
        });
        let mut server = NamingServer(vec![call, Generation::text("Milk.", FinishReason::Stop)]);
        let mut events = Vec::new();
        let mut record = |e: &Event| events.push(e.clone());
        session.send(
            "What is in notes.txt?",
            &mut server,
            &mut allow,
            &mut record,
            &CancelToken::new(),
        );
        for _ in 0..2 {
            let read = serde_json::json!({"path": "notes.txt"});
            session.run_call("read_file", read, &mut allow, &mut record);
        }
        let started: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                Event::ToolStarted { call_id, .. } => Some(call_id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            started,
            ["call-2", "call-3", "call-4"],
            "each call has its own id"
        );
    }

    #[test]
    fn a_server_s_id_stays_given_when_a_summary_takes_its_call_out_of_the_history() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "Buy milk.\n").unwrap();
        let mut session = session(dir.path());
        let call = |id: Option<&str>, name: &str, arguments: &str| {
            let mut call = Generation::text("", FinishReason::Stop);
            call.api_calls.push(ApiCall {
                id: id.map(str::to_string),
                name: name.to_string(),
                arguments: arguments.to_string(),
            });
            call
        };
        // A step that fills most of the context: the next one compacts first.
        let filling = |mut generation: Generation| {
            generation.context_used = Some(90);
            generation.context_size = Some(100);
            generation
        };
        let read = r#"{"path": "notes.txt"}"#;
        let mut server = NamingServer(vec![
            // The server names its first call as Lantern would name its third.
            call(Some("call-3"), "read_file", read),
            filling(Generation::text("Milk.", FinishReason::Stop)),
            // Compacting first shortens the first turn's result; the next time, with nothing
            // left to shorten, it summarises the first turn.
            filling(call(None, "read_file", read)),
            // What the summary of the first turn says.
            Generation::text("The user read notes.txt.", FinishReason::Stop),
            call(None, "list_files", r#"{"directory": "."}"#),
            Generation::text("Done.", FinishReason::Stop),
        ]);
        let mut events = Vec::new();
        for message in [
            "What is in notes.txt?",
            "Read it again, then list the folder.",
        ] {
            session.send(
                message,
                &mut server,
                &mut FixedAnswer(Answer::AllowOnce),
                &mut |e| events.push(e.clone()),
                &CancelToken::new(),
            );
        }
        assert!(
            events.iter().any(|e| matches!(
                e,
                Event::ContextCompacted { messages_summarised, .. } if *messages_summarised > 0
            )),
            "the first turn was summarised: {events:?}"
        );
        let ids: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                Event::CallParsed { call_id, .. } => Some(call_id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(ids.len(), 3, "{events:?}");
        let mut distinct = ids.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 3, "an id was given twice: {ids:?}");
    }

    #[test]
    fn a_resumed_conversation_never_gives_again_the_id_of_a_call_written_by_hand() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "Buy milk.\n").unwrap();
        let mut live = session(dir.path());
        let mut events = Vec::new();
        let mut allow = FixedAnswer(Answer::AllowOnce);
        let read = serde_json::json!({"path": "notes.txt"});
        live.run_call("read_file", read.clone(), &mut allow, &mut |e| {
            events.push(e.clone())
        });
        let manual = events.iter().find_map(named_call).unwrap().to_string();

        let mut resumed = session(dir.path());
        resumed.resume(&events);
        let call =
            "<TOOL_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"notes.txt\"}}</TOOL_CALL>";
        let mut model = ScriptedModel::new(vec![call.to_string(), "Milk.".to_string()]);
        let mut later = Vec::new();
        resumed.send(
            "What is in notes.txt?",
            &mut model,
            &mut allow,
            &mut |e| later.push(e.clone()),
            &CancelToken::new(),
        );
        let ids: Vec<&str> = later.iter().filter_map(named_call).collect();
        assert!(!ids.is_empty(), "the model's call was made: {later:?}");
        assert!(
            ids.iter().all(|id| *id != manual),
            "{manual} was given to the call written by hand and again to {ids:?}"
        );
    }
}
