use super::read_file::MAX_FILE_BYTES;
use super::{ExampleFollowUp, PreviewKind, Resolved, ResultKind, Risk, Target, Tool, ToolContext};
use crate::code_index::LineDefines;
use crate::error::ToolError;
use crate::sandbox::FileOpener;
use crate::seen_result::Hit;
use crate::walk::{
    add_notice, compile_glob, walk_checked_into, FileSink, Found, WalkLimits, WalkStop, WalkTally,
    MAX_WALK_ENTRIES,
};
use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const DEFAULT_MAX_RESULTS: usize = 50;
const MAX_MAX_RESULTS: usize = 500;
const MAX_CONTEXT_LINES: usize = 5;
/// A matching line longer than this is cut around the match, so a minified file cannot flood
/// the context.
const MAX_LINE_CHARS: usize = 240;
/// The longest a search may take, the walk included; files not reached by then are not
/// searched and the result says so.
const SEARCH_TIME_BUDGET: Duration = Duration::from_secs(20);

/// Search the text of the workspace's files for a literal string or a regular expression, like
/// ripgrep. Returns matching lines with file path, line and column, sorted by path and line.
/// Files ignored by .gitignore/.ignore, the .git folder and binary files are skipped; dotfiles
/// are searched. Use it to
/// find where a function, class, constant or variable is defined or used, or which file
/// contains a name.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The text to find, such as a function's name (or a regular expression when options.regex
    /// is true).
    #[schemars(length(max = 4096), extend("x-words" = "question"))]
    pub query: String,
    /// How to search.
    pub options: Option<SearchOptions>,
}

/// Search options; all optional.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchOptions {
    /// Treat the query as a regular expression (Rust regex syntax). Default: false (literal).
    pub regex: Option<bool>,
    /// Match upper/lower case exactly. Default: case-insensitive unless the query contains an
    /// uppercase letter.
    pub case_sensitive: Option<bool>,
    /// Only search files whose path matches this glob, e.g. "*.rs" or "src/**/*.ts".
    #[schemars(length(max = 1024))]
    pub glob: Option<String>,
    /// At most this many matching lines are returned (default 50, at most 500).
    #[schemars(range(min = 1))]
    pub max_results: Option<u64>,
    /// Lines of context to show before and after each match (default 0, at most 5).
    pub context_lines: Option<u64>,
}

pub struct SearchCode;

impl Tool for SearchCode {
    type Input = Input;
    const NAME: &'static str = "search_code";
    const RISK: Risk = Risk::Read;
    const PREVIEW: PreviewKind = PreviewKind::None;
    const RESULT: ResultKind = ResultKind::Matches;
    const FOLLOW_UPS: &'static [ExampleFollowUp] = &[
        ExampleFollowUp {
            question: "Where is the main function defined?",
            args: r#"{"query": "fn main"}"#,
            reasoning: "Search for the definition",
            result: r##"{"success":true,"data":{"matches":[{"path":"src/main.rs","line":3,"column":1,"text":"fn main() {"}],"count":1},"error":null}"##,
            needs_call: false,
        },
        ExampleFollowUp {
            question: "Which files mention TODO?",
            args: r#"{"query": "TODO"}"#,
            reasoning: "Search for the marker",
            result: r##"{"success":true,"data":{"matches":[{"path":"src/db.rs","line":8,"column":8,"text":"    // TODO: pool connections"}],"count":1},"error":null}"##,
            needs_call: false,
        },
        ExampleFollowUp {
            question: "Open the file that defines parse_config.",
            args: r#"{"query": "fn parse_config"}"#,
            reasoning: "Find the file",
            result: r##"{"success":true,"data":{"matches":[{"path":"src/config.rs","line":12,"column":1,"text":"pub fn parse_config(text: &str) -> Config {"}],"count":1},"error":null}"##,
            needs_call: true,
        },
        ExampleFollowUp {
            question: "Show me the code of the login handler.",
            args: r#"{"query": "login"}"#,
            reasoning: "Find the handler",
            result: r##"{"success":true,"data":{"matches":[{"path":"src/auth.rs","line":10,"column":8,"text":"pub fn login(user: &User) -> Session {"}],"count":1},"error":null}"##,
            needs_call: true,
        },
    ];

    fn example() -> Value {
        json!({"query": "fn main", "options": {"glob": "*.rs"}})
    }

    /// The whole workspace: the glob only narrows which of its files are read.
    fn target(_input: &Input) -> Target {
        Target::Paths(vec![".".to_string()])
    }

    fn run(input: Input, target: &Resolved, ctx: &ToolContext) -> Result<Value, ToolError> {
        if input.query.is_empty() {
            return Err(
                ToolError::invalid("query is empty").with_hint("Give the text to search for.")
            );
        }
        let options = input.options.unwrap_or_default();
        let matcher = build_matcher(&input.query, &options)?;
        let glob = options.glob.as_deref().map(compile_glob).transpose()?;
        let max_results = options
            .max_results
            .map_or(DEFAULT_MAX_RESULTS, |n| (n as usize).min(MAX_MAX_RESULTS));
        let context = options
            .context_lines
            .map_or(0, |n| (n as usize).min(MAX_CONTEXT_LINES));

        let limits = Limits {
            max_results,
            context,
            deadline: Instant::now() + SEARCH_TIME_BUDGET,
        };
        let (mut outcome, tally) = search(ctx, target, &matcher, glob.as_ref(), &limits)?;
        let mut hits: Vec<Hit> = std::mem::take(&mut outcome.hits);
        let total = hits.len();
        hits.truncate(max_results);
        mark_definitions(ctx, &mut hits);
        let files_with_matches = {
            let mut paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
            paths.dedup();
            paths.len()
        };
        let mut data = json!({
            "query": input.query,
            "matches": hits,
            "count": hits.len(),
            "files_with_matches": files_with_matches,
            "files_searched": outcome.files_searched,
            "files_skipped_binary": outcome.binary,
        });
        if total >= max_results && outcome.stopped_early || total > max_results {
            data["truncated"] = Value::Bool(true);
            data["notice"] = Value::String(format!(
                "Stopped at max_results={max_results}; there may be more matches. Narrow the query or glob, or raise max_results (up to {MAX_MAX_RESULTS})."
            ));
        }
        add_what_was_not_searched(&mut data, &outcome, &tally);
        Ok(data)
    }
}

/// Walks the target and searches each file as the walk finds it (see [`Searched`]), within
/// the search's own time.
fn search(
    ctx: &ToolContext,
    target: &Resolved,
    matcher: &RegexMatcher,
    glob: Option<&globset::GlobMatcher>,
    limits: &Limits,
) -> Result<(SearchOutcome, WalkTally), ToolError> {
    let opener = ctx.workspace.file_opener()?;
    let searched = Searched::default();
    let make_sink = || -> Box<dyn FileSink + '_> {
        Box::new(SearchSink {
            ctx,
            opener: &opener,
            matcher,
            limits,
            searcher: searcher_for(limits),
            searched: &searched,
        })
    };
    let walk_limits = WalkLimits {
        max_entries: MAX_WALK_ENTRIES,
        deadline: limits.deadline,
    };
    let tally = walk_checked_into(
        &ctx.workspace,
        target.path()?,
        glob,
        walk_limits,
        false,
        &make_sink,
    )?;
    Ok((searched.finish(), tally))
}

/// Marks the hits whose line defines a name, as the code index reads their files.
fn mark_definitions(ctx: &ToolContext, hits: &mut [Hit]) {
    let defined = ctx.code_index.definitions_on(
        &ctx.workspace,
        hits.iter().map(|h| (h.path.as_str(), h.line)),
    );
    for (hit, defined) in hits.iter_mut().zip(defined) {
        match defined {
            LineDefines::Name(name, _) => hit.defines = Some(name),
            LineDefines::Nothing => {}
            LineDefines::Unknown => {
                hit.unindexed = lantern_index::Language::of_path(&hit.path).is_some();
            }
        }
    }
}

/// Says in `data` which files the search left out and why: unreadable, too large, past its
/// time or the walk's limit, names that are not UTF-8.
fn add_what_was_not_searched(data: &mut Value, outcome: &SearchOutcome, tally: &WalkTally) {
    if outcome.unreadable > 0 {
        data["files_unreadable"] = json!(outcome.unreadable);
    }
    if outcome.too_large > 0 {
        data["files_skipped_large"] = json!(outcome.too_large);
        add_notice(
            data,
            &format!(
                "{} file(s) over {MAX_FILE_BYTES} bytes were not searched.",
                outcome.too_large
            ),
        );
    }
    match tally.stopped {
        Some(WalkStop::Time) => {
            data["truncated"] = Value::Bool(true);
            add_notice(
                data,
                &format!(
                    "The search stopped after {} s with {} files searched. Narrow the query or glob.",
                    SEARCH_TIME_BUDGET.as_secs(),
                    outcome.files_searched,
                ),
            );
        }
        Some(WalkStop::Entries) => {
            data["walk_incomplete"] = Value::Bool(true);
            add_notice(data, &tally.stop_notice().unwrap_or_default());
        }
        None => {}
    }
    if let Some(notice) = tally.names_notice() {
        add_notice(data, &notice);
    }
}

fn build_matcher(query: &str, options: &SearchOptions) -> Result<RegexMatcher, ToolError> {
    let regex = options.regex.unwrap_or(false);
    let mut builder = RegexMatcherBuilder::new();
    builder.line_terminator(Some(b'\n'));
    match options.case_sensitive {
        Some(exact) => builder.case_insensitive(!exact),
        None => builder.case_smart(true),
    };
    if regex {
        builder.build(query).map_err(|e| {
            ToolError::invalid(format!(
                "Invalid regular expression {}: {}",
                super::bounded(&format!("{query:?}"), 200),
                super::bounded(&e.to_string(), 400)
            ))
            .with_hint(
                "Fix the pattern, or set options.regex to false to search for the literal text.",
            )
        })
    } else {
        // Every character literally, `(`, `[`, `.` and `\\` included.
        builder.fixed_strings(true).build(query).map_err(|e| {
            ToolError::invalid(format!(
                "Cannot search for {}: {}",
                super::bounded(&format!("{query:?}"), 200),
                super::bounded(&e.to_string(), 400)
            ))
        })
    }
}

struct SearchOutcome {
    /// Hits of the files searched in path order, up to and including the file where the limit
    /// was reached.
    hits: Vec<Hit>,
    /// Files searched, up to and including that file.
    files_searched: usize,
    binary: usize,
    unreadable: usize,
    too_large: usize,
    /// The limit was reached: files after that file may hold more.
    stopped_early: bool,
}

enum FileOutcome {
    Hits(Vec<Hit>),
    Binary,
    Unreadable,
    TooLarge,
}

/// How much one search may find and take.
struct Limits {
    max_results: usize,
    context: usize,
    deadline: Instant,
}

fn searcher_for(limits: &Limits) -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(0))
        .before_context(limits.context)
        .after_context(limits.context)
        .max_matches(Some(limits.max_results as u64))
        .build()
}

/// What the walker threads have searched so far. The result is the same as a search of every
/// file in path order that stops after the file where `max_results` is reached, whatever
/// order the walk finds the files in: once the files searched hold `max_results` hits, the
/// path of the file that completes them in path order is the cut-off, and a file or folder
/// past it is not searched (the cut-off only moves back as files before it are searched).
#[derive(Default)]
struct Searched {
    state: Mutex<SearchState>,
}

#[derive(Default)]
struct SearchState {
    /// The files with hits up to the cut-off, by path.
    hits: BTreeMap<String, Vec<Hit>>,
    /// Every other file searched, by how it ended.
    others: Vec<(String, FileOutcome)>,
    cutoff: Option<String>,
}

impl Searched {
    /// Is the file or folder at `rel` past the cut-off? (`rel` of a folder ends in '/'.)
    fn is_past(&self, rel: &str) -> bool {
        let state = self.state.lock().expect("search state");
        state.cutoff.as_deref().is_some_and(|cutoff| rel > cutoff)
    }

    fn add(&self, rel: String, outcome: FileOutcome, max_results: usize) {
        let mut state = self.state.lock().expect("search state");
        if state
            .cutoff
            .as_deref()
            .is_some_and(|cutoff| rel.as_str() > cutoff)
        {
            return;
        }
        match outcome {
            FileOutcome::Hits(hits) if !hits.is_empty() => {
                state.hits.insert(rel, hits);
                state.cut(max_results);
            }
            other => state.others.push((rel, other)),
        }
    }

    fn finish(self) -> SearchOutcome {
        let state = self.state.into_inner().expect("search state");
        let within = |rel: &str| state.cutoff.as_deref().is_none_or(|cutoff| rel <= cutoff);
        let mut outcome = SearchOutcome {
            hits: Vec::new(),
            files_searched: state.hits.len(),
            binary: 0,
            unreadable: 0,
            too_large: 0,
            stopped_early: state.cutoff.is_some(),
        };
        for (rel, other) in &state.others {
            if !within(rel) {
                continue;
            }
            outcome.files_searched += 1;
            match other {
                FileOutcome::Hits(_) => {}
                FileOutcome::Binary => outcome.binary += 1,
                FileOutcome::Unreadable => outcome.unreadable += 1,
                FileOutcome::TooLarge => outcome.too_large += 1,
            }
        }
        outcome.hits = state.hits.into_values().flatten().collect();
        outcome
    }
}

impl SearchState {
    /// Moves the cut-off to the file that completes `max_results` hits in path order, and
    /// drops the files past it.
    fn cut(&mut self, max_results: usize) {
        let mut total = 0;
        let mut cutoff = None;
        for (rel, hits) in &self.hits {
            total += hits.len();
            if total >= max_results {
                cutoff = Some(rel.clone());
                break;
            }
        }
        if let Some(cutoff) = cutoff {
            let mut past = self.hits.split_off(&cutoff);
            // split_off keeps the cut-off file itself in `past`.
            if let Some(hits) = past.remove(&cutoff) {
                self.hits.insert(cutoff.clone(), hits);
            }
            self.cutoff = Some(cutoff);
        }
    }
}

/// One walker thread's part of a search: it searches each file the walk hands it.
struct SearchSink<'a> {
    ctx: &'a ToolContext,
    opener: &'a FileOpener,
    matcher: &'a RegexMatcher,
    limits: &'a Limits,
    searcher: Searcher,
    searched: &'a Searched,
}

impl FileSink for SearchSink<'_> {
    fn file(&mut self, found: Found) {
        if self.searched.is_past(&found.rel) || Instant::now() >= self.limits.deadline {
            return;
        }
        let outcome = search_one(
            self.ctx,
            self.opener,
            &mut self.searcher,
            self.matcher,
            &found,
            self.limits.context,
        );
        self.searched
            .add(found.rel, outcome, self.limits.max_results);
    }

    fn wants_folder(&mut self, rel: &str) -> bool {
        !self.searched.is_past(&format!("{rel}/"))
    }
}

fn search_one(
    ctx: &ToolContext,
    opener: &FileOpener,
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    file: &Found,
    context: usize,
) -> FileOutcome {
    // Opened through the sandbox: a folder swapped for a symlink during the walk is refused.
    let Ok((handle, size)) = ctx
        .workspace
        .open_read_beneath(opener, &file.abs, &file.rel)
    else {
        return FileOutcome::Unreadable;
    };
    // As read_file: a file too large to read is too large to search.
    if size > MAX_FILE_BYTES {
        return FileOutcome::TooLarge;
    }
    let mut sink = Collect {
        matcher,
        lines: BTreeMap::new(),
        binary: false,
    };
    if searcher.search_file(matcher, &handle, &mut sink).is_err() {
        return FileOutcome::Unreadable;
    }
    if sink.binary {
        return FileOutcome::Binary;
    }
    FileOutcome::Hits(sink.into_hits(&file.rel, context))
}

/// A line the searcher reported: a match (with its column) or context.
struct Line {
    text: String,
    column: Option<u64>,
}

struct Collect<'m> {
    matcher: &'m RegexMatcher,
    lines: BTreeMap<u64, Line>,
    binary: bool,
}

impl Collect<'_> {
    fn into_hits(self, path: &str, context: usize) -> Vec<Hit> {
        let context = context as u64;
        let around = |from: u64, to: u64| -> Vec<String> {
            // Empty for a match on line 1 (nothing before it).
            if from > to {
                return Vec::new();
            }
            self.lines
                .range(from..=to)
                .map(|(_, l)| l.text.clone())
                .collect()
        };
        self.lines
            .iter()
            .filter_map(|(&n, line)| {
                let column = line.column?;
                let (before, after) = if context == 0 {
                    (Vec::new(), Vec::new())
                } else {
                    (
                        around(n.saturating_sub(context).max(1), n - 1),
                        around(n + 1, n + context),
                    )
                };
                Some(Hit {
                    path: path.to_string(),
                    line: n,
                    column,
                    text: line.text.clone(),
                    before,
                    after,
                    defines: None,
                    unindexed: false,
                })
            })
            .collect()
    }
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        let Some(n) = mat.line_number() else {
            return Ok(true);
        };
        let bytes = mat.bytes();
        let found = self.matcher.find(bytes).ok().flatten();
        let start = found.map_or(0, |m| m.start());
        let (text, column) = clip_line(bytes, start);
        self.lines.insert(
            n,
            Line {
                text,
                column: Some(column),
            },
        );
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        if let Some(n) = ctx.line_number() {
            let (text, _) = clip_line(ctx.bytes(), 0);
            self.lines.entry(n).or_insert(Line { text, column: None });
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// The line as text without its terminator, cut to [`MAX_LINE_CHARS`] around the byte offset
/// `match_start`; and the 1-based character column of the match in the full line.
fn clip_line(bytes: &[u8], match_start: usize) -> (String, u64) {
    let line = String::from_utf8_lossy(bytes);
    let line = line.trim_end_matches(['\n', '\r']);
    let start = match_start.min(line.len());
    let column = line.char_indices().take_while(|(i, _)| *i < start).count() as u64 + 1;
    let total = line.chars().count();
    if total <= MAX_LINE_CHARS {
        return (line.to_string(), column);
    }
    let from = (column as usize - 1).saturating_sub(MAX_LINE_CHARS / 3);
    let from = from.min(total - MAX_LINE_CHARS);
    let window: String = line.chars().skip(from).take(MAX_LINE_CHARS).collect();
    let head = if from > 0 { "…" } else { "" };
    let tail = if from + MAX_LINE_CHARS < total {
        "…"
    } else {
        ""
    };
    (format!("{head}{window}{tail}"), column)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Workspace;

    fn workspace(files: &[(String, String)]) -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        }
        let ctx = ToolContext::new(Workspace::open(dir.path()).unwrap(), None);
        (dir, ctx)
    }

    fn search(ctx: &ToolContext, args: Value) -> Value {
        let registry = crate::tools::ToolRegistry::standard();
        let call = registry.prepare(SearchCode::NAME, args, ctx).unwrap();
        call.run(ctx).unwrap()
    }

    fn found(data: &Value) -> Vec<(String, u64)> {
        data["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["path"].as_str().unwrap().to_string(),
                    m["line"].as_u64().unwrap(),
                )
            })
            .collect()
    }

    /// 200 files in 20 folders; file i holds "needle" on lines i % 3 + 1 and 5.
    fn many_files() -> Vec<(String, String)> {
        (0..200)
            .map(|i| {
                let mut lines = ["filler"; 6];
                lines[i % 3] = "a needle here";
                lines[4] = "needle again";
                (format!("d{:02}/f{i:03}.txt", i % 20), lines.join("\n"))
            })
            .collect()
    }

    #[test]
    fn a_literal_query_matches_every_character_literally() {
        let (_dir, ctx) = workspace(&[
            ("a.rs".into(), "#[inline(never)]\n#i\nfn x() {}\n".into()),
            ("b.md".into(), "TODObench\n- TODO(bench) later\n".into()),
        ]);
        let data = search(&ctx, json!({"query": "#[inline(never)]"}));
        assert_eq!(found(&data), [("a.rs".to_string(), 1)]);
        let data = search(&ctx, json!({"query": "TODO(bench)"}));
        assert_eq!(found(&data), [("b.md".to_string(), 2)]);
        let data = search(&ctx, json!({"query": "x() {", "options": {"regex": false}}));
        assert_eq!(found(&data), [("a.rs".to_string(), 3)]);
    }

    #[test]
    fn a_parallel_search_gives_the_same_sorted_answer_every_time() {
        let (_dir, ctx) = workspace(&many_files());
        let args = json!({"query": "needle", "options": {"max_results": 500}});
        let first = found(&search(&ctx, args.clone()));
        assert_eq!(first.len(), 400);
        let mut sorted = first.clone();
        sorted.sort();
        assert_eq!(first, sorted);
        for _ in 0..5 {
            assert_eq!(found(&search(&ctx, args.clone())), first);
        }
    }

    #[test]
    fn the_search_stops_at_max_results_with_the_first_matches_in_order() {
        let (_dir, ctx) = workspace(&many_files());
        let all = found(&search(
            &ctx,
            json!({"query": "needle", "options": {"max_results": 500}}),
        ));
        for _ in 0..5 {
            let data = search(
                &ctx,
                json!({"query": "needle", "options": {"max_results": 7}}),
            );
            assert_eq!(found(&data), all[..7]);
            assert_eq!(data["truncated"], true);
            // Each file holds two matches: the fourth file completes the seventh match, and
            // the files after it are not all searched.
            assert!(data["files_searched"].as_u64().unwrap() < 200, "{data}");
        }
    }

    #[test]
    fn files_found_in_any_order_give_the_first_matches_in_path_order() {
        let hits = |path: &str, n: u64| -> FileOutcome {
            FileOutcome::Hits(
                (1..=n)
                    .map(|line| Hit {
                        path: path.into(),
                        line,
                        column: 1,
                        text: String::new(),
                        before: Vec::new(),
                        after: Vec::new(),
                        defines: None,
                        unindexed: false,
                    })
                    .collect(),
            )
        };
        let searched = Searched::default();
        searched.add("d/x".into(), hits("d/x", 3), 3);
        assert!(
            searched.is_past("e/"),
            "past the file that completes 3 hits"
        );
        searched.add("b".into(), hits("b", 2), 3);
        searched.add("a".into(), FileOutcome::Binary, 3);
        searched.add("c".into(), hits("c", 1), 3);
        assert!(searched.is_past("d/"), "the cut-off moved back to c");
        searched.add("d/y".into(), hits("d/y", 1), 3);
        let outcome = searched.finish();
        let found: Vec<(&str, u64)> = outcome
            .hits
            .iter()
            .map(|h| (h.path.as_str(), h.line))
            .collect();
        assert_eq!(found, [("b", 1), ("b", 2), ("c", 1)]);
        assert_eq!((outcome.files_searched, outcome.binary), (3, 1));
        assert!(outcome.stopped_early);
    }

    #[test]
    fn long_lines_are_clipped_around_the_match() {
        let mut line = "a".repeat(10_000);
        line.push_str("NEEDLE");
        line.push_str(&"b".repeat(10_000));
        let (text, column) = clip_line(line.as_bytes(), 10_000);
        assert_eq!(column, 10_001);
        assert!(text.contains("NEEDLE"));
        assert!(text.chars().count() <= MAX_LINE_CHARS + 2);
        assert!(text.starts_with('…') && text.ends_with('…'));
    }

    #[test]
    fn context_around_a_match_on_the_first_line_is_only_after_it() {
        let matcher = RegexMatcherBuilder::new().build("needle").unwrap();
        let mut sink = Collect {
            matcher: &matcher,
            lines: BTreeMap::new(),
            binary: false,
        };
        sink.lines.insert(
            1,
            Line {
                text: "needle".into(),
                column: Some(1),
            },
        );
        sink.lines.insert(
            2,
            Line {
                text: "after".into(),
                column: None,
            },
        );
        let hits = sink.into_hits("a.txt", 3);
        assert_eq!(hits.len(), 1);
        assert!(hits[0].before.is_empty());
        assert_eq!(hits[0].after, ["after"]);
    }

    #[test]
    fn hits_say_which_name_their_line_defines_or_that_the_index_did_not_read_their_file() {
        // Larger than what a search parses on demand.
        let big = format!("def total():\n{}", "    pass\n".repeat(40_000));
        let files = [
            ("big.py", big.as_str()),
            ("notes.md", "def total():\n"),
            ("shop.py", "def total():\n    return total_of()\n"),
        ]
        .map(|(path, text)| (path.to_string(), text.to_string()));
        let (_dir, ctx) = workspace(&files);
        let data = search(&ctx, json!({"query": "total"}));
        let marks: Vec<(&str, &Value, &Value)> = data["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["path"].as_str().unwrap(), &m["defines"], &m["unindexed"]))
            .collect();
        let (none, yes) = (&Value::Null, &Value::Bool(true));
        let total = json!("total");
        assert_eq!(
            marks,
            [
                ("big.py", none, yes),
                ("notes.md", none, none),
                ("shop.py", &total, none),
                ("shop.py", none, none),
            ]
        );
    }

    #[test]
    fn columns_count_characters() {
        let (text, column) = clip_line("héllo wörld\n".as_bytes(), "héllo ".len());
        assert_eq!(text, "héllo wörld");
        assert_eq!(column, 7);
    }
}
