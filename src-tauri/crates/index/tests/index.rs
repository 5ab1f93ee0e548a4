//! A project's index: refreshed by stamps, asked where a name is defined and who uses it,
//! saved and loaded.

use lantern_index::{CodeIndex, Kind, Stamp, MAX_FILE_BYTES};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// A project in memory: path → (stamp, text).
struct Project(BTreeMap<String, (Stamp, String)>);

impl Project {
    fn new(files: &[(&str, &str)]) -> Project {
        let mut project = Project(BTreeMap::new());
        for (path, text) in files {
            project.write(path, text);
        }
        project
    }

    fn write(&mut self, path: &str, text: &str) {
        let modified_ns = self.0.get(path).map_or(1, |(s, _)| s.modified_ns + 1);
        let stamp = Stamp {
            modified_ns,
            len: text.len() as u64,
        };
        self.0.insert(path.to_string(), (stamp, text.to_string()));
    }

    /// Refreshes `index` and returns the paths it read.
    fn refresh(&self, index: &mut CodeIndex) -> Vec<String> {
        let read = RefCell::new(Vec::new());
        index.refresh(
            self.0.iter().map(|(p, (s, _))| (p.clone(), *s)),
            true,
            |path| {
                read.borrow_mut().push(path.to_string());
                self.0.get(path).map(|(_, t)| t.clone())
            },
            |_| {},
        );
        read.into_inner()
    }
}

#[test]
fn a_refresh_reads_only_new_and_changed_source_files_and_drops_deleted_ones() {
    let mut project = Project::new(&[
        ("src/a.py", "def alpha():\n    pass\n"),
        ("src/b.py", "def beta():\n    pass\n"),
        ("README.md", "# alpha\n"),
    ]);
    let mut index = CodeIndex::default();
    assert_eq!(project.refresh(&mut index), vec!["src/a.py", "src/b.py"]);
    assert_eq!(project.refresh(&mut index), Vec::<String>::new());

    project.write("src/b.py", "def gamma():\n    pass\n");
    project.0.remove("src/a.py");
    assert_eq!(project.refresh(&mut index), vec!["src/b.py"]);
    assert!(index.definitions("alpha").is_empty());
    assert!(index.definitions("beta").is_empty());
    assert_eq!(index.definitions("gamma")[0].path, "src/b.py");
    assert_eq!(index.names(), ["gamma"]);
}

#[test]
fn the_defined_names_hold_through_a_refresh_that_changes_nothing_and_follow_a_file_dropped() {
    let mut project = Project::new(&[
        ("a.py", "def alpha():\n    pass\n"),
        ("b.py", "def beta():\n    pass\n"),
    ]);
    let mut index = CodeIndex::default();
    project.refresh(&mut index);
    assert_eq!(index.names(), ["alpha", "beta"]);
    project.refresh(&mut index);
    assert_eq!(index.names(), ["alpha", "beta"]);
    project.0.remove("a.py");
    project.refresh(&mut index);
    assert_eq!(index.names(), ["beta"]);
}

#[test]
fn a_listing_cut_short_drops_nothing() {
    let project = Project::new(&[
        ("a.py", "def alpha():\n    pass\n"),
        ("b.py", "def beta():\n    pass\n"),
    ]);
    let mut index = CodeIndex::default();
    project.refresh(&mut index);
    let only_a = project.0.iter().take(1).map(|(p, (s, _))| (p.clone(), *s));
    let refreshed = index.refresh(only_a, false, |_| None, |_| {});
    assert_eq!((refreshed.removed, refreshed.kept), (0, 1));
    assert_eq!(index.names(), ["alpha", "beta"]);
}

#[test]
fn a_file_over_the_size_bound_is_not_read() {
    let mut index = CodeIndex::default();
    let big = Stamp {
        modified_ns: 1,
        len: MAX_FILE_BYTES + 1,
    };
    let refreshed = index.refresh(
        vec![("bundle.js".to_string(), big)],
        true,
        |_| panic!("a file over the bound is never read"),
        |_| {},
    );
    assert_eq!((refreshed.parsed, refreshed.skipped), (0, 1));
}

#[test]
fn the_project_s_own_definition_comes_before_tests_and_constants() {
    let project = Project::new(&[
        ("tests/test_config.py", "def load():\n    pass\n"),
        ("pkg/deep/config.py", "load = None\n"),
        ("pkg/config.py", "def load(path):\n    return path\n"),
    ]);
    let mut index = CodeIndex::default();
    project.refresh(&mut index);
    let found: Vec<(&str, Kind)> = index
        .definitions("load")
        .iter()
        .map(|l| (l.path, l.definition.kind))
        .collect();
    assert_eq!(
        found,
        vec![
            ("pkg/config.py", Kind::Function),
            ("tests/test_config.py", Kind::Function),
            ("pkg/deep/config.py", Kind::Variable),
        ]
    );
}

#[test]
fn uses_of_a_name_are_counted_per_file() {
    let project = Project::new(&[
        ("lib.js", "function compose(f, g) { return f(g()); }\n"),
        ("app.js", "compose(a, b);\ncompose(c, d);\n"),
        ("other.js", "x.compose(y);\n"),
    ]);
    let mut index = CodeIndex::default();
    project.refresh(&mut index);
    let uses: Vec<(&str, u32, u32)> = index
        .uses("compose")
        .iter()
        .map(|u| (u.path, u.reference.count, u.reference.first_line))
        .collect();
    assert_eq!(uses, vec![("app.js", 2, 1), ("other.js", 1, 1)]);
}

#[test]
fn an_index_survives_saving_and_damaged_bytes_are_refused() {
    let project = Project::new(&[("main.go", "package main\n\nfunc main() {}\n")]);
    let mut index = CodeIndex::default();
    project.refresh(&mut index);
    let mut loaded = CodeIndex::from_bytes(&index.to_bytes()).expect("a saved index loads");
    assert_eq!(loaded.definitions("main")[0].definition.start_line, 3);
    assert_eq!(
        project.refresh(&mut loaded),
        Vec::<String>::new(),
        "nothing changed"
    );
    assert!(CodeIndex::from_bytes(b"{\"format\": 2, \"files\": 3}").is_none());
    assert!(CodeIndex::from_bytes(b"not json").is_none());
    // Saved by a build whose queries differ (here the earlier fixed format number): built
    // again, not kept with the definitions those queries found.
    let saved = String::from_utf8(index.to_bytes()).unwrap();
    let format = serde_json::from_str::<serde_json::Value>(&saved).unwrap()["format"].clone();
    let older = saved.replacen(&format!("\"format\":{format}"), "\"format\":2", 1);
    assert_ne!(older, saved);
    assert!(CodeIndex::from_bytes(older.as_bytes()).is_none());
}

#[test]
fn the_outline_of_a_file_lists_its_definitions_in_order() {
    let project = Project::new(&[(
        "shapes.rs",
        "struct Square;\nimpl Square {\n    fn area(&self) -> u32 { 4 }\n}\n",
    )]);
    let mut index = CodeIndex::default();
    project.refresh(&mut index);
    let outline: Vec<&str> = index
        .outline("shapes.rs")
        .unwrap()
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(outline, vec!["Square", "area"]);
    assert!(index.outline("missing.rs").is_none());
}
