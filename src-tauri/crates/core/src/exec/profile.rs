//! The one sandbox profile every program Lantern starts runs in (commands and checkers).
//!
//! Built on bubblewrap. Least privilege, also when Lantern runs as root:
//!
//! * **no capabilities** (`--cap-drop ALL`: `CapEff` is 0 inside, so `mount`, raw sockets and
//!   reading past file modes are refused even to uid 0), `no_new_privs` (bubblewrap sets it);
//! * **only what the program needs is visible**: the system folders (`/usr`, `/bin`, `/lib*`,
//!   `/opt`), a short list of `/etc` entries (no `shadow`, no `ssh`), the toolchains named by the
//!   environment (rustup, pyenv, nvm and the search path's own folders), read-only; the
//!   workspace; a private `/tmp`; a private home and caches of Lantern's own per workspace. The
//!   user's home, other projects, Lantern's state, `/run`, `/var` and `/sys` are not mounted
//!   at all;
//! * inside the workspace, `.git` and `.lantern` are read-only and Lantern's state folders (a
//!   workspace opened at `$HOME` contains them) are hidden;
//! * **no network** and no host sockets: a new network namespace, and no folder that holds the
//!   host's socket files is mounted;
//! * its own process ids, session (`--new-session`: no terminal to inject keystrokes into),
//!   IPC and host name; it dies with Lantern (`--die-with-parent`);
//! * resource limits ([`super::Limits`]).

use super::{find_in, run, scrubbed_env, Spec};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

/// Debian's bubblewrap, when it is installed and can create namespaces here.
#[derive(Debug, Clone)]
pub struct Bubblewrap {
    pub program: PathBuf,
}

/// Whether programs can be sandboxed: the bwrap found, or why not. Tried once per process
/// (containers often forbid the namespaces bwrap needs) and remembered.
pub fn bubblewrap() -> Result<Bubblewrap, String> {
    static CHECKED: OnceLock<Result<Bubblewrap, String>> = OnceLock::new();
    CHECKED.get_or_init(probe_bubblewrap).clone()
}

fn probe_bubblewrap() -> Result<Bubblewrap, String> {
    if std::env::var_os("LANTERN_NO_BWRAP").is_some() {
        return Err("sandboxing is turned off (LANTERN_NO_BWRAP is set)".to_string());
    }
    let path = std::env::var("PATH").unwrap_or_default();
    let Some(program) = find_in(&path, "bwrap") else {
        return Err(
            "bubblewrap is not installed (apt-get install bubblewrap to sandbox commands)"
                .to_string(),
        );
    };
    let bwrap = Bubblewrap { program };
    let profile = Profile::new(Path::new("/"), Path::new("/"));
    let probe = Spec {
        program: bwrap.program.clone(),
        args: bwrap.args(&profile, &["/bin/true".to_string()]),
        cwd: PathBuf::from("/"),
        env: scrubbed_env(),
        timeout: Duration::from_secs(10),
        output_cap: 4096,
        limits: None,
    };
    match run(&probe) {
        Ok(f) if f.exit_code == Some(0) => Ok(bwrap),
        Ok(f) => Err(format!(
            "bubblewrap cannot create its namespaces here ({})",
            f.stderr.text().trim()
        )),
        Err(e) => Err(format!("bubblewrap could not be started: {e}")),
    }
}

/// System folders shown read-only (where they exist); merged-/usr links are kept as links.
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt",
];

/// The `/etc` entries programs need: users and groups by name, the dynamic linker, Debian's
/// alternatives (e.g. `/usr/bin/cc`), certificates, the time zone. Not `shadow`, not `ssh`.
const ETC_ENTRIES: &[&str] = &[
    "alternatives",
    "ca-certificates",
    "ca-certificates.conf",
    "debian_version",
    "environment",
    "gai.conf",
    "group",
    "host.conf",
    "hosts",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "locale.alias",
    "localtime",
    "mime.types",
    "nsswitch.conf",
    "os-release",
    "passwd",
    "profile",
    "protocols",
    "services",
    "ssl",
    "timezone",
];

/// What one sandboxed program sees.
#[derive(Debug, Clone)]
pub struct Profile {
    /// The workspace root, at its own path.
    pub workspace: PathBuf,
    /// Whether the program may change the workspace (commands may; checkers only read it).
    pub workspace_writable: bool,
    /// Where the program starts.
    pub cwd: PathBuf,
    /// Folders inside the workspace that are hidden (Lantern's own state, when the workspace
    /// contains it).
    pub hidden: Vec<PathBuf>,
    /// More folders shown read-only at their own path (e.g. a checker's own folder).
    pub readable: Vec<PathBuf>,
    /// Host folders shown read-only at another path: (host, inside).
    pub mapped: Vec<(PathBuf, PathBuf)>,
    /// Folders of Lantern's own that the program may write (a private home, build caches).
    pub writable: Vec<PathBuf>,
    /// Variables the sandbox sets over the scrubbed environment (the private home and
    /// caches); they only make sense inside it.
    pub env: Vec<(String, String)>,
    /// Whether the program keeps the host's network (an MCP server the user marked as
    /// needing it); off for everything else.
    pub network: bool,
}

impl Profile {
    /// The profile for a program started in `cwd` inside the workspace at `workspace`, which
    /// it may write; add to it before use.
    pub fn new(workspace: &Path, cwd: &Path) -> Profile {
        Profile {
            workspace: workspace.to_path_buf(),
            workspace_writable: true,
            cwd: cwd.to_path_buf(),
            hidden: Vec::new(),
            readable: Vec::new(),
            mapped: Vec::new(),
            writable: Vec::new(),
            env: Vec::new(),
            network: false,
        }
    }
}

/// Folders that must never be mounted as a toolchain: they hold far more than programs.
fn too_wide(dir: &Path) -> bool {
    let home = dirs::home_dir();
    dir == Path::new("/")
        || home.as_deref().is_some_and(|h| h.starts_with(dir))
        || [
            "/home", "/root", "/tmp", "/var", "/run", "/etc", "/proc", "/sys", "/dev",
        ]
        .iter()
        .any(|d| Path::new(d) == dir)
}

/// The toolchains the environment names, shown read-only: rustup's, pyenv's and nvm's homes
/// and every folder on the search path that is not a system folder.
pub fn toolchain_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = [
        env_or_home("RUSTUP_HOME", ".rustup"),
        env_or_home("PYENV_ROOT", ".pyenv"),
        env_or_home("NVM_DIR", ".nvm"),
        env_or_home("CARGO_HOME", ".cargo").map(|c| c.join("bin")),
    ]
    .into_iter()
    .flatten()
    .collect();
    for entry in std::env::var("PATH").unwrap_or_default().split(':') {
        let dir = Path::new(entry);
        if dir.is_absolute() && !SYSTEM_DIRS.iter().any(|s| dir.starts_with(s)) {
            dirs.push(dir.to_path_buf());
        }
    }
    dirs.retain(|d| d.is_dir() && !too_wide(d));
    dirs.sort();
    dirs.dedup();
    // A folder inside another one already listed adds nothing.
    let all = dirs.clone();
    dirs.retain(|d| !all.iter().any(|o| o != d && d.starts_with(o)));
    dirs
}

fn push(args: &mut Vec<String>, items: &[&str]) {
    args.extend(items.iter().map(|s| s.to_string()));
}

fn lossy(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// A host path shown read-only at the same place: a symbolic link stays a link (so `/bin`
/// remains `usr/bin` on a merged-/usr system), a folder or file is bound.
fn show_read_only(args: &mut Vec<String>, path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            if let Ok(target) = std::fs::read_link(path) {
                args.extend(["--symlink".to_string(), lossy(&target), lossy(path)]);
            }
        }
        Ok(_) => args.extend(["--ro-bind".to_string(), lossy(path), lossy(path)]),
        Err(_) => {}
    }
}

/// Lantern's own folders for the programs of one workspace, in its cache: a private home and
/// the toolchains' build caches. Programs may write these, never the user's own caches.
#[derive(Debug, Clone)]
pub struct PrivateDirs {
    root: PathBuf,
}

impl PrivateDirs {
    pub fn for_workspace(workspace: &Path) -> PrivateDirs {
        PrivateDirs {
            root: crate::paths::cache_dir()
                .join("sandbox")
                .join(crate::paths::workspace_key(workspace)),
        }
    }
    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }
    /// Cargo's home: the user's registry and git checkouts are shown in it read-only.
    pub fn cargo_home(&self) -> PathBuf {
        self.root.join("cargo-home")
    }
    /// Where checkers' build output goes, outside the workspace.
    pub fn cargo_target(&self) -> PathBuf {
        self.root.join("target")
    }
    pub fn go_path(&self) -> PathBuf {
        self.root.join("go")
    }
    pub fn go_cache(&self) -> PathBuf {
        self.root.join("go-build")
    }
    fn all(&self) -> Vec<PathBuf> {
        vec![
            self.home(),
            self.cargo_home(),
            self.cargo_target(),
            self.go_path(),
            self.go_cache(),
        ]
    }
}

/// The profile of a program of `workspace`, started in `cwd`: the workspace writable,
/// Lantern's state folders inside it hidden, a private home and caches as its environment;
/// the user's Cargo registry and Go modules shown read-only.
pub fn for_workspace(workspace: &crate::sandbox::Workspace, cwd: &Path) -> Profile {
    let private = PrivateDirs::for_workspace(workspace.root());
    for dir in private.all() {
        let _ = std::fs::create_dir_all(dir);
    }
    let mut profile = Profile::new(workspace.root(), cwd);
    profile.writable = private.all();
    profile.hidden = workspace.hidden().to_vec();
    if let Some(cargo) = env_or_home("CARGO_HOME", ".cargo") {
        for part in ["registry", "git", "config.toml"] {
            profile
                .mapped
                .push((cargo.join(part), private.cargo_home().join(part)));
        }
    }
    let text = |p: PathBuf| p.to_string_lossy().into_owned();
    let mut env = vec![
        ("HOME".to_string(), text(private.home())),
        ("TMPDIR".to_string(), "/tmp".to_string()),
        ("CARGO_HOME".to_string(), text(private.cargo_home())),
        ("CARGO_NET_OFFLINE".to_string(), "true".to_string()),
        ("GOPATH".to_string(), text(private.go_path())),
        ("GOCACHE".to_string(), text(private.go_cache())),
        ("GOPROXY".to_string(), "off".to_string()),
    ];
    let user_modules = std::env::var_os("GOMODCACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("GOPATH").map(|p| PathBuf::from(p).join("pkg/mod")))
        .or_else(|| dirs::home_dir().map(|h| h.join("go/pkg/mod")));
    if let Some(modules) = user_modules.filter(|m| m.is_dir()) {
        env.push(("GOMODCACHE".into(), text(modules.clone())));
        profile.readable.push(modules);
    }
    // Their defaults are under the home folder, which is private inside the sandbox.
    for (var, default) in [("RUSTUP_HOME", ".rustup"), ("PYENV_ROOT", ".pyenv")] {
        if let Some(dir) = env_or_home(var, default).filter(|d| d.is_dir()) {
            env.push((var.to_string(), text(dir)));
        }
    }
    profile.env = env;
    profile
}

/// A toolchain's folder: the variable `var` when set, else `default` under the home folder.
fn env_or_home(var: &str, default: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(default)))
}

impl Bubblewrap {
    /// bwrap's arguments to run `command` under `profile`.
    pub fn args(&self, profile: &Profile, command: &[String]) -> Vec<String> {
        let mut args = Vec::new();
        push(
            &mut args,
            &[
                "--cap-drop",
                "ALL",
                "--unshare-pid",
                "--unshare-ipc",
                "--unshare-uts",
                "--unshare-cgroup-try",
                "--new-session",
                "--die-with-parent",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "--tmpfs",
                "/tmp",
            ],
        );
        if !profile.network {
            args.push("--unshare-net".to_string());
        }
        for dir in SYSTEM_DIRS {
            show_read_only(&mut args, Path::new(dir));
        }
        for entry in ETC_ENTRIES {
            show_read_only(&mut args, &Path::new("/etc").join(entry));
        }
        for dir in toolchain_dirs().iter().chain(&profile.readable) {
            if dir.is_dir() {
                args.extend(["--ro-bind".to_string(), lossy(dir), lossy(dir)]);
            }
        }
        for (host, inside) in &profile.mapped {
            if host.exists() {
                args.extend(["--ro-bind".to_string(), lossy(host), lossy(inside)]);
            }
        }
        for dir in &profile.writable {
            if dir.is_dir() {
                args.extend(["--bind".to_string(), lossy(dir), lossy(dir)]);
            }
        }
        let ws = &profile.workspace;
        if ws != Path::new("/") && ws.is_dir() {
            let bind = if profile.workspace_writable {
                "--bind"
            } else {
                "--ro-bind"
            };
            args.extend([bind.to_string(), lossy(ws), lossy(ws)]);
            for protected in [".git", ".lantern"] {
                let dir = ws.join(protected);
                if dir.exists() && !dir.is_symlink() {
                    args.extend(["--ro-bind".to_string(), lossy(&dir), lossy(&dir)]);
                }
            }
            for dir in &profile.hidden {
                if dir.starts_with(ws) && dir.is_dir() {
                    args.extend([
                        "--tmpfs".to_string(),
                        lossy(dir),
                        "--remount-ro".to_string(),
                        lossy(dir),
                    ]);
                }
            }
        }
        args.extend(["--chdir".to_string(), lossy(&profile.cwd), "--".to_string()]);
        args.extend(command.iter().cloned());
        args
    }
}
