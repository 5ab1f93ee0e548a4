//! How a stdio server is started: through the same least-privilege sandbox as `run_command`
//! (no capabilities even as root, the home folder and other projects not mounted, no host
//! sockets), with the workspace read-only, the server's own install readable, and a private
//! state folder of its own as its home. The network is on only for a server marked
//! `"network": true`; a `"trusted": true` server runs as a plain child process.

use crate::config::ServerDef;
use lantern_core::exec::profile::{for_workspace, Profile};
use lantern_core::exec::{find_in, launch};
use std::path::{Path, PathBuf};

/// A stdio server's command line, ready to spawn, and how it is confined.
#[derive(Debug, Clone)]
pub struct Started {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    /// `Ok` when sandboxed; why not otherwise (trusted, or no bubblewrap here).
    pub sandbox: Result<(), String>,
    /// The server's private folder (its home inside the sandbox).
    pub state_dir: PathBuf,
}

/// The private folder of server `name` for the workspace at `root`, in Lantern's cache.
pub fn state_dir(root: &Path, name: &str) -> PathBuf {
    lantern_core::paths::cache_dir()
        .join("mcp")
        .join(lantern_core::paths::workspace_key(root))
        .join(name)
}

/// The folder servers are started in when no project is open (`lantern tools`, `lantern mcp
/// list` without `--workspace`): an empty one of Lantern's own, so that a server never sees
/// whatever folder the command happened to run in.
pub fn no_workspace_root() -> Result<PathBuf, String> {
    let root = lantern_core::paths::cache_dir()
        .join("mcp")
        .join("no-workspace");
    std::fs::create_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    Ok(root)
}

/// The command line that starts server `name` (a stdio definition) for the workspace at
/// `root`.
pub fn stdio_command(
    root: &Path,
    name: &str,
    def: &ServerDef,
    command: &str,
    args: &[String],
) -> Result<Started, String> {
    let program = resolve_program(command, root)?;
    let state = state_dir(root, name);
    std::fs::create_dir_all(&state).map_err(|e| format!("{}: {e}", state.display()))?;
    let cwd = match &def.cwd {
        Some(dir) if Path::new(dir).is_absolute() => PathBuf::from(dir),
        Some(dir) => root.join(dir),
        None => root.to_path_buf(),
    };
    let mut line = vec![program.to_string_lossy().into_owned()];
    line.extend(args.iter().cloned());
    let mut extra: Vec<(&str, String)> = def
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    if def.trusted {
        // Unsandboxed, the server keeps the user's environment, as other tools run it.
        let mut env: Vec<(String, String)> = std::env::vars().collect();
        env.extend(extra.into_iter().map(|(k, v)| (k.to_string(), v)));
        return Ok(Started {
            program,
            args: args.to_vec(),
            env,
            cwd,
            sandbox: Err("trusted: runs outside the sandbox".into()),
            state_dir: state,
        });
    }
    let profile = profile_for(root, &cwd, def, &program, &state);
    let home = state.to_string_lossy().into_owned();
    extra.push(("HOME", home.clone()));
    extra.push(("XDG_CACHE_HOME", format!("{home}/.cache")));
    extra.push(("XDG_CONFIG_HOME", format!("{home}/.config")));
    extra.push(("npm_config_cache", format!("{home}/.npm")));
    let launch = launch(&profile, &extra, &line);
    Ok(Started {
        program: launch.program,
        args: launch.args,
        env: launch.env,
        cwd,
        sandbox: launch.sandbox,
        state_dir: state,
    })
}

/// The sandbox of one server: the workspace read-only (a server's writes would bypass
/// Lantern's checkpoints), its own state folder writable, its install and the folders its
/// definition lists readable, the network only when asked for.
fn profile_for(root: &Path, cwd: &Path, def: &ServerDef, program: &Path, state: &Path) -> Profile {
    let workspace = lantern_core::sandbox::Workspace::open(root);
    let mut profile = match &workspace {
        Ok(ws) => for_workspace(ws, cwd),
        Err(_) => Profile::new(root, cwd),
    };
    profile.workspace_writable = false;
    profile.network = def.network;
    profile.writable.push(state.to_path_buf());
    profile.readable.push(install_dir(program));
    profile.readable.extend(
        def.paths
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.is_absolute()),
    );
    // The private home of commands is not the server's: its home is its state folder.
    profile.env.retain(|(k, _)| k != "HOME");
    profile
}

/// The folder a program's installation lives in: a virtual environment or a `node_modules`
/// for a program in its `bin` (`venv/bin/x` → `venv`, `node_modules/.bin/x` → `node_modules`),
/// else the program's own folder. A link is followed first, so a `.bin` entry finds its
/// package.
fn install_dir(program: &Path) -> PathBuf {
    let folder = |p: &Path| p.parent().map(Path::to_path_buf).unwrap_or_default();
    let dir = folder(program);
    match dir.file_name().and_then(|n| n.to_str()) {
        Some("bin" | ".bin") => folder(&dir),
        _ => dir,
    }
}

/// The program of `command`: a path as given (relative to the workspace), else the first on
/// the search path.
fn resolve_program(command: &str, root: &Path) -> Result<PathBuf, String> {
    if command.contains('/') {
        let path = match Path::new(command).is_absolute() {
            true => PathBuf::from(command),
            false => root.join(command),
        };
        return match lantern_core::exec::is_executable(&path) {
            true => Ok(path),
            false => Err(format!("{} is not an executable file", path.display())),
        };
    }
    let search = std::env::var("PATH").unwrap_or_default();
    find_in(&search, command)
        .ok_or_else(|| format!("{command:?} is not on the search path (PATH); give its full path"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_install_is_the_environment_or_package_folder_that_holds_the_program() {
        assert_eq!(
            install_dir(Path::new("/c/venv/bin/mcp-server-time")),
            Path::new("/c/venv")
        );
        assert_eq!(
            install_dir(Path::new("/c/npm/node_modules/.bin/srv")),
            Path::new("/c/npm/node_modules")
        );
        assert_eq!(
            install_dir(Path::new("/opt/srv/run")),
            Path::new("/opt/srv")
        );
    }

    #[test]
    fn a_missing_program_is_named_in_the_error() {
        let root = tempfile::tempdir().unwrap();
        let def = ServerDef::default();
        let error = stdio_command(root.path(), "s", &def, "no-such-server-x", &[]).unwrap_err();
        assert!(error.contains("no-such-server-x"), "{error}");
        let error = stdio_command(root.path(), "s", &def, "./bin/x", &[]).unwrap_err();
        assert!(error.contains("not an executable"), "{error}");
    }
}
