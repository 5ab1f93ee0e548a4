//! The converter on small schemas of each kind the IPC types use, and on what it refuses.

use super::typescript::declarations;
use serde_json::{json, Value};

/// Every definition, by name.
fn convert(definitions: Value) -> Result<String, String> {
    let definitions = definitions.as_object().expect("definitions are an object");
    let mut names: Vec<String> = definitions.keys().cloned().collect();
    names.sort();
    declarations(definitions, &names)
}

fn ts(definitions: Value) -> String {
    convert(definitions).expect("the schemas convert")
}

#[test]
fn an_object_becomes_an_interface_with_optional_and_documented_properties() {
    let out = ts(json!({"Saved": {
        "type": "object",
        "description": "A file written.",
        "properties": {
            "path": {"type": "string", "description": "Workspace-relative."},
            "bytes": {"type": "integer", "format": "uint64", "minimum": 0},
            "note": {"type": "string"},
            "content-type": {"type": "string"}
        },
        "required": ["path", "bytes", "content-type"]
    }}));
    assert_eq!(
        out,
        r#"
/** A file written. */
export interface Saved {
  /** Workspace-relative. */
  path: string;
  bytes: number;
  note?: string;
  "content-type": string;
}
"#
    );
}

#[test]
fn string_enums_become_unions_of_literals_with_their_comments() {
    let out = ts(json!({
        "Risk": {"type": "string", "enum": ["safe", "read"]},
        "Reason": {"oneOf": [
            {"type": "string", "enum": ["cancelled", "error"]},
            {"type": "string", "const": "answer", "description": "The model answered."}
        ]}
    }));
    assert_eq!(
        out,
        r#"
export type Reason =
  | "cancelled"
  | "error"
  /** The model answered. */
  | "answer";

export type Risk = "safe" | "read";
"#
    );
}

#[test]
fn a_tagged_enum_becomes_a_discriminated_union() {
    let out = ts(json!({"Progress": {
        "description": "How a load is going.",
        "oneOf": [
            {
                "type": "object",
                "properties": {
                    "stage": {"type": "string", "const": "reading"},
                    "fraction": {"type": "number", "format": "float"}
                },
                "required": ["stage", "fraction"],
                "description": "Reading the weights."
            },
            {
                "type": "object",
                "properties": {"stage": {"type": "string", "const": "done"}},
                "required": ["stage"]
            }
        ]
    }}));
    assert_eq!(
        out,
        r#"
/** How a load is going. */
export type Progress =
  /** Reading the weights. */
  | { stage: "reading"; fraction: number }
  | { stage: "done" };
"#
    );
}

#[test]
fn a_variant_with_documented_fields_spans_lines() {
    let out = ts(json!({"Event": {"oneOf": [{
        "type": "object",
        "properties": {
            "event": {"type": "string", "const": "finished"},
            "text": {"type": "string", "description": "The answer."}
        },
        "required": ["event", "text"]
    }, {
        "type": "object",
        "properties": {"event": {"type": "string", "const": "started"}},
        "required": ["event"]
    }]}}));
    assert_eq!(
        out,
        r#"
export type Event =
  | {
      event: "finished";
      /** The answer. */
      text: string;
    }
  | { event: "started" };
"#
    );
}

#[test]
fn nullable_values_arrays_maps_and_references() {
    let out = ts(json!({
        "Span": {"type": "object", "properties": {"start": {"type": "integer"}}, "required": ["start"]},
        "Report": {
            "type": "object",
            "properties": {
                "span": {"anyOf": [{"$ref": "#/$defs/Span"}, {"type": "null"}]},
                "spans": {"type": "array", "items": {"$ref": "#/$defs/Span"}},
                "either": {"type": "array", "items": {"type": ["string", "null"]}},
                "anything": {"type": "array"},
                "score": {"type": ["number", "integer", "null"], "format": "double"},
                "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
                "loose": {"type": "object"},
                "choice": {"type": ["string", "null"], "enum": ["a", null]}
            },
            "required": ["span", "spans", "either", "anything", "score", "counts", "loose", "choice"]
        }
    }));
    assert_eq!(
        out,
        r#"
export interface Report {
  span: Span | null;
  spans: Span[];
  either: (string | null)[];
  anything: unknown[];
  score: number | null;
  counts: Record<string, number>;
  loose: Record<string, unknown>;
  choice: "a" | null;
}

export interface Span {
  start: number;
}
"#
    );
}

#[test]
fn an_empty_or_true_schema_is_unknown_and_false_is_never() {
    let out = ts(json!({
        "Holder": {
            "type": "object",
            "properties": {
                "args": true,
                "preview": {"description": "Any JSON."},
                "nothing": false
            },
            "required": ["args", "preview", "nothing"]
        }
    }));
    assert_eq!(
        out,
        r#"
export interface Holder {
  args: unknown;
  /** Any JSON. */
  preview: unknown;
  nothing: never;
}
"#
    );
}

#[test]
fn long_unions_and_objects_get_a_line_per_member() {
    let words: Vec<String> = (0..12).map(|i| format!("value_number_{i}")).collect();
    let out = ts(json!({"Long": {"type": "string", "enum": words}}));
    assert_eq!(out.lines().nth(1), Some("export type Long ="));
    assert_eq!(out.lines().filter(|l| l.starts_with("  | ")).count(), 12);
}

#[test]
fn comments_keep_their_lines_and_cannot_close_early() {
    let out = ts(json!({"Note": {
        "type": "string",
        "description": "First line\nsecond line with */ inside"
    }}));
    assert_eq!(
        out,
        "\n/**\n * First line\n * second line with *\\/ inside\n */\nexport type Note = string;\n"
    );
}

#[test]
fn exports_are_in_name_order_whatever_the_input_order() {
    let out = ts(json!({
        "Zebra": {"type": "string"},
        "Apple": {"type": "boolean"},
        "Mango": {"type": "integer"}
    }));
    let names: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("export type "))
        .collect();
    assert_eq!(
        names,
        ["Apple = boolean;", "Mango = number;", "Zebra = string;"]
    );
}

#[test]
fn what_it_cannot_convert_is_an_error_saying_where() {
    let cases = [
        (
            json!({"A": {"type": "object", "properties": {"x": {"$ref": "#/$defs/Missing"}}}}),
            "A.x: `$ref` names Missing, which is not defined",
        ),
        (
            json!({"A": {"allOf": [{"type": "string"}]}}),
            "A: `allOf` is not supported",
        ),
        (
            json!({"A": {"oneOf": [{"type": "string"}, {"type": "tuple"}]}}),
            "A.oneOf.1: unknown type `tuple`",
        ),
        (
            json!({"A": {"const": {"an": "object"}}}),
            "A: {\"an\":\"object\"} is not a literal TypeScript can spell",
        ),
        (
            json!({"A": {"$ref": "#/$defs/B", "oneOf": []}, "B": {"type": "string"}}),
            "A: combines keywords that each say what the value is",
        ),
        (
            json!({"A": {"const": "a", "type": "object", "properties": {}}}),
            "A: combines keywords that each say what the value is",
        ),
        (
            json!({"A": {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": {"type": "string"}}}),
            "A: properties beside `additionalProperties` are not supported",
        ),
        (
            json!({"not-a-name": {"type": "string"}}),
            "not-a-name: not a TypeScript name",
        ),
    ];
    for (definitions, error) in cases {
        assert_eq!(convert(definitions).unwrap_err(), error);
    }
}
