//! The reading ceiling: a diagnostic, never a lever. Each run's first call is given, as a read
//! of the lines of the project that hold the task's answer, and the model writes the rest.
//! What it measures is how often the model's own words are right when the read is the best
//! there is, so that a failure can be put down to the calls or to the answers written after
//! them.
//!
//! Only tasks whose answer is a value the project's files write are given a read (a look-up,
//! a search, a question of two steps), and only where some line says an expected answer whole.
//! A count of files, a file's path or an edit is nowhere in a line; an explanation or a
//! description is checked by words any line of prose may hold, and a line that happens to hold
//! such a number or word would be no read a person would give. Those tasks are left out.
//!
//! ```
//! use lantern_eval::{given_read, EvalTask, Shown};
//! let dir = std::env::temp_dir().join(format!("lantern-given-doc-{}", std::process::id()));
//! std::fs::create_dir_all(dir.join("shop")).unwrap();
//! std::fs::write(dir.join("shop/server.toml"), "[server]\nhost = \"0.0.0.0\"\nport = 8081\n").unwrap();
//! let task: EvalTask = serde_json::from_value(serde_json::json!({
//!     "id": "shop-port", "fixture": "shop", "category": "lookup",
//!     "prompt": "Port of the server section?", "needs_tool": true, "tools": ["read_file"],
//!     "success": {"answer_contains_any": ["8081"]}
//! })).unwrap();
//! let read = given_read(&task, &dir, Shown::Lines).unwrap();
//! assert_eq!(read.tool, "read_file");
//! assert_eq!(read.args["path"], "server.toml");
//! assert_eq!(read.args["start_line"], 1);
//! assert_eq!(read.args["end_line"], 3);
//! let whole = given_read(&task, &dir, Shown::File).unwrap();
//! assert_eq!(whole.args, serde_json::json!({"path": "server.toml"}));
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```

use crate::matching::mentions;
use crate::task::EvalTask;
use lantern_core::model::{
    CallPath, CancelToken, FinishReason, Flow, GenerateRequest, Generation, GenerationOptions,
    MadeCall, Model, ModelError, ToolOffer,
};
use lantern_core::protocol::markers::written_call;
use lantern_core::sandbox::Workspace;
use lantern_core::walk::walk_workspace;
use lantern_core::words::lower_words;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// The categories whose answer is a value some line of the project writes.
const VALUE_CATEGORIES: [&str; 3] = ["lookup", "search", "multi_step"];

/// Lines shown on each side of the line that holds the answer.
const LINES_AROUND: usize = 3;

/// Files larger than this are not looked through: a fixture's sources are far smaller.
const LARGEST_FILE: u64 = 512 * 1024;

/// How much of the file a given read shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// The lines around the line that says the answer: the read at its best.
    Lines,
    /// The whole file that holds that line: the right file, read as a model reads it.
    File,
}

impl Shown {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Shown::Lines => "lines",
            Shown::File => "file",
        }
    }

    /// Every kind, in order.
    pub const ALL: [Shown; 2] = [Shown::Lines, Shown::File];

    /// How a run's heading says what was given.
    pub fn describe(self) -> &'static str {
        match self {
            Shown::Lines => "first call given: the lines that hold the answer",
            Shown::File => "first call given: the file that holds the answer",
        }
    }

    /// The kind [`Shown::name`] names.
    pub fn from_name(name: &str) -> Option<Shown> {
        Shown::ALL.into_iter().find(|shown| shown.name() == name)
    }
}

/// The given read of each task of `tasks` that has one (see [`given_read`]), by task id: each
/// fixture is read once, however many tasks and phrasings ask about it.
pub fn given_reads(tasks: &[EvalTask], fixtures: &Path, shown: Shown) -> HashMap<String, MadeCall> {
    let mut texts: HashMap<&str, Vec<(String, String)>> = HashMap::new();
    let mut reads = HashMap::new();
    for task in tasks.iter().filter(|task| asks_a_value(task)) {
        let files = (texts.entry(task.fixture.as_str()))
            .or_insert_with(|| text_files(&fixtures.join(&task.fixture)));
        if let Some(read) = read_in(task, files, shown) {
            reads.insert(task.id.clone(), read);
        }
    }
    reads
}

/// The read a person would give for `task` in its fixture under `fixtures`: `read_file` of the
/// lines (or, as `shown` says, the whole file) around the line that says an expected answer
/// whole and is most about the task's phrasings: the words it shares with them, each weighed
/// by how rare it is among the project's lines, so that "what" and "the" count for little (on
/// a tie, the file least deep, then first by name, then the first such line). Only the files
/// the tools see are looked through. `None` when the task's answer is not a value or no line
/// says it.
pub fn given_read(task: &EvalTask, fixtures: &Path, shown: Shown) -> Option<MadeCall> {
    if !asks_a_value(task) {
        return None;
    }
    read_in(task, &text_files(&fixtures.join(&task.fixture)), shown)
}

/// Is `task`'s answer a value some line of the project writes (see [`VALUE_CATEGORIES`])?
fn asks_a_value(task: &EvalTask) -> bool {
    task.category
        .as_deref()
        .is_some_and(|category| VALUE_CATEGORIES.contains(&category))
}

/// [`given_read`] among `files`, the texts of the task's fixture.
fn read_in(task: &EvalTask, files: &[(String, String)], shown: Shown) -> Option<MadeCall> {
    let criteria = &task.success;
    let expected: Vec<&str> = criteria
        .answer_contains_any
        .iter()
        .chain(&criteria.answer_contains_all)
        .map(String::as_str)
        .collect();
    let question: HashSet<String> = task.phrasings().flat_map(lower_words).collect();
    let weight = rarity(files, &question);
    let mut best: Option<Place> = None;
    for (path, text) in files {
        let lines: Vec<&str> = text.lines().collect();
        for (index, line) in lines.iter().enumerate() {
            if !expected.iter().any(|e| mentions(line, e)) {
                continue;
            }
            let shared: HashSet<String> = lower_words(line).into_iter().collect();
            let place = Place {
                about: shared.iter().filter_map(|w| weight.get(w)).sum(),
                depth: path.matches('/').count(),
                path: path.clone(),
                index,
                lines: lines.len(),
            };
            if best.as_ref().is_none_or(|b| place.better_than(b)) {
                best = Some(place);
            }
        }
    }
    best.map(|place| place.read(shown))
}

/// How much each word of `question` says of a line that holds it: the log of how many lines
/// the project has over how many of them hold the word.
fn rarity(files: &[(String, String)], question: &HashSet<String>) -> HashMap<String, f64> {
    let mut holding: HashMap<&str, usize> = HashMap::new();
    let mut lines = 0usize;
    for (_, text) in files {
        for line in text.lines() {
            lines += 1;
            let words: HashSet<String> = lower_words(line).into_iter().collect();
            for word in question.iter().filter(|w| words.contains(*w)) {
                *holding.entry(word.as_str()).or_default() += 1;
            }
        }
    }
    holding
        .into_iter()
        .map(|(word, count)| (word.to_string(), (lines as f64 / count as f64).ln()))
        .collect()
}

/// A line that says an expected answer, and how it ranks.
struct Place {
    /// How much the line is about the question (see [`rarity`]).
    about: f64,
    depth: usize,
    path: String,
    index: usize,
    lines: usize,
}

impl Place {
    fn better_than(&self, other: &Place) -> bool {
        if self.about != other.about {
            return self.about > other.about;
        }
        (self.depth, &self.path, self.index) < (other.depth, &other.path, other.index)
    }

    fn read(self, shown: Shown) -> MadeCall {
        let args = match shown {
            Shown::File => serde_json::json!({"path": self.path}),
            Shown::Lines => serde_json::json!({
                "path": self.path,
                "start_line": self.index.saturating_sub(LINES_AROUND) + 1,
                "end_line": (self.index + LINES_AROUND + 1).min(self.lines),
            }),
        };
        MadeCall::new("read_file", args)
    }
}

/// The workspace-relative paths and texts of the text files under `root` the tools see (the
/// walk `list_files` and `search_code` make), in the walk's order (by path).
fn text_files(root: &Path) -> Vec<(String, String)> {
    let Ok(walked) = Workspace::open(root).and_then(|ws| walk_workspace(&ws)) else {
        return Vec::new();
    };
    (walked.files.into_iter())
        .filter(|file| file.utf8)
        .filter(|file| std::fs::metadata(&file.abs).is_ok_and(|m| m.len() <= LARGEST_FILE))
        .filter_map(|file| Some((file.rel, std::fs::read_to_string(&file.abs).ok()?)))
        .collect()
}

/// A model whose first reply in a conversation is a given call, written as the text protocol
/// writes it; every later reply is the wrapped model's.
pub struct FirstCallGiven {
    inner: Box<dyn Model>,
    call: Option<MadeCall>,
}

impl FirstCallGiven {
    pub fn new(inner: Box<dyn Model>, call: MadeCall) -> Self {
        FirstCallGiven {
            inner,
            call: Some(call),
        }
    }

    /// The wrapped model, for the next run.
    pub fn into_inner(self) -> Box<dyn Model> {
        self.inner
    }
}

impl Model for FirstCallGiven {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn configure(&mut self, options: &GenerationOptions) {
        self.inner.configure(options);
    }

    fn prepare(&mut self, offer: &dyn ToolOffer, cancel: &CancelToken) -> Result<(), ModelError> {
        self.inner.prepare(offer, cancel)
    }

    fn call_path(&self) -> CallPath {
        self.inner.call_path()
    }

    fn count_tokens(&mut self, text: &str) -> Option<usize> {
        self.inner.count_tokens(text)
    }

    fn context_size(&mut self) -> Option<usize> {
        self.inner.context_size()
    }

    fn generate(
        &mut self,
        request: &GenerateRequest<'_>,
        on_text: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Generation, ModelError> {
        let Some(call) = self.call.take() else {
            return self.inner.generate(request, on_text);
        };
        if self.inner.call_path() != CallPath::Text {
            return Err(ModelError(
                "a given first call needs a model that writes its calls as text".to_string(),
            ));
        }
        let text = written_call(&call);
        on_text(&text);
        Ok(Generation::text(text, FinishReason::Stop))
    }
}
