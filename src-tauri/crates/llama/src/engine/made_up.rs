//! The prompt's made-up values: an answer never writes a value that only the system prompt's
//! worked examples hold, nor the name of a tool.
//!
//! The examples teach the protocol with the values of an imagined project (a version `2.4.1`,
//! a port `9090`, a path `src/config.rs`, a tool's name). A tiny model that has not read what it
//! is asked about, or cannot make sense of what it read, writes them back as the project's
//! ("the port is 9090"). While an answer is written, a token is refused when it would make the
//! answer's current word the beginning of such a value, unless the conversation holds a fact
//! that begins the same way: then the project has it too. The conversation is what the user
//! wrote, the project's instructions and maps, and the tool results; the model's own words are
//! not in it. Plain words, and words shorter than three characters ("2", "12"), are never
//! refused; the model's own score chooses among the rest.
//!
//! A tool's name (`find_definition`, `list_files`) is Lantern's word, not the project's, in the
//! same way: a tiny model that has just called a tool answers "It is defined in
//! find_definition.js". It is refused like an example's value, unless the conversation holds
//! it too (the user asked about the tool, or a file of the project has a function so named).

use super::copying::{facts_in, is_fact, values_of, Facts, NextWord};
use lantern_core::model::{Message, Role};
use lantern_core::prompt::examples_of;
use lantern_core::spec::ToolSpec;

/// The values an answer may not begin, and the facts that free them.
pub(super) struct MadeUp {
    /// The examples' facts and the tools' names that nothing in the conversation holds.
    only_in_examples: Facts,
    /// The facts the conversation holds.
    known: Facts,
}

/// The texts of the conversation after its system prompt: the user's messages, later system
/// messages and the results' values, not the model's own words.
fn conversation_texts(after_prompt: &[Message]) -> Vec<String> {
    let mut texts = Vec::new();
    for message in after_prompt {
        match (message.result(), message.role) {
            (Some(result), _) => values_of(result.value(), &mut texts),
            (None, Role::Assistant) => {}
            (None, _) => texts.push(message.content.clone()),
        }
    }
    texts
}

impl MadeUp {
    /// What an answer to `messages`, with `tools` offered, may not write; `None` when their
    /// system prompt has no worked examples and no tool's name is a fact, or the conversation
    /// holds every value of them.
    pub(super) fn of(messages: &[Message], tools: &[ToolSpec]) -> Option<MadeUp> {
        let (prompt, after_prompt) = messages.split_first()?;
        let examples = (prompt.role == Role::System)
            .then(|| examples_of(&prompt.content))
            .flatten()
            .unwrap_or_default();
        let names = tools.iter().map(|t| t.name.as_str()).filter(|n| is_fact(n));
        let known = Facts::in_texts(&conversation_texts(after_prompt));
        let only_in_examples = Facts::of(
            facts_in(examples)
                .chain(names)
                .filter(|fact| !known.has(fact)),
        );
        (!only_in_examples.is_empty()).then_some(MadeUp {
            only_in_examples,
            known,
        })
    }

    /// Would writing `piece` after `answer` make the answer's current word the beginning of a
    /// value only the examples hold? Only the first word a piece touches is looked at: a
    /// piece that holds a whole value and more is rare in a small vocabulary.
    pub(super) fn refuses(&self, answer: &str, piece: &str) -> bool {
        let Some(next) = NextWord::of(answer, piece) else {
            return false;
        };
        let word = next.whole();
        // A stop or a comma after a word ends the sentence, not the value.
        let word = word.trim_end_matches(['.', ',']);
        let made_up = |w: &str| self.only_in_examples.has_prefix(w) && !self.known.has_prefix(w);
        // A tool's name written with dashes (`find-definition`) is still its name.
        word.chars().count() >= 3
            && is_fact(word)
            && (made_up(word) || word.contains('-') && made_up(&word.replace('-', "_")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lantern_core::prompt::EXAMPLES_HEADING;
    use lantern_core::tool_result::ShownResult;

    fn prompt() -> Message {
        let examples = r#"User: Which port? TOOL_RESULT: {"content": "port = 7070\nname = \"demo\""}
Assistant: The port in settings/app.ini is 7070."#;
        Message::new(
            Role::System,
            format!("Tools: read_file(path)\n{EXAMPLES_HEADING}\n{examples}"),
        )
    }

    fn made_up(after_prompt: Vec<Message>) -> MadeUp {
        let mut messages = vec![prompt()];
        messages.extend(after_prompt);
        MadeUp::of(&messages, &[]).expect("the examples have values of their own")
    }

    #[test]
    fn an_example_value_is_refused_once_the_word_could_only_be_that() {
        let m = made_up(vec![Message::new(Role::User, "Which port does it use?")]);
        assert!(m.refuses("The port is ", "707"));
        assert!(m.refuses("The port is 70", "7"));
        assert!(m.refuses("It is set in", " settings/"));
        assert!(
            !m.refuses("The port is ", "70"),
            "two characters begin many values"
        );
        assert!(!m.refuses("The port is ", "8080"), "not an example's value");
        assert!(!m.refuses("It is set in", " settings"), "a plain word");
        assert!(!m.refuses("The port is 7071", "."), "the sentence ends");
    }

    #[test]
    fn a_value_the_conversation_holds_is_the_projects_too() {
        let result =
            ShownResult::from_json(r#"{"path": "app.toml", "content": "port = 7071"}"#).unwrap();
        let m = made_up(vec![
            Message::new(Role::User, "Is settings/app.ini still read?"),
            Message::tool_result("call_1", result),
        ]);
        assert!(
            !m.refuses("It reads", " settings/app.ini"),
            "the user named it"
        );
        assert!(
            !m.refuses("The port is ", "707"),
            "7071 begins the same way"
        );
        assert!(m.refuses("The port is 707", "0"));
    }

    #[test]
    fn the_models_own_words_are_not_the_conversations() {
        let m = made_up(vec![
            Message::new(
                Role::System,
                "Project instructions: the demo serves on 7070.",
            ),
            Message::new(Role::User, "Where is the port set?"),
            Message::new(Role::Assistant, "In settings/app.ini."),
        ]);
        assert!(
            !m.refuses("The port is ", "7070"),
            "the project's instructions say so"
        );
        assert!(
            m.refuses("It is set in", " settings/"),
            "the model said so, no one else"
        );
    }

    #[test]
    fn a_prompt_without_examples_refuses_nothing() {
        let messages = [
            Message::new(Role::System, "Call tools the way you were trained to."),
            Message::new(Role::User, "Which port?"),
        ];
        assert!(MadeUp::of(&messages, &[]).is_none());
    }

    #[test]
    fn a_tools_name_is_refused_unless_the_conversation_holds_it() {
        let tools = lantern_core::toolbox::Toolbox::standard().specs().to_vec();
        let asked = |question: &str| {
            let messages = [
                Message::new(Role::System, "Call tools the way you were trained to."),
                Message::new(Role::User, question),
            ];
            MadeUp::of(&messages, &tools).expect("the tools' names are facts")
        };
        let m = asked("Where is the Shelf class defined?");
        assert!(m.refuses("Shelf is defined in", " find_def"));
        assert!(m.refuses("Shelf is defined in find", "_definition"));
        assert!(
            m.refuses("Shelf is defined in find", "-definition"),
            "dashed"
        );
        assert!(!m.refuses("Shelf is defined in", " src/shelf.py"));
        assert!(!m.refuses("It can", " find"), "a plain word");
        let m = asked("What does list_files skip?");
        assert!(!m.refuses("The", " list_files"), "the user named it");
    }
}
