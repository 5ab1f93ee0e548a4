//! An MCP tool as Lantern offers it: named `server.tool`, its `inputSchema` as the contract the
//! validator and the call grammar both take, its risk from the server's hints, and its
//! fingerprint (what a grant was given for).

use lantern_core::paths::sha256_hex;
use lantern_core::tools::{PreviewKind, ResultKind, Risk, ToolSpec};
use rmcp::model::Tool;
use serde_json::{json, Map, Value};

/// The longest tool name offered (server, dot, tool), as the common model APIs allow.
pub const MAX_TOOL_NAME: usize = 64;

/// The longest description offered: a server's essay would crowd a small model's prompt.
const MAX_DESCRIPTION_CHARS: usize = 600;

/// `server.tool`, its tool part reduced to letters, digits, `_` and `-`; `None` when nothing
/// of the name is left or the whole is too long.
pub fn offered_name(server: &str, tool: &str) -> Option<String> {
    let plain: String = tool
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                true => c,
                false => '_',
            },
        )
        .collect();
    let name = format!("{server}.{plain}");
    let fits = !plain.trim_matches('_').is_empty() && name.len() <= MAX_TOOL_NAME;
    fits.then_some(name)
}

/// How much harm a call of `tool` can do, from its annotations: a tool that says it is
/// destructive counts as running a program (asked by name, never by a server-wide grant); one
/// that says it only reads runs unasked only when its server is trusted; every other asks.
pub fn risk_of(tool: &Tool, trusted: bool) -> Risk {
    let hints = tool.annotations.as_ref();
    let destructive = hints.and_then(|h| h.destructive_hint) == Some(true);
    let read_only = hints.and_then(|h| h.read_only_hint) == Some(true);
    match (destructive, read_only && trusted) {
        (true, _) => Risk::Exec,
        (false, true) => Risk::Read,
        (false, false) => Risk::Remote,
    }
}

/// The spec of `tool` of `server`, offered as `name`.
pub fn spec_of(name: &str, server: &str, tool: &Tool, trusted: bool) -> ToolSpec {
    let schema = contract_of(&Value::Object((*tool.input_schema).clone()));
    let description = tool
        .description
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| bounded(d, MAX_DESCRIPTION_CHARS))
        .unwrap_or_else(|| format!("The {} tool of the {server} MCP server.", tool.name));
    ToolSpec {
        name: name.to_string(),
        description,
        risk: risk_of(tool, trusted),
        example: example_of(&schema),
        input_schema: schema,
        preview_kind: PreviewKind::None,
        result_kind: ResultKind::Plain,
        source: None,
        // A server's tool brings no example of how its results are followed.
        follow_ups: &[],
    }
}

/// A server's input schema as Lantern's contract: an object schema, without the keys that only
/// name it (`$schema`, `title`), which the grammar converter and the prompt do not need.
fn contract_of(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
        map.remove("title");
        map.entry("type").or_insert(json!("object"));
        map.entry("properties").or_insert(json!({}));
    }
    schema
}

/// Arguments of a typical call: each required argument with a value of its type (its first
/// allowed value, its default, or a plain one).
fn example_of(schema: &Value) -> Value {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut example = Map::new();
    for name in required {
        let field = &schema["properties"][name];
        let value = field["enum"]
            .get(0)
            .cloned()
            .or_else(|| field.get("default").cloned())
            .or_else(|| field.get("const").cloned())
            .unwrap_or_else(|| match field["type"].as_str() {
                Some("integer" | "number") => json!(1),
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                Some("object") => json!({}),
                _ => json!("…"),
            });
        example.insert(name.to_string(), value);
    }
    Value::Object(example)
}

/// What a grant of the tool was given for: its name, description and input schema. A server
/// that later changes any of them changes this, and the grant lapses.
pub fn fingerprint(tool: &Tool) -> String {
    let text = json!({
        "name": tool.name,
        "description": tool.description,
        "input_schema": *tool.input_schema,
    })
    .to_string();
    sha256_hex(text.as_bytes())[..16].to_string()
}

fn bounded(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(value: Value) -> Tool {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn names_are_the_server_s_then_the_tool_s_made_plain() {
        assert_eq!(
            offered_name("time", "get_current_time").unwrap(),
            "time.get_current_time"
        );
        assert_eq!(offered_name("e", "get-sum").unwrap(), "e.get-sum");
        assert_eq!(offered_name("e", "a b/c").unwrap(), "e.a_b_c");
        assert_eq!(offered_name("e", "//"), None);
        assert_eq!(offered_name("e", &"x".repeat(70)), None);
    }

    #[test]
    fn risk_follows_the_hints_and_trust() {
        let plain = tool(json!({"name": "t", "inputSchema": {"type": "object"}}));
        let reads = tool(json!({"name": "t", "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true}}));
        let deletes = tool(json!({"name": "t", "inputSchema": {"type": "object"},
            "annotations": {"destructiveHint": true, "readOnlyHint": true}}));
        assert_eq!(risk_of(&plain, true), Risk::Remote);
        assert_eq!(risk_of(&reads, false), Risk::Remote);
        assert_eq!(risk_of(&reads, true), Risk::Read);
        assert_eq!(risk_of(&deletes, true), Risk::Exec);
    }

    #[test]
    fn the_spec_keeps_the_contract_and_gives_a_valid_example() {
        let time = tool(json!({
            "name": "convert_time",
            "description": "Convert time between timezones",
            "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object", "title": "convert_timeArguments",
                "properties": {"time": {"type": "string"}, "hours": {"type": "integer"},
                    "unit": {"enum": ["h", "m"]}},
                "required": ["time", "hours", "unit"]}
        }));
        let spec = spec_of("time.convert_time", "time", &time, false);
        assert!(spec.input_schema.get("$schema").is_none());
        assert!(spec.input_schema.get("title").is_none());
        assert_eq!(spec.example, json!({"time": "…", "hours": 1, "unit": "h"}));
        let validator = jsonschema::validator_for(&spec.input_schema).unwrap();
        assert!(validator.is_valid(&spec.example));
        assert_ne!(
            fingerprint(&time),
            fingerprint(&tool(json!({
            "name": "convert_time", "description": "Convert time (changed)",
            "inputSchema": (*time.input_schema).clone()})))
        );
    }
}
