//! Events as text for a person reading the terminal: the answer on stdout, the steps on stderr.

use lantern_core::event::Event;
use std::io::Write;

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
            println!();
            self.mid_line = false;
        }
    }

    pub fn event(&mut self, event: &Event) {
        match event {
            Event::TextDelta { text, .. } => {
                print!("{text}");
                let _ = std::io::stdout().flush();
                self.mid_line = !text.ends_with('\n');
            }
            Event::CallParsed {
                tool,
                args,
                dialect,
                ..
            } => {
                self.end_line();
                eprintln!("→ {tool} {args} ({})", dialect.as_str());
            }
            Event::CallRejected { message, .. } => {
                self.end_line();
                eprintln!("✗ invalid call: {message}");
            }
            Event::PermissionAnswered {
                decision,
                rule,
                message,
                ..
            } if decision == "deny" => {
                eprintln!(
                    "  denied ({rule}){}",
                    message
                        .as_deref()
                        .map(|m| format!(": {m}"))
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
                        result.error_message.as_deref().unwrap_or_default()
                    );
                }
            }
            Event::ContextTrimmed {
                messages_dropped, ..
            } => {
                eprintln!("  (dropped the {messages_dropped} oldest messages to fit the context)");
            }
            Event::TurnFinished {
                reason,
                explanation,
                text,
                ..
            } => {
                self.end_line();
                match reason {
                    lantern_core::event::FinishedReason::Answer => {}
                    // The text of a failed turn is the model's error: what went wrong and why.
                    lantern_core::event::FinishedReason::Error => {
                        eprintln!("{explanation} {text}")
                    }
                    _ => eprintln!("{explanation}"),
                }
            }
            _ => {}
        }
    }
}
