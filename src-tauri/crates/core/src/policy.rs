//! Who may run what: the permission policy, as a pure function, and the grants it reads.
//!
//! [`decide`] maps a call (tool, risk, the workspace paths it touches, the command it runs) and
//! the grants in force to Allow, Deny or Ask. Precedence, first match wins:
//!
//! 1. **Hard rules** — writes under `.git/` or Lantern's own `.lantern/` are denied. No grant
//!    can lift them.
//! 2. **Deny grants** — a "never" the user recorded for this tool and scope.
//! 3. **Allow grants** — "for this session" or "always", for this tool and scope. A grant
//!    covers a call only if it covers *every* path the call touches; a command grant covers
//!    only that exact command line, compared as a string: `git status` does not cover
//!    `git status && rm -rf ~`, pipes, `;` or `$( )`. For exec tools that run a command line
//!    only command grants allow: a grant for the whole tool or for paths never lets a
//!    command run unasked (a deny grant of any scope still denies). An exec call with no
//!    command line (checkers that would run unsandboxed) may be allowed for the whole tool.
//!    A model's write to a file the conversation never pointed at, or one that would drop
//!    most of a file that exists, is asked about before any allow grant is read: a grant
//!    was given for the files the user meant and the changes they asked for.
//! 4. **The tool's risk** — safe and read tools run; write and exec tools ask.
//!
//! Calls that would leave the workspace never get here: the sandbox refuses them first.

use crate::error::ToolError;
use crate::paths::{sha256_hex, workspace_key, write_state_file};
use crate::sandbox::protected_reason;
use crate::tools::{DroppedLines, Risk};
use globset::GlobBuilder;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What a grant covers, besides its tool.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Scope {
    /// Every call of the tool.
    Tool,
    /// One workspace-relative path.
    Path(String),
    /// Workspace-relative paths matching a glob; `*` stays within one folder, `**` crosses.
    Glob(String),
    /// One exact command line.
    Command(String),
    /// Every tool of the call's MCP server (its name's part before the dot): given as an
    /// answer, kept as a grant for the tool `server.*`.
    Server,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    Allow,
    Deny,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Lifetime {
    /// Until the app or the CLI run ends.
    Session,
    /// Persisted for this workspace.
    Always,
}

/// A standing answer of the user's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Grant {
    /// Stable id derived from the content, for listing and revoking.
    pub id: String,
    pub tool: String,
    pub scope: Scope,
    pub effect: Effect,
    pub lifetime: Lifetime,
    /// For a deny: what the model is told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Grant {
    /// A grant, checked so that it cannot reach beyond the workspace or hide a wider scope.
    pub fn new(
        tool: &str,
        scope: Scope,
        effect: Effect,
        lifetime: Lifetime,
    ) -> Result<Grant, ToolError> {
        match &scope {
            Scope::Path(p) | Scope::Glob(p) => {
                if p.is_empty()
                    || p.starts_with('/')
                    || p.split('/').any(|c| c == "..")
                    || p.contains('\0')
                {
                    return Err(ToolError::invalid(format!(
                        "A grant's path must be relative to the workspace and stay inside it: {p:?}"
                    )));
                }
                if let Scope::Glob(g) = &scope {
                    grant_glob(g)?;
                }
            }
            Scope::Command(c) if c.trim().is_empty() => {
                return Err(ToolError::invalid(
                    "A command grant needs the exact command",
                ));
            }
            Scope::Server => {
                let server = tool
                    .split_once('.')
                    .map(|(server, _)| server)
                    .filter(|s| !s.is_empty())
                    .ok_or_else(|| {
                        ToolError::invalid(format!("{tool} is no tool of an MCP server"))
                    })?;
                return Grant::new(&format!("{server}.*"), Scope::Tool, effect, lifetime);
            }
            _ => {}
        }
        let key = format!(
            "{tool}\u{0}{}\u{0}{:?}",
            serde_json::to_string(&scope).unwrap_or_default(),
            effect
        );
        Ok(Grant {
            id: format!("g-{}", &sha256_hex(key.as_bytes())[..8]),
            tool: tool.to_string(),
            scope,
            effect,
            lifetime,
            message: None,
        })
    }

    /// Does this grant cover the call? Every path must be covered.
    pub fn covers(&self, call: &Subject<'_>) -> bool {
        if !self.names_tool_of(call) {
            return false;
        }
        match &self.scope {
            Scope::Tool => true,
            Scope::Path(p) => !call.paths.is_empty() && call.paths.iter().all(|c| c == p),
            Scope::Glob(g) => match compiled_glob(g) {
                Some(m) => !call.paths.is_empty() && call.paths.iter().all(|c| m.is_match(c)),
                None => false,
            },
            Scope::Command(c) => call.command == Some(c.as_str()),
            // Made a grant for `server.*` when given (see `Grant::new`).
            Scope::Server => false,
        }
    }

    /// Is the call's tool this grant's: the same name, or a tool of the MCP server that a
    /// grant for `server.*` names. A server-wide allow never covers a tool that declares itself
    /// destructive (its risk is raised to [`Risk::Exec`]): that one is allowed by name or asked;
    /// a server-wide deny denies it too.
    fn names_tool_of(&self, call: &Subject<'_>) -> bool {
        if self.tool == call.tool {
            return true;
        }
        let Some(server) = self.tool.strip_suffix(".*") else {
            return false;
        };
        (call.risk != Risk::Exec || self.effect == Effect::Deny)
            && call
                .tool
                .strip_prefix(server)
                .is_some_and(|rest| rest.starts_with('.') && rest.len() > 1)
    }

    /// How the grant reads in a list or an event, e.g. `allow write_file on src/**`.
    pub fn describe(&self) -> String {
        let effect = match self.effect {
            Effect::Allow => "allow",
            Effect::Deny => "deny",
        };
        let scope = match &self.scope {
            Scope::Tool => "every call".to_string(),
            Scope::Path(p) => p.clone(),
            Scope::Glob(g) => format!("files matching {g}"),
            Scope::Command(c) => format!("the command `{c}`"),
            Scope::Server => "every tool of its server".to_string(),
        };
        let lifetime = match self.lifetime {
            Lifetime::Session => "this session",
            Lifetime::Always => "always",
        };
        format!(
            "{effect} {} on {scope} ({lifetime}, {})",
            self.tool, self.id
        )
    }
}

/// Compiled grant globs by pattern: a glob is compiled once, not at every decision.
static COMPILED: std::sync::LazyLock<
    std::sync::Mutex<std::collections::HashMap<String, Option<globset::GlobMatcher>>>,
> = std::sync::LazyLock::new(Default::default);

/// The most patterns kept compiled; past it the cache starts again.
const MAX_COMPILED: usize = 100_000;

fn compiled_glob(pattern: &str) -> Option<globset::GlobMatcher> {
    let Ok(mut cache) = COMPILED.lock() else {
        return grant_glob(pattern).ok();
    };
    if let Some(m) = cache.get(pattern) {
        return m.clone();
    }
    if cache.len() >= MAX_COMPILED {
        cache.clear();
    }
    let m = grant_glob(pattern).ok();
    cache.insert(pattern.to_string(), m.clone());
    m
}

fn grant_glob(pattern: &str) -> Result<globset::GlobMatcher, ToolError> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| ToolError::invalid(format!("Invalid glob {pattern:?}: {e}")))
}

/// The call as the policy sees it.
#[derive(Debug, Clone)]
pub struct Subject<'a> {
    pub tool: &'a str,
    pub risk: Risk,
    /// Workspace-relative paths the call touches, already resolved by the sandbox.
    pub paths: Vec<String>,
    pub command: Option<&'a str>,
    /// The files among `paths` a write would change that the conversation never pointed at
    /// (see [`crate::pointed`]): the model's own guess, which no grant allows unasked.
    pub unpointed: Vec<String>,
    /// The lines of existing files a model's write would take out unquoted, since the turn
    /// began (see [`DroppedLines`]): a loss that [needs a person](DroppedLines::needs_a_person)
    /// is one no grant allows unasked.
    pub drops: Vec<DroppedLines>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    Allow { rule: String },
    Deny { rule: String, reason: String },
    Ask { rule: String },
}

/// The policy. Pure: the same call and grants always give the same decision.
pub fn decide(call: &Subject<'_>, grants: &[Grant]) -> Decision {
    if matches!(call.risk, Risk::Write | Risk::Exec) {
        for path in &call.paths {
            if let Some(rule) = protected_reason(path) {
                return Decision::Deny {
                    rule: format!("hard rule: {rule}"),
                    reason: format!("{path} is protected ({rule}); no grant can allow writing it"),
                };
            }
        }
    }
    if let Some(g) = grants
        .iter()
        .find(|g| g.effect == Effect::Deny && g.covers(call))
    {
        return Decision::Deny {
            rule: g.describe(),
            reason: g
                .message
                .clone()
                .unwrap_or_else(|| format!("The user does not allow {} here", call.tool)),
        };
    }
    // Before the allowing grants: a grant was given for the files the user meant and the
    // changes they asked for.
    if call.risk == Risk::Write && !call.unpointed.is_empty() {
        return Decision::Ask {
            rule: unpointed_rule(&call.unpointed),
        };
    }
    if call.risk == Risk::Write && call.drops.iter().any(DroppedLines::needs_a_person) {
        return Decision::Ask {
            rule: format!("lines dropped: {}", dropped_lines(&call.drops)),
        };
    }
    if let Some(g) = grants.iter().find(|g| {
        g.effect == Effect::Allow
            && g.covers(call)
            && (call.risk != Risk::Exec
                || call.command.is_none()
                || matches!(g.scope, Scope::Command(_)))
    }) {
        return Decision::Allow { rule: g.describe() };
    }
    match call.risk {
        Risk::Safe => Decision::Allow {
            rule: "default: safe tools run without asking".to_string(),
        },
        Risk::Read => Decision::Allow {
            rule: "default: reading inside the workspace is allowed".to_string(),
        },
        Risk::Write => Decision::Ask {
            rule: "default: writes ask first".to_string(),
        },
        Risk::Exec => Decision::Ask {
            rule: "default: commands ask first".to_string(),
        },
        Risk::Remote => Decision::Ask {
            rule: "default: tools of MCP servers ask first".to_string(),
        },
    }
}

/// Why a write to files nobody pointed at is asked about, whatever the grants say.
fn unpointed_rule(unpointed: &[String]) -> String {
    format!(
        "unsure target: you did not name {} and no result showed it; the model chose it on its own",
        unpointed.join(", ")
    )
}

/// The lines a write drops, in words: "the write would drop 5 of the 6 non-blank lines of
/// .gitignore", how many of them live on changed, and how many it writes over though the user
/// asked to change nothing there.
pub fn dropped_lines(drops: &[DroppedLines]) -> String {
    let each: Vec<String> = drops
        .iter()
        .map(|d| {
            let changed = d.dropped.saturating_sub(d.lost);
            let notes: Vec<String> = [
                (changed > 0).then(|| format!("{changed} of them only changed")),
                (d.asked_to_keep && d.lost > 0).then(|| {
                    format!(
                        "{} written over, though the user asked to change nothing there",
                        d.lost
                    )
                }),
            ]
            .into_iter()
            .flatten()
            .collect();
            let notes = if notes.is_empty() {
                String::new()
            } else {
                format!(" ({})", notes.join("; "))
            };
            format!(
                "{} of the {} non-blank lines of {}{notes}",
                d.dropped, d.of, d.path
            )
        })
        .collect();
    format!("the write would drop {}", each.join(", "))
}

/// The persisted ("always") grants of one workspace, in the user's config directory.
pub struct PolicyStore {
    path: PathBuf,
    workspace: PathBuf,
}

#[derive(Serialize, Deserialize)]
struct PolicyFile {
    workspace: PathBuf,
    grants: Vec<Grant>,
}

/// The persisted grants and, when the file was unreadable, what happened to it.
pub struct Loaded {
    pub grants: Vec<Grant>,
    pub warning: Option<String>,
}

impl PolicyStore {
    /// The store for the workspace at `root`, under `config_dir` (usually
    /// [`crate::paths::config_dir`]).
    pub fn for_workspace(config_dir: &Path, root: &Path) -> Self {
        PolicyStore {
            path: config_dir
                .join("policy")
                .join(format!("{}.json", workspace_key(root))),
            workspace: root.to_path_buf(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the grants. A corrupt file is moved aside (never deleted), reported, and counts as
    /// no grants, so a damaged file can only make Lantern ask more, never less.
    pub fn load(&self) -> Loaded {
        let text = match crate::paths::read_state_file(&self.path) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Loaded {
                    grants: Vec::new(),
                    warning: None,
                }
            }
            Err(e) => {
                return Loaded {
                    grants: Vec::new(),
                    warning: Some(format!(
                        "Could not read the policy file {}: {e}; no saved grants apply",
                        self.path.display()
                    )),
                }
            }
        };
        match serde_json::from_str::<PolicyFile>(&text) {
            Ok(file) => Loaded {
                // Only persisted grants belong here; anything else is ignored.
                grants: file
                    .grants
                    .into_iter()
                    .filter(|g| g.lifetime == Lifetime::Always)
                    .collect(),
                warning: None,
            },
            Err(e) => {
                let aside = self.path.with_extension(format!(
                    "corrupt-{}.json",
                    chrono::Utc::now().timestamp_millis()
                ));
                let moved = std::fs::rename(&self.path, &aside).is_ok();
                Loaded {
                    grants: Vec::new(),
                    warning: Some(format!(
                        "The policy file {} is damaged ({e}); {}no saved grants apply until you grant again",
                        self.path.display(),
                        if moved { format!("it was kept as {}; ", aside.display()) } else { String::new() }
                    )),
                }
            }
        }
    }

    fn save(&self, grants: &[Grant]) -> Result<(), ToolError> {
        let file = PolicyFile {
            workspace: self.workspace.clone(),
            grants: grants.to_vec(),
        };
        let text = serde_json::to_string_pretty(&file).expect("grants serialise");
        write_state_file(&self.path, text.as_bytes()).map_err(|e| {
            ToolError::io(format!(
                "Could not save the policy file {}: {e}",
                self.path.display()
            ))
        })
    }

    /// Adds (or replaces, by id) a persisted grant.
    pub fn add(&self, grant: Grant) -> Result<(), ToolError> {
        let mut grants = self.load().grants;
        grants.retain(|g| g.id != grant.id);
        grants.push(Grant {
            lifetime: Lifetime::Always,
            ..grant
        });
        self.save(&grants)
    }

    /// Removes every persisted grant whose tool `lapses` says has lapsed (an MCP tool whose
    /// definition changed since it was granted); returns them.
    pub fn revoke_where(&self, lapses: impl Fn(&str) -> bool) -> Result<Vec<Grant>, ToolError> {
        let (lapsed, kept): (Vec<Grant>, Vec<Grant>) = self
            .load()
            .grants
            .into_iter()
            .partition(|g| lapses(&g.tool));
        if !lapsed.is_empty() {
            self.save(&kept)?;
        }
        Ok(lapsed)
    }

    /// Removes a persisted grant; returns it.
    pub fn revoke(&self, id: &str) -> Result<Grant, ToolError> {
        let mut grants = self.load().grants;
        let index = grants.iter().position(|g| g.id == id).ok_or_else(|| {
            ToolError::not_found(format!(
                "No saved grant {id}; `lantern policy list` shows them"
            ))
        })?;
        let removed = grants.remove(index);
        self.save(&grants)?;
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subject<'a>(tool: &'a str, risk: Risk, paths: &[&str]) -> Subject<'a> {
        Subject {
            tool,
            risk,
            paths: paths.iter().map(|p| p.to_string()).collect(),
            command: None,
            unpointed: Vec::new(),
            drops: Vec::new(),
        }
    }

    #[test]
    fn an_mcp_tool_asks_unless_granted_by_name_or_server_and_a_destructive_one_by_name_only() {
        let call = subject("time.get_current_time", Risk::Remote, &[]);
        assert!(matches!(decide(&call, &[]), Decision::Ask { .. }));
        let by_name = grant("time.get_current_time", Scope::Tool, Effect::Allow);
        let by_server = grant("time.*", Scope::Tool, Effect::Allow);
        assert!(matches!(
            decide(&call, std::slice::from_ref(&by_name)),
            Decision::Allow { .. }
        ));
        assert!(matches!(
            decide(&call, std::slice::from_ref(&by_server)),
            Decision::Allow { .. }
        ));
        // `time.*` is not `timer.x` nor the bare server name.
        for other in ["timer.get", "time", "time."] {
            let call = subject(other, Risk::Remote, &[]);
            assert!(
                matches!(
                    decide(&call, std::slice::from_ref(&by_server)),
                    Decision::Ask { .. }
                ),
                "{other}"
            );
        }
        let destructive = subject("files.delete", Risk::Exec, &[]);
        let server = grant("files.*", Scope::Tool, Effect::Allow);
        assert!(matches!(
            decide(&destructive, &[server]),
            Decision::Ask { .. }
        ));
        let named = grant("files.delete", Scope::Tool, Effect::Allow);
        assert!(matches!(
            decide(&destructive, &[named]),
            Decision::Allow { .. }
        ));
        // An answer for the whole server is kept as a grant for `time.*`.
        let answered = Grant::new(
            "time.get_current_time",
            Scope::Server,
            Effect::Allow,
            Lifetime::Session,
        )
        .unwrap();
        assert_eq!(
            (answered.tool.as_str(), &answered.scope),
            ("time.*", &Scope::Tool)
        );
        assert!(Grant::new("read_file", Scope::Server, Effect::Allow, Lifetime::Session).is_err());
        // A deny of the server wins over an allow of the tool.
        let deny = grant("time.*", Scope::Tool, Effect::Deny);
        assert!(matches!(
            decide(&call, &[by_name, deny]),
            Decision::Deny { .. }
        ));
    }

    #[test]
    fn a_write_to_a_file_nobody_pointed_at_is_asked_about_even_with_a_grant() {
        let mut call = subject("edit_file", Risk::Write, &["package.json"]);
        call.unpointed = vec!["package.json".to_string()];
        let allow = grant("edit_file", Scope::Tool, Effect::Allow);
        for grants in [vec![], vec![allow]] {
            match decide(&call, &grants) {
                Decision::Ask { rule } => {
                    assert!(rule.contains("package.json") && rule.contains("unsure target"))
                }
                other => panic!("{other:?}"),
            }
        }
        // A deny still denies, and a hard rule still wins.
        let deny = grant("edit_file", Scope::Tool, Effect::Deny);
        assert!(matches!(decide(&call, &[deny]), Decision::Deny { .. }));
        let mut git = subject("write_file", Risk::Write, &[".git/config"]);
        git.unpointed = vec![".git/config".to_string()];
        assert!(matches!(decide(&git, &[]), Decision::Deny { .. }));
    }

    #[test]
    fn a_write_that_drops_most_of_a_file_is_asked_about_even_with_a_grant() {
        let mut call = subject("write_file", Risk::Write, &["NOTES.md"]);
        call.drops = vec![DroppedLines {
            path: "NOTES.md".to_string(),
            dropped: 3,
            of: 4,
            lost: 3,
            asked_to_keep: false,
        }];
        let allow = grant("write_file", Scope::Tool, Effect::Allow);
        for grants in [vec![], vec![allow.clone()]] {
            match decide(&call, &grants) {
                Decision::Ask { rule } => assert_eq!(
                    rule,
                    "lines dropped: the write would drop 3 of the 4 non-blank lines of NOTES.md"
                ),
                other => panic!("{other:?}"),
            }
        }
        let deny = grant("write_file", Scope::Tool, Effect::Deny);
        assert!(matches!(decide(&call, &[deny]), Decision::Deny { .. }));
        // A rewrite that keeps most of the file is a change the grant covers…
        call.drops[0].dropped = 2;
        assert!(matches!(
            decide(&call, std::slice::from_ref(&allow)),
            Decision::Allow { .. }
        ));
        // …unless it writes over a line though the user asked to change nothing there.
        call.drops[0].asked_to_keep = true;
        match decide(&call, &[allow]) {
            Decision::Ask { rule } => assert_eq!(
                rule,
                "lines dropped: the write would drop 2 of the 4 non-blank lines of NOTES.md (3 written over, though the user asked to change nothing there)"
            ),
            other => panic!("{other:?}"),
        }
    }

    fn grant(tool: &str, scope: Scope, effect: Effect) -> Grant {
        Grant::new(tool, scope, effect, Lifetime::Session).unwrap()
    }

    #[test]
    fn defaults_follow_risk() {
        assert!(matches!(
            decide(&subject("read_file", Risk::Read, &["a"]), &[]),
            Decision::Allow { .. }
        ));
        assert!(matches!(
            decide(&subject("add_task", Risk::Safe, &[]), &[]),
            Decision::Allow { .. }
        ));
        assert!(matches!(
            decide(&subject("write_file", Risk::Write, &["a"]), &[]),
            Decision::Ask { .. }
        ));
    }

    #[test]
    fn hard_rules_beat_every_grant() {
        let grants = [grant("write_file", Scope::Tool, Effect::Allow)];
        let d = decide(
            &subject("write_file", Risk::Write, &[".git/config"]),
            &grants,
        );
        assert!(
            matches!(d, Decision::Deny { ref rule, .. } if rule.starts_with("hard rule")),
            "{d:?}"
        );
    }

    #[test]
    fn deny_beats_allow() {
        let mut deny = grant("write_file", Scope::Glob("secrets/*".into()), Effect::Deny);
        deny.message = Some("never touch secrets".into());
        let grants = [grant("write_file", Scope::Tool, Effect::Allow), deny];
        match decide(
            &subject("write_file", Risk::Write, &["secrets/key"]),
            &grants,
        ) {
            Decision::Deny { reason, .. } => assert_eq!(reason, "never touch secrets"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            decide(&subject("write_file", Risk::Write, &["src/a.rs"]), &grants),
            Decision::Allow { .. }
        ));
    }

    #[test]
    fn path_grants_cover_only_their_path_and_tool() {
        let grants = [grant(
            "write_file",
            Scope::Path("a.txt".into()),
            Effect::Allow,
        )];
        assert!(matches!(
            decide(&subject("write_file", Risk::Write, &["a.txt"]), &grants),
            Decision::Allow { .. }
        ));
        assert!(matches!(
            decide(&subject("write_file", Risk::Write, &["b.txt"]), &grants),
            Decision::Ask { .. }
        ));
        assert!(matches!(
            decide(&subject("run_command", Risk::Exec, &["a.txt"]), &grants),
            Decision::Ask { .. }
        ));
    }

    #[test]
    fn glob_star_stays_in_its_folder() {
        let grants = [grant(
            "write_file",
            Scope::Glob("src/*".into()),
            Effect::Allow,
        )];
        assert!(matches!(
            decide(&subject("write_file", Risk::Write, &["src/a.rs"]), &grants),
            Decision::Allow { .. }
        ));
        assert!(matches!(
            decide(
                &subject("write_file", Risk::Write, &["src/x/a.rs"]),
                &grants
            ),
            Decision::Ask { .. }
        ));
    }

    #[test]
    fn command_grants_are_exact() {
        let grants = [grant(
            "run_command",
            Scope::Command("git status".into()),
            Effect::Allow,
        )];
        let mut call = subject("run_command", Risk::Exec, &[]);
        call.command = Some("git status");
        assert!(matches!(decide(&call, &grants), Decision::Allow { .. }));
        for other in [
            "git status && rm -rf ~",
            "git status; ls",
            "git status | sh",
            "git status $(x)",
        ] {
            call.command = Some(other);
            assert!(
                matches!(decide(&call, &grants), Decision::Ask { .. }),
                "{other}"
            );
        }
    }

    #[test]
    fn exec_tools_need_the_exact_command_granted() {
        let grants = [
            grant("run_command", Scope::Tool, Effect::Allow),
            grant("run_command", Scope::Glob("**".into()), Effect::Allow),
        ];
        let mut call = subject("run_command", Risk::Exec, &[]);
        call.command = Some("ls");
        assert!(matches!(decide(&call, &grants), Decision::Ask { .. }));
        let deny = [grant("run_command", Scope::Tool, Effect::Deny)];
        assert!(matches!(decide(&call, &deny), Decision::Deny { .. }));
        let exact = [grant(
            "run_command",
            Scope::Command("ls".into()),
            Effect::Allow,
        )];
        assert!(matches!(decide(&call, &exact), Decision::Allow { .. }));
        call.command = Some("ls ");
        assert!(matches!(decide(&call, &exact), Decision::Ask { .. }));
    }

    #[test]
    fn grants_cannot_reach_outside() {
        for bad in ["../x", "/etc/*", "a/../../b", ""] {
            assert!(
                Grant::new(
                    "write_file",
                    Scope::Glob(bad.into()),
                    Effect::Allow,
                    Lifetime::Always
                )
                .is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn ids_are_stable() {
        let a = grant("write_file", Scope::Path("a".into()), Effect::Allow);
        let b = grant("write_file", Scope::Path("a".into()), Effect::Allow);
        assert_eq!(a.id, b.id);
    }

    #[test]
    fn always_grants_persist_and_revoke() {
        let dir = tempfile::tempdir().unwrap();
        let store = PolicyStore::for_workspace(dir.path(), Path::new("/w"));
        let g = Grant::new(
            "write_file",
            Scope::Glob("docs/**".into()),
            Effect::Allow,
            Lifetime::Always,
        )
        .unwrap();
        store.add(g.clone()).unwrap();
        store.add(g.clone()).unwrap();
        let loaded = store.load();
        assert_eq!(loaded.grants, vec![g.clone()]);
        assert!(loaded.warning.is_none());
        assert_eq!(store.revoke(&g.id).unwrap(), g);
        assert!(store.load().grants.is_empty());
        assert_eq!(
            store.revoke(&g.id).unwrap_err().kind,
            crate::error::ErrorType::NotFound
        );
    }

    #[test]
    fn a_corrupt_policy_file_is_kept_aside_and_grants_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = PolicyStore::for_workspace(dir.path(), Path::new("/w"));
        std::fs::create_dir_all(store.path().parent().unwrap()).unwrap();
        std::fs::write(store.path(), "{ not json").unwrap();
        let loaded = store.load();
        assert!(loaded.grants.is_empty());
        let warning = loaded.warning.unwrap();
        assert!(
            warning.contains("damaged") && warning.contains("kept as"),
            "{warning}"
        );
        assert!(!store.path().exists());
        let kept: Vec<_> = std::fs::read_dir(store.path().parent().unwrap())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains("corrupt"))
            .collect();
        assert_eq!(kept.len(), 1);
        assert_eq!(
            std::fs::read_to_string(kept[0].path()).unwrap(),
            "{ not json"
        );
    }
}
