//! The workspace sandbox: every path the model supplies is resolved and confined here.
//!
//! Lantern lets a local model read and edit one project folder, the *workspace*. The model
//! names files with strings; this module turns such a string into a [`ResolvedPath`] and does
//! the actual opening, writing and removing, so that no tool has to touch `std::fs` with a raw
//! model string.
//!
//! # What is guaranteed
//!
//! * **Nothing outside the canonical workspace root is read, written, created or removed** —
//!   not through `..`, absolute paths, `/proc/self/...` tricks or symbolic links at any
//!   component, and not when a component is swapped for a symbolic link *after* the path was
//!   resolved (time-of-check/time-of-use). [`Workspace::resolve`] checks the string; every
//!   operation checks again at use time:
//!   * reads open the file with `O_PATH | O_NOFOLLOW`, `fstat` the handle (only regular files
//!     are accepted) and ask the kernel where the handle really is (`/proc/self/fd/N`) before
//!     the file is opened for reading through that very handle. A FIFO or device is never
//!     opened for I/O, so it can neither block nor trigger a device's open side effects;
//!   * writes and removals walk from the root one folder at a time with
//!     `O_DIRECTORY | O_NOFOLLOW` (so a folder replaced by a symbolic link is refused, not
//!     followed), check the real path of the final folder handle via `/proc/self/fd/N`, and
//!     then work *relative to that handle* (`openat`, `renameat`, `unlinkat`), so a later swap
//!     of an ancestor cannot redirect them.
//! * **Writes are atomic**: a uniquely named temporary file in the same folder is written,
//!   `fsync`ed and renamed over the target. Readers see the old content or the new content,
//!   never a torn or empty file. Because the target's directory entry is *replaced* rather
//!   than written into, a write never modifies an existing inode — so it cannot write through
//!   a hard link to a file outside the workspace either.
//!   A writer killed before its rename leaves its hidden temporary file
//!   (`.<name>.lantern-tmp-<pid>-<n>`) behind; the next write of the same file removes such
//!   files once their process is gone.
//! * **Hard rules** ([`protected_reason`]): nothing under a `.git` directory (at any depth) or
//!   under the top-level `.lantern` directory is written or removed, whatever the grants say.
//!   The rule is checked on the resolved path and again on the real path of the folder handle
//!   at use time, so a symbolic link to `.git` does not get around it.
//! * **Error messages never reveal anything outside the workspace**: not file content, not the
//!   target of a symbolic link that leads outside — only that the path leads outside.
//!
//! # What is not guaranteed
//!
//! * **Hard links** to files outside the workspace look exactly like ordinary files on the same
//!   filesystem; nothing can tell them apart. *Reading* one reads the outside file. (Writing
//!   replaces the link with a new file, see above.)
//! * **Bind mounts** (or any mount) inside the workspace are followed like ordinary folders;
//!   the kernel reports paths inside the mount point, so they count as inside.
//! * **`..` is normalised lexically** before anything is looked up: `a/../b` means `b` even if
//!   `a` is a symbolic link. We then open `root/b`, which is inside — this differs from what a
//!   shell would open, but never leaves the workspace. (`..` inside a symbolic link's *target*
//!   is resolved the way the kernel does it.)
//! * **Absolute paths** must start with the canonical root ([`Workspace::root`]); an absolute
//!   path that reaches the workspace through another symbolic link is refused as outside.
//! * Checks are Linux-specific: they need `/proc` mounted. Without it every use-time check
//!   fails closed with an I/O error.
//! * Someone who can write to the workspace concurrently can still swap *files inside it*
//!   (e.g. replace `a.txt` with `b.txt`); the sandbox only promises the workspace boundary.
//! * File names that are not valid UTF-8 are shown lossily in [`ResolvedPath::rel`]; the
//!   operations themselves use the exact bytes of [`ResolvedPath::abs`].

mod read;
mod resolve;
// The sandbox's own tests exercise writing and removing directly.
#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod tests;
mod write;

use crate::error::ToolError;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{ErrorKind, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Longest model-supplied path we accept (the kernel's `PATH_MAX`).
const MAX_PATH_BYTES: usize = 4096;

/// Longest single file name (the kernel's `NAME_MAX`).
const MAX_COMPONENT_BYTES: usize = 255;

/// The kernel gives up after 40 symbolic links (`MAXSYMLINKS`); so do we.
const MAX_SYMLINK_HOPS: usize = 40;

/// Model-supplied text longer than this is cut in messages.
const MAX_SHOWN_CHARS: usize = 120;

/// A temporary name can only collide with a leftover of a crashed process with the same pid.
const TEMP_NAME_ATTEMPTS: usize = 8;

const PATH_HINT: &str = "Use a path inside the workspace, relative to its root, e.g. src/main.rs";

const VCS_RULE: &str =
    "version-control folders (.git, .hg, .svn, .jj) belong to their tools and are never written by Lantern";

/// The folders version-control systems keep their stores in: never written (see
/// [`protected_reason`]), never walked (see `crate::walk`).
pub const VCS_FOLDERS: [&str; 4] = [".git", ".hg", ".svn", ".jj"];

const LANTERN_RULE: &str = "the top-level .lantern directory holds Lantern's own state";

/// Flags for each folder on the way down: a folder replaced by a symbolic link fails to open.
const DIR_WALK_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Makes temporary file names unique within this process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The project folder the model may work in, identified by its canonical path.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    /// Lantern's own state folders inside the workspace (one opened at `$HOME` holds them):
    /// no path inside them resolves.
    hidden: Vec<PathBuf>,
}

/// What [`Workspace::open_read_beneath`] opens files with: the workspace root and this
/// process's `/proc/self/fd` folder, each opened once.
pub struct FileOpener {
    root: OwnedFd,
    fds: OwnedFd,
}

/// A model-supplied path after [`Workspace::resolve`]: confined to the workspace when it was
/// resolved. Every operation checks it again when it is used.
///
/// Its fields are private so that only the sandbox can make one: holding a `ResolvedPath`
/// means the resolver (or the walk of a resolved folder) produced it, never that someone put a
/// path together by hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    abs: PathBuf,
    rel: String,
    exists: bool,
}

impl ResolvedPath {
    /// Absolute path inside the canonical root; existing components are canonicalised (symbolic
    /// links inside the workspace are replaced by what they point to).
    pub fn abs(&self) -> &Path {
        &self.abs
    }

    /// Workspace-relative, `/`-separated, `.` for the root itself.
    pub fn rel(&self) -> &str {
        &self.rel
    }

    /// Whether the path existed when it was resolved.
    pub fn exists(&self) -> bool {
        self.exists
    }
}

/// What an atomic write did (see [`Workspace::save_user_edit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOutcome {
    /// The file did not exist before.
    pub created: bool,
    pub bytes_written: u64,
}

impl Workspace {
    /// Opens the workspace at `root`, which must exist and be a folder.
    pub fn open(root: impl AsRef<Path>) -> Result<Workspace, ToolError> {
        let given = root.as_ref();
        let shown_root = given.display();
        let root = std::fs::canonicalize(given).map_err(|err| match err.kind() {
            ErrorKind::NotFound => {
                ToolError::not_found(format!("The workspace folder does not exist: {shown_root}"))
            }
            ErrorKind::PermissionDenied => ToolError::denied(format!(
                "The operating system refused access to the workspace folder {shown_root}"
            )),
            _ => ToolError::io(format!(
                "Could not open the workspace folder {shown_root}: {err}"
            )),
        })?;
        if !root.is_dir() {
            return Err(ToolError::invalid(format!(
                "The workspace must be a folder, but {shown_root} is not a folder"
            )));
        }
        let mut ws = Workspace {
            root,
            hidden: Vec::new(),
        };
        // A state folder is inside the workspace if the resolver places it there, links
        // followed as for any path (it need not exist yet).
        ws.hidden = crate::paths::state_dirs()
            .iter()
            .filter_map(|d| ws.resolve(&d.to_string_lossy()).ok())
            .filter(|p| p.rel != ".")
            .map(|p| p.abs)
            .collect();
        Ok(ws)
    }

    /// Lantern's own state folders inside this workspace, hidden from every tool.
    pub fn hidden(&self) -> &[PathBuf] {
        &self.hidden
    }

    /// The canonical root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Workspace-relative display string for an absolute path inside the root (`.` for the
    /// root), or `None` if the path is not inside it. Purely lexical.
    pub fn relative(&self, abs: &Path) -> Option<String> {
        self.parts_beneath(abs).map(|parts| join_rel(&parts))
    }

    /// The components of `abs` below the root, if `abs` is lexically inside it.
    fn parts_beneath<'a>(&self, abs: &'a Path) -> Option<Vec<&'a OsStr>> {
        let rest = abs.strip_prefix(&self.root).ok()?;
        rest.components()
            .map(|component| match component {
                Component::Normal(name) => Some(name),
                _ => None,
            })
            .collect()
    }

    /// The components of a resolved path below the root, or a refusal: a path the sandbox put
    /// together from a walk's file (see `open_read_beneath`) is checked here like any other.
    fn confined_parts<'a>(&self, path: &'a ResolvedPath) -> Result<Vec<&'a OsStr>, ToolError> {
        self.parts_beneath(&path.abs).ok_or_else(|| {
            ToolError::denied(format!(
                "Path is outside the workspace: {}",
                shown(&path.rel)
            ))
            .with_hint(PATH_HINT)
        })
    }
}

/// Hard rules no grant can lift. Returns the rule's short description if writing `rel`
/// (workspace-relative, `/`-separated) is forbidden.
///
/// Names are compared ignoring ASCII case: on a case-insensitive filesystem (vfat, ntfs,
/// casefolded ext4) `.GIT/config` *is* `.git/config`, and a real project has no other reason to
/// name a folder `.Git`.
pub fn protected_reason(rel: &str) -> Option<&'static str> {
    let parts: Vec<&str> = rel
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    if parts
        .iter()
        .any(|part| VCS_FOLDERS.iter().any(|vcs| part.eq_ignore_ascii_case(vcs)))
    {
        return Some(VCS_RULE);
    }
    if parts
        .first()
        .is_some_and(|part| part.eq_ignore_ascii_case(".lantern"))
    {
        return Some(LANTERN_RULE);
    }
    None
}

fn root_is_a_directory() -> ToolError {
    ToolError::invalid("The workspace root is a directory, not a file")
        .with_hint("Name a file inside the workspace, e.g. src/main.rs")
}

/// `path` relative to `root` when it starts with `root`'s bytes followed by a separator (or is
/// `root`). A byte comparison, for paths built by joining names onto `root` — such as a walk's
/// — where it runs once per file; unlike `Path::strip_prefix` it does not parse components, so
/// a spelling such as `a//b` or `a/./b` is not recognised as being below `a`.
pub(crate) fn path_below<'p>(path: &'p Path, root: &Path) -> Option<&'p Path> {
    let (path, root) = (path.as_os_str().as_bytes(), root.as_os_str().as_bytes());
    let rest = path.strip_prefix(root)?;
    let rest = match rest.strip_prefix(b"/") {
        Some(below) => below,
        None if rest.is_empty() || root.ends_with(b"/") => rest,
        None => return None,
    };
    Some(Path::new(OsStr::from_bytes(rest)))
}

fn io_error(errno: Errno, rel: &str) -> ToolError {
    ToolError::from_io(&std::io::Error::from(errno), rel)
}

fn proc_fd_path(handle: &impl AsFd) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", handle.as_fd().as_raw_fd()))
}

/// The workspace-relative path of `name` inside the folder `folder_rel`.
fn child_rel(folder_rel: &str, name: &OsStr) -> String {
    let name = name.to_string_lossy();
    if folder_rel == "." {
        name.into_owned()
    } else {
        format!("{folder_rel}/{name}")
    }
}

/// `a/b/c` from components, `.` for none.
fn join_rel(parts: &[&OsStr]) -> String {
    if parts.is_empty() {
        return ".".to_string();
    }
    parts
        .iter()
        .map(|part| part.to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Model-supplied text as it may appear in a message: cut when long, control characters
/// escaped so a message stays one readable line.
fn shown(text: &str) -> String {
    let mut out = String::new();
    for (index, c) in text.chars().enumerate() {
        if index == MAX_SHOWN_CHARS {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}
