//! What grounding costs. The same calls are decoded twice: under the grammar alone, and with
//! their arguments grounded in a workspace (the tool's name ranked whole, paths chosen among
//! the workspace's files, a search's query among the question's words, an edit's old text a
//! piece of its file, its new text steered by the question). Compared per token of the call,
//! in a project of a few files and in one of 100,000. Also what the list of paths grounding
//! draws on costs to build from a 100,000-file tree on disk, and its size.

use super::median;
use lantern_core::model::{
    CancelToken, FileTexts, Flow, GenerateRequest, GenerationOptions, KnownPaths, Message, Model,
    Role, ToolChoice,
};
use lantern_core::protocol::STOP_SEQUENCES;
use lantern_core::sandbox::Workspace;
use lantern_core::toolbox::Toolbox;
use lantern_core::walk::known_paths;
use lantern_llama::LocalModel;
use serde::Serialize;
use std::time::Instant;

/// Files of the large workspace, beyond the small project's.
pub const LARGE_FILES: usize = 100_000;

/// Calls with grounded arguments: a file, a folder, a search query, an edit.
const QUESTIONS: [&str; 4] = [
    "What version is in package.json?",
    "List the files in src/routes.",
    "Where is createServer defined?",
    "Change the port in config/server.json to 9090.",
];

/// The small project: its files and the text of those an edit may read.
const PROJECT: [(&str, &str); 10] = [
    ("README.md", "# shop\n\nA small web shop.\n"),
    (
        "package.json",
        "{\n  \"name\": \"shop\",\n  \"version\": \"2.4.1\",\n  \"main\": \"src/index.js\"\n}\n",
    ),
    (
        "config/server.json",
        "{\n  \"port\": 8080,\n  \"host\": \"localhost\"\n}\n",
    ),
    ("src/index.js", "const { createServer } = require('./server');\n"),
    (
        "src/server.js",
        "function createServer(options) {\n  return { options };\n}\nmodule.exports = { createServer };\n",
    ),
    ("src/cart.js", "function total(items) {\n  return 0;\n}\n"),
    ("src/routes/users.js", "module.exports = [];\n"),
    ("src/routes/orders.js", "module.exports = [];\n"),
    ("tests/server.test.js", "test('starts', () => {});\n"),
    ("tests/cart.test.js", "test('totals', () => {});\n"),
];

#[derive(Debug, Clone, Serialize)]
pub struct GroundingSpeed {
    pub questions: usize,
    /// Milliseconds per token of the calls under the grammar alone (median of the questions).
    pub grammar_ms_per_token: f64,
    pub grammar_tokens: usize,
    pub small: GroundedRun,
    pub large: GroundedRun,
    /// `None` when the tree could not be written (the reason is printed).
    pub walk: Option<WalkCost>,
}

/// The grounded calls in one workspace.
#[derive(Debug, Clone, Serialize)]
pub struct GroundedRun {
    pub files: usize,
    /// Milliseconds per token of the grounded calls, choosing included (median).
    pub grounded_ms_per_token: f64,
    /// Grounded over grammar alone: the cost of a token with grounding, relative.
    pub ratio: f64,
    pub tokens: usize,
    pub calls: Vec<String>,
}

/// Building the path list of a tree on disk, as a session does at its first step.
#[derive(Debug, Clone, Serialize)]
pub struct WalkCost {
    pub files: usize,
    pub folders: usize,
    pub walk_ms: f64,
    /// Bytes the list holds on the heap (strings and their headers).
    pub list_bytes: usize,
}

/// Runs the comparison with `toolbox`'s tools and prompt.
pub fn grounding_speed(model: &mut LocalModel, toolbox: &Toolbox) -> GroundingSpeed {
    let saved = model.settings.options;
    let texts = ProjectTexts;
    let small = KnownPaths::from_files(PROJECT.iter().map(|(p, _)| p.to_string()).collect());
    let large = KnownPaths::from_files(
        PROJECT
            .iter()
            .map(|(p, _)| p.to_string())
            .chain((0..LARGE_FILES).map(|i| format!("pkg{}/mod{}/file{i}.js", i % 100, i % 37)))
            .collect(),
    );

    // Untimed: the first calls touch every weight page.
    run_calls(model, toolbox, Some((&small, &texts)));
    model.settings.options = GenerationOptions {
        grounded_paths: false,
        ranked_tools: false,
        question_words: false,
        file_spans: false,
        replace_values: false,
        ..saved
    };
    let (grammar_ms, grammar_tokens, _) = run_calls(model, toolbox, None);
    model.settings.options = saved;
    let mut grounded = |paths: &KnownPaths| {
        let (ms, tokens, calls) = run_calls(model, toolbox, Some((paths, &texts)));
        GroundedRun {
            files: paths.files.len(),
            grounded_ms_per_token: ms,
            ratio: ms / grammar_ms.max(1e-9),
            tokens,
            calls,
        }
    };
    let small = grounded(&small);
    let large = grounded(&large);
    GroundingSpeed {
        questions: QUESTIONS.len(),
        grammar_ms_per_token: grammar_ms,
        grammar_tokens,
        small,
        large,
        walk: walk_cost(LARGE_FILES),
    }
}

/// Decodes each question's call; returns the median milliseconds per token, the tokens, and
/// the calls' text.
fn run_calls(
    model: &mut LocalModel,
    toolbox: &Toolbox,
    workspace: Option<(&KnownPaths, &ProjectTexts)>,
) -> (f64, usize, Vec<String>) {
    let mut per_token = Vec::new();
    let mut tokens = 0;
    let mut calls = Vec::new();
    for question in QUESTIONS {
        let messages = [
            Message::new(Role::System, toolbox.system_prompt()),
            Message::new(Role::User, question),
        ];
        let cancel = CancelToken::new();
        let mut request = GenerateRequest::new(&messages, 160, &cancel)
            .with_tools(toolbox.specs())
            .with_stop(STOP_SEQUENCES)
            .with_tool_choice(ToolChoice::Required);
        if let Some((paths, texts)) = workspace {
            request = request.with_workspace(paths, texts as &dyn FileTexts);
        }
        if let Ok(generation) = model.generate(&request, &mut |_| Flow::Continue) {
            let step = model.last_step();
            if step.tokens_generated > 0 {
                per_token.push(step.generation_ms / step.tokens_generated as f64);
                tokens += step.tokens_generated;
            }
            calls.push(generation.text);
        }
    }
    (median(&per_token), tokens, calls)
}

struct ProjectTexts;

impl FileTexts for ProjectTexts {
    fn text_of(&self, rel: &str) -> Option<String> {
        PROJECT
            .iter()
            .find(|(path, _)| *path == rel)
            .map(|(_, text)| text.to_string())
    }
}

/// Writes `files` empty files in 1,000 folders under the temporary directory, times the walk
/// a session makes of them, and removes them.
fn walk_cost(files: usize) -> Option<WalkCost> {
    let root = std::env::temp_dir().join(format!("lantern-bench-walk-{}", std::process::id()));
    let made = (0..files).try_for_each(|i| {
        let folder = root.join(format!("pkg{}/mod{}", i % 100, i / 100 % 10));
        if i < 1000 {
            std::fs::create_dir_all(&folder)?;
        }
        std::fs::write(folder.join(format!("file{i}.js")), b"")
    });
    let opened = made
        .map_err(|e| e.to_string())
        .and_then(|()| Workspace::open(&root).map_err(|e| e.message));
    let cost = match opened {
        Ok(workspace) => {
            let started = Instant::now();
            let list = known_paths(&workspace);
            let walk_ms = started.elapsed().as_secs_f64() * 1000.0;
            let bytes = |paths: &[String]| -> usize {
                paths
                    .iter()
                    .map(|p| p.capacity() + std::mem::size_of::<String>())
                    .sum()
            };
            Some(WalkCost {
                files: list.files.len(),
                folders: list.folders.len(),
                walk_ms,
                list_bytes: bytes(&list.files) + bytes(&list.folders),
            })
        }
        Err(why) => {
            eprintln!("bench-model: the {files}-file tree could not be made: {why}");
            None
        }
    };
    let _ = std::fs::remove_dir_all(&root);
    cost
}
