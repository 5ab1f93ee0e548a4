//! The index of a whole project: each source file's symbols, kept with the file's stamp so
//! that only what changed is read again.

use crate::symbols::{symbols_of, Definition, FileSymbols, Kind, Reference};
use crate::Language;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Files larger than this are not indexed: generated or minified code, not what a question is
/// about, and slow to parse.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The most files one index holds; past it, the rest are counted, not read.
pub const MAX_FILES: usize = 150_000;

/// What says a file changed: its modification time and its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// Nanoseconds since the epoch.
    pub modified_ns: u128,
    pub len: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct IndexedFile {
    stamp: Stamp,
    language: Language,
    symbols: FileSymbols,
}

/// The layout of a saved index, changed by hand when [`CodeIndex`]'s fields change.
const LAYOUT: u64 = 2;

/// The format of a saved index: its layout and every language's query, so that an index saved
/// by a build whose queries found other definitions is built again rather than kept stale.
/// FNV-1a, for a value that stays the same from one toolchain to the next.
fn format() -> u64 {
    static FORMAT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *FORMAT.get_or_init(|| {
        let sources = Language::ALL.map(Language::query_source);
        let mut hash = 0xcbf2_9ce4_8422_2325_u64 ^ LAYOUT;
        for byte in sources.iter().flat_map(|s| s.bytes().chain([0])) {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
        hash
    })
}

/// What a project defines and uses, file by file.
///
/// ```
/// use lantern_index::{CodeIndex, Stamp};
/// let mut index = CodeIndex::default();
/// let stamp = Stamp { modified_ns: 1, len: 40 };
/// let files = vec![("src/cart.py".to_string(), stamp)];
/// index.refresh(files, true, |_| Some("def total(items):\n    return sum(items)\n".into()), |_| {});
/// let found = index.definitions("total");
/// assert_eq!((found[0].path, found[0].definition.start_line), ("src/cart.py", 1));
/// ```
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CodeIndex {
    format: u64,
    files: BTreeMap<String, IndexedFile>,
    /// Every defined name, sorted, made when first asked for and forgotten when a file is
    /// read again or dropped (a window completes names as the user types; a step that finds
    /// no file changed keeps them).
    #[serde(skip)]
    names: std::sync::OnceLock<Vec<String>>,
}

/// How far a refresh has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Files looked at so far.
    pub done: usize,
    /// Files to look at.
    pub total: usize,
}

/// What one refresh did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Refreshed {
    /// Files read and parsed (new or changed).
    pub parsed: usize,
    /// Files whose stamp had not changed.
    pub kept: usize,
    /// Files gone from the project, dropped from the index.
    pub removed: usize,
    /// Files left out: too large, unreadable, not text, or past [`MAX_FILES`].
    pub skipped: usize,
}

/// A definition and the file it is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Located<'a> {
    pub path: &'a str,
    pub definition: &'a Definition,
}

/// A file that uses a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Use<'a> {
    pub path: &'a str,
    pub reference: &'a Reference,
}

impl CodeIndex {
    /// Brings the index up to date with `files` (the project's files, with their stamps):
    /// reads again, through `read`, only the new and changed files of an indexed language, and
    /// drops those no longer listed — when `complete` says the listing is the whole project; a
    /// listing cut short (a walk that ran out of time) drops nothing. `progress` hears how far
    /// it has come, now and then.
    pub fn refresh(
        &mut self,
        files: impl IntoIterator<Item = (String, Stamp)>,
        complete: bool,
        mut read: impl FnMut(&str) -> Option<String>,
        mut progress: impl FnMut(Progress),
    ) -> Refreshed {
        self.start_over_if_stale();
        let mut sources: Vec<(String, Stamp, Language)> = files
            .into_iter()
            .filter_map(|(path, stamp)| Language::of_path(&path).map(|l| (path, stamp, l)))
            .collect();
        sources.sort_by(|a, b| a.0.cmp(&b.0));
        let mut refreshed = Refreshed::default();
        if sources.len() > MAX_FILES {
            refreshed.skipped += sources.len() - MAX_FILES;
            sources.truncate(MAX_FILES);
        }
        let listed: BTreeSet<&str> = sources.iter().map(|(p, _, _)| p.as_str()).collect();
        if complete {
            let before = self.files.len();
            self.files.retain(|path, _| listed.contains(path.as_str()));
            refreshed.removed = before - self.files.len();
            if refreshed.removed > 0 {
                self.names.take();
            }
        }
        let total = sources.len();
        for (done, (path, stamp, _)) in sources.into_iter().enumerate() {
            if done % 256 == 0 {
                progress(Progress { done, total });
            }
            if self.files.get(&path).is_some_and(|f| f.stamp == stamp) {
                refreshed.kept += 1;
                continue;
            }
            match (stamp.len <= MAX_FILE_BYTES).then(|| read(&path)).flatten() {
                Some(source) => {
                    self.update(&path, stamp, &source);
                    refreshed.parsed += 1;
                }
                None => {
                    self.remove(&path);
                    refreshed.skipped += 1;
                }
            }
        }
        progress(Progress { done: total, total });
        refreshed
    }

    /// Reads one file again at once (a file just written), or drops it when `source` is
    /// `None` (deleted). A file of no indexed language is left out.
    pub fn update(&mut self, path: &str, stamp: Stamp, source: &str) {
        let Some(language) = Language::of_path(path) else {
            return;
        };
        self.names.take();
        self.start_over_if_stale();
        let symbols = symbols_of(language, source);
        self.files.insert(
            path.to_string(),
            IndexedFile {
                stamp,
                language,
                symbols,
            },
        );
    }

    /// Forgets one file (deleted, or no longer visible).
    pub fn remove(&mut self, path: &str) {
        self.names.take();
        self.files.remove(path);
    }

    /// Every definition of `name`, the surest first: types and functions before constants and
    /// variables, then files outside tests, examples and vendored code, then files nearer the
    /// root.
    pub fn definitions(&self, name: &str) -> Vec<Located<'_>> {
        let mut found: Vec<Located<'_>> = self
            .files
            .iter()
            .flat_map(|(path, file)| {
                file.symbols
                    .definitions
                    .iter()
                    .filter(move |d| d.name == name)
                    .map(move |definition| Located { path, definition })
            })
            .collect();
        found.sort_by_key(|l| {
            (
                matches!(l.definition.kind, Kind::Variable | Kind::Constant),
                is_aside(l.path),
                l.path.matches('/').count(),
                l.path,
                l.definition.start_line,
            )
        });
        found
    }

    /// The definitions of a name as a question or a call writes it (`load`, `Config.load`,
    /// `Config::load`; see [`crate::split_member`]), the surest first, as
    /// [`definitions`](Self::definitions) ranks them.
    pub fn definitions_written(&self, written: &str) -> Vec<Located<'_>> {
        let member = crate::split_member(written.trim());
        self.definitions(member.1)
            .into_iter()
            .filter(|l| l.definition.is(member))
            .collect()
    }

    /// The definitions of one file, in the order they start; `None` when the file is not
    /// indexed.
    pub fn outline(&self, path: &str) -> Option<&[Definition]> {
        self.files
            .get(path)
            .map(|f| f.symbols.definitions.as_slice())
    }

    /// The definitions of one file as the index read it when the file had `stamp`; `None`
    /// when the file is not indexed or has changed since.
    pub fn outline_at(&self, path: &str, stamp: Stamp) -> Option<&[Definition]> {
        self.files
            .get(path)
            .filter(|f| f.stamp == stamp)
            .map(|f| f.symbols.definitions.as_slice())
    }

    /// The names one file uses (sorted); empty when the file is not indexed.
    pub fn references_of(&self, path: &str) -> &[Reference] {
        self.files
            .get(path)
            .map_or(&[], |f| f.symbols.references.as_slice())
    }

    /// The files that use `name`, most uses first.
    pub fn uses(&self, name: &str) -> Vec<Use<'_>> {
        let mut uses: Vec<Use<'_>> = self
            .files
            .iter()
            .filter_map(|(path, file)| {
                let at = file
                    .symbols
                    .references
                    .binary_search_by(|r| r.name.as_str().cmp(name));
                at.ok().map(|i| Use {
                    path,
                    reference: &file.symbols.references[i],
                })
            })
            .collect();
        uses.sort_by_key(|u| (std::cmp::Reverse(u.reference.count), u.path));
        uses
    }

    /// Every name the project defines, sorted, each once.
    pub fn names(&self) -> &[String] {
        self.names.get_or_init(|| {
            let names: BTreeSet<&str> = self
                .files
                .values()
                .flat_map(|f| f.symbols.definitions.iter().map(|d| d.name.as_str()))
                .collect();
            names.into_iter().map(str::to_string).collect()
        })
    }

    /// The indexed files' paths with their languages.
    pub fn files(&self) -> impl Iterator<Item = (&str, Language)> {
        self.files.iter().map(|(p, f)| (p.as_str(), f.language))
    }

    /// How many files and definitions the index holds.
    pub fn counts(&self) -> (usize, usize) {
        let definitions = self
            .files
            .values()
            .map(|f| f.symbols.definitions.len())
            .sum();
        (self.files.len(), definitions)
    }

    /// The index as bytes to save.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("an index serialises")
    }

    /// Empties an index of another format (a saved one read by a build with other queries),
    /// so that every file is read again.
    fn start_over_if_stale(&mut self) {
        if self.format != format() {
            *self = CodeIndex {
                format: format(),
                ..CodeIndex::default()
            };
        }
    }

    /// An index saved by [`to_bytes`](Self::to_bytes); `None` when the bytes are not one (a
    /// damaged file, or one saved in another format or by other queries), so that the caller
    /// builds it again.
    pub fn from_bytes(bytes: &[u8]) -> Option<CodeIndex> {
        serde_json::from_slice::<CodeIndex>(bytes)
            .ok()
            .filter(|index| index.format == format())
    }
}

/// Is the file beside the project's own code: tests, examples, benchmarks, vendored or
/// generated code? Its definitions of a name come after the project's.
fn is_aside(path: &str) -> bool {
    const ASIDE: [&str; 9] = [
        "test",
        "tests",
        "__tests__",
        "spec",
        "examples",
        "example",
        "benches",
        "vendor",
        "testdata",
    ];
    let file = path.rsplit('/').next().unwrap_or(path);
    path.split('/')
        .rev()
        .skip(1)
        .any(|folder| ASIDE.contains(&folder))
        || file.starts_with("test_")
        || file.contains("_test.")
        || file.contains(".test.")
        || file.contains(".spec.")
}
