//! Crash safety, tested by crashing: `lantern tool write_file` replaces large files over and
//! over and is killed with SIGKILL at random moments. After every kill each file must hold
//! exactly its old or its new content, and the checkpoint log must never claim a write that
//! did not happen. At the end the log must parse, every content it references must be stored
//! under its hash, no temporary file may be left once each file has been written again, and
//! undo must still work.
//!
//! One kill in three lands at a random moment of a run; the others aim at the write itself,
//! a random moment within 3 ms after the writer's temporary file appears.
//!
//! `LANTERN_KILL_TEST_KILLS` sets how many kills to deliver (default 100);
//! `LANTERN_KILL_TEST_SEED` replays a run. The summary is printed (see it with
//! `--nocapture`).

use lantern_core::paths::sha256_hex;
use serde_json::Value;
use std::collections::{HashMap, HashSet, VecDeque};
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const DEFAULT_KILLS: usize = 100;
const FILES: u64 = 4;
/// Contents are 256 KiB to 1 MiB, in 4 KiB lines: large enough that the kill often lands in
/// the middle of writing them.
const MIN_BYTES: usize = 256 * 1024;
const SPREAD_BYTES: usize = 768 * 1024;
const LINE_BYTES: usize = 4096;
const SIGKILL: i32 = 9;

/// xorshift64*: a small reproducible random source.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Version `v`'s content: lines that each name the version and their number, padded with
/// letters drawn from `v`. Different versions differ in every line and almost surely in
/// length.
fn content(version: u64) -> Vec<u8> {
    let mut rng = Rng(version.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let size = MIN_BYTES + rng.below(SPREAD_BYTES as u64) as usize;
    let padding: Vec<u8> = (0..LINE_BYTES)
        .map(|_| b'a' + rng.below(26) as u8)
        .collect();
    let mut text = Vec::with_capacity(size + LINE_BYTES);
    let mut line = 0;
    while text.len() < size {
        let head = format!("version {version} line {line} ");
        text.extend_from_slice(head.as_bytes());
        text.extend_from_slice(&padding[head.len() + 1..]);
        text.push(b'\n');
        line += 1;
    }
    text
}

fn file_name(index: u64) -> String {
    format!("data/file-{index}.txt")
}

/// What a file holds: a version, its bytes and their sha256.
#[derive(Clone)]
struct Held {
    version: u64,
    bytes: Vec<u8>,
    hash: String,
}

impl Held {
    fn new(version: u64) -> Held {
        let bytes = content(version);
        Held {
            version,
            hash: sha256_hex(&bytes),
            bytes,
        }
    }
}

/// The workspace, Lantern's home, and what each file should hold.
struct Rig {
    ws: tempfile::TempDir,
    home: tempfile::TempDir,
    current: HashMap<u64, Held>,
    next_version: u64,
    /// How far the checkpoint log has been read.
    log_offset: usize,
}

impl Rig {
    fn new() -> Rig {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join("data")).unwrap();
        let mut current = HashMap::new();
        for index in 0..FILES {
            let held = Held::new(index);
            std::fs::write(ws.path().join(file_name(index)), &held.bytes).unwrap();
            current.insert(index, held);
        }
        Rig {
            ws,
            home: tempfile::tempdir().unwrap(),
            current,
            next_version: FILES,
            log_offset: 0,
        }
    }

    fn new_version(&mut self) -> (u64, Vec<u8>) {
        let version = self.next_version;
        self.next_version += 1;
        (version, content(version))
    }

    /// Starts `lantern tool write_file` writing `bytes` to file `index`, arguments on stdin.
    fn spawn_write(&self, index: u64, bytes: &[u8]) -> (Child, std::thread::JoinHandle<()>) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_lantern"))
            .args(["tool", "write_file", "--yes", "--args", "-", "--workspace"])
            .arg(self.ws.path())
            .env("LANTERN_HOME", self.home.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let text = std::str::from_utf8(bytes).unwrap();
        let args = serde_json::json!({"path": file_name(index), "content": text}).to_string();
        let mut stdin = child.stdin.take().unwrap();
        // The child may be killed before it has read everything: a broken pipe is expected.
        let feeder = std::thread::spawn(move || {
            let _ = stdin.write_all(args.as_bytes());
        });
        (child, feeder)
    }

    fn store_dir(&self) -> PathBuf {
        let root = self.home.path().join("data/checkpoints");
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        assert_eq!(dirs.len(), 1, "one workspace, one store: {dirs:?}");
        dirs.pop().unwrap()
    }

    /// The write records appended to the log since the last call. A line still without its
    /// newline is left for later: its writer may have been killed in the middle of it.
    fn new_writes(&mut self) -> Vec<Value> {
        let Ok(log) = std::fs::read(self.store_dir().join("index.jsonl")) else {
            return Vec::new();
        };
        let Some(end) = log[self.log_offset..].iter().rposition(|b| *b == b'\n') else {
            return Vec::new();
        };
        let end = self.log_offset + end;
        let writes = log[self.log_offset..end]
            .split(|b| *b == b'\n')
            .filter_map(parse_record)
            .filter(|record| record["type"] == "write")
            .collect();
        self.log_offset = end + 1;
        writes
    }

    fn temp_files(&self) -> Vec<String> {
        std::fs::read_dir(self.ws.path().join("data"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.contains(".lantern-tmp-"))
            .collect()
    }
}

/// A log line as JSON. A line that does not parse must be a record cut short by a kill (it
/// begins like one); anything else is damage.
fn parse_record(line: &[u8]) -> Option<Value> {
    match serde_json::from_slice::<Value>(line) {
        Ok(record) => Some(record),
        Err(_) => {
            assert!(
                line.starts_with(br#"{"type":""#),
                "a log line is neither a record nor a torn one: {:?}",
                String::from_utf8_lossy(&line[..line.len().min(200)])
            );
            None
        }
    }
}

/// How one run of the writer ended.
enum Ending {
    Killed,
    Finished,
}

fn finish(mut child: Child, feeder: std::thread::JoinHandle<()>) -> Ending {
    let status = child.wait().unwrap();
    feeder.join().unwrap();
    if status.signal() == Some(SIGKILL) {
        return Ending::Killed;
    }
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "the writer failed: {status:?}\n{stderr}");
    Ending::Finished
}

#[test]
fn killed_writes_leave_old_or_new_content_and_a_consistent_store() {
    let kills: usize = std::env::var("LANTERN_KILL_TEST_KILLS")
        .ok()
        .map(|v| v.parse().expect("LANTERN_KILL_TEST_KILLS must be a number"))
        .unwrap_or(DEFAULT_KILLS);
    let seed: u64 = std::env::var("LANTERN_KILL_TEST_SEED")
        .ok()
        .map(|v| v.parse().expect("LANTERN_KILL_TEST_SEED must be a number"))
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    println!("kill test: {kills} kills, seed {seed}");
    let mut rng = Rng(seed | 1);
    let mut rig = Rig::new();
    let started = Instant::now();

    // How long an uninterrupted write takes, so that kills spread over a whole run. Updated
    // with every run that finishes before its kill, as other work on the machine comes and
    // goes.
    let mut durations = VecDeque::new();
    for index in 0..3 {
        let (version, bytes) = rig.new_version();
        let began = Instant::now();
        let (child, feeder) = rig.spawn_write(index, &bytes);
        assert!(matches!(finish(child, feeder), Ending::Finished));
        durations.push_back(began.elapsed());
        rig.current.insert(index, Held::new(version));
    }
    rig.new_writes();

    let (mut killed, mut finished, mut interrupted, mut uncommitted) = (0, 0, 0, 0);
    while killed < kills {
        let mut sorted: Vec<Duration> = durations.iter().copied().collect();
        sorted.sort();
        let typical = sorted[sorted.len() / 2].as_micros() as u64;
        // One kill in three lands anywhere in a run; the others aim at the few milliseconds in
        // which the file itself is written: a moment after its temporary file appears.
        let anywhere = rng.below(3) == 0;
        let delay = Duration::from_micros(rng.below(typical * 6 / 5));
        let in_write = Duration::from_micros(rng.below(3000));

        let index = rng.below(FILES);
        let (version, bytes) = rig.new_version();
        let temps_before = rig.temp_files();
        let began = Instant::now();
        let (mut child, feeder) = rig.spawn_write(index, &bytes);
        let mut writing_since: Option<Instant> = None;
        loop {
            if child.try_wait().unwrap().is_some() {
                durations.push_back(began.elapsed());
                if durations.len() > 15 {
                    durations.pop_front();
                }
                break;
            }
            let due = if anywhere {
                began.elapsed() >= delay
            } else {
                if writing_since.is_none()
                    && rig.temp_files().iter().any(|n| !temps_before.contains(n))
                {
                    writing_since = Some(Instant::now());
                }
                writing_since.is_some_and(|since| since.elapsed() >= in_write)
            };
            if due {
                break;
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        // SIGKILL. A child that already exited has been reaped by `try_wait`, and then `kill`
        // sends nothing; otherwise it is still ours, so the signal cannot reach another
        // process.
        child.kill().unwrap();
        match finish(child, feeder) {
            Ending::Killed => killed += 1,
            Ending::Finished => finished += 1,
        }
        // A killed writer's temporary file stays until that file is written again.
        if rig
            .temp_files()
            .iter()
            .any(|name| !temps_before.contains(name))
        {
            interrupted += 1;
        }

        // Runs are one at a time, so whatever the log gained is this run's.
        let rel = file_name(index);
        let writes = rig.new_writes();
        let on_disk = std::fs::read(rig.ws.path().join(&rel)).unwrap();
        let old = rig.current[&index].clone();
        if on_disk == bytes {
            let new = Held::new(version);
            match writes.as_slice() {
                [] => {
                    // Killed between the rename and the log append: the write cannot be
                    // undone from the log, but the content it replaced is already stored.
                    uncommitted += 1;
                    let blob = rig.store_dir().join("blobs").join(&old.hash);
                    let stored = std::fs::read(&blob).unwrap();
                    assert!(stored == old.bytes, "the content {rel} held is not stored");
                }
                [write] => {
                    assert_eq!(write["path"], rel.as_str());
                    assert_eq!(write["before"], old.hash.as_str());
                    assert_eq!(write["after"], new.hash.as_str());
                }
                more => panic!("one write, {} records", more.len()),
            }
            rig.current.insert(index, new);
        } else {
            assert!(
                on_disk == old.bytes,
                "{rel} is torn: {} bytes, neither version {} ({} bytes) nor {version} ({} bytes)",
                on_disk.len(),
                old.version,
                old.bytes.len(),
                bytes.len()
            );
            assert!(
                writes.is_empty(),
                "the log records a write of {rel} that did not happen"
            );
        }
    }

    // Write every file once more without a kill: each must then hold exactly that content,
    // and the leftovers of killed writers must be gone.
    for index in 0..FILES {
        let (version, bytes) = rig.new_version();
        let (child, feeder) = rig.spawn_write(index, &bytes);
        assert!(matches!(finish(child, feeder), Ending::Finished));
        let on_disk = std::fs::read(rig.ws.path().join(file_name(index))).unwrap();
        assert!(on_disk == bytes, "file {index} after a clean write");
        rig.current.insert(index, Held::new(version));
    }
    assert_eq!(rig.temp_files(), Vec::<String>::new());

    // The store: every line a record (or a record cut short), every kept checkpoint's
    // contents present under their hashes.
    let store = rig.store_dir();
    let log = std::fs::read(store.join("index.jsonl")).unwrap();
    let records: Vec<Value> = log
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .filter_map(parse_record)
        .collect();
    let torn = log.split(|b| *b == b'\n').filter(|l| !l.is_empty()).count() - records.len();
    let out = Command::new(env!("CARGO_BIN_EXE_lantern"))
        .args(["checkpoints", "--workspace"])
        .arg(rig.ws.path())
        .env("LANTERN_HOME", rig.home.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let checkpoints: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let writes = records.iter().filter(|r| r["type"] == "write").count();
    assert_eq!(checkpoints.len(), writes);
    let mut ids = HashSet::new();
    let mut hashes = HashSet::new();
    for checkpoint in &checkpoints {
        assert!(ids.insert(checkpoint["id"].as_str().unwrap().to_string()));
        if checkpoint["evicted"] == true {
            continue;
        }
        for side in ["before", "after"] {
            if let Some(hash) = checkpoint[side].as_str() {
                hashes.insert(hash.to_string());
            }
        }
    }
    for hash in &hashes {
        let blob = std::fs::read(store.join("blobs").join(hash))
            .unwrap_or_else(|e| panic!("blob {hash} of a kept checkpoint: {e}"));
        assert_eq!(&sha256_hex(&blob), hash, "blob {hash} is damaged");
    }
    let evicted = checkpoints.iter().filter(|c| c["evicted"] == true).count();

    // Undo still works: the newest write goes back to what the file held before it.
    let newest = checkpoints.last().unwrap();
    let before = newest["before"].as_str().unwrap().to_string();
    let path = newest["path"].as_str().unwrap().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_lantern"))
        .args(["undo", "--workspace"])
        .arg(rig.ws.path())
        .env("LANTERN_HOME", rig.home.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let restored = std::fs::read(rig.ws.path().join(Path::new(&path))).unwrap();
    assert_eq!(sha256_hex(&restored), before);

    println!(
        "kill test: {killed} kills (and {finished} runs that finished first) over {} writes of \
         {}-{} KiB in {:.1} s; torn files 0; {interrupted} kills left a temporary file (cut off \
         mid-write); {uncommitted} writes landed but were killed before their checkpoint was \
         logged (their old content was in the store); log: {} records, {torn} torn lines; \
         {} checkpoints, {evicted} evicted, {} kept contents verified; seed {seed}",
        killed + finished + 3 + FILES as usize,
        MIN_BYTES / 1024,
        (MIN_BYTES + SPREAD_BYTES) / 1024,
        started.elapsed().as_secs_f64(),
        records.len(),
        checkpoints.len(),
        hashes.len(),
    );
}
