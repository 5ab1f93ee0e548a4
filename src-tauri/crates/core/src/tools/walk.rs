//! The directory walk list_files and search_code share: ripgrep's `ignore` walker, in
//! parallel, honouring `.gitignore`, `.ignore` and hidden files, never following symlinks
//! (a link that leads outside the workspace is never entered).

use crate::error::ToolError;
use crate::sandbox::ResolvedPath;
use globset::{GlobBuilder, GlobMatcher};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// A file the walk found.
pub struct Found {
    pub abs: PathBuf,
    /// Relative to the workspace root, '/'-separated.
    pub rel: String,
}

/// What a walk found and how much it passed over.
pub struct Walked {
    /// Matching regular files, sorted by `rel`.
    pub files: Vec<Found>,
    /// Entries the ignore rules or hidden-file rule passed over (a skipped folder counts once).
    pub skipped: usize,
    /// Entries that could not be read.
    pub errors: usize,
}

/// Compiles a model-supplied glob. `*` may cross folders, so "*.rs" finds nested files too.
pub fn compile_glob(pattern: &str) -> Result<GlobMatcher, ToolError> {
    GlobBuilder::new(pattern)
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
struct Shared<'a> {
    root: &'a Path,
    dir: &'a Path,
    glob: Option<&'a GlobMatcher>,
    found: Mutex<Vec<Found>>,
    listed: AtomicUsize,
    yielded: AtomicUsize,
    errors: AtomicUsize,
}

/// One walker thread: collects locally and hands its batch over when it is dropped, so the
/// threads do not contend on the shared list per file.
struct Visitor<'s, 'a> {
    shared: &'s Shared<'a>,
    local: Vec<Found>,
}

impl ParallelVisitor for Visitor<'_, '_> {
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
            shared.yielded.fetch_add(1, Ordering::Relaxed);
        }
        let Some(kind) = entry.file_type() else {
            return WalkState::Continue;
        };
        if kind.is_dir() {
            // Counting a folder's raw entries lets us say how many the rules skipped.
            if let Ok(rd) = std::fs::read_dir(entry.path()) {
                shared.listed.fetch_add(rd.count(), Ordering::Relaxed);
            }
        } else if kind.is_file() {
            let path = entry.path();
            if let Ok(under_root) = path.strip_prefix(shared.root) {
                let keep = match shared.glob {
                    Some(g) => g.is_match(path.strip_prefix(shared.dir).unwrap_or(under_root)),
                    None => true,
                };
                if keep {
                    self.local.push(Found {
                        rel: under_root.to_string_lossy().into_owned(),
                        abs: path.to_path_buf(),
                    });
                }
            }
        }
        WalkState::Continue
    }
}

impl Drop for Visitor<'_, '_> {
    fn drop(&mut self) {
        if let Ok(mut found) = self.shared.found.lock() {
            found.append(&mut self.local);
        }
    }
}

impl<'s, 'a: 's> ParallelVisitorBuilder<'s> for &'s Shared<'a> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            shared: self,
            local: Vec::new(),
        })
    }
}

/// Walks `dir` (a resolved directory inside `root`), keeping regular files whose path relative
/// to `dir` matches `glob` (all files when `None`).
pub fn walk_files(root: &Path, dir: &ResolvedPath, glob: Option<&GlobMatcher>) -> Walked {
    let shared = Shared {
        root,
        dir: &dir.abs,
        glob,
        found: Mutex::new(Vec::new()),
        listed: AtomicUsize::new(0),
        yielded: AtomicUsize::new(0),
        errors: AtomicUsize::new(0),
    };
    WalkBuilder::new(&dir.abs)
        .follow_links(false)
        .require_git(false)
        .threads(worker_threads())
        .build_parallel()
        .visit(&mut &shared);
    let mut files = shared.found.into_inner().unwrap_or_default();
    files.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
    Walked {
        files,
        skipped: shared
            .listed
            .into_inner()
            .saturating_sub(shared.yielded.into_inner()),
        errors: shared.errors.into_inner(),
    }
}
