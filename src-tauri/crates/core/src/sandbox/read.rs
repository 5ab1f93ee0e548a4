//! Opening files for reading, checked at use time: `O_PATH` without following links, a
//! regular file only, its real path asked of the kernel; and `openat2` beneath the root for
//! the search's many opens.

use super::*;

/// Only regular files are read, replaced or removed.
pub(super) fn require_regular_file(file_type: FileType, rel: &str) -> Result<(), ToolError> {
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

impl Workspace {
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
}
