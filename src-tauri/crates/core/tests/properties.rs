//! Property tests of the two invariants everything else stands on:
//!
//! * **The turn parser never fails, and chunking never changes a turn.** Whatever the text and
//!   however it is cut into streamed pieces, `TurnParser` ends with exactly what `parse` makes
//!   of the whole; the user text it streams is a prefix of the final text; once it says a call
//!   is complete it stays complete, and the text seen up to then already holds that call (so
//!   stopping generation there loses nothing).
//! * **A resolved path is always inside the workspace.** Random paths built from `..`, `.`,
//!   `/`, names and symbolic links (some leading outside, some looping) either are refused or
//!   resolve to a path whose real location is inside the root.
//!
//! `PROPTEST_CASES` raises the number of cases for a longer run.

use lantern_core::protocol::{parse, Turn, TurnParser};
use lantern_core::sandbox::Workspace;
use proptest::prelude::*;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Pieces that make up protocol-shaped text: openers and closers of every dialect, JSON
/// fragments, fences, and plain text with some multi-byte characters.
const PIECES: &[&str] = &[
    "<TOOL_CALL>",
    "</TOOL_CALL>",
    "<TOOL_CALL",
    "<tool_call>",
    "</tool_call>",
    "<tool>",
    "</tool>",
    "<function=",
    "read_file>",
    "</function>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "```json\n",
    "```",
    "{",
    "}",
    "[",
    "]",
    "\"tool\"",
    "\"name\"",
    "\"args\"",
    "\"arguments\"",
    "\"read_file\"",
    "\"path\"",
    "\"a.txt\"",
    ":",
    ",",
    "\"",
    "\\",
    "\\\"",
    " ",
    "\n",
    "<",
    ">",
    "/",
    "Let me look. ",
    "héllo ",
    "日本",
    "🦀",
    "null",
    "42",
];

fn structured_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..40).prop_map(|pieces| pieces.concat())
}

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => structured_text(),
        1 => any::<String>(),
        1 => (structured_text(), any::<String>(), structured_text())
            .prop_map(|(a, b, c)| format!("{a}{b}{c}")),
    ]
}

/// Cuts `text` at the given fractions of its length (moved back to char boundaries).
fn chunk(text: &str, cuts: &[f64]) -> Vec<String> {
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|f| {
            let mut at = ((text.len() as f64) * f) as usize;
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            at
        })
        .collect();
    points.push(0);
    points.push(text.len());
    points.sort_unstable();
    points.dedup();
    points
        .windows(2)
        .map(|w| text[w[0]..w[1]].to_string())
        .collect()
}

/// Streams the chunks and checks the streaming invariants on the way; returns the final turn.
fn stream(chunks: &[String], whole: &Turn) -> Result<Turn, TestCaseError> {
    let mut parser = TurnParser::new();
    let mut shown = String::new();
    let mut seen = String::new();
    let mut complete = false;
    for piece in chunks {
        shown.push_str(&parser.push(piece));
        seen.push_str(piece);
        if complete {
            prop_assert!(parser.call_complete(), "call_complete went back to false");
        } else if parser.call_complete() {
            complete = true;
            // Generation stops here: what was seen must already give the final call.
            prop_assert_eq!(&parse(&seen).call, &whole.call, "call at completion");
        }
    }
    if whole.call.is_some() {
        prop_assert!(parser.call_complete(), "a call was never reported complete");
    }
    prop_assert!(
        whole.text.starts_with(shown.trim()),
        "streamed {:?} is not a prefix of {:?}",
        shown,
        whole.text
    );
    Ok(parser.finish())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_parser_finds_the_same_turn_however_the_text_is_chunked(
        text in any_text(),
        first in prop::collection::vec(0.0..1.0f64, 0..12),
        second in prop::collection::vec(0.0..1.0f64, 0..40),
    ) {
        let whole = parse(&text);
        prop_assert_eq!(&whole.raw, &text);
        for cuts in [&first, &second] {
            let turn = stream(&chunk(&text, cuts), &whole)?;
            prop_assert_eq!(&turn, &whole);
        }
        // One character at a time, the way a backend streams tokens at worst.
        let by_char: Vec<String> = text.chars().map(String::from).collect();
        prop_assert_eq!(&stream(&by_char, &whole)?, &whole);
    }

    #[test]
    fn a_found_call_sits_inside_the_text_and_is_its_own_raw_text(text in any_text()) {
        let turn = parse(&text);
        if let Some(call) = &turn.call {
            prop_assert!(call.span.start <= call.span.end && call.span.end <= text.len());
            prop_assert_eq!(&text[call.span.start..call.span.end], call.raw.as_str());
            prop_assert!(call.args.is_object(), "args {:?}", call.args);
        }
        for problem in &turn.problems {
            if let Some(span) = problem.span {
                prop_assert!(span.start <= span.end && span.end <= text.len());
            }
        }
    }
}

// ---- the resolver ----

/// A workspace with folders, files and links inside, next to an outside folder, built once.
struct Tree {
    _base: tempfile::TempDir,
    ws: Workspace,
    outside: PathBuf,
}

fn tree() -> &'static Tree {
    static TREE: OnceLock<Tree> = OnceLock::new();
    TREE.get_or_init(|| {
        let base = tempfile::tempdir().unwrap();
        let root = base.path().join("ws");
        let outside = base.path().join("outside");
        std::fs::create_dir_all(outside.join("deep")).unwrap();
        std::fs::write(outside.join("secret.txt"), "outside").unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/f.txt"), "inside").unwrap();
        std::fs::write(root.join("a/b/g.txt"), "inside").unwrap();
        for (link, target) in [
            ("in", PathBuf::from("a")),
            ("a/up", PathBuf::from("..")),
            ("a/b/top", PathBuf::from("../..")),
            ("a/b/sib", PathBuf::from("../f.txt")),
            ("out", outside.clone()),
            ("a/outfile", outside.join("secret.txt")),
            ("a/b/climb", PathBuf::from("../../../outside")),
            ("a/back", PathBuf::from("../../ws/a")),
            ("loop", PathBuf::from("loop")),
            ("ping", PathBuf::from("pong")),
            ("pong", PathBuf::from("ping")),
            ("dangling", PathBuf::from("a/missing/deeper")),
            ("dangling-out", PathBuf::from("../outside/none")),
            ("rootlink", PathBuf::from("/")),
        ] {
            symlink(target, root.join(link)).unwrap();
        }
        let ws = Workspace::open(&root).unwrap();
        let outside = outside.canonicalize().unwrap();
        Tree {
            _base: base,
            ws,
            outside,
        }
    })
}

const COMPONENTS: &[&str] = &[
    "..",
    ".",
    "",
    "a",
    "b",
    "f.txt",
    "g.txt",
    "in",
    "up",
    "top",
    "sib",
    "out",
    "outfile",
    "climb",
    "back",
    "loop",
    "ping",
    "dangling",
    "dangling-out",
    "rootlink",
    "new",
    "missing",
    "secret.txt",
    "deep",
    "ws",
    "outside",
];

fn raw_path() -> impl Strategy<Value = String> {
    (
        prop_oneof![Just(""), Just("/"), Just("ROOT/"), Just("./")],
        prop::collection::vec(prop::sample::select(COMPONENTS), 0..10),
        any::<bool>(),
    )
        .prop_map(|(lead, parts, trailing)| {
            let lead = if lead == "ROOT/" {
                format!("{}/", tree().ws.root().display())
            } else {
                lead.to_string()
            };
            let mut path = format!("{lead}{}", parts.join("/"));
            if trailing {
                path.push('/');
            }
            path
        })
}

/// The real location of `path`: its deepest existing ancestor canonicalised, with the rest
/// appended.
fn real_location(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    while std::fs::symlink_metadata(&existing).is_err() {
        rest.push(existing.file_name().unwrap().to_os_string());
        existing.pop();
    }
    let mut real = existing.canonicalize().unwrap();
    for name in rest.into_iter().rev() {
        real.push(name);
    }
    real
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_resolved_path_is_always_inside_the_root(raw in raw_path()) {
        let tree = tree();
        let root = tree.ws.root();
        if let Ok(resolved) = tree.ws.resolve(&raw) {
            prop_assert!(resolved.abs().starts_with(root), "{raw:?} → {:?}", resolved.abs());
            let real = real_location(resolved.abs());
            prop_assert!(real.starts_with(root), "{raw:?} really is {real:?}");
            prop_assert!(!real.starts_with(&tree.outside));
            prop_assert_eq!(tree.ws.relative(resolved.abs()), Some(resolved.rel().to_string()));
            if resolved.exists() {
                // Existing paths come back canonical: no link left in them.
                prop_assert_eq!(&real, resolved.abs());
                if let Ok(mut file) = tree.ws.open_read(&resolved) {
                    let mut text = String::new();
                    std::io::Read::read_to_string(&mut file, &mut text).unwrap();
                    prop_assert_eq!(text, "inside");
                }
            }
        }
    }
}
