//! The workspace's code index (see `lantern_index`): built from the files the sandbox lets
//! the tools see, read through the sandbox, kept current by the files' stamps each time it is
//! used, and saved in Lantern's cache so that a folder opened again is not read again whole.
//!
//! The index never sees more than the tools do: the same walk as `list_files` (ignore files,
//! version-control stores and Lantern's own state passed over, no symbolic link followed), the
//! same confined open as `search_code`.

use crate::error::ToolError;
use crate::paths::{cache_dir, read_state_file_within, workspace_key, write_state_file};
use crate::sandbox::Workspace;
use crate::walk::{walk_workspace, Walked};
use lantern_index::{CodeIndex, Definition, Progress, Refreshed, Stamp, MAX_FILE_BYTES};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant, UNIX_EPOCH};

/// The largest saved index loaded (the cargo registry's 13,000 source files make one of
/// about 150 MB); a larger one is built again instead.
const MAX_SAVED_INDEX_BYTES: u64 = 1 << 30;

/// A workspace's index, shared by every call of a session (and the window's background
/// build). [`Default`] keeps it in memory only; [`ProjectIndex::saved_at`] loads and saves it.
#[derive(Default)]
pub struct ProjectIndex {
    index: Mutex<Option<CodeIndex>>,
    saved: Option<PathBuf>,
    status: Mutex<IndexStatus>,
}

/// Where the index stands, for a status line: readable while a refresh holds the index.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct IndexStatus {
    pub state: IndexState,
    /// Source files looked at so far by the refresh under way, and how many there are.
    pub done: usize,
    pub total: usize,
    /// What the index held after its last refresh.
    pub files: usize,
    pub definitions: usize,
    /// Why the last refresh failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Where a name is defined, for a window's "go to definition".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DefinitionPlace {
    pub path: String,
    /// The line its name is on, 1-based.
    pub line: u32,
    /// Its first and last lines (a decorator or doc comment may come before the name).
    pub start_line: u32,
    pub end_line: u32,
    pub kind: String,
    /// Its first line.
    pub signature: String,
}

/// One definition of a file's outline, for a window's outline of the file shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OutlineEntry {
    pub name: String,
    pub kind: String,
    /// The type or module it belongs to (a method's class), when it does.
    pub parent: Option<String>,
    /// The line its name is on, and its last line (1-based).
    pub line: u32,
    pub end_line: u32,
}

/// The index's state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IndexState {
    /// Not built yet in this process.
    #[default]
    NotBuilt,
    Building,
    Ready,
    Failed,
}

/// Where the index of the workspace at `root` is saved.
pub fn saved_index_path(root: &std::path::Path) -> PathBuf {
    cache_dir()
        .join("index")
        .join(format!("{}.json", workspace_key(root)))
}

impl ProjectIndex {
    /// An index loaded from `path` at its first use (when a usable one is there) and saved
    /// there after each refresh that changed it.
    pub fn saved_at(path: PathBuf) -> Self {
        ProjectIndex {
            saved: Some(path),
            ..ProjectIndex::default()
        }
    }

    /// Where the index stands now.
    pub fn status(&self) -> IndexStatus {
        self.status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Every definition of `written` (`load`, `Config.load`), the surest first, from the
    /// index brought up to date.
    pub fn places_of(
        &self,
        workspace: &Workspace,
        written: &str,
    ) -> Result<Vec<DefinitionPlace>, ToolError> {
        let (index, _) = self.refresh(workspace, |_| {})?;
        let Some(index) = index.as_ref() else {
            return Ok(Vec::new());
        };
        Ok(index
            .definitions_written(written)
            .into_iter()
            .map(|l| DefinitionPlace {
                path: l.path.to_string(),
                line: l.definition.name_line,
                start_line: l.definition.start_line,
                end_line: l.definition.end_line,
                kind: l.definition.kind.as_str().to_string(),
                signature: l.definition.signature.clone(),
            })
            .collect())
    }

    /// What the file at `path` (relative) defines, in the order it does, from the index brought
    /// up to date; empty for a file of a language that is not indexed.
    pub fn outline_of(
        &self,
        workspace: &Workspace,
        path: &str,
    ) -> Result<Vec<OutlineEntry>, ToolError> {
        if let Some(outline) = self.outline_of_known(workspace, path) {
            return Ok(outline);
        }
        let (index, _) = self.refresh(workspace, |_| {})?;
        let definitions = index.as_ref().and_then(|index| index.outline(path));
        Ok(outline_entries(definitions.unwrap_or_default()))
    }

    /// The outline of a file the index already holds, without walking the workspace: as
    /// indexed when the file is unchanged, else that file alone read again. `None` when the
    /// index is not loaded or does not hold the file (a whole refresh decides then).
    fn outline_of_known(&self, workspace: &Workspace, path: &str) -> Option<Vec<OutlineEntry>> {
        let mut guard = self.index.lock().unwrap_or_else(|e| e.into_inner());
        let index = guard.as_mut()?;
        index.outline(path)?;
        let resolved = workspace.resolve(path).ok()?;
        let stamp = stamp_of(resolved.abs())?;
        if index.outline_at(path, stamp).is_none() {
            index.update(path, stamp, &text_of(workspace, &resolved)?);
        }
        index.outline(path).map(outline_entries)
    }

    /// The defined names that begin with `prefix` (ignoring case), shortest first, at most
    /// `limit`: from the index as its last refresh left it, never waiting for one (a window
    /// completes `@` mentions as the user types).
    pub fn names_starting(&self, prefix: &str, limit: usize) -> Vec<String> {
        let Ok(guard) = self.index.try_lock() else {
            return Vec::new();
        };
        let Some(index) = guard.as_ref() else {
            return Vec::new();
        };
        let lower = prefix.to_lowercase();
        let mut names: Vec<&str> = index
            .names()
            .iter()
            .map(String::as_str)
            .filter(|name| starts_ignoring_case(name, &lower))
            .collect();
        names.sort_by_key(|name| (name.len(), *name));
        names.truncate(limit);
        names.into_iter().map(str::to_string).collect()
    }

    fn set_status(&self, change: impl FnOnce(&mut IndexStatus)) {
        change(&mut self.status.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// Brings the index up to date with the workspace as it is now — loading the saved one
    /// first, the first time — and returns it with what the refresh did. Only new and changed
    /// files are read; the saved copy is rewritten when anything changed. `progress` hears how
    /// far it has come.
    pub fn refresh(
        &self,
        workspace: &Workspace,
        progress: impl FnMut(Progress),
    ) -> Result<(MutexGuard<'_, Option<CodeIndex>>, Refreshed), ToolError> {
        self.refresh_from(workspace, walk_workspace(workspace), progress)
    }

    /// [`ProjectIndex::refresh`] from a walk of the whole workspace already made (a step that
    /// lists the workspace's files for other uses too walks it once).
    pub fn refresh_from(
        &self,
        workspace: &Workspace,
        walked: Result<Walked, ToolError>,
        mut progress: impl FnMut(Progress),
    ) -> Result<(MutexGuard<'_, Option<CodeIndex>>, Refreshed), ToolError> {
        let mut guard = self.index.lock().unwrap_or_else(|e| e.into_inner());
        self.set_status(|s| s.state = IndexState::Building);
        let refreshed = self.refresh_locked(&mut guard, workspace, walked, |p| {
            self.set_status(|s| (s.done, s.total) = (p.done, p.total));
            progress(p);
        });
        let counts = guard.as_ref().map_or((0, 0), CodeIndex::counts);
        self.set_status(|s| {
            (s.files, s.definitions) = counts;
            s.state = match &refreshed {
                Ok(_) => IndexState::Ready,
                Err(_) => IndexState::Failed,
            };
            s.error = refreshed.as_ref().err().map(|e| e.message.clone());
        });
        Ok((guard, refreshed?))
    }

    fn refresh_locked(
        &self,
        guard: &mut MutexGuard<'_, Option<CodeIndex>>,
        workspace: &Workspace,
        walked: Result<Walked, ToolError>,
        progress: impl FnMut(Progress),
    ) -> Result<Refreshed, ToolError> {
        let index = guard.get_or_insert_with(|| {
            self.saved
                .as_ref()
                .and_then(|saved| read_state_file_within(saved, MAX_SAVED_INDEX_BYTES).ok())
                .and_then(|bytes| CodeIndex::from_bytes(&bytes))
                .unwrap_or_default()
        });
        let walked = walked?;
        let opener = workspace.file_opener()?;
        let files = walked
            .files
            .iter()
            .filter(|f| f.utf8)
            .filter_map(|f| Some((f.rel.clone(), stamp_of(&f.abs)?)));
        let by_rel = |rel: &str| {
            walked
                .files
                .binary_search_by(|f| f.rel.as_str().cmp(rel))
                .ok()
        };
        let read = |rel: &str| {
            let found = &walked.files[by_rel(rel)?];
            let (file, size) = workspace.open_read_beneath(&opener, &found.abs, rel).ok()?;
            if size > MAX_FILE_BYTES {
                return None;
            }
            read_bounded(file)
        };
        let refreshed = index.refresh(files, walked.tally.stopped.is_none(), read, progress);
        if let Some(saved) = self
            .saved
            .as_ref()
            .filter(|_| refreshed.parsed + refreshed.removed > 0)
        {
            // A cache: failing to save it costs a rebuild next time, nothing more.
            let _ = write_state_file(saved, &index.to_bytes());
        }
        Ok(refreshed)
    }
}

fn outline_entries(definitions: &[Definition]) -> Vec<OutlineEntry> {
    definitions
        .iter()
        .map(|d| OutlineEntry {
            name: d.name.clone(),
            kind: d.kind.as_str().to_string(),
            parent: d.parent.clone(),
            line: d.name_line,
            end_line: d.end_line,
        })
        .collect()
}

/// Does `name` begin with `lower` (lower-case), case aside? Compared char by char, so that
/// completing a prefix does not lower-case every name.
fn starts_ignoring_case(name: &str, lower: &str) -> bool {
    let mut chars = name.chars().flat_map(char::to_lowercase);
    lower.chars().all(|c| chars.next() == Some(c))
}

/// What says whether the file at `abs` changed since it was indexed; `None` when it cannot
/// be looked at.
fn stamp_of(abs: &std::path::Path) -> Option<Stamp> {
    let meta = std::fs::symlink_metadata(abs).ok()?;
    let modified_ns = meta
        .modified()
        .ok()?
        .duration_since(UNIX_EPOCH)
        .ok()?
        .as_nanos();
    Some(Stamp {
        modified_ns,
        len: meta.len(),
    })
}

/// At most this many bytes of files the index does not hold as they are now are read and
/// parsed for one [`ProjectIndex::definitions_on`], within [`ON_DEMAND_TIME`]: parsing costs
/// about as much as searching (and far more for text that is not valid code, which the parser
/// works hard to recover from), so a search whose hits span megabytes of unindexed code would
/// otherwise take several times as long as the search itself. The rest is left to the
/// caller's own rules.
const ON_DEMAND_BYTES: u64 = 128 * 1024;
const ON_DEMAND_TIME: Duration = Duration::from_millis(100);
/// The first bytes parsed on demand are parsed whatever the time: the few small files of a
/// usual search never depend on how busy the machine is.
const ON_DEMAND_UNTIMED_BYTES: u64 = 16 * 1024;

/// What is left of what one [`ProjectIndex::definitions_on`] may read and parse.
struct OnDemand {
    used: u64,
    until: Instant,
}

impl OnDemand {
    /// Takes `len` bytes more, if they fit and time is left.
    fn take(&mut self, len: u64) -> Option<()> {
        if self.used >= ON_DEMAND_UNTIMED_BYTES && Instant::now() >= self.until {
            return None;
        }
        let used = self.used.checked_add(len)?;
        if used > ON_DEMAND_BYTES {
            return None;
        }
        self.used = used;
        Some(())
    }
}

/// What the code index says one line defines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineDefines {
    /// The name written on the line, and what it defines.
    Name(String, lantern_index::Kind),
    /// The index read the file: the line defines nothing.
    Nothing,
    /// The index does not read the file's language, or did not read this file (it could not,
    /// or it was past what is read on demand): the caller's own rules decide.
    Unknown,
}

impl ProjectIndex {
    /// For lines of the workspace's files (path, 1-based line), the definition whose name
    /// stands on each, as the code index reads the file. A file the index holds as it is now
    /// is not read again; any other is read and parsed once, up to `ON_DEMAND_BYTES` in all
    /// within `ON_DEMAND_TIME`.
    /// A refresh running elsewhere is not waited for.
    pub fn definitions_on<'a>(
        &self,
        workspace: &Workspace,
        lines: impl IntoIterator<Item = (&'a str, u64)>,
    ) -> Vec<LineDefines> {
        self.on_lines(workspace, lines, |definition| match definition {
            None => LineDefines::Unknown,
            Some(None) => LineDefines::Nothing,
            Some(Some(d)) => LineDefines::Name(d.name.clone(), d.kind),
        })
    }

    /// For lines of the workspace's files (path, 1-based line), the last line of the
    /// definition whose name stands on each, as the code index reads the file (read within the
    /// same bounds as [`Self::definitions_on`]); `None` for a file it does not read, or a line
    /// that names no definition.
    pub fn definition_ends<'a>(
        &self,
        workspace: &Workspace,
        lines: impl IntoIterator<Item = (&'a str, u64)>,
    ) -> Vec<Option<u32>> {
        self.on_lines(workspace, lines, |definition| {
            definition.flatten().map(|d| d.end_line)
        })
    }

    /// What `read` makes of the definition whose name stands on each line: `None` when the
    /// index does not read the line's file, `Some(None)` when the line names none. Each file
    /// is taken from the index when it holds the file as it is now, else read and parsed once,
    /// up to `ON_DEMAND_BYTES` in all within `ON_DEMAND_TIME`. A refresh running elsewhere is
    /// not waited for.
    fn on_lines<'a, T>(
        &self,
        workspace: &Workspace,
        lines: impl IntoIterator<Item = (&'a str, u64)>,
        read: impl Fn(Option<Option<&Definition>>) -> T,
    ) -> Vec<T> {
        let held = self.index.try_lock().ok();
        let index = held.as_ref().and_then(|guard| guard.as_ref());
        let mut outlines: std::collections::HashMap<&str, Option<Vec<Definition>>> =
            std::collections::HashMap::new();
        let mut budget = OnDemand {
            used: 0,
            until: Instant::now() + ON_DEMAND_TIME,
        };
        lines
            .into_iter()
            .map(|(path, line)| {
                let definitions = outlines
                    .entry(path)
                    .or_insert_with(|| definitions_in(workspace, index, path, &mut budget));
                read(
                    definitions.as_ref().map(|definitions| {
                        definitions.iter().find(|d| u64::from(d.name_line) == line)
                    }),
                )
            })
            .collect()
    }
}

/// The definitions of the file at `path`: from `index` when it holds the file as it is now,
/// else read through the sandbox and parsed when it fits in what is left of `budget`.
fn definitions_in(
    workspace: &Workspace,
    index: Option<&CodeIndex>,
    path: &str,
    budget: &mut OnDemand,
) -> Option<Vec<Definition>> {
    let language = lantern_index::Language::of_path(path)?;
    let resolved = workspace.resolve(path).ok()?;
    let stamp = stamp_of(resolved.abs())?;
    if let Some(definitions) = index.and_then(|index| index.outline_at(path, stamp)) {
        return Some(definitions.to_vec());
    }
    budget.take(stamp.len)?;
    let text = text_of(workspace, &resolved)?;
    Some(lantern_index::symbols_of(language, &text).definitions)
}

/// A workspace file's text, read through the sandbox, at most as much as the index reads.
fn text_of(workspace: &Workspace, resolved: &crate::sandbox::ResolvedPath) -> Option<String> {
    read_bounded(workspace.open_read(resolved).ok()?)
}

/// The text of `file`, at most [`MAX_FILE_BYTES`] of it; `None` when it is not UTF-8.
fn read_bounded(file: impl Read) -> Option<String> {
    let mut text = String::new();
    file.take(MAX_FILE_BYTES).read_to_string(&mut text).ok()?;
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_sees_only_what_the_tools_see() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::create_dir_all(dir.path().join("build")).unwrap();
        std::fs::write(dir.path().join(".gitignore"), "build/\n").unwrap();
        std::fs::write(dir.path().join("src/app.py"), "def visible():\n    pass\n").unwrap();
        std::fs::write(
            dir.path().join("build/gen.py"),
            "def ignored():\n    pass\n",
        )
        .unwrap();
        std::os::unix::fs::symlink("/etc", dir.path().join("src/etc")).unwrap();
        let workspace = Workspace::open(dir.path()).unwrap();
        let project = ProjectIndex::default();
        let (index, refreshed) = project.refresh(&workspace, |_| {}).unwrap();
        let index = index.as_ref().unwrap();
        assert_eq!(index.names(), ["visible"]);
        assert_eq!(refreshed.parsed, 1);
    }

    /// A workspace of one file, indexed.
    fn indexed_with(name: &str, text: &str) -> (tempfile::TempDir, Workspace, ProjectIndex) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(name), text).unwrap();
        let workspace = Workspace::open(dir.path()).unwrap();
        let project = ProjectIndex::default();
        drop(project.refresh(&workspace, |_| {}).unwrap());
        (dir, workspace, project)
    }

    #[test]
    fn names_complete_from_a_prefix_case_aside_shortest_first_and_follow_changes() {
        let text =
            "def load_config():\n    pass\n\ndef LoadAll():\n    pass\n\ndef save():\n    pass\n";
        let (dir, workspace, project) = indexed_with("store.py", text);
        assert_eq!(
            project.names_starting("LOAD", 8),
            ["LoadAll", "load_config"]
        );
        assert_eq!(project.names_starting("load", 1), ["LoadAll"]);
        std::fs::write(dir.path().join("store.py"), "def loader():\n    pass\n").unwrap();
        drop(project.refresh(&workspace, |_| {}).unwrap());
        assert_eq!(project.names_starting("load", 8), ["loader"]);
    }

    #[test]
    fn a_file_s_outline_follows_its_changes() {
        let (dir, workspace, project) = indexed_with("cart.py", "def total():\n    pass\n");
        let names = |project: &ProjectIndex| -> Vec<String> {
            let outline = project.outline_of(&workspace, "cart.py").unwrap();
            outline.into_iter().map(|e| e.name).collect()
        };
        assert_eq!(names(&project), ["total"]);
        std::fs::write(dir.path().join("cart.py"), "def subtotal():\n    pass\n").unwrap();
        assert_eq!(names(&project), ["subtotal"]);
        // A file the index has not seen yet is found by a refresh.
        std::fs::write(dir.path().join("tax.py"), "RATE = 2\n").unwrap();
        let outline = project.outline_of(&workspace, "tax.py").unwrap();
        assert_eq!(outline[0].name, "RATE");
    }

    #[test]
    fn a_change_on_disk_is_seen_at_the_next_use() {
        let (dir, workspace, project) = indexed_with("lib.rs", "fn before() {}\n");
        let file = dir.path().join("lib.rs");
        std::fs::write(&file, "fn after_the_change() {}\n").unwrap();
        let (index, refreshed) = project.refresh(&workspace, |_| {}).unwrap();
        assert_eq!(index.as_ref().unwrap().names(), ["after_the_change"]);
        assert_eq!((refreshed.parsed, refreshed.kept), (1, 0));
    }

    #[test]
    fn the_lines_that_define_a_name_are_told_from_those_that_use_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("errors.py"),
            "class UsageError(Exception):\n    exit_code = 2\n\ndef fail():\n    raise UsageError()\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("notes.md"), "UsageError = the error\n").unwrap();
        let workspace = Workspace::open(dir.path()).unwrap();
        let found = ProjectIndex::default().definitions_on(
            &workspace,
            [
                ("errors.py", 1),
                ("errors.py", 2),
                ("errors.py", 5),
                ("notes.md", 1),
            ],
        );
        use lantern_index::Kind;
        assert_eq!(
            found,
            [
                LineDefines::Name("UsageError".into(), Kind::Class),
                LineDefines::Name("exit_code".into(), Kind::Variable),
                LineDefines::Nothing,
                LineDefines::Unknown,
            ]
        );
    }

    #[test]
    fn files_past_what_is_parsed_on_demand_are_left_unknown_but_indexed_ones_are_told() {
        let dir = tempfile::tempdir().unwrap();
        let big = "def big():\n    pass\n".repeat((ON_DEMAND_BYTES as usize) / 20 + 1);
        std::fs::write(dir.path().join("big.py"), &big).unwrap();
        std::fs::write(dir.path().join("small.py"), "def small():\n    pass\n").unwrap();
        let workspace = Workspace::open(dir.path()).unwrap();
        let lines = [("big.py", 1), ("small.py", 1)];
        let unindexed = ProjectIndex::default().definitions_on(&workspace, lines);
        assert_eq!(unindexed[0], LineDefines::Unknown);
        assert!(matches!(&unindexed[1], LineDefines::Name(name, _) if name == "small"));
        // Once the index holds the large file, no parse is needed and its lines are told.
        let project = ProjectIndex::default();
        drop(project.refresh(&workspace, |_| {}).unwrap());
        let indexed = project.definitions_on(&workspace, lines);
        assert!(matches!(&indexed[0], LineDefines::Name(name, _) if name == "big"));
    }

    #[test]
    fn a_file_the_index_holds_as_it_is_is_not_parsed_again_and_a_changed_one_is() {
        let (dir, workspace, project) = indexed_with("shop.py", "def total():\n    pass\n");
        let file = dir.path().join("shop.py");
        let defined = |project: &ProjectIndex| {
            let found = project.definitions_on(&workspace, [("shop.py", 1)]);
            match &found[0] {
                LineDefines::Name(name, _) => Some(name.clone()),
                _ => None,
            }
        };
        // Other text of the same length, the time set back: the stamp says unchanged, and
        // what the index read is what is told.
        let modified = std::fs::metadata(&file).unwrap().modified().unwrap();
        std::fs::write(&file, "def price():\n    pass\n").unwrap();
        let handle = std::fs::File::options().write(true).open(&file).unwrap();
        handle.set_modified(modified).unwrap();
        assert_eq!(defined(&project).as_deref(), Some("total"));
        // A change the stamp shows is read again.
        std::fs::write(&file, "def prices():\n    pass\n").unwrap();
        assert_eq!(defined(&project).as_deref(), Some("prices"));
    }

    #[test]
    fn a_saved_index_is_loaded_and_only_changes_are_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let saved = state.path().join("index.json");
        std::fs::write(dir.path().join("a.go"), "package a\n\nfunc A() {}\n").unwrap();
        std::fs::write(dir.path().join("b.go"), "package a\n\nfunc B() {}\n").unwrap();
        let workspace = Workspace::open(dir.path()).unwrap();
        let first = ProjectIndex::saved_at(saved.clone());
        assert_eq!(first.refresh(&workspace, |_| {}).unwrap().1.parsed, 2);
        assert!(saved.exists());
        let again = ProjectIndex::saved_at(saved.clone());
        let (index, refreshed) = again.refresh(&workspace, |_| {}).unwrap();
        assert_eq!((refreshed.parsed, refreshed.kept), (0, 2));
        assert_eq!(index.as_ref().unwrap().names(), ["A", "B"]);
        drop(index);
        std::fs::write(&saved, b"damaged").unwrap();
        let damaged = ProjectIndex::saved_at(saved);
        assert_eq!(
            damaged.refresh(&workspace, |_| {}).unwrap().1.parsed,
            2,
            "built again"
        );
    }
}
