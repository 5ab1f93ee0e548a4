//! resolve(): ordinary paths, and every way out of the workspace refused.

use super::*;
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
