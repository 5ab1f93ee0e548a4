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

// ---- resolve: ordinary paths ----

#[test]
fn resolves_relative_path() {
    let fx = Fixture::new();
    fx.write("src/main.rs", "fn main() {}");
    let path = fx.ws.resolve("src/main.rs").unwrap();
    assert_eq!(path.abs(), fx.root().join("src/main.rs"));
    assert_eq!(path.rel(), "src/main.rs");
    assert!(path.exists());
    assert_eq!(fx.ws.resolve("./src//main.rs/").unwrap(), path);
}

#[test]
fn resolves_absolute_path_inside() {
    let fx = Fixture::new();
    fx.write("src/main.rs", "");
    let raw = format!("{}/src/main.rs", fx.root().display());
    let path = fx.ws.resolve(&raw).unwrap();
    assert_eq!(path.rel(), "src/main.rs");
    assert!(path.exists());
    let root = fx.ws.resolve(&fx.root().display().to_string()).unwrap();
    assert_eq!(root.rel(), ".");
}

#[test]
fn dot_and_empty_are_the_root() {
    let fx = Fixture::new();
    for raw in ["", ".", "./", "./.", "a/.."] {
        let path = fx.ws.resolve(raw).unwrap();
        assert_eq!(path.abs(), fx.root(), "{raw:?}");
        assert_eq!(path.rel(), ".", "{raw:?}");
        assert!(path.exists());
    }
}

#[test]
fn new_file_under_missing_folders() {
    let fx = Fixture::new();
    fx.write("a/keep", "");
    let path = fx.ws.resolve("a/b/c/new.txt").unwrap();
    assert_eq!(path.abs(), fx.root().join("a/b/c/new.txt"));
    assert_eq!(path.rel(), "a/b/c/new.txt");
    assert!(!path.exists());
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
    assert!(!path.exists());
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
    assert_eq!(path.rel(), "build/v2/out.txt");
    assert!(!path.exists());
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
        assert_eq!(path.abs(), fx.root().join("real/file.txt"), "{raw}");
        assert_eq!(path.rel(), "real/file.txt", "{raw}");
        assert!(path.exists());
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
    assert!(path.exists());
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
    assert!(!path.exists());
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
    assert_eq!(path.rel(), ".git/config");
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
