//! The directory walk list_files and search_code share: ripgrep's `ignore` walker, in
//! parallel, honouring `.gitignore` and `.ignore`, never following symlinks (a link that leads
//! outside the workspace is never entered).
//!
//! Dotfiles are walked: `.gitignore`, `.env.example` and `.github/workflows/ci.yml` are part of
//! a project a user asks about and edits, and a path the tools cannot list is a path a model
//! can never name. What a dotfile folder holds that is not the project's is passed over: the
//! version-control stores ([`VCS_FOLDERS`]) and Lantern's own state. Caches such as `.venv` or
//! `.pytest_cache` are skipped by the ignore files their tools write into them, or the
//! project's own.
//!
//! A walk is bounded: it stops after [`MAX_WALK_ENTRIES`] entries or [`WALK_TIME_BUDGET`],
//! whichever comes first, and [`WalkTally::stopped`] says which; the tools pass that on.

use crate::error::ToolError;
use crate::model::KnownPaths;
use crate::sandbox::{path_below, ResolvedPath, Workspace};
use globset::{GlobBuilder, GlobMatcher};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};
use rustix::fs::{Mode, OFlags, RawDir};
use serde_json::Value;
use std::mem::MaybeUninit;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// After its first entries, a walk reads the clock only every this many, to see whether its
/// time is up.
const CLOCK_EVERY: usize = 64;

/// Folders that hold a version-control system's store, never the project's files: no walk
/// enters them.
pub use crate::sandbox::VCS_FOLDERS;

/// The most entries (files and folders) one walk looks at.
pub const MAX_WALK_ENTRIES: usize = 200_000;
/// The longest one walk may take.
pub const WALK_TIME_BUDGET: Duration = Duration::from_secs(10);

/// Where a walk stops.
#[derive(Debug, Clone, Copy)]
pub struct WalkLimits {
    pub max_entries: usize,
    pub deadline: Instant,
}

impl WalkLimits {
    /// [`MAX_WALK_ENTRIES`] and [`WALK_TIME_BUDGET`] from now.
    pub fn standard() -> WalkLimits {
        WalkLimits {
            max_entries: MAX_WALK_ENTRIES,
            deadline: Instant::now() + WALK_TIME_BUDGET,
        }
    }
}

/// Which limit cut a walk short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalkStop {
    Entries,
    Time,
}

/// A file the walk found.
pub struct Found {
    pub abs: PathBuf,
    /// Relative to the workspace root, '/'-separated. A name that is not valid UTF-8 is shown
    /// with U+FFFD in place of its invalid bytes (see `utf8`).
    pub rel: String,
    /// False when `rel` is not the exact name, because the real one is not valid UTF-8: such
    /// a file cannot be opened by its shown name.
    pub utf8: bool,
}

/// What a walk found and how much it passed over.
pub struct Walked {
    /// Matching regular files, sorted by `rel`.
    pub files: Vec<Found>,
    pub tally: WalkTally,
}

/// How much a walk passed over, and where it stopped.
#[derive(Debug, Clone, Copy, Default)]
pub struct WalkTally {
    /// Entries the ignore rules passed over, and version-control and Lantern's state folders
    /// (a skipped folder counts once). `None` when the walk was not asked to count them (it
    /// reads each folder a second time), or a limit cut it short.
    pub skipped: Option<usize>,
    /// Entries that could not be read.
    pub errors: usize,
    /// Entries looked at.
    pub entries_walked: usize,
    /// Set when a limit stopped the walk before it was complete.
    pub stopped: Option<WalkStop>,
    /// Files found whose names are not valid UTF-8.
    pub non_utf8_names: usize,
}

impl Walked {
    /// Notes for the model about limits the walk hit and names it cannot use, if any.
    pub fn notices(&self) -> Vec<String> {
        let mut notices: Vec<String> = self.tally.stop_notice().into_iter().collect();
        notices.extend(self.tally.names_notice());
        notices
    }
}

impl WalkTally {
    /// A note for the model about the limit that stopped the walk, if one did.
    pub fn stop_notice(&self) -> Option<String> {
        match self.stopped? {
            WalkStop::Entries => Some(format!(
                "The walk stopped after {} entries, so files beyond them are missing. Name a smaller directory or a narrower pattern.",
                self.entries_walked
            )),
            WalkStop::Time => Some(format!(
                "The walk stopped after {} s ({} entries), so some files are missing. Name a smaller directory or a narrower pattern.",
                WALK_TIME_BUDGET.as_secs(),
                self.entries_walked
            )),
        }
    }

    /// A note for the model about names it cannot use, if any.
    pub fn names_notice(&self) -> Option<String> {
        let bad = self.non_utf8_names;
        (bad > 0).then(|| format!(
            "{bad} file name(s) are not valid UTF-8; they are shown with U+FFFD (\u{FFFD}) in place of the invalid bytes and cannot be opened by that name."
        ))
    }
}

/// What a walk does with the files it finds: one sink per walker thread, each handed the files
/// its thread finds, in no particular order.
pub trait FileSink: Send {
    fn file(&mut self, found: Found);
    /// May a file below the folder `rel` (workspace-relative, '/'-separated) still be wanted?
    /// A folder none can be is not entered. Every folder is, unless a sink says otherwise.
    fn wants_folder(&mut self, _rel: &str) -> bool {
        true
    }
}

/// Makes the [`FileSink`] of each walker thread.
pub type MakeSink<'s> = dyn Fn() -> Box<dyn FileSink + 's> + Sync + 's;

/// The sink of a walk that lists: each thread collects on its own and hands its files over
/// when it is done, so the threads do not contend per file.
struct Collect<'s> {
    local: Vec<Found>,
    into: &'s Mutex<Vec<Found>>,
}

impl FileSink for Collect<'_> {
    fn file(&mut self, found: Found) {
        self.local.push(found);
    }
}

impl Drop for Collect<'_> {
    fn drop(&mut self) {
        if let Ok(mut found) = self.into.lock() {
            found.append(&mut self.local);
        }
    }
}

/// Adds `text` to the `notice` of a tool's result, after any notice already there.
pub fn add_notice(data: &mut Value, text: &str) {
    let joined = match data.get("notice").and_then(Value::as_str) {
        Some(existing) => format!("{existing} {text}"),
        None => text.to_string(),
    };
    data["notice"] = Value::String(joined);
}

/// Compiles a model-supplied glob. `*` may cross folders, so "*.rs" finds nested files too; a
/// pattern without '/' matches a file's name in any folder ("Cargo.toml", "test_*.py"), as in
/// .gitignore, ripgrep and fd.
pub fn compile_glob(pattern: &str) -> Result<GlobMatcher, ToolError> {
    let in_any_folder;
    let full = if pattern.contains('/') {
        pattern
    } else {
        in_any_folder = format!("**/{pattern}");
        &in_any_folder
    };
    GlobBuilder::new(full)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| {
            ToolError::invalid(format!("Invalid glob pattern {pattern:?}: {e}"))
                .with_hint("Use a glob such as \"*.rs\", \"src/**/*.ts\" or \"*.{js,ts}\".")
        })
}

fn worker_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8)
}

/// Shared tallies of one parallel walk.
struct Shared<'a, 'k> {
    /// Where the walk starts.
    place: Place<'a>,
    glob: Option<&'a GlobMatcher>,
    make_sink: &'a MakeSink<'k>,
    /// Whether folders' entries are counted, to say how many the rules skipped.
    count_skipped: bool,
    listed: AtomicUsize,
    yielded: AtomicUsize,
    errors: AtomicUsize,
    non_utf8: AtomicUsize,
    limits: WalkLimits,
    stopped_by_entries: AtomicBool,
    stopped_by_time: AtomicBool,
}

impl Shared<'_, '_> {
    /// The workspace-relative path of `in_dir`, a path below the walked folder.
    fn rel_of(&self, in_dir: &Path) -> String {
        let shown = in_dir.to_string_lossy();
        if self.place.rel == "." {
            shown.into_owned()
        } else {
            format!("{}/{shown}", self.place.rel)
        }
    }

    /// Does the walk go on past its `seen`th entry, within its limits?
    fn within_limits(&self, seen: usize) -> bool {
        if seen > self.limits.max_entries {
            self.stopped_by_entries.store(true, Ordering::Relaxed);
            return false;
        }
        // The clock is read for the first entries, then every few.
        let check_clock = seen <= CLOCK_EVERY || seen.is_multiple_of(CLOCK_EVERY);
        if check_clock && Instant::now() >= self.limits.deadline {
            self.stopped_by_time.store(true, Ordering::Relaxed);
            return false;
        }
        true
    }
}

/// One walker thread.
struct Visitor<'s, 'a, 'k> {
    shared: &'s Shared<'a, 'k>,
    sink: Box<dyn FileSink + 'k>,
}

impl ParallelVisitor for Visitor<'_, '_, '_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        let shared = self.shared;
        let entry = match entry {
            Ok(e) => e,
            Err(_) => {
                shared.errors.fetch_add(1, Ordering::Relaxed);
                return WalkState::Continue;
            }
        };
        if entry.depth() > 0 {
            let seen = shared.yielded.fetch_add(1, Ordering::Relaxed) + 1;
            if !shared.within_limits(seen) {
                return WalkState::Quit;
            }
        }
        let Some(kind) = entry.file_type() else {
            return WalkState::Continue;
        };
        let in_dir = path_below(entry.path(), shared.place.walk_root);
        if kind.is_dir() {
            if let Some(in_dir) = in_dir.filter(|_| entry.depth() > 0) {
                if !self.sink.wants_folder(&shared.rel_of(in_dir)) {
                    return WalkState::Skip;
                }
            }
            // Counting a folder's raw entries lets us say how many the rules skipped.
            if shared.count_skipped {
                shared
                    .listed
                    .fetch_add(count_entries(entry.path()), Ordering::Relaxed);
            }
        } else if kind.is_file() {
            if let Some(in_dir) = in_dir {
                if shared.glob.is_none_or(|g| g.is_match(in_dir)) {
                    let utf8 = in_dir.to_str().is_some() && shared.place.abs.to_str().is_some();
                    if !utf8 {
                        shared.non_utf8.fetch_add(1, Ordering::Relaxed);
                    }
                    self.sink.file(Found {
                        rel: shared.rel_of(in_dir),
                        utf8,
                        abs: shared.place.abs.join(in_dir),
                    });
                }
            }
        }
        WalkState::Continue
    }
}

/// How many entries a folder holds, `.` and `..` aside (0 when it cannot be read). Reads the
/// raw directory records into one buffer, with nothing allocated per entry.
fn count_entries(folder: &Path) -> usize {
    let Ok(handle) = rustix::fs::open(
        folder,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return 0;
    };
    let mut buffer = [MaybeUninit::<u8>::uninit(); 16 * 1024];
    let mut records = RawDir::new(handle, &mut buffer);
    let mut count = 0;
    while let Some(Ok(entry)) = records.next() {
        if !matches!(entry.file_name().to_bytes(), b"." | b"..") {
            count += 1;
        }
    }
    count
}

impl<'s, 'a: 's, 'k: 's> ParallelVisitorBuilder<'s> for &'s Shared<'a, 'k> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            shared: self,
            sink: (self.make_sink)(),
        })
    }
}

/// Walks `dir` (a resolved directory inside `root`) by its path, keeping regular files whose
/// path relative to `dir` matches `glob` (all files when `None`), within the standard limits.
/// For showing the user a tree; the tools use [`walk_checked`], which reads the folder
/// through a checked handle.
pub fn walk_files(root: &Path, dir: &ResolvedPath, glob: Option<&GlobMatcher>) -> Walked {
    let dir_rel = match dir.abs().strip_prefix(root) {
        Ok(rest) if rest.as_os_str().is_empty() => ".".to_string(),
        Ok(rest) => rest.to_string_lossy().into_owned(),
        Err(_) => dir.rel().to_string(),
    };
    let mut builder = WalkBuilder::new(dir.abs());
    skip_not_the_project(&mut builder, &[], dir.abs(), dir.abs());
    let place = Place {
        walk_root: dir.abs(),
        abs: dir.abs(),
        rel: &dir_rel,
    };
    walk(builder, place, glob, WalkLimits::standard())
}

/// The files and folders the tools can see, for grounding path arguments: the same walk as
/// `list_files` of the whole workspace, within the standard limits (a huge workspace offers
/// what the walk reached). Folders are the ones that hold a visible file, and the root.
pub fn known_paths(workspace: &Workspace) -> KnownPaths {
    match walk_workspace(workspace) {
        Ok(walked) => known_paths_of(&walked),
        Err(_) => KnownPaths::default(),
    }
}

/// The whole workspace walked as the tools see it (see [`walk_checked`]).
pub fn walk_workspace(workspace: &Workspace) -> Result<Walked, ToolError> {
    walk_checked(workspace, &workspace.resolve(".")?, None)
}

/// [`known_paths`] of a walk of the whole workspace already made.
pub fn known_paths_of(walked: &Walked) -> KnownPaths {
    KnownPaths::from_files(
        walked
            .files
            .iter()
            .filter(|f| f.utf8)
            .map(|f| f.rel.clone())
            .collect(),
    )
}

/// Walks a folder of the workspace like [`walk_files`], within the standard limits, but reads
/// a subfolder through a handle the sandbox opened and checked: the walker works with paths,
/// so a folder swapped for a link to outside between the check and the walk would otherwise be
/// listed. The root itself is walked by its path, as the sandbox opens it.
pub fn walk_checked(
    workspace: &Workspace,
    dir: &ResolvedPath,
    glob: Option<&GlobMatcher>,
) -> Result<Walked, ToolError> {
    walk_checked_within(workspace, dir, glob, WalkLimits::standard())
}

/// [`walk_checked`] with other limits.
pub fn walk_checked_within(
    workspace: &Workspace,
    dir: &ResolvedPath,
    glob: Option<&GlobMatcher>,
    limits: WalkLimits,
) -> Result<Walked, ToolError> {
    let found = Mutex::new(Vec::new());
    let collect = || -> Box<dyn FileSink + '_> {
        Box::new(Collect {
            local: Vec::new(),
            into: &found,
        })
    };
    let tally = walk_checked_into(workspace, dir, glob, limits, true, &collect)?;
    Ok(Walked {
        files: sorted(found),
        tally,
    })
}

/// Walks a folder as [`walk_checked_within`] does, but hands each file to a sink of
/// `make_sink`'s as the walk finds it, instead of listing them: a search reads the files while
/// the walk goes on. `count_skipped` asks for [`WalkTally::skipped`].
pub fn walk_checked_into(
    workspace: &Workspace,
    dir: &ResolvedPath,
    glob: Option<&GlobMatcher>,
    limits: WalkLimits,
    count_skipped: bool,
    make_sink: &MakeSink<'_>,
) -> Result<WalkTally, ToolError> {
    if dir.abs() == workspace.root() {
        // The sandbox opens the root by this very path (and trusts it); below it the walker
        // follows no link. Walking it by path spares every folder a lookup through /proc.
        let mut builder = WalkBuilder::new(dir.abs());
        skip_not_the_project(&mut builder, workspace.hidden(), dir.abs(), dir.abs());
        let place = Place {
            walk_root: dir.abs(),
            abs: dir.abs(),
            rel: ".",
        };
        return Ok(walk_into(
            builder,
            place,
            glob,
            limits,
            count_skipped,
            make_sink,
        ));
    }
    let handle = workspace.open_folder_handle(dir)?;
    let walk_root = PathBuf::from(format!("/proc/self/fd/{}", handle.as_raw_fd()));
    let mut builder = WalkBuilder::new(&walk_root);
    skip_not_the_project(&mut builder, workspace.hidden(), &walk_root, dir.abs());
    // The walk root's parents are /proc folders, not the folder's: the ignore files of the
    // folders above `dir` are added by hand instead, as the walker would read them for a
    // path. (Their patterns then apply as if written next to `dir`; unanchored ones, the
    // usual kind, mean the same.)
    builder.parents(false);
    for ancestor in dir.abs().ancestors().skip(1) {
        for name in [".gitignore", ".ignore"] {
            let file = ancestor.join(name);
            if file.is_file() {
                // A broken ignore file only means fewer files are skipped.
                let _ = builder.add_ignore(file);
            }
        }
    }
    let place = Place {
        walk_root: &walk_root,
        abs: dir.abs(),
        rel: dir.rel(),
    };
    let tally = walk_into(builder, place, glob, limits, count_skipped, make_sink);
    drop(handle);
    Ok(tally)
}

/// Version-control stores and Lantern's own state folders inside the workspace (`hidden`)
/// are never entered. (The walker keeps one entry filter, so both rules live in this one.)
fn skip_not_the_project(
    builder: &mut WalkBuilder,
    hidden: &[PathBuf],
    walk_root: &Path,
    dir_abs: &Path,
) {
    let hidden = hidden.to_vec();
    let walk_root = walk_root.to_path_buf();
    let dir_abs = dir_abs.to_path_buf();
    builder.filter_entry(move |entry| {
        // A `.git` *file* (a submodule's or worktree's pointer to its store) is passed over too.
        if entry.depth() > 0 && is_vcs_folder(entry.file_name()) {
            return false;
        }
        match entry.path().strip_prefix(&walk_root) {
            Ok(suffix) if !hidden.is_empty() => !hidden.contains(&dir_abs.join(suffix)),
            _ => true,
        }
    });
}

fn is_vcs_folder(name: &std::ffi::OsStr) -> bool {
    VCS_FOLDERS.iter().any(|vcs| name == *vcs)
}

/// The folder a walk starts from.
struct Place<'p> {
    /// The path the walker reads: the folder itself, or its handle's `/proc/self/fd/N`.
    walk_root: &'p Path,
    /// The real path of the folder, and its workspace-relative one (`.` for the root).
    abs: &'p Path,
    rel: &'p str,
}

/// A listing walk: every file found, sorted by path.
fn walk(
    builder: WalkBuilder,
    place: Place<'_>,
    glob: Option<&GlobMatcher>,
    limits: WalkLimits,
) -> Walked {
    let found = Mutex::new(Vec::new());
    let collect = || -> Box<dyn FileSink + '_> {
        Box::new(Collect {
            local: Vec::new(),
            into: &found,
        })
    };
    let tally = walk_into(builder, place, glob, limits, true, &collect);
    Walked {
        files: sorted(found),
        tally,
    }
}

fn sorted(found: Mutex<Vec<Found>>) -> Vec<Found> {
    let mut files = found.into_inner().unwrap_or_default();
    files.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
    files
}

fn walk_into(
    mut builder: WalkBuilder,
    place: Place<'_>,
    glob: Option<&GlobMatcher>,
    limits: WalkLimits,
    count_skipped: bool,
    make_sink: &MakeSink<'_>,
) -> WalkTally {
    let shared = Shared {
        place,
        glob,
        make_sink,
        count_skipped,
        listed: AtomicUsize::new(0),
        yielded: AtomicUsize::new(0),
        errors: AtomicUsize::new(0),
        non_utf8: AtomicUsize::new(0),
        limits,
        stopped_by_entries: AtomicBool::new(false),
        stopped_by_time: AtomicBool::new(false),
    };
    builder
        .follow_links(false)
        .hidden(false)
        .require_git(false)
        .threads(worker_threads())
        .build_parallel()
        .visit(&mut &shared);
    let stopped = if shared.stopped_by_entries.into_inner() {
        Some(WalkStop::Entries)
    } else if shared.stopped_by_time.into_inner() {
        Some(WalkStop::Time)
    } else {
        None
    };
    let yielded = shared.yielded.into_inner();
    WalkTally {
        // A cut-short walk did not get to see what the rules would have skipped.
        skipped: (count_skipped && stopped.is_none())
            .then(|| shared.listed.into_inner().saturating_sub(yielded)),
        errors: shared.errors.into_inner(),
        entries_walked: yielded.min(limits.max_entries),
        stopped,
        non_utf8_names: shared.non_utf8.into_inner(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: usize) -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..files {
            let sub = dir.path().join(format!("d{}", i % 5));
            std::fs::create_dir_all(&sub).unwrap();
            std::fs::write(sub.join(format!("f{i}.txt")), "x").unwrap();
        }
        let ws = Workspace::open(dir.path()).unwrap();
        (dir, ws)
    }

    #[test]
    fn a_walk_within_its_limits_is_complete() {
        let (_dir, ws) = tree(50);
        let root = ws.resolve(".").unwrap();
        let walked = walk_checked(&ws, &root, None).unwrap();
        assert_eq!(walked.files.len(), 50);
        assert_eq!(walked.files[0].rel, "d0/f0.txt");
        assert_eq!(walked.files[0].abs, ws.root().join("d0/f0.txt"));
        assert_eq!(walked.tally.entries_walked, 55);
        assert!(walked.tally.stopped.is_none());
        assert!(walked.notices().is_empty());
        let sub = ws.resolve("d1").unwrap();
        let walked = walk_checked(&ws, &sub, None).unwrap();
        assert_eq!(walked.files.len(), 10);
        assert_eq!(walked.files[0].rel, "d1/f1.txt");
        assert_eq!(walked.files[0].abs, ws.root().join("d1/f1.txt"));
        let by_path = walk_files(ws.root(), &sub, None);
        assert_eq!(by_path.files[0].rel, "d1/f1.txt");
    }

    #[test]
    fn known_paths_are_what_the_tools_see_with_every_folder_that_holds_a_file() {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in [
            ("src/lib/a.rs", "x"),
            ("src/b.rs", "x"),
            ("README.md", "x"),
            ("build/out.log", "x"),
            (".github/workflows/ci.yml", "x"),
            (".gitignore", "build/\n"),
            (".git/config", "x"),
            (".git/objects/ab/cdef", "x"),
            ("vendor/sub/.git", "gitdir: ../../.git/modules/sub\n"),
        ] {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let ws = Workspace::open(dir.path()).unwrap();
        let known = known_paths(&ws);
        assert_eq!(
            known.files,
            [
                ".github/workflows/ci.yml",
                ".gitignore",
                "README.md",
                "src/b.rs",
                "src/lib/a.rs"
            ]
        );
        assert_eq!(
            known.folders,
            [".", ".github", ".github/workflows", "src", "src/lib"]
        );
    }

    #[test]
    fn the_entry_limit_stops_the_walk_and_says_so() {
        let (_dir, ws) = tree(50);
        let root = ws.resolve(".").unwrap();
        let limits = WalkLimits {
            max_entries: 20,
            deadline: Instant::now() + WALK_TIME_BUDGET,
        };
        let walked = walk_checked_within(&ws, &root, None, limits).unwrap();
        assert_eq!(walked.tally.stopped, Some(WalkStop::Entries));
        assert_eq!(walked.tally.entries_walked, 20);
        assert!(walked.files.len() < 20, "{}", walked.files.len());
        assert!(walked.notices()[0].contains("stopped after 20 entries"));
    }

    #[test]
    fn the_time_budget_stops_the_walk_and_says_so() {
        let (_dir, ws) = tree(50);
        let root = ws.resolve(".").unwrap();
        let limits = WalkLimits {
            max_entries: MAX_WALK_ENTRIES,
            deadline: Instant::now(),
        };
        let walked = walk_checked_within(&ws, &root, None, limits).unwrap();
        assert_eq!(walked.tally.stopped, Some(WalkStop::Time));
        assert!(walked.files.is_empty());
        assert!(walked.notices()[0].contains("stopped after 10 s"));
    }

    #[test]
    fn ignore_files_of_the_folders_above_apply_to_a_subfolder() {
        let (dir, ws) = tree(0);
        std::fs::write(dir.path().join(".gitignore"), "*.log\n").unwrap();
        std::fs::create_dir_all(dir.path().join("sub/inner")).unwrap();
        std::fs::write(dir.path().join("sub/.ignore"), "skip.txt\n").unwrap();
        for name in ["keep.txt", "noise.log", "skip.txt"] {
            std::fs::write(dir.path().join("sub/inner").join(name), "x").unwrap();
        }
        let inner = ws.resolve("sub/inner").unwrap();
        let walked = walk_checked(&ws, &inner, None).unwrap();
        let names: Vec<&str> = walked.files.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(names, ["sub/inner/keep.txt"]);
    }

    #[test]
    fn a_glob_without_a_slash_matches_names_in_any_folder() {
        let glob = compile_glob("f03.*").unwrap();
        assert!(glob.is_match("f03.md"));
        assert!(glob.is_match("pkg00/mod0/f03.md"));
        assert!(!glob.is_match("pkg00/mod0/xf03.md"));
        let glob = compile_glob("Cargo.toml").unwrap();
        assert!(glob.is_match("Cargo.toml") && glob.is_match("crates/core/Cargo.toml"));
        let glob = compile_glob("*.rs").unwrap();
        assert!(glob.is_match("main.rs") && glob.is_match("src/tools/walk.rs"));
        // With a slash, the pattern is for the whole path.
        let glob = compile_glob("src/*.ts").unwrap();
        assert!(glob.is_match("src/a.ts") && !glob.is_match("ui/src/a.ts"));
    }

    #[test]
    fn notices_are_joined() {
        let mut data = serde_json::json!({});
        add_notice(&mut data, "One.");
        add_notice(&mut data, "Two.");
        assert_eq!(data["notice"], "One. Two.");
    }
}
