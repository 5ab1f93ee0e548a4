//! `lantern tool` and `lantern run`: one call, or the whole agent loop, with the approval
//! asked on the terminal or fixed by a flag.

use crate::models::ModelArgs;
use crate::{open_workspace, print_json, usage, Approve, Failure};
use lantern_core::agent::{Answer, Confirmer, FixedAnswer, Session, SessionOptions};
use lantern_core::event::{load_transcript, Event, FinishedReason, TranscriptWriter};
use lantern_core::model::CancelToken;
use lantern_core::paths;
use lantern_core::toolbox::Toolbox;
use serde_json::Value;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(super) fn tool(
    toolbox: &Arc<Toolbox>,
    name: &str,
    workspace: &Path,
    args: &str,
    yes: bool,
    deny: bool,
) -> Result<u8, Failure> {
    let ws = open_workspace(workspace)?;
    let args_from_stdin = args == "-";
    let text = if args_from_stdin {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| usage(format!("could not read the arguments from stdin: {e}")))?;
        text
    } else {
        args.to_string()
    };
    let args: Value = serde_json::from_str(&text).map_err(|e| {
        usage(format!(
            "--args is not valid JSON ({e}); give an object such as '{{\"path\": \"README.md\"}}'"
        ))
    })?;
    if !args.is_object() {
        return Err(usage(
            "--args must be a JSON object, e.g. '{\"path\": \"README.md\"}'",
        ));
    }
    let options = SessionOptions::persistent(&ws, toolbox.clone());
    let mut session = Session::new(ws, options);
    if session.registry().spec(name).is_none() {
        return Err(usage(format!(
            "unknown tool \"{name}\"; the tools are: {}",
            session.registry().names().join(", ")
        )));
    }
    if let Some(w) = &session.policy_warning {
        eprintln!("lantern: {w}");
    }
    let mut confirmer = pick_confirmer(
        yes,
        deny,
        !args_from_stdin && std::io::stdin().is_terminal(),
    );
    let outcome = session.run_call(name, args, confirmer.as_mut(), &mut |_| {});
    let result = outcome.into_result();
    print_json(&result);
    Ok(if result.success { 0 } else { 1 })
}

/// Trait objects for the three ways a call can be approved.
pub(super) fn pick_confirmer(yes: bool, deny: bool, terminal: bool) -> Box<dyn Confirmer> {
    if yes {
        Box::new(FixedAnswer(Answer::AllowOnce))
    } else if deny {
        Box::new(FixedAnswer(Answer::Unanswerable {
            reason: "refused with --deny".to_string(),
        }))
    } else if terminal {
        Box::new(crate::confirm::Terminal)
    } else {
        Box::new(FixedAnswer(Answer::Unanswerable {
            reason: "this call needs approval and there is no terminal to ask on; pass --yes (or --approve all) to allow it".to_string(),
        }))
    }
}

/// Where `run` saves its transcript, and the one it continues.
pub(super) struct Transcripts {
    pub save: Option<PathBuf>,
    pub continue_from: Option<PathBuf>,
}

/// The events of the transcript a run takes up; lines that are no events are skipped, and
/// said so.
fn earlier_events(path: &Path) -> Result<Vec<Event>, Failure> {
    let (events, bad) = load_transcript(path).map_err(|e| {
        usage(format!(
            "cannot read the transcript {}: {e}",
            path.display()
        ))
    })?;
    if !bad.is_empty() {
        eprintln!(
            "lantern: {} line(s) of {} are not events and were skipped",
            bad.len(),
            path.display()
        );
    }
    Ok(events)
}

/// Who answers the run's questions about calls: yes to all, no to all, or the person at the
/// terminal (no terminal: no).
fn confirmer_for(approve: Approve) -> Box<dyn Confirmer> {
    match approve {
        Approve::All => pick_confirmer(true, false, false),
        Approve::None => Box::new(FixedAnswer(Answer::Unanswerable {
            reason: "calls that need approval are refused in this run (--approve none)".to_string(),
        })),
        Approve::Ask => pick_confirmer(false, false, std::io::stdin().is_terminal()),
    }
}

pub(super) fn agent_run(
    workspace: &Path,
    model_args: &ModelArgs,
    prompt: &str,
    approve: Approve,
    json: bool,
    max_steps: usize,
    transcripts: Transcripts,
) -> Result<u8, Failure> {
    if max_steps == 0 {
        return Err(usage("--max-steps must be at least 1"));
    }
    let ws = open_workspace(workspace)?;
    // The conversation to take up, read before anything is loaded or written.
    let earlier = match &transcripts.continue_from {
        Some(path) => earlier_events(path)?,
        None => Vec::new(),
    };
    let mut model = model_args.load()?;
    let transcript_path = transcripts
        .save
        .unwrap_or_else(|| paths::new_transcript_path(ws.root()));
    let mut out = RunOutput::new(&transcript_path, json)?;
    // The configured MCP servers run for this message, and stop with it.
    let tools = crate::mcp_commands::Tools::start(Some(workspace))?;
    let mut options = SessionOptions::persistent(&ws, tools.toolbox.clone());
    options.config.max_steps = max_steps;
    options.config.tool_choice = model_args.tool_choice;
    let on_server = matches!(model_args.provider, crate::models::Provider::Openai);
    options.config.repo_map =
        lantern_core::agent::repo_map_budget(None, on_server, || model.context_size());
    let mut session = Session::new(ws, options);
    // A turn that builds the code index (its first search, say) shows how far it has come.
    let shown = crate::index_command::ShownProgress::of(session.code_index());
    if !earlier.is_empty() {
        session.resume(&earlier);
        // The new transcript is the whole conversation, the earlier part first.
        out.record(&earlier);
    }
    if let Some(w) = &session.policy_warning {
        eprintln!("lantern: {w}");
    }
    let mut confirmer = confirmer_for(approve);
    let finished = session.send(
        prompt,
        model.as_mut(),
        confirmer.as_mut(),
        &mut |event: &Event| out.event(event),
        &CancelToken::new(),
    );
    drop(shown);
    if !json {
        eprintln!("transcript: {}", transcript_path.display());
    }
    Ok(match finished {
        Event::TurnFinished {
            reason: FinishedReason::Answer,
            ..
        } => 0,
        _ => 1,
    })
}

/// Where a run's events go: every one into its transcript, and each to stdout as a JSON line
/// (`--json`) or in words.
struct RunOutput {
    transcript: TranscriptWriter,
    write_failed: bool,
    json: bool,
    human: crate::render::Human,
}

impl RunOutput {
    fn new(transcript_path: &Path, json: bool) -> Result<Self, Failure> {
        let transcript = TranscriptWriter::create(transcript_path).map_err(|e| {
            usage(format!(
                "cannot write the transcript {}: {e}",
                transcript_path.display()
            ))
        })?;
        Ok(RunOutput {
            transcript,
            write_failed: false,
            json,
            human: match std::io::stdout().is_terminal() {
                true => crate::render::Human::new(),
                false => crate::render::Human::answer_only(),
            },
        })
    }

    /// Writes the events of a conversation taken up into the transcript, unprinted.
    fn record(&mut self, earlier: &[Event]) {
        for event in earlier {
            let _ = self.transcript.write(event);
        }
    }

    fn event(&mut self, event: &Event) {
        if self.transcript.write(event).is_err() && !self.write_failed {
            self.write_failed = true;
            eprintln!("lantern: could not write the transcript; carrying on without it");
        }
        if self.json {
            outln!(
                "{}",
                serde_json::to_string(event).expect("events serialise")
            );
        } else {
            self.human.event(event);
        }
    }
}
