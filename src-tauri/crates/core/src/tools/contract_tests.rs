//! The tool contract fails closed: no registered tool acts on a path its call did not declare.
//!
//! Every string argument of every tool is tried as a path into a guarded folder. Either the
//! call declares a path that covers it — then the hard rules and the grants see it, and the
//! tool is handed it resolved — or the call runs and must leave the guarded folder alone: its
//! files unchanged, nothing created in it, and neither their content nor their names anywhere
//! in the result. The check goes by what a tool does, not by what its arguments are called, so
//! a tool that resolves any argument itself is caught (see the deliberately forgetful tools
//! below).

use super::*;
use crate::error::ErrorType;
use std::io::Read;
use std::path::Path;
use tempfile::TempDir;

const GUARDED: &str = "guarded";
const GUARDED_FILE: &str = "guarded/notes.txt";
/// The guarded file's content, and the name of a file beside it: a result that holds it read
/// or listed the guarded folder.
const MARK: &str = "CANARY-7f3a";

struct Fixture {
    _dir: TempDir,
    ctx: ToolContext,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let guarded = dir.path().join(GUARDED);
        std::fs::create_dir(&guarded).unwrap();
        std::fs::write(dir.path().join(GUARDED_FILE), MARK).unwrap();
        std::fs::write(guarded.join(format!("{MARK}.txt")), "").unwrap();
        let ctx = ToolContext::new(Workspace::open(dir.path()).unwrap(), None);
        Fixture { _dir: dir, ctx }
    }

    fn root(&self) -> &Path {
        self.ctx.workspace.root()
    }

    /// The guarded folder's entries and their contents.
    fn guarded(&self) -> BTreeMap<String, Vec<u8>> {
        std::fs::read_dir(self.root().join(GUARDED))
            .unwrap()
            .map(|entry| {
                let entry = entry.unwrap();
                let name = entry.file_name().to_string_lossy().into_owned();
                (name, std::fs::read(entry.path()).unwrap_or_default())
            })
            .collect()
    }
}

/// JSON pointers (`/path`, `/options/glob`) to every string argument a schema describes,
/// nested objects included.
fn string_arguments(schema: &Value, at: &str, out: &mut Vec<String>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, property) in properties {
        let pointer = format!("{at}/{name}");
        match property.get("type").and_then(Value::as_str) {
            Some("string") => out.push(pointer),
            Some("object") => string_arguments(property, &pointer, out),
            _ => {}
        }
    }
}

/// `example` with the argument at `pointer` set to `value`, enclosing objects made as needed.
fn with_argument(example: &Value, pointer: &str, value: &str) -> Value {
    let mut args = example.clone();
    let mut at = &mut args;
    for key in pointer.split('/').skip(1) {
        at = at
            .as_object_mut()
            .expect("arguments are objects")
            .entry(key)
            .or_insert_with(|| Value::Object(Default::default()));
    }
    *at = Value::String(value.to_string());
    args
}

/// Whether the policy sees `value` in the call's target: a command line is judged whole, and
/// a declared path covers itself and everything below it.
fn declares(target: &Resolved, value: &str) -> bool {
    target.command().is_some()
        || target.paths().iter().any(|path| {
            let rel = path.rel();
            rel == "." || value == rel || value.starts_with(&format!("{rel}/"))
        })
}

/// Each call of `registry` that touched the guarded folder without declaring it, as
/// `tool /argument="value"`: none when the contract holds.
fn undeclared_uses(registry: &ToolRegistry) -> Vec<String> {
    let mut found = Vec::new();
    for spec in registry.specs() {
        let mut pointers = Vec::new();
        string_arguments(&spec.input_schema, "", &mut pointers);
        for pointer in &pointers {
            for value in [GUARDED, GUARDED_FILE] {
                let fx = Fixture::new();
                let args = with_argument(&spec.example, pointer, value);
                // Arguments the schema refuses (a status that is no status) never run.
                let Ok(call) = registry.prepare(&spec.name, args, &fx.ctx) else {
                    continue;
                };
                if declares(call.target(), value) {
                    continue;
                }
                let before = fx.guarded();
                let shown = match call.run(&fx.ctx) {
                    Ok(data) => data.to_string(),
                    Err(error) => format!("{error:?}"),
                };
                if fx.guarded() != before || shown.contains(MARK) {
                    found.push(format!("{} {pointer}={value:?}", spec.name));
                }
            }
        }
    }
    found
}

#[test]
fn no_tool_touches_a_path_its_call_does_not_declare() {
    assert_eq!(
        undeclared_uses(&ToolRegistry::standard()),
        Vec::<String>::new()
    );
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoteInput {
    /// The note to show.
    note: String,
}

/// Declares nothing, then reads the file its argument names: the mistake a default target
/// used to hide.
struct ForgetfulReader;

impl Tool for ForgetfulReader {
    type Input = NoteInput;
    const NAME: &'static str = "forgetful_reader";
    const RISK: Risk = Risk::Read;
    const PREVIEW: PreviewKind = PreviewKind::None;
    const RESULT: ResultKind = ResultKind::FileContent;

    fn example() -> Value {
        serde_json::json!({"note": "a.txt"})
    }

    fn target(_input: &NoteInput) -> Target {
        Target::Nothing
    }

    fn run(input: NoteInput, _target: &Resolved, ctx: &ToolContext) -> Result<Value, ToolError> {
        let path = ctx.workspace.resolve(&input.note)?;
        let mut text = String::new();
        ctx.workspace
            .open_read(&path)?
            .read_to_string(&mut text)
            .map_err(|e| ToolError::from_io(&e, path.rel()))?;
        Ok(serde_json::json!({ "note": text }))
    }
}

fn registry_of<T: Tool>() -> ToolRegistry {
    let mut registry = ToolRegistry {
        entries: BTreeMap::new(),
    };
    registry.register::<T>();
    registry
}

#[test]
fn a_tool_that_reads_an_undeclared_path_is_caught() {
    assert_eq!(
        undeclared_uses(&registry_of::<ForgetfulReader>()),
        vec![format!("forgetful_reader /note={GUARDED_FILE:?}")]
    );
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CopyInput {
    /// The file to write.
    path: String,
    /// Where to keep a copy.
    backup: String,
    /// What to write.
    text: String,
}

/// Declares the file it writes but not its backup: a tool that declares some of its paths and
/// writes another.
struct HalfDeclaredWriter;

impl Tool for HalfDeclaredWriter {
    type Input = CopyInput;
    const NAME: &'static str = "half_declared_writer";
    const RISK: Risk = Risk::Write;
    const PREVIEW: PreviewKind = PreviewKind::None;
    const RESULT: ResultKind = ResultKind::Plain;

    fn example() -> Value {
        serde_json::json!({"path": "a.txt", "backup": "a.bak", "text": "hello"})
    }

    fn target(input: &CopyInput) -> Target {
        Target::Paths(vec![input.path.clone()])
    }

    fn run(input: CopyInput, target: &Resolved, ctx: &ToolContext) -> Result<Value, ToolError> {
        ctx.write(target.path()?, input.text.as_bytes())?;
        let backup = ctx.workspace.resolve(&input.backup)?;
        ctx.write(&backup, input.text.as_bytes())?;
        Ok(serde_json::json!({}))
    }
}

#[test]
fn a_tool_that_writes_an_undeclared_path_is_caught() {
    assert_eq!(
        undeclared_uses(&registry_of::<HalfDeclaredWriter>()),
        vec![format!("half_declared_writer /backup={GUARDED_FILE:?}")]
    );
}

#[test]
fn a_call_is_handed_its_declared_paths_resolved_and_an_escape_never_runs() {
    let fx = Fixture::new();
    let registry = ToolRegistry::standard();
    let call = registry
        .prepare(
            "read_file",
            serde_json::json!({"path": "./guarded//notes.txt"}),
            &fx.ctx,
        )
        .unwrap();
    let path = call.target().path().unwrap();
    assert_eq!(
        (path.rel(), path.abs(), path.exists()),
        (GUARDED_FILE, fx.root().join(GUARDED_FILE).as_path(), true)
    );
    assert_eq!(call.run(&fx.ctx).unwrap()["content"], MARK);

    let Err(PrepareError::Sandbox(refusal)) = registry.prepare(
        "list_files",
        serde_json::json!({"directory": "../"}),
        &fx.ctx,
    ) else {
        panic!("a folder outside the workspace was not refused before the call");
    };
    assert_eq!(refusal.kind, ErrorType::PermissionDenied);
}

#[test]
fn whole_workspace_calls_declare_the_root_and_path_free_calls_declare_nothing() {
    let fx = Fixture::new();
    let registry = ToolRegistry::standard();
    let declared = |tool: &str, args: Value| {
        let call = registry.prepare(tool, args, &fx.ctx).unwrap();
        let target = call.target();
        let paths: Vec<String> = target.paths().iter().map(|p| p.rel().to_string()).collect();
        (paths, target.command().map(str::to_string))
    };
    let root = (vec![".".to_string()], None);
    let nothing = (Vec::new(), None);
    assert_eq!(declared("list_files", serde_json::json!({})), root);
    assert_eq!(
        declared("search_code", serde_json::json!({"query": "x"})),
        root
    );
    assert_eq!(declared("get_diagnostics", serde_json::json!({})), nothing);
    assert_eq!(declared("get_current_time", serde_json::json!({})), nothing);
    assert_eq!(
        declared("run_command", serde_json::json!({"command": "ls"})),
        (Vec::new(), Some("ls".to_string()))
    );
}

#[test]
fn every_preview_is_of_the_kind_its_tool_declares() {
    let fx = Fixture::new();
    // The file edit_file's example changes.
    std::fs::write(fx.root().join("config.toml"), "port = 8080\n").unwrap();
    let registry = ToolRegistry::standard();
    for spec in registry.specs() {
        let call = registry
            .prepare(&spec.name, spec.example.clone(), &fx.ctx)
            .unwrap();
        let preview = call.preview(&fx.ctx);
        let has = |key: &str| preview.as_ref().is_some_and(|p| p.get(key).is_some());
        let fits = match spec.preview_kind {
            PreviewKind::None => preview.is_none(),
            PreviewKind::Diff => has("unified") && has("path"),
            PreviewKind::Command => has("command") && has("sandbox"),
            PreviewKind::Sandbox => preview.is_none() || has("sandbox"),
        };
        assert!(
            fits,
            "{}: {:?} declared, {preview:?} given",
            spec.name, spec.preview_kind
        );
    }
}

#[test]
fn every_follow_up_a_tool_declares_is_a_valid_call_of_it_with_a_result_that_reads() {
    let registry = ToolRegistry::standard();
    let mut by_next_step = [0, 0];
    for spec in registry.specs() {
        for example in spec.follow_ups {
            let args: Value = serde_json::from_str(example.args).expect(example.args);
            assert!(
                registry.validate(&spec.name, &args).is_ok(),
                "{}: {}",
                spec.name,
                example.args
            );
            // The model reads the example as written: the result it stands for writes the same
            // text.
            let result = crate::tool_result::ShownResult::from_json(example.result)
                .unwrap_or_else(|e| panic!("{}: {e}: {}", spec.name, example.result));
            assert_eq!(result.to_string(), example.result, "{}", spec.name);
            assert!(
                result.seen().succeeded(),
                "{}: {}",
                spec.name,
                example.result
            );
            by_next_step[usize::from(example.needs_call)] += 1;
        }
    }
    assert!(
        by_next_step.iter().all(|&n| n > 0),
        "results followed by an answer and by another call are both declared: {by_next_step:?}"
    );
}
