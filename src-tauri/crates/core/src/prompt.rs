//! The system prompt: `prompts/system.md`, embedded at build time, with the tool catalog
//! generated from the tools' own specs, so the prompt can never disagree with the validator.

use crate::tools::ToolSpec;
use serde_json::Value;

/// The template, with a `{{tools}}` placeholder. It names no workspace, so the prompt is the
/// same in every project: a model backend calibrates once per prompt and reuses its cached
/// prefix across projects.
pub const SYSTEM_TEMPLATE: &str = include_str!("../../../../prompts/system.md");

/// The system prompt for a model that calls tools through its server's API
/// ([`crate::model::CallPath::Native`]): the same rules, no catalog and no protocol.
pub const NATIVE_SYSTEM_PROMPT: &str = include_str!("../../../../prompts/system-native.md");

/// The heading the template's worked examples follow. Their values (a version, a port, a path)
/// are made up; a backend that steers answers can keep a model from passing one off as the
/// project's (see [`examples_of`]).
pub const EXAMPLES_HEADING: &str = "EXAMPLES:";

/// The worked examples of a system prompt made from the template: all that follows their
/// heading. `None` for a prompt without them (the native one, or one of the user's own).
pub fn examples_of(system_prompt: &str) -> Option<&str> {
    system_prompt
        .split_once(EXAMPLES_HEADING)
        .map(|(_, examples)| examples)
}

/// Renders the system prompt for these tools.
pub fn render_system_prompt(specs: &[&ToolSpec]) -> String {
    let tools: Vec<String> = specs
        .iter()
        .map(|s| format!("- {}: {}", signature(s), s.description.replace('\n', " ")))
        .collect();
    SYSTEM_TEMPLATE.replace("{{tools}}", &tools.join("\n"))
}

/// `read_file(path: string, start_line?: integer, end_line?: integer)`.
pub fn signature(spec: &ToolSpec) -> String {
    format!(
        "{}({})",
        spec.name,
        params(&spec.input_schema, &spec.input_schema)
    )
}

fn params(object: &Value, root: &Value) -> String {
    let required: Vec<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = object.get("properties").and_then(Value::as_object) else {
        return String::new();
    };
    props
        .iter()
        .map(|(name, schema)| {
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            format!("{name}{optional}: {}", type_of(schema, root))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A short type for a property schema: `string`, `integer`, `"a" | "b"`, `{…}`.
fn type_of(schema: &Value, root: &Value) -> String {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let target = reference
            .strip_prefix("#/")
            .map(|p| p.split('/').fold(root, |v, key| &v[key]))
            .unwrap_or(&Value::Null);
        return type_of(target, root);
    }
    if let Some(variants) = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)
    {
        let types: Vec<String> = variants
            .iter()
            .filter(|v| v.get("type").and_then(Value::as_str) != Some("null"))
            .map(|v| type_of(v, root))
            .collect();
        return types.join(" | ");
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        return options
            .iter()
            .filter(|o| !o.is_null())
            .map(|o| o.to_string())
            .collect::<Vec<_>>()
            .join(" | ");
    }
    let kind = match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("any")
            .to_string(),
        _ => "any".to_string(),
    };
    if kind == "object" && schema.get("properties").is_some() {
        format!("{{{}}}", params(schema, root))
    } else {
        kind
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolRegistry;

    #[test]
    fn signatures_come_from_the_schemas() {
        let registry = ToolRegistry::standard();
        let sig = |name: &str| signature(registry.spec(name).unwrap());
        assert_eq!(
            sig("read_file"),
            "read_file(path: string, start_line?: integer, end_line?: integer, symbol?: string)"
        );
        assert_eq!(sig("find_definition"), "find_definition(name: string)");
        assert_eq!(
            sig("search_code"),
            "search_code(query: string, options?: {regex?: boolean, case_sensitive?: boolean, glob?: string, max_results?: integer, context_lines?: integer})"
        );
        assert_eq!(
            sig("update_task"),
            "update_task(task_id: string, status: \"pending\" | \"in_progress\" | \"completed\")"
        );
        assert_eq!(sig("get_current_time"), "get_current_time()");
        assert_eq!(
            sig("get_diagnostics"),
            "get_diagnostics(file?: string, timeout_s?: integer, only_new?: boolean)"
        );
        assert_eq!(
            sig("run_command"),
            "run_command(command: string, timeout_s?: integer)"
        );
    }

    #[test]
    fn the_prompt_lists_every_tool_and_the_rules() {
        let registry = ToolRegistry::standard();
        let prompt = render_system_prompt(&registry.specs());
        for name in registry.names() {
            assert!(prompt.contains(&format!("- {name}(")), "{name} missing");
        }
        assert!(prompt.contains("ONE tool call per reply"));
        assert!(!prompt.contains("{{"));
    }

    #[test]
    fn the_examples_are_what_follows_their_heading() {
        let prompt = render_system_prompt(&ToolRegistry::standard().specs());
        let examples = examples_of(&prompt).expect("the template has worked examples");
        assert!(examples.contains("TOOL_RESULT"));
        assert!(
            !examples.contains("AVAILABLE TOOLS"),
            "the catalog comes before"
        );
        assert_eq!(examples_of(NATIVE_SYSTEM_PROMPT), None);
    }
}
