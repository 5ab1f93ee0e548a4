//! Resource limits for the programs Lantern starts: memory, processes, file size, CPU time.
//!
//! Memory, file size and CPU time are kernel resource limits (`setrlimit`) set in the child
//! before it runs the program; every process it starts inherits them. The process limit is a
//! resource limit too, but Linux does not apply it to root, so where the `pids` cgroup can be
//! written (as root it usually can) each run also gets a cgroup of its own with `pids.max`: that
//! limit holds for root as well, and it names every process of the run, so all of them are
//! killed when the run ends — also one that left the process group with `setsid`.

use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// What one run may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of data memory (heap and other private writable mappings) per process.
    pub memory_bytes: u64,
    /// Processes and threads at once.
    pub processes: u64,
    /// The largest file a process may write.
    pub file_size_bytes: u64,
    /// CPU seconds per process.
    pub cpu_seconds: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 4 << 30,
            processes: 512,
            file_size_bytes: 1 << 30,
            cpu_seconds: 600,
        }
    }
}

impl Limits {
    /// Sets the resource limits of the calling process. Runs in the child between `fork` and
    /// `exec`: no allocation, system calls only.
    pub(crate) fn apply_to_self(&self) -> std::io::Result<()> {
        use rustix::process::{setrlimit, Resource, Rlimit};
        let set = |resource, soft: u64, hard: u64| {
            let limit = Rlimit {
                current: Some(soft),
                maximum: Some(hard),
            };
            setrlimit(resource, limit).map_err(std::io::Error::from)
        };
        set(Resource::Data, self.memory_bytes, self.memory_bytes)?;
        set(Resource::Nproc, self.processes, self.processes)?;
        set(Resource::Fsize, self.file_size_bytes, self.file_size_bytes)?;
        // The soft limit sends SIGXCPU, which says why the program ended; the hard limit a
        // little later kills one that ignores it.
        set(Resource::Cpu, self.cpu_seconds, self.cpu_seconds + 5)
    }

    /// Which limit a run ran into, from how it ended and what it wrote, if any.
    pub(crate) fn hit(
        &self,
        signal: Option<i32>,
        exit_code: Option<i32>,
        stderr: &str,
        cage: Option<&Cage>,
    ) -> Option<String> {
        // The program itself got the signal, or a shell reports its child's as 128 + signal.
        let by = |sig: rustix::process::Signal| {
            signal == Some(sig.as_raw()) || exit_code == Some(128 + sig.as_raw())
        };
        if by(rustix::process::Signal::XCPU) {
            return Some(format!("CPU time ({} s)", self.cpu_seconds));
        }
        if by(rustix::process::Signal::XFSZ) {
            return Some(format!("file size ({})", bytes(self.file_size_bytes)));
        }
        if cage.is_some_and(|c| c.limit_was_hit()) {
            return Some(format!("processes ({})", self.processes));
        }
        if exit_code == Some(0) && signal.is_none() {
            return None;
        }
        let stderr = stderr.to_lowercase();
        let out_of_memory = [
            "memory allocation of",
            "cannot allocate memory",
            "memoryerror",
            "out of memory",
            "std::bad_alloc",
        ]
        .iter()
        .any(|m| stderr.contains(m));
        if out_of_memory {
            return Some(format!("memory ({})", bytes(self.memory_bytes)));
        }
        None
    }

    /// How the limits read in a result, e.g. for the sandbox description.
    pub fn describe(&self) -> String {
        format!(
            "memory {} per process, {} processes, files up to {}, {} s of CPU",
            bytes(self.memory_bytes),
            self.processes,
            bytes(self.file_size_bytes),
            self.cpu_seconds
        )
    }
}

fn bytes(n: u64) -> String {
    if n >= 1 << 30 && n.is_multiple_of(1 << 30) {
        format!("{} GiB", n >> 30)
    } else {
        format!("{} MiB", n >> 20)
    }
}

/// A `pids` cgroup for one run: its process limit binds root too, and it lists every process
/// of the run so that all of them can be killed at the end.
#[derive(Debug)]
pub struct Cage {
    dir: PathBuf,
    /// `cgroup.procs`, opened before the fork so that the child only has to write to it.
    procs: File,
}

static CAGES: AtomicU64 = AtomicU64::new(0);

impl Cage {
    /// A new cgroup under the `pids` hierarchy this process is in, or None where there is no
    /// such hierarchy or it cannot be written.
    pub fn new(max_processes: u64) -> Option<Cage> {
        // Where this process's own cgroup is does not change: looked up once.
        static PARENT: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
        let parent = PARENT.get_or_init(pids_cgroup_of_self).as_ref()?;
        let n = CAGES.fetch_add(1, Ordering::Relaxed);
        let dir = parent.join(format!("lantern-{}-{n}", std::process::id()));
        std::fs::create_dir(&dir).ok()?;
        let made = (|| {
            std::fs::write(dir.join("pids.max"), max_processes.to_string()).ok()?;
            let procs = std::fs::OpenOptions::new()
                .write(true)
                .open(dir.join("cgroup.procs"))
                .ok()?;
            Some(procs)
        })();
        match made {
            Some(procs) => Some(Cage { dir, procs }),
            None => {
                let _ = std::fs::remove_dir(&dir);
                None
            }
        }
    }

    /// The open `cgroup.procs`, for [`enter_cgroup`] in the child.
    pub(crate) fn procs_fd(&self) -> RawFd {
        self.procs.as_raw_fd()
    }

    /// Whether a fork was refused because the run reached its process limit.
    fn limit_was_hit(&self) -> bool {
        std::fs::read_to_string(self.dir.join("pids.events"))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("max ")?.trim().parse::<u64>().ok())
            .is_some_and(|refused| refused > 0)
    }

    /// Kills every process still in the cgroup, whatever group or session it is in.
    pub fn kill_all(&self) {
        for _ in 0..50 {
            let pids = read_pids(&self.dir.join("cgroup.procs"));
            if pids.is_empty() {
                return;
            }
            for pid in pids {
                if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

impl Drop for Cage {
    fn drop(&mut self) {
        self.kill_all();
        let _ = std::fs::remove_dir(&self.dir);
    }
}

fn read_pids(path: &Path) -> Vec<i32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// The folder of this process's own `pids` cgroup: cgroup v1's `pids` hierarchy, or the
/// unified (v2) one where it has the `pids` controller.
fn pids_cgroup_of_self() -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let path = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "pids") {
            let dir = Path::new("/sys/fs/cgroup/pids").join(path);
            if dir.join("pids.max").exists() || dir.join("cgroup.procs").exists() {
                return Some(dir);
            }
        }
        if controllers.is_empty() {
            for mount in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
                let dir = Path::new(mount).join(path);
                let enabled =
                    std::fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
                if enabled.split_whitespace().any(|c| c == "pids") {
                    return Some(dir);
                }
            }
        }
    }
    None
}

/// Moves the calling process into the cgroup whose `cgroup.procs` is open as `procs`. Runs in
/// the child between `fork` and `exec`: formats its pid on the stack and writes it with one
/// system call.
pub(crate) fn enter_cgroup(procs: RawFd) -> std::io::Result<()> {
    let mut digits = [0u8; 20];
    let mut pid = rustix::process::getpid().as_raw_nonzero().get() as u32;
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (pid % 10) as u8;
        pid /= 10;
        if pid == 0 {
            break;
        }
    }
    // SAFETY: the cage, which owns the descriptor, outlives the child's start.
    let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(procs) };
    rustix::io::write(fd, &digits[start..])
        .map(|_| ())
        .map_err(std::io::Error::from)
}
