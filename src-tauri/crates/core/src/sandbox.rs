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
const GIT_RULE: &str = ".git directories belong to Git and are never written by Lantern";
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// Absolute path inside the canonical root; existing components are canonicalised (symbolic
    /// links inside the workspace are replaced by what they point to).
    pub abs: PathBuf,
    /// Workspace-relative, `/`-separated, `.` for the root itself.
    pub rel: String,
    /// Whether the path existed when it was resolved.
    pub exists: bool,
}

/// What [`Workspace::write_atomic`] did.
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

    /// Resolves a model-supplied path (relative to the root, or absolute inside it).
    ///
    /// `""` and `"."` are the root. `..` is normalised lexically first and may not climb above
    /// the root. Symbolic links are then followed one component at a time, the way the kernel
    /// does; the result must end up inside the root. A path that does not exist yet resolves
    /// its deepest existing ancestor and appends the rest (`exists` is then false).
    pub fn resolve(&self, raw: &str) -> Result<ResolvedPath, ToolError> {
        check_raw_limits(raw)?;
        let parts = self.lexical_parts(raw)?;
        let (abs, exists) = self.follow(raw, parts)?;
        let rel = self.relative(&abs).ok_or_else(|| leads_outside(raw))?;
        if self.hidden.iter().any(|h| abs.starts_with(h)) {
            return Err(ToolError::denied(format!(
                "{} is Lantern's own state (grants, checkpoints, transcripts); no tool may read or change it",
                shown(&rel)
            ))
            .with_hint("Work with the project's files; Lantern's state folders are not part of the project."));
        }
        Ok(ResolvedPath { abs, rel, exists })
    }

    /// Opens an existing regular file for reading, checking again that it is inside the
    /// workspace at the moment it is opened.
    pub fn open_read(&self, path: &ResolvedPath) -> Result<File, ToolError> {
        let parts = self.confined_parts(path)?;
        let rel = join_rel(&parts);
        // O_PATH opens nothing for I/O: a FIFO cannot block us and a device sees no open().
        // O_NOFOLLOW makes a final symbolic link come back as itself, for fstat to refuse.
        let handle = rustix::fs::open(
            &path.abs,
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|errno| open_error(errno, &rel))?;
        // Where the handle really is decides, not the path we asked for: a folder on the way
        // may have been swapped for a symbolic link since `resolve`.
        self.real_rel_of(&handle, &rel)?;
        let stat = rustix::fs::fstat(&handle).map_err(|errno| io_error(errno, &rel))?;
        require_regular_file(FileType::from_raw_mode(stat.st_mode), &rel)?;
        // Reopening the handle's /proc entry opens exactly the inode we just checked.
        File::open(proc_fd_path(&handle)).map_err(|err| ToolError::from_io(&err, &rel))
    }

    /// Handles for opening many files of the workspace in a row (a search) with
    /// [`Workspace::open_read_beneath`].
    pub fn file_opener(&self) -> Result<FileOpener, ToolError> {
        let root = rustix::fs::open(
            &self.root,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|errno| io_error(errno, "the workspace root"))?;
        let fds = rustix::fs::open(
            "/proc/self/fd",
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|errno| {
            ToolError::io(format!(
                "Could not open /proc/self/fd (is /proc mounted?): {errno}"
            ))
        })?;
        Ok(FileOpener { root, fds })
    }

    /// [`Workspace::open_read`] for many files in a row (a search), and the file's size.
    ///
    /// The kernel resolves the path beneath the root with no symbolic link at any component
    /// (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`), so the handle cannot be
    /// outside and the real-path check of `open_read` is not needed. As there, the file is
    /// opened `O_PATH` first and reopened for reading (through the opener's `/proc/self/fd`)
    /// only once it is known to be a regular file, so a FIFO or device is never opened.
    /// Whatever that refuses (a symbolic link inside the workspace, a kernel without
    /// `openat2`) goes the long way through `open_read`, which gives the error if there is one.
    pub fn open_read_beneath(
        &self,
        opener: &FileOpener,
        abs: &Path,
        rel: &str,
    ) -> Result<(File, u64), ToolError> {
        let long_way = || {
            let file = self.open_read(&ResolvedPath {
                abs: abs.to_path_buf(),
                rel: rel.to_string(),
                exists: true,
            })?;
            let size = file
                .metadata()
                .map_err(|err| ToolError::from_io(&err, rel))?
                .len();
            Ok((file, size))
        };
        let inside = match path_below(abs, &self.root) {
            Some(inside) if !inside.as_os_str().is_empty() => inside,
            _ => return long_way(),
        };
        let Ok(handle) = rustix::fs::openat2(
            &opener.root,
            inside,
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
        ) else {
            return long_way();
        };
        let stat = rustix::fs::fstat(&handle).map_err(|errno| io_error(errno, rel))?;
        require_regular_file(FileType::from_raw_mode(stat.st_mode), rel)?;
        // Reopening the handle's /proc entry opens exactly the inode just checked.
        let file = rustix::fs::openat(
            &opener.fds,
            rustix::path::DecInt::from_fd(&handle),
            OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|errno| io_error(errno, rel))?;
        Ok((File::from(file), stat.st_size as u64))
    }

    /// Replaces (or creates) a file atomically with `bytes`, creating missing parent folders.
    ///
    /// An existing file keeps its permission bits (without setuid/setgid/sticky); a new one
    /// gets 0o644 minus the umask. The target must be a regular file or not exist.
    pub fn write_atomic(
        &self,
        path: &ResolvedPath,
        bytes: &[u8],
    ) -> Result<WriteOutcome, ToolError> {
        let parts = self.confined_parts(path)?;
        let rel = join_rel(&parts);
        refuse_protected(&rel)?;
        let (name, folders) = parts.split_last().ok_or_else(root_is_a_directory)?;
        let (dir, folder_rel) = self.open_folder(folders, true)?;
        // Again on the real location: the folder may have been moved since `resolve`.
        refuse_protected(&child_rel(&folder_rel, name))?;

        let existing_mode = match rustix::fs::statat(&dir, *name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => {
                require_regular_file(FileType::from_raw_mode(stat.st_mode), &rel)?;
                // Only the permission bits: model-written content must not become setuid.
                Some(Mode::from_raw_mode(stat.st_mode & 0o777))
            }
            Err(Errno::NOENT) => None,
            Err(errno) => return Err(io_error(errno, &rel)),
        };
        // A replacement starts private so the new content is never more visible than the old;
        // its final mode is set before it is renamed into place.
        let create_mode = Mode::from_raw_mode(if existing_mode.is_some() {
            0o600
        } else {
            0o644
        });
        let (temp_name, temp) =
            create_temp(&dir, name, create_mode).map_err(|err| ToolError::from_io(&err, &rel))?;
        if let Err(err) = fill_and_rename(&dir, temp, &temp_name, name, bytes, existing_mode) {
            // Best effort: the temporary file is ours and must not be left behind, but a
            // failure to remove it must not hide the error that matters.
            let _ = rustix::fs::unlinkat(&dir, &temp_name, AtFlags::empty());
            return Err(ToolError::from_io(&err, &rel));
        }
        remove_stale_temps(&dir, name);
        sync_folder(&dir);
        Ok(WriteOutcome {
            created: existing_mode.is_none(),
            bytes_written: bytes.len() as u64,
        })
    }

    /// A handle on a folder of the workspace, opened by the same symlink-refusing walk from
    /// the root as writes use. Reading the folder through the handle (`/proc/self/fd/N`)
    /// reads that very folder, even if its path is swapped for a link afterwards.
    pub fn open_folder_handle(&self, path: &ResolvedPath) -> Result<OwnedFd, ToolError> {
        let parts = self.confined_parts(path)?;
        let (dir, _) = self.open_folder(&parts, false)?;
        Ok(dir)
    }

    /// Removes a regular file inside the workspace (used to undo the creation of a file).
    pub fn remove_file(&self, path: &ResolvedPath) -> Result<(), ToolError> {
        let parts = self.confined_parts(path)?;
        let rel = join_rel(&parts);
        refuse_protected(&rel)?;
        let (name, folders) = parts.split_last().ok_or_else(root_is_a_directory)?;
        let (dir, folder_rel) = self.open_folder(folders, false)?;
        refuse_protected(&child_rel(&folder_rel, name))?;
        let stat = rustix::fs::statat(&dir, *name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|errno| io_error(errno, &rel))?;
        require_regular_file(FileType::from_raw_mode(stat.st_mode), &rel)?;
        rustix::fs::unlinkat(&dir, *name, AtFlags::empty())
            .map_err(|errno| io_error(errno, &rel))?;
        sync_folder(&dir);
        Ok(())
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

    /// The components of a (possibly hand-built) resolved path below the root, or a refusal.
    fn confined_parts<'a>(&self, path: &'a ResolvedPath) -> Result<Vec<&'a OsStr>, ToolError> {
        self.parts_beneath(&path.abs).ok_or_else(|| {
            ToolError::denied(format!(
                "Path is outside the workspace: {}",
                shown(&path.rel)
            ))
            .with_hint(PATH_HINT)
        })
    }

    /// Normalises `..` and `.` lexically and turns the path into components below the root.
    fn lexical_parts(&self, raw: &str) -> Result<Vec<OsString>, ToolError> {
        let is_absolute = raw.starts_with('/');
        let mut parts: Vec<&str> = Vec::new();
        for piece in raw.split('/') {
            match piece {
                "" | "." => {}
                ".." => {
                    // At `/` an absolute path's `..` stays at `/`, as in the kernel; it is then
                    // outside the workspace anyway (unless the workspace is `/`).
                    if parts.pop().is_none() && !is_absolute {
                        return Err(ToolError::denied(format!(
                            "Path escapes the workspace: {}",
                            shown(raw)
                        ))
                        .with_hint(PATH_HINT));
                    }
                }
                name => parts.push(name),
            }
        }
        if !is_absolute {
            return Ok(parts.into_iter().map(OsString::from).collect());
        }
        let absolute: PathBuf = std::iter::once("/").chain(parts).collect();
        match self.parts_beneath(&absolute) {
            Some(inside) => Ok(inside.into_iter().map(OsStr::to_owned).collect()),
            None => Err(ToolError::denied(format!(
                "Path is outside the workspace: {}",
                shown(raw)
            ))
            .with_hint(format!(
                "The workspace is {}. {PATH_HINT}",
                self.root.display()
            ))),
        }
    }

    /// Walks `parts` down from the root, following symbolic links like the kernel does, and
    /// returns the real absolute path and whether it exists.
    fn follow(&self, raw: &str, parts: Vec<OsString>) -> Result<(PathBuf, bool), ToolError> {
        let mut current = self.root.clone();
        let mut pending: VecDeque<OsString> = parts.into();
        let mut hops = 0;
        while let Some(name) = pending.pop_front() {
            // Only a link target can bring `..` here; `current` never contains a link, so
            // dropping its last component is exactly what the kernel does.
            if name == ".." {
                current.pop();
                continue;
            }
            let next = current.join(&name);
            let meta = match std::fs::symlink_metadata(&next) {
                Ok(meta) => meta,
                Err(err) if err.kind() == ErrorKind::NotFound => {
                    return self.missing_tail(raw, current, name, pending);
                }
                Err(err) => return Err(self.lookup_error(raw, &next, &err)),
            };
            if meta.file_type().is_symlink() {
                hops += 1;
                if hops > MAX_SYMLINK_HOPS {
                    return Err(ToolError::denied(format!(
                        "Too many symbolic links while resolving {} (is there a symbolic link loop?)",
                        shown(raw)
                    ))
                    .with_hint("Use the real path of the file instead of a symbolic link."));
                }
                let target = match std::fs::read_link(&next) {
                    Ok(target) => target,
                    // It stopped being a link between the two looks (swapped by someone else):
                    // look at it again. The hop limit bounds how often.
                    Err(err) if err.raw_os_error() == Some(Errno::INVAL.raw_os_error()) => {
                        pending.push_front(name);
                        continue;
                    }
                    Err(err) => return Err(self.lookup_error(raw, &next, &err)),
                };
                if target.has_root() {
                    current = PathBuf::from("/");
                }
                for component in target.components().rev() {
                    match component {
                        Component::Normal(part) => pending.push_front(part.to_owned()),
                        Component::ParentDir => pending.push_front(OsString::from("..")),
                        Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
                    }
                }
            } else if !meta.is_dir() && !pending.is_empty() {
                return Err(match self.relative(&next) {
                    Some(rel) => ToolError::invalid(format!(
                        "{rel} is not a directory, so {} cannot exist",
                        shown(raw)
                    )),
                    None => leads_outside(raw),
                });
            } else {
                current = next;
            }
        }
        if self.parts_beneath(&current).is_none() {
            return Err(leads_outside(raw));
        }
        Ok((current, true))
    }

    /// The rest of a path whose component `missing` does not exist below `existing`.
    fn missing_tail(
        &self,
        raw: &str,
        existing: PathBuf,
        missing: OsString,
        rest: VecDeque<OsString>,
    ) -> Result<(PathBuf, bool), ToolError> {
        if self.parts_beneath(&existing).is_none() {
            return Err(leads_outside(raw));
        }
        let mut abs = existing;
        abs.push(missing);
        for name in rest {
            // `missing/..` (only possible from a link target): the kernel fails it too.
            if name == ".." {
                return Err(ToolError::not_found(format!("Not found: {}", shown(raw))));
            }
            abs.push(name);
        }
        Ok((abs, false))
    }

    /// An error while looking at `at` during `follow`, without naming anything outside.
    fn lookup_error(&self, raw: &str, at: &Path, err: &std::io::Error) -> ToolError {
        match self.relative(at) {
            Some(rel) => ToolError::from_io(err, &rel),
            None => leads_outside(raw),
        }
    }

    /// Opens the folder `folders` below the root for use as a base of `*at` calls, one
    /// component at a time without following symbolic links, optionally creating missing
    /// folders; then asks the kernel where the handle really is. Returns the handle and its
    /// real workspace-relative path.
    fn open_folder(
        &self,
        folders: &[&OsStr],
        create: bool,
    ) -> Result<(OwnedFd, String), ToolError> {
        let mut dir = rustix::fs::open(
            &self.root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|errno| io_error(errno, "the workspace root"))?;
        for (depth, name) in folders.iter().enumerate() {
            let rel = join_rel(&folders[..=depth]);
            let opened = match rustix::fs::openat(&dir, *name, DIR_WALK_FLAGS, Mode::empty()) {
                Err(Errno::NOENT) if create => {
                    match rustix::fs::mkdirat(&dir, *name, Mode::from_raw_mode(0o755)) {
                        // Someone else creating it at the same moment is fine: it is opened
                        // and checked below like any other folder.
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(errno) => return Err(io_error(errno, &rel)),
                    }
                    // Re-open the new folder with O_NOFOLLOW: it is verified like an old one.
                    rustix::fs::openat(&dir, *name, DIR_WALK_FLAGS, Mode::empty())
                }
                other => other,
            };
            dir = opened.map_err(|errno| folder_error(&dir, name, errno, &rel))?;
        }
        // Belt and braces: the kernel's view of where we ended up must be inside the root.
        let real_rel = self.real_rel_of(&dir, &join_rel(folders))?;
        Ok((dir, real_rel))
    }

    /// Asks the kernel where `handle` really is; refuses unless it is inside the root.
    /// Returns the real workspace-relative path.
    fn real_rel_of(&self, handle: &OwnedFd, rel: &str) -> Result<String, ToolError> {
        let real = std::fs::read_link(proc_fd_path(handle)).map_err(|err| {
            ToolError::io(format!(
                "Could not check where {} really is (is /proc mounted?): {err}",
                shown(rel)
            ))
        })?;
        self.relative(&real).ok_or_else(|| {
            ToolError::denied(format!(
                "{} leads outside the workspace (a folder on the path was replaced by a symbolic link after the path was checked)",
                shown(rel)
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
    if parts.iter().any(|part| part.eq_ignore_ascii_case(".git")) {
        return Some(GIT_RULE);
    }
    if parts
        .first()
        .is_some_and(|part| part.eq_ignore_ascii_case(".lantern"))
    {
        return Some(LANTERN_RULE);
    }
    None
}

fn refuse_protected(rel: &str) -> Result<(), ToolError> {
    match protected_reason(rel) {
        Some(rule) => Err(
            ToolError::denied(format!("Refusing to change {}: {rule}", shown(rel))).with_hint(
                "This rule cannot be lifted by any permission grant; change files elsewhere in the workspace.",
            ),
        ),
        None => Ok(()),
    }
}

/// NUL bytes and the kernel's length limits, checked before anything is looked up.
fn check_raw_limits(raw: &str) -> Result<(), ToolError> {
    if raw.contains('\0') {
        return Err(
            ToolError::denied("Path contains a NUL byte, which no file name can contain")
                .with_hint("Remove the NUL character from the path."),
        );
    }
    if raw.len() > MAX_PATH_BYTES {
        return Err(ToolError::denied(format!(
            "Path is too long: {} bytes, the limit is {MAX_PATH_BYTES}",
            raw.len()
        )));
    }
    if let Some(long) = raw.split('/').find(|part| part.len() > MAX_COMPONENT_BYTES) {
        return Err(ToolError::denied(format!(
            "A file or folder name in the path is too long: {} bytes, the limit is {MAX_COMPONENT_BYTES} ({})",
            long.len(),
            shown(long)
        )));
    }
    Ok(())
}

fn leads_outside(raw: &str) -> ToolError {
    ToolError::denied(format!(
        "Path leads outside the workspace through a symbolic link: {}",
        shown(raw)
    ))
    .with_hint(format!(
        "Symbolic links that point outside the workspace are never followed. {PATH_HINT}"
    ))
}

fn root_is_a_directory() -> ToolError {
    ToolError::invalid("The workspace root is a directory, not a file")
        .with_hint("Name a file inside the workspace, e.g. src/main.rs")
}

/// Only regular files are read, replaced or removed.
fn require_regular_file(file_type: FileType, rel: &str) -> Result<(), ToolError> {
    match file_type {
        FileType::RegularFile => Ok(()),
        FileType::Directory => Err(ToolError::invalid(format!(
            "{} is a directory, not a file",
            shown(rel)
        ))
        .with_hint("Use list_files to see what a directory holds.")),
        FileType::Symlink => Err(ToolError::denied(format!(
            "{} is a symbolic link; it may have been replaced after the path was checked, so it is not followed",
            shown(rel)
        ))
        .with_hint("Resolve the path again, or use the real path of the file.")),
        _ => Err(ToolError::denied(format!(
            "{} is not a regular file (it is a FIFO, socket or device); Lantern only reads and writes regular files",
            shown(rel)
        ))),
    }
}

/// An error from opening a file for `open_read`.
fn open_error(errno: Errno, rel: &str) -> ToolError {
    if errno == Errno::LOOP {
        // The final component is opened without following, so only a folder on the way can
        // loop: it was replaced by a symbolic link (loop) after `resolve`.
        return ToolError::denied(format!(
            "Too many symbolic links while opening {}; a folder on the path was replaced after the path was checked",
            shown(rel)
        ));
    }
    io_error(errno, rel)
}

/// An error from opening the folder `name` inside `parent` during the walk of `open_folder`.
fn folder_error(parent: &OwnedFd, name: &OsStr, errno: Errno, rel: &str) -> ToolError {
    // O_NOFOLLOW | O_DIRECTORY on a symbolic link fails with ELOOP or ENOTDIR depending on the
    // kernel path taken; look at the entry to tell the user which it is.
    if matches!(errno, Errno::LOOP | Errno::NOTDIR) {
        if let Ok(stat) = rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW) {
            match FileType::from_raw_mode(stat.st_mode) {
                FileType::Symlink => {
                    return ToolError::denied(format!(
                        "{} is a symbolic link now; it was replaced after the path was checked, so it is not followed",
                        shown(rel)
                    ))
                    .with_hint("Resolve the path again, or use the real path of the folder.");
                }
                // A folder again by now: it was something else (a link) when it was opened,
                // so it is being swapped back and forth.
                FileType::Directory => {
                    return ToolError::denied(format!(
                        "{} changed while it was being opened (it was replaced after the path was checked)",
                        shown(rel)
                    ))
                    .with_hint("Resolve the path again, or use the real path of the folder.");
                }
                _ => {}
            }
        }
    }
    io_error(errno, rel)
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

/// Creates a new, uniquely named temporary file next to `name` in `dir`.
fn create_temp(dir: &OwnedFd, name: &OsStr, mode: Mode) -> std::io::Result<(OsString, File)> {
    for _ in 0..TEMP_NAME_ATTEMPTS {
        let temp_name = temp_name_for(name);
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rustix::fs::openat(dir, &temp_name, flags, mode) {
            Ok(fd) => return Ok((temp_name, File::from(fd))),
            Err(Errno::EXIST) => continue,
            Err(errno) => return Err(errno.into()),
        }
    }
    Err(Errno::EXIST.into())
}

/// `.<name>.lantern-tmp-<pid>-<counter>`, with `<name>` shortened if the whole would exceed the
/// file name limit.
fn temp_name_for(name: &OsStr) -> OsString {
    let suffix = format!(
        ".lantern-tmp-{}-{}",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let kept = name.len().min(MAX_COMPONENT_BYTES - 1 - suffix.len());
    let mut bytes = Vec::with_capacity(1 + kept + suffix.len());
    bytes.push(b'.');
    bytes.extend_from_slice(&name.as_bytes()[..kept]);
    bytes.extend_from_slice(suffix.as_bytes());
    OsString::from_vec(bytes)
}

/// Removes the temporary files that writers of `name` killed before their rename left in `dir`
/// (a crash cannot clean up after itself). Only files named like ours whose process is gone
/// are removed; a live process's file, or one whose process id was reused, is left alone.
/// Best effort: the write has succeeded, and a leftover costs only space.
fn remove_stale_temps(dir: &OwnedFd, name: &OsStr) {
    let Ok(entries) = rustix::fs::Dir::read_from(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Some(pid) = stale_temp_pid(entry.file_name().to_bytes(), name.as_bytes()) else {
            continue;
        };
        let gone = rustix::process::Pid::from_raw(pid)
            .is_some_and(|pid| rustix::process::test_kill_process(pid) == Err(Errno::SRCH));
        if gone {
            let _ = rustix::fs::unlinkat(dir, entry.file_name(), AtFlags::empty());
        }
    }
}

/// The process id in `entry` if it is a temporary file of [`temp_name_for`] for `name`
/// (whose name part may have been shortened).
fn stale_temp_pid(entry: &[u8], name: &[u8]) -> Option<i32> {
    const MARK: &[u8] = b".lantern-tmp-";
    let rest = entry.strip_prefix(b".")?;
    let at = rest
        .windows(MARK.len())
        .rposition(|window| window == MARK)?;
    if at == 0 || !name.starts_with(&rest[..at]) {
        return None;
    }
    let (pid, counter) = std::str::from_utf8(&rest[at + MARK.len()..])
        .ok()?
        .split_once('-')?;
    counter.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// Writes the temporary file completely and durably, then renames it over `name`.
fn fill_and_rename(
    dir: &OwnedFd,
    mut temp: File,
    temp_name: &OsStr,
    name: &OsStr,
    bytes: &[u8],
    mode: Option<Mode>,
) -> std::io::Result<()> {
    temp.write_all(bytes)?;
    if let Some(mode) = mode {
        rustix::fs::fchmod(&temp, mode)?;
    }
    temp.sync_all()?;
    // renameat replaces a directory entry and never follows one: if `name` became a symbolic
    // link in the meantime, the link is replaced, not its target.
    rustix::fs::renameat(dir, temp_name, dir, name)?;
    Ok(())
}

/// Makes a rename or removal in `dir` durable. Best effort: the change has already happened,
/// and reporting a failure here would make the caller believe it had not (some filesystems do
/// not support fsync on folders at all).
fn sync_folder(dir: &OwnedFd) {
    let _ = rustix::fs::fsync(dir);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorType;
    use std::fs;
    use std::os::unix::fs::{symlink, FileTypeExt, PermissionsExt};
    use std::time::Duration;
    use tempfile::TempDir;

    const SECRET: &str = "TOP-SECRET-OUTSIDE-CONTENT";

    #[test]
    fn path_below_is_the_rest_after_the_root_and_a_separator() {
        let below = |path: &str, root: &str| {
            path_below(Path::new(path), Path::new(root)).map(|p| p.to_str().unwrap().to_string())
        };
        assert_eq!(below("/ws/a/b.txt", "/ws").as_deref(), Some("a/b.txt"));
        assert_eq!(below("/ws/a/b.txt", "/ws/").as_deref(), Some("a/b.txt"));
        assert_eq!(below("/ws", "/ws").as_deref(), Some(""));
        // A sibling whose name merely starts with the root's is not below it.
        assert_eq!(below("/wsx/a.txt", "/ws"), None);
        assert_eq!(below("/other/a.txt", "/ws"), None);
        assert_eq!(below("relative", "/ws"), None);
    }

    /// A workspace `ws` next to a folder `outside` holding `secret.txt` and `sub/f.txt`.
    struct Fixture {
        _base: TempDir,
        ws: Workspace,
        outside: PathBuf,
    }

    impl Fixture {
        fn new() -> Fixture {
            let base = tempfile::tempdir().unwrap();
            fs::create_dir(base.path().join("ws")).unwrap();
            let outside = base.path().join("outside");
            fs::create_dir_all(outside.join("sub")).unwrap();
            fs::write(outside.join("secret.txt"), SECRET).unwrap();
            fs::write(outside.join("sub/f.txt"), SECRET).unwrap();
            let ws = Workspace::open(base.path().join("ws")).unwrap();
            let outside = fs::canonicalize(outside).unwrap();
            Fixture {
                _base: base,
                ws,
                outside,
            }
        }

        fn root(&self) -> &Path {
            self.ws.root()
        }

        fn write(&self, rel: &str, content: &str) {
            let path = self.root().join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, content).unwrap();
        }

        fn link(&self, rel: &str, target: impl AsRef<Path>) {
            let path = self.root().join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            symlink(target, path).unwrap();
        }

        /// Asserts a refusal that says nothing about what lies outside.
        fn assert_denied_without_leak(&self, result: Result<impl std::fmt::Debug, ToolError>) {
            let err = result.expect_err("expected a refusal");
            assert_eq!(err.kind, ErrorType::PermissionDenied, "{err:?}");
            let text = format!("{} {}", err.message, err.hint.clone().unwrap_or_default());
            assert!(!text.contains(SECRET), "content leaked: {text}");
            assert!(
                !text.contains(self.outside.to_str().unwrap()),
                "outside path leaked: {text}"
            );
        }

        fn outside_untouched(&self) {
            assert_eq!(
                fs::read_to_string(self.outside.join("secret.txt")).unwrap(),
                SECRET
            );
            assert_eq!(
                fs::read_to_string(self.outside.join("sub/f.txt")).unwrap(),
                SECRET
            );
            let names: Vec<_> = fs::read_dir(self.outside.join("sub")).unwrap().collect();
            assert_eq!(names.len(), 1, "something was created outside");
        }

        fn read(&self, raw: &str) -> Result<String, ToolError> {
            let path = self.ws.resolve(raw)?;
            let mut file = self.ws.open_read(&path)?;
            let mut text = String::new();
            std::io::Read::read_to_string(&mut file, &mut text).unwrap();
            Ok(text)
        }
    }

    fn hand_built(abs: PathBuf, rel: &str) -> ResolvedPath {
        ResolvedPath {
            abs,
            rel: rel.to_string(),
            exists: true,
        }
    }

    fn temp_files_in(dir: &Path) -> Vec<String> {
        fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.contains(".lantern-tmp-"))
            .collect()
    }

    // ---- open ----

    #[test]
    fn open_refuses_missing_folder_and_file() {
        let fx = Fixture::new();
        let missing = Workspace::open(fx.root().join("nope")).unwrap_err();
        assert_eq!(missing.kind, ErrorType::NotFound);
        assert!(missing.message.contains("does not exist"), "{missing:?}");
        fx.write("file.txt", "x");
        let file = Workspace::open(fx.root().join("file.txt")).unwrap_err();
        assert_eq!(file.kind, ErrorType::ValidationFailed);
        assert!(file.message.contains("not a folder"), "{file:?}");
    }

    #[test]
    fn open_canonicalises_the_root() {
        let fx = Fixture::new();
        fs::create_dir(fx.root().join("inner")).unwrap();
        let ws = Workspace::open(fx.root().join("inner/../inner/.")).unwrap();
        assert_eq!(ws.root(), fx.root().join("inner"));
    }

    // ---- resolve: ordinary paths ----

    #[test]
    fn resolves_relative_path() {
        let fx = Fixture::new();
        fx.write("src/main.rs", "fn main() {}");
        let path = fx.ws.resolve("src/main.rs").unwrap();
        assert_eq!(path.abs, fx.root().join("src/main.rs"));
        assert_eq!(path.rel, "src/main.rs");
        assert!(path.exists);
        assert_eq!(fx.ws.resolve("./src//main.rs/").unwrap(), path);
    }

    #[test]
    fn resolves_absolute_path_inside() {
        let fx = Fixture::new();
        fx.write("src/main.rs", "");
        let raw = format!("{}/src/main.rs", fx.root().display());
        let path = fx.ws.resolve(&raw).unwrap();
        assert_eq!(path.rel, "src/main.rs");
        assert!(path.exists);
        let root = fx.ws.resolve(&fx.root().display().to_string()).unwrap();
        assert_eq!(root.rel, ".");
    }

    #[test]
    fn dot_and_empty_are_the_root() {
        let fx = Fixture::new();
        for raw in ["", ".", "./", "./.", "a/.."] {
            let path = fx.ws.resolve(raw).unwrap();
            assert_eq!(path.abs, fx.root(), "{raw:?}");
            assert_eq!(path.rel, ".", "{raw:?}");
            assert!(path.exists);
        }
    }

    #[test]
    fn new_file_under_missing_folders() {
        let fx = Fixture::new();
        fx.write("a/keep", "");
        let path = fx.ws.resolve("a/b/c/new.txt").unwrap();
        assert_eq!(path.abs, fx.root().join("a/b/c/new.txt"));
        assert_eq!(path.rel, "a/b/c/new.txt");
        assert!(!path.exists);
    }

    #[test]
    fn dotdot_inside_is_normalised_lexically() {
        let fx = Fixture::new();
        fx.write("b/x", "");
        assert_eq!(fx.ws.resolve("a/../b/x").unwrap().rel, "b/x");
        assert_eq!(fx.ws.resolve("b/x/../x").unwrap().rel, "b/x");
        // `a` being a symbolic link to somewhere else does not change that: still `b/x`.
        fx.link("a", fx.outside.join("sub"));
        assert_eq!(fx.ws.resolve("a/../b/x").unwrap().rel, "b/x");
    }

    // ---- resolve: escapes ----

    #[test]
    fn dotdot_escapes_are_refused_in_every_spelling() {
        let fx = Fixture::new();
        fx.write("a/x", "");
        for raw in [
            "..",
            "../",
            "../x",
            "./../x",
            "a/../../x",
            "a/./../../x",
            "a/..//../x",
            "../ws/a/x",
            "a/x/../../..",
        ] {
            let err = fx.ws.resolve(raw).unwrap_err();
            assert_eq!(err.kind, ErrorType::PermissionDenied, "{raw:?}");
            assert!(
                err.message.starts_with("Path escapes the workspace"),
                "{err:?}"
            );
            assert!(err.hint.as_deref().unwrap().contains("src/main.rs"));
        }
        let err = fx.ws.resolve("../../etc/passwd").unwrap_err();
        assert_eq!(err.message, "Path escapes the workspace: ../../etc/passwd");
    }

    #[test]
    fn absolute_outside_is_refused() {
        let fx = Fixture::new();
        let err = fx.ws.resolve("/etc/passwd").unwrap_err();
        assert_eq!(err.kind, ErrorType::PermissionDenied);
        assert_eq!(err.message, "Path is outside the workspace: /etc/passwd");
        // Climbing out of the root with `..` in an absolute path is outside too.
        let raw = format!("{}/../outside/secret.txt", fx.root().display());
        fx.assert_denied_without_leak(fx.ws.resolve(&raw).map(|_| ()));
        fx.assert_denied_without_leak(fx.ws.resolve("/").map(|_| ()));
    }

    #[test]
    fn proc_self_paths_are_refused() {
        let fx = Fixture::new();
        for raw in [
            "/proc/self/root/etc/passwd",
            "/proc/self/cwd/Cargo.toml",
            "/proc/self/fd/0",
        ] {
            let err = fx.ws.resolve(raw).unwrap_err();
            assert_eq!(err.kind, ErrorType::PermissionDenied, "{raw}");
            assert!(err.message.contains("outside the workspace"), "{err:?}");
        }
    }

    #[test]
    fn nul_byte_is_refused() {
        let fx = Fixture::new();
        let err = fx.ws.resolve("src/ma\0in.rs").unwrap_err();
        assert_eq!(err.kind, ErrorType::PermissionDenied);
        assert!(err.message.contains("NUL"));
    }

    #[test]
    fn over_long_path_is_refused() {
        let fx = Fixture::new();
        let raw = "abcd/".repeat(1000);
        assert_eq!(raw.len(), 5000);
        let err = fx.ws.resolve(&raw).unwrap_err();
        assert_eq!(err.kind, ErrorType::PermissionDenied);
        assert!(err.message.contains("too long"), "{err:?}");
        assert!(err.message.len() < 200, "the whole path is echoed back");
    }

    #[test]
    fn over_long_component_is_refused_but_255_bytes_is_fine() {
        let fx = Fixture::new();
        let err = fx
            .ws
            .resolve(&format!("src/{}", "n".repeat(300)))
            .unwrap_err();
        assert_eq!(err.kind, ErrorType::PermissionDenied);
        assert!(err.message.contains("300 bytes"), "{err:?}");
        assert!(err.message.contains('…'), "long names are cut: {err:?}");
        let path = fx.ws.resolve(&format!("src/{}", "n".repeat(255))).unwrap();
        assert!(!path.exists);
    }

    #[test]
    fn file_symlink_to_outside_is_refused_without_leaking() {
        let fx = Fixture::new();
        fx.link("notes.txt", fx.outside.join("secret.txt"));
        fx.assert_denied_without_leak(fx.ws.resolve("notes.txt"));
        fx.assert_denied_without_leak(fx.read("notes.txt"));
        let err = fx.ws.resolve("notes.txt").unwrap_err();
        assert!(
            err.message.contains("leads outside the workspace"),
            "{err:?}"
        );
    }

    #[test]
    fn dir_symlink_to_outside_at_first_component() {
        let fx = Fixture::new();
        fx.link("out", &fx.outside);
        fx.assert_denied_without_leak(fx.ws.resolve("out/secret.txt"));
        fx.assert_denied_without_leak(fx.ws.resolve("out/sub/f.txt"));
    }

    #[test]
    fn dir_symlink_to_outside_at_middle_component() {
        let fx = Fixture::new();
        fx.link("a/out", &fx.outside);
        fx.assert_denied_without_leak(fx.ws.resolve("a/out/sub/f.txt"));
    }

    #[test]
    fn dir_symlink_to_outside_at_last_component() {
        let fx = Fixture::new();
        fx.link("a/b/out", fx.outside.join("sub"));
        fx.assert_denied_without_leak(fx.ws.resolve("a/b/out"));
        fx.assert_denied_without_leak(fx.ws.resolve("a/b/out/"));
    }

    #[test]
    fn relative_symlink_climbing_out_is_refused() {
        let fx = Fixture::new();
        fx.link("a/b/up", "../../../outside/secret.txt");
        fx.assert_denied_without_leak(fx.ws.resolve("a/b/up"));
        fx.link("a/b/updir", "../../../outside");
        fx.assert_denied_without_leak(fx.ws.resolve("a/b/updir/sub/f.txt"));
    }

    #[test]
    fn new_file_under_dir_symlinked_outside_is_refused() {
        let fx = Fixture::new();
        fx.link("out", fx.outside.join("sub"));
        fx.assert_denied_without_leak(fx.ws.resolve("out/new.txt"));
        fx.assert_denied_without_leak(fx.ws.resolve("out/deeper/new.txt"));
        fx.outside_untouched();
    }

    #[test]
    fn dangling_symlink_to_outside_is_refused() {
        let fx = Fixture::new();
        fx.link("ghost", fx.outside.join("not-there/either"));
        fx.assert_denied_without_leak(fx.ws.resolve("ghost"));
        fx.assert_denied_without_leak(fx.ws.resolve("ghost/new.txt"));
    }

    #[test]
    fn dangling_symlink_inside_resolves_to_its_missing_target() {
        let fx = Fixture::new();
        fx.link("current", "build/v2");
        let path = fx.ws.resolve("current/out.txt").unwrap();
        assert_eq!(path.rel, "build/v2/out.txt");
        assert!(!path.exists);
    }

    #[test]
    fn symlink_inside_pointing_inside_resolves_to_target() {
        let fx = Fixture::new();
        fx.write("real/file.txt", "hello");
        fx.link("rel-file", "real/file.txt");
        fx.link("abs-dir", fx.root().join("real"));
        fx.link("nested/up", "../real");
        for raw in ["rel-file", "abs-dir/file.txt", "nested/up/file.txt"] {
            let path = fx.ws.resolve(raw).unwrap();
            assert_eq!(path.abs, fx.root().join("real/file.txt"), "{raw}");
            assert_eq!(path.rel, "real/file.txt", "{raw}");
            assert!(path.exists);
        }
        assert_eq!(fx.read("rel-file").unwrap(), "hello");
    }

    #[test]
    fn symlink_out_and_back_in_is_inside() {
        let fx = Fixture::new();
        fx.write("sub/x.txt", "x");
        // Leaves the root for a moment (../ws) but ends inside, as the kernel would.
        fx.link("roundtrip", "../ws/sub");
        assert_eq!(fx.ws.resolve("roundtrip/x.txt").unwrap().rel, "sub/x.txt");
    }

    #[test]
    fn symlink_loop_is_refused_cleanly() {
        let fx = Fixture::new();
        fx.link("a", "b");
        fx.link("b", "a");
        fx.link("self", "self");
        for raw in ["a", "b/file.txt", "self"] {
            let err = fx.ws.resolve(raw).unwrap_err();
            assert_eq!(err.kind, ErrorType::PermissionDenied, "{raw}");
            assert!(err.message.contains("symbolic link loop"), "{err:?}");
        }
    }

    #[test]
    fn file_used_as_a_folder_is_invalid() {
        let fx = Fixture::new();
        fx.write("file.txt", "x");
        let err = fx.ws.resolve("file.txt/inner").unwrap_err();
        assert_eq!(err.kind, ErrorType::ValidationFailed);
        assert!(
            err.message.contains("file.txt is not a directory"),
            "{err:?}"
        );
    }

    // ---- open_read ----

    #[test]
    fn open_read_reads_a_regular_file() {
        let fx = Fixture::new();
        fx.write("a/b.txt", "content");
        assert_eq!(fx.read("a/b.txt").unwrap(), "content");
    }

    #[test]
    fn open_read_of_a_missing_file_is_not_found() {
        let fx = Fixture::new();
        let err = fx.read("missing.txt").unwrap_err();
        assert_eq!(err.kind, ErrorType::NotFound);
        assert!(err.message.contains("missing.txt"));
    }

    #[test]
    fn open_read_of_a_directory_is_invalid() {
        let fx = Fixture::new();
        fs::create_dir(fx.root().join("dir")).unwrap();
        for raw in ["dir", "."] {
            let err = fx.read(raw).unwrap_err();
            assert_eq!(err.kind, ErrorType::ValidationFailed, "{raw}");
            assert!(err.message.contains("is a directory"), "{err:?}");
        }
    }

    #[test]
    fn open_read_of_a_fifo_is_refused_without_blocking() {
        let fx = Fixture::new();
        let fifo = fx.root().join("pipe");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, Mode::from_raw_mode(0o644)).unwrap();
        let ws = fx.ws.clone();
        let (done, result) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let outcome = ws.resolve("pipe").and_then(|path| ws.open_read(&path));
            done.send(outcome.map(|_| ())).unwrap();
        });
        let err = result
            .recv_timeout(Duration::from_secs(10))
            .expect("open_read blocked on a FIFO")
            .unwrap_err();
        assert_eq!(err.kind, ErrorType::PermissionDenied);
        assert!(err.message.contains("not a regular file"), "{err:?}");
    }

    #[test]
    fn open_read_beneath_reads_files_inside_and_refuses_links_out_and_fifos() {
        let fx = Fixture::new();
        fx.write("dir/a.txt", "hello");
        fx.link("dir/out-link.txt", fx.outside.join("secret.txt"));
        fx.link("escape", &fx.outside);
        let fifo = fx.root().join("pipe");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, Mode::from_raw_mode(0o644)).unwrap();
        let opener = fx.ws.file_opener().unwrap();
        let open = |rel: &str| fx.ws.open_read_beneath(&opener, &fx.root().join(rel), rel);

        let (mut file, size) = open("dir/a.txt").unwrap();
        assert_eq!(size, 5);
        let mut text = String::new();
        std::io::Read::read_to_string(&mut file, &mut text).unwrap();
        assert_eq!(text, "hello");
        // A link, final or on the way, is refused by openat2 and then by the long way.
        assert!(open("dir/out-link.txt").is_err());
        fx.assert_denied_without_leak(open("escape/secret.txt"));
        fx.assert_denied_without_leak(open("escape/sub/f.txt"));
        // O_PATH first: the FIFO is never opened, so this cannot block.
        let err = open("pipe").unwrap_err();
        assert!(err.message.contains("not a regular file"), "{err:?}");
        assert!(open("missing.txt").is_err());
    }

    #[test]
    fn open_read_of_a_socket_is_refused() {
        let fx = Fixture::new();
        let _listener = std::os::unix::net::UnixListener::bind(fx.root().join("sock")).unwrap();
        let err = fx.read("sock").unwrap_err();
        assert_eq!(err.kind, ErrorType::PermissionDenied);
        assert!(err.message.contains("not a regular file"), "{err:?}");
    }

    #[test]
    fn open_read_of_dev_null_through_a_symlink_is_refused() {
        let fx = Fixture::new();
        fx.link("null", "/dev/null");
        fx.assert_denied_without_leak(fx.ws.resolve("null"));
        // A caller handing over the link itself, or /dev/null directly, is refused at use time.
        let link = hand_built(fx.root().join("null"), "null");
        fx.assert_denied_without_leak(fx.ws.open_read(&link));
        let device = hand_built(PathBuf::from("/dev/null"), "/dev/null");
        fx.assert_denied_without_leak(fx.ws.open_read(&device));
    }

    // ---- swaps after resolve ----

    #[test]
    fn folder_swapped_for_outside_symlink_after_resolve_is_refused() {
        let fx = Fixture::new();
        fx.write("d/f.txt", "inside");
        let path = fx.ws.resolve("d/f.txt").unwrap();
        assert!(path.exists);
        // The swap: `d` becomes a link to an outside folder that also holds `f.txt`.
        fs::rename(fx.root().join("d"), fx.root().join("d-old")).unwrap();
        symlink(fx.outside.join("sub"), fx.root().join("d")).unwrap();

        fx.assert_denied_without_leak(fx.ws.open_read(&path));
        fx.assert_denied_without_leak(fx.ws.write_atomic(&path, b"overwritten"));
        fx.assert_denied_without_leak(fx.ws.remove_file(&path));
        // Refused by the use-time checks, each for the reason it should be.
        let read = fx.ws.open_read(&path).unwrap_err().message;
        assert!(
            read.contains("d/f.txt leads outside the workspace"),
            "{read}"
        );
        let write = fx.ws.write_atomic(&path, b"x").unwrap_err().message;
        assert!(write.contains("d is a symbolic link now"), "{write}");
        fx.outside_untouched();
        // A new file under the swapped folder is refused too.
        let new = fx.ws.resolve("d-old/new.txt").unwrap();
        fs::rename(fx.root().join("d-old"), fx.root().join("d-older")).unwrap();
        symlink(fx.outside.join("sub"), fx.root().join("d-old")).unwrap();
        fx.assert_denied_without_leak(fx.ws.write_atomic(&new, b"x"));
        fx.outside_untouched();
    }

    #[test]
    fn file_swapped_for_outside_symlink_after_resolve_is_refused() {
        let fx = Fixture::new();
        fx.write("f.txt", "inside");
        let path = fx.ws.resolve("f.txt").unwrap();
        fs::remove_file(fx.root().join("f.txt")).unwrap();
        symlink(fx.outside.join("secret.txt"), fx.root().join("f.txt")).unwrap();

        fx.assert_denied_without_leak(fx.ws.open_read(&path));
        fx.assert_denied_without_leak(fx.ws.write_atomic(&path, b"overwritten"));
        fx.outside_untouched();
        assert!(fs::symlink_metadata(fx.root().join("f.txt"))
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn folder_swapped_for_symlink_to_git_refuses_the_write() {
        let fx = Fixture::new();
        fx.write(".git/config", "[core]");
        fx.write("d/config", "mine");
        let path = fx.ws.resolve("d/config").unwrap();
        fs::remove_dir_all(fx.root().join("d")).unwrap();
        symlink(".git", fx.root().join("d")).unwrap();
        let err = fx.ws.write_atomic(&path, b"evil").unwrap_err();
        assert_eq!(err.kind, ErrorType::PermissionDenied);
        assert!(err.message.contains("d is a symbolic link now"), "{err:?}");
        assert_eq!(
            fs::read_to_string(fx.root().join(".git/config")).unwrap(),
            "[core]"
        );
    }

    // ---- write_atomic ----

    #[test]
    fn write_creates_a_new_file() {
        let fx = Fixture::new();
        let path = fx.ws.resolve("new.txt").unwrap();
        let outcome = fx.ws.write_atomic(&path, b"hello").unwrap();
        assert_eq!(
            outcome,
            WriteOutcome {
                created: true,
                bytes_written: 5
            }
        );
        assert_eq!(fs::read(fx.root().join("new.txt")).unwrap(), b"hello");
        let mode = fs::metadata(fx.root().join("new.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(
            mode & 0o777 & !0o644,
            0,
            "new files are at most 0o644: {mode:o}"
        );
    }

    #[test]
    fn write_replaces_content_and_keeps_the_mode() {
        let fx = Fixture::new();
        fx.write("run.sh", "#!/bin/sh\necho old\n");
        let file = fx.root().join("run.sh");
        fs::set_permissions(&file, fs::Permissions::from_mode(0o755)).unwrap();
        let path = fx.ws.resolve("run.sh").unwrap();
        let outcome = fx.ws.write_atomic(&path, b"#!/bin/sh\necho new\n").unwrap();
        assert!(!outcome.created);
        assert_eq!(outcome.bytes_written, 19);
        assert_eq!(fs::read_to_string(&file).unwrap(), "#!/bin/sh\necho new\n");
        assert_eq!(
            fs::metadata(&file).unwrap().permissions().mode() & 0o7777,
            0o755
        );
    }

    #[test]
    fn write_keeps_a_private_mode_and_drops_setuid() {
        let fx = Fixture::new();
        fx.write("private", "old");
        let file = fx.root().join("private");
        fs::set_permissions(&file, fs::Permissions::from_mode(0o4600)).unwrap();
        let path = fx.ws.resolve("private").unwrap();
        fx.ws.write_atomic(&path, b"new").unwrap();
        assert_eq!(
            fs::metadata(&file).unwrap().permissions().mode() & 0o7777,
            0o600
        );
    }

    #[test]
    fn write_creates_parent_folders() {
        let fx = Fixture::new();
        let path = fx.ws.resolve("a/b/c/deep.txt").unwrap();
        assert!(!path.exists);
        fx.ws.write_atomic(&path, b"deep").unwrap();
        assert_eq!(
            fs::read_to_string(fx.root().join("a/b/c/deep.txt")).unwrap(),
            "deep"
        );
        assert!(fx.root().join("a/b").is_dir());
    }

    #[test]
    fn write_empty_content_is_a_real_empty_file() {
        let fx = Fixture::new();
        fx.write("x.txt", "something");
        let path = fx.ws.resolve("x.txt").unwrap();
        assert_eq!(fx.ws.write_atomic(&path, b"").unwrap().bytes_written, 0);
        assert_eq!(fs::read(fx.root().join("x.txt")).unwrap(), b"");
    }

    #[test]
    fn write_leaves_no_temp_files_behind() {
        let fx = Fixture::new();
        fx.write("d/old.txt", "old");
        for (raw, content) in [("d/old.txt", "1"), ("d/new.txt", "2"), ("d/old.txt", "3")] {
            let path = fx.ws.resolve(raw).unwrap();
            fx.ws.write_atomic(&path, content.as_bytes()).unwrap();
        }
        // A refused write leaves nothing behind either.
        fs::create_dir(fx.root().join("d/dir")).unwrap();
        let dir = fx.ws.resolve("d/dir").unwrap();
        assert!(fx.ws.write_atomic(&dir, b"x").is_err());
        assert_eq!(temp_files_in(&fx.root().join("d")), Vec::<String>::new());
        let mut names: Vec<_> = fs::read_dir(fx.root().join("d"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["dir", "new.txt", "old.txt"]);
    }

    #[test]
    fn temporary_files_of_killed_writers_are_removed_by_the_next_write() {
        let fx = Fixture::new();
        fx.write("d/f.txt", "old");
        // A child that has exited and been reaped: its pid names no process any more.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        child.wait().unwrap();
        let dead = child.id();
        let alive = std::process::id();
        let long = "n".repeat(255);
        for leftover in [
            format!(".f.txt.lantern-tmp-{dead}-0"),
            format!(".f.txt.lantern-tmp-{dead}-17"),
            format!(".f.txt.lantern-tmp-{alive}-99999"),
            format!(".other.lantern-tmp-{dead}-0"),
            format!(".f.txt.lantern-tmp-{dead}-x"),
            format!(".{}.lantern-tmp-{dead}-0", &long[..200]),
        ] {
            fx.write(&format!("d/{leftover}"), "half written");
        }
        let path = fx.ws.resolve("d/f.txt").unwrap();
        fx.ws.write_atomic(&path, b"new").unwrap();
        let long_path = fx.ws.resolve(&format!("d/{long}")).unwrap();
        fx.ws.write_atomic(&long_path, b"long").unwrap();
        let mut left = temp_files_in(&fx.root().join("d"));
        left.sort();
        assert_eq!(
            left,
            [
                format!(".f.txt.lantern-tmp-{alive}-99999"),
                format!(".f.txt.lantern-tmp-{dead}-x"),
                format!(".other.lantern-tmp-{dead}-0"),
            ]
        );
    }

    #[test]
    fn stale_temp_names_are_recognised_exactly() {
        assert_eq!(stale_temp_pid(b".a.rs.lantern-tmp-12-3", b"a.rs"), Some(12));
        assert_eq!(
            stale_temp_pid(b".a.lantern-tmp-12-3", b"a.rs"),
            Some(12),
            "shortened"
        );
        for other in [
            &b"a.rs.lantern-tmp-12-3"[..],
            b".a.rs.lantern-tmp-12",
            b".a.rs.lantern-tmp--3",
            b".b.rs.lantern-tmp-12-3",
            b"..lantern-tmp-12-3",
            b".a.rs.lantern-tmp-12-3-4",
        ] {
            assert_eq!(stale_temp_pid(other, b"a.rs"), None, "{other:?}");
        }
    }

    #[test]
    fn write_with_a_255_byte_name_uses_a_short_enough_temp_name() {
        let fx = Fixture::new();
        let name = "n".repeat(255);
        let path = fx.ws.resolve(&name).unwrap();
        fx.ws.write_atomic(&path, b"long").unwrap();
        assert_eq!(fs::read_to_string(fx.root().join(&name)).unwrap(), "long");
        assert!(temp_files_in(fx.root()).is_empty());
    }

    #[test]
    fn write_refuses_protected_paths_and_creates_nothing() {
        let fx = Fixture::new();
        fx.write(".git/config", "[core]");
        for raw in [
            ".git/config",
            "sub/.git/HEAD",
            ".lantern/x",
            ".git",
            ".GIT/config",
        ] {
            let path = fx.ws.resolve(raw).unwrap();
            let err = fx.ws.write_atomic(&path, b"x").unwrap_err();
            assert_eq!(err.kind, ErrorType::PermissionDenied, "{raw}");
            assert!(
                err.message.contains(".git") || err.message.contains(".lantern"),
                "the message names the rule: {err:?}"
            );
        }
        assert_eq!(
            fs::read_to_string(fx.root().join(".git/config")).unwrap(),
            "[core]"
        );
        assert!(!fx.root().join("sub").exists());
        assert!(!fx.root().join(".lantern").exists());
    }

    #[test]
    fn write_through_a_symlink_to_git_is_refused() {
        let fx = Fixture::new();
        fx.write(".git/config", "[core]");
        fx.link("gitlink", ".git");
        let path = fx.ws.resolve("gitlink/config").unwrap();
        assert_eq!(path.rel, ".git/config");
        assert!(fx.ws.write_atomic(&path, b"x").is_err());
        assert_eq!(
            fs::read_to_string(fx.root().join(".git/config")).unwrap(),
            "[core]"
        );
    }

    #[test]
    fn write_onto_a_directory_is_refused() {
        let fx = Fixture::new();
        fs::create_dir(fx.root().join("dir")).unwrap();
        let path = fx.ws.resolve("dir").unwrap();
        let err = fx.ws.write_atomic(&path, b"x").unwrap_err();
        assert_eq!(err.kind, ErrorType::ValidationFailed);
        assert!(err.message.contains("is a directory"), "{err:?}");
        let root = fx.ws.resolve(".").unwrap();
        assert_eq!(
            fx.ws.write_atomic(&root, b"x").unwrap_err().kind,
            ErrorType::ValidationFailed
        );
    }

    #[test]
    fn write_onto_a_symlink_to_outside_is_refused() {
        let fx = Fixture::new();
        fx.link("out.txt", fx.outside.join("secret.txt"));
        fx.assert_denied_without_leak(fx.ws.resolve("out.txt"));
        let link = hand_built(fx.root().join("out.txt"), "out.txt");
        fx.assert_denied_without_leak(fx.ws.write_atomic(&link, b"overwritten"));
        let outside = hand_built(fx.outside.join("secret.txt"), "secret.txt");
        fx.assert_denied_without_leak(fx.ws.write_atomic(&outside, b"overwritten"));
        let climbing = hand_built(fx.root().join("../outside/secret.txt"), "x");
        fx.assert_denied_without_leak(fx.ws.write_atomic(&climbing, b"overwritten"));
        fx.outside_untouched();
    }

    #[test]
    fn write_onto_a_fifo_is_refused() {
        let fx = Fixture::new();
        let fifo = fx.root().join("pipe");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, Mode::from_raw_mode(0o644)).unwrap();
        let path = fx.ws.resolve("pipe").unwrap();
        let err = fx.ws.write_atomic(&path, b"x").unwrap_err();
        assert_eq!(err.kind, ErrorType::PermissionDenied);
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    }

    #[test]
    fn concurrent_writes_and_reads_never_see_a_torn_or_empty_file() {
        let fx = Fixture::new();
        fx.write("shared.bin", &"a".repeat(64 * 1024));
        let path = fx.ws.resolve("shared.bin").unwrap();
        std::thread::scope(|scope| {
            for writer in 0..3u8 {
                let (ws, path) = (&fx.ws, &path);
                scope.spawn(move || {
                    for round in 0..20u8 {
                        let byte = b'b' + (writer * 20 + round) % 24;
                        ws.write_atomic(path, &vec![byte; 64 * 1024]).unwrap();
                    }
                });
            }
            let (ws, path) = (&fx.ws, &path);
            scope.spawn(move || {
                for _ in 0..100 {
                    let mut content = Vec::new();
                    let mut file = ws.open_read(path).unwrap();
                    std::io::Read::read_to_end(&mut file, &mut content).unwrap();
                    assert_eq!(content.len(), 64 * 1024);
                    assert!(content.iter().all(|b| *b == content[0]), "torn content");
                }
            });
        });
        assert!(temp_files_in(fx.root()).is_empty());
    }

    // ---- remove_file ----

    #[test]
    fn remove_file_removes_a_file() {
        let fx = Fixture::new();
        fx.write("a/gone.txt", "x");
        let path = fx.ws.resolve("a/gone.txt").unwrap();
        fx.ws.remove_file(&path).unwrap();
        assert!(!fx.root().join("a/gone.txt").exists());
        assert!(fx.root().join("a").is_dir());
        assert_eq!(
            fx.ws.remove_file(&path).unwrap_err().kind,
            ErrorType::NotFound
        );
    }

    #[test]
    fn remove_file_refuses_protected_paths_directories_and_outside() {
        let fx = Fixture::new();
        fx.write(".git/HEAD", "ref: refs/heads/main");
        fx.write(".lantern/state.json", "{}");
        for raw in [".git/HEAD", ".lantern/state.json"] {
            let path = fx.ws.resolve(raw).unwrap();
            assert_eq!(
                fx.ws.remove_file(&path).unwrap_err().kind,
                ErrorType::PermissionDenied,
                "{raw}"
            );
        }
        assert!(fx.root().join(".git/HEAD").exists());
        assert!(fx.root().join(".lantern/state.json").exists());
        fs::create_dir(fx.root().join("dir")).unwrap();
        let dir = fx.ws.resolve("dir").unwrap();
        assert_eq!(
            fx.ws.remove_file(&dir).unwrap_err().kind,
            ErrorType::ValidationFailed
        );
        let outside = hand_built(fx.outside.join("secret.txt"), "secret.txt");
        fx.assert_denied_without_leak(fx.ws.remove_file(&outside));
        fx.outside_untouched();
    }

    // ---- pure helpers ----

    #[test]
    fn protected_reason_cases() {
        for rel in [
            ".git",
            ".git/config",
            "sub/.git/HEAD",
            "a/b/.git",
            "./.git/x",
            ".Git/config",
            ".lantern",
            ".lantern/x",
            ".lantern/deep/y",
        ] {
            assert!(protected_reason(rel).is_some(), "{rel} should be protected");
        }
        for rel in [
            ".",
            "src/main.rs",
            "a.git/x",
            ".gitignore",
            ".github/workflows/ci.yml",
            "x.git",
            "sub/.lantern/x",
            ".lantern-notes",
        ] {
            assert_eq!(protected_reason(rel), None, "{rel} should not be protected");
        }
        assert!(protected_reason("sub/.git/HEAD").unwrap().contains(".git"));
        assert!(protected_reason(".lantern/x").unwrap().contains(".lantern"));
    }

    #[test]
    fn relative_cases() {
        let fx = Fixture::new();
        assert_eq!(fx.ws.relative(fx.root()).as_deref(), Some("."));
        assert_eq!(
            fx.ws.relative(&fx.root().join("a/b.txt")).as_deref(),
            Some("a/b.txt")
        );
        assert_eq!(fx.ws.relative(&fx.outside), None);
        assert_eq!(fx.ws.relative(&fx.root().join("../outside")), None);
        assert_eq!(fx.ws.relative(Path::new("a/b")), None);
        let sibling = PathBuf::from(format!("{}-sibling/x", fx.root().display()));
        assert_eq!(fx.ws.relative(&sibling), None);
    }

    #[test]
    fn messages_show_control_characters_escaped() {
        let fx = Fixture::new();
        let err = fx.ws.resolve("../a\nb").unwrap_err();
        assert!(err.message.ends_with("../a\\nb"), "{err:?}");
    }
}
