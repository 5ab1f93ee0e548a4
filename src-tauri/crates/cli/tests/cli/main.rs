//! The `lantern` command line, as a user runs it: a temp workspace, a command, the JSON it
//! prints and its exit code.

use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

mod runs;
mod state;
mod tools;

/// A temp workspace plus a private LANTERN_HOME, so tests never touch the user's own state.
struct Fixture {
    ws: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(
            ws.path().join("package.json"),
            "{\n  \"name\": \"shop\",\n  \"version\": \"2.4.1\"\n}\n",
        )
        .unwrap();
        std::fs::create_dir_all(ws.path().join("src")).unwrap();
        std::fs::write(
            ws.path().join("src/index.ts"),
            "export function main() {\n  return parseConfig();\n}\n",
        )
        .unwrap();
        std::fs::write(
            ws.path().join("src/config.ts"),
            "export function parseConfig() {\n  return {};\n}\n",
        )
        .unwrap();
        std::fs::write(ws.path().join(".gitignore"), "dist/\n").unwrap();
        std::fs::create_dir_all(ws.path().join("dist")).unwrap();
        std::fs::write(
            ws.path().join("dist/bundle.js"),
            "function parseConfig(){}\n",
        )
        .unwrap();
        Fixture {
            ws,
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, rel: &str) -> std::path::PathBuf {
        self.ws.path().join(rel)
    }

    fn lantern(&self, args: &[&str], stdin: Option<&str>) -> Output {
        self.lantern_with(args, stdin, &[])
    }

    /// `lantern` with more environment variables.
    fn lantern_with(&self, args: &[&str], stdin: Option<&str>, env: &[(&str, &Path)]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lantern"));
        cmd.args(args)
            .envs(env.iter().copied())
            .env("LANTERN_HOME", self.home.path())
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        if let Some(input) = stdin {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
        }
        child.wait_with_output().unwrap()
    }

    /// `lantern tool NAME --workspace WS --args ARGS EXTRA…`
    fn tool(&self, name: &str, args: &str, extra: &[&str]) -> (i32, Value) {
        let ws = self.ws.path().to_str().unwrap();
        let mut argv = vec!["tool", name, "--workspace", ws, "--args", args];
        argv.extend_from_slice(extra);
        let out = self.lantern(&argv, None);
        (out.status.code().unwrap(), json(&out))
    }
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
