//! Asking for approval on the terminal.

use lantern_core::agent::{Answer, Confirmer, PermissionRequest};
use lantern_core::policy::Scope;
use std::io::{BufRead, Write};

pub struct Terminal;

/// The narrowest useful scope for a standing grant: the file, the exact command, or the tool.
fn scope_for(request: &PermissionRequest) -> Scope {
    if let Some(command) = &request.command {
        Scope::Command(command.clone())
    } else if let [path] = request.paths.as_slice() {
        Scope::Path(path.clone())
    } else {
        Scope::Tool
    }
}

impl Confirmer for Terminal {
    fn confirm(&mut self, request: &PermissionRequest) -> Answer {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(
            err,
            "\nThe assistant wants to run {} {}",
            request.tool, request.args
        );
        if let Some(reason) = &request.reasoning {
            let _ = writeln!(err, "  reason: {reason}");
        }
        if let Some(diff) = request
            .preview
            .as_ref()
            .and_then(|p| p.get("unified"))
            .and_then(|d| d.as_str())
        {
            let _ = writeln!(err, "{diff}");
        }
        if let Some(command) = &request.command {
            let _ = writeln!(err, "  command: {command}");
        }
        if let Some(sandbox) = request
            .preview
            .as_ref()
            .and_then(|p| p.get("sandbox"))
            .and_then(|s| s.as_str())
        {
            let _ = writeln!(err, "  sandbox: {sandbox}");
        }
        let scope = scope_for(request);
        loop {
            let _ = write!(
                err,
                "Allow? [y] once  [s] this session  [a] always  [n] no (default): "
            );
            let _ = err.flush();
            let mut line = String::new();
            if std::io::stdin().lock().read_line(&mut line).unwrap_or(0) == 0 {
                return Answer::Deny { message: None };
            }
            match line.trim().to_lowercase().as_str() {
                "y" | "yes" => return Answer::AllowOnce,
                "s" | "session" => return Answer::AllowSession { scope },
                "a" | "always" => return Answer::AllowAlways { scope },
                "" | "n" | "no" => {
                    let _ = write!(err, "Message for the assistant (optional): ");
                    let _ = err.flush();
                    let mut message = String::new();
                    let _ = std::io::stdin().lock().read_line(&mut message);
                    let message = message.trim().to_string();
                    return Answer::Deny {
                        message: (!message.is_empty()).then_some(message),
                    };
                }
                _ => continue,
            }
        }
    }
}
