use super::read_file::MAX_FILE_BYTES;
use super::{PreviewKind, Resolved, ResultKind, Risk, Target, Tool, ToolContext};
use crate::error::ToolError;
use crate::sandbox::FileOpener;
use crate::walk::{add_notice, compile_glob, walk_checked, Found};
use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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

/// One matching line.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    pub path: String,
    pub line: u64,
    /// 1-based character column of the first match in the line.
    pub column: u64,
    pub text: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
    /// The name this line defines, where the code index reads the file's language.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub defines: Option<String>,
}

impl Tool for SearchCode {
    type Input = Input;
    const NAME: &'static str = "search_code";
    const RISK: Risk = Risk::Read;
    const PREVIEW: PreviewKind = PreviewKind::None;
    const RESULT: ResultKind = ResultKind::Matches;

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

        let started = Instant::now();
        let walked = walk_checked(&ctx.workspace, target.path()?, glob.as_ref())?;
        let opener = ctx.workspace.file_opener()?;
        let limits = Limits {
            max_results,
            context,
            deadline: started + SEARCH_TIME_BUDGET,
        };
        let outcome = search_files(ctx, &opener, &walked.files, &matcher, &limits);

        let mut hits: Vec<Hit> = outcome.hits;
        let total = hits.len();
        hits.truncate(max_results);
        let defined = ctx.code_index.definitions_on(
            &ctx.workspace,
            hits.iter().map(|h| (h.path.as_str(), h.line)),
        );
        for (hit, defined) in hits.iter_mut().zip(defined) {
            hit.defines = defined.map(|(name, _)| name);
        }
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
            "skipped_ignored_or_hidden": walked.skipped,
        });
        if total >= max_results && outcome.stopped_early || total > max_results {
            data["truncated"] = Value::Bool(true);
            data["notice"] = Value::String(format!(
                "Stopped at max_results={max_results}; there may be more matches. Narrow the query or glob, or raise max_results (up to {MAX_MAX_RESULTS})."
            ));
        }
        if outcome.unreadable > 0 {
            data["files_unreadable"] = json!(outcome.unreadable);
        }
        if outcome.too_large > 0 {
            data["files_skipped_large"] = json!(outcome.too_large);
            add_notice(
                &mut data,
                &format!(
                    "{} file(s) over {MAX_FILE_BYTES} bytes were not searched.",
                    outcome.too_large
                ),
            );
        }
        if outcome.timed_out {
            data["truncated"] = Value::Bool(true);
            add_notice(
                &mut data,
                &format!(
                    "The search stopped after {} s with {} of {} files searched. Narrow the query or glob.",
                    SEARCH_TIME_BUDGET.as_secs(),
                    outcome.files_searched,
                    walked.files.len()
                ),
            );
        }
        if walked.stopped.is_some() {
            data["walk_incomplete"] = Value::Bool(true);
        }
        for notice in walked.notices() {
            add_notice(&mut data, &notice);
        }
        Ok(data)
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
    files_searched: usize,
    binary: usize,
    unreadable: usize,
    too_large: usize,
    stopped_early: bool,
    /// The time budget ran out before every file was searched.
    timed_out: bool,
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

/// Progress of the in-order prefix of files that are done, for a deterministic early stop.
struct Prefix {
    outcomes: Vec<Option<FileOutcome>>,
    done: usize,
    hits: usize,
}

/// Searches `files` (sorted) in parallel. Results are the same as a sequential search that
/// stops after the file where `max_results` is reached: workers take files in order, and the
/// search stops once the finished prefix of files holds enough hits.
fn search_files(
    ctx: &ToolContext,
    opener: &FileOpener,
    files: &[Found],
    matcher: &RegexMatcher,
    limits: &Limits,
) -> SearchOutcome {
    let (max_results, context) = (limits.max_results, limits.context);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let timed_out = AtomicBool::new(false);
    let prefix = Mutex::new(Prefix {
        outcomes: (0..files.len()).map(|_| None).collect(),
        done: 0,
        hits: 0,
    });
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8)
        .min(files.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut searcher = SearcherBuilder::new()
                    .line_number(true)
                    .binary_detection(BinaryDetection::quit(0))
                    .before_context(context)
                    .after_context(context)
                    .max_matches(Some(max_results as u64))
                    .build();
                loop {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    if Instant::now() >= limits.deadline {
                        timed_out.store(true, Ordering::Relaxed);
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(file) = files.get(i) else { break };
                    let outcome = search_one(ctx, opener, &mut searcher, matcher, file, context);
                    let mut p = prefix.lock().expect("search state");
                    p.outcomes[i] = Some(outcome);
                    while p.done < files.len() {
                        let hits = match &p.outcomes[p.done] {
                            Some(FileOutcome::Hits(h)) => h.len(),
                            Some(_) => 0,
                            None => break,
                        };
                        p.done += 1;
                        p.hits += hits;
                        if p.hits >= max_results {
                            stop.store(true, Ordering::Relaxed);
                            break;
                        }
                    }
                }
            });
        }
    });
    let p = prefix.into_inner().expect("search state");
    let mut outcome = SearchOutcome {
        hits: Vec::new(),
        files_searched: p.done,
        binary: 0,
        unreadable: 0,
        too_large: 0,
        stopped_early: p.done < files.len(),
        timed_out: timed_out.into_inner(),
    };
    for file_outcome in p.outcomes.into_iter().take(p.done).flatten() {
        match file_outcome {
            FileOutcome::Hits(mut h) => outcome.hits.append(&mut h),
            FileOutcome::Binary => outcome.binary += 1,
            FileOutcome::Unreadable => outcome.unreadable += 1,
            FileOutcome::TooLarge => outcome.too_large += 1,
        }
    }
    outcome
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
    fn columns_count_characters() {
        let (text, column) = clip_line("héllo wörld\n".as_bytes(), "héllo ".len());
        assert_eq!(text, "héllo wörld");
        assert_eq!(column, 7);
    }
}
