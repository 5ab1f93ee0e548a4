//! Hostile paths and links: traversal in every spelling, absolute paths, NUL bytes, symlinks and their loops and swaps, hard links.

use super::*;

#[test]
fn traversal_in_every_spelling_is_refused_by_every_path_tool() {
    let mut fx = Fx::new();
    fx.write("a/b/c/keep.txt", INSIDE);
    for raw in [
        "..",
        "../",
        "../outside/secret.txt",
        "./../outside/secret.txt",
        "a/../../outside/secret.txt",
        "a/./../../outside/secret.txt",
        "a//..//..//outside/secret.txt",
        "../ws/../outside/secret.txt",
        "a/b/c/../../../../outside/secret.txt",
        "../../../../../../../../../../etc/passwd",
        "../outside/sub/new.txt",
    ] {
        for (tool, args) in [
            ("read_file", read(raw)),
            ("write_file", write(raw)),
            ("list_files", list(raw)),
            ("get_diagnostics", json!({ "file": raw })),
        ] {
            let result = fx.call(tool, args);
            assert_error(
                &result,
                ErrorType::PermissionDenied,
                &format!("{tool} {raw}"),
            );
        }
    }
    // search_code has no path, only a glob, matched below the root: a climbing glob finds
    // nothing.
    for glob in ["../outside/*", "../**", "/**/secret.txt"] {
        let data = assert_ok(
            &fx.call(
                "search_code",
                json!({"query": "SECRET", "options": {"glob": glob}}),
            ),
            glob,
        );
        assert_eq!(data["count"], 0, "{glob}");
    }
    fx.assert_outside_untouched();
}

#[test]
fn encoded_backslashed_and_look_alike_dots_are_literal_names_inside() {
    let mut fx = Fx::new();
    for raw in [
        "%2e%2e/outside/secret.txt",
        "%2e%2e%2foutside%2fsecret.txt",
        "..%2foutside%2fsecret.txt",
        "..\\outside\\secret.txt",
        "..%5coutside%5csecret.txt",
        "\u{2025}/outside/secret.txt",
        "\u{ff0e}\u{ff0e}/outside/secret.txt",
        "\u{2024}\u{2024}/outside/secret.txt",
        "..\u{200b}/outside/secret.txt",
        "..\u{2215}outside\u{2215}secret.txt",
        "...\u{2f}outside/secret.txt",
        "~/secret.txt",
        "$HOME/secret.txt",
        ". ./outside/secret.txt",
    ] {
        assert_error(&fx.call("read_file", read(raw)), ErrorType::NotFound, raw);
        // A write creates the oddly named file inside the workspace, nowhere else.
        let data = assert_ok(&fx.call("write_file", write(raw)), raw);
        let rel = data["path"].as_str().unwrap();
        assert!(fx.root.join(rel).is_file(), "{raw} → {rel}");
        assert_eq!(
            std::fs::read_to_string(fx.root.join(rel)).unwrap(),
            "overwritten by the model"
        );
    }
    fx.assert_outside_untouched();
}

#[test]
fn absolute_paths_outside_are_refused() {
    let mut fx = Fx::new();
    fx.write("inside.txt", INSIDE);
    let outside = fx.outside.display().to_string();
    let root = fx.root.display().to_string();
    for raw in [
        "/etc/passwd".to_string(),
        format!("{outside}/secret.txt"),
        "//etc/passwd".to_string(),
        "/proc/self/root/etc/passwd".to_string(),
        "/proc/self/cwd/Cargo.toml".to_string(),
        "/proc/self/fd/0".to_string(),
        "/dev/zero".to_string(),
        "/".to_string(),
        format!("{root}/../outside/secret.txt"),
        format!("{root}-sibling/x.txt"),
    ] {
        for (tool, args) in [
            ("read_file", read(&raw)),
            ("write_file", write(&raw)),
            ("list_files", list(&raw)),
        ] {
            assert_error(
                &fx.call(tool, args),
                ErrorType::PermissionDenied,
                &format!("{tool} {raw}"),
            );
        }
    }
    // The workspace's own absolute path is fine.
    let data = assert_ok(
        &fx.call("read_file", read(&format!("{root}/inside.txt"))),
        "abs inside",
    );
    assert_eq!(data["content"], INSIDE);
    fx.assert_outside_untouched();
}

#[test]
fn nul_bytes_and_over_long_names_are_refused_before_any_lookup() {
    let mut fx = Fx::new();
    for raw in [
        "a\0b.txt".to_string(),
        "\0".to_string(),
        "a/".repeat(2100),
        format!("dir/{}", "n".repeat(256)),
    ] {
        for (tool, args) in [("read_file", read(&raw)), ("write_file", write(&raw))] {
            assert_error(
                &fx.call(tool, args),
                ErrorType::PermissionDenied,
                &format!("{tool} {:.40}", raw),
            );
        }
    }
    assert_eq!(std::fs::read_dir(&fx.root).unwrap().count(), 0);
    fx.assert_outside_untouched();
}

// ---- symbolic links ----

#[test]
fn symlinks_to_outside_are_refused_at_every_component() {
    let mut fx = Fx::new();
    let outside = fx.outside.clone();
    fx.link("file-link", outside.join("secret.txt"));
    fx.link("out", &outside);
    fx.link("a/out", &outside);
    fx.link("a/b/out", outside.join("sub"));
    fx.link("a/b/up", "../../../outside/secret.txt");
    fx.link("a/b/updir", "../../../outside");
    fx.link("chain1", "chain2");
    fx.link("chain2", "out/secret.txt");
    fx.link("ghost", "../outside/new.txt");
    fx.link("ghost-dir", "../outside/new-dir");
    fx.link("rootlink", "/");
    fx.link("proclink", "/proc/self/root");
    fx.link("back-in-then-out", fx.root.join("out"));
    for (tool, args) in [
        ("read_file", read("file-link")),
        ("write_file", write("file-link")),
        ("read_file", read("out/secret.txt")),
        ("write_file", write("out/secret.txt")),
        ("write_file", write("out/brand-new.txt")),
        ("list_files", list("out")),
        ("read_file", read("a/out/sub/f.txt")),
        ("write_file", write("a/out/sub/f.txt")),
        ("list_files", list("a/b/out")),
        ("read_file", read("a/b/up")),
        ("write_file", write("a/b/up")),
        ("read_file", read("a/b/updir/secret.txt")),
        ("write_file", write("a/b/updir/sub/new.txt")),
        ("read_file", read("chain1")),
        ("write_file", write("chain1")),
        ("write_file", write("ghost")),
        ("write_file", write("ghost-dir/x.txt")),
        ("read_file", read("rootlink/etc/passwd")),
        ("list_files", list("rootlink")),
        ("read_file", read("proclink/etc/passwd")),
        ("read_file", read("back-in-then-out/secret.txt")),
        ("list_files", list("back-in-then-out")),
    ] {
        let case = format!("{tool} {args}");
        assert_error(&fx.call(tool, args), ErrorType::PermissionDenied, &case);
    }
    // The walk never enters a link: the whole workspace lists, and searches, as empty of
    // anything from outside.
    let data = assert_ok(&fx.call("list_files", json!({})), "list all");
    assert_eq!(data["files"], json!([]));
    let data = assert_ok(
        &fx.call("search_code", json!({"query": "SECRET-OUTSIDE"})),
        "search",
    );
    assert_eq!(data["count"], 0);
    assert!(!fx.outside.join("new.txt").exists() && !fx.outside.join("new-dir").exists());
    fx.assert_outside_untouched();
}

#[test]
fn symlink_loops_end_in_a_clean_refusal() {
    let mut fx = Fx::new();
    fx.write("f.txt", INSIDE);
    fx.link("loop-a", "loop-b");
    fx.link("loop-b", "loop-a");
    fx.link("self", "self");
    fx.link("here", ".");
    let deep = format!("{}f.txt", "here/".repeat(41));
    for (tool, args) in [
        ("read_file", read("loop-a")),
        ("write_file", write("loop-b/x.txt")),
        ("read_file", read("self")),
        ("list_files", list("self")),
        ("read_file", read(&deep)),
    ] {
        let case = format!("{tool} {:.60}", args.to_string());
        assert_error(&fx.call(tool, args), ErrorType::PermissionDenied, &case);
    }
    // Forty links are within the kernel's limit, and a link to the root stays inside.
    let data = assert_ok(
        &fx.call("read_file", read(&format!("{}f.txt", "here/".repeat(40)))),
        "40 links",
    );
    assert_eq!(data["content"], INSIDE);
    let data = assert_ok(&fx.call("list_files", json!({})), "list with loops");
    assert_eq!(data["files"], json!(["f.txt"]));
    fx.assert_outside_untouched();
}

#[test]
fn a_symlink_swapped_in_between_check_and_use_never_lets_a_byte_through() {
    let mut fx = Fx::new();
    fx.write("d/f.txt", INSIDE);
    fx.link("swap", fx.outside.join("sub"));
    // A name only the outside folder has: listing it would leak what is outside.
    std::fs::write(fx.outside.join("sub/only-outside.txt"), SECRET).unwrap();
    fx.before = snapshot(&fx.outside);
    let root = fx.root.clone();
    let stop = AtomicBool::new(false);
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    std::thread::scope(|scope| {
        // Exchanges the folder `d` and the link `swap` (to outside/sub, which also holds an
        // f.txt) atomically, over and over: `d` is always one or the other.
        scope.spawn(|| {
            let dir = std::fs::File::open(&root).unwrap();
            while !stop.load(Ordering::Relaxed) {
                rustix::fs::renameat_with(
                    &dir,
                    "d",
                    &dir,
                    "swap",
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .unwrap();
            }
        });
        // Stops the swapping however this thread leaves the scope, a failed assertion too,
        // so that a failure is reported instead of waiting for the swapper forever.
        let _stop = StopOnDrop(&stop);
        for round in 0..150 {
            let calls = [
                ("read_file", read("d/f.txt")),
                (
                    "write_file",
                    json!({"path": "d/f.txt", "content": format!("round {round}")}),
                ),
                (
                    "write_file",
                    json!({"path": format!("d/new-{round}.txt"), "content": "new"}),
                ),
                ("list_files", list("d")),
                ("search_code", json!({"query": "SECRET-OUTSIDE"})),
            ];
            for (tool, args) in calls {
                let result = fx.call(tool, args);
                let key = if result.success {
                    format!("{tool} ok")
                } else {
                    format!("{tool} {}", result.error_type)
                };
                *outcomes.entry(key).or_default() += 1;
                if let Some(data) = &result.data {
                    if tool == "list_files" {
                        for file in data["files"].as_array().unwrap() {
                            let name = file.as_str().unwrap();
                            assert!(
                                name == "d/f.txt" || name.starts_with("d/new-"),
                                "list_files saw {name} through a swapped-in link"
                            );
                        }
                    }
                }
            }
        }
    });
    // Every refusal was the sandbox's; nothing else went wrong.
    for (outcome, count) in &outcomes {
        assert!(
            outcome.ends_with(" ok") || outcome.ends_with(" permission_denied"),
            "{outcome} ×{count} in {outcomes:?}"
        );
    }
    fx.assert_outside_untouched();
}

struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

// ---- hard links, special files ----

#[test]
fn a_hard_link_to_an_outside_file_reads_through_but_a_write_replaces_only_the_link() {
    let base = tempfile::tempdir().unwrap();
    let ws_dir = base.path().join("ws");
    std::fs::create_dir(&ws_dir).unwrap();
    let outside_file = base.path().join("outside.txt");
    std::fs::write(&outside_file, "outside, hard-linked").unwrap();
    std::fs::hard_link(&outside_file, ws_dir.join("linked.txt")).unwrap();
    let mut session = Session::new(
        Workspace::open(&ws_dir).unwrap(),
        SessionOptions::in_memory(Toolbox::standard().into()),
    );
    let mut yes = FixedAnswer(Answer::AllowOnce);
    // Not detectable: to the kernel, the link *is* a file of the workspace.
    let read = session
        .run_call("read_file", read("linked.txt"), &mut yes, &mut |_| {})
        .into_result();
    assert_eq!(read.data.unwrap()["content"], "outside, hard-linked");
    // The write renames a new file over the link: the outside file keeps its content.
    let written = session
        .run_call("write_file", write("linked.txt"), &mut yes, &mut |_| {})
        .into_result();
    assert!(written.success, "{written:?}");
    assert_eq!(
        std::fs::read_to_string(&outside_file).unwrap(),
        "outside, hard-linked"
    );
    assert_eq!(
        std::fs::read_to_string(ws_dir.join("linked.txt")).unwrap(),
        "overwritten by the model"
    );
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&outside_file).unwrap().nlink(), 1);
}
