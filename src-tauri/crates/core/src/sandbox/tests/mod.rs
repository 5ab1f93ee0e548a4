//! The sandbox's tests, by what they exercise; shared fixtures and helpers here.

mod read;
mod resolve;
mod write;

use super::write::stale_temp_pid;
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
        ".hg/hgrc",
        "sub/.svn/entries",
        ".jj/repo/store",
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
        ".hgignore",
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
