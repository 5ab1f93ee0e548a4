//! What a message asks of the request's workspace: whether it names the project itself, by the
//! name its manifest gives (`spark`, `tallyho`) or by pointing at it ("this project", "our
//! repo", "…here?"), a file, or something the workspace defines, which makes it a question
//! about the project; and from that, whether the first step must be a call.
//!
//! These are cheap tests the backends weigh with the model's own scores: a tiny model may
//! answer "Which Python does spark require?" from memory, though the project holds the
//! answer. What the message's words alone say is read once, into a [`Question`].

use crate::model::{FileTexts, GenerateRequest};
use crate::question::Question;

/// The manifests at the workspace's root whose name is the project's, and how to read it.
const MANIFESTS: &[(&str, Manifest)] = &[
    ("package.json", Manifest::Json),
    (
        "pyproject.toml",
        Manifest::Table(&["project", "tool.poetry"]),
    ),
    ("setup.cfg", Manifest::Table(&["metadata"])),
    ("Cargo.toml", Manifest::Table(&["package"])),
];

/// How a manifest holds the project's name.
enum Manifest {
    /// A `"name"` member of the top object (`@scope/name` is taken as `name`).
    Json,
    /// A `name = "…"` (TOML) or `name = …` (INI) line under one of these tables.
    Table(&'static [&'static str]),
}

/// The names the workspace's root manifests give the project, in lower case.
pub fn project_names(files: &dyn FileTexts) -> Vec<String> {
    let mut names = Vec::new();
    for (path, manifest) in MANIFESTS {
        let Some(text) = files.text_of(path) else {
            continue;
        };
        let name = match manifest {
            Manifest::Json => serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| v["name"].as_str().map(str::to_string))
                .map(|n| n.rsplit('/').next().unwrap_or_default().to_string()),
            Manifest::Table(tables) => table_name(&text, tables),
        };
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            names.push(name.to_lowercase());
        }
    }
    names.sort();
    names.dedup();
    names
}

/// The value of the first `name = …` line under one of `tables` (`[project]`).
fn table_name(text: &str, tables: &[&str]) -> Option<String> {
    let mut in_table = false;
    for line in text.lines().map(str::trim) {
        if let Some(header) = line.strip_prefix('[') {
            let table = header.trim_end_matches(']').trim();
            in_table = tables.contains(&table);
            continue;
        }
        let Some(value) = line.strip_prefix("name") else {
            continue;
        };
        let Some(value) = value.trim_start().strip_prefix('=') else {
            continue;
        };
        if in_table {
            return Some(
                value
                    .trim()
                    .trim_matches(|c| c == '"' || c == '\'')
                    .to_string(),
            );
        }
    }
    None
}

/// Does this question name the project by the name its manifest gives (see
/// [`project_names`]), as a whole word ("Is this spark release recent?")? Names shorter than
/// four characters are too often words of prose to count.
pub fn names_the_project(question: &Question, files: &dyn FileTexts) -> bool {
    let mut names = project_names(files);
    names.retain(|name| name.chars().count() >= 4);
    !names.is_empty()
        && question
            .written
            .iter()
            .any(|w| names.contains(&w.to_lowercase()))
}

/// Does `question` name something a file of the request's workspace defines? From the code
/// index's names when the request brings them (see
/// [`crate::mentions::names_an_indexed_name`]), else by reading the files (see
/// [`crate::mentions::names_a_defined_name`]). False when the request cannot read files.
pub fn names_a_defined_name_in(request: &GenerateRequest<'_>, question: &Question) -> bool {
    use crate::mentions::{names_a_defined_name, names_an_indexed_name};
    match (request.paths, request.files) {
        (Some(known), Some(files)) if !request.defined_names.is_empty() => {
            names_an_indexed_name(question, request.defined_names, known, files)
        }
        (Some(known), Some(files)) => names_a_defined_name(question, known, files),
        _ => false,
    }
}

/// Does `question` ask where something the request's workspace defines is ("Where is the
/// Shelf class declared?", "Which file holds parse_row?")? It asks where (see
/// [`Question::asks_where`]) and names a defined name: by a word only code uses
/// (`names_a_defined_name`, what [`names_a_defined_name_in`] says, which the caller has
/// already asked), or by a word of three characters or more, not a common one, spelled
/// exactly as the code index has a definition named (`Shelf`, `render`). Where-ness lets a
/// plain word count: in "Where does render live?" `render` can only be the name looked for.
pub fn asks_where_a_definition_is(
    request: &GenerateRequest<'_>,
    question: &Question,
    names_a_defined_name: bool,
) -> bool {
    let indexed = |word: &String| {
        word.chars().count() >= 3
            && !crate::words::is_common_word(&word.to_lowercase())
            && crate::mentions::is_indexed(request.defined_names, word)
    };
    question.asks_where && (names_a_defined_name || question.spelled.iter().any(indexed))
}

/// Does `question` name the project of the request's workspace, by its manifest's name (see
/// [`names_the_project`]; not when the request cannot read files) or by pointing at it (see
/// [`Question::points_at_the_project`]; when the request has a workspace)?
pub fn names_the_project_in(request: &GenerateRequest<'_>, question: &Question) -> bool {
    let has_workspace = request.paths.is_some() || request.files.is_some();
    (has_workspace && question.points_at_the_project)
        || request
            .files
            .is_some_and(|files| names_the_project(question, files))
}

/// Which of the first-step rules apply: each is a lever of its own (see
/// [`crate::model::GenerationOptions`]'s `named_paths`, `named_definitions`, `named_project`,
/// `named_new_files`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FirstStepRules {
    pub named_paths: bool,
    pub named_definitions: bool,
    pub named_project: bool,
    pub named_new_files: bool,
}

impl FirstStepRules {
    /// The rules `options` turn on: every backend takes them from its generation options.
    pub fn of(options: &crate::model::GenerationOptions) -> Self {
        FirstStepRules {
            named_paths: options.named_paths,
            named_definitions: options.named_definitions,
            named_project: options.named_project,
            named_new_files: options.named_new_files,
        }
    }
}

/// Does `question` spell out a calculation (`17 * 23`) and the request offer a tool that
/// calculates (one with an `"x-expression"` argument)? A small model's mental arithmetic is a
/// guess; the tool's is exact.
pub fn asks_a_calculation(request: &GenerateRequest<'_>, question: &Question) -> bool {
    request
        .tools
        .iter()
        .any(|tool| tool.has_argument_marked("x-expression"))
        && !question.calculations.is_empty()
}

/// Why the first step of a turn must be a call, when it must: `question` spells out a
/// calculation and a tool can do it, or it names a file or folder of the request's workspace,
/// something the workspace defines, or the project itself, or it asks for a file that does not
/// exist yet. A model, a small one above all, otherwise answers such a question from memory
/// instead of reading or computing, and writes a new file's text into its answer. Both backends
/// take the rule from here: the local engine as its call decision, a server as
/// `tool_choice: required`.
pub fn first_step_must_call(
    request: &GenerateRequest<'_>,
    question: &Question,
    rules: FirstStepRules,
) -> Option<&'static str> {
    if asks_a_calculation(request, question) {
        Some("the message spells out a calculation")
    } else if rules.named_paths
        && request
            .paths
            .is_some_and(|known| crate::mentions::names_a_workspace_path(question, known))
    {
        Some("the message names a file of the workspace")
    } else if rules.named_definitions && names_a_defined_name_in(request, question) {
        Some("the message names something the workspace defines")
    } else if rules.named_project && names_the_project_in(request, question) {
        Some("the message names the project")
    } else if rules.named_new_files
        && request
            .paths
            .is_some_and(|known| !crate::mentions::new_files_named(question, known).is_empty())
    {
        Some("the message asks for a new file")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_step_with_nothing_after_the_users_message_is_the_first() {
        use crate::model::{MadeCall, Message, Role};
        use crate::tool_result::ShownResult;
        let cancel = crate::model::CancelToken::new();
        let asked = [
            Message::new(Role::System, "prompt"),
            Message::new(Role::User, "Where is Shelf?"),
        ];
        assert!(GenerateRequest::new(&asked, 16, &cancel).is_first_step());
        let mut called = asked.to_vec();
        called.push(Message::assistant_call(
            "call-1",
            "call",
            MadeCall::new("find_definition", serde_json::json!({"name": "Shelf"})),
        ));
        called.push(Message::tool_result(
            "call-1",
            ShownResult::from_json(r#"{"success":true}"#).unwrap(),
        ));
        assert!(!GenerateRequest::new(&called, 16, &cancel).is_first_step());
        called.push(Message::new(Role::User, "And Basket?"));
        assert!(GenerateRequest::new(&called, 16, &cancel).is_first_step());
    }

    #[test]
    fn a_where_question_about_a_defined_name_asks_where_a_definition_is() {
        let cancel = crate::model::CancelToken::new();
        let defined = ["Shelf".to_string(), "parse_row".to_string()];
        let request = GenerateRequest::new(&[], 16, &cancel).with_defined_names(&defined);
        let asks = |message: &str| {
            let question = Question::read(message);
            let names = names_a_defined_name_in(&request, &question);
            asks_where_a_definition_is(&request, &question, names)
        };
        assert!(
            asks("Where is the Shelf class defined?"),
            "a plain word as spelled"
        );
        assert!(asks("Which file holds parse_row?"));
        assert!(
            !asks("Where is the shelf class defined?"),
            "not as the code spells it"
        );
        assert!(!asks("What does Shelf hold?"), "not a where-question");
        assert!(
            !asks("Where is the Basket class defined?"),
            "not a defined name"
        );
    }

    #[test]
    fn the_first_step_must_call_when_the_message_names_a_file_a_definition_or_the_project() {
        use crate::model::{CancelToken, KnownPaths};
        let known = KnownPaths::from_files(vec!["package.json".into(), "src/wrap.py".into()]);
        let files = [
            ("package.json", r#"{"name": "wrapkit", "version": "1.0.0"}"#),
            (
                "src/wrap.py",
                "def fill_paragraph(text):\n    return text\n",
            ),
        ];
        let cancel = CancelToken::new();
        let request = GenerateRequest::new(&[], 16, &cancel).with_workspace(&known, &files);
        let all = FirstStepRules {
            named_paths: true,
            named_definitions: true,
            named_project: true,
            named_new_files: true,
        };
        let why = |question: &str, rules| {
            first_step_must_call(&request, &Question::read(question), rules)
        };
        assert_eq!(
            why("What does src/wrap.py hold?", all),
            Some("the message names a file of the workspace")
        );
        assert_eq!(
            why("Where is fill_paragraph?", all),
            Some("the message names something the workspace defines")
        );
        assert_eq!(
            why("Who maintains wrapkit?", all),
            Some("the message names the project")
        );
        assert_eq!(
            why("Make a NOTES.md with the plan for the release.", all),
            Some("the message asks for a new file")
        );
        // A file the message only talks about is none it asks for.
        assert_eq!(why("What usually goes into a .gitignore?", all), None);
        assert_eq!(why("What is a closure?", all), None);
        // Each rule is its own lever.
        let none = FirstStepRules {
            named_paths: false,
            named_definitions: false,
            named_project: false,
            named_new_files: false,
        };
        for question in [
            "What does src/wrap.py hold?",
            "Where is fill_paragraph?",
            "Who maintains wrapkit?",
            "Make a NOTES.md with the plan for the release.",
        ] {
            assert_eq!(why(question, none), None, "{question}");
        }
    }

    #[test]
    fn a_calculation_the_message_spells_out_is_a_call_when_a_tool_calculates() {
        use crate::model::CancelToken;
        let toolbox = crate::toolbox::Toolbox::standard();
        let cancel = CancelToken::new();
        let offered = GenerateRequest::new(&[], 16, &cancel).with_tools(toolbox.specs());
        let rules = FirstStepRules {
            named_paths: false,
            named_definitions: false,
            named_project: false,
            named_new_files: false,
        };
        assert_eq!(
            first_step_must_call(&offered, &Question::read("How much is 48 / 6 + 1?"), rules),
            Some("the message spells out a calculation")
        );
        assert_eq!(
            first_step_must_call(&offered, &Question::read("What is a monad?"), rules),
            None
        );
        let without: Vec<_> = toolbox
            .specs()
            .iter()
            .filter(|t| !t.has_argument_marked("x-expression"))
            .cloned()
            .collect();
        let not_offered = GenerateRequest::new(&[], 16, &cancel).with_tools(&without);
        assert_eq!(
            first_step_must_call(
                &not_offered,
                &Question::read("How much is 48 / 6 + 1?"),
                rules
            ),
            None
        );
    }

    #[test]
    fn the_project_is_named_by_its_manifest_s_name() {
        let npm = [(
            "package.json",
            r#"{"name": "@acme/tallyho", "version": "3.0.5"}"#,
        )];
        assert_eq!(project_names(&npm), ["tallyho"]);
        assert!(names_the_project(
            &Question::read("Is tallyho up to date here?"),
            &npm
        ));
        assert!(!names_the_project(
            &Question::read("What does a tally mean?"),
            &npm
        ));

        let python = [(
            "pyproject.toml",
            "[build-system]\nname = \"flit\"\n\n[project]\nname = \"spark\"\nversion = \"0.9.2\"\n",
        )];
        assert_eq!(project_names(&python), ["spark"]);
        assert!(names_the_project(
            &Question::read("Does Spark still build on Windows?"),
            &python
        ));
        assert!(!names_the_project(
            &Question::read("Is sparkling water healthier?"),
            &python
        ));

        let ini = [(
            "setup.cfg",
            "[metadata]\nname = spark\nversion = attr: spark.__version__\n",
        )];
        assert_eq!(project_names(&ini), ["spark"]);

        let rust = [("Cargo.toml", "[package]\nname = \"app\"\n")];
        assert_eq!(project_names(&rust), ["app"]);
        assert!(
            !names_the_project(&Question::read("What is an app?"), &rust),
            "too short"
        );
    }
}
