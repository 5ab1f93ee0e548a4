//! What in a tool result answers the question: the lines of a file that share words with what
//! the user asked, shown to the model before the whole file; and of a search's matches, those
//! that define a name the question asks about, shown before all the matches.
//!
//! A small model that has read the right file still answers from memory more often than from
//! the file; shown the few lines that match the question first, it copies from them. A search
//! shows only the defining line, so the lines of a definition's body that the question asks
//! about (an exit code, a default) are read from its file and shown under it. The excerpt is
//! added next to the data, never instead of it, so nothing the tool returned is lost.

use crate::model::FileTexts;
use crate::question::Question;
use crate::seen_result::{Hit, SeenData};
use crate::tool_result::{ShownResult, ToolResult};
use crate::words::{lower_code_words, DEFINING_WORDS};
use serde_json::Map;
use std::collections::HashMap;

/// The most lines an excerpt holds.
const MAX_LINES: usize = 4;

/// The longest line quoted, in characters.
const MAX_LINE_CHARS: usize = 200;

/// Up to `most` lines of `content` that contain the most of `words`, in file order, each as
/// `NUMBER: TEXT` (numbered from `first_line`).
fn lines_about_at_most(
    content: &str,
    words: &[String],
    first_line: u64,
    most: usize,
) -> Vec<String> {
    let lines: Vec<&str> = content.lines().collect();
    quoted(&lines, &indices_about(&lines, words, most), first_line)
}

/// The lines of `lines` at `indices`, each trimmed, cut at [`MAX_LINE_CHARS`] and given as
/// `NUMBER: TEXT` (numbered from `first_line`).
fn quoted(lines: &[&str], indices: &[usize], first_line: u64) -> Vec<String> {
    (indices.iter())
        .map(|&i| {
            let line: String = lines[i].trim().chars().take(MAX_LINE_CHARS).collect();
            format!("{}: {line}", first_line + i as u64)
        })
        .collect()
}

/// The indices of up to `most` of `lines` that contain the most of `words`, in file order.
fn indices_about(lines: &[&str], words: &[String], most: usize) -> Vec<usize> {
    if words.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(usize, usize)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, line)| {
            let lower = line.to_lowercase();
            let hits = words.iter().filter(|w| lower.contains(w.as_str())).count();
            (hits > 0).then_some((hits, i))
        })
        .collect();
    scored.sort_by_key(|(hits, i)| (std::cmp::Reverse(*hits), *i));
    scored.truncate(most);
    let mut found: Vec<usize> = scored.into_iter().map(|(_, i)| i).collect();
    found.sort();
    found
}

/// A read of more lines than this, some of them about the question, is shown to the model
/// lean (see [`focus_result`]).
const LONG_READ: usize = 40;

/// The lines shown on each side of a line about the question in a lean read.
const LINES_AROUND: usize = 2;

/// The lines of `lines` at `about`, each with [`LINES_AROUND`] lines on each side, as
/// `NUMBER: TEXT` lines (numbered from `first_line`), once each, in file order.
fn lean_content(lines: &[&str], about: &[usize], first_line: u64) -> String {
    let mut kept = std::collections::BTreeSet::new();
    for &at in about {
        let last = (at + LINES_AROUND).min(lines.len() - 1);
        kept.extend(at.saturating_sub(LINES_AROUND)..=last);
    }
    let shown: Vec<String> = (kept.into_iter())
        .map(|i| format!("{}: {}", first_line + i as u64, lines[i]))
        .collect();
    shown.join("\n")
}

/// Does this line of code define one of `names` (lower-case): a defining word followed by the
/// name (`class Range`, `def echo(`, `const coerce =`), or the name assigned at the start of
/// the line (`MAX_LENGTH = 256`)? An import (`const coerce = require(…)`, `from a import b`)
/// only names what is defined elsewhere.
pub fn defines(line: &str, names: &[String]) -> bool {
    let trimmed = line.trim_start();
    if line.contains("require(") || trimmed.starts_with("import ") || trimmed.starts_with("from ") {
        return false;
    }
    let tokens = lower_code_words(line);
    let named = |t: &String| names.contains(t);
    let after_keyword = tokens
        .windows(2)
        .any(|w| DEFINING_WORDS.contains(&w[0].as_str()) && named(&w[1]));
    let assigned = tokens.first().is_some_and(named) && {
        let name_end = trimmed
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(trimmed.len());
        let after = trimmed[name_end..].trim_start();
        after.starts_with('=') && !after.starts_with("==")
    };
    after_keyword || assigned
}

/// Does this match of a result (`path`, `text`, and `defines` where the code index marked the
/// name the line defines) define one of `names` (lower-case)? Where the index read the file,
/// the index decides; elsewhere (a language it does not read, or a file it did not read:
/// `unindexed`) the line is read as code ([`defines`]).
pub fn match_defines(m: &Hit, names: &[String]) -> bool {
    if index_read(m) {
        return m
            .defines
            .as_ref()
            .is_some_and(|defined| names.contains(&defined.to_lowercase()));
    }
    defines(&m.text, names)
}

/// Did the code index read the file of the search's line `m`: is its language indexed, and
/// was the file read (not past what is read on demand)? Then its `defines` mark is the word
/// on what the line defines.
pub fn index_read(m: &Hit) -> bool {
    !m.unindexed && lantern_index::Language::of_path(&m.path).is_some()
}

/// How many lines after a definition are looked at for what else the question asks of it,
/// where no code index says where the definition ends.
const BODY_LINES: usize = 15;

/// The most lines of a definition's body looked at, where the code index says where it ends
/// (a long class's body is read up to here).
const MAX_INDEXED_BODY_LINES: usize = 400;

/// The most lines of a definition's body shown with it.
const MAX_BODY_LINES: usize = 2;

/// The matches of a search result that define a name of the question, each as
/// `PATH:LINE: TEXT`, at most [`MAX_LINES`]; when `files` can read the file, each is followed
/// by the lines of its body about the rest of the question (`exit_code = 2` under
/// `class UsageError`, asked which exit code a `UsageError` uses).
fn definitions_among(
    matches: &[Hit],
    names: &[String],
    files: Option<&dyn FileTexts>,
) -> Vec<String> {
    // Each defining line, with the rest of the question: its words other than the names the
    // line holds, which its body is searched for.
    let defining: Vec<(&Hit, Vec<String>)> = matches
        .iter()
        .filter(|m| match_defines(m, names))
        .take(MAX_LINES)
        .map(|m| {
            let defined = lower_code_words(&m.text);
            let rest = names.iter().filter(|w| !defined.contains(w)).cloned();
            (m, rest.collect())
        })
        .collect();
    let ends = files
        .map(|files| body_ends(files, &defining))
        .unwrap_or_default();
    let mut found = Vec::new();
    // Several definitions may stand in one file: each file is read once.
    let mut contents: HashMap<&str, Option<String>> = HashMap::new();
    for (m, rest) in &defining {
        let (path, line) = (m.path.as_str(), m.line);
        let shown: String = m.text.trim().chars().take(MAX_LINE_CHARS).collect();
        found.push(format!("{path}:{line}: {shown}"));
        let (Some(files), false) = (files, rest.is_empty()) else {
            continue;
        };
        let content = contents.entry(path).or_insert_with(|| files.text_of(path));
        let Some(content) = content.as_deref() else {
            continue;
        };
        // The body is the definition's own lines where the index knows them, so a short
        // function's next neighbour is not read as its body, nor a long class cut short.
        let body_lines = ends.get(&(path, line)).map_or(BODY_LINES, |&end| {
            (end as usize)
                .saturating_sub(line as usize)
                .min(MAX_INDEXED_BODY_LINES)
        });
        let body: String = content
            .lines()
            .skip(line as usize)
            .take(body_lines)
            .collect::<Vec<_>>()
            .join("\n");
        let about = lines_about_at_most(&body, rest, line + 1, MAX_BODY_LINES);
        found.extend(about.into_iter().map(|l| format!("{path}:{l}")));
    }
    found
}

/// Where the definitions whose bodies are read (those with more of the question to look for)
/// end, by (path, line), where the index knows it: asked once for all of them, so that a file
/// is parsed at most once.
fn body_ends<'m>(
    files: &dyn FileTexts,
    defining: &[(&'m Hit, Vec<String>)],
) -> HashMap<(&'m str, u64), u32> {
    let read: Vec<(&str, u64)> = defining
        .iter()
        .filter(|(_, rest)| !rest.is_empty())
        .map(|(m, _)| (m.path.as_str(), m.line))
        .collect();
    let ends = files.definition_ends(&read);
    read.into_iter()
        .zip(ends)
        .filter_map(|(at, end)| Some((at, end?)))
        .collect()
}

/// A result as the model reads it, with what answers `question` put first: the lines of a
/// file's content about it (`lines_about_the_question`), or the matches of a search that
/// define a name it asks about (`definitions`), with the lines of their bodies about the rest
/// of the question when `files` can read them. As it is when it failed or nothing stands out.
///
/// With `lean_reads`, a read of more than [`LONG_READ`] lines, some of them about the
/// question, has as its content only those lines with two on each side: a small model given a
/// long file answers from anywhere in it, given the lines about the question it answers from
/// them. The read's line numbers stay in its data, so a further read can ask for the rest;
/// the user is shown the whole result.
pub fn focus_result(
    result: &ToolResult,
    question: &Question,
    files: Option<&dyn FileTexts>,
    lean_reads: bool,
) -> ShownResult {
    let data = match &result.data {
        Some(data) if result.success => SeenData::of(data),
        _ => return result.shown(),
    };
    if let Some(matches) = &data.matches {
        let found = definitions_among(matches, &question.names, files);
        if found.is_empty() {
            return result.shown();
        }
        let mut lead = Map::new();
        lead.insert("definitions".into(), found.into());
        return result.shown_led_by(lead);
    }
    let Some(content) = &data.content else {
        return result.shown();
    };
    let first_line = data.start_line.unwrap_or(1);
    let lines: Vec<&str> = content.lines().collect();
    let about = indices_about(&lines, &question.names, MAX_LINES);
    if about.is_empty() {
        return result.shown();
    }
    let mut lead = Map::new();
    let quoted = quoted(&lines, &about, first_line);
    lead.insert("lines_about_the_question".into(), quoted.into());
    if lean_reads && lines.len() > LONG_READ {
        let mut lean = result.clone();
        if let Some(data) = lean.data.as_mut() {
            data["content"] = lean_content(&lines, &about, first_line).into();
        }
        return lean.shown_led_by(lead);
    }
    result.shown_led_by(lead)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn read(data: Value) -> ToolResult {
        ToolResult::from_outcome(Ok(data), std::time::Duration::ZERO)
    }

    #[test]
    fn the_lines_that_share_the_question_s_words_come_first() {
        let result = read(
            serde_json::json!({"path": "package.json", "content": "{\n  \"name\": \"semver\",\n  \"version\": \"7.6.3\",\n  \"main\": \"index.js\"\n}\n", "total_lines": 5}),
        );
        let focused = focus_result(
            &result,
            &Question::read("Which version of this package is it?"),
            None,
            true,
        );
        let value = focused.value();
        assert_eq!(
            value["lines_about_the_question"],
            serde_json::json!(["3: \"version\": \"7.6.3\","])
        );
        // A short file is read whole even when reads are lean, and the excerpt is read before
        // the data.
        assert!(value["data"]["content"]
            .as_str()
            .unwrap()
            .contains("index.js"));
        let text = focused.to_string();
        assert!(text.find("lines_about").unwrap() < text.find("\"data\"").unwrap());
    }

    #[test]
    fn a_long_read_is_shown_lean_as_its_lines_about_the_question_and_their_neighbours() {
        let mut content: Vec<String> = (1..=60).map(|n| format!("filler line {n}")).collect();
        content[29] = "listen_port = 7311".to_string();
        let result = read(serde_json::json!({
            "path": "conf/kiosk.ini", "content": content.join("\n"), "start_line": 1,
            "end_line": 60, "total_lines": 60
        }));
        let asked = Question::read("kiosk listen_port value?");
        let lean = focus_result(&result, &asked, None, true);
        let lean = lean.value();
        assert_eq!(
            lean["lines_about_the_question"],
            serde_json::json!(["30: listen_port = 7311"])
        );
        assert_eq!(
            lean["data"]["content"],
            "28: filler line 28\n29: filler line 29\n30: listen_port = 7311\n31: filler line 31\n32: filler line 32"
        );
        // The read's range stays, so a further read can ask for the rest.
        assert_eq!(lean["data"]["total_lines"], 60);
        // The result itself, which the user is shown, keeps every line.
        let kept = &result.data.as_ref().unwrap()["content"];
        assert!(kept.as_str().unwrap().contains("filler line 60"));
        let whole = focus_result(&result, &asked, None, false);
        let whole = whole.value();
        assert!(whole["data"]["content"]
            .as_str()
            .unwrap()
            .contains("filler line 60"));
    }

    #[test]
    fn a_result_without_matching_lines_or_content_is_left_as_it_was() {
        let listing = read(serde_json::json!({"files": ["a.js"]}));
        assert_eq!(
            focus_result(&listing, &Question::read("version?"), None, false),
            listing.shown()
        );
        let content = read(serde_json::json!({"content": "x = 1\n"}));
        assert_eq!(
            focus_result(&content, &Question::read("Which version?"), None, false),
            content.shown()
        );
        let failed = ToolResult::failure(
            crate::error::ToolError::invalid("no such file"),
            std::time::Duration::ZERO,
        );
        assert_eq!(
            focus_result(&failed, &Question::read("Which version?"), None, false),
            failed.shown()
        );
    }

    #[test]
    fn a_search_leads_with_the_matches_that_define_the_name_asked_about() {
        // As search_code gives them: the lines of indexed languages that define a name say
        // which; a Markdown line, and a line of a file the index did not read, are read as
        // code.
        let search = read(serde_json::json!({"query": "coerce", "matches": [
            {"path": "README.md", "line": 24, "column": 1, "text": "semver.valid(semver.coerce('v2'))"},
            {"path": "functions/coerce.js", "line": 5, "column": 7, "text": "const coerce = (version, options) => {", "defines": "coerce"},
            {"path": "index.js", "line": 30, "column": 7, "text": "const coerce = require('./functions/coerce')"},
            {"path": "lib/x.py", "line": 2, "column": 1, "text": "class Coerce(Base):", "defines": "Coerce"},
            {"path": "lib/y.py", "line": 9, "column": 1, "text": "if coerce == 1:"},
            {"path": "lib/z.py", "line": 4, "column": 5, "text": "def coerce(value):", "unindexed": true},
            {"path": "lib/z.py", "line": 7, "column": 5, "text": "coerce(value)", "unindexed": true},
        ], "count": 7}));
        let focused = focus_result(
            &search,
            &Question::read("In which file does coerce live?"),
            None,
            false,
        );
        let value = focused.value();
        assert_eq!(
            value["definitions"],
            serde_json::json!([
                "functions/coerce.js:5: const coerce = (version, options) => {",
                "lib/x.py:2: class Coerce(Base):",
                "lib/z.py:4: def coerce(value):"
            ])
        );
        assert_eq!(value["data"]["count"], 7, "the matches stay");
        let unrelated = focus_result(
            &search,
            &Question::read("Where is the satisfies function defined?"),
            None,
            false,
        );
        assert_eq!(unrelated, search.shown());
    }

    #[test]
    fn a_definition_comes_with_the_lines_of_its_body_about_the_rest_of_the_question() {
        let search = read(serde_json::json!({"query": "UsageError", "matches": [
            {"path": "core.py", "line": 3, "column": 12, "text": "    except UsageError as e:"},
            {"path": "exceptions.py", "line": 2, "column": 7, "text": "class UsageError(ClickException):", "defines": "UsageError"},
        ], "count": 2}));
        let files = [(
            "exceptions.py",
            "import os\nclass UsageError(ClickException):\n    \"\"\"A usage error.\"\"\"\n\n    exit_code = 2\n",
        )];
        let focused = focus_result(
            &search,
            &Question::read("When a UsageError is raised, which exit code follows?"),
            Some(&files),
            false,
        );
        let value = focused.value();
        assert_eq!(
            value["definitions"],
            serde_json::json!([
                "exceptions.py:2: class UsageError(ClickException):",
                "exceptions.py:5: exit_code = 2"
            ])
        );
        // Asked only where it is, the definition stands alone.
        let focused = focus_result(
            &search,
            &Question::read("Where is UsageError defined?"),
            Some(&files),
            false,
        );
        let value = focused.value();
        assert_eq!(
            value["definitions"],
            serde_json::json!(["exceptions.py:2: class UsageError(ClickException):"])
        );
    }

    #[test]
    fn an_excerpt_s_lines_are_numbered_from_the_range_read() {
        let result = read(serde_json::json!({
            "content": "a\nmax_length = 45\n", "start_line": 10, "end_line": 11
        }));
        let focused = focus_result(&result, &Question::read("max_length?"), None, true);
        assert_eq!(
            focused.value()["lines_about_the_question"],
            serde_json::json!(["11: max_length = 45"])
        );
    }
}
