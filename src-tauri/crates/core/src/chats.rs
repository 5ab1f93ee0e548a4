//! The saved conversations of a workspace: every run's transcript, in Lantern's data folder
//! under the workspace's key, listed newest first with what a user recognises them by (the
//! first message, when, which model).

use crate::event::Event;
pub use crate::paths::transcripts_dir;
use schemars::JsonSchema;
use serde::Serialize;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// One saved conversation.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ChatSummary {
    /// Its transcript.
    pub path: String,
    /// The first message the user sent.
    pub first_message: String,
    /// How many messages the user sent.
    pub turns: usize,
    /// The model of the first message.
    pub model: String,
    /// When it was last written, in milliseconds since 1970.
    pub modified_ms: i64,
}

/// The saved conversations in `dir` (a workspace's [`transcripts_dir`]), newest first.
/// Transcripts with no message (a window opened and closed) and files that cannot be read are
/// left out.
pub fn list_chats(dir: &Path) -> Vec<ChatSummary> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut chats: Vec<ChatSummary> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
        .filter_map(|path| summarise(&path))
        .collect();
    chats.sort_by(|a, b| b.modified_ms.cmp(&a.modified_ms).then(b.path.cmp(&a.path)));
    chats
}

/// A transcript's summary, from its `turn_started` lines only (the rest is not parsed).
fn summarise(path: &Path) -> Option<ChatSummary> {
    let file = std::fs::File::open(path).ok()?;
    let modified_ms = file
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    let mut first: Option<(String, String)> = None;
    let mut turns = 0;
    for line in std::io::BufReader::new(file).lines() {
        let line = line.ok()?;
        if !line.contains("\"turn_started\"") {
            continue;
        }
        if let Ok(Event::TurnStarted { message, model, .. }) = serde_json::from_str(&line) {
            turns += 1;
            first.get_or_insert((message, model));
        }
    }
    let (first_message, model) = first?;
    Some(ChatSummary {
        path: path.display().to_string(),
        first_message,
        turns,
        model,
        modified_ms,
    })
}

/// `path` as one of the transcripts in `dir`, or `None` when it is anything else: a window may
/// open or delete its own workspace's conversations and nothing more.
pub fn own_transcript(dir: &Path, path: &Path) -> Option<PathBuf> {
    let dir = dir.canonicalize().ok()?;
    let path = path.canonicalize().ok()?;
    (path.parent() == Some(dir.as_path())
        && path.extension().is_some_and(|e| e == "jsonl")
        && path.is_file())
    .then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::TranscriptWriter;

    #[test]
    fn conversations_are_listed_newest_first_by_their_first_message() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("transcripts");
        let write = |name: &str, messages: &[&str]| {
            let path = dir.join(name);
            let mut writer = TranscriptWriter::create(&path).unwrap();
            for message in messages {
                writer
                    .write(&Event::TurnStarted {
                        message: message.to_string(),
                        model: "smollm2".to_string(),
                        form: None,
                    })
                    .unwrap();
            }
            path
        };
        let older = write(
            "20261124-100000.000-1.jsonl",
            &["What is in notes.txt?", "And a.txt?"],
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
        let newer = write("20261124-110000.000-1.jsonl", &["Hello"]);
        write("20261124-120000.000-1.jsonl", &[]);
        std::fs::write(dir.join("notes.md"), "not a transcript").unwrap();
        let chats = list_chats(&dir);
        assert_eq!(chats.len(), 2, "{chats:?}");
        assert_eq!(chats[0].first_message, "Hello");
        assert_eq!(
            (chats[1].first_message.as_str(), chats[1].turns),
            ("What is in notes.txt?", 2)
        );
        assert_eq!(chats[1].model, "smollm2");
        assert_eq!(
            own_transcript(&dir, &older),
            Some(older.canonicalize().unwrap())
        );
        assert!(own_transcript(&dir, &newer).is_some());
        assert_eq!(own_transcript(&dir, &dir.join("notes.md")), None);
        assert_eq!(own_transcript(&dir, Path::new("/etc/passwd")), None);
        let outside = home.path().join("x.jsonl");
        std::fs::write(&outside, "").unwrap();
        assert_eq!(own_transcript(&dir, &dir.join("../x.jsonl")), None);
    }
}
