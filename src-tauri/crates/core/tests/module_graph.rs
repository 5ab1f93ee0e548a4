//! The modules of every crate import each other without a loop, `lantern-core`'s modules keep
//! the layers ARCHITECTURE.md states (a module uses its own layer and the ones below, never one
//! above), and the model backends never build Lantern's standard tools.
//!
//! The graph is drawn from the code the crates build in production: the module tree is followed
//! from `lib.rs` and `main.rs` through `mod` declarations, items under `#[cfg(test)]` are left
//! out, and comments (doc links included) are not imports. Every `crate::`, `super::` and
//! `self::` path, in `use` declarations and in code, is an arrow from the module that writes it
//! to the module it names. Two modules are compared where their paths part: `tools::read_file`
//! naming `walk::known_paths` is an arrow from `tools` to `walk` among core's top-level modules;
//! `diagnostics::run` naming `diagnostics::checkers` is one among the modules of `diagnostics`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use tree_sitter::{Node, Parser};

/// A module, as the path of names from its crate's root (`[]` is the root itself).
type ModulePath = Vec<String>;

/// Arrows among the modules of one parent: `from -> to -> the files that make the arrow`.
type Arrows = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// Every arrow of one crate, by the parent module whose children they join.
#[derive(Default)]
struct Graph {
    by_parent: BTreeMap<ModulePath, Arrows>,
    /// Every path the crate's production code writes, with the file that writes it.
    written: Vec<(String, PathBuf)>,
}

impl Graph {
    /// Reads the crate whose root file is `root` (a `lib.rs` or `main.rs`).
    fn of_crate(root: &Path) -> Graph {
        let mut graph = Graph::default();
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_rust::LANGUAGE.into())
            .expect("the Rust grammar loads");
        let mut pending = vec![(root.to_path_buf(), Vec::new())];
        while let Some((file, module)) = pending.pop() {
            let text = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let tree = parser.parse(&text, None).expect("a parse tree");
            let mut found = Found::default();
            found.items(tree.root_node(), text.as_bytes());
            for child in found.modules {
                pending.push((
                    child_file(&file, &child),
                    [module.clone(), vec![child]].concat(),
                ));
            }
            for path in found.paths {
                graph.add(&module, &path, &file);
                graph.written.push((path, file.clone()));
            }
        }
        graph
    }

    fn add(&mut self, from: &ModulePath, written: &str, file: &Path) {
        let Some(to) = resolve(from, written) else {
            return;
        };
        let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
        // A module naming its own items or an ancestor's, or its own children, is no arrow
        // between siblings.
        if common >= from.len() || common >= to.len() {
            return;
        }
        let file = file.display().to_string();
        self.by_parent
            .entry(from[..common].to_vec())
            .or_default()
            .entry(from[common].clone())
            .or_default()
            .entry(to[common].clone())
            .or_default()
            .insert(file);
    }

    /// One loop among siblings, written out with the files that make each arrow, if any.
    fn a_loop(&self) -> Option<String> {
        for (parent, arrows) in &self.by_parent {
            if let Some(ring) = ring_in(arrows) {
                let steps: Vec<String> = ring
                    .windows(2)
                    .map(|pair| {
                        let files = &arrows[&pair[0]][&pair[1]];
                        format!("{} -> {} (in {files:?})", pair[0], pair[1])
                    })
                    .collect();
                let whose = match parent.is_empty() {
                    true => "the crate's top-level modules".to_string(),
                    false => format!("the modules of `{}`", parent.join("::")),
                };
                return Some(format!(
                    "{whose} import each other in a loop:\n  {}",
                    steps.join("\n  ")
                ));
            }
        }
        None
    }

    /// The arrows among a crate's top-level modules.
    fn top(&self) -> Arrows {
        self.by_parent.get(&Vec::new()).cloned().unwrap_or_default()
    }
}

/// What one file declares: its child modules (`mod x;` outside tests) and the paths it writes.
#[derive(Default)]
struct Found {
    modules: Vec<String>,
    paths: Vec<String>,
}

impl Found {
    /// Walks the items under `node`, leaving out each one a `#[cfg(test)]` attribute guards.
    fn items(&mut self, node: Node, text: &[u8]) {
        let mut cursor = node.walk();
        let mut test_only = false;
        for child in node.children(&mut cursor) {
            match child.kind() {
                "line_comment" | "block_comment" => {}
                "attribute_item" => {
                    let attribute = child.utf8_text(text).unwrap_or_default();
                    test_only |= attribute.replace(' ', "") == "#[cfg(test)]";
                }
                _ if test_only => test_only = false,
                "mod_item" if child.child_by_field_name("body").is_none() => {
                    let name = child.child_by_field_name("name").expect("a module's name");
                    self.modules
                        .push(name.utf8_text(text).unwrap_or_default().to_string());
                }
                "use_declaration" => {
                    let tree = child.child_by_field_name("argument").expect("a use tree");
                    self.paths.extend(use_paths(tree, text));
                }
                "scoped_identifier" | "scoped_type_identifier" => {
                    let written = child.utf8_text(text).unwrap_or_default();
                    self.paths.push(written.split_whitespace().collect());
                }
                _ => self.items(child, text),
            }
        }
    }
}

/// The paths a `use` tree names, braces expanded (`a::{b, c::d}` is `a::b` and `a::c::d`).
fn use_paths(tree: Node, text: &[u8]) -> Vec<String> {
    let words = |node: Node| -> String {
        node.utf8_text(text)
            .unwrap_or_default()
            .split_whitespace()
            .collect()
    };
    match tree.kind() {
        "scoped_use_list" => {
            let prefix = tree.child_by_field_name("path").map(words);
            let list = tree.child_by_field_name("list").expect("a use list");
            use_paths(list, text)
                .into_iter()
                .map(|rest| match &prefix {
                    Some(prefix) => format!("{prefix}::{rest}"),
                    None => rest,
                })
                .collect()
        }
        "use_list" => {
            let mut cursor = tree.walk();
            let children: Vec<Node> = tree.named_children(&mut cursor).collect();
            children
                .into_iter()
                .filter(|c| !c.kind().ends_with("comment"))
                .flat_map(|c| use_paths(c, text))
                .collect()
        }
        "use_as_clause" => use_paths(tree.child_by_field_name("path").expect("a path"), text),
        "use_wildcard" => vec![words(tree).trim_end_matches("::*").to_string()],
        _ => vec![words(tree)],
    }
}

/// The module a path written in `from` names, when it is a path within the crate.
fn resolve(from: &ModulePath, written: &str) -> Option<ModulePath> {
    let mut segments = written.split("::").filter(|s| !s.is_empty()).peekable();
    let mut at: ModulePath = match *segments.peek()? {
        "crate" => Vec::new(),
        "self" | "super" => from.clone(),
        _ => return None,
    };
    if segments.peek() == Some(&"crate") {
        segments.next();
    }
    while let Some(&word) = segments.peek() {
        match word {
            "self" => {}
            "super" => {
                at.pop()?;
            }
            _ => break,
        }
        segments.next();
    }
    at.extend(segments.map(str::to_string));
    Some(at)
}

/// Where `mod name;` declared in `parent` lives: `name.rs` or `name/mod.rs`, beside a root or
/// `mod.rs` file, or in the folder named after any other file.
fn child_file(parent: &Path, name: &str) -> PathBuf {
    let folder = match parent.file_name().and_then(|n| n.to_str()) {
        Some("lib.rs" | "main.rs" | "mod.rs") => parent.parent().unwrap().to_path_buf(),
        _ => parent.with_extension(""),
    };
    let flat = folder.join(format!("{name}.rs"));
    if flat.exists() {
        flat
    } else {
        folder.join(name).join("mod.rs")
    }
}

/// A loop in `arrows`, from its first module back to it, if there is one.
fn ring_in(arrows: &Arrows) -> Option<Vec<String>> {
    fn visit(
        at: &str,
        arrows: &Arrows,
        done: &mut BTreeSet<String>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|p| p == at) {
            let mut ring = path[start..].to_vec();
            ring.push(at.to_string());
            return Some(ring);
        }
        if !done.insert(at.to_string()) {
            return None;
        }
        path.push(at.to_string());
        for next in arrows.get(at).into_iter().flat_map(|to| to.keys()) {
            if let Some(ring) = visit(next, arrows, done, path) {
                return Some(ring);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    arrows
        .keys()
        .find_map(|start| visit(start, arrows, &mut done, &mut Vec::new()))
}

/// The folder holding the workspace's crates (`src-tauri`).
fn workspace() -> PathBuf {
    let core = Path::new(env!("CARGO_MANIFEST_DIR"));
    core.parent().and_then(Path::parent).unwrap().to_path_buf()
}

/// The root file of every crate of the workspace: each library and each program.
fn crate_roots() -> Vec<PathBuf> {
    let mut sources = vec![workspace().join("src")];
    for entry in std::fs::read_dir(workspace().join("crates")).unwrap() {
        sources.push(entry.unwrap().path().join("src"));
    }
    let roots: Vec<PathBuf> = sources
        .iter()
        .flat_map(|src| [src.join("lib.rs"), src.join("main.rs")])
        .filter(|root| root.exists())
        .collect();
    assert!(roots.len() >= 7, "the crates were not found: {roots:?}");
    roots
}

/// Core's layers as ARCHITECTURE.md states them, bottom first: each a name and its modules.
fn stated_layers() -> Vec<(String, Vec<String>)> {
    let doc = std::fs::read_to_string(workspace().join("../ARCHITECTURE.md")).unwrap();
    let start = doc
        .find("<!-- layers -->")
        .expect("ARCHITECTURE.md marks its layer table");
    let end = doc.find("<!-- /layers -->").expect("the layer table ends");
    let mut layers: Vec<(String, Vec<String>)> = doc[start..end]
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| layer"))
        .map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let modules = cells[2]
                .split(',')
                .map(|m| m.trim().trim_matches('`').to_string())
                .collect();
            (cells[1].to_string(), modules)
        })
        .collect();
    // The table reads top to bottom like a drawing of the building; the check goes upward.
    layers.reverse();
    layers
}

#[test]
fn no_crate_has_modules_that_import_each_other_in_a_loop() {
    for root in crate_roots() {
        let graph = Graph::of_crate(&root);
        if let Some(the_loop) = graph.a_loop() {
            panic!("{}: {the_loop}", root.display());
        }
    }
}

#[test]
fn core_modules_use_only_their_own_layer_and_those_below() {
    let layers = stated_layers();
    let layer_of: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(i, (_, modules))| modules.iter().map(move |m| (m.as_str(), i)))
        .collect();
    let core_root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs");
    let graph = Graph::of_crate(&core_root);
    assert!(graph.top().len() > 10, "core's arrows were not read");
    let lib = std::fs::read_to_string(&core_root).unwrap();
    let declared: BTreeSet<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod ")?.strip_suffix(';'))
        .collect();
    let stated: BTreeSet<&str> = layer_of.keys().copied().collect();
    assert_eq!(
        declared, stated,
        "every module of lib.rs is in one layer of ARCHITECTURE.md"
    );
    for (from, targets) in graph.top() {
        for (to, files) in targets {
            let (up, down) = (layer_of[from.as_str()], layer_of[to.as_str()]);
            assert!(
                down <= up,
                "`{from}` ({}) uses `{to}` ({}), a layer above it, in {files:?}",
                layers[up].0,
                layers[down].0
            );
        }
    }
}

#[test]
fn a_loop_between_two_modules_is_found_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("b")).unwrap();
    std::fs::write(
        src.join("lib.rs"),
        "mod a;\nmod b;\n#[cfg(test)]\nmod tests;\n",
    )
    .unwrap();
    std::fs::write(src.join("a.rs"), "use crate::b::{self, inner::Thing};\n").unwrap();
    std::fs::write(src.join("b/mod.rs"), "pub mod inner;\n").unwrap();
    // The arrow back up is written in code, not in a `use`.
    std::fs::write(
        src.join("b/inner.rs"),
        "// crate::a in a comment is no arrow\npub struct Thing;\nfn f() { super::super::a::g() }\n",
    )
    .unwrap();
    let graph = Graph::of_crate(&src.join("lib.rs"));
    let found = graph.a_loop().expect("the loop a -> b -> a");
    assert!(
        found.contains("a -> b") && found.contains("b -> a"),
        "{found}"
    );

    // Without the arrow back, and with one only a test makes, there is none.
    std::fs::write(
        src.join("b/inner.rs"),
        "pub struct Thing;\n#[cfg(test)]\nmod tests { use crate::a; }\n",
    )
    .unwrap();
    assert_eq!(Graph::of_crate(&src.join("lib.rs")).a_loop(), None);
}

/// The model backends take their tools from each request (and the calibration from the
/// toolbox it is given), never from a tool set of their own: Lantern's standard tools are
/// built by the places that compose a session (the app, the CLI, the evaluation, the probe)
/// and by the MCP hub that adds servers' tools to them.
#[test]
fn the_model_backends_never_build_the_standard_tools() {
    for backend in ["llama", "openai", "providers"] {
        let root = workspace().join("crates").join(backend).join("src/lib.rs");
        let built: Vec<String> = Graph::of_crate(&root)
            .written
            .into_iter()
            .filter(|(path, _)| {
                path.ends_with("ToolRegistry::standard") || path.ends_with("Toolbox::standard")
            })
            .map(|(path, file)| format!("{path} in {}", file.display()))
            .collect();
        assert!(
            built.is_empty(),
            "{backend} builds the standard tools: {built:?}"
        );
    }
}
