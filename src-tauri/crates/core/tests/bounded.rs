//! A long session stays bounded: 200 steps of reads, listings and searches through the agent
//! loop add at most a fixed amount to the conversation per step, whatever the tools find.
//!
//! The assertion is on what the session keeps (message count and sizes), which cannot flake;
//! the process's resident memory is printed alongside (see it with `--nocapture`), for the
//! record in bench/results/memory.md.

use lantern_core::agent::{Answer, FixedAnswer, Session, SessionOptions};
use lantern_core::event::{Event, FinishedReason};
use lantern_core::model::{
    CancelToken, FinishReason, Flow, GenerateRequest, Generation, Model, ModelError,
};
use lantern_core::protocol::{CLOSE_TAG, OPEN_TAG};
use lantern_core::sandbox::Workspace;
use lantern_core::tool_result::MODEL_RESULT_LIMIT;
use lantern_core::toolbox::Toolbox;
use std::collections::VecDeque;

const STEPS: usize = 200;
const MESSAGES: usize = 20;
const STEPS_PER_MESSAGE: usize = STEPS / MESSAGES;

/// Replies from a list, streamed in small pieces. Unlike the test-support `ScriptedModel` it
/// keeps no copy of the requests, so that what is measured is the session alone.
struct Replies(VecDeque<String>);

impl Model for Replies {
    fn name(&self) -> String {
        "replies".to_string()
    }

    fn generate(
        &mut self,
        _request: &GenerateRequest<'_>,
        on_text: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Generation, ModelError> {
        let reply = self
            .0
            .pop_front()
            .ok_or_else(|| ModelError("no more replies".to_string()))?;
        let mut start = 0;
        while start < reply.len() {
            let mut end = (start + 16).min(reply.len());
            while !reply.is_char_boundary(end) {
                end += 1;
            }
            if on_text(&reply[start..end]) == Flow::Stop {
                return Ok(Generation::text(&reply[..end], FinishReason::Stop));
            }
            start = end;
        }
        Ok(Generation::text(reply, FinishReason::EndOfText))
    }
}

/// Resident memory of this process in KiB, from /proc/self/status.
fn rss_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches(" kB").parse().ok())
        .unwrap_or(0)
}

fn call(tool: &str, args: serde_json::Value) -> String {
    format!(
        "<TOOL_CALL>\n{}\n</TOOL_CALL>",
        serde_json::json!({"tool": tool, "args": args, "reasoning": "measuring"})
    )
}

/// Step `i`'s call: reads of files larger than a result may hold, listings and searches with
/// many matches, never the same call twice in a row.
fn step_call(i: usize) -> String {
    match i % 4 {
        0 => call(
            "read_file",
            serde_json::json!({"path": format!("src/file{:02}.rs", i % 40)}),
        ),
        1 => call(
            "list_files",
            serde_json::json!({"max_results": 2000, "pattern": format!("*{}*", i % 10)}),
        ),
        2 => call(
            "search_code",
            serde_json::json!({"query": format!("value_{}", i % 7), "options": {"max_results": 500, "context_lines": 5}}),
        ),
        _ => call(
            "add_task",
            serde_json::json!({"content": format!("step {i}")}),
        ),
    }
}

#[test]
fn two_hundred_steps_keep_the_session_bounded() {
    let at_start = rss_kib("VmRSS:");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    for f in 0..40 {
        let text: String = (0..600)
            .map(|line| {
                format!(
                    "let value_{} = {line}; // line {line} of file {f}\n",
                    line % 7
                )
            })
            .collect();
        std::fs::write(dir.path().join(format!("src/file{f:02}.rs")), text).unwrap();
    }
    let mut session = Session::new(
        Workspace::open(dir.path()).unwrap(),
        SessionOptions::in_memory(Toolbox::standard().into()),
    );
    session.config.max_steps = STEPS_PER_MESSAGE + 1;
    let mut yes = FixedAnswer(Answer::AllowOnce);

    let mut rss = Vec::new();
    let mut step = 0;
    for message in 0..MESSAGES {
        let mut replies: VecDeque<String> = (0..STEPS_PER_MESSAGE)
            .map(|_| {
                step += 1;
                step_call(step)
            })
            .collect();
        replies.push_back(format!("Done with part {message}."));
        let before = session.history().len();
        let finished = session.send(
            &format!("part {message}"),
            &mut Replies(replies),
            &mut yes,
            &mut |_| {},
            &CancelToken::new(),
        );
        assert!(
            matches!(finished, Event::TurnFinished { reason: FinishedReason::Answer, steps, .. } if steps == STEPS_PER_MESSAGE + 1),
            "{finished:?}"
        );
        // Per message: the question, a call and its result per step, the answer.
        assert_eq!(session.history().len() - before, 2 + 2 * STEPS_PER_MESSAGE);
        rss.push(rss_kib("VmRSS:"));
    }

    // Every message is bounded: results by the rendering limit, calls by what the model said.
    let largest = session
        .history()
        .iter()
        .skip(1)
        .map(|m| m.content.len())
        .max()
        .unwrap();
    assert!(
        largest <= MODEL_RESULT_LIMIT + 512,
        "a message of {largest} bytes"
    );
    let total: usize = session.history().iter().map(|m| m.content.len()).sum();
    let system = session.history()[0].content.len();
    assert!(
        total - system <= STEPS * (MODEL_RESULT_LIMIT + 1024),
        "{total} bytes of history"
    );
    assert_eq!(
        session.history().len(),
        1 + MESSAGES * (2 + 2 * STEPS_PER_MESSAGE)
    );
    println!(
        "memory: {STEPS} steps, {} messages, {} KiB of history; VmRSS at the start {at_start} KiB, after each 10 steps (KiB): {rss:?}; peak VmHWM {} KiB",
        session.history().len(),
        total / 1024,
        rss_kib("VmHWM:")
    );
}

/// One long reply handed over a character at a time, as a hostile or odd server may stream it.
struct CharByChar(String);

impl Model for CharByChar {
    fn name(&self) -> String {
        "char-by-char".to_string()
    }

    fn generate(
        &mut self,
        _request: &GenerateRequest<'_>,
        on_text: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Generation, ModelError> {
        let mut piece = [0u8; 4];
        for c in self.0.chars() {
            on_text(c.encode_utf8(&mut piece));
        }
        Ok(Generation::text(self.0.clone(), FinishReason::EndOfText))
    }
}

/// Sends one message to a fresh session in an empty folder, `model` replying and every
/// confirmation denied; hands each event to `seen` and returns the bytes the events make as
/// JSON lines.
fn event_bytes(model: &mut dyn Model, mut seen: impl FnMut(&Event)) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::new(
        Workspace::open(dir.path()).unwrap(),
        SessionOptions::in_memory(Toolbox::standard().into()),
    );
    let mut bytes = 0;
    session.send(
        "hello",
        model,
        &mut FixedAnswer(Answer::Deny { message: None }),
        &mut |event| {
            bytes += serde_json::to_vec(event).unwrap().len() + 1;
            seen(event);
        },
        &CancelToken::new(),
    );
    bytes
}

#[test]
fn a_reply_streamed_a_character_at_a_time_makes_live_events_the_size_of_its_text() {
    let reply = "ab ".repeat(200_000);
    let mut deltas = 0usize;
    let mut streamed = String::new();
    let bytes = event_bytes(&mut CharByChar(reply.clone()), |event| {
        if let Event::TextDelta { text, .. } = event {
            deltas += 1;
            streamed.push_str(text);
        }
    });
    assert_eq!(
        streamed.trim_end(),
        reply.trim_end(),
        "nothing of the text is lost"
    );
    // The text goes out as it streams, with the step's raw reply and as the answer: three
    // times, each framed once, not once per character.
    assert!(deltas < reply.len() / 100, "{deltas} text events");
    assert!(
        bytes < 4 * reply.len(),
        "{bytes} bytes of events for a reply of {}",
        reply.len()
    );
}

#[test]
fn a_long_reply_with_a_call_is_carried_by_its_stream_and_its_step_alone() {
    let said = "cd ".repeat(200_000);
    let reply =
        format!("{said}{OPEN_TAG}{{\"tool\": \"get_current_time\", \"args\": {{}}}}{CLOSE_TAG}");
    let mut calls = 0usize;
    let mut model = Replies(VecDeque::from([reply.clone(), "Done.".to_string()]));
    let bytes = event_bytes(&mut model, |event| {
        calls += usize::from(matches!(event, Event::CallParsed { .. }));
    });
    assert_eq!(calls, 1, "the call was read");
    // Once as it streams, once as the step's reply; the call's event carries the call alone.
    assert!(
        bytes < 5 * reply.len() / 2,
        "{bytes} bytes of events for a reply of {}",
        reply.len()
    );
}
