//! What a message asks, read once when it is sent: the facts of its words that the call
//! decision, the choice of tools and the notes beneath an answer weigh. The agent reads the
//! user's message into a [`Question`] at the start of a turn and hands it to every step (see
//! [`crate::model::GenerateRequest::with_question`]); those steps do not read the facts from
//! the message again. (What needs the workspace as well, such as the paths a message names or
//! the tools it fits, is read where the workspace is at hand.)
//!
//! Every fact is a cheap word test over the lists of [`crate::words`]:
//!
//! - whether it asks for a change or a command at all (a question only reads);
//! - whether it points at the project it is asked in ("this project", "…here?"), and whether
//!   its words sound like a question about the project at all (the local engine's fallback);
//! - the calculations it spells out (`17 * 23`);
//! - its form, as the steps weigh it (where something is, how many files there are) and as one
//!   reading to show ([`Form`]: a change, where, how many files, explain, a look-up, chat);
//! - the names it asks about, and the globs it names;
//! - the paths it names, apart from the words of what it asks (the words to look for), and
//!   which of its words stand where a file is made ("Create NOTES.md", not the `.npmrc` of "Put
//!   .npmrc in the .gitignore");
//! - its words, split each way a step compares them: with tools' purposes, paths and defined
//!   names, with a file's lines, and as a search looks for them.
//!
//! ```
//! use lantern_core::question::Question;
//! let asked = Question::read("Where is parse_config defined in this project?");
//! assert!(asked.asks_where && asked.points_at_the_project && !asked.asks_for_a_change);
//! assert_eq!(Question::read("What is 17 * 23?").calculations, ["17 * 23"]);
//! ```

use crate::arithmetic::expressions_in;
use crate::words::{
    alphanumeric_words, code_words, is_code_name, is_common_word, lower_code_words, lower_words,
    message_words, names_a_path, spelled_words, AFTER_FILES, ARTICLES, CHANGE_VERBS, CONTENT_WORDS,
    DESTINATION_WORDS, EXPLAINING_WORDS, HOW_IT_IS, MAKING_WORDS, NEGATIONS, OBLIGATION_WORDS,
    PASSIVE_WORDS, PLACE_NOUNS, POINTING, PROJECT_NOUNS, PROJECT_QUESTION_WORDS, QUESTION_FILLER,
    QUESTION_ONLY_WORDS, QUESTION_OPENERS, REPLACING_VERBS, STATE_VERBS, USE_WORDS, WANTING_WORDS,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A user's message and what its words say it asks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Question {
    /// The message as the user wrote it.
    pub text: String,
    /// It asks for a change to the project or for a command to be run ("Bump the version",
    /// "Can you fix it?", "The limit should be 200"), not only to be answered ("What is the
    /// port set to?", "How do I run it?"): see [`asks_for_a_change`].
    pub asks_for_a_change: bool,
    /// It asks to change or take out something that is there: it uses a verb of
    /// [`REPLACING_VERBS`] ("Fix the check", "Add a flag and remove the old one"). A message
    /// that does not ("Add *.tmp to the ignore list") asks that every line stay.
    pub asks_to_replace: bool,
    /// It points at the project it is asked in.
    pub points_at_the_project: bool,
    /// It names a file, asks to add something to something ("Add a retry count to the
    /// client"), or uses a word of [`PROJECT_QUESTION_WORDS`] ("file", "project"): the local
    /// engine's lexical prior. At the first step the engine adds a calibrated weight to its own
    /// score for a message so marked, and lets this decide alone when its score cannot be
    /// trusted.
    pub sounds_about_the_project: bool,
    /// The calculations it spells out, as [`expressions_in`] finds them.
    pub calculations: Vec<String>,
    /// It asks where something is (not where it is used).
    pub asks_where: bool,
    /// It asks how many files there are (not how many did something).
    pub asks_how_many_files: bool,
    /// What it asks for, as one reading (see [`Form`]). The facts above are what the steps
    /// weigh, since a message can ask two things ("Where is the pool created? Rename it.");
    /// this is how the message is shown to have been read.
    pub form: Form,
    /// Its words that can pick out a line or name a thing: lower-case, three characters or
    /// more, not [`QUESTION_FILLER`], sorted, once each. A result is focused on them, and a
    /// definition that answers it defines one of them.
    pub names: Vec<String>,
    /// The glob patterns it names (`test_*.py`, `src/**/*.ts`): its words with a `*` and a
    /// name's characters around it, in order and without repeats. "How many test_*.py files
    /// are in tests?" asks about those files only.
    pub globs: Vec<String>,
    /// Its [`Question::written`] words that do not name a file or a folder ([`names_a_path`]),
    /// in order, joined by spaces: a file's name says which file, not what to do with it or
    /// what to look for in it ("Is there a search in constants.js?" asks for no search).
    pub outside_paths: String,
    /// Its words shaped like the path of a file or a folder (`notes.md`, `.gitignore`,
    /// `src/app.ts`, `src/`), as written but for the dots that end a sentence, in order, once
    /// each.
    pub paths: Vec<String>,
    /// Its [`Question::written`] words that stand where a file is made or written to (see
    /// [`words_where_made`]): a file it names that does not exist yet is one it asks for only
    /// if its name stands here ("Create NOTES.md"), not when it is what goes into another file
    /// ("Put .npmrc in the .gitignore").
    pub made: Vec<String>,
    /// What it asks about, to find in a file's lines: the parts ([`lower_words`]) of the words
    /// of [`Question::outside_paths`] that are not common ([`is_common_word`]), in order, once
    /// each; each with whether its word is shaped like code (a number, `MAX_LENGTH`,
    /// `parseConfig`), which names one thing more surely than a plain word does.
    pub terms: Vec<(String, bool)>,
    /// Its words as written ([`message_words`]: split at white space and the punctuation
    /// around words), without the dots that end a sentence, the empty ones dropped, in order.
    /// A path, a file's name or the project's name is one of them.
    pub written: Vec<String>,
    /// Its words as paths, tools' purposes and defined names are compared with them
    /// ([`lower_words`]: lower-case, split at anything but a letter or digit, three characters
    /// or more), in order.
    pub words: Vec<String>,
    /// Its words as code spells them: runs of letters, digits, `_` and `$` (`parse_args`,
    /// `$http`), case kept, in order. A defined name the user spelled out is one of them.
    pub spelled: Vec<String>,
    /// What a search for it looks for: its words as code writes them ([`code_words`]), case
    /// kept, of three characters or more, neither common ([`is_common_word`]) nor only a way of
    /// asking ([`QUESTION_ONLY_WORDS`]: "where", "defined"), once each whatever their case, in
    /// order.
    pub search_words: Vec<String>,
    /// Its words that can only be names in code ([`is_code_name`]: `make_default_short_help`,
    /// `UsageError`), as written but for the dots that end a sentence, in order, once each.
    pub code_names: Vec<String>,
}

/// What a message asks for, read as one thing: the first of these its words show, in this
/// order. A message that asks for a change is a change whatever else it asks; a question that
/// is none of the project's is chat.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Form {
    /// A change to the project, or a command to run ([`Question::asks_for_a_change`]).
    Change,
    /// Where something is ([`Question::asks_where`]).
    Where,
    /// How many files there are ([`Question::asks_how_many_files`]).
    HowManyFiles,
    /// What something does or is for, or how it works: a word of [`EXPLAINING_WORDS`], or
    /// "what does … do" ("What does the parse() step do to each line?").
    Explain,
    /// A fact of the project: a question that points at it, names a file, or sounds about it
    /// ([`Question::sounds_about_the_project`]).
    LookUp,
    /// Anything else: a question a model answers from what it knows.
    #[default]
    Chat,
}

impl Form {
    /// The reading in a few words, as `lantern run` says it (the window says the same).
    pub fn describe(self) -> &'static str {
        match self {
            Form::Change => "a change or a command",
            Form::Where => "where something is",
            Form::HowManyFiles => "how many files there are",
            Form::Explain => "an explanation",
            Form::LookUp => "a fact of the project",
            Form::Chat => "a general question",
        }
    }
}

impl Question {
    /// Reads `message`.
    pub fn read(message: &str) -> Question {
        let written = written_words(message);
        let outside_paths = outside_paths(&written);
        let paths = shaped_words(&written, names_a_path);
        // Lower-case code words: how its form and the names it asks about are read.
        let lower_code = lower_code_words(message);
        let asks_for_a_change = asks_for_a_change(message);
        let points_at_the_project = points_at_the_project(&written);
        let sounds_about_the_project = sounds_about_the_project(message, !paths.is_empty());
        let asks_where = asks_where(&lower_code);
        let asks_how_many_files = asks_how_many_files(&lower_code);
        let form = if asks_for_a_change {
            Form::Change
        } else if asks_where {
            Form::Where
        } else if asks_how_many_files {
            Form::HowManyFiles
        } else if asks_to_explain(&lower_code) {
            Form::Explain
        } else if points_at_the_project || sounds_about_the_project {
            Form::LookUp
        } else {
            Form::Chat
        };
        Question {
            text: message.to_string(),
            asks_for_a_change,
            asks_to_replace: uses_a_verb_of(&written, REPLACING_VERBS),
            points_at_the_project,
            sounds_about_the_project,
            calculations: expressions_in(message),
            asks_where,
            asks_how_many_files,
            form,
            names: names_in(lower_code),
            globs: shaped_words(&written, is_glob),
            terms: terms_in(&outside_paths),
            outside_paths,
            paths,
            made: made_in(&written),
            code_names: shaped_words(&written, is_code_name),
            written,
            words: lower_words(message),
            spelled: spelled_words(message).map(str::to_string).collect(),
            search_words: search_words_in(message),
        }
    }
}

/// See [`Question::written`].
fn written_words(message: &str) -> Vec<String> {
    message_words(message)
        .map(|word| word.trim_end_matches('.'))
        .filter(|word| !word.is_empty())
        .map(str::to_string)
        .collect()
}

/// The words of `message` (as [`Question::written`] holds them) that stand where a file is
/// made or written to:
///
/// - within four words after a word of [`MAKING_WORDS`] or [`WANTING_WORDS`] not turned down
///   by a word of [`NEGATIONS`] ("Create a file NOTES.md", "Add a test file
///   tests/power.rs", "I'd like a ROADMAP.md"; not "Don't create a .env");
/// - after a word of [`DESTINATION_WORDS`], articles between, after a making word with no
///   word of what a file holds ([`CONTENT_WORDS`]) between ("Write the total to out.txt");
///
/// but not a word that itself goes to, into or in a file named a few words on, past a list
/// of names and before what a file holds ([`CONTENT_WORDS`]): that one is what is added ("Put
/// .npmrc in the .gitignore", "Add .npmrc, *.log and dist to .gitignore" make no `.npmrc`).
///
/// The agent's safety reading of every message ([`crate::pointed`]) and the grounding of a new
/// file's path both read it here.
pub fn words_where_made(message: &str) -> Vec<String> {
    made_in(&written_words(message))
}

/// See [`words_where_made`].
fn made_in(written: &[String]) -> Vec<String> {
    let words = Lowered::of(written);
    (0..written.len())
        .filter(|&at| {
            let after_making = (at.saturating_sub(4)..at).any(|m| words.makes_or_wants(m));
            let after_destination = words.after_destination(at) && words.made_before(at);
            (after_making || after_destination) && !words.goes_into_a_file(at)
        })
        .map(|at| written[at].clone())
        .collect()
}

/// A message's written words with their lower-case forms, for [`made_in`]'s tests of place.
struct Lowered<'a> {
    written: &'a [String],
    lower: Vec<String>,
}

impl<'a> Lowered<'a> {
    fn of(written: &'a [String]) -> Self {
        let lower = written.iter().map(|w| w.to_lowercase()).collect();
        Lowered { written, lower }
    }

    /// Is the word at `at` one of `list`?
    fn is(&self, list: &[&str], at: usize) -> bool {
        self.lower
            .get(at)
            .is_some_and(|w| list.contains(&w.as_str()))
    }

    /// Is the word at `at` a making word (or its third-person form) that no negation in the
    /// two words before turns down?
    fn makes(&self, at: usize) -> bool {
        self.is_one_of(MAKING_WORDS, at)
    }

    /// Is the word at `at` a making word or one of wanting, not turned down?
    fn makes_or_wants(&self, at: usize) -> bool {
        self.makes(at) || self.is_one_of(WANTING_WORDS, at)
    }

    /// Is the word at `at` one of `verbs` (or its third-person form), with no negation in the
    /// two words before?
    fn is_one_of(&self, verbs: &[&str], at: usize) -> bool {
        let word = &self.lower[at];
        let listed = verbs
            .iter()
            .any(|v| word == v || word.strip_suffix('s') == Some(v));
        listed && !(at.saturating_sub(2)..at).any(|n| self.is(NEGATIONS, n))
    }

    /// Does a making word come before `at`, with no word of what a file holds between ("Write
    /// the total to out.txt", not the link of "Create notes.md with a link to docs/guide.md")?
    fn made_before(&self, at: usize) -> bool {
        (0..at)
            .rev()
            .take_while(|&before| !self.is(CONTENT_WORDS, before))
            .any(|before| self.makes(before))
    }

    /// Does a destination word stand before `at`, articles between?
    fn after_destination(&self, at: usize) -> bool {
        let mut before = at;
        while before > 0 && self.is(ARTICLES, before - 1) {
            before -= 1;
        }
        before > 0 && self.is(DESTINATION_WORDS, before - 1)
    }

    /// Does the word at `at` go to, into or in a file named within the next few words? Names
    /// listed with it (paths, globs, code names, "and", "or") are passed over; a making word
    /// or a word of what a file holds ends the search.
    fn goes_into_a_file(&self, at: usize) -> bool {
        let listed =
            |w: &str| names_a_path(w) || is_glob(w) || is_code_name(w) || w == "and" || w == "or";
        let mut next = at + 1;
        while self.written.get(next).is_some_and(|w| listed(w)) {
            next += 1;
        }
        for to in next..(next + 3).min(self.written.len()) {
            if self.makes(to) || self.is(CONTENT_WORDS, to) {
                return false;
            }
            if self.is(DESTINATION_WORDS, to) {
                let mut file = to + 1;
                while self.is(ARTICLES, file) {
                    file += 1;
                }
                return self.written.get(file).is_some_and(|w| names_a_file(w));
            }
        }
        false
    }
}

/// Does this word name a file, not a folder: a path whose last part has a dot (`notes.md`,
/// `.gitignore`, `src/app.ts`)?
pub fn names_a_file(word: &str) -> bool {
    names_a_path(word)
        && word
            .rsplit('/')
            .next()
            .is_some_and(|name| name.contains('.'))
}

/// Do these [`Question::written`] words use a verb of `verbs`, in its base form or its third
/// person ("fixes")?
fn uses_a_verb_of(written: &[String], verbs: &[&str]) -> bool {
    written.iter().any(|word| {
        let word = word.to_lowercase();
        verbs.iter().any(|verb| {
            word == *verb
                || word.strip_suffix('s') == Some(verb)
                || word.strip_suffix("es") == Some(verb)
        })
    })
}

/// Does `message` ask for a change to the project or for a command to be run: does one of its
/// sentences ([`sentences`]) ask for one ([`sentence_asks_for_a_change`])?
fn asks_for_a_change(message: &str) -> bool {
    sentences(message)
        .into_iter()
        .any(|(words, is_question)| sentence_asks_for_a_change(&words, is_question))
}

/// The sentences of `message` (split at `?`, `!`, `;`, a line's end, and a dot before white
/// space), each as its lower-case [`Question::written`] words and whether it is a question:
/// it ends with `?` or begins with a word of [`QUESTION_OPENERS`].
fn sentences(message: &str) -> Vec<(Vec<String>, bool)> {
    let mut found = Vec::new();
    let mut start = 0;
    let mut chars = message.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let ends = match c {
            '?' | '!' | ';' | '\n' => true,
            '.' => chars.peek().is_none_or(|(_, next)| next.is_whitespace()),
            _ => false,
        };
        if ends || chars.peek().is_none() {
            let end = if ends { at } else { message.len() };
            let words: Vec<String> = written_words(&message[start..end])
                .iter()
                .map(|w| w.to_lowercase())
                .collect();
            let opens_a_question = words
                .first()
                .is_some_and(|w| QUESTION_OPENERS.contains(&w.as_str()));
            if !words.is_empty() {
                found.push((words, c == '?' || opens_a_question));
            }
            start = at + c.len_utf8();
        }
    }
    found
}

/// Does a sentence of these lower-case words ask for a change: a verb of [`CHANGE_VERBS`] in
/// its base form where it is asked for ([`asked_for`]), or, in a statement, an obligation on
/// the project ("The limit should be 200", "it needs changing") or a wish for a thing changed
/// ("I'd like it capped at 500")?
fn sentence_asks_for_a_change(words: &[String], is_question: bool) -> bool {
    let verb_asked = (0..words.len())
        .any(|at| CHANGE_VERBS.contains(&words[at].as_str()) && asked_for(words, at, is_question));
    verb_asked || (!is_question && (obliges(words) || wishes_changed(words)))
}

/// Is the verb of change at `at` asked for? Not after a word of [`PASSIVE_WORDS`] ("is set
/// to"), nor as "make up" or "add up" (of what a thing is made of, or a sum), nor with "I" or
/// "we" as its subject ("Before I change it, …"), nor after a "to" that no wish or request
/// comes before ("configured to run on"). In a question, only when asked of the reader: its
/// first word, or after "you" or "please" ("Could you please fix it?"), not the subject of
/// the question ("What does it set?").
fn asked_for(words: &[String], at: usize, is_question: bool) -> bool {
    let before = |back: usize| at.checked_sub(back).map(|i| words[i].as_str());
    let is = |word: Option<&str>, list: &[&str]| word.is_some_and(|w| list.contains(&w));
    let idiom = matches!(words[at].as_str(), "make" | "add")
        && words.get(at + 1).is_some_and(|w| w == "up");
    let passive = is(before(1), PASSIVE_WORDS);
    let own_subject = is(before(1), &["i", "we"]);
    let to_without_a_wish = before(1) == Some("to")
        && !is(before(2), WANTING_WORDS)
        && !is(before(2), &["you", "please"]);
    if idiom || passive || own_subject || to_without_a_wish {
        return false;
    }
    let asked_of_the_reader =
        at == 0 || is(before(1), &["please", "you"]) || is(before(2), &["you"]);
    !is_question || asked_of_the_reader
}

/// Does a statement of these words oblige the project to something: a word of
/// [`OBLIGATION_WORDS`] not after "I", then ("to", "not" between) a word of [`STATE_VERBS`]
/// ("should be called minus", "has to become 512"), or "needs" and the "-ing" form of a verb of
/// change ("needs changing")?
fn obliges(words: &[String]) -> bool {
    (0..words.len()).any(|at| {
        if !OBLIGATION_WORDS.contains(&words[at].as_str()) || at > 0 && words[at - 1] == "i" {
            return false;
        }
        let mut next = at + 1;
        while words.get(next).is_some_and(|w| w == "to" || w == "not") {
            next += 1;
        }
        let Some(verb) = words.get(next) else {
            return false;
        };
        let plain = !matches!(words[at].as_str(), "has" | "have" | "ought") || next > at + 1;
        let gerund = words[at] == "needs" && is_form_of_a_change_verb(verb, &["ing"]);
        (plain && STATE_VERBS.contains(&verb.as_str())) || gerund
    })
}

/// Does a statement of these words wish for a thing changed: a word of [`WANTING_WORDS`], then
/// within six words the past participle of a verb of [`CHANGE_VERBS`] ("I'd like it capped at
/// 500", "I'd like its default raised from 45 to 60")?
fn wishes_changed(words: &[String]) -> bool {
    (0..words.len()).any(|at| {
        WANTING_WORDS.contains(&words[at].as_str())
            && words[at + 1..]
                .iter()
                .take(6)
                .any(|w| is_form_of_a_change_verb(w, &["ed", "d"]))
    })
}

/// Is `word` a verb of [`CHANGE_VERBS`] with one of `endings` (its last consonant doubled
/// before it, as in "capped", "setting")?
fn is_form_of_a_change_verb(word: &str, endings: &[&str]) -> bool {
    endings.iter().any(|ending| {
        word.strip_suffix(ending).is_some_and(|stem| {
            let doubled = stem.is_ascii()
                && stem.len() > 2
                && stem.as_bytes()[stem.len() - 1] == stem.as_bytes()[stem.len() - 2];
            let undoubled = &stem[..stem.len() - usize::from(doubled)];
            CHANGE_VERBS.contains(&stem)
                || CHANGE_VERBS.contains(&undoubled)
                || CHANGE_VERBS.contains(&format!("{stem}e").as_str())
        })
    })
}

/// Does a message of these [`Question::written`] words point at the project it is asked in:
/// "this project", "our repo", "my package", or "here" as its last word ("What does app.use()
/// do here?")? A question so put is about the project's files, whatever a model would answer
/// from memory.
fn points_at_the_project(written: &[String]) -> bool {
    let words: Vec<String> = written.iter().map(|w| w.to_lowercase()).collect();
    let here = words.len() > 1 && words.last().is_some_and(|w| w == "here");
    here || words.windows(2).any(|pair| {
        POINTING.contains(&pair[0].as_str()) && PROJECT_NOUNS.contains(&pair[1].as_str())
    })
}

/// See [`Question::sounds_about_the_project`]; `has_path` is whether the message names a path.
fn sounds_about_the_project(message: &str, has_path: bool) -> bool {
    let lower = message.to_lowercase();
    let words: Vec<&str> = alphanumeric_words(&lower).collect();
    // "Add … to …" puts something into the project ("add a test to the suite"); "how do I add
    // two numbers" does not.
    let adds_to = words
        .iter()
        .position(|w| *w == "add")
        .is_some_and(|at| words[at + 1..].contains(&"to"));
    has_path || adds_to || words.iter().any(|w| PROJECT_QUESTION_WORDS.contains(w))
}

/// Does a question of these lower-case code words ask how many files there are: "how many", a
/// few words ending in "file(s)", then the question's end or a word of [`AFTER_FILES`]?
fn asks_how_many_files(words: &[String]) -> bool {
    let Some(at) = words.windows(2).position(|w| w == ["how", "many"]) else {
        return false;
    };
    let rest = &words[at + 2..];
    let Some(noun) = rest
        .iter()
        .take(4)
        .position(|w| w == "file" || w == "files")
    else {
        return false;
    };
    if words
        .iter()
        .any(|w| w == "did" || w == "changed" || w == "edited")
    {
        return false;
    }
    rest.get(noun + 1)
        .is_none_or(|next| AFTER_FILES.contains(&next.as_str()))
}

/// Does a question of these lower-case code words ask where something is ("Where is…", "In
/// which file…", "What module…", "Which source file…", "Locate…"), and not where it is used
/// ("Where is echo called?")?
fn asks_where(words: &[String]) -> bool {
    // A place noun right after "which" or "what", or one word later ("which source file").
    let asks_which_place = |at: usize| {
        words[at + 1..]
            .iter()
            .take(2)
            .any(|w| PLACE_NOUNS.contains(&w.as_str()))
    };
    let asks = words.iter().any(|w| w == "where" || w == "locate")
        || (0..words.len())
            .any(|i| (words[i] == "which" || words[i] == "what") && asks_which_place(i));
    asks && !words.iter().any(|w| USE_WORDS.contains(&w.as_str()))
}

/// Does a question of these lower-case code words ask for an explanation: a word of
/// [`EXPLAINING_WORDS`] ("Explain clean"), "how" before a word of [`HOW_IT_IS`] ("How is it
/// tested?"), or "what does … do" ("What does render() do with its props?")?
fn asks_to_explain(words: &[String]) -> bool {
    let what_does_it_do = words.first().is_some_and(|w| w == "what")
        && words
            .iter()
            .position(|w| w == "does")
            .is_some_and(|at| words[at + 1..].iter().any(|w| w == "do"));
    let how_it_is = words
        .windows(2)
        .any(|pair| pair[0] == "how" && HOW_IT_IS.contains(&pair[1].as_str()));
    what_does_it_do || how_it_is || words.iter().any(|w| EXPLAINING_WORDS.contains(&w.as_str()))
}

/// See [`Question::names`].
fn names_in(lower_code: Vec<String>) -> Vec<String> {
    let mut words: Vec<String> = lower_code
        .into_iter()
        .filter(|w| w.chars().count() >= 3 && !QUESTION_FILLER.contains(&w.as_str()))
        .collect();
    words.sort();
    words.dedup();
    words
}

/// The [`Question::written`] words of the shape `is`, in order, once each (the globs, paths
/// and code names a message names).
fn shaped_words(written: &[String], is: fn(&str) -> bool) -> Vec<String> {
    let mut shaped: Vec<String> = Vec::new();
    for word in written {
        if is(word) && !shaped.contains(word) {
            shaped.push(word.clone());
        }
    }
    shaped
}

/// Is this word a glob pattern: a `*` with a name's characters around it (see
/// [`Question::globs`])?
fn is_glob(word: &str) -> bool {
    word.contains('*')
        && word.chars().any(|c| c.is_alphanumeric())
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || "_-./*".contains(c))
}

/// See [`Question::outside_paths`].
fn outside_paths(written: &[String]) -> String {
    written
        .iter()
        .filter(|w| !names_a_path(w))
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ")
}

/// See [`Question::terms`]: read from the message's [`Question::outside_paths`].
fn terms_in(outside_paths: &str) -> Vec<(String, bool)> {
    let mut terms: Vec<(String, bool)> = Vec::new();
    for word in code_words(outside_paths) {
        let code = word.chars().any(|c| c.is_ascii_digit() || c == '_')
            || word.chars().skip(1).any(char::is_uppercase);
        for part in lower_words(word) {
            if !is_common_word(&part) && !terms.iter().any(|(t, _)| *t == part) {
                terms.push((part, code));
            }
        }
    }
    terms
}

/// See [`Question::search_words`].
fn search_words_in(message: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    for word in code_words(message).filter(|w| w.chars().count() >= 3) {
        let lower = word.to_lowercase();
        if !is_common_word(&lower)
            && !QUESTION_ONLY_WORDS.contains(&lower.as_str())
            && !seen.contains(&lower)
        {
            words.push(word.to_string());
        }
        seen.push(lower);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_asks_where_when_it_asks_for_a_place_not_for_uses() {
        for asking in [
            "Where does the Shelf class live?",
            "What module has the parse_row helper?",
            "In which files is Shelf declared?",
            "In which source file is Shelf.add implemented?",
            "Please locate the code of parse_row.",
        ] {
            assert!(Question::read(asking).asks_where, "{asking}");
        }
        for not_asking in [
            "Where is parse_row called?",
            "Which version is this?",
            "What does the module do?",
            "Which version does the manifest file give?",
        ] {
            assert!(!Question::read(not_asking).asks_where, "{not_asking}");
        }
    }

    #[test]
    fn a_search_looks_for_what_is_asked_about_as_it_was_written() {
        let asked = Question::read("Where is parseConfig defined? Find parseconfig and MAX_SIZE.");
        assert_eq!(asked.search_words, ["parseConfig", "MAX_SIZE"]);
        assert_eq!(asked.spelled[..3], ["Where", "is", "parseConfig"]);
        assert_eq!(asked.words[..3], ["where", "parseconfig", "defined"]);
        // Only code writes `parseConfig` and `MAX_SIZE`; "Where" and "Find" are prose.
        assert_eq!(asked.code_names, ["parseConfig", "MAX_SIZE"]);
    }

    #[test]
    fn the_words_that_name_files_are_apart_from_what_is_asked() {
        let asked = Question::read("Is MAX_SIZE set in config/limits.toml, or in .env? See src/.");
        assert_eq!(asked.paths, ["config/limits.toml", ".env", "src/"]);
        let outside: Vec<&str> = asked.outside_paths.split_whitespace().collect();
        assert_eq!(outside, ["Is", "MAX_SIZE", "set", "in", "or", "in", "See"]);
        let terms: Vec<(&str, bool)> = asked.terms.iter().map(|(t, c)| (t.as_str(), *c)).collect();
        // `max` and `size` are parts of a name written as code; "is", "in", "or" are common.
        assert_eq!(
            terms,
            [
                ("max", true),
                ("size", true),
                ("set", false),
                ("see", false)
            ]
        );
    }

    #[test]
    fn a_new_file_is_asked_for_where_its_name_stands_to_be_made() {
        let made = |text: &str| -> Vec<String> {
            let asked = Question::read(text);
            asked
                .paths
                .into_iter()
                .filter(|p| asked.made.contains(p))
                .collect()
        };
        assert_eq!(
            made("Please write a file TODO.txt listing the open bugs."),
            ["TODO.txt"]
        );
        assert_eq!(
            made("Save the results as out/report.csv."),
            ["out/report.csv"]
        );
        assert_eq!(made("We need an .editorconfig here."), [".editorconfig"]);
        assert_eq!(
            made("Create notes.md with a link to docs/guide.md."),
            ["notes.md"]
        );
        assert_eq!(
            made("Put a new page docs/setup.md in the docs."),
            ["docs/setup.md"]
        );
        // What goes into a file named after it is the content, not a file to make.
        assert_eq!(
            made("Add *.tmp to the .dockerignore, please."),
            [".dockerignore"]
        );
        assert_eq!(
            made("Add a rule for coverage.xml into my .gitignore."),
            [".gitignore"]
        );
        assert_eq!(
            made("Add .npmrc, *.tgz and node_modules to the .dockerignore."),
            [".dockerignore"]
        );
        assert_eq!(
            made("Put coverage.xml in web/.gitignore."),
            ["web/.gitignore"]
        );
        // A file named without a making word, or with one turned down, is one asked about.
        assert!(made("I keep my secrets in secrets.toml; which key holds the token?").is_empty());
        assert!(made("Does Cargo.lock pin serde?").is_empty());
        assert!(made("Is there a .nvmrc?").is_empty());
        assert!(made("Please don't create a .env file.").is_empty());
        // Wanting names a file close by, not where something goes.
        assert!(made("We want to log this in server.log, right?").is_empty());
    }

    #[test]
    fn common_words_are_not_names() {
        assert_eq!(
            Question::read("What is the max_width of the banner?").names,
            ["banner", "max_width"]
        );
    }

    #[test]
    fn a_message_names_globs_by_words_with_a_star() {
        assert_eq!(
            Question::read("How many test_*.py files are in tests? And `src/**/*.ts`, test_*.py.")
                .globs,
            ["test_*.py", "src/**/*.ts"]
        );
        // A lone star is arithmetic or emphasis, not a pattern.
        assert!(Question::read("What is 2 * 3? ** and *, or (*)")
            .globs
            .is_empty());
    }

    #[test]
    fn a_message_is_read_as_one_form_the_first_its_words_show() {
        for (message, form) in [
            ("Rename the helper, then say where it lives.", Form::Change),
            ("Run the linter please", Form::Change),
            ("In which module does the router live?", Form::Where),
            (
                "So, how many files exist under assets/ now?",
                Form::HowManyFiles,
            ),
            (
                "What does the draw() hook actually do when called?",
                Form::Explain,
            ),
            ("How is the cache invalidated?", Form::Explain),
            ("Why does the parser reject tabs?", Form::Explain),
            ("What licence is in LICENSE.txt?", Form::LookUp),
            ("Which licence does our repo use?", Form::LookUp),
            (
                "How many benchmarks ship with this repository?",
                Form::LookUp,
            ),
            ("How long is a light year?", Form::Chat),
            ("What is the capital of France?", Form::Chat),
        ] {
            assert_eq!(Question::read(message).form, form, "{message}");
        }
    }

    #[test]
    fn a_message_asks_for_a_change_by_a_verb_of_doing() {
        for yes in [
            "Set package.json's version to 3.1.4.",
            "popEntry drops the others. Can you fix it?",
            "Add a .gitignore that ignores logs.",
            "Run the tests.",
            "Lower the pool_size setting to 150.",
        ] {
            assert!(Question::read(yes).asks_for_a_change, "{yes}");
        }
        for no in [
            "Which command-line tool comes with this package?",
            "Where does the slugify function live?",
            "What version does Cargo.toml give the crate?",
            "When was the LRU cache added?",
            "Count the .js files inside classes.",
            "Explain clean in functions/clean.js.",
        ] {
            assert!(!Question::read(no).asks_for_a_change, "{no}");
        }
    }

    #[test]
    fn a_change_is_asked_by_an_obligation_a_wish_or_a_request_not_by_a_verb_a_question_is_about() {
        for yes in [
            "The timeout should be 30 seconds.",
            "The retry helper must be broken, it never retries.",
            "The banner text needs updating.",
            "I'd like the page size lowered to 25.",
            "Can you repair the tokenizer for me?",
            "Where is the banner? Rename it to header.",
        ] {
            assert!(Question::read(yes).asks_for_a_change, "{yes}");
        }
        for no in [
            "Which verbosity has the daemon been set to?",
            "Which function does the router call to add a header?",
            "How do I run the linter?",
            "Do three colours make up a flag?",
            "What does the config loader set as its default?",
            "Before I rename it, which files use parse_args?",
            "The cron job seems scheduled to run hourly, correct?",
        ] {
            assert!(!Question::read(no).asks_for_a_change, "{no}");
        }
    }

    #[test]
    fn a_message_asks_to_replace_by_a_verb_of_changing_or_taking_out() {
        for yes in [
            "Add a retries flag and remove the old one.",
            "Replace the title of the readme.",
            "Which file adds the header?  Fix it.",
            "The list of authors is a mess; tidy it up.",
            "This switches the log level wrongly.",
        ] {
            assert!(Question::read(yes).asks_to_replace, "{yes}");
        }
        for no in [
            "Put node_modules/ in the ignore file on a line of its own.",
            "Please append a changelog entry for 2.0.",
            "Make git skip the scratch files.",
            "Where is the cache defined?",
        ] {
            assert!(!Question::read(no).asks_to_replace, "{no}");
        }
    }

    #[test]
    fn a_message_points_at_the_project_by_a_pointing_word_and_a_project_noun_or_here() {
        for yes in [
            "Summarise this project for me.",
            "Which license does our repo use?",
            "How is my package tested",
            "What does the render() call do here?",
            "Is there a changelog in this repository?",
        ] {
            assert!(Question::read(yes).points_at_the_project, "{yes}");
        }
        for no in [
            "Here is a question: what is a closure?",
            "I am new here, what is a closure?",
            "Explain this code: x => x * 2",
            "What does HTTP stand for?",
            "How do I write this in Python?",
            "Which project management tools are popular?",
        ] {
            assert!(!Question::read(no).points_at_the_project, "{no}");
        }
    }

    #[test]
    fn a_message_sounds_about_the_project_by_a_file_a_project_word_or_adding_to_something() {
        for yes in [
            "What's in package.json?",
            "open src/main.rs",
            "Where is parse_config defined?",
            "fix the bug in lib.rs",
            "What time is it?",
            "Add a retry count to the client settings.",
            "Bump the version to 2.0.",
        ] {
            assert!(Question::read(yes).sounds_about_the_project, "{yes}");
        }
        for no in [
            "What is the capital of France?",
            "Say hello.",
            "What is 2.5 times 4?",
            "Who wrote Hamlet?",
            "How do I add two numbers in Python?",
        ] {
            assert!(!Question::read(no).sounds_about_the_project, "{no}");
        }
    }
}
