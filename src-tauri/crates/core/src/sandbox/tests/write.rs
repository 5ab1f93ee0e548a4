//! write_atomic() and remove_file().

use super::*;
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
    // Sorted as text, the names' order depends on the two pids: sort the expected ones too.
    let mut kept = [
        format!(".f.txt.lantern-tmp-{alive}-99999"),
        format!(".f.txt.lantern-tmp-{dead}-x"),
        format!(".other.lantern-tmp-{dead}-0"),
    ];
    kept.sort();
    assert_eq!(left, kept);
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
