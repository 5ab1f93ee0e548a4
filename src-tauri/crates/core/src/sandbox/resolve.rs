//! Resolving a model-supplied path: lexical `..` handling, links followed one component at a
//! time the way the kernel does, the result confined to the workspace.

use super::*;

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

impl Workspace {
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
}
