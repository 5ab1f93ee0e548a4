//! Conversations longer than their context, with the real default model: a scripted user asks
//! for large files one after another (two steps each) in a 2,048-token context, more than it
//! holds. The conversation must never fail for lack of context, what each step reports as the
//! context it fills must be llama.cpp's own count within 1 %, and every time the history is
//! compacted, shortened, summarised, dropped or cut, the loop says so in an event.
//!
//! The short one (two turns) runs with every `npm test`; the long one (thirty turns, sixty
//! steps, about fifteen minutes) is a benchmark that `npm run bench` runs (`--ignored`).

use lantern_core::agent::{AgentConfig, Answer, FixedAnswer, Session, SessionOptions};
use lantern_core::event::{Event, FinishedReason};
use lantern_core::model::{
    CancelToken, Flow, GenerateRequest, Generation, GenerationOptions, Model, ModelError,
};
use lantern_core::sandbox::Workspace;
use lantern_core::toolbox::Toolbox;
use lantern_llama::{default_model_path, LoadOptions, LocalModel};
use std::time::Instant;

mod support;

const CONTEXT: u32 = 2048;

/// The model, with what each step reported against what llama.cpp held after it.
struct Metered {
    model: LocalModel,
    /// (reported context used, llama.cpp's positions) per step.
    steps: Vec<(usize, usize)>,
    /// Steps at which the backend dropped messages or cut a result to fit.
    trimmed_steps: usize,
}

impl Model for Metered {
    fn name(&self) -> String {
        self.model.name()
    }

    fn configure(&mut self, options: &GenerationOptions) {
        self.model.configure(options);
    }

    fn generate(
        &mut self,
        request: &GenerateRequest<'_>,
        on_text: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Generation, ModelError> {
        let generation = self.model.generate(request, on_text)?;
        // Steps of the loop, not the summaries compaction asks for (they have no tools).
        if !request.tools.is_empty() {
            let used = generation
                .context_used
                .expect("the local engine reports it");
            self.steps.push((used, self.model.kv_positions()));
            if generation.messages_trimmed + generation.results_cut > 0 {
                self.trimmed_steps += 1;
            }
        }
        Ok(generation)
    }
}

/// A file of `lines` numbered lines, about eight tokens each.
fn big_file(n: usize, lines: usize) -> String {
    (1..=lines)
        .map(|i| format!("File {n:02}, line {i}: the quick brown fox jumps over the lazy dog.\n"))
        .collect()
}

#[test]
fn two_turns_past_a_2048_token_context_are_compacted_and_say_so() {
    // Two files of 60 lines (about 500 tokens each) and the system prompt do not fit together.
    session_at_a_small_context(2, 60);
}

#[test]
#[ignore = "a benchmark of about fifteen minutes: npm run bench runs it"]
fn sixty_steps_at_a_2048_token_context_never_fail_for_lack_of_context() {
    session_at_a_small_context(30, 150);
}

/// `turns` turns, each asking for a new file of `lines` lines, at a 2,048-token context.
fn session_at_a_small_context(turns: usize, lines: usize) {
    let path = default_model_path();
    assert!(
        path.exists(),
        "the default model is missing at {}: run scripts/fetch-model.sh (npm test does)",
        path.display()
    );
    let dir = tempfile::tempdir().unwrap();
    for n in 1..=turns {
        std::fs::write(
            dir.path().join(format!("big-{n:02}.txt")),
            big_file(n, lines),
        )
        .unwrap();
    }
    let options = LoadOptions {
        context: Some(CONTEXT),
        threads: Some(1),
        ..LoadOptions::new(path)
    };
    let mut model = Metered {
        model: support::keeping_openings(support::keeping_calibration(
            LocalModel::load(&options, |_| {}).unwrap(),
        )),
        steps: Vec::new(),
        trimmed_steps: 0,
    };
    let mut session = Session::new(
        Workspace::open(dir.path()).unwrap(),
        SessionOptions {
            config: AgentConfig {
                max_steps: 2,
                max_tokens: 48,
                ..AgentConfig::default()
            },
            ..SessionOptions::in_memory(Toolbox::standard().into())
        },
    );
    let started = Instant::now();
    let mut events = Vec::new();
    for n in 1..=turns {
        let finished = session.send(
            &format!("Read big-{n:02}.txt and tell me its first line."),
            &mut model,
            &mut FixedAnswer(Answer::AllowOnce),
            &mut |event: &Event| events.push(event.clone()),
            &CancelToken::new(),
        );
        let Event::TurnFinished { reason, text, .. } = finished else {
            panic!("not a turn_finished event");
        };
        assert_ne!(reason, FinishedReason::Error, "turn {n}: {text}");
    }
    let steps = model.steps.len();
    let worst = model
        .steps
        .iter()
        .map(|&(used, held)| (used as f64 - held as f64).abs() / held.max(1) as f64)
        .fold(0.0, f64::max);
    let count = |kind: &str| {
        events
            .iter()
            .filter(|e| serde_json::to_value(e).unwrap()["event"] == kind)
            .count()
    };
    let (compacted, trimmed_events) = (count("context_compacted"), count("context_trimmed"));
    eprintln!(
        "{steps} steps in {:.0} s; largest meter error {:.2} %; {} compaction events, {} trim events; most context used {} of {CONTEXT}",
        started.elapsed().as_secs_f64(),
        worst * 100.0,
        compacted,
        trimmed_events,
        model.steps.iter().map(|s| s.0).max().unwrap_or(0)
    );
    assert!(steps >= turns * 3 / 2, "only {steps} steps ran");
    assert!(worst <= 0.01, "the meter was off by {:.2} %", worst * 100.0);
    for &(used, _) in &model.steps {
        assert!(used <= CONTEXT as usize);
    }
    // The files do not fit together: the conversation was compacted, and each time said so.
    assert!(compacted + trimmed_events > 0, "nothing was compacted");
    assert_eq!(
        trimmed_events, model.trimmed_steps,
        "every step at which the backend dropped or cut something says so"
    );
}
