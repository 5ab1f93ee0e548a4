use super::*;
use crate::error::ErrorType;
use crate::paths::sha256_hex;
use std::collections::HashSet;
use std::fs::File;
use std::io::Write;
use std::time::SystemTime;
use tempfile::TempDir;

/// A workspace and a data folder, side by side.
struct Fixture {
    _base: TempDir,
    ws: Workspace,
    data: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let base = tempfile::tempdir().unwrap();
        std::fs::create_dir(base.path().join("ws")).unwrap();
        let ws = Workspace::open(base.path().join("ws")).unwrap();
        let data = base.path().join("data");
        Fixture {
            _base: base,
            ws,
            data,
        }
    }

    /// A store for a new session.
    fn session(&self) -> CheckpointStore {
        CheckpointStore::for_workspace(&self.data, &self.ws)
    }

    fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.ws.root().join(rel)).ok()
    }

    /// Writes `content` to `rel` the way `ToolContext::write` does: prepare, write, commit.
    fn write(&self, store: &CheckpointStore, rel: &str, content: &str) -> Checkpoint {
        let path = self.ws.resolve(rel).unwrap();
        let old = std::fs::read(path.abs()).ok();
        let (before, after) = store
            .prepare(old.as_deref(), Some(content.as_bytes()))
            .unwrap();
        self.ws.write_atomic(&path, content.as_bytes()).unwrap();
        store.commit(path.rel(), before, after, "test").unwrap()
    }
}

/// Moves a blob's modification time back past the grace period.
fn age(store: &CheckpointStore, hash: &str) {
    let old = SystemTime::now() - ORPHAN_GRACE - Duration::from_secs(60);
    File::open(store.blob_path(hash))
        .unwrap()
        .set_modified(old)
        .unwrap();
}

#[test]
fn commits_record_session_sizes_and_increasing_ids() {
    let fx = Fixture::new();
    let store = fx.session();
    let first = fx.write(&store, "a.txt", "one");
    let second = fx.write(&store, "a.txt", "three");
    assert_eq!((first.id.as_str(), second.id.as_str()), ("cp-1", "cp-2"));
    assert_eq!(first.session.as_deref(), Some(store.session()));
    assert_eq!((first.before_bytes, first.after_bytes), (None, Some(3)));
    assert_eq!(
        (second.before_bytes, second.after_bytes),
        (Some(3), Some(5))
    );
    assert_eq!(store.list().unwrap(), vec![first.clone(), second]);
    // Identical contents are stored once.
    assert_eq!(
        std::fs::read_dir(store.dir().join(BLOBS)).unwrap().count(),
        2
    );
    assert_eq!(store.blob(first.after.as_ref().unwrap()).unwrap(), b"one");
    // Another session on the same workspace sees the same log and goes on counting.
    let other = fx.session();
    assert_ne!(other.session(), store.session());
    assert_eq!(fx.write(&other, "b.txt", "x").id, "cp-3");
}

#[test]
fn undo_restores_then_the_undo_can_be_undone() {
    let fx = Fixture::new();
    std::fs::write(fx.ws.root().join("a.txt"), "mine").unwrap();
    let store = fx.session();
    fx.write(&store, "a.txt", "agent");
    let outcome = store.undo(&fx.ws, None).unwrap();
    assert_eq!(
        (
            outcome.undone.as_str(),
            outcome.action,
            outcome.checkpoint.as_str()
        ),
        ("cp-1", UndoAction::Restored, "cp-2")
    );
    assert_eq!(fx.read("a.txt").unwrap(), "mine");
    let list = store.list().unwrap();
    assert!(list[0].undone);
    assert_eq!(list[1].undoes.as_deref(), Some("cp-1"));
    let again = store.undo(&fx.ws, Some("cp-1")).unwrap_err();
    assert_eq!(again.message, "cp-1 was already undone (by cp-2)");
    store.undo(&fx.ws, Some("cp-2")).unwrap();
    assert_eq!(fx.read("a.txt").unwrap(), "agent");
}

#[test]
fn undo_of_a_creation_deletes_the_file_only_while_it_is_unchanged() {
    let fx = Fixture::new();
    let store = fx.session();
    fx.write(&store, "new.txt", "created");
    std::fs::write(fx.ws.root().join("new.txt"), "created, then edited").unwrap();
    let err = store.undo(&fx.ws, None).unwrap_err();
    assert_eq!(err.kind, ErrorType::ValidationFailed);
    assert_eq!(fx.read("new.txt").unwrap(), "created, then edited");
    let conflict = UndoConflict::from_error(&err).unwrap();
    assert!(!conflict.before.exists);
    assert_eq!(conflict.now.bytes, Some(20));

    // Back to what the write left: now the creation is undone by deleting the file.
    std::fs::write(fx.ws.root().join("new.txt"), "created").unwrap();
    assert_eq!(
        store.undo(&fx.ws, None).unwrap().action,
        UndoAction::Deleted
    );
    assert!(fx.read("new.txt").is_none());
    // Undoing that undo creates the file again.
    store.undo(&fx.ws, None).unwrap();
    assert_eq!(fx.read("new.txt").unwrap(), "created");
}

#[test]
fn undo_of_a_creation_whose_file_was_deleted_refuses() {
    let fx = Fixture::new();
    let store = fx.session();
    fx.write(&store, "new.txt", "created");
    std::fs::remove_file(fx.ws.root().join("new.txt")).unwrap();
    let err = store.undo(&fx.ws, None).unwrap_err();
    assert!(err.message.contains("no longer exists"), "{}", err.message);
    let conflict = UndoConflict::from_error(&err).unwrap();
    assert!(!conflict.now.exists && conflict.now.file.is_none());
    assert!(fx.read("new.txt").is_none());
    assert!(!store.list().unwrap()[0].undone);
}

#[test]
fn a_refused_undo_shows_the_three_versions_and_changes_nothing() {
    let fx = Fixture::new();
    std::fs::write(fx.ws.root().join("notes.md"), "one\ntwo\n").unwrap();
    let store = fx.session();
    let cp = fx.write(&store, "notes.md", "one\nTWO\n");
    std::fs::write(fx.ws.root().join("notes.md"), "one\nTWO\nthree\n").unwrap();

    let err = store.undo(&fx.ws, None).unwrap_err();
    assert!(
        err.message.starts_with(
            "Not undoing cp-1: notes.md was changed after that write and now holds other content"
        ),
        "{}",
        err.message
    );
    assert_eq!(fx.read("notes.md").unwrap(), "one\nTWO\nthree\n");
    let c = UndoConflict::from_error(&err).unwrap();
    assert_eq!(
        (c.checkpoint.as_str(), c.path.as_str()),
        ("cp-1", "notes.md")
    );
    // Before and the agent's version are blobs that hold exactly those contents.
    assert_eq!(c.before.sha256, cp.before);
    assert_eq!(c.agent.sha256, cp.after);
    assert_eq!(
        std::fs::read(c.before.file.as_ref().unwrap()).unwrap(),
        b"one\ntwo\n"
    );
    assert_eq!(
        std::fs::read(c.agent.file.as_ref().unwrap()).unwrap(),
        b"one\nTWO\n"
    );
    // Now is the workspace file.
    assert_eq!(
        c.now.file.as_deref(),
        Some(fx.ws.root().join("notes.md").as_path())
    );
    assert_eq!(
        c.now.sha256.as_deref(),
        Some(sha256_hex(b"one\nTWO\nthree\n").as_str())
    );
    assert_eq!(
        (c.before.bytes, c.agent.bytes, c.now.bytes),
        (Some(8), Some(8), Some(14))
    );
    let agent = c.agent_changes.unwrap();
    assert!(agent.contains("-two\n+TWO\n"), "{agent}");
    assert!(
        agent.starts_with("--- notes.md (before)\n+++ notes.md (agent)\n"),
        "{agent}"
    );
    let later = c.later_changes.unwrap();
    assert!(
        later.contains("+three\n") && !later.contains("-two"),
        "{later}"
    );
}

#[test]
fn a_refusal_says_when_the_file_already_holds_the_old_content() {
    let fx = Fixture::new();
    std::fs::write(fx.ws.root().join("a.txt"), "old").unwrap();
    let store = fx.session();
    fx.write(&store, "a.txt", "new");
    std::fs::write(fx.ws.root().join("a.txt"), "old").unwrap();
    let err = store.undo(&fx.ws, None).unwrap_err();
    assert!(
        err.message
            .contains("already holds the content from before that write"),
        "{}",
        err.message
    );
}

#[test]
fn binary_versions_get_no_diff_but_still_their_files() {
    let fx = Fixture::new();
    let store = fx.session();
    fx.write(&store, "a.bin", "text");
    std::fs::write(fx.ws.root().join("a.bin"), [0xff, 0xfe, 0]).unwrap();
    let c = UndoConflict::from_error(&store.undo(&fx.ws, None).unwrap_err()).unwrap();
    assert!(c.agent_changes.is_some());
    assert!(c.later_changes.is_none());
    assert!(c.now.file.is_some() && c.agent.file.is_some());
}

#[test]
fn a_damaged_blob_is_never_restored() {
    let fx = Fixture::new();
    std::fs::write(fx.ws.root().join("a.txt"), "precious").unwrap();
    let store = fx.session();
    let cp = fx.write(&store, "a.txt", "agent");
    std::fs::write(store.blob_path(cp.before.as_ref().unwrap()), "garbage").unwrap();
    let err = store.undo(&fx.ws, None).unwrap_err();
    assert_eq!(err.kind, ErrorType::IoError);
    assert!(err.message.contains("damaged"), "{}", err.message);
    assert_eq!(fx.read("a.txt").unwrap(), "agent");
    // Saving the same content again repairs the blob, because its size is wrong.
    store.prepare(Some(b"precious"), None).unwrap();
    store.undo(&fx.ws, None).unwrap();
    assert_eq!(fx.read("a.txt").unwrap(), "precious");
}

#[test]
fn a_torn_last_line_does_not_swallow_the_next_record() {
    let fx = Fixture::new();
    let store = fx.session();
    fx.write(&store, "a.txt", "1");
    // What a crash in the middle of an append leaves behind.
    let mut index = std::fs::OpenOptions::new()
        .append(true)
        .open(store.dir().join(INDEX))
        .unwrap();
    index
        .write_all(br#"{"type":"write","id":"cp-2","pa"#)
        .unwrap();
    let next = fx.write(&store, "a.txt", "2");
    assert_eq!(next.id, "cp-2");
    let ids: Vec<String> = store.list().unwrap().into_iter().map(|c| c.id).collect();
    assert_eq!(ids, ["cp-1", "cp-2"]);
    store.undo(&fx.ws, None).unwrap();
    assert_eq!(fx.read("a.txt").unwrap(), "1");
}

#[test]
fn concurrent_sessions_never_share_an_id() {
    let fx = Fixture::new();
    let stores: Vec<CheckpointStore> = (0..4).map(|_| fx.session()).collect();
    std::thread::scope(|scope| {
        for (i, store) in stores.iter().enumerate() {
            scope.spawn(move || {
                for round in 0..10 {
                    let (before, after) = store
                        .prepare(None, Some(format!("{i}-{round}").as_bytes()))
                        .unwrap();
                    store
                        .commit(&format!("f{i}"), before, after, "test")
                        .unwrap();
                }
            });
        }
    });
    let ids: HashSet<String> = stores[0]
        .list()
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(ids.len(), 40);
}

#[test]
fn eviction_drops_the_oldest_checkpoints_of_earlier_sessions_first() {
    let fx = Fixture::new();
    let earlier = fx.session();
    let a = fx.write(&earlier, "a.txt", &"a".repeat(100));
    let b = fx.write(&earlier, "b.txt", &"b".repeat(100));
    let c = fx.write(&earlier, "c.txt", &"c".repeat(100));
    // 300 bytes kept; a new session with room for 250 must make room for its own 100.
    let current = fx.session().with_capacity(250);
    let d = fx.write(&current, "d.txt", &"d".repeat(100));
    let list = current.list().unwrap();
    let evicted: Vec<&str> = list
        .iter()
        .filter(|c| c.evicted)
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(evicted, [a.id.as_str(), b.id.as_str()]);

    let err = current.undo(&fx.ws, Some(&a.id)).unwrap_err();
    assert_eq!(err.kind, ErrorType::NotFound);
    assert!(err.message.contains("it was evicted"), "{}", err.message);
    assert_eq!(fx.read("a.txt").unwrap(), "a".repeat(100));
    // The kept checkpoints still undo.
    current.undo(&fx.ws, Some(&c.id)).unwrap();
    assert!(fx.read("c.txt").is_none());
    current.undo(&fx.ws, Some(&d.id)).unwrap();

    // Blobs of evicted checkpoints are removed at the next eviction, once old enough.
    age(&current, a.after.as_ref().unwrap());
    let fresh = b.after.clone().unwrap();
    let tight = fx.session().with_capacity(0);
    fx.write(&tight, "e.txt", "e");
    assert!(!current.blob_path(a.after.as_ref().unwrap()).exists());
    assert!(
        current.blob_path(&fresh).exists(),
        "a recent blob is spared"
    );
}

#[test]
fn the_current_session_is_never_evicted_even_over_capacity() {
    let fx = Fixture::new();
    let store = fx.session().with_capacity(10);
    let ids: Vec<String> = (0..5)
        .map(|i| {
            fx.write(&store, &format!("f{i}.txt"), &"x".repeat(100 + i))
                .id
        })
        .collect();
    let list = store.list().unwrap();
    assert!(list.iter().all(|c| !c.evicted), "{list:?}");
    for id in ids.iter().rev() {
        store.undo(&fx.ws, Some(id)).unwrap();
    }
    assert_eq!(std::fs::read_dir(fx.ws.root()).unwrap().count(), 0);
}

#[test]
fn shared_contents_stay_while_a_kept_checkpoint_needs_them() {
    let fx = Fixture::new();
    let earlier = fx.session();
    let same = "same content".repeat(10);
    let old = fx.write(&earlier, "a.txt", &same);
    let current = fx.session().with_capacity(150);
    // The same content written again: the blob is shared, so only 120 bytes are kept.
    let new = fx.write(&current, "b.txt", &same);
    assert!(!current.list().unwrap()[0].evicted);
    assert_eq!(old.after, new.after);
    // More content forces the old checkpoint out; the clean-up that follows spares the
    // shared blob, old as it is, because `new` still needs it.
    age(&current, new.after.as_ref().unwrap());
    let more = fx.write(&current, "c.txt", &"z".repeat(100));
    assert!(current.list().unwrap()[0].evicted);
    assert_eq!(
        current.blob(new.after.as_ref().unwrap()).unwrap(),
        same.as_bytes()
    );
    current.undo(&fx.ws, Some(&more.id)).unwrap();
    current.undo(&fx.ws, Some(&new.id)).unwrap();
    assert!(fx.read("b.txt").is_none());
}

#[test]
fn stale_temporary_files_in_the_blob_folder_are_cleaned_up() {
    let fx = Fixture::new();
    let store = fx.session().with_capacity(0);
    fx.write(&store, "a.txt", "a");
    let leftover = store.dir().join(BLOBS).join(".abc.tmp-999999");
    std::fs::write(&leftover, "half a blob").unwrap();
    File::open(&leftover)
        .unwrap()
        .set_modified(SystemTime::now() - ORPHAN_GRACE * 2)
        .unwrap();
    fx.write(&fx.session().with_capacity(0), "b.txt", "b");
    assert!(!leftover.exists());
}
