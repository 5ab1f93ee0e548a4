//! The grammar that makes a started call always well-formed: after the opener (`<TOOL_CALL>`,
//! or a model's native one), one JSON object naming a known tool with arguments valid for that
//! tool's schema, then the closing tag. Built from the same specs the validator checks, through
//! llama.cpp's own JSON-Schema-to-GBNF converter.

use crate::template::CallSyntax;
use lantern_core::tools::ToolSpec;
use serde_json::{json, Value};

/// The most characters the model may spend on `reasoning` inside a constrained call; without a
/// bound a tiny model can ramble until it runs out of tokens.
const MAX_REASONING_CHARS: usize = 120;

/// The longest short string argument (a path, a query, a pattern) a constrained call may
/// write. Greedy decoding of a tiny model can loop inside a string ("a/b/a/b/…"); a bound makes
/// the grammar close the string, so the call still ends. Free text (`content`) is not bounded.
const MAX_SHORT_STRING_CHARS: usize = 200;

/// Arguments that hold free text rather than a name, path or pattern.
const FREE_TEXT_ARGUMENTS: &[&str] = &["content", "old_text", "new_text"];

/// Bounds every string in an argument schema except the free-text ones.
fn bound_strings(schema: &mut Value, field: Option<&str>) {
    let Value::Object(map) = schema else { return };
    if map.get("type").and_then(Value::as_str) == Some("string")
        && !map.contains_key("maxLength")
        && !field.is_some_and(|f| FREE_TEXT_ARGUMENTS.contains(&f))
    {
        map.insert("maxLength".into(), json!(MAX_SHORT_STRING_CHARS));
    }
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            bound_strings(prop, Some(name));
        }
    }
}

/// What a constrained call may hold besides the tool and its required arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CallShape {
    /// A bounded `"reasoning": string` after the arguments. Never before them: a small model
    /// would put a made-up answer there before it has read anything.
    pub reasoning: bool,
    /// Leave out the optional arguments that are not paths (line ranges, result limits, search
    /// options). A tiny model fills every optional argument it is offered, with numbers and
    /// patterns copied from anywhere (`"start_line": 12`, `"pattern": "file.txt"`), and each
    /// one narrows the result to nothing; path arguments stay, since they are grounded.
    pub lean: bool,
    /// With `lean`, still offer the optional arguments declared `"x-glob": "question"` (a
    /// listing's pattern): the user's message names a glob, so the call can narrow to it.
    pub globs: bool,
}

/// Removes the optional arguments that are not paths (nor, with `globs`, globs of the
/// question) from an argument schema.
fn keep_lean_arguments(args: &mut Value, globs: bool) {
    let required: Vec<String> = args["required"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if let Some(Value::Object(props)) = args.get_mut("properties") {
        props.retain(|name, prop| {
            required.contains(name)
                || prop.get("x-path").is_some()
                || (globs && prop["x-glob"] == "question")
        });
    }
}

/// The JSON Schema of one call, one alternative per tool: `{"tool": <name>, "args": <its
/// schema>}` with the keys of `syntax`, shaped by `shape`.
pub fn call_schema(specs: &[&ToolSpec], shape: CallShape, syntax: &CallSyntax) -> Value {
    let (name, arguments) = (syntax.name_key, syntax.args_key);
    let alternatives: Vec<Value> = specs
        .iter()
        .map(|spec| {
            let mut args = spec.input_schema.clone();
            bound_strings(&mut args, None);
            if shape.lean {
                keep_lean_arguments(&mut args, shape.globs);
            }
            let mut call = json!({
                "type": "object",
                "properties": {
                    name: {"const": spec.name},
                    arguments: args,
                },
                "required": [name, arguments],
                "additionalProperties": false,
            });
            if shape.reasoning {
                call["properties"]["reasoning"] =
                    json!({"type": "string", "maxLength": MAX_REASONING_CHARS});
                call["required"] = json!([name, arguments, "reasoning"]);
            }
            call
        })
        .collect();
    json!({"oneOf": alternatives})
}

/// GBNF for everything after the opening tag: optional whitespace, the call object, the
/// closing tag.
pub fn call_grammar(
    specs: &[&ToolSpec],
    shape: CallShape,
    syntax: &CallSyntax,
) -> Result<String, String> {
    let schema = call_schema(specs, shape, syntax).to_string();
    let body = llama_cpp_2::json_schema_to_grammar(&schema)
        .map_err(|e| format!("could not turn the tool schemas into a grammar: {e}"))?;
    // The converter names its start rule `root`; ours wraps it with the tags.
    let mut renamed = String::with_capacity(body.len() + 64);
    for line in body.lines() {
        match line.strip_prefix("root ::=") {
            Some(rest) => {
                renamed.push_str("lantern-call ::=");
                renamed.push_str(rest);
            }
            None => renamed.push_str(line),
        }
        renamed.push('\n');
    }
    // A call that ends with its object (and the reply) has nothing after it.
    let call = match syntax.in_list {
        true => "\"[\" [ \\n]{0,2} lantern-call \"]\"",
        false => "lantern-call",
    };
    renamed.push_str(&match syntax.close {
        "" => format!("root ::= [ \\n]{{0,2}} {call}\n"),
        close => format!("root ::= [ \\n]{{0,2}} {call} [ \\n]{{0,2}} \"{close}\"\n"),
    });
    Ok(renamed)
}

/// Can the call grammar hold a call of `spec`: does llama.cpp's converter turn its input schema
/// into a grammar? A tool whose schema it cannot express (an MCP server's) is refused with this
/// reason rather than offered half-constrained.
pub fn expressible(spec: &ToolSpec) -> Result<(), String> {
    let full = CallShape {
        reasoning: false,
        lean: false,
        globs: false,
    };
    call_grammar(&[spec], full, &crate::template::TEXT_PROTOCOL).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::{HERMES, LLAMA3_JSON, MISTRAL_LIST, TEXT_PROTOCOL};
    use lantern_core::tools::ToolRegistry;

    /// The alternative of `schema` that calls `tool`.
    fn alternative<'a>(schema: &'a Value, tool: &str) -> &'a Value {
        schema["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["properties"]["tool"]["const"] == tool)
            .unwrap()
    }

    #[test]
    fn short_strings_are_bounded_and_content_is_not() {
        let registry = ToolRegistry::standard();
        let full = CallShape {
            reasoning: true,
            lean: false,
            globs: false,
        };
        let schema = call_schema(&registry.specs(), full, &TEXT_PROTOCOL);
        let write = alternative(&schema, "write_file");
        let props = &write["properties"]["args"]["properties"];
        assert_eq!(props["path"]["maxLength"], MAX_SHORT_STRING_CHARS);
        assert!(props["content"].get("maxLength").is_none());
        assert_eq!(write["required"], json!(["tool", "args", "reasoning"]));
        let without = call_schema(
            &registry.specs(),
            CallShape {
                reasoning: false,
                ..full
            },
            &TEXT_PROTOCOL,
        );
        assert_eq!(without["oneOf"][0]["required"], json!(["tool", "args"]));
        assert!(without["oneOf"][0]["properties"].get("reasoning").is_none());
    }

    #[test]
    fn a_lean_call_offers_required_and_path_arguments_only() {
        let registry = ToolRegistry::standard();
        let lean = CallShape {
            reasoning: false,
            lean: true,
            globs: false,
        };
        let schema = call_schema(&registry.specs(), lean, &TEXT_PROTOCOL);
        let args = |tool: &str| {
            let props = alternative(&schema, tool)["properties"]["args"]["properties"]
                .as_object()
                .unwrap();
            props.keys().cloned().collect::<Vec<_>>()
        };
        assert_eq!(args("read_file"), ["path"]);
        assert_eq!(args("list_files"), ["directory"]);
        assert_eq!(args("search_code"), ["query"]);
        assert_eq!(args("write_file"), ["path", "content"]);
        // A message that names a glob is offered a listing's pattern, and nothing more.
        let globs = CallShape {
            globs: true,
            ..lean
        };
        let schema = call_schema(&registry.specs(), globs, &TEXT_PROTOCOL);
        let props = &alternative(&schema, "list_files")["properties"]["args"]["properties"];
        assert_eq!(props.as_object().unwrap().len(), 2);
        assert_eq!(props["pattern"]["x-glob"], "question");
        let search = &alternative(&schema, "search_code")["properties"]["args"]["properties"];
        assert_eq!(search.as_object().unwrap().len(), 1);
    }

    #[test]
    fn a_schema_the_grammar_cannot_hold_is_refused_with_a_reason() {
        let mut spec = lantern_core::toolbox::Toolbox::standard().specs()[0].clone();
        assert!(expressible(&spec).is_ok());
        // A reference to another document: the converter resolves only the schema's own.
        spec.input_schema = json!({"type": "object", "properties": {
            "a": {"$ref": "https://example.com/schemas/a.json"}}, "required": ["a"]});
        let refused = expressible(&spec).unwrap_err();
        assert!(refused.contains("grammar"), "{refused}");
    }

    #[test]
    fn a_native_call_uses_the_model_s_keys_and_closing_tag() {
        let registry = ToolRegistry::standard();
        let shape = CallShape {
            reasoning: false,
            lean: true,
            globs: false,
        };
        let schema = call_schema(&registry.specs(), shape, &HERMES);
        let first = &schema["oneOf"][0];
        assert_eq!(first["required"], json!(["name", "arguments"]));
        assert_eq!(first["properties"]["name"]["const"], "read_file");
        let grammar = call_grammar(&registry.specs(), shape, &HERMES).unwrap();
        assert!(grammar.contains("\"</tool_call>\"\n"), "{grammar}");
        assert!(!grammar.contains("TOOL_CALL"));
        // A call that ends with its object has nothing after it.
        let bare = call_grammar(&registry.specs(), shape, &LLAMA3_JSON).unwrap();
        assert!(
            bare.contains("root ::= [ \\n]{0,2} lantern-call\n"),
            "{bare}"
        );
        assert!(bare.contains("parameters"));
        let listed = call_grammar(&registry.specs(), shape, &MISTRAL_LIST).unwrap();
        assert!(
            listed.contains("root ::= [ \\n]{0,2} \"[\" [ \\n]{0,2} lantern-call \"]\"\n"),
            "{listed}"
        );
    }
}
