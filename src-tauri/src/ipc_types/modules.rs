//! The generated types in several modules, by what they are about, so that no one file holds
//! them all.
//!
//! Each module names its roots (the types a command, a channel or an error uses directly).
//! The modules are ordered from the lowest up: a definition belongs to the first module whose
//! roots reach it through `$ref`s, so everything a lower module's type refers to is in that
//! module or one below it, and imports never go round in a circle.

use super::typescript::{declarations, references};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// A module to write: its file name (in `ui/src/ipc/generated/`), what it holds in a line, and
/// the names of its roots.
pub struct Module {
    pub file: &'static str,
    pub about: &'static str,
    pub roots: Vec<String>,
}

/// Each module's file name and text, in the order given. `header` opens every file.
pub fn write(
    definitions: &Map<String, Value>,
    modules: &[Module],
    header: &str,
) -> Result<Vec<(&'static str, String)>, String> {
    let owner = owners(definitions, modules)?;
    let mut files = Vec::new();
    for (index, module) in modules.iter().enumerate() {
        let names: Vec<String> = owner
            .iter()
            .filter(|(_, owned_by)| **owned_by == index)
            .map(|(name, _)| name.clone())
            .collect();
        // What this module's types name that another module holds, by that module.
        let mut imports: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
        for name in &names {
            for used in references(&definitions[name]) {
                let from = owner[&used];
                if from != index {
                    imports.entry(from).or_default().insert(used);
                }
            }
        }
        let mut text = format!("{header}// {}\n", module.about);
        if !imports.is_empty() {
            text.push('\n');
        }
        for (from, used) in imports {
            let stem = modules[from].file.trim_end_matches(".ts");
            let used: Vec<String> = used.into_iter().collect();
            text.push_str(&format!(
                "import type {{ {} }} from \"./{stem}\";\n",
                used.join(", ")
            ));
        }
        text.push_str(&declarations(definitions, &names)?);
        files.push((module.file, text));
    }
    Ok(files)
}

/// Which module (by index) each definition goes to, by name (sorted).
fn owners(
    definitions: &Map<String, Value>,
    modules: &[Module],
) -> Result<BTreeMap<String, usize>, String> {
    let mut owner = BTreeMap::new();
    for (index, module) in modules.iter().enumerate() {
        let mut pending: Vec<String> = module.roots.clone();
        while let Some(name) = pending.pop() {
            if owner.contains_key(&name) {
                continue;
            }
            let schema = definitions
                .get(&name)
                .ok_or_else(|| format!("{name}, a type of {}, is not defined", module.file))?;
            owner.insert(name, index);
            pending.extend(references(schema));
        }
    }
    if let Some(stray) = definitions.keys().find(|name| !owner.contains_key(*name)) {
        return Err(format!("{stray} is reached from no module's roots"));
    }
    Ok(owner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn module(file: &'static str, roots: &[&str]) -> Module {
        Module {
            file,
            about: "Types.",
            roots: roots.iter().map(|r| r.to_string()).collect(),
        }
    }

    #[test]
    fn a_type_goes_to_the_lowest_module_that_reaches_it_and_is_imported_above() {
        let definitions = json!({
            "Call": {"type": "object", "properties": {"tool": {"type": "string"}}, "required": ["tool"]},
            "Event": {"type": "object", "properties": {"call": {"$ref": "#/$defs/Call"}}, "required": ["call"]},
            "Settings": {"type": "object", "properties": {"on": {"type": "boolean"}}, "required": ["on"]}
        });
        let definitions = definitions.as_object().unwrap();
        let files = write(
            definitions,
            &[
                module("tools.ts", &["Call"]),
                module("events.ts", &["Event"]),
                module("app.ts", &["Settings", "Event"]),
            ],
            "// Generated.\n",
        )
        .unwrap();
        assert_eq!(
            files[0],
            (
                "tools.ts",
                "// Generated.\n// Types.\n\nexport interface Call {\n  tool: string;\n}\n"
                    .to_string()
            )
        );
        assert_eq!(
            files[1].1,
            "// Generated.\n// Types.\n\nimport type { Call } from \"./tools\";\n\n\
             export interface Event {\n  call: Call;\n}\n"
        );
        assert!(files[2].1.contains("export interface Settings"));
        assert!(!files[2].1.contains("Event"), "a type is written once");
    }

    #[test]
    fn a_type_no_module_reaches_or_a_root_not_defined_is_an_error() {
        let definitions = json!({"A": {"type": "string"}, "B": {"type": "string"}});
        let definitions = definitions.as_object().unwrap();
        let stray = write(definitions, &[module("a.ts", &["A"])], "").unwrap_err();
        assert!(stray.contains("B is reached from no module"), "{stray}");
        let missing = write(definitions, &[module("a.ts", &["A", "B", "C"])], "").unwrap_err();
        assert!(
            missing.contains("C, a type of a.ts, is not defined"),
            "{missing}"
        );
    }
}
