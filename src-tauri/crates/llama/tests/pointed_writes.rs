//! A write's path, with the real default model: only the files the conversation points at
//! are offered, when there are any. Structure only: which candidates the model may pick, never
//! what it answers.

use lantern_core::model::{
    CancelToken, FileTexts, Flow, GenerateRequest, GenerationOptions, KnownPaths, Message, Model,
    Role, ToolChoice,
};
use lantern_core::protocol::{parse, STOP_SEQUENCES};
use lantern_core::sandbox::Workspace;
use lantern_core::tool_result::ShownResult;
use lantern_core::toolbox::Toolbox;
use lantern_core::walk::known_paths;
use lantern_llama::{default_model_path, LoadOptions, LocalModel};
use std::path::{Path, PathBuf};

mod support;

struct Texts(PathBuf);

impl FileTexts for Texts {
    fn text_of(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.0.join(rel)).ok()
    }
}

/// A small project: a manifest with a licence line, ignore rules, and a helper in a folder.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in [
        (
            "package.json",
            "{\n  \"name\": \"inkwell\",\n  \"version\": \"0.3.0\",\n  \"license\": \"ISC\"\n}\n",
        ),
        (".gitignore", "node_modules\n"),
        ("README.md", "# inkwell\n\nTurns notes into pages.\n"),
        (
            "src/text/slug.js",
            "export function slug(title) {\n  return title.toLowerCase().replace(/[^a-z]+/g, '-');\n}\n",
        ),
        ("src/index.js", "export { slug } from './text/slug.js';\n"),
    ] {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// The path of the edit_file call the model writes, required, after `messages`.
fn edited_path(
    model: &mut LocalModel,
    root: &Path,
    known: &KnownPaths,
    messages: &[Message],
) -> String {
    let toolbox = Toolbox::standard();
    let edit = toolbox
        .specs()
        .iter()
        .find(|s| s.name == "edit_file")
        .unwrap()
        .clone();
    let texts = Texts(root.to_path_buf());
    let cancel = CancelToken::new();
    let request = GenerateRequest::new(messages, 300, &cancel)
        .with_tools(std::slice::from_ref(&edit))
        .with_workspace(known, &texts)
        .with_stop(STOP_SEQUENCES)
        .with_tool_choice(ToolChoice::Required);
    let generation = model.generate(&request, &mut |_| Flow::Continue).unwrap();
    let turn = parse(&generation.text);
    let call = turn
        .call
        .unwrap_or_else(|| panic!("no call: {}", generation.text));
    call.args["path"].as_str().unwrap().to_string()
}

#[test]
fn a_write_is_offered_only_the_files_the_conversation_points_at() {
    let path = default_model_path();
    assert!(
        path.exists(),
        "the default model is missing at {}: run scripts/fetch-model.sh (npm test does)",
        path.display()
    );
    let loaded = LocalModel::load(&LoadOptions::new(path), |_| {}).unwrap();
    let mut model = support::keeping_openings(loaded);
    model.configure(&GenerationOptions {
        pointed_writes: true,
        ..GenerationOptions::default()
    });
    let dir = project();
    let known = known_paths(&Workspace::open(dir.path()).unwrap());
    assert!(known.files.iter().any(|f| f == ".gitignore"), "{known:?}");
    let system = Message::new(Role::System, Toolbox::standard().system_prompt());

    // Named by the user: the dotfile is the one candidate.
    let named = [
        system.clone(),
        Message::new(
            Role::User,
            "Put coverage/ into .gitignore on a line of its own.",
        ),
    ];
    assert_eq!(
        edited_path(&mut model, dir.path(), &known, &named),
        ".gitignore"
    );

    // Shown by a search of the turn, named by no word of the message.
    let shown = [
        system.clone(),
        Message::new(Role::User, "The helper that makes URL pieces drops digits; repair it."),
        Message::new(
            Role::Assistant,
            "<TOOL_CALL>\n{\"tool\": \"search_code\", \"args\": {\"query\": \"replace\"}}\n</TOOL_CALL>",
        ),
        Message::tool_result(
            "call-1",
            ShownResult::from_json(r#"{"success":true,"data":{"matches":[{"path":"src/text/slug.js","line":2,"column":29,"text":"  return title.toLowerCase().replace(/[^a-z]+/g, '-');"}],"count":1},"error":null}"#).unwrap(),
        ),
    ];
    assert_eq!(
        edited_path(&mut model, dir.path(), &known, &shown),
        "src/text/slug.js"
    );

    // Nothing pointed at: every file stays a candidate (the confirmation then flags the pick).
    let nothing = [system, Message::new(Role::User, "Tidy it up, please.")];
    let picked = edited_path(&mut model, dir.path(), &known, &nothing);
    assert!(known.files.contains(&picked), "{picked}");
}
