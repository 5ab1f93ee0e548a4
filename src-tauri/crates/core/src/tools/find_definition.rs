use super::{PreviewKind, Resolved, ResultKind, Risk, Target, Tool, ToolContext};
use crate::error::ToolError;
use lantern_index::{split_member, CodeIndex, Located};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

/// The most definitions one result lists.
const MAX_DEFINITIONS: usize = 20;

/// The most similar names suggested when a name is not defined.
const MAX_SUGGESTIONS: usize = 5;

/// Find where a name is defined in the workspace's code: every function, method, class,
/// struct, enum, trait, interface, type, constant or module of that name, with its file, its
/// lines, its kind and its first line, the project's own code first. Use it to answer where
/// something is defined or implemented. Reads Rust, Python, JavaScript, TypeScript and Go files;
/// use search_code for other files or for where a name is used.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The name as the code spells it, e.g. "parse_args" or "Config"; "Config.load" or
    /// "Config::load" for a member of a type.
    #[schemars(length(min = 1, max = 200), extend("x-symbol" = "definition"))]
    pub name: String,
}

pub struct FindDefinition;

impl Tool for FindDefinition {
    type Input = Input;
    const NAME: &'static str = "find_definition";
    const RISK: Risk = Risk::Read;
    const PREVIEW: PreviewKind = PreviewKind::None;
    const RESULT: ResultKind = ResultKind::Matches;

    fn example() -> Value {
        json!({"name": "parse_args"})
    }

    /// The whole workspace: a name may be defined in any of its files.
    fn target(_input: &Input) -> Target {
        Target::Paths(vec![".".to_string()])
    }

    fn run(input: Input, _target: &Resolved, ctx: &ToolContext) -> Result<Value, ToolError> {
        let asked = input.name.trim();
        let member = split_member(asked);
        let name = member.1;
        if name.is_empty() {
            return Err(ToolError::invalid("name is empty")
                .with_hint("Give the name of a function, class or other definition."));
        }
        let (index, _) = ctx.code_index.refresh(&ctx.workspace, |_| {})?;
        let index = index.as_ref().expect("a refreshed index is present");
        let found: Vec<Located<'_>> = index.definitions_written(asked);
        if found.is_empty() {
            return Err(not_defined(index, asked, name));
        }
        let count = found.len();
        let matches: Vec<Value> = found
            .iter()
            .take(MAX_DEFINITIONS)
            .map(|l| {
                let d = l.definition;
                let mut entry = json!({
                    "path": l.path,
                    "line": d.start_line,
                    "end_line": d.end_line,
                    "column": 1,
                    "kind": d.kind.as_str(),
                    "text": d.signature,
                    "defines": d.name,
                });
                if let Some(parent) = &d.parent {
                    entry["parent"] = json!(parent);
                }
                entry
            })
            .collect();
        let mut data = json!({"name": asked, "matches": matches, "count": count});
        if count > MAX_DEFINITIONS {
            data["truncated"] = json!(true);
        }
        Ok(data)
    }
}

/// The error for a name nothing defines, with the defined names most like it.
fn not_defined(index: &CodeIndex, asked: &str, name: &str) -> ToolError {
    let lower = name.to_lowercase();
    let mut similar: Vec<(f64, &str)> = index
        .names()
        .iter()
        .map(|n| (strsim::jaro_winkler(&lower, &n.to_lowercase()), n.as_str()))
        .filter(|(score, _)| *score >= 0.85)
        .collect();
    similar.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    let similar: Vec<&str> = similar
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, n)| n)
        .collect();
    let (files, _) = index.counts();
    let hint = if similar.is_empty() {
        "Use search_code to search the text of every file for it.".to_string()
    } else {
        format!("Names defined that are close: {}.", similar.join(", "))
    };
    ToolError::not_found(format!(
        "No definition of {asked} in the {files} Rust, Python, JavaScript, TypeScript and Go files of the workspace"
    ))
    .with_hint(hint)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Workspace;

    fn context(files: &[(&str, &str)]) -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let workspace = Workspace::open(dir.path()).unwrap();
        (dir, ToolContext::new(workspace, None))
    }

    fn find(ctx: &ToolContext, name: &str) -> Result<Value, ToolError> {
        let input = Input {
            name: name.to_string(),
        };
        let target = Resolved::default();
        FindDefinition::run(input, &target, ctx)
    }

    #[test]
    fn every_definition_is_listed_with_file_lines_kind_and_first_line() {
        let (_dir, ctx) = context(&[
            (
                "src/store.ts",
                "export class Store {\n  dispatch(action: Action) {\n    return action;\n  }\n}\n",
            ),
            ("src/other.py", "def dispatch(event):\n    pass\n"),
        ]);
        let found = find(&ctx, "dispatch").unwrap();
        assert_eq!(found["count"], 2);
        let first = &found["matches"][0];
        assert_eq!(first["path"], "src/other.py");
        assert_eq!(
            (first["line"].as_u64(), first["end_line"].as_u64()),
            (Some(1), Some(2))
        );
        assert_eq!(first["kind"], "function");
        assert_eq!(first["text"], "def dispatch(event):");
        let second = &found["matches"][1];
        assert_eq!(
            (second["kind"].as_str(), second["parent"].as_str()),
            (Some("method"), Some("Store"))
        );
    }

    #[test]
    fn a_member_is_asked_for_through_its_type() {
        let (_dir, ctx) = context(&[(
            "lib.rs",
            "struct A;\nimpl A { fn load() {} }\nstruct B;\nimpl B { fn load() {} }\n",
        )]);
        for asked in ["B::load", "B.load", "crate::B::load"] {
            let found = find(&ctx, asked).unwrap();
            assert_eq!(found["count"], 1, "{asked}");
            assert_eq!(found["matches"][0]["line"], 4, "{asked}");
        }
    }

    #[test]
    fn a_name_nobody_defines_is_an_error_that_names_the_close_ones() {
        let (_dir, ctx) = context(&[("app.py", "def parse_args():\n    pass\n")]);
        let error = find(&ctx, "parse_arg").unwrap_err();
        assert!(
            error.to_string().contains("No definition of parse_arg"),
            "{error}"
        );
        assert!(format!("{error:?}").contains("parse_args"), "{error:?}");
    }
}
