//! How Lantern reads text as words, and the English word lists its levers use: every way it
//! splits a message, a line of code, a path or a reply into words, and every list of words it
//! matches them against, in one place.
//!
//! The splitters differ on purpose, each for what it reads: a line of code keeps `_` inside a
//! word (`MAX_LENGTH`), a message keeps the dots and slashes of a path (`src/app.py`), a reply
//! being copied ends a word at any punctuation a rendered result holds. Each says which.
//!
//! The lists were written by hand from how users put questions and requests in English, each
//! for the one rule named in its comment; none names a project, a file or an answer.
//!
//! ```
//! use lantern_core::words::{code_words, message_words, stem};
//! assert_eq!(code_words("if MAX_LENGTH > 2:").collect::<Vec<_>>(), ["if", "MAX_LENGTH", "2"]);
//! assert!(message_words("Open src/app.py, please").any(|w| w == "src/app.py"));
//! assert_eq!(stem("defined"), "defin");
//! ```

// ---- splitters ----

/// The words of a line of code as it writes them: runs of letters, digits and `_`.
pub fn code_words(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|t| !t.is_empty())
}

/// The words of a text as code spells names, JavaScript's included: runs of letters, digits,
/// `_` and `$` (`parse_args`, `$http`), case kept.
pub fn spelled_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .filter(|t| !t.is_empty())
}

/// The lower-case words of a line of code ([`code_words`]).
pub fn lower_code_words(line: &str) -> Vec<String> {
    code_words(line).map(str::to_lowercase).collect()
}

/// The words of a text split at anything but a letter or digit (`read_file` is `read`,
/// `file`; `v2.0` is `v2`, `0`).
pub fn alphanumeric_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// Lower-case [`alphanumeric_words`] of three letters or more: the way a question, tools'
/// descriptions and paths are compared.
pub fn lower_words(text: &str) -> Vec<String> {
    alphanumeric_words(text)
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .collect()
}

/// A word reduced to what its plural and past forms share ("files" and "file", "defined" and
/// "define"), for comparing a question with descriptions.
pub fn stem(word: &str) -> &str {
    for ending in ["ing", "ed", "es", "s", "e"] {
        if let Some(stem) = word.strip_suffix(ending) {
            if stem.len() >= 3 {
                return stem;
            }
        }
    }
    word
}

/// The words of a message, split at spaces, quotes and punctuation that cannot be part of a
/// path (a word may keep a final `.`, as in "…in notes.md.").
pub fn message_words(message: &str) -> impl Iterator<Item = &str> {
    message.split(|c: char| c.is_whitespace() || "\"'`,;:()?!".contains(c))
}

/// Does this word of a message name a file (`notes.md`, `.gitignore`, `src/app.ts`) or a
/// folder (`src/`)?
/// Version numbers (`1.2`) do not.
pub fn names_a_path(word: &str) -> bool {
    let word = word.trim_end_matches('.');
    // A dotfile, at the top (`.gitignore`) or in a folder (`web/.env`, `./.npmrc`).
    let name = word.rsplit('/').next().unwrap_or(word);
    let dotfile = name.len() > 1
        && name.starts_with('.')
        && name[1..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_".contains(c));
    if dotfile {
        return true;
    }
    match word.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && !ext.chars().all(|c| c.is_ascii_digit())
        }
        None => word.contains('/') && word.len() > 1,
    }
}

/// Can this word only be a name in code? One with an underscore between letters or at its
/// start (`make_default_short_help`, `_posixify`, `MAX_LENGTH`), a lower-case start and a
/// capital inside (`applyDiscount`), or two capitals with lower case between (`UsageError`).
/// Words of prose (`cache`, `HTTP`, `Python`) are not.
pub fn is_code_name(word: &str) -> bool {
    let chars: Vec<char> = word.chars().collect();
    if chars.len() < 4 || !chars.iter().all(|c| c.is_alphanumeric() || *c == '_') {
        return false;
    }
    let letters = chars.iter().filter(|c| c.is_alphabetic()).count();
    let underscore = chars.contains(&'_') && letters >= 3;
    let lower_camel = chars[0].is_lowercase() && chars.iter().any(|c| c.is_uppercase());
    let upper_camel = chars[0].is_uppercase()
        && chars
            .windows(2)
            .any(|w| w[0].is_lowercase() && w[1].is_uppercase());
    underscore || lower_camel || upper_camel
}

/// Can this character be part of a path as an answer writes one?
pub fn in_path(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_./-".contains(c)
}

/// The paths a text may hold, as an answer or a result writes them: its runs of characters
/// that can be part of a path ([`in_path`]).
pub fn path_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !in_path(c)).filter(|w| !w.is_empty())
}

/// Does this character end a word, in prose and in a rendered result alike (a reply that
/// copies a fact from a result)?
pub fn ends_a_word(c: char) -> bool {
    c.is_whitespace() || "\"'`,;:()[]{}<>=*|\\".contains(c)
}

/// Does this character stand between the words of an edit request or of the text it edits,
/// in code and in prose (JSON escapes count: `\n` ends a word)?
pub fn between_edit_words(c: char) -> bool {
    !(c.is_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// The words of an edit request or of the text it edits (dots, dashes and underscores kept
/// inside: `7.6.3`, `max-age`), without a trailing dot.
pub fn edit_words(text: &str) -> Vec<&str> {
    text.split(between_edit_words)
        .map(|w| w.trim_end_matches(['.', '-']))
        .filter(|w| !w.is_empty())
        .collect()
}

// ---- word lists ----

/// Words too common in questions to say what a line of a result is about (the focusing of
/// results on the question's words): English function words, question words, and the words a
/// question about code asks with ("defined", "function", "value").
pub const QUESTION_FILLER: &[&str] = &[
    "the", "and", "for", "what", "which", "where", "when", "who", "how", "why", "this", "that",
    "these", "those", "does", "did", "done", "is", "are", "was", "were", "has", "have", "had",
    "with", "from", "into", "about", "there", "here", "its", "it's", "can", "could", "would",
    "should", "will", "use", "used", "uses", "tell", "show", "give", "find", "file", "files",
    "project", "code", "please", "me", "you", "your", "our", "any", "all", "some", "defined",
    "define", "defines", "function", "class", "value", "values", "name", "names", "exact",
    "number", "need", "know", "want", "set", "get", "one", "many", "much",
];

/// Words that say nothing about which tool is meant (ranking the tools by the question's
/// words): English function words, and the words every tool's description shares.
const TOOL_FILLER: &[&str] = &[
    "the",
    "and",
    "for",
    "with",
    "what",
    "which",
    "where",
    "how",
    "when",
    "who",
    "why",
    "this",
    "that",
    "these",
    "those",
    "are",
    "was",
    "were",
    "does",
    "did",
    "its",
    "all",
    "any",
    "you",
    "your",
    "can",
    "from",
    "into",
    "there",
    "here",
    "has",
    "have",
    "use",
    "not",
    "one",
    "many",
    "much",
    "tell",
    "show",
    "give",
    "please",
    "about",
    "our",
    "their",
    "them",
    "then",
    "than",
    "optionally",
    "returns",
    "workspace",
    "project",
];

/// Is `word` (lower case) one of `TOOL_FILLER`?
pub fn is_common_word(word: &str) -> bool {
    TOOL_FILLER.contains(&word)
}

/// Words a question uses to ask, never what it asks about (the question's words a grounded
/// argument is scored with): the verbs and nouns of "where is … defined", "find the file …".
pub const QUESTION_ONLY_WORDS: &[&str] = &[
    "defined",
    "define",
    "defines",
    "implemented",
    "declared",
    "file",
    "files",
    "folder",
    "function",
    "class",
    "method",
    "variable",
    "constant",
    "find",
    "search",
    "look",
    "code",
    "value",
    "contains",
    "located",
    "list",
    "called",
    "name",
];

/// Words that, followed by a name, define it in the common languages (the line rule for
/// languages the code index does not read): the defining keywords of JavaScript, Python, Rust,
/// TypeScript and Go.
pub const DEFINING_WORDS: &[&str] = &[
    "function",
    "class",
    "def",
    "fn",
    "struct",
    "enum",
    "trait",
    "interface",
    "type",
    "const",
    "let",
    "var",
    "module",
];

/// Verbs by which a message asks for a change to the project's files or for something to be run
/// in it, in their base and third-person forms. Past forms are left out: "Where is it defined,
/// and when was it added?" asks nothing to be done.
pub const CHANGE_VERBS: &[&str] = &[
    "add", "append", "apply", "build", "bump", "cap", "change", "compile", "create", "decrease",
    "delete", "edit", "execute", "fix", "increase", "insert", "lower", "make", "modify", "move",
    "put", "raise", "refactor", "remove", "rename", "repair", "replace", "reset", "rewrite", "run",
    "save", "set", "update", "upgrade", "write",
];

/// Words that open a question rather than a request when they begin a sentence ("What does it
/// set?", "Could you fix it?"): English question words and the auxiliaries that invert a
/// question. In such a sentence a verb of change asks for one only when it is asked of the
/// reader ("Could you fix it?"), not when it is what the question is about.
pub const QUESTION_OPENERS: &[&str] = &[
    "what", "which", "where", "who", "whom", "whose", "when", "why", "how", "is", "are", "was",
    "were", "do", "does", "did", "can", "could", "would", "will", "should", "may", "shall", "has",
    "have",
];

/// Forms of "be" and "get" (and the `s` of "it's") before a verb's participle: "is set to",
/// "gets added", "it's configured". A verb after one says what is, not what to do.
pub const PASSIVE_WORDS: &[&str] = &[
    "is", "are", "was", "were", "be", "been", "being", "s", "get", "gets", "got", "getting",
];

/// Words by which a statement says what the project must become ("The limit should be 200",
/// "MAX_LENGTH has to become 512", "it needs changing"): modals of obligation.
pub const OBLIGATION_WORDS: &[&str] = &["should", "must", "needs", "ought", "has", "have"];

/// The verbs that follow a word of [`OBLIGATION_WORDS`] when a statement asks for a change
/// ("should be called minus", "has to become 512", "should say 7.7.0", "should allow only 200",
/// "must be wrong").
pub const STATE_VERBS: &[&str] = &[
    "be", "become", "say", "read", "allow", "use", "hold", "stay",
];

/// Words by which a message asks how something works or what it is for ("Explain clean",
/// "Describe the cache", "Summarise this project", "How is my package tested", "Why does it
/// fail?"): everyday English verbs of explaining, and the "why" and "how" that open such a
/// question ("how" only before a word of [`HOW_IT_IS`]: "How many", "How long" ask a number).
pub const EXPLAINING_WORDS: &[&str] = &["explain", "describe", "summarise", "summarize", "why"];

/// The words after "how" in a question of how something works or is done ("How does it
/// work?", "How is it tested?", "How do I run it?"), not of how much of it there is.
pub const HOW_IT_IS: &[&str] = &["do", "does", "did", "is", "are", "can", "should", "would"];

/// Verbs by which a message asks to change or take out what is there ("Bump the version",
/// "fix the check", "remove the debug line", "tidy the list"), in their base forms: the verbs of
/// [`CHANGE_VERBS`] that do, and more of everyday editing English. A message with none of them
/// ("Add *.tmp to the ignore list", "make git skip the logs") asks that every line stay.
pub const REPLACING_VERBS: &[&str] = &[
    "adjust",
    "apply",
    "bump",
    "change",
    "clean",
    "clear",
    "comment",
    "convert",
    "correct",
    "decrease",
    "delete",
    "disable",
    "drop",
    "edit",
    "enable",
    "erase",
    "fix",
    "format",
    "improve",
    "increase",
    "lower",
    "migrate",
    "modify",
    "move",
    "raise",
    "refactor",
    "remove",
    "rename",
    "reorder",
    "replace",
    "reset",
    "revise",
    "rewrite",
    "reword",
    "set",
    "shorten",
    "simplify",
    "sort",
    "strip",
    "swap",
    "switch",
    "tidy",
    "toggle",
    "translate",
    "trim",
    "turn",
    "tweak",
    "uncomment",
    "update",
    "upgrade",
];

/// Verbs after which a file's name is one to make or write to ("Create notes.md", "write it
/// to out.txt", "a new CHANGELOG.md"), in their base forms: the making verbs of
/// [`CHANGE_VERBS`], the verbs of copying and exporting a file, and the adjective "new".
pub const MAKING_WORDS: &[&str] = &[
    "add",
    "copy",
    "create",
    "draft",
    "dump",
    "export",
    "generate",
    "init",
    "initialize",
    "make",
    "move",
    "new",
    "output",
    "put",
    "rename",
    "save",
    "scaffold",
    "start",
    "store",
    "touch",
    "write",
];

/// Verbs of wanting, after which a file's name close by is one to make ("I'd like a NOTES.md",
/// "we need an .editorconfig"); they say nothing of where what follows goes ("I need to pin
/// this in requirements.txt" makes no file).
pub const WANTING_WORDS: &[&str] = &["like", "need", "want"];

/// Words before a making word that turn it down ("don't create", "never write", "no new"; a
/// contraction's `t` is what is left of "n't" once a message is split at its quotes).
pub const NEGATIONS: &[&str] = &["not", "never", "no", "t", "dont", "without"];

/// Words after which a file's name says where something goes: "write it *to* out.txt", "save
/// it *as* notes.md", "add dist/ *to* .npmignore", "put it *in* .gitignore".
pub const DESTINATION_WORDS: &[&str] = &["to", "into", "as", "in"];

/// Words after a file's name that begin what the file holds ("Create notes.md *with* a link to
/// docs/guide.md"): a destination after them is the content's, not the file's.
pub const CONTENT_WORDS: &[&str] = &[
    "with",
    "that",
    "which",
    "containing",
    "saying",
    "listing",
    "holding",
];

/// English articles and the determiners that stand where one would ("to *the* .npmignore",
/// "into *my* notes.md").
pub const ARTICLES: &[&str] = &["a", "an", "the", "my", "our", "this", "that", "your"];

/// Words of an edit request that say what to do, never what to write (the words an edit's new
/// text may not be taken from): the change verbs, where an edit goes, and what it names.
pub const EDIT_WORDS: &[&str] = &[
    "rename", "change", "set", "raise", "lower", "increase", "decrease", "bump", "fix", "replace",
    "update", "add", "remove", "delete", "insert", "line", "lines", "after", "before", "right",
    "left", "under", "above", "below", "from", "into", "the", "and", "with", "value", "default",
    "function", "method", "class", "variable", "file", "please", "make", "bug", "bugs", "error",
    "wrong", "issue",
];

/// Nouns a message calls the project it is asked in by ("this project", "our repo").
pub const PROJECT_NOUNS: &[&str] = &[
    "app",
    "application",
    "codebase",
    "crate",
    "directory",
    "folder",
    "library",
    "module",
    "package",
    "program",
    "project",
    "repo",
    "repository",
    "workspace",
];

/// Words that mark a message as being about the project, its files or the tools' subjects
/// (see [`crate::question::Question::sounds_about_the_project`], the local engine's lexical
/// prior): what files and code are called, what is done to them, and the subjects of the
/// clock and task tools.
pub const PROJECT_QUESTION_WORDS: &[&str] = &[
    "file",
    "files",
    "folder",
    "directory",
    "project",
    "repo",
    "code",
    "codebase",
    "function",
    "method",
    "class",
    "struct",
    "module",
    "defined",
    "definition",
    "source",
    "src",
    "readme",
    "config",
    "package",
    "dependency",
    "dependencies",
    "version",
    "bug",
    "fix",
    "error",
    "errors",
    "test",
    "tests",
    "todo",
    "task",
    "tasks",
    "time",
    "date",
    "today",
    "search",
    "find",
    "list",
    "read",
    "open",
    "write",
    "create",
    "edit",
    "change",
    "rename",
    "replace",
    "insert",
    "bump",
    "raise",
    "line",
];

/// Words that, before a project noun, point at the one project at hand.
pub const POINTING: &[&str] = &["this", "our", "my"];

/// Words that may follow "how many … files" when the question asks how many there are ("How
/// many Python files are in src?"), and not how many do something ("How many files import
/// lodash?", "How many files did you change?").
pub const AFTER_FILES: &[&str] = &[
    "are", "is", "exist", "does", "do", "in", "under", "inside", "there", "of", "at", "here",
];

/// What a "which …" or "what …" question asks for when it asks where something is: the
/// units a project's code is kept in, as users of its languages name them ("Which file…",
/// "What module…").
pub const PLACE_NOUNS: &[&str] = &["file", "files", "module", "modules"];

/// Words by which a "where" question asks where a name is used rather than defined.
pub const USE_WORDS: &[&str] = &[
    "used",
    "use",
    "uses",
    "called",
    "call",
    "calls",
    "imported",
    "import",
    "imports",
    "referenced",
    "mentioned",
    "mention",
    "mentions",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_splitter_keeps_what_its_text_writes_inside_a_word() {
        let line = "const MAX_AGE = parse('7.6.3', src/app.py)";
        assert_eq!(
            code_words(line).collect::<Vec<_>>(),
            ["const", "MAX_AGE", "parse", "7", "6", "3", "src", "app", "py"]
        );
        assert_eq!(
            lower_words(line),
            ["const", "max", "age", "parse", "src", "app"]
        );
        assert_eq!(
            edit_words(line),
            ["const", "MAX_AGE", "parse", "7.6.3", "src", "app.py"]
        );
        assert!(message_words(line).any(|w| w == "src/app.py"));
        assert!(line.split(ends_a_word).any(|w| w == "src/app.py"));
        assert!("src/app.py".chars().all(in_path));
        assert!(path_words(line).any(|w| w == "src/app.py"));
    }

    #[test]
    fn no_list_repeats_a_word_or_holds_upper_case() {
        let lists = [
            QUESTION_FILLER,
            TOOL_FILLER,
            QUESTION_ONLY_WORDS,
            DEFINING_WORDS,
            CHANGE_VERBS,
            EDIT_WORDS,
            PROJECT_NOUNS,
            PROJECT_QUESTION_WORDS,
            POINTING,
            AFTER_FILES,
            USE_WORDS,
        ];
        for list in lists {
            let mut sorted = list.to_vec();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), list.len(), "{list:?}");
            assert!(list.iter().all(|w| *w == w.to_lowercase()), "{list:?}");
        }
    }
}
