//! Which tools a message calls for, by its words: what the local engine adds to the model's own
//! score for each tool's name, and which of many tools from MCP servers a turn offers at all.
//!
//! A tool's purpose is its name and the first sentence of its description (and sentences that
//! begin "Use it"); a word of the question found there counts, weighted by how few tools share
//! it. The same measure ranks the built-in tools for a call and chooses the remote tools a turn
//! is offered, so that a small model with ten servers is shown the few that fit, not a hundred.
//!
//! ```
//! use lantern_core::question::Question;
//! use lantern_core::tool_fit::tool_bonuses;
//! use lantern_core::toolbox::Toolbox;
//!
//! let toolbox = Toolbox::standard();
//! let asked = Question::read("Calculate the product of 6 and 7");
//! let bonuses = tool_bonuses(&asked, toolbox.specs());
//! let best = toolbox.specs().iter().zip(&bonuses).max_by(|a, b| a.1.total_cmp(b.1)).unwrap();
//! assert_eq!(best.0.name, "calculate");
//! ```

use crate::question::Question;
use crate::spec::ToolSpec;
use crate::words::{is_common_word, lower_words, stem};

/// Log-probability (nats) a word of the question found in a tool's name or description is
/// worth when no other tool's has it; a word `n` tools have is worth `1/n` of it.
const TOOL_WORD_BONUS: f64 = 4.0;

/// What a tool's description says the tool is for: its first sentence and the sentences that
/// begin "Use it". The rest tells how it behaves ("the result says how many entries were
/// skipped", "files ignored by .gitignore"), and a question that happens to share those words
/// ("Create a file that says …", "a .gitignore that ignores logs") is not asking for it.
fn purpose(description: &str) -> String {
    let mut sentences = description.split(". ");
    let first = sentences.next().unwrap_or_default();
    std::iter::once(first)
        .chain(sentences.filter(|s| s.trim_start().starts_with("Use it")))
        .collect::<Vec<_>>()
        .join(". ")
}

/// The bonus of each tool (in order) for the words of `question` its name and the purpose its
/// description gives contain, each word weighted by how few of the tools contain it.
pub fn tool_bonuses(question: &Question, tools: &[ToolSpec]) -> Vec<f64> {
    let stems = |text: &str| -> Vec<String> {
        let mut stems: Vec<String> = lower_words(text)
            .iter()
            .filter(|w| !is_common_word(w))
            .map(|w| stem(w).to_string())
            .collect();
        stems.sort();
        stems.dedup();
        stems
    };
    let described: Vec<Vec<String>> = tools
        .iter()
        .map(|t| {
            stems(&format!(
                "{} {}",
                t.name.replace('_', " "),
                purpose(&t.description)
            ))
        })
        .collect();
    // A file's name says which file, not what to do with it ("constants.js" is no search).
    let asked = stems(&question.outside_paths);
    let sharing = |word: &String| described.iter().filter(|d| d.contains(word)).count();
    described
        .iter()
        .map(|own| {
            asked
                .iter()
                .filter(|w| own.contains(w))
                .map(|w| TOOL_WORD_BONUS / sharing(w) as f64)
                .sum()
        })
        .collect()
}

/// The most tools of MCP servers one turn is offered: beyond it, those that fit the message
/// best. A small model's prompt and grammar hold every tool offered.
pub const MAX_REMOTE_TOOLS: usize = 8;

/// The tools a turn on `question` is offered: every built-in tool, and of the tools from MCP
/// servers all of them when they are few (at most `max_remote`), else those that fit the
/// question (share a word of it), the `max_remote` best (ties keep their order). Tools keep
/// the order of `tools`.
pub fn offered_tools(question: &Question, tools: &[ToolSpec], max_remote: usize) -> Vec<ToolSpec> {
    let remote = tools.iter().filter(|t| t.source.is_some()).count();
    if remote <= max_remote {
        return tools.to_vec();
    }
    let bonuses = tool_bonuses(question, tools);
    let mut ranked: Vec<usize> = (0..tools.len())
        .filter(|&i| tools[i].source.is_some() && bonuses[i] > 0.0)
        .collect();
    ranked.sort_by(|&a, &b| bonuses[b].total_cmp(&bonuses[a]).then(a.cmp(&b)));
    ranked.truncate(max_remote);
    tools
        .iter()
        .enumerate()
        .filter(|(i, t)| t.source.is_none() || ranked.contains(i))
        .map(|(_, t)| t.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{PreviewKind, ResultKind, Risk, ToolSource};
    use serde_json::json;

    fn remote(name: &str, description: &str) -> ToolSpec {
        ToolSpec {
            name: name.to_string(),
            description: description.to_string(),
            risk: Risk::Remote,
            input_schema: json!({"type": "object"}),
            example: json!({}),
            preview_kind: PreviewKind::None,
            result_kind: ResultKind::Plain,
            source: Some(ToolSource {
                server: name.split('.').next().unwrap().to_string(),
                transport: "stdio".into(),
                sandbox: "sandboxed".into(),
            }),
            follow_ups: &[],
        }
    }

    #[test]
    fn a_turn_is_offered_every_built_in_tool_and_the_remote_ones_that_fit_its_words() {
        let mut tools = crate::toolbox::Toolbox::standard().specs().to_vec();
        let built_in = tools.len();
        tools.push(remote(
            "weather.forecast",
            "Get the weather forecast for a city.",
        ));
        tools.push(remote(
            "tickets.create_issue",
            "Create an issue in the tracker.",
        ));
        tools.push(remote(
            "tickets.list_issues",
            "List the open issues of a project.",
        ));
        tools.push(remote("music.play", "Play a song."));
        // Few remote tools: all of them.
        assert_eq!(
            offered_tools(&Question::read("Play something"), &tools, 8).len(),
            tools.len()
        );
        let remote_names = |message: &str| -> Vec<String> {
            offered_tools(&Question::read(message), &tools, 2)[built_in..]
                .iter()
                .map(|t| t.name.clone())
                .collect()
        };
        assert_eq!(
            remote_names("What is the weather forecast for Oslo?"),
            ["weather.forecast"]
        );
        assert_eq!(
            remote_names("Create an issue for the weather forecast"),
            ["weather.forecast", "tickets.create_issue"]
        );
        let offered = offered_tools(&Question::read("List the open issues"), &tools, 1);
        assert_eq!(offered[built_in].name, "tickets.list_issues");
        // Over the bound, a message no remote tool fits is offered none of them.
        assert_eq!(
            offered_tools(&Question::read("Where is parse_args defined?"), &tools, 2).len(),
            built_in
        );
    }
}
