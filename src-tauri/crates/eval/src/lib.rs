//! The tool-use evaluation: tasks on real projects run against any [`Model`], scored from the
//! agent's events and the files the run left behind.
//!
//! It answers the questions that pick a backend's defaults: does the model call a tool when
//! the question needs one (and only then), are its calls valid, does it pick a sensible first
//! tool, and does the whole turn end in a right answer or a right file — in the model's own
//! words first, and apart from that as the user is shown it with Lantern's notes. Every run
//! takes a fresh [`Session`](lantern_core::agent::Session) on a fresh copy of its fixture
//! workspace, so history and edits never leak from one task into the next; the model itself is
//! reused, because loading it is expensive.
//!
//! The tasks are split by project: the `dev` set is the one levers are tuned on, the `test` set
//! is held out and only reported on. A held-out task that needs a tool is asked three ways, as
//! different users would, and counts only when all three succeed.
//!
//! ```
//! use lantern_eval::{Split, EvalTask};
//! let task: EvalTask = serde_json::from_value(serde_json::json!({
//!     "id": "shop-port", "fixture": "shop", "split": "test", "category": "lookup",
//!     "prompt": "Server port?",
//!     "rephrasings": ["Which port does the server listen on, please?",
//!                     "I need to open the firewall for the app; what do I open?"],
//!     "needs_tool": true, "tools": ["search_code"],
//!     "success": {"answer_contains_any": ["8080"]}
//! })).unwrap();
//! assert_eq!(task.split, Split::Test);
//! assert_eq!(task.phrasings().count(), 3);
//! ```
//!
//! [`Model`]: lantern_core::model::Model

mod changes;
mod given;
mod jobs;
pub mod matching;
mod report;
mod run;
mod scratch;
mod task;
mod verdict;

pub use changes::WrittenOver;
pub use given::{given_read, given_reads, FirstCallGiven, Shown};
pub use jobs::{run_all, Jobs};
pub use report::{
    markdown_table, summarize, summarize_splits, CategorySummary, EvalSummary, PhrasingScore,
    SplitSummary,
};
pub use run::{run_task, TaskOutcome};
pub use scratch::remove_leftovers;
pub use task::{
    load_tasks, EvalTask, FileContains, Split, SuccessCriteria, TaskSet, PHRASING_NAMES,
    TEST_PHRASINGS,
};
