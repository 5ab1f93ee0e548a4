//! Opening for reading, and paths swapped for links after they were resolved.

use super::*;
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
