//! JSON Schema to TypeScript, for the schemas `schemars` derives from the IPC types.
//!
//! It covers what those schemas use and no more: objects (a property not `required` is
//! optional), maps (`additionalProperties`), arrays, literals (`const`, `enum`), unions
//! (`oneOf`, `anyOf`, a list of `type`s; nullable is a union with `null`), `$ref`s to the other
//! definitions, and the empty schema (`unknown`). A `description` becomes a `/** … */` comment.
//! Anything else is an error that says where it is, so a schema of a new kind stops the
//! generation instead of quietly becoming `unknown`.

use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// Where `schemars` puts the definitions a `$ref` names.
const DEFINITIONS: &str = "#/$defs/";

/// Keywords TypeScript cannot say (formats, ranges, defaults, titles); they are skipped.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
];

/// Keywords that say what a value is; a schema uses at most one of them.
const SHAPES: &[&str] = &["$ref", "const", "enum", "oneOf", "anyOf"];

/// Keywords of object and array schemas.
const STRUCTURE: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
];

/// How wide a union or an object may be on one line before it gets a line per member.
const WIDTH: usize = 100;

/// The TypeScript for the definitions `names`: one named export each, in the order given. A
/// `$ref` may name any of `definitions`; importing the ones another module holds is the
/// caller's part.
pub fn declarations(definitions: &Map<String, Value>, names: &[String]) -> Result<String, String> {
    let mut out = String::new();
    for name in names {
        if !is_identifier(name) {
            return Err(format!("{name}: not a TypeScript name"));
        }
        let schema = definitions
            .get(name)
            .ok_or_else(|| format!("{name}: not defined"))?;
        let context = Context {
            definitions,
            path: name.clone(),
        };
        out.push('\n');
        out.push_str(&doc(description(schema), 0));
        if is_plain_object(schema) {
            let body = object(as_map(schema, &context)?, 0, false, &context)?;
            out.push_str(&format!("export interface {name} {body}\n"));
        } else {
            let ty = render(schema, 0, &context)?;
            out.push_str(&format!("export type {name} ={};\n", spaced(&ty.text)));
        }
    }
    Ok(out)
}

/// Where in the definitions a schema is, for errors; and the definitions `$ref`s may name.
struct Context<'a> {
    definitions: &'a Map<String, Value>,
    path: String,
}

impl Context<'_> {
    fn at(&self, step: impl std::fmt::Display) -> Self {
        Context {
            definitions: self.definitions,
            path: format!("{}.{step}", self.path),
        }
    }

    fn error(&self, what: impl std::fmt::Display) -> String {
        format!("{}: {what}", self.path)
    }
}

/// A TypeScript type as text; text that begins with a line break is a union with a line per
/// member.
struct Ty {
    text: String,
    /// The members when this is a union without comments, so that a union containing it can
    /// list them as its own (a union needs parentheses inside an array too).
    members: Vec<Ty>,
}

impl Ty {
    fn atom(text: impl Into<String>) -> Ty {
        Ty {
            text: text.into(),
            members: Vec::new(),
        }
    }
}

/// The type of `schema`, its continuation lines indented by `base`.
fn render(schema: &Value, base: usize, context: &Context) -> Result<Ty, String> {
    let map = match schema {
        Value::Bool(true) => return Ok(Ty::atom("unknown")),
        Value::Bool(false) => return Ok(Ty::atom("never")),
        _ => as_map(schema, context)?,
    };
    let known = |key: &str| {
        [ANNOTATIONS, SHAPES, STRUCTURE]
            .iter()
            .any(|k| k.contains(&key))
    };
    if let Some(key) = map.keys().find(|key| !known(key)) {
        return Err(context.error(format!("`{key}` is not supported")));
    }
    let present = |keys: &[&'static str]| -> Vec<&'static str> {
        keys.iter()
            .copied()
            .filter(|k| map.contains_key(*k))
            .collect()
    };
    let shapes = present(SHAPES);
    let consistent = match (shapes.as_slice(), present(STRUCTURE).as_slice()) {
        ([], _) | ([_], []) => true,
        // A literal may repeat its type.
        (["const" | "enum"], ["type"]) => true,
        _ => false,
    };
    if !consistent {
        return Err(context.error("combines keywords that each say what the value is"));
    }
    match shapes.first().copied() {
        Some("$ref") => reference(&map["$ref"], context),
        Some("const") => Ok(Ty::atom(literal(&map["const"], context)?)),
        Some("enum") => {
            let values = as_array(&map["enum"], &context.at("enum"))?;
            let members = values
                .iter()
                .map(|v| Ok((None, Ty::atom(literal(v, context)?))))
                .collect::<Result<_, String>>()?;
            Ok(union(members, base))
        }
        Some(key) => {
            let context = context.at(key);
            let members = as_array(&map[key], &context)?
                .iter()
                .enumerate()
                .map(|(i, member)| {
                    let ty = render(member, base + 4, &context.at(i))?;
                    Ok((description(member), ty))
                })
                .collect::<Result<_, String>>()?;
            Ok(union(members, base))
        }
        _ => typed(map, base, context),
    }
}

/// A schema without a shape keyword: by its `type` (or one per type in a list).
fn typed(map: &Map<String, Value>, base: usize, context: &Context) -> Result<Ty, String> {
    let types = match map.get("type") {
        None if map.contains_key("properties") || map.contains_key("additionalProperties") => {
            vec!["object"]
        }
        None => return Ok(Ty::atom("unknown")),
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(list)) => list
            .iter()
            .map(|t| {
                t.as_str()
                    .ok_or_else(|| context.error("a type is not a string"))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(context.error("`type` is neither a string nor a list")),
    };
    let members = types
        .into_iter()
        .map(|t| {
            let ty = match t {
                "string" => Ty::atom("string"),
                "integer" | "number" => Ty::atom("number"),
                "boolean" => Ty::atom("boolean"),
                "null" => Ty::atom("null"),
                "array" => array(map, base, context)?,
                "object" => Ty::atom(object(map, base, true, context)?),
                other => return Err(context.error(format!("unknown type `{other}`"))),
            };
            Ok((None, ty))
        })
        .collect::<Result<_, String>>()?;
    Ok(union(members, base))
}

/// `T[]` from `items` (`unknown[]` without it).
fn array(map: &Map<String, Value>, base: usize, context: &Context) -> Result<Ty, String> {
    let Some(items) = map.get("items") else {
        return Ok(Ty::atom("unknown[]"));
    };
    let item = render(items, base + 2, &context.at("items"))?;
    Ok(Ty::atom(if item.text.starts_with('\n') {
        format!("({}\n{})[]", item.text, indent(base))
    } else if item.members.is_empty() {
        format!("{}[]", item.text)
    } else {
        format!("({})[]", item.text)
    }))
}

/// An object type: its properties (optional unless `required`), or a map when it has only
/// `additionalProperties`. On one line when that is short and nothing has a comment, unless
/// `inline` is false.
fn object(
    map: &Map<String, Value>,
    base: usize,
    inline: bool,
    context: &Context,
) -> Result<String, String> {
    let empty = Map::new();
    let properties = match map.get("properties") {
        Some(p) => as_map(p, &context.at("properties"))?,
        None => &empty,
    };
    let values = match map.get("additionalProperties") {
        None | Some(Value::Bool(_)) => None,
        Some(schema) => Some(schema),
    };
    if properties.is_empty() {
        let value = match values {
            Some(schema) => render(schema, base, &context.at("additionalProperties"))?.text,
            None => "unknown".to_string(),
        };
        return Ok(format!("Record<string, {value}>"));
    }
    if values.is_some() {
        return Err(context.error("properties beside `additionalProperties` are not supported"));
    }
    let required = match map.get("required") {
        Some(list) => as_array(list, &context.at("required"))?
            .iter()
            .filter_map(Value::as_str)
            .collect(),
        None => Vec::new(),
    };
    let mut members = Vec::new();
    for (key, schema) in properties {
        let ty = render(schema, base + 2, &context.at(key))?;
        let name = if is_identifier(key) {
            key.clone()
        } else {
            Value::String(key.clone()).to_string()
        };
        let optional = if required.contains(&key.as_str()) {
            ""
        } else {
            "?"
        };
        members.push((
            description(schema),
            format!("{name}{optional}:{}", spaced(&ty.text)),
        ));
    }
    let one_line = format!(
        "{{ {} }}",
        members
            .iter()
            .map(|(_, m)| m.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    );
    let simple = members
        .iter()
        .all(|(doc, m)| doc.is_none() && !m.contains('\n'));
    if inline && simple && base + one_line.len() <= WIDTH {
        return Ok(one_line);
    }
    let mut out = String::from("{\n");
    for (comment, member) in members {
        out.push_str(&doc(comment, base + 2));
        out.push_str(&format!("{}{member};\n", indent(base + 2)));
    }
    out.push_str(&indent(base));
    out.push('}');
    Ok(out)
}

/// The members as one union, an uncommented union among them spliced in, duplicates dropped.
/// On one line when it is short and no member has a comment or spans lines; else a line per
/// member.
fn union(members: Vec<(Option<&str>, Ty)>, base: usize) -> Ty {
    let mut unique: Vec<(Option<&str>, Ty)> = Vec::new();
    for (comment, ty) in members {
        let spliced = match comment {
            None if !ty.members.is_empty() => ty.members,
            _ => vec![ty],
        };
        for (i, ty) in spliced.into_iter().enumerate() {
            if !unique.iter().any(|(_, seen)| seen.text == ty.text) {
                unique.push((comment.filter(|_| i == 0), ty));
            }
        }
    }
    if unique.len() == 1 && unique[0].0.is_none() {
        return unique.remove(0).1;
    }
    let one_line = unique
        .iter()
        .map(|(_, ty)| ty.text.as_str())
        .collect::<Vec<_>>()
        .join(" | ");
    let simple = unique
        .iter()
        .all(|(comment, ty)| comment.is_none() && !ty.text.contains('\n'));
    let mut text = String::new();
    if simple && base + one_line.len() <= WIDTH {
        text = one_line;
    } else {
        for (comment, ty) in &unique {
            text.push('\n');
            text.push_str(&doc(*comment, base + 2));
            text.push_str(&format!("{}| {}", indent(base + 2), ty.text));
        }
    }
    let members = if simple {
        unique.into_iter().map(|(_, ty)| ty).collect()
    } else {
        Vec::new()
    };
    Ty { text, members }
}

/// The definitions `schema` names by `$ref`, at any depth.
pub fn references(schema: &Value) -> BTreeSet<String> {
    fn walk(value: &Value, into: &mut BTreeSet<String>) {
        match value {
            Value::Object(map) => {
                if let Some(name) = map
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|t| t.strip_prefix(DEFINITIONS))
                {
                    into.insert(name.to_string());
                }
                map.values().for_each(|v| walk(v, into));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, into)),
            _ => {}
        }
    }
    let mut names = BTreeSet::new();
    walk(schema, &mut names);
    names
}

fn reference(target: &Value, context: &Context) -> Result<Ty, String> {
    let name = target
        .as_str()
        .and_then(|t| t.strip_prefix(DEFINITIONS))
        .ok_or_else(|| context.error(format!("`$ref` {target} is not a definition")))?;
    if !context.definitions.contains_key(name) {
        return Err(context.error(format!("`$ref` names {name}, which is not defined")));
    }
    Ok(Ty::atom(name))
}

fn literal(value: &Value, context: &Context) -> Result<String, String> {
    match value {
        Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null => Ok(value.to_string()),
        _ => Err(context.error(format!("{value} is not a literal TypeScript can spell"))),
    }
}

/// A definition that becomes an `interface`: an object with properties, nothing else.
fn is_plain_object(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
        && schema
            .get("properties")
            .is_some_and(|p| p.as_object().is_some_and(|p| !p.is_empty()))
        && schema
            .get("additionalProperties")
            .is_none_or(Value::is_boolean)
}

fn description(schema: &Value) -> Option<&str> {
    schema.get("description").and_then(Value::as_str)
}

/// `text` as a doc comment at `column`, or nothing.
fn doc(text: Option<&str>, column: usize) -> String {
    let Some(text) = text else {
        return String::new();
    };
    let text = text.replace("*/", "*\\/");
    let pad = indent(column);
    let lines: Vec<&str> = text.lines().collect();
    if let [line] = lines[..] {
        return format!("{pad}/** {line} */\n");
    }
    let mut out = format!("{pad}/**\n");
    for line in lines {
        out.push_str(format!("{pad} * {line}").trim_end());
        out.push('\n');
    }
    out.push_str(&format!("{pad} */\n"));
    out
}

/// `text` after a `:` or `=`: a space before it, unless it starts on a line of its own.
fn spaced(text: &str) -> String {
    if text.starts_with('\n') {
        text.to_string()
    } else {
        format!(" {text}")
    }
}

fn indent(column: usize) -> String {
    " ".repeat(column)
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

fn as_map<'a>(value: &'a Value, context: &Context) -> Result<&'a Map<String, Value>, String> {
    value
        .as_object()
        .ok_or_else(|| context.error("expected a schema object"))
}

fn as_array<'a>(value: &'a Value, context: &Context) -> Result<&'a Vec<Value>, String> {
    value
        .as_array()
        .ok_or_else(|| context.error("expected a list"))
}
