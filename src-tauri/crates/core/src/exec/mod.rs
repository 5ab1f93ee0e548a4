//! Running programs: the project's checkers (`get_diagnostics`) and the user-approved commands
//! (`run_command`).
//!
//! Every program runs
//!
//! * in its own **process group**, so a timeout kills it and everything it started
//!   (`SIGKILL` to the group), and whatever is left of the group when it exits is killed too;
//! * with a **scrubbed environment** ([`scrubbed_env`]): only the variables a build or a shell
//!   needs (`PATH`, `HOME`, locale, toolchain homes), never tokens or keys of the parent;
//! * with standard input closed and its output **bounded** ([`Captured`]): the first and the
//!   last bytes are kept, what lies between is counted;
//! * with **resource limits** ([`Limits`]): memory, processes, file size, CPU time, and the
//!   limit that was hit named in the result;
//! * inside the one **sandbox profile** ([`profile`]) where bubblewrap works ([`launch`]).

mod limits;
pub mod profile;

pub use limits::{Cage, Limits};
pub use profile::{bubblewrap, Bubblewrap, Profile};

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Variables passed on to programs; everything else in Lantern's environment is dropped.
const KEPT_VARS: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
    "TMPDIR",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "GOPATH",
    "GOROOT",
    "GOCACHE",
    "GOMODCACHE",
    "GOFLAGS",
    "PYENV_ROOT",
    "VIRTUAL_ENV",
    "NVM_DIR",
];

/// The environment a program gets: the `KEPT_VARS` that are set, plus `TERM=dumb` and
/// `NO_COLOR=1` so output is plain text.
pub fn scrubbed_env() -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = KEPT_VARS
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
        .collect();
    env.push(("TERM".into(), "dumb".into()));
    env.push(("NO_COLOR".into(), "1".into()));
    env
}

/// One stream's output, bounded: the first `head` bytes and the last `tail` bytes are kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    pub head: Vec<u8>,
    pub tail: Vec<u8>,
    /// Bytes between head and tail that were dropped.
    pub omitted: u64,
}

impl Captured {
    /// Everything kept, with a marker where bytes were dropped.
    pub fn text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if self.omitted > 0 {
            text.push_str(&format!("\n… {} bytes omitted …\n", self.omitted));
        }
        text.push_str(&String::from_utf8_lossy(&self.tail));
        text
    }

    /// Total bytes the program wrote.
    pub fn total(&self) -> u64 {
        (self.head.len() + self.tail.len()) as u64 + self.omitted
    }
}

/// Reads `reader` to its end, keeping at most `cap` bytes: half from the start, half from the
/// end (a ring of the most recent bytes).
fn capture(mut reader: impl Read, cap: usize) -> Captured {
    let head_cap = cap / 2;
    let tail_cap = cap - head_cap;
    let mut out = Captured::default();
    let mut ring: std::collections::VecDeque<u8> = std::collections::VecDeque::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut chunk = &buf[..n];
        if out.head.len() < head_cap {
            let take = (head_cap - out.head.len()).min(chunk.len());
            out.head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        ring.extend(chunk);
        if ring.len() > tail_cap {
            let drop = ring.len() - tail_cap;
            ring.drain(..drop);
            out.omitted += drop as u64;
        }
    }
    out.tail = ring.into_iter().collect();
    out
}

/// How to run one program.
#[derive(Debug, Clone)]
pub struct Spec {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    /// The whole environment (nothing else is inherited); see [`scrubbed_env`].
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
    /// Bytes kept of each of stdout and stderr.
    pub output_cap: usize,
    /// Resource limits, or None to run with Lantern's own.
    pub limits: Option<Limits>,
}

/// How a program ended.
#[derive(Debug, Clone)]
pub struct Finished {
    /// The exit code, when it exited by itself.
    pub exit_code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// Killed because the time ran out.
    pub timed_out: bool,
    pub stdout: Captured,
    pub stderr: Captured,
    pub duration: Duration,
    /// The resource limit the program ran into, e.g. "CPU time (600 s)".
    pub limit_hit: Option<String>,
}

/// Puts the resource `limits` on a long-running program started from `command` (an MCP
/// server), in its own process group. The process limit holds per user (not for root): a
/// program that lives for the whole run gets no cgroup of its own.
pub fn confine(command: &mut Command, limits: Limits) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
    // SAFETY: the hook only makes system calls (setrlimit) on values copied before the fork;
    // it allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(move || limits.apply_to_self());
    }
}

/// Runs `spec` to its end or its timeout. Err only when it could not be started.
pub fn run(spec: &Spec) -> std::io::Result<Finished> {
    use std::os::unix::process::ExitStatusExt;
    let started = Instant::now();
    let cage = spec.limits.and_then(|l| Cage::new(l.processes));
    let mut child = command_for(spec, cage.as_ref()).spawn()?;
    let pgid = child.id() as i32;
    let cap = spec.output_cap;
    let (out_tx, out_rx) = mpsc::channel();
    let (err_tx, err_rx) = mpsc::channel();
    let stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    std::thread::spawn(move || {
        let _ = out_tx.send(capture(stdout, cap));
    });
    std::thread::spawn(move || {
        let _ = err_tx.send(capture(stderr, cap));
    });
    let deadline = started + spec.timeout;
    let mut timed_out = false;
    let status = loop {
        match child.try_wait()? {
            Some(status) => break status,
            None if Instant::now() >= deadline => {
                timed_out = true;
                kill_group(pgid);
                break child.wait()?;
            }
            None => std::thread::sleep(Duration::from_millis(10)),
        }
    };
    // Whatever the program left running in its group goes with it: a background child
    // holding the output pipes open would otherwise keep the call waiting.
    kill_group(pgid);
    // And so does one that left the group (setsid), where the run has a cgroup of its own.
    if let Some(cage) = &cage {
        cage.kill_all();
    }
    // Without a cgroup, a process that left the group and still holds a pipe is not waited
    // for long.
    let grace = Duration::from_millis(500);
    let stdout = out_rx.recv_timeout(grace).unwrap_or_default();
    let stderr: Captured = err_rx.recv_timeout(grace).unwrap_or_default();
    let limit_hit = spec.limits.and_then(|l| {
        l.hit(
            status.signal(),
            status.code(),
            &stderr.text(),
            cage.as_ref(),
        )
    });
    Ok(Finished {
        exit_code: status.code(),
        signal: status.signal(),
        timed_out,
        stdout,
        stderr,
        duration: started.elapsed(),
        limit_hit,
    })
}

/// The program of `spec` ready to start: its own process group, only the environment given,
/// no input, its output piped; with limits, it enters `cage` and sets them on itself before it
/// runs.
fn command_for(spec: &Spec, cage: Option<&Cage>) -> Command {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(&spec.program);
    command
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(limits) = spec.limits {
        if let Some(procs) = cage.map(Cage::procs_fd) {
            // SAFETY: the hook only makes system calls (getpid, write) on a file descriptor
            // opened before the fork; it
            // allocates nothing and takes no lock. Hooks run in the order they are added, so
            // the program is in its cgroup before its limits are set.
            unsafe {
                command.pre_exec(move || limits::enter_cgroup(procs));
            }
        }
        confine(&mut command, limits);
    }
    command
}

fn kill_group(pgid: i32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pgid) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// How a program is started: inside the sandbox profile where bubblewrap works, else plainly,
/// with the reason it is not sandboxed.
#[derive(Debug, Clone)]
pub struct Launch {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Ok when sandboxed; the reason it is not, otherwise.
    pub sandbox: Result<(), String>,
}

impl Launch {
    /// The run of this launch in `cwd`, bounded by `timeout` and `output_cap`, with the
    /// default resource limits.
    pub fn spec(self, cwd: &Path, timeout: Duration, output_cap: usize) -> Spec {
        Spec {
            program: self.program,
            args: self.args,
            cwd: cwd.to_path_buf(),
            env: self.env,
            timeout,
            output_cap,
            limits: Some(Limits::default()),
        }
    }
}

/// Wraps `command` (program first) in the sandbox `profile`, or runs it plainly when
/// bubblewrap is not available. The environment is the scrubbed one, with the profile's
/// variables when sandboxed, and `extra` (what the program itself needs) either way.
pub fn launch(profile: &Profile, extra: &[(&str, String)], command: &[String]) -> Launch {
    let sandbox = bubblewrap();
    let mut env = scrubbed_env();
    if sandbox.is_ok() {
        set_vars(&mut env, &profile.env);
    }
    let extra: Vec<(String, String)> = extra
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    set_vars(&mut env, &extra);
    match sandbox {
        Ok(bwrap) => Launch {
            program: bwrap.program.clone(),
            args: bwrap.args(profile, command),
            env,
            sandbox: Ok(()),
        },
        Err(reason) => Launch {
            program: PathBuf::from(&command[0]),
            args: command[1..].to_vec(),
            env,
            sandbox: Err(reason),
        },
    }
}

/// Sets each variable of `vars` in `env`, replacing one of the same name.
fn set_vars(env: &mut Vec<(String, String)>, vars: &[(String, String)]) {
    for (key, value) in vars {
        env.retain(|(k, _)| k != key);
        env.push((key.clone(), value.clone()));
    }
}

/// Looks `name` up in a `:`-separated search path; the first executable file wins.
pub fn find_in(search_path: &str, name: &str) -> Option<PathBuf> {
    search_path
        .split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(name))
        .find(|p| is_executable(p))
}

pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, timeout: Duration, cap: usize) -> Finished {
        run(&Spec {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: std::env::temp_dir(),
            env: scrubbed_env(),
            timeout,
            output_cap: cap,
            limits: None,
        })
        .unwrap()
    }

    #[test]
    fn exit_codes_and_output() {
        let f = sh(
            "echo out; echo err >&2; exit 3",
            Duration::from_secs(10),
            1024,
        );
        assert_eq!(f.exit_code, Some(3));
        assert!(!f.timed_out);
        assert_eq!(f.stdout.text(), "out\n");
        assert_eq!(f.stderr.text(), "err\n");
    }

    #[test]
    fn output_keeps_head_and_tail() {
        let f = sh(
            "echo first; seq 1 100000; echo last",
            Duration::from_secs(20),
            200,
        );
        let text = f.stdout.text();
        assert!(text.starts_with("first\n"), "{text}");
        assert!(text.ends_with("last\n"), "{text}");
        assert!(f.stdout.omitted > 500_000, "{}", f.stdout.omitted);
        assert!(text.contains("bytes omitted"));
        assert_eq!(f.stdout.head.len() + f.stdout.tail.len(), 200);
    }

    #[test]
    fn the_environment_is_scrubbed() {
        let f = sh("env", Duration::from_secs(10), 65536);
        let child = f.stdout.text();
        assert!(child.contains("PATH="));
        // Every variable of ours that is not on the list stays behind (cargo sets several for
        // a test run, e.g. CARGO_PKG_NAME).
        let dropped: Vec<String> = std::env::vars()
            .map(|(k, _)| k)
            .filter(|k| !KEPT_VARS.contains(&k.as_str()))
            // What the shell sets itself, and what Lantern adds.
            .filter(|k| !["TERM", "NO_COLOR", "PWD", "OLDPWD", "SHLVL", "_"].contains(&k.as_str()))
            .collect();
        assert!(!dropped.is_empty());
        for name in dropped {
            assert!(
                !child.lines().any(|l| l.starts_with(&format!("{name}="))),
                "{name} was passed on"
            );
        }
    }

    #[test]
    fn a_timeout_kills_the_whole_group() {
        let started = Instant::now();
        let f = sh("sleep 60 & echo $!; wait", Duration::from_millis(500), 1024);
        assert!(f.timed_out);
        // Killed, not waited for: the child sleeps 60 s.
        assert!(started.elapsed() < Duration::from_secs(60));
        let pid: u32 = f.stdout.text().trim().parse().unwrap();
        // The background sleep is gone (or a zombie waiting for init to reap it).
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let alive = state
                .rsplit_once(") ")
                .is_some_and(|(_, rest)| !rest.starts_with('Z'));
            if !alive {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the child {pid} outlived the timeout"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
