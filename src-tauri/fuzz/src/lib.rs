//! The bodies of the fuzz targets: each takes the fuzzer's bytes and panics when an invariant
//! breaks.

use lantern_core::protocol::{parse, Turn, TurnParser};
use lantern_core::sandbox::Workspace;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// `parse` of arbitrary text: the turn keeps the text, and every span lies inside it.
pub fn parser_whole(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let turn = parse(&text);
    check_turn(&text, &turn);
}

/// The first byte picks how the rest is cut into pieces (sizes cycle through the next bytes);
/// streaming the pieces must give exactly the whole text's turn.
pub fn parser_streamed(data: &[u8]) {
    let Some((&count, rest)) = data.split_first() else {
        return;
    };
    let sizes_len = (count as usize % 8).min(rest.len());
    let (sizes, body) = rest.split_at(sizes_len);
    let text = String::from_utf8_lossy(body);
    let whole = parse(&text);
    check_turn(&text, &whole);

    let mut parser = TurnParser::new();
    let mut shown = String::new();
    let mut seen = String::new();
    let mut complete = false;
    let mut remaining: &str = &text;
    let mut size_index = 0;
    while !remaining.is_empty() {
        let size = sizes
            .get(size_index % sizes.len().max(1))
            .map_or(1, |s| *s as usize % 64 + 1);
        size_index += 1;
        let mut cut = size.min(remaining.len());
        while !remaining.is_char_boundary(cut) {
            cut += 1;
        }
        let (piece, after) = remaining.split_at(cut);
        remaining = after;
        shown.push_str(&parser.push(piece));
        seen.push_str(piece);
        if complete {
            assert!(parser.call_complete(), "call_complete went back to false");
        } else if parser.call_complete() {
            complete = true;
            assert_eq!(
                parse(&seen).call,
                whole.call,
                "the call changed after completion"
            );
        }
    }
    assert!(
        whole.text.starts_with(shown.trim()),
        "streamed text {shown:?} is not a prefix of {:?}",
        whole.text
    );
    assert_eq!(parser.finish(), whole, "streaming changed the turn");
}

fn check_turn(text: &str, turn: &Turn) {
    assert_eq!(turn.raw, text);
    if let Some(call) = &turn.call {
        assert!(call.span.start <= call.span.end && call.span.end <= text.len());
        assert_eq!(&text[call.span.start..call.span.end], call.raw);
        assert!(call.args.is_object());
    }
    for problem in &turn.problems {
        if let Some(span) = problem.span {
            assert!(span.start <= span.end && span.end <= text.len());
        }
    }
}

/// A workspace with links inside, to outside, and in loops, built once per process.
struct Tree {
    _base: tempfile::TempDir,
    ws: Workspace,
}

fn tree() -> &'static Tree {
    static TREE: OnceLock<Tree> = OnceLock::new();
    TREE.get_or_init(|| {
        let base = tempfile::tempdir().expect("a temporary folder");
        let root = base.path().join("ws");
        let outside = base.path().join("outside");
        std::fs::create_dir_all(outside.join("deep")).unwrap();
        std::fs::write(outside.join("secret.txt"), "outside").unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/f.txt"), "inside").unwrap();
        for (link, target) in [
            ("in", PathBuf::from("a")),
            ("a/up", PathBuf::from("..")),
            ("a/b/top", PathBuf::from("../..")),
            ("out", outside.clone()),
            ("a/outfile", outside.join("secret.txt")),
            ("a/b/climb", PathBuf::from("../../../outside")),
            ("a/back", PathBuf::from("../../ws/a")),
            ("loop", PathBuf::from("loop")),
            ("ping", PathBuf::from("pong")),
            ("pong", PathBuf::from("ping")),
            ("rootlink", PathBuf::from("/")),
        ] {
            symlink(target, root.join(link)).unwrap();
        }
        let ws = Workspace::open(&root).unwrap();
        Tree { _base: base, ws }
    })
}

/// Names the input's bytes pick from, so that random input reaches the links; bytes outside
/// the table are taken as they are.
const NAMES: &[&str] = &[
    "..",
    ".",
    "a",
    "b",
    "f.txt",
    "in",
    "up",
    "top",
    "out",
    "outfile",
    "climb",
    "back",
    "loop",
    "ping",
    "rootlink",
    "new",
    "ws",
    "outside",
    "secret.txt",
];

/// Resolves the input (as text, or as a sequence of names when it starts with 0xff): a
/// resolved path lies inside the root, really as well as lexically.
pub fn path_resolver(data: &[u8]) {
    let tree = tree();
    let raw = match data.split_first() {
        Some((0xff, names)) => names
            .iter()
            .map(|b| {
                NAMES
                    .get(*b as usize % (NAMES.len() + 1))
                    .copied()
                    .unwrap_or("")
            })
            .collect::<Vec<_>>()
            .join("/"),
        _ => String::from_utf8_lossy(data).into_owned(),
    };
    let root = tree.ws.root();
    let Ok(resolved) = tree.ws.resolve(&raw) else {
        return;
    };
    assert!(
        resolved.abs().starts_with(root),
        "{raw:?} → {:?}",
        resolved.abs()
    );
    let real = real_location(resolved.abs());
    assert!(real.starts_with(root), "{raw:?} really is {real:?}");
    assert_eq!(
        tree.ws.relative(resolved.abs()),
        Some(resolved.rel().to_string())
    );
}

/// The deepest existing ancestor of `path`, canonicalised, with the rest appended.
fn real_location(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    while std::fs::symlink_metadata(&existing).is_err() {
        match existing.file_name() {
            Some(name) => rest.push(name.to_os_string()),
            None => break,
        }
        existing.pop();
    }
    let mut real = existing.canonicalize().unwrap_or(existing);
    for name in rest.into_iter().rev() {
        real.push(name);
    }
    real
}
