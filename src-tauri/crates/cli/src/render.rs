//! Events as text for a person reading the terminal: the answer on stdout, the steps on stderr.

use lantern_core::checkpoint::{UndoConflict, Version};
use lantern_core::event::{Event, FinishedReason};
use lantern_core::policy::Effect;
use std::fmt::Write as _;

/// Model-controlled text made safe to print on a terminal: control characters (escape
/// sequences, carriage returns, backspaces, C1 codes) and the Unicode controls that reorder or
/// hide text are shown as visible escapes such as `\x1b` or `\u{202e}`, so what the terminal
/// shows is what the text holds. Line feeds and tabs are kept only where `multi_line`.
pub fn visible(text: &str, multi_line: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let kept = multi_line && (c == '\n' || c == '\t');
        let hidden = matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}');
        if kept || !(c.is_control() || hidden) {
            out.push(c);
        } else if (c as u32) < 0x100 {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
    out
}

pub struct Human {
    /// Whether the current line of stdout has text the next event must not run into.
    mid_line: bool,
    /// Print the model's text as it comes (for a person at a terminal), or only the answer
    /// as the turn gave it, once it is over (for a pipe or a file): the streamed text may
    /// hold repeats the answer was cut before, and lacks the paths and notes given after.
    streams: bool,
}

impl Human {
    /// The model's text as it comes, for a person at a terminal.
    pub fn new() -> Self {
        Human {
            mid_line: false,
            streams: true,
        }
    }

    /// Only the answer as the turn gave it, once the turn is over: what a script reading
    /// stdout should get.
    pub fn answer_only() -> Self {
        Human {
            mid_line: false,
            streams: false,
        }
    }

    fn end_line(&mut self) {
        if self.mid_line {
            outln!();
            self.mid_line = false;
        }
    }

    pub fn event(&mut self, event: &Event) {
        if let Event::TextDelta { text, .. } = event {
            if self.streams {
                out!("{}", visible(text, true));
                self.mid_line = !text.ends_with('\n');
            }
            return;
        }
        if let Event::TurnFinished {
            reason: FinishedReason::Answer,
            text,
            ..
        } = event
        {
            if !self.streams && !text.trim().is_empty() {
                outln!("{}", visible(text.trim_end(), true));
            }
        }
        let (lines, own_line) = match call_lines(event) {
            Some(lines) => lines,
            None => turn_lines(event),
        };
        if lines.is_empty() {
            return;
        }
        if own_line {
            self.end_line();
        }
        for line in lines {
            eprintln!("{line}");
        }
    }
}

/// What a person is told on stderr of a call's events, and whether it starts on a line of its
/// own (after the model's text); `None` for an event that is not about a call.
fn call_lines(event: &Event) -> Option<(Vec<String>, bool)> {
    Some(match event {
        Event::CallParsed {
            tool,
            args,
            dialect,
            ..
        } => (
            vec![format!(
                "→ {tool} {} ({})",
                visible(&args.to_string(), false),
                dialect.as_str()
            )],
            true,
        ),
        Event::CallRejected { message, .. } => (
            vec![format!("✗ invalid call: {}", visible(message, true))],
            true,
        ),
        Event::PermissionAnswered {
            decision,
            rule,
            message,
            ..
        } if *decision == Effect::Deny => {
            let why = message
                .as_deref()
                .map(|m| format!(": {}", visible(m, false)))
                .unwrap_or_default();
            (vec![format!("  denied ({rule}){why}")], false)
        }
        Event::ToolFinished {
            success,
            result,
            execution_time_ms,
            ..
        } => {
            let line = match success {
                true => format!(
                    "  ✓ {} bytes in {execution_time_ms} ms",
                    result.metadata.data_size_bytes
                ),
                false => format!(
                    "  ✗ {}: {}",
                    result.error_type,
                    visible(result.error_message.as_deref().unwrap_or_default(), true)
                ),
            };
            (vec![line], false)
        }
        _ => return None,
    })
}

/// What a person is told on stderr of the turn's other events (the context, the answer's
/// notes, how it ended), and whether it starts on a line of its own.
fn turn_lines(event: &Event) -> (Vec<String>, bool) {
    let mut lines = Vec::new();
    let own_line = context_lines(event, &mut lines)
        .or_else(|| answer_lines(event, &mut lines))
        .unwrap_or(false);
    (lines, own_line)
}

/// The lines of an event about the model's context (how the message was read, trimmed,
/// compacted, attachments), and whether they stand on their own line; `None` for another
/// event.
fn context_lines(event: &Event, lines: &mut Vec<String>) -> Option<bool> {
    let own_line = match event {
        Event::TurnStarted {
            form: Some(form), ..
        } => {
            lines.push(format!("  (read as {})", form.describe()));
            true
        }
        Event::ContextTrimmed {
            messages_dropped,
            results_cut,
            ..
        } => {
            if *messages_dropped > 0 {
                lines.push(format!(
                    "  (dropped the {messages_dropped} oldest messages to fit the context)"
                ));
            }
            if *results_cut > 0 {
                lines.push(format!(
                    "  (cut a tool result too long for the context, {results_cut} times)"
                ));
            }
            false
        }
        Event::ContextCompacted {
            results_shortened,
            messages_summarised,
            ..
        } => {
            if *results_shortened > 0 {
                lines.push(format!("  (shortened {results_shortened} earlier tool results to one line each to fit the context)"));
            }
            if *messages_summarised > 0 {
                lines.push(format!("  (earlier steps were summarised: {messages_summarised} messages replaced by the model's summary to fit the context)"));
            }
            false
        }
        Event::ContextAttached {
            attachments,
            problems,
        } => {
            for a in attachments {
                lines.push(format!(
                    "(attached @{}: {} lines {}-{}{})",
                    visible(&a.mention, false),
                    visible(&a.path, false),
                    a.start_line,
                    a.end_line,
                    if a.cut { ", cut" } else { "" }
                ));
            }
            for problem in problems {
                lines.push(format!("({})", visible(problem, false)));
            }
            true
        }
        _ => return None,
    };
    Some(own_line)
}

/// The lines of an event about the answer (cut, paths given, notes, the turn's end), and
/// whether they stand on their own line; `None` for another event.
fn answer_lines(event: &Event, lines: &mut Vec<String>) -> Option<bool> {
    let own_line = match event {
        Event::AnswerCut { .. } => {
            lines.push("(The answer began repeating itself and was ended; the repeats are not part of it.)".to_string());
            true
        }
        Event::AnswerPathsGiven { paths, .. } => {
            let named: Vec<String> = paths
                .iter()
                .map(|p| format!("{} is {}", p.name, p.path))
                .collect();
            lines.push(format!(
                "(The answer named files by their names alone: {}.)",
                visible(&named.join(", "), false)
            ));
            true
        }
        Event::AnswerNoted { notes, .. } => {
            for note in notes {
                lines.push(format!(
                    "(From the tool results: {})",
                    visible(&note.text, false)
                ));
            }
            true
        }
        Event::TurnFinished {
            reason,
            explanation,
            text,
            ..
        } => {
            lines.extend(ending(*reason, explanation, text));
            true
        }
        _ => return None,
    };
    Some(own_line)
}

/// How a turn that ended for `reason` is told: nothing after an answer with text (the text
/// was the answer), the explanation otherwise, and a failed turn's error with it.
fn ending(reason: FinishedReason, explanation: &str, text: &str) -> Option<String> {
    match reason {
        // A reply with no text: say so rather than print nothing.
        FinishedReason::Answer if text.trim().is_empty() => Some(explanation.to_string()),
        FinishedReason::Answer => None,
        // The text of a failed turn is the model's error: what went wrong and why.
        FinishedReason::Error => Some(format!("{explanation} {}", visible(text, true))),
        _ => Some(explanation.to_string()),
    }
}

/// A refused undo's three versions for a person: where each is, and what changed between
/// them.
pub(super) fn three_way_view(conflict: &UndoConflict) -> String {
    let describe = |version: &Version| match (&version.file, version.bytes) {
        (Some(file), Some(bytes)) => format!("{bytes} bytes, {}", file.display()),
        (Some(file), None) => file.display().to_string(),
        _ => "did not exist".to_string(),
    };
    let mut view = format!(
        "Three versions of {}:\n  before the write:  {}\n  the write's own:   {}\n  now:               {}\n",
        conflict.path,
        describe(&conflict.before),
        describe(&conflict.agent),
        if conflict.now.exists { describe(&conflict.now) } else { "does not exist".to_string() },
    );
    for (title, diff) in [
        (
            "What the write changed (before → the write's own)",
            &conflict.agent_changes,
        ),
        (
            "What changed since (the write's own → now)",
            &conflict.later_changes,
        ),
    ] {
        match diff {
            Some(diff) => view.push_str(&format!("\n{title}:\n{diff}")),
            None => view.push_str(&format!(
                "\n{title}: not shown (binary or over 1 MiB); compare the files above\n"
            )),
        }
    }
    view.push_str("\nNothing was changed. Merge by hand if you want parts of both.");
    view
}
