//! Call or answer? Tiny models rarely *start* a tool call on their own, even when a grammar
//! would make the call perfect once started. So at the first token of a reply Lantern asks the
//! model itself: how likely is it that this reply begins with `<TOOL_CALL>`? That
//! log-probability is compared with a threshold calibrated for this model and this system
//! prompt, from a small built-in set of labelled probe questions.
//!
//! When the probes show no separation (a base model, say), the decision falls back to a
//! lexical prior: call a tool when the message names a file or asks about the project.

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
];

/// Conversations one step on: a question, the call made, its result, and whether the right
/// next step is another call. Tiny models tend to repeat their call once they have seen a
/// result, so this decision is calibrated on its own.
pub struct FollowUpProbe {
    pub question: &'static str,
    pub call: &'static str,
    pub result: &'static str,
    pub needs_call: bool,
}

pub const FOLLOW_UP_PROBES: &[FollowUpProbe] = &[
    FollowUpProbe {
        question: "What's in package.json?",
        call: r##"{"tool": "read_file", "args": {"path": "package.json"}, "reasoning": "Read the manifest"}"##,
        result: r##"{"success":true,"data":{"path":"package.json","content":"{\"name\": \"shop\", \"version\": \"1.2.0\"}","total_lines":1},"error":null}"##,
        needs_call: false,
    },
    FollowUpProbe {
        question: "Where is the main function defined?",
        call: r##"{"tool": "search_code", "args": {"query": "fn main"}, "reasoning": "Search for the definition"}"##,
        result: r##"{"success":true,"data":{"matches":[{"path":"src/main.rs","line":3,"column":1,"text":"fn main() {"}],"count":1},"error":null}"##,
        needs_call: false,
    },
    FollowUpProbe {
        question: "List the Rust files in src.",
        call: r##"{"tool": "list_files", "args": {"directory": "src", "pattern": "*.rs"}, "reasoning": "List them"}"##,
        result: r##"{"success":true,"data":{"files":["src/lib.rs","src/main.rs"],"count":2},"error":null}"##,
        needs_call: false,
    },
    FollowUpProbe {
        question: "What version does Cargo.toml declare?",
        call: r##"{"tool": "read_file", "args": {"path": "Cargo.toml"}, "reasoning": "The version is in the manifest"}"##,
        result: r##"{"success":true,"data":{"path":"Cargo.toml","content":"[package]\nname = \"calc\"\nversion = \"0.3.1\"\n","total_lines":3},"error":null}"##,
        needs_call: false,
    },
    FollowUpProbe {
        question: "Which files mention TODO?",
        call: r##"{"tool": "search_code", "args": {"query": "TODO"}, "reasoning": "Search for the marker"}"##,
        result: r##"{"success":true,"data":{"matches":[{"path":"src/db.rs","line":8,"column":8,"text":"    // TODO: pool connections"}],"count":1},"error":null}"##,
        needs_call: false,
    },
    FollowUpProbe {
        question: "What time is it?",
        call: r##"{"tool": "get_current_time", "args": {}, "reasoning": "Ask the clock"}"##,
        result: r##"{"success":true,"data":{"local":"2026-03-02T14:05:00+01:00"},"error":null}"##,
        needs_call: false,
    },
    FollowUpProbe {
        question: "Read the first Rust file in src.",
        call: r##"{"tool": "list_files", "args": {"directory": "src", "pattern": "*.rs"}, "reasoning": "Find the files first"}"##,
        result: r##"{"success":true,"data":{"files":["src/lib.rs","src/main.rs"],"count":2},"error":null}"##,
        needs_call: true,
    },
    FollowUpProbe {
        question: "Fix the typo in the title of README.md.",
        call: r##"{"tool": "read_file", "args": {"path": "README.md"}, "reasoning": "See the title first"}"##,
        result: r##"{"success":true,"data":{"path":"README.md","content":"# Shpo\n","total_lines":1},"error":null}"##,
        needs_call: true,
    },
    FollowUpProbe {
        question: "Open the file that defines parse_config.",
        call: r##"{"tool": "search_code", "args": {"query": "fn parse_config"}, "reasoning": "Find the file"}"##,
        result: r##"{"success":true,"data":{"matches":[{"path":"src/config.rs","line":12,"column":1,"text":"pub fn parse_config(text: &str) -> Config {"}],"count":1},"error":null}"##,
        needs_call: true,
    },
    FollowUpProbe {
        question: "Add the line 'done' to the end of notes.md.",
        call: r##"{"tool": "read_file", "args": {"path": "notes.md"}, "reasoning": "Read it before changing it"}"##,
        result: r##"{"success":true,"data":{"path":"notes.md","content":"- buy milk\n","total_lines":1},"error":null}"##,
        needs_call: true,
    },
    FollowUpProbe {
        question: "Show me the code of the login handler.",
        call: r##"{"tool": "search_code", "args": {"query": "login"}, "reasoning": "Find the handler"}"##,
        result: r##"{"success":true,"data":{"matches":[{"path":"src/auth.rs","line":10,"column":8,"text":"pub fn login(user: &User) -> Session {"}],"count":1},"error":null}"##,
        needs_call: true,
    },
    FollowUpProbe {
        question: "Read the test file for the parser.",
        call: r##"{"tool": "list_files", "args": {"directory": "tests"}, "reasoning": "Find the tests"}"##,
        result: r##"{"success":true,"data":{"files":["tests/parser.rs","tests/cli.rs"],"count":2},"error":null}"##,
        needs_call: true,
    },
];

/// A fingerprint of every probe, so a calibration measured on another probe set is not reused.
pub fn probe_set_fingerprint() -> String {
    let mut text = String::new();
    for probe in TOOL_PROBES.iter().chain(ANSWER_PROBES) {
        text.push_str(probe);
        text.push('\n');
    }
    for probe in FOLLOW_UP_PROBES {
        for part in [probe.question, probe.call, probe.result] {
            text.push_str(part);
            text.push('\n');
        }
        text.push_str(if probe.needs_call {
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecisionRules {
    /// The first reply to a user message.
    pub first_step: Calibration,
    /// A reply right after a tool result.
    pub follow_up: Calibration,
}

/// How the first token of a reply is decided in `auto` mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Call when the score (log-probability, nats) is at least this.
    pub threshold: f64,
    /// How well the score ranks tool questions above answer questions (1 = perfectly).
    pub auc: f64,
    /// Fraction of probes the threshold classifies right.
    pub probe_accuracy: f64,
    /// False when the probes showed no useful separation: the lexical prior decides instead.
    pub trusted: bool,
    pub tool_scores: Vec<f64>,
    pub answer_scores: Vec<f64>,
    pub seconds: f64,
}

impl Calibration {
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
            auc,
            probe_accuracy: correct as f64 / (tool.len() + answer.len()).max(1) as f64,
            trusted: auc >= MIN_AUC,
            tool_scores: tool.to_vec(),
            answer_scores: answer.to_vec(),
            seconds,
        }
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

/// The fallback decision: does this message name a file or ask about the project?
pub fn lexical_prior(message: &str) -> bool {
    const PROJECT_WORDS: &[&str] = &[
        "file",
        "files",
        "folder",
        "directory",
        "project",
        "repo",
        "code",
        "codebase",
        "function",
        "method",
        "class",
        "struct",
        "module",
        "defined",
        "definition",
        "source",
        "src",
        "readme",
        "config",
        "package",
        "dependency",
        "dependencies",
        "version",
        "bug",
        "fix",
        "error",
        "errors",
        "test",
        "tests",
        "todo",
        "task",
        "tasks",
        "time",
        "date",
        "today",
        "search",
        "find",
        "list",
        "read",
        "open",
        "write",
        "create",
        "edit",
        "change",
        "rename",
        "line",
    ];
    let lower = message.to_lowercase();
    let names_a_file = lower
        .split(|c: char| c.is_whitespace() || "\"'`,;:()?!".contains(c))
        .any(|word| {
            let word = word.trim_end_matches('.');
            match word.rsplit_once('.') {
                Some((stem, ext)) => {
                    !stem.is_empty()
                        && (1..=5).contains(&ext.len())
                        && ext.chars().all(|c| c.is_ascii_alphanumeric())
                        && !ext.chars().all(|c| c.is_ascii_digit())
                }
                None => word.contains('/') && word.len() > 1,
            }
        });
    names_a_file
        || lower
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| PROJECT_WORDS.contains(&w))
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
    fn the_threshold_separates_separable_scores() {
        let c = Calibration::from_scores(&[-3.0, -2.0, -1.0], &[-9.0, -8.0, -6.0], 0.1);
        assert!(c.threshold > -6.0 && c.threshold < -3.0, "{}", c.threshold);
        assert_eq!(c.auc, 1.0);
        assert_eq!(c.probe_accuracy, 1.0);
        assert!(c.trusted);
    }

    #[test]
    fn overlapping_scores_are_not_trusted() {
        let c = Calibration::from_scores(&[-5.0, -3.0, -8.0, -1.0], &[-4.0, -2.0, -7.0, -1.5], 0.1);
        assert!(c.auc < MIN_AUC, "{}", c.auc);
        assert!(!c.trusted);
    }

    #[test]
    fn lexical_prior_spots_files_and_project_questions() {
        for yes in [
            "What's in package.json?",
            "open src/main.rs",
            "Where is parse_config defined?",
            "fix the bug in lib.rs",
            "What time is it?",
        ] {
            assert!(lexical_prior(yes), "{yes}");
        }
        for no in [
            "What is the capital of France?",
            "Say hello.",
            "What is 2.5 times 4?",
            "Who wrote Hamlet?",
        ] {
            assert!(!lexical_prior(no), "{no}");
        }
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
