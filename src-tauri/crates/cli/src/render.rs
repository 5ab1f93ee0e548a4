//! Events as text for a person reading the terminal: the answer on stdout, the steps on stderr.

use lantern_core::checkpoint::{UndoConflict, Version};
use lantern_core::event::Event;
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
}

impl Human {
    pub fn new() -> Self {
        Human { mid_line: false }
    }

    fn end_line(&mut self) {
        if self.mid_line {
            outln!();
            self.mid_line = false;
        }
    }

    pub fn event(&mut self, event: &Event) {
        match event {
            Event::TextDelta { text, .. } => {
                out!("{}", visible(text, true));
                self.mid_line = !text.ends_with('\n');
            }
            Event::CallParsed {
                tool,
                args,
                dialect,
                ..
            } => {
                self.end_line();
                eprintln!(
                    "→ {tool} {} ({})",
                    visible(&args.to_string(), false),
                    dialect.as_str()
                );
            }
            Event::CallRejected { message, .. } => {
                self.end_line();
                eprintln!("✗ invalid call: {}", visible(message, true));
            }
            Event::PermissionAnswered {
                decision,
                rule,
                message,
                ..
            } if *decision == Effect::Deny => {
                eprintln!(
                    "  denied ({rule}){}",
                    message
                        .as_deref()
                        .map(|m| format!(": {}", visible(m, false)))
                        .unwrap_or_default()
                );
            }
            Event::ToolFinished {
                success,
                result,
                execution_time_ms,
                ..
            } => {
                if *success {
                    eprintln!(
                        "  ✓ {} bytes in {execution_time_ms} ms",
                        result.metadata.data_size_bytes
                    );
                } else {
                    eprintln!(
                        "  ✗ {}: {}",
                        result.error_type,
                        visible(result.error_message.as_deref().unwrap_or_default(), true)
                    );
                }
            }
            Event::ContextTrimmed {
                messages_dropped,
                results_cut,
                ..
            } => {
                if *messages_dropped > 0 {
                    eprintln!(
                        "  (dropped the {messages_dropped} oldest messages to fit the context)"
                    );
                }
                if *results_cut > 0 {
                    eprintln!(
                        "  (cut a tool result too long for the context, {results_cut} times)"
                    );
                }
            }
            Event::ContextCompacted {
                results_shortened,
                messages_summarised,
                ..
            } => {
                if *results_shortened > 0 {
                    eprintln!(
                        "  (shortened {results_shortened} earlier tool results to one line each to fit the context)"
                    );
                }
                if *messages_summarised > 0 {
                    eprintln!(
                        "  (earlier steps were summarised: {messages_summarised} messages replaced by the model's summary to fit the context)"
                    );
                }
            }
            Event::AnswerCut { .. } => {
                self.end_line();
                eprintln!(
                    "(The answer began repeating itself and was ended; the repeats are not part of it.)"
                );
            }
            Event::AnswerPathsGiven { paths, .. } => {
                self.end_line();
                let named: Vec<String> = paths
                    .iter()
                    .map(|p| format!("{} is {}", p.name, p.path))
                    .collect();
                eprintln!(
                    "(The answer named files by their names alone: {}.)",
                    visible(&named.join(", "), false)
                );
            }
            Event::AnswerNoted { notes, .. } => {
                self.end_line();
                for note in notes {
                    eprintln!("(From the tool results: {})", visible(&note.text, false));
                }
            }
            Event::TurnFinished {
                reason,
                explanation,
                text,
                ..
            } => {
                self.end_line();
                match reason {
                    // A reply with no text: say so rather than print nothing.
                    lantern_core::event::FinishedReason::Answer if text.trim().is_empty() => {
                        eprintln!("{explanation}")
                    }
                    lantern_core::event::FinishedReason::Answer => {}
                    // The text of a failed turn is the model's error: what went wrong and why.
                    lantern_core::event::FinishedReason::Error => {
                        eprintln!("{explanation} {}", visible(text, true))
                    }
                    _ => eprintln!("{explanation}"),
                }
            }
            _ => {}
        }
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
