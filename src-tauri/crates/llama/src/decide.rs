//! Call or answer? Tiny models rarely *start* a tool call on their own, even when a grammar
//! would make the call perfect once started. So at the first token of a reply Lantern asks the
//! model itself: how likely is it that this reply begins with `<TOOL_CALL>`? That
//! log-probability is compared with a threshold calibrated for this model and this system
//! prompt, from a small built-in set of labelled probe questions.
//!
//! A lexical prior — does the message name a file or ask about the project
//! ([`Question::sounds_about_the_project`])? — is a second,
//! independent clue. At the first step it adds a weight (in nats) to the score of a message it
//! marks; the calibration picks that weight, from none up, as the one that ranks the probes
//! best, and the threshold for the sum. When the probes show no separation at all (a base
//! model, say), the lexical prior decides alone.
//!
//! The probes are a coding assistant's everyday mix: questions about the project, with and
//! without a file name, and general questions — programming ones included, which score
//! highest among them — that need no tool.

use lantern_core::model::MadeCall;
use lantern_core::question::Question;
use lantern_core::spec::{ExampleFollowUp, ToolSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Questions that need a tool to answer. Held out from the evaluation set.
pub const TOOL_PROBES: &[&str] = &[
    "What's in package.json?",
    "Where is the main function defined?",
    "List the Rust files in src.",
    "Read README.md and summarise it.",
    "Which files mention TODO?",
    "Show me the contents of config.toml.",
    "What version does Cargo.toml declare?",
    "Find where the database connection is opened.",
    "What license is this project released under?",
    "How many tests does this crate have?",
    "Which database driver does the app depend on?",
    "Where is the user session created?",
    "Rename the helper format_price to price_label everywhere.",
    "Change the timeout in settings.py to 30 seconds.",
    "What does the start script of this project run?",
    "Is there a Dockerfile here?",
    "Which functions call parse_args?",
];

/// Questions to answer directly.
pub const ANSWER_PROBES: &[&str] = &[
    "What is the capital of France?",
    "What does CPU stand for?",
    "Say hello.",
    "What is 7 plus 5?",
    "Explain recursion in one sentence.",
    "Who wrote Romeo and Juliet?",
    "Thanks, that was helpful!",
    "What is a good name for a cat?",
    "What is the difference between a process and a thread?",
    "How do I exit vim?",
    "What is a closure in JavaScript?",
    "Which SQL keyword removes duplicate rows from a result?",
    "What is the big-O cost of a lookup in a hash map?",
    "Write a regular expression that matches a US zip code.",
    "How do you declare a constant in Python?",
    "What is 2 to the power of 10?",
];

/// A conversation one step on (a question, the call made, its result, and whether the right
/// next step is another call), as an offered tool declares it. Tiny models tend to repeat
/// their call once they have seen a result, so this decision is calibrated on its own.
pub struct FollowUpProbe<'t> {
    pub tool: &'t str,
    pub example: &'t ExampleFollowUp,
}

impl FollowUpProbe<'_> {
    /// The probe's call as the text protocol writes it.
    pub fn call(&self) -> String {
        let quoted = |text: &str| serde_json::to_string(text).expect("a string serialises");
        format!(
            "{{\"tool\": {}, \"args\": {}, \"reasoning\": {}}}",
            quoted(self.tool),
            self.example.args,
            quoted(self.example.reasoning)
        )
    }

    /// The probe's call as the history keeps it beside its text.
    pub fn made_call(&self) -> MadeCall {
        let args = serde_json::from_str(self.example.args).expect("a tool's example is JSON");
        MadeCall::new(self.tool, args)
    }
}

/// The follow-up probes the offered `tools` declare, in their order.
pub fn follow_up_probes(tools: &[ToolSpec]) -> Vec<FollowUpProbe<'_>> {
    tools
        .iter()
        .flat_map(|spec| {
            spec.follow_ups.iter().map(|example| FollowUpProbe {
                tool: &spec.name,
                example,
            })
        })
        .collect()
}

/// A fingerprint of every probe (the follow-ups those of `tools`) and of how they are used, so
/// a calibration measured on another probe set, or fitted another way, is not reused. How the
/// words of a first-step probe are read (whether it sounds about the project, the lexical
/// prior the fit weighs) is part of it: a change to that reading fits another weight, and a
/// calibration kept from before it would decide differently from one measured after.
pub fn probe_set_fingerprint(tools: &[ToolSpec]) -> String {
    let mut text = String::from("first step: score plus a weighted lexical prior\n");
    for probe in TOOL_PROBES.iter().chain(ANSWER_PROBES) {
        text.push_str(probe);
        let about = Question::read(probe).sounds_about_the_project;
        text.push_str(if about { "\tabout the project\n" } else { "\n" });
    }
    for probe in follow_up_probes(tools) {
        let example = probe.example;
        for part in [example.question, &probe.call(), example.result] {
            text.push_str(part);
            text.push('\n');
        }
        text.push_str(if example.needs_call {
            "call\n"
        } else {
            "answer\n"
        });
    }
    lantern_core::paths::sha256_hex(text.as_bytes())
}

/// Below this ranking quality the probes are not trusted and a fallback rule decides.
pub const MIN_AUC: f64 = 0.75;

/// The calibrated decisions for one model and system prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DecisionRules {
    /// The first reply to a user message.
    pub first_step: Calibration,
    /// A reply right after a tool result.
    pub follow_up: Calibration,
}

/// How the first token of a reply is decided in `auto` mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Calibration {
    /// Call when the evidence (the score, a log-probability in nats, plus `prior_weight` when
    /// the lexical prior marks the message) is at least this.
    pub threshold: f64,
    /// Nats added to the score of a message the lexical prior marks (0: the score alone).
    #[serde(default)]
    pub prior_weight: f64,
    /// How well the evidence ranks tool questions above answer questions (1 = perfectly).
    pub auc: f64,
    /// Fraction of probes the threshold classifies right.
    pub probe_accuracy: f64,
    /// False when the probes showed no useful separation: the lexical prior decides instead.
    pub trusted: bool,
    /// The probes' scores, without the prior's weight.
    pub tool_scores: Vec<f64>,
    pub answer_scores: Vec<f64>,
    pub seconds: f64,
}

/// The weights [`Calibration::with_prior`] tries for the lexical prior, in nats.
const PRIOR_WEIGHTS: [f64; 17] = [
    0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0,
];

impl Calibration {
    /// Calibrates the score together with the lexical prior: `tool` and `answer` hold each
    /// probe's score and whether the prior marks its question. The weight is the smallest of
    /// `PRIOR_WEIGHTS` whose evidence ranks the probes best (highest AUC), so a prior that
    /// adds nothing gets no weight; the threshold is then placed as in [`from_scores`].
    ///
    /// [`from_scores`]: Calibration::from_scores
    pub fn with_prior(tool: &[(f64, bool)], answer: &[(f64, bool)], seconds: f64) -> Self {
        let evidence = |probes: &[(f64, bool)], weight: f64| -> Vec<f64> {
            probes
                .iter()
                .map(|&(score, marked)| weighted(score, marked, weight))
                .collect()
        };
        let mut best = (0.0, f64::NEG_INFINITY);
        for weight in PRIOR_WEIGHTS {
            let ranking = auc(&evidence(tool, weight), &evidence(answer, weight));
            // Only a clear gain buys weight: floating-point noise does not.
            if ranking > best.1 + 1e-9 {
                best = (weight, ranking);
            }
        }
        let weight = best.0;
        let mut calibration =
            Self::from_scores(&evidence(tool, weight), &evidence(answer, weight), seconds);
        calibration.prior_weight = weight;
        calibration.tool_scores = tool.iter().map(|(score, _)| *score).collect();
        calibration.answer_scores = answer.iter().map(|(score, _)| *score).collect();
        calibration
    }

    /// The evidence for a call: the score, plus the prior's weight when it marks the message.
    pub fn evidence(&self, score: f64, marked: bool) -> f64 {
        weighted(score, marked, self.prior_weight)
    }

    /// Call or answer at the first step of a reply to `question`, whose score is `score`, and
    /// why. The lexical prior is asked only when it carries weight.
    pub fn decide_first_step(&self, score: f64, question: &Question) -> (bool, String) {
        let marked = self.prior_weight > 0.0 && question.sounds_about_the_project;
        let why = if marked {
            format!(
                "score {score:.2} + {:.1} for the lexical prior, threshold {:.2}",
                self.prior_weight, self.threshold
            )
        } else {
            format!("threshold {:.2}", self.threshold)
        };
        (self.evidence(score, marked) >= self.threshold, why)
    }

    /// Places the threshold between the classes: the cut with the best balanced accuracy,
    /// halfway between the two scores it separates.
    pub fn from_scores(tool: &[f64], answer: &[f64], seconds: f64) -> Self {
        let auc = auc(tool, answer);
        let mut cuts: Vec<f64> = tool.iter().chain(answer).copied().collect();
        cuts.sort_by(|a, b| a.total_cmp(b));
        let mut best = (f64::NEG_INFINITY, 0.0);
        for pair in cuts.windows(2) {
            let cut = (pair[0] + pair[1]) / 2.0;
            let score = balanced_accuracy(tool, answer, cut);
            if score > best.1 {
                best = (cut, score);
            }
        }
        let threshold = if best.0.is_finite() {
            best.0
        } else {
            cuts.first().copied().unwrap_or(0.0)
        };
        let correct = tool.iter().filter(|s| **s >= threshold).count()
            + answer.iter().filter(|s| **s < threshold).count();
        Calibration {
            threshold,
            prior_weight: 0.0,
            auc,
            probe_accuracy: correct as f64 / (tool.len() + answer.len()).max(1) as f64,
            trusted: auc >= MIN_AUC,
            tool_scores: tool.to_vec(),
            answer_scores: answer.to_vec(),
            seconds,
        }
    }
}

/// `score`, plus `weight` when the lexical prior marks the message.
fn weighted(score: f64, marked: bool, weight: f64) -> f64 {
    if marked {
        score + weight
    } else {
        score
    }
}

fn balanced_accuracy(tool: &[f64], answer: &[f64], cut: f64) -> f64 {
    let hit = tool.iter().filter(|s| **s >= cut).count() as f64 / tool.len().max(1) as f64;
    let pass = answer.iter().filter(|s| **s < cut).count() as f64 / answer.len().max(1) as f64;
    (hit + pass) / 2.0
}

/// Probability that a random tool question outscores a random answer question.
pub fn auc(tool: &[f64], answer: &[f64]) -> f64 {
    let mut wins = 0.0;
    for t in tool {
        for a in answer {
            wins += if t > a {
                1.0
            } else if t == a {
                0.5
            } else {
                0.0
            };
        }
    }
    wins / (tool.len() * answer.len()).max(1) as f64
}

/// log(e^a + e^b), for adding the probabilities of two ways a reply can start.
pub fn log_add(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    if hi == f64::NEG_INFINITY {
        return hi;
    }
    hi + (lo - hi).exp().ln_1p()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_follow_up_probe_is_the_offered_tools_example_written_as_a_call() {
        const EXAMPLES: &[ExampleFollowUp] = &[ExampleFollowUp {
            question: "What does a.txt say?",
            args: r#"{"path": "a.txt"}"#,
            reasoning: "Read \"a\"",
            result: r#"{"success":true,"data":{"content":"hi"},"error":null}"#,
            needs_call: false,
        }];
        let spec = |name: &str, follow_ups| ToolSpec {
            name: name.into(),
            description: String::new(),
            risk: lantern_core::spec::Risk::Read,
            input_schema: serde_json::json!({"type": "object"}),
            example: serde_json::json!({}),
            preview_kind: lantern_core::spec::PreviewKind::None,
            result_kind: lantern_core::spec::ResultKind::Plain,
            source: None,
            follow_ups,
        };
        let tools = [spec("peek", EXAMPLES), spec("quiet", &[])];
        let probes = follow_up_probes(&tools);
        assert_eq!(probes.len(), 1);
        assert_eq!(
            probes[0].call(),
            r#"{"tool": "peek", "args": {"path": "a.txt"}, "reasoning": "Read \"a\""}"#
        );
        let made = probes[0].made_call();
        assert_eq!(
            (made.tool.as_str(), made.args),
            ("peek", serde_json::json!({"path": "a.txt"}))
        );
        assert_ne!(
            probe_set_fingerprint(&tools),
            probe_set_fingerprint(&tools[1..]),
            "a calibration measured with other tools' examples is not reused"
        );
    }

    #[test]
    fn the_threshold_separates_separable_scores() {
        let c = Calibration::from_scores(&[-3.0, -2.0, -1.0], &[-9.0, -8.0, -6.0], 0.1);
        assert!(c.threshold > -6.0 && c.threshold < -3.0, "{}", c.threshold);
        assert_eq!(c.auc, 1.0);
        assert_eq!(c.probe_accuracy, 1.0);
        assert!(c.trusted);
    }

    #[test]
    fn the_prior_gets_the_weight_that_ranks_the_probes_best() {
        // The scores overlap; the prior marks the tool probes the score ranks low.
        let tool = [(-3.0, false), (-2.0, false), (-6.5, true), (-7.0, true)];
        let answer = [(-9.0, false), (-8.0, false), (-6.0, false), (-5.0, false)];
        let c = Calibration::with_prior(&tool, &answer, 0.1);
        assert!(c.prior_weight > 0.0, "{c:?}");
        assert_eq!(c.auc, 1.0);
        assert_eq!(c.probe_accuracy, 1.0);
        // The scores are kept as measured; the threshold applies to score plus weight.
        assert_eq!(c.tool_scores, [-3.0, -2.0, -6.5, -7.0]);
        assert!(c.evidence(-7.0, true) >= c.threshold);
        assert!(c.evidence(-5.0, false) < c.threshold);
        // The smallest weight that does it: half a nat less would not separate them.
        let less = c.prior_weight - 0.5;
        let unseparated = |(score, marked): &(f64, bool)| score + if *marked { less } else { 0.0 };
        assert!(
            auc(
                &tool.iter().map(unseparated).collect::<Vec<_>>(),
                &answer.iter().map(unseparated).collect::<Vec<_>>()
            ) < 1.0
        );
    }

    #[test]
    fn the_first_step_adds_the_weight_only_for_a_message_the_prior_marks() {
        let tool = [(-3.0, false), (-2.0, false), (-6.5, true), (-7.0, true)];
        let answer = [(-9.0, false), (-8.0, false), (-6.0, false), (-5.0, false)];
        let c = Calibration::with_prior(&tool, &answer, 0.1);
        let (call, why) = c.decide_first_step(-7.0, &Question::read("What's in package.json?"));
        assert!(call, "{why}");
        assert!(why.contains("lexical prior"), "{why}");
        let (call, why) = c.decide_first_step(-7.0, &Question::read("Say hello."));
        assert!(!call, "{why}");
        assert!(why.starts_with("threshold"), "{why}");
    }

    #[test]
    fn a_prior_that_adds_nothing_gets_no_weight() {
        let tool = [(-3.0, true), (-2.0, true), (-1.0, true)];
        let answer = [(-9.0, true), (-8.0, true), (-6.0, true)];
        let c = Calibration::with_prior(&tool, &answer, 0.1);
        assert_eq!(c.prior_weight, 0.0);
        assert_eq!(
            c,
            Calibration::from_scores(&[-3.0, -2.0, -1.0], &[-9.0, -8.0, -6.0], 0.1)
        );
        assert_eq!(c.evidence(-4.0, true), -4.0);
    }

    #[test]
    fn overlapping_scores_are_not_trusted() {
        let c = Calibration::from_scores(&[-5.0, -3.0, -8.0, -1.0], &[-4.0, -2.0, -7.0, -1.5], 0.1);
        assert!(c.auc < MIN_AUC, "{}", c.auc);
        assert!(!c.trusted);
    }

    #[test]
    fn log_add_adds_probabilities() {
        let p = log_add(0.25f64.ln(), 0.5f64.ln()).exp();
        assert!((p - 0.75).abs() < 1e-12);
        assert_eq!(
            log_add(f64::NEG_INFINITY, f64::NEG_INFINITY),
            f64::NEG_INFINITY
        );
    }
}
