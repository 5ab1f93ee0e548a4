//! Writing and removing, relative to folder handles opened one component at a time without
//! following links: atomic replacement through a temporary file, crash leftovers cleaned.

use super::read::require_regular_file;
use super::*;

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
pub(super) fn stale_temp_pid(entry: &[u8], name: &[u8]) -> Option<i32> {
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

impl Workspace {
    /// Replaces (or creates) a file atomically with `bytes`, creating missing parent folders.
    ///
    /// An existing file keeps its permission bits (without setuid/setgid/sticky); a new one
    /// gets 0o644 minus the umask. The target must be a regular file or not exist.
    ///
    /// Not public, and a disallowed method for clippy (`clippy.toml`) everywhere but the few
    /// writers that mean it: a write that skips its checkpoint cannot be undone, so a tool
    /// writes through [`ToolContext::write`](crate::tools::ToolContext::write), undo restores
    /// through here and records itself, and the user's own edits go through
    /// [`Workspace::save_user_edit`].
    pub(crate) fn write_atomic(
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

    /// Saves the user's own edit (the editor's Save), atomically, like any write. Not
    /// checkpointed: undo is for the model's writes, and refuses to undo one the user has
    /// edited since, so the user's saves never need undoing by Lantern.
    #[allow(clippy::disallowed_methods)]
    pub fn save_user_edit(
        &self,
        path: &ResolvedPath,
        bytes: &[u8],
    ) -> Result<WriteOutcome, ToolError> {
        self.write_atomic(path, bytes)
    }

    /// A handle on a folder of the workspace, opened by the same symlink-refusing walk from
    /// the root as writes use. Reading the folder through the handle (`/proc/self/fd/N`)
    /// reads that very folder, even if its path is swapped for a link afterwards.
    pub fn open_folder_handle(&self, path: &ResolvedPath) -> Result<OwnedFd, ToolError> {
        let parts = self.confined_parts(path)?;
        let (dir, _) = self.open_folder(&parts, false)?;
        Ok(dir)
    }

    /// Removes a regular file inside the workspace: undo's way of taking back a file a write
    /// created. Restricted like [`Workspace::write_atomic`], for the same reason.
    pub(crate) fn remove_file(&self, path: &ResolvedPath) -> Result<(), ToolError> {
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
    pub(super) fn real_rel_of(&self, handle: &OwnedFd, rel: &str) -> Result<String, ToolError> {
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
