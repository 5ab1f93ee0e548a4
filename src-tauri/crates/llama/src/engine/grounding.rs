//! Grounded arguments: when a constrained call opens the string of a path argument, the value
//! is chosen among the workspace's real files or folders instead of being written token by
//! token; when it opens the tool's name, the name is chosen the same way among the request's
//! tools.
//!
//! A tool declares which of its arguments are paths in its schema (`"x-path": "file"`,
//! `"folder"` or `"new_or_existing_file"`: an existing file or a new one the question names),
//! so every tool gets this without code of its own. Whole candidates are ranked —
//! committing token by token picks the first token of a plausible name and then has to finish
//! whatever it started — by the model's own log-probability of the whole path (and of the
//! string ending there), plus a bonus for each word of the question the path contains. Only
//! the candidates the words and the depth rank highest are scored by the model, so a large
//! workspace costs no more than a small one. A tool's name gets a bonus for the question's
//! words its description shares, weighted by how few of the other tools share them: a tiny
//! model's first token of a name is often a guess ("list" for a where-defined question), while
//! the description says what each tool is for.

use super::choosing_tools::{tool_candidates, WantedTools};
use super::sampling::grammar_allows;
use super::*;
use lantern_core::mentions::new_files_named;
use lantern_core::model::KnownPaths;
use lantern_core::pointed::Pointers;
use lantern_core::question::Question;
use lantern_core::tools::Risk;
use lantern_core::words::lower_words;

/// The most candidates the model scores for one argument.
const MAX_SCORED: usize = 48;

/// Log-probability (nats) one question word found in a path is worth.
const WORD_BONUS: f64 = 2.0;

/// A path argument's value as written: its text (with the closing quote), its tokens, and the
/// logits after them.
pub(super) struct Grounded {
    pub text: String,
    pub tokens: Vec<LlamaToken>,
    pub logits: Vec<f32>,
}

/// What a grounded argument is chosen among.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Grounding {
    /// Existing paths of this kind (`"x-path": "file"` or `"folder"`).
    Path(PathKind),
    /// The words of the user's question (`"x-words": "question"`): a search for what the
    /// question names, not for a file name or a phrase the model makes up.
    QuestionWord,
    /// A name the workspace's code defines (`"x-symbol": "definition"`): see
    /// [`symbol_candidates`].
    Symbol,
    /// A glob the user's message names (`"x-glob": "question"`): a listing narrowed to the
    /// files the question asks about (`test_*.py`).
    QuestionGlob,
    /// A piece of the text of the file another argument (named here) of the call names
    /// (`"x-span-of": KEY`): see `spans`.
    SpanOf(String),
    /// The text that replaces another argument's (`"x-replaces": KEY`): see `replacing`.
    Replaces(String),
    /// New text drawing on the question's values (`"x-from": "question"`): see `replacing`.
    FromQuestion,
    /// A calculation the question spells out (`"x-expression": "question"`): see
    /// [`lantern_core::arithmetic::expressions_in`].
    Expression,
}

/// Which paths an argument accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PathKind {
    File,
    Folder,
    /// A file to write: an existing one, or a new one the question names in a folder that
    /// exists (a new name the question does not give cannot be chosen from anything).
    NewOrExistingFile,
}

/// Log-probability (nats) a path the question spells out is worth, beyond its words (a new
/// file's, or with the lever `named_files` an existing one's): the user wrote it, where the
/// model's own favourite is a file it has seen in its prompt's examples.
const NAMED_BONUS: f64 = 8.0;

/// How the string argument the call text (after the opening tag) has just opened is grounded,
/// if it is: the text ends with `"KEY": "` where KEY is an argument of the named tool whose
/// schema declares `x-path` or `x-words`.
pub(super) fn open_grounded_argument(
    call_text: &str,
    name_key: &str,
    tools: &[ToolSpec],
) -> Option<Grounding> {
    let before_quote = call_text.strip_suffix('"')?.trim_end();
    let before_colon = before_quote.strip_suffix(':')?.trim_end();
    let key_end = before_colon.strip_suffix('"')?;
    let key_start = key_end.rfind('"')? + 1;
    let key = &key_end[key_start..];
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let tool = called_tool(call_text, name_key)?;
    let spec = tools.iter().find(|s| s.name == tool)?;
    let field = &spec.input_schema["properties"][key];
    if field["x-words"] == "question" {
        return Some(Grounding::QuestionWord);
    }
    if field["x-glob"] == "question" {
        return Some(Grounding::QuestionGlob);
    }
    if field.get("x-symbol").is_some() {
        return Some(Grounding::Symbol);
    }
    if field["x-expression"] == "question" {
        return Some(Grounding::Expression);
    }
    if let Some(key) = field["x-span-of"].as_str() {
        return Some(Grounding::SpanOf(key.to_string()));
    }
    if let Some(key) = field["x-replaces"].as_str() {
        return Some(Grounding::Replaces(key.to_string()));
    }
    if field["x-from"] == "question" {
        return Some(Grounding::FromQuestion);
    }
    match field["x-path"].as_str()? {
        "file" => Some(Grounding::Path(PathKind::File)),
        "folder" => Some(Grounding::Path(PathKind::Folder)),
        "new_or_existing_file" => Some(Grounding::Path(PathKind::NewOrExistingFile)),
        _ => None,
    }
}

/// Is the call text (after the opening tag) where a grounded string opens next (`"tool":`,
/// `"path": `)? Many vocabularies hold the quote merged with what follows it (`"}`, `"src`),
/// and a value whose opening quote never stands alone would never be grounded; so the engine
/// writes the quote alone first.
pub(super) fn grounded_value_opens_next(
    call_text: &str,
    name_key: &str,
    tools: &[ToolSpec],
) -> bool {
    if !call_text.trim_end().ends_with(':') {
        return false;
    }
    let quoted = format!("{call_text}\"");
    opens_tool_name(&quoted, name_key) || open_grounded_argument(&quoted, name_key, tools).is_some()
}

/// Has the call text (after the opening tag) just opened the string of the member that names
/// the tool (`"tool"`, or `name_key` of a native call)?
pub(super) fn opens_tool_name(call_text: &str, name_key: &str) -> bool {
    let Some(before_quote) = call_text.strip_suffix('"') else {
        return false;
    };
    let Some(before_colon) = before_quote.trim_end().strip_suffix(':') else {
        return false;
    };
    before_colon
        .trim_end()
        .ends_with(&format!("\"{name_key}\""))
        && call_text.matches('"').count() == 3
}

/// The most question words the model scores for one argument (a pasted log is not a question).
const MAX_QUESTION_WORDS: usize = 16;

/// The content of the call's string argument `key` as written (escapes as they are), when it
/// is complete.
pub(super) fn raw_argument<'a>(call_text: &'a str, key: &str) -> Option<&'a str> {
    let args = &call_text[call_text.find("\"args\"")?..];
    let after_key = &args[args.find(&format!("\"{key}\""))? + key.len() + 2..];
    let value = after_key.trim_start().strip_prefix(':')?.trim_start();
    let value = value.strip_prefix('"')?;
    let mut escaped = false;
    for (i, c) in value.char_indices() {
        match (escaped, c) {
            (true, _) => escaped = false,
            (false, '\\') => escaped = true,
            (false, '"') => return Some(&value[..i]),
            _ => {}
        }
    }
    None
}

/// The value of the call's string argument `key`, when it is written and holds no escape.
pub(super) fn argument_value<'a>(call_text: &'a str, key: &str) -> Option<&'a str> {
    raw_argument(call_text, key).filter(|value| !value.contains('\\'))
}

/// Does the call being written name a tool that writes files?
fn writes(tools: &[ToolSpec], call_text: &str, name_key: &str) -> bool {
    called_tool(call_text, name_key)
        .and_then(|name| tools.iter().find(|t| t.name == name))
        .is_some_and(|tool| tool.risk == Risk::Write)
}

/// The workspace's files the conversation points at (see [`lantern_core::pointed`]), in the
/// order of `known`: what a write is offered, so that a file nobody meant is not its pick.
fn pointed_files(known: &KnownPaths, messages: &[Message]) -> Vec<String> {
    let pointers = Pointers::of(messages);
    known
        .files
        .iter()
        .filter(|path| pointers.points_at(path, true))
        .cloned()
        .collect()
}

/// The tool a call being written names: the value of its `"tool"` member (`name_key`).
fn called_tool<'a>(call_text: &'a str, name_key: &str) -> Option<&'a str> {
    let key = format!("\"{name_key}\"");
    let after_key = &call_text[call_text.find(&key)? + key.len()..];
    let value = after_key.trim_start().strip_prefix(':')?.trim_start();
    let value = value.strip_prefix('"')?;
    Some(&value[..value.find('"')?])
}

/// How many distinct words of the question a path contains (as parts of its names).
pub(super) fn question_words_in(path: &str, question: &[String]) -> usize {
    let parts = lower_words(path);
    let mut hits: Vec<&String> = question
        .iter()
        .filter(|w| {
            parts
                .iter()
                .any(|p| p == *w || (w.len() >= 5 && p.contains(w.as_str())))
        })
        .collect();
    hits.dedup();
    hits.len()
}

/// The candidates worth scoring: paths a JSON string can hold as they are, ranked by question
/// words, then by depth (what sits near the root is what a question most often means), then
/// by length.
pub(super) fn shortlist<'a>(paths: &'a [String], question: &Question) -> Vec<(&'a str, usize)> {
    let question = &question.words;
    let mut ranked: Vec<(&str, usize)> = paths
        .iter()
        .map(String::as_str)
        .filter(|p| p.len() <= 200 && !p.chars().any(|c| c == '"' || c == '\\' || c.is_control()))
        .map(|p| (p, question_words_in(p, question)))
        .collect();
    ranked.sort_by_key(|(p, hits)| (std::cmp::Reverse(*hits), p.matches('/').count(), p.len()));
    ranked.truncate(MAX_SCORED);
    ranked
}

/// Log-probability (nats) a defined name the question spells out exactly is worth: the user
/// wrote it, where the model's own favourite is a name it has seen in its prompt's examples.
const SPELLED_BONUS: f64 = 8.0;

/// The parts of an identifier, lower-case: `parseArgs`, `parse_args` and `ParseArgs` are all
/// `parse`, `args`.
fn identifier_parts(name: &str) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            previous_lower = false;
            parts.extend((!current.is_empty()).then(|| std::mem::take(&mut current)));
            continue;
        }
        if c.is_uppercase() && previous_lower {
            parts.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    parts.extend((!current.is_empty()).then_some(current));
    parts
}

/// The values a path argument of `kind` is chosen among, each with its bonus: the paths of
/// `pool` (of `known`) that share the most words with the question, and, where the argument
/// may name a new file, the new files the question names. When `named_first`, a path of the
/// pool the question names (`utils.py` for `src/click/utils.py`; see
/// [`lantern_core::mentions::named_paths`]) is a candidate worth [`NAMED_BONUS`] more.
pub(super) fn path_candidates(
    kind: PathKind,
    pool: &[String],
    known: &KnownPaths,
    asked: &Question,
    named_first: bool,
) -> Vec<(String, f64)> {
    let named = match named_first {
        true => lantern_core::mentions::named_paths(asked, known),
        false => Default::default(),
    };
    let named: Vec<&str> = named
        .all()
        .filter(|p| pool.iter().any(|q| q == p))
        .collect();
    let mut shortlisted = shortlist(pool, asked);
    for path in &named {
        if !shortlisted.iter().any(|(p, _)| p == path) {
            shortlisted.push((path, question_words_in(path, &asked.words)));
        }
    }
    let mut candidates: Vec<(String, f64)> = shortlisted
        .into_iter()
        .map(|(path, hits)| {
            let bonus = WORD_BONUS * hits as f64
                + if named.contains(&path) {
                    NAMED_BONUS
                } else {
                    0.0
                };
            (format!("{path}\""), bonus)
        })
        .collect();
    if kind == PathKind::NewOrExistingFile {
        candidates.extend(new_files_named(asked, known).into_iter().map(|path| {
            let bonus = WORD_BONUS * question_words_in(&path, &asked.words) as f64 + NAMED_BONUS;
            (format!("{path}\""), bonus)
        }));
    }
    candidates
}

/// The defined names worth scoring for a symbol argument, each with its bonus: a name the
/// question spells out gets [`SPELLED_BONUS`]; every name gets [`WORD_BONUS`] for each of its
/// parts the question's words share (a part and a word of four letters or more that begin
/// alike count: "parses" and `parse`). Ranked by bonus, then by length; at most
/// [`MAX_SCORED`].
pub(super) fn symbol_candidates(names: &[String], question: &Question) -> Vec<(String, f64)> {
    let spelled = &question.spelled;
    let words = &question.words;
    let shares = |part: &str| {
        words.iter().any(|w| {
            w == part
                || (w.len() >= 4
                    && part.len() >= 4
                    && (w.starts_with(part) || part.starts_with(w.as_str())))
        })
    };
    let mut ranked: Vec<(&str, f64)> = names
        .iter()
        .map(String::as_str)
        .filter(|n| n.len() <= 200 && !n.chars().any(|c| c == '"' || c == '\\' || c.is_control()))
        .map(|name| {
            let mut parts = identifier_parts(name);
            parts.dedup();
            let shared = parts.iter().filter(|p| shares(p)).count();
            let named = if spelled.iter().any(|s| s == name) {
                SPELLED_BONUS
            } else {
                0.0
            };
            (name, named + WORD_BONUS * shared as f64)
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then(a.0.len().cmp(&b.0.len()))
            .then(a.0.cmp(b.0))
    });
    ranked.truncate(MAX_SCORED);
    ranked
        .into_iter()
        .map(|(name, bonus)| (format!("{name}\""), bonus))
        .collect()
}

impl LocalModel {
    /// Chooses what the call text (after the opening tag) has just opened, if it is grounded
    /// and its lever is on: the tool's name, a path argument or a question-word argument.
    pub(super) fn ground_what_opened(
        &mut self,
        opened: Option<Grounding>,
        call_text: &str,
        request: &GenerateRequest<'_>,
        logits: &[f32],
        grammar: &mut LlamaSampler,
        stats: &mut StepStats,
    ) -> Result<Option<Grounded>, ModelError> {
        // Borrowed: `generate` gives every request its question, read once.
        let asked = request.question();
        let cancel = request.cancel;
        if opens_tool_name(call_text, self.syntax.name_key) {
            return match self.settings.options.ranked_tools {
                true => self.ground_tool_name(request, &asked, logits, grammar),
                false => Ok(None),
            };
        }
        match (opened, request.paths) {
            (Some(Grounding::Path(kind)), Some(known)) if self.settings.options.grounded_paths => {
                let pointed = (self.settings.options.pointed_writes
                    && writes(request.tools, call_text, self.syntax.name_key))
                .then(|| pointed_files(known, request.messages))
                .filter(|files| !files.is_empty());
                let pool = match (kind, &pointed) {
                    (PathKind::File | PathKind::NewOrExistingFile, Some(files)) => files,
                    (PathKind::File | PathKind::NewOrExistingFile, None) => &known.files,
                    (PathKind::Folder, _) => &known.folders,
                };
                let named_first = self.settings.options.named_files;
                let candidates = path_candidates(kind, pool, known, &asked, named_first);
                let path = self.write_best(&candidates, logits, grammar, cancel)?;
                stats.grounded_paths += usize::from(path.is_some());
                Ok(path)
            }
            (Some(Grounding::Symbol), _) if self.settings.options.grounded_symbols => {
                let candidates = symbol_candidates(request.defined_names, &asked);
                self.write_best(&candidates, logits, grammar, cancel)
            }
            (Some(Grounding::Expression), _) => {
                let candidates: Vec<(String, f64)> = asked
                    .calculations
                    .iter()
                    .map(|expression| (format!("{expression}\""), 0.0))
                    .collect();
                self.write_best(&candidates, logits, grammar, cancel)
            }
            (Some(Grounding::QuestionWord), _) if self.settings.options.question_words => {
                self.ground_question_word(&asked, logits, grammar, cancel)
            }
            (Some(Grounding::QuestionGlob), _) if self.settings.options.question_globs => {
                let candidates: Vec<(String, f64)> = asked
                    .globs
                    .iter()
                    .map(|glob| (format!("{glob}\""), 0.0))
                    .collect();
                self.write_best(&candidates, logits, grammar, cancel)
            }
            _ => Ok(None),
        }
    }

    /// Chooses the value of a question-word argument just opened among the question's own
    /// words (as the user spelled them, common words left out) and writes it with its closing
    /// quote; `None` when the question has no such word.
    pub(super) fn ground_question_word(
        &mut self,
        question: &Question,
        logits: &[f32],
        grammar: &mut LlamaSampler,
        cancel: &CancelToken,
    ) -> Result<Option<Grounded>, ModelError> {
        let candidates: Vec<(String, f64)> = question
            .search_words
            .iter()
            .map(|w| (format!("{w}\""), 0.0))
            .take(MAX_QUESTION_WORDS)
            .collect();
        self.write_best(&candidates, logits, grammar, cancel)
    }

    /// Chooses the tool of the call just opened among the request's tools, by the model's
    /// score for each whole name plus what [`tool_candidates`] gives each for what the question
    /// calls for, and writes it with its closing quote.
    pub(super) fn ground_tool_name(
        &mut self,
        request: &GenerateRequest<'_>,
        asked: &Question,
        logits: &[f32],
        grammar: &mut LlamaSampler,
    ) -> Result<Option<Grounded>, ModelError> {
        let creates = request
            .paths
            .is_some_and(|known| !new_files_named(asked, known).is_empty());
        let options = &self.settings.options;
        let locating = options.where_lookups && request.is_first_step();
        // Read once: it may scan the files the code index does not read.
        let names_defined = (options.named_definitions || locating)
            && lantern_core::intent::names_a_defined_name_in(request, asked);
        let finds = options.named_definitions && names_defined;
        let locates = locating
            && lantern_core::intent::asks_where_a_definition_is(request, asked, names_defined);
        let reads_only = options.changes_when_asked && !asked.asks_for_a_change;
        let wanted = WantedTools {
            creates,
            makes: creates && options.named_new_files && request.is_first_step(),
            finds,
            locates,
            reads_only,
            // Only a tool that calculates gets the bonus for it.
            calculates: !asked.calculations.is_empty(),
        };
        let spent: Vec<&str> = match options.spent_tools {
            true => request.calls_this_turn().map(|c| c.tool.as_str()).collect(),
            false => Vec::new(),
        };
        let candidates = tool_candidates(request.tools, asked, wanted, &spent);
        self.write_best(&candidates, logits, grammar, request.cancel)
    }

    /// Scores every candidate value (its text, the closing quote included, and a bonus in
    /// nats) by the model's log-probability of its tokens plus the bonus, then writes the best
    /// into the cache and through `grammar`.
    pub(super) fn write_best(
        &mut self,
        candidates: &[(String, f64)],
        logits: &[f32],
        grammar: &mut LlamaSampler,
        cancel: &CancelToken,
    ) -> Result<Option<Grounded>, ModelError> {
        let base = self.cached.len();
        let mut best: Option<(f64, Vec<LlamaToken>)> = None;
        for (value, bonus) in candidates {
            let tokens = self.model.vocab().tokenize(value.as_bytes(), false, false);
            if tokens.is_empty() {
                continue;
            }
            let score = self.score(logits, &tokens)? + bonus;
            self.rewind_to(base, cancel)?;
            if best.as_ref().is_none_or(|(s, _)| score > *s) {
                best = Some((score, tokens));
            }
        }
        let Some((_, tokens)) = best else {
            return Ok(None);
        };
        // A plain value and its closing quote are always valid string content; should the
        // grammar still refuse a token, what it took so far is written and decoding goes on
        // from there, so grammar, cache and text never disagree.
        let mut taken = Vec::with_capacity(tokens.len());
        for token in tokens {
            if !grammar_allows(grammar, token, 0.0) {
                break;
            }
            grammar.accept(token);
            taken.push(token);
        }
        if taken.is_empty() {
            return Ok(None);
        }
        // One decoding of all the bytes: a character may be split across tokens.
        let bytes: Vec<u8> = taken
            .iter()
            .flat_map(|t| self.model.vocab().token_to_piece(*t, false, None))
            .collect();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let logits = self.append(&taken)?;
        Ok(Some(Grounded {
            text,
            tokens: taken,
            logits,
        }))
    }
}
