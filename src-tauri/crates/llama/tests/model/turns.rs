//! Whole turns through the agent loop: reading, edits whose old text is found, grounded paths, the first step's decision, narrowed listings, the calculator, an answer that loops.

use super::*;

#[test]
fn the_agent_reads_a_file_through_a_valid_call() {
    let dir = test_folder("workspace");
    std::fs::write(
        dir.join("package.json"),
        "{\n  \"name\": \"shop\",\n  \"version\": \"2.4.1\"\n}\n",
    )
    .unwrap();
    let mut model = model();
    let events = one_call(
        &dir,
        Toolbox::standard().into(),
        "What version is in package.json?",
        &mut model,
    );
    let call = events.iter().find_map(|e| match e {
        Event::CallParsed {
            tool, constrained, ..
        } => Some((tool.clone(), *constrained)),
        _ => None,
    });
    let (tool, constrained) = call.expect("a call was parsed");
    assert!(constrained);
    assert!(ToolRegistry::standard().spec(&tool).is_some());
    // The step says why it was a call: here the tool choice required one.
    let why = events.iter().find_map(|e| match e {
        Event::ResponseFinished { decision, .. } => decision.clone(),
        _ => None,
    });
    assert_eq!(why.as_deref(), Some("call (required)"));
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::ToolFinished { .. })));
    assert!(matches!(
        events.last(),
        Some(Event::TurnFinished {
            reason: FinishedReason::MaxSteps | FinishedReason::Answer,
            ..
        })
    ));
}

/// One step of a fresh session on `dir` that must be a call, approved; its events.
fn one_call(
    dir: &std::path::Path,
    toolbox: std::sync::Arc<Toolbox>,
    question: &str,
    model: &mut LocalModel,
) -> Vec<Event> {
    let mut session = fresh_session(dir, toolbox);
    session.config.tool_choice = ToolChoice::Required;
    session.config.max_steps = 1;
    let mut events = Vec::new();
    session.send(
        question,
        model,
        &mut FixedAnswer(Answer::AllowOnce),
        &mut |e| events.push(e.clone()),
        &CancelToken::new(),
    );
    events
}

/// Reads the files of a fixture folder, for a request's `files`.
struct FixtureTexts(std::path::PathBuf);

impl lantern_core::model::FileTexts for FixtureTexts {
    fn text_of(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.0.join(rel)).ok()
    }
}

#[test]
fn an_edit_s_old_text_is_always_found_once_in_the_file_it_names() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/fixtures");
    let edit = toolbox()
        .specs()
        .iter()
        .find(|s| s.name == "edit_file")
        .unwrap()
        .clone();
    let mut model = model();
    let mut seen = Vec::new();
    for (fixture, question) in [
        (
            "semver",
            "In internal/constants.js, lower MAX_SAFE_COMPONENT_LENGTH to 12.",
        ),
        (
            "semver",
            "Reword the description in package.json to say it parses versions.",
        ),
        (
            "rust-calc",
            "multiply in src/lib.rs should saturate instead of overflowing. Change it.",
        ),
        ("py-notes", "Change the port in config.toml to 8080."),
        (
            "node-shop",
            "cartTotal in src/cart.ts should round to whole cents. Change it.",
        ),
    ] {
        let root = fixtures.join(fixture);
        let known = lantern_core::walk::known_paths(&Workspace::open(&root).unwrap());
        let texts = FixtureTexts(root.clone());
        let cancel = CancelToken::new();
        let messages = conversation(question);
        let request = GenerateRequest::new(&messages, 400, &cancel)
            .with_tools(std::slice::from_ref(&edit))
            .with_workspace(&known, &texts)
            .with_stop(STOP_SEQUENCES)
            .with_tool_choice(ToolChoice::Required);
        let generation = model.generate(&request, &mut |_| Flow::Continue).unwrap();
        let turn = parse(&generation.text);
        let call = turn
            .call
            .as_ref()
            .unwrap_or_else(|| panic!("no call: {}", generation.text));
        let path = call.args["path"].as_str().unwrap();
        let old = call.args["old_text"].as_str().unwrap();
        let file = std::fs::read_to_string(root.join(path)).unwrap();
        assert_eq!(
            file.matches(old).count(),
            1,
            "{question}: {old:?} must stand once in {path}"
        );
        seen.push(format!("{question} → {path}: {old:?}"));
    }
    eprintln!("{}", seen.join("\n"));
}

/// Copies a folder tree of plain files (a fixture) to `to`.
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn grounded_calls_name_paths_that_exist_with_only_lean_arguments() {
    let dir = test_folder("workspace");
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/fixtures/semver");
    copy_tree(&fixture, &dir);
    let mut model = model();
    let toolbox: std::sync::Arc<Toolbox> = Toolbox::standard().into();
    let mut calls = Vec::new();
    for question in [
        "What is this package's version number?",
        "Show me where coerce is implemented.",
        "What is inside internal/?",
        "Explain functions/clean.js to me.",
    ] {
        let events = one_call(&dir, toolbox.clone(), question, &mut model);
        calls.extend(events.into_iter().filter_map(|e| match e {
            Event::CallParsed { tool, args, .. } => Some((question, tool, args)),
            _ => None,
        }));
    }
    let mut named = 0;
    for (question, tool, args) in &calls {
        // Lean calls (the default): only required and path arguments are offered.
        let spec = toolbox.specs().iter().find(|s| &s.name == tool).unwrap();
        let schema = &spec.input_schema;
        for key in args.as_object().into_iter().flat_map(|a| a.keys()) {
            let required = schema["required"]
                .as_array()
                .is_some_and(|r| r.iter().any(|k| k == key));
            assert!(
                required || schema["properties"][key].get("x-path").is_some(),
                "{question}: {tool} was offered the optional argument {key:?}"
            );
        }
        for key in ["path", "directory", "file"] {
            if let Some(path) = args.get(key).and_then(|v| v.as_str()) {
                if tool == "write_file" {
                    continue;
                }
                named += 1;
                assert!(
                    dir.join(path).exists(),
                    "{question}: {tool} names {path:?}, which does not exist"
                );
            }
        }
    }
    assert!(
        named >= 2,
        "too few calls named a path to prove anything: {calls:?}"
    );
}

#[test]
fn a_question_that_asks_for_no_change_neither_writes_nor_runs() {
    let dir = test_folder("asks");
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/fixtures/semver");
    copy_tree(&fixture, &dir);
    let mut model = model();
    let toolbox: std::sync::Arc<Toolbox> = Toolbox::standard().into();
    // The second asks about a setting by its verb ("is set to"): read as a change, it had the
    // default model open an edit of package.json.
    for question in [
        "Tell me which command this package puts on the PATH when installed.",
        "Which value is the debug flag set to when NODE_DEBUG is empty?",
    ] {
        model.configure(&lantern_core::model::GenerationOptions {
            changes_when_asked: true,
            ..Default::default()
        });
        let events = one_call(&dir, toolbox.clone(), question, &mut model);
        model.configure(&Default::default());
        let tool = events
            .into_iter()
            .find_map(|e| match e {
                Event::CallParsed { tool, .. } => Some(tool),
                _ => None,
            })
            .expect("a required step is a call");
        let risk = toolbox
            .specs()
            .iter()
            .find(|s| s.name == tool)
            .map(|s| s.risk)
            .unwrap();
        // The lever's effect on the first tool; what the model does without it is the eval's
        // (`--off changes-when-asked`).
        assert!(
            !matches!(risk, Risk::Write | Risk::Exec),
            "{question}: {tool}"
        );
    }
}

#[test]
fn a_message_that_names_the_project_makes_the_first_step_a_call() {
    let dir = test_folder("named-project");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("pyproject.toml"),
        "[project]\nname = \"quillpad\"\nrequires-python = \">=3.9\"\n",
    )
    .unwrap();
    let known = lantern_core::model::KnownPaths::from_files(vec!["pyproject.toml".into()]);
    let texts = FixtureTexts(dir.to_path_buf());
    let messages = conversation("Does quillpad still run on Python 3.8?");
    let mut model = model();
    model.configure(&lantern_core::model::GenerationOptions {
        named_project: true,
        ..Default::default()
    });
    let cancel = CancelToken::new();
    let request = GenerateRequest::new(&messages, 120, &cancel)
        .with_tools(toolbox().specs())
        .with_workspace(&known, &texts)
        .with_stop(STOP_SEQUENCES);
    model.generate(&request, &mut |_| Flow::Continue).unwrap();
    let decision = model.last_step().decision.clone();
    model.configure(&Default::default());
    // The rule decides, whatever the model's own score; what the model does without it is the
    // eval's (`--off named-project`).
    assert_eq!(decision, "call (the message names the project)");
}

#[test]
fn an_answer_that_loops_is_given_once_and_said_to_be_cut() {
    let dir = test_folder("loops");
    std::fs::create_dir_all(&dir).unwrap();
    let mut model = model();
    let mut session = fresh_session(&dir, Toolbox::standard().into());
    session.config.tool_choice = ToolChoice::None;
    let mut events = Vec::new();
    // Greedy, a tiny model tends to answer a general question in a loop (`vendor.vendor.…`);
    // whether it loops is the model's business, what the user is given is asserted.
    session.send(
        "In npm, which versions does a tilde range such as ~2.4.1 accept?",
        &mut *model,
        &mut FixedAnswer(Answer::Deny { message: None }),
        &mut |e| events.push(e.clone()),
        &CancelToken::new(),
    );
    let looped = model.last_step().stopped_looping;
    let streamed: String = events
        .iter()
        .filter_map(|e| match e {
            Event::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let cut = events.iter().find_map(|e| match e {
        Event::AnswerCut { text, .. } => Some(text.clone()),
        _ => None,
    });
    let Some(Event::TurnFinished { reason, text, .. }) = events.last() else {
        panic!("the turn did not finish: {events:?}");
    };
    assert_eq!(*reason, FinishedReason::Answer);
    match cut {
        // A reply the engine ended for looping is given once, said to be cut, and nothing in
        // it repeats.
        Some(cut) => {
            assert!(looped, "cut though the engine saw no loop: {streamed:?}");
            assert_eq!(*text, cut);
            assert!(
                streamed.trim_start().starts_with(&cut),
                "{cut:?} | {streamed:?}"
            );
            assert!(cut.len() < streamed.trim().len(), "{cut:?}");
            assert_eq!(lantern_core::repeats::before_repeats(&cut), None, "{cut:?}");
        }
        // Any other reply is given as it was streamed: one that never looped, and one ended for
        // repeating a phrase here and there rather than its whole tail, which has no single
        // point to cut at.
        None => assert_eq!(text.trim(), streamed.trim()),
    }
}

#[test]
fn a_listing_asked_about_a_glob_is_narrowed_to_it() {
    let dir = test_folder("globs");
    for file in [
        "tests/test_parse.py",
        "tests/test_render.py",
        "tests/conftest.py",
        "tests/data/sample.txt",
        "src/app.py",
    ] {
        std::fs::create_dir_all(dir.join(file).parent().unwrap()).unwrap();
        std::fs::write(dir.join(file), "x = 1\n").unwrap();
    }
    let known = lantern_core::walk::known_paths(&Workspace::open(&dir).unwrap());
    let texts = FixtureTexts(dir.to_path_buf());
    // Only the listing is offered: which tool the model picks is the eval's to measure; the
    // pattern a listing is given is the lever's.
    let list = toolbox()
        .specs()
        .iter()
        .find(|s| s.name == "list_files")
        .unwrap()
        .clone();
    let messages = conversation("Count the test_*.py modules under tests for me.");
    let cancel = CancelToken::new();
    let request = GenerateRequest::new(&messages, 120, &cancel)
        .with_tools(std::slice::from_ref(&list))
        .with_workspace(&known, &texts)
        .with_stop(STOP_SEQUENCES)
        .with_tool_choice(ToolChoice::Required);
    let generation = model().generate(&request, &mut |_| Flow::Continue).unwrap();
    let turn = parse(&generation.text);
    let call = turn
        .call
        .as_ref()
        .unwrap_or_else(|| panic!("no call: {}", generation.text));
    // The glob of the message is the listing's pattern; without the lever the model lists the
    // whole folder, which the eval measures (`--off question-globs`).
    assert_eq!(call.args["pattern"], "test_*.py", "{}", generation.text);
}

#[test]
fn a_calculation_is_made_by_the_calculator_and_its_result_quoted_in_the_answer() {
    let dir = test_folder("calculation");
    std::fs::create_dir_all(&dir).unwrap();
    let mut session = fresh_session(&dir, Toolbox::standard().into());
    session.config.max_steps = 3;
    let mut events = Vec::new();
    session.send(
        "What is 17 * 23?",
        &mut *model(),
        &mut FixedAnswer(Answer::AllowOnce),
        &mut |e| events.push(e.clone()),
        &CancelToken::new(),
    );
    let first_decision = events.iter().find_map(|e| match e {
        Event::ResponseFinished { decision, .. } => decision.clone(),
        _ => None,
    });
    assert_eq!(
        first_decision.as_deref(),
        Some("call (the message spells out a calculation)")
    );
    let call = events.iter().find_map(|e| match e {
        Event::CallParsed { tool, args, .. } => Some((tool.clone(), args.clone())),
        _ => None,
    });
    let (tool, args) = call.expect("a call was parsed");
    assert_eq!(tool, "calculate");
    // The expression is the one the message spells out, not one the model made up.
    assert_eq!(args["expression"], "17 * 23");
    let result = events.iter().find_map(|e| match e {
        Event::ToolFinished { result, .. } => Some(result.clone()),
        _ => None,
    });
    assert_eq!(result.expect("the tool ran").data.unwrap()["result"], "391");
    // The model's own words (its last reply, before any note of Lantern's) quote the result.
    let answer = events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::ResponseFinished { raw, .. } => Some(raw.clone()),
            _ => None,
        })
        .unwrap();
    assert!(answer.contains("391"), "{answer}");
}
