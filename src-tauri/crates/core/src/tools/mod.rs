//! The tools the model can call, and the registry that knows them.
//!
//! One tool = one file. A tool's input is a Rust struct: its doc comment is the model-facing
//! description, its fields' doc comments describe the arguments, and its derived JSON Schema is
//! the contract that [`ToolRegistry::validate`] checks with a maintained validator before the
//! tool ever runs.
//!
//! Beyond its input, a tool declares what its call touches ([`Tool::target`], no default), what
//! its preview and its result hold ([`PreviewKind`], [`ResultKind`]). The registry prepares a
//! call once ([`ToolRegistry::prepare`]): the policy judges the paths the sandbox resolved, and
//! the tool runs on those same paths. A tool changes files only through
//! [`ToolContext::write`], so every tool's write can be undone.

mod add_task;
mod calculate;
mod call;
#[cfg(test)]
mod contract_tests;
mod edit_file;
mod find_definition;
mod get_current_time;
mod get_diagnostics;
mod list_files;
mod list_tasks;
mod read_file;
mod run_command;
mod search_code;
mod target;
mod tasks;
mod text_match;
mod update_task;
mod write_file;
mod writes;

pub use crate::spec::{ExampleFollowUp, PreviewKind, ResultKind, Risk, ToolSource, ToolSpec};
pub use call::{Call, PrepareError};
pub use target::{Resolved, Target};
pub use tasks::{Task, TaskList, TaskStatus};
pub(crate) use writes::current_content;
pub use writes::{DroppedLines, Rewrite, Undo, Written};

use crate::checkpoint::CheckpointStore;
use crate::error::ToolError;
use crate::sandbox::Workspace;
use call::{Erased, ErasedTool};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Shared state a tool runs against.
pub struct ToolContext {
    pub workspace: Workspace,
    pub tasks: Mutex<TaskList>,
    pub checkpoints: Option<CheckpointStore>,
    /// Earlier checker results, reused while the files they depend on are unchanged.
    pub diagnostics: Mutex<crate::diagnostics::Cache>,
    /// What the workspace's code defines and uses, kept current as it is used.
    pub code_index: std::sync::Arc<crate::code_index::ProjectIndex>,
    /// Who made the call (e.g. "agent step 3", "cli"), recorded with checkpoints.
    pub origin: String,
    /// The running turn's Stop: a tool that waits on another process (an MCP server) gives
    /// up when it is set.
    pub cancel: crate::model::CancelToken,
    /// What the last call of a tool from elsewhere exchanged with its server, until the
    /// caller takes it for the call's result.
    pub exchange: Mutex<Option<Value>>,
}

impl ToolContext {
    pub fn new(workspace: Workspace, checkpoints: Option<CheckpointStore>) -> Self {
        ToolContext {
            workspace,
            tasks: Mutex::new(TaskList::default()),
            checkpoints,
            diagnostics: Mutex::new(Default::default()),
            code_index: Default::default(),
            origin: "lantern".to_string(),
            cancel: Default::default(),
            exchange: Mutex::new(None),
        }
    }
}

/// A tool with a typed input. Implement this; the registry erases the type.
pub trait Tool: Send + Sync + 'static {
    /// The input struct. Its doc comment is the tool's description.
    type Input: DeserializeOwned + JsonSchema + 'static;
    const NAME: &'static str;
    const RISK: Risk;
    /// What [`preview`](Self::preview) returns.
    const PREVIEW: PreviewKind;
    /// What [`run`](Self::run) returns on success.
    const RESULT: ResultKind;
    /// How a call of this tool is followed once its result is in (see [`ExampleFollowUp`]).
    const FOLLOW_UPS: &'static [ExampleFollowUp] = &[];

    /// Arguments of a typical correct call.
    fn example() -> Value;

    /// How much harm this call can do here: [`Self::RISK`] unless the input or the context
    /// changes it (e.g. a checker that would run unsandboxed counts as running a program).
    fn risk(_input: &Self::Input, _ctx: &ToolContext) -> Risk {
        Self::RISK
    }

    /// What the call touches: the workspace paths it reads or writes, the command line it
    /// runs, or [`Target::Nothing`].
    ///
    /// Required, with no default: the sandbox's hard rules and every path- or command-scoped
    /// grant see only what is declared here, and [`run`](Self::run) receives only these paths.
    /// A tool that forgot would otherwise slip past all of them unnoticed.
    fn target(input: &Self::Input) -> Target;

    /// Whether the call can work on its target as things stand: checked after the policy and
    /// before the user is asked, so that a call bound to fail (an edit whose old text is not
    /// in the file) fails with its reason instead of asking to approve it. Looks, changes
    /// nothing.
    fn check(
        _input: &Self::Input,
        _target: &Resolved,
        _ctx: &ToolContext,
    ) -> Result<(), ToolError> {
        Ok(())
    }

    /// Something to show the user before they approve the call (e.g. a diff), if useful.
    fn preview(_input: &Self::Input, _target: &Resolved, _ctx: &ToolContext) -> Option<Value> {
        None
    }

    /// The existing files the call would change and what it would make of each (see
    /// [`Rewrite`]): a whole-file write's content, an edit placed in the file. The agent weighs
    /// the lines they lose ([`DroppedLines`]). Looks, changes nothing.
    fn rewrites(_input: &Self::Input, _target: &Resolved, _ctx: &ToolContext) -> Vec<Rewrite> {
        Vec::new()
    }

    /// Runs the call on its target, as the sandbox resolved it before the policy decided.
    ///
    /// The target is an argument rather than part of the context because the context is the
    /// session's, shared by every call, while the target is this call's alone; and a tool
    /// works on `target`'s paths, never on paths it resolves from its input itself, so that
    /// what the policy approved is what it touches.
    fn run(input: Self::Input, target: &Resolved, ctx: &ToolContext) -> Result<Value, ToolError>;
}

/// A tool that lives outside Lantern (a tool of an MCP server): its spec comes from its
/// server, and a call hands the checked arguments over as they are.
///
/// The registry checks the arguments against the spec's schema, and the policy judges the
/// call by the spec's risk, exactly as for a built-in tool; such a tool touches no workspace
/// path Lantern could resolve, so its target is [`Target::Nothing`].
pub trait RemoteTool: Send + Sync {
    /// Runs the call; gives up with a timeout or cancellation error when `cancel` is set.
    fn call(&self, args: Value, cancel: &crate::model::CancelToken) -> RemoteOutcome;
}

/// How a call of a [`RemoteTool`] ended, with what went over the wire.
pub struct RemoteOutcome {
    pub result: Result<Value, ToolError>,
    /// The request and the response as they were exchanged with the server, for the inspector
    /// (the model is given `result` only).
    pub exchange: Value,
}

struct Entry {
    spec: ToolSpec,
    validator: jsonschema::Validator,
    tool: Box<dyn ErasedTool>,
}

/// One argument problem found by schema validation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArgIssue {
    /// JSON pointer into the arguments, e.g. `/options/max_results`; empty for the object.
    pub path: String,
    pub message: String,
}

/// All tools, by name.
pub struct ToolRegistry {
    entries: BTreeMap<String, Entry>,
}

impl ToolRegistry {
    /// The built-in tools.
    pub fn standard() -> Self {
        let mut registry = ToolRegistry {
            entries: BTreeMap::new(),
        };
        registry.register::<read_file::ReadFile>();
        registry.register::<list_files::ListFiles>();
        registry.register::<search_code::SearchCode>();
        registry.register::<find_definition::FindDefinition>();
        registry.register::<get_diagnostics::GetDiagnostics>();
        registry.register::<edit_file::EditFile>();
        registry.register::<write_file::WriteFile>();
        registry.register::<run_command::RunCommand>();
        registry.register::<get_current_time::GetCurrentTime>();
        registry.register::<calculate::Calculate>();
        registry.register::<add_task::AddTask>();
        registry.register::<list_tasks::ListTasks>();
        registry.register::<update_task::UpdateTask>();
        registry
    }

    /// Adds a tool that lives outside Lantern under `spec.name`. Refused, with the reason, when
    /// the name is taken or its schema does not compile: such a tool is never silently
    /// dropped or half-offered.
    pub fn register_remote(
        &mut self,
        spec: ToolSpec,
        tool: std::sync::Arc<dyn RemoteTool>,
    ) -> Result<(), String> {
        if self.entries.contains_key(&spec.name) {
            return Err(format!("a tool named {:?} is already offered", spec.name));
        }
        let validator = jsonschema::validator_for(&spec.input_schema)
            .map_err(|e| format!("its input schema is not valid JSON Schema: {e}"))?;
        self.entries.insert(
            spec.name.clone(),
            Entry {
                tool: Box::new(call::Remote {
                    risk: spec.risk,
                    tool,
                }),
                spec,
                validator,
            },
        );
        Ok(())
    }

    fn register<T: Tool>(&mut self) {
        let spec = spec_of::<T>();
        let validator =
            jsonschema::validator_for(&spec.input_schema).expect("a derived schema compiles");
        debug_assert!(validator.is_valid(&spec.example), "{} example", T::NAME);
        self.entries.insert(
            T::NAME.to_string(),
            Entry {
                spec,
                validator,
                tool: Box::new(Erased::<T>(std::marker::PhantomData)),
            },
        );
    }

    /// Tool specs in a stable order (reading tools first, as in the prompt).
    pub fn specs(&self) -> Vec<&ToolSpec> {
        let mut specs: Vec<&ToolSpec> = self.entries.values().map(|e| &e.spec).collect();
        specs.sort_by_key(|s| (order_hint(&s.name), s.name.clone()));
        specs
    }

    pub fn spec(&self, name: &str) -> Option<&ToolSpec> {
        self.entries.get(name).map(|e| &e.spec)
    }

    pub fn names(&self) -> Vec<&str> {
        self.specs().into_iter().map(|s| s.name.as_str()).collect()
    }

    /// Checks `args` against the tool's JSON Schema; every issue found, with its path.
    pub fn validate(&self, name: &str, args: &Value) -> Result<(), Vec<ArgIssue>> {
        let Some(entry) = self.entries.get(name) else {
            return Err(vec![ArgIssue {
                path: String::new(),
                message: format!("unknown tool {name:?}"),
            }]);
        };
        let issues: Vec<ArgIssue> = entry
            .validator
            .iter_errors(args)
            .map(|e| ArgIssue {
                path: e.instance_path().to_string(),
                message: describe_issue(&e, &entry.spec.input_schema),
            })
            .collect();
        if issues.is_empty() {
            Ok(())
        } else {
            Err(issues)
        }
    }

    /// [`validate`](Self::validate) as one sentence: "Invalid arguments for TOOL: …; …".
    pub fn check_args(&self, name: &str, args: &Value) -> Result<(), String> {
        self.validate(name, args).map_err(|issues| {
            let list: Vec<String> = issues.into_iter().map(|i| i.message).collect();
            format!("Invalid arguments for {name}: {}", list.join("; "))
        })
    }

    /// Prepares a call for the policy: checks the arguments against the schema, decodes them,
    /// weighs the risk and resolves the declared target through the sandbox, each once.
    pub fn prepare(
        &self,
        name: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<Call, PrepareError> {
        let entry = self.entries.get(name).ok_or_else(|| {
            PrepareError::Arguments(ToolError::invalid(format!("Unknown tool: {name}")))
        })?;
        self.check_args(name, &args)
            .map_err(|message| PrepareError::Arguments(ToolError::invalid(message)))?;
        entry.tool.prepare(args, ctx)
    }
}

/// Drops members whose value is `null`, at any depth: small models write `"start_line": null`
/// for "not given", and that is what it means.
pub fn normalize_args(args: &mut Value) {
    if let Value::Object(map) = args {
        map.retain(|_, v| !v.is_null());
        map.values_mut().for_each(normalize_args);
    }
}

/// What tool `T` declares, its schema derived from its input struct.
fn spec_of<T: Tool>() -> ToolSpec {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut schema = serde_json::to_value(generator.into_root_schema_for::<T::Input>())
        .expect("a derived schema serialises");
    // An optional argument is one that may be left out; `null` is normalised away before
    // validation (see `normalize_args`), so the contract need not mention it.
    strip_null(&mut schema);
    let description = schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .to_string();
    if let Some(obj) = schema.as_object_mut() {
        // The catalog shows name and description separately; the schema keeps the contract.
        obj.remove("title");
        obj.remove("description");
    }
    ToolSpec {
        name: T::NAME.to_string(),
        description,
        risk: T::RISK,
        input_schema: schema,
        example: T::example(),
        preview_kind: T::PREVIEW,
        result_kind: T::RESULT,
        source: None,
        follow_ups: T::FOLLOW_UPS,
    }
}

/// A tool and the example it declares, for a backend to check, before any toolbox is handed to
/// it, that a model's chat template or a server declares tools and writes a call back. The
/// check is of the template or the server, not of the tools a user has, so it uses one tool
/// every toolbox holds; a small model calls a tool it is asked to call or not by its words,
/// so it is shown the tool's own question.
#[derive(Debug, Clone)]
pub struct CallProbe {
    pub tool: ToolSpec,
    example: &'static ExampleFollowUp,
}

impl CallProbe {
    /// The clock's declared example: it takes no arguments, so any template or server that
    /// can call a tool can call it.
    pub fn clock() -> Self {
        let tool = spec_of::<get_current_time::GetCurrentTime>();
        let example = tool
            .follow_ups
            .first()
            .expect("the clock declares an example");
        CallProbe { tool, example }
    }

    /// The user's question the example begins with.
    pub fn question(&self) -> &'static str {
        self.example.question
    }

    /// The example's call of the tool.
    pub fn call(&self) -> crate::model::MadeCall {
        let args = serde_json::from_str(self.example.args).expect("a tool's example is JSON");
        crate::model::MadeCall::new(self.tool.name.clone(), args)
    }

    /// The example's result of the call, as the tool returns it.
    pub fn result(&self) -> Value {
        serde_json::from_str(self.example.result).expect("a tool's example result is JSON")
    }
}

/// Removes `null` from a derived schema's types: `["integer", "null"]` becomes `"integer"` and an
/// `anyOf` of one type and null becomes that type.
fn strip_null(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    if let Some(Value::Array(types)) = map.get("type") {
        let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if kept.len() == 1 {
            map.insert("type".to_string(), kept[0].clone());
        } else {
            map.insert("type".to_string(), Value::Array(kept));
        }
    }
    if let Some(Value::Array(variants)) = map.get("anyOf") {
        let kept: Vec<Value> = variants
            .iter()
            .filter(|v| v.get("type").and_then(Value::as_str) != Some("null"))
            .cloned()
            .collect();
        if kept.len() == 1 {
            map.remove("anyOf");
            if let Value::Object(inner) = &kept[0] {
                for (k, v) in inner {
                    map.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
        }
    }
    if let Some(Value::Array(options)) = map.get_mut("enum") {
        options.retain(|o| !o.is_null());
    }
    for value in map.values_mut() {
        match value {
            Value::Object(_) => strip_null(value),
            Value::Array(items) => items.iter_mut().for_each(strip_null),
            _ => {}
        }
    }
}

/// The order tools are listed in the prompt and the catalog.
fn order_hint(name: &str) -> usize {
    const ORDER: &[&str] = &[
        "read_file",
        "list_files",
        "search_code",
        "get_diagnostics",
        "edit_file",
        "write_file",
        "run_command",
        "get_current_time",
        "calculate",
        "add_task",
        "list_tasks",
        "update_task",
    ];
    ORDER.iter().position(|n| *n == name).unwrap_or(ORDER.len())
}

/// Turns a validator error into "expected …, got …" words, naming the field.
fn describe_issue(error: &jsonschema::ValidationError<'_>, schema: &Value) -> String {
    use jsonschema::error::ValidationErrorKind as Kind;
    let field = error.instance_path().to_string();
    let at = if field.is_empty() {
        "args".to_string()
    } else {
        format!("args{}", field.replace('/', "."))
    };
    let got = json_type_name(error.instance());
    match error.kind() {
        Kind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            let expected = property_type(schema, name).unwrap_or("a value");
            format!("missing required argument \"{name}\" ({expected})")
        }
        Kind::Type { .. } => {
            let expected = error
                .to_string()
                .rsplit_once(" is not of type ")
                .map(|(_, t)| t.to_string())
                .unwrap_or_else(|| "another type".to_string());
            format!(
                "{at} must be {expected}, got {got} {}",
                short(error.instance())
            )
        }
        Kind::AdditionalProperties { unexpected } => {
            let known: Vec<String> = schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            let names: Vec<String> = unexpected
                .iter()
                .map(|u| match closest(u, known.iter().map(String::as_str)) {
                    Some(c) => format!("\"{}\" (did you mean \"{c}\"?)", bounded(u, 60)),
                    None => format!("\"{}\"", bounded(u, 60)),
                })
                .collect();
            format!(
                "unknown argument {} in {at}; allowed: {}",
                names.join(", "),
                known.join(", ")
            )
        }
        Kind::MaxLength { limit } => format!(
            "{at} is {} characters long; it may have at most {limit}",
            error.instance().as_str().map_or(0, |t| t.chars().count())
        ),
        // The validator's own words quote the value, which may be huge: bounded.
        _ => bounded(&format!("{at}: {error}"), 300),
    }
}

/// `text` cut to `max` characters, saying how much was left out.
pub(crate) fn bounded(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((cut, _)) => format!(
            "{}… ({} more characters)",
            &text[..cut],
            text[cut..].chars().count()
        ),
    }
}

fn property_type<'a>(schema: &'a Value, name: &str) -> Option<&'a str> {
    let prop = schema.get("properties")?.get(name)?;
    match prop.get("type")? {
        Value::String(t) => Some(t.as_str()),
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null"),
        _ => None,
    }
}

pub(crate) fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 40 {
        let cut: String = text.chars().take(40).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// The candidate closest to `word` by edit distance, if it is plausibly a typo of it.
pub(crate) fn closest<'a>(
    word: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    // Edit distance costs length × length: a name far longer than any tool's or argument's
    // has no close match anyway.
    if word.len() > 64 {
        return None;
    }
    let lower = word.to_lowercase();
    candidates
        .map(|c| (strsim::damerau_levenshtein(&lower, &c.to_lowercase()), c))
        .filter(|(d, c)| *d <= (c.len() / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}
