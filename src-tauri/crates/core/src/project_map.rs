//! A compact map of the project the model is given once per conversation, so that it sees the
//! project's real names (its manifest, its source folders, their files) before it names one.
//!
//! The map is bounded by a character budget, whatever the size of the project: the top level
//! first (manifests before other files, then the folders), then one line per folder, source
//! folders before tests, docs and examples, shallow before deep. A folder's line lists its files
//! up to a limit and says how many more there are. Only the paths a call may name are mapped
//! ([`KnownPaths`]: ignored files, version-control folders and Lantern's state are not in it).
//!
//! ```
//! use lantern_core::model::KnownPaths;
//! use lantern_core::project_map::project_map;
//!
//! let known = KnownPaths {
//!     files: vec!["README.md".into(), "package.json".into(), "src/index.js".into()],
//!     folders: vec![".".into(), "src".into()],
//! };
//! let map = project_map(&known, 2000);
//! assert!(map.contains("package.json, README.md, src/"));
//! assert!(map.contains("src/: index.js"));
//! ```

use crate::model::KnownPaths;
use std::collections::BTreeMap;

/// The budget the agent gives the map: about 400 tokens of a small model's vocabulary.
pub const DEFAULT_BUDGET: usize = 1600;

/// Names listed on one folder's line before "… and N more"; a line with up to
/// [`CUT_SLACK`] more lists them all, as the note would be no shorter.
const NAMES_PER_LINE: usize = 16;
const CUT_SLACK: usize = 4;

/// What a build or a package is described by; listed first at the top level.
const MANIFESTS: &[&str] = &[
    "package.json",
    "Cargo.toml",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "go.mod",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "Gemfile",
    "composer.json",
    "CMakeLists.txt",
    "Makefile",
];

/// Folders that hold tests, documentation, examples or generated files, mapped after the rest.
const SECONDARY_FOLDERS: &[&str] = &[
    "test",
    "tests",
    "spec",
    "specs",
    "__tests__",
    "doc",
    "docs",
    "example",
    "examples",
    "fixtures",
    "bench",
    "benches",
    "benchmarks",
    "vendor",
    "third_party",
    "dist",
    "build",
    "target",
];

/// Extensions of source code; a folder holding such files is a source folder.
const CODE_EXTENSIONS: &[&str] = &[
    "rs", "py", "js", "mjs", "cjs", "ts", "tsx", "jsx", "go", "java", "kt", "c", "h", "cc", "cpp",
    "hpp", "cs", "rb", "php", "swift", "scala", "lua", "sh", "vue", "svelte",
];

/// The map of `known`, at most about `budget` characters; empty when there are no files.
pub fn project_map(known: &KnownPaths, budget: usize) -> String {
    if known.files.is_empty() {
        return String::new();
    }
    let mut files_in: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for file in &known.files {
        let (folder, name) = file.rsplit_once('/').unwrap_or((".", file));
        files_in.entry(folder).or_default().push(name);
    }
    let mut subfolders_in: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for folder in known.folders.iter().filter(|f| f.as_str() != ".") {
        let parent = folder.rsplit_once('/').map_or(".", |(p, _)| p);
        subfolders_in.entry(parent).or_default().push(folder);
    }

    let mut text = String::from("PROJECT FILES (paths relative to the project folder):\n");
    let top = top_level_line(
        files_in.get(".").map(Vec::as_slice).unwrap_or_default(),
        subfolders_in
            .get(".")
            .map(Vec::as_slice)
            .unwrap_or_default(),
    );
    text.push_str(&format!("- {top}\n"));

    // Folders with files of their own, in the order they matter.
    let mut folders: Vec<&str> = files_in.keys().copied().filter(|f| *f != ".").collect();
    folders.sort_by_key(|f| (rank(f, &files_in[f]), f.matches('/').count(), *f));
    let mut left_out = 0;
    for folder in folders {
        let mut names: Vec<String> = files_in[folder].iter().map(|n| n.to_string()).collect();
        names.extend(
            subfolders_in
                .get(folder)
                .into_iter()
                .flatten()
                .map(|sub| format!("{}/", sub.rsplit('/').next().unwrap_or(sub))),
        );
        let count = files_in[folder].len();
        let line = format!("- {folder}/{}: {}\n", count_note(count), listed(&names));
        if left_out == 0 && text.len() + line.len() <= budget {
            text.push_str(&line);
        } else {
            left_out += 1;
        }
    }
    if left_out > 0 {
        text.push_str(&format!("- … and {left_out} more folders\n"));
    }
    text
}

/// The top level: manifests first, then the other files, then the folders.
fn top_level_line(files: &[&str], folders: &[&str]) -> String {
    let mut names: Vec<String> = MANIFESTS
        .iter()
        .filter(|m| files.contains(m))
        .map(|m| m.to_string())
        .collect();
    let mut others: Vec<&str> = files
        .iter()
        .copied()
        .filter(|f| !MANIFESTS.contains(f))
        .collect();
    others.sort_by_key(|f| f.to_lowercase());
    names.extend(others.into_iter().map(str::to_string));
    names.extend(folders.iter().map(|f| format!("{f}/")));
    listed(&names)
}

/// `(24 files)` where a line cannot list them all.
fn count_note(count: usize) -> String {
    if count > NAMES_PER_LINE + CUT_SLACK {
        format!(" ({count} files)")
    } else {
        String::new()
    }
}

fn listed(names: &[String]) -> String {
    let shown = if names.len() <= NAMES_PER_LINE + CUT_SLACK {
        names.len()
    } else {
        NAMES_PER_LINE
    };
    let mut line = names[..shown].join(", ");
    if names.len() > shown {
        line.push_str(&format!(", … and {} more", names.len() - shown));
    }
    line
}

/// 0 for a source folder, 1 for another, 2 for tests, docs, examples and generated files.
fn rank(folder: &str, files: &[&str]) -> u8 {
    let secondary = folder.split('/').any(|part| {
        SECONDARY_FOLDERS.contains(&part.to_lowercase().as_str()) || part.ends_with(".egg-info")
    });
    if secondary {
        return 2;
    }
    let has_code = files.iter().any(|f| {
        f.rsplit_once('.')
            .is_some_and(|(_, ext)| CODE_EXTENSIONS.contains(&ext))
    });
    if has_code {
        0
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(files: &[&str]) -> KnownPaths {
        KnownPaths::from_files(files.iter().map(|f| f.to_string()).collect())
    }

    #[test]
    fn the_top_level_lists_manifests_first_then_files_then_folders() {
        let map = project_map(
            &known(&["README.md", "index.js", "package.json", "lib/a.js"]),
            DEFAULT_BUDGET,
        );
        let lines: Vec<&str> = map.lines().collect();
        assert_eq!(lines[1], "- package.json, index.js, README.md, lib/");
        assert_eq!(lines[2], "- lib/: a.js");
    }

    #[test]
    fn source_folders_come_before_tests_and_docs_and_shallow_before_deep() {
        let map = project_map(
            &known(&[
                "setup.py",
                "docs/index.rst",
                "tests/test_core.py",
                "src/pkg/core.py",
                "src/pkg/sub/deep.py",
                "assets/logo.svg",
            ]),
            DEFAULT_BUDGET,
        );
        let folders: Vec<&str> = map
            .lines()
            .skip(2)
            .map(|l| l.split(':').next().unwrap())
            .collect();
        assert_eq!(
            folders,
            [
                "- src/pkg/",
                "- src/pkg/sub/",
                "- assets/",
                "- docs/",
                "- tests/"
            ]
        );
        assert!(map.contains("- src/pkg/: core.py, sub/"));
    }

    #[test]
    fn a_big_folder_is_counted_and_cut() {
        let files: Vec<String> = (0..40).map(|i| format!("functions/f{i:02}.js")).collect();
        let refs: Vec<&str> = files.iter().map(String::as_str).collect();
        let map = project_map(&known(&refs), DEFAULT_BUDGET);
        assert!(map.contains("- functions/ (40 files): f00.js, f01.js"));
        assert!(map.contains(", … and 24 more\n"));
    }

    #[test]
    fn a_huge_project_stays_within_the_budget() {
        let files: Vec<String> = (0..100_000)
            .map(|i| format!("pkg{}/mod{}/file{i}.rs", i % 97, i % 13))
            .collect();
        let refs: Vec<&str> = files.iter().map(String::as_str).collect();
        let map = project_map(&known(&refs), DEFAULT_BUDGET);
        assert!(map.len() <= DEFAULT_BUDGET + 40, "{} chars", map.len());
        assert!(map.ends_with("more folders\n"));
    }

    #[test]
    fn an_empty_project_has_no_map() {
        assert_eq!(project_map(&KnownPaths::default(), DEFAULT_BUDGET), "");
    }
}
