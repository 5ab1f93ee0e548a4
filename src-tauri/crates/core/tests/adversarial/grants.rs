//! Grants that try to widen themselves, and the folders no grant opens.

use super::*;

#[test]
fn git_and_lantern_folders_are_never_written_whatever_the_grants() {
    let mut fx = Fx::new();
    fx.write(".git/config", "[core]");
    fx.write("vendor/lib/.git/HEAD", "ref: main");
    fx.write(".lantern/state.json", "{}");
    fx.link("gitlink", ".git");
    fx.link("docs/evil", "../.git");
    // The user grants every write for the session first: the hard rules still win.
    let mut grant_all = FixedAnswer(Answer::AllowSession { scope: Scope::Tool });
    assert_ok(
        &fx.call_with("write_file", write("ok.txt"), &mut grant_all),
        "granted",
    );
    for raw in [
        ".git/config",
        ".git/hooks/pre-commit",
        "./.git/config",
        "x/../.git/config",
        ".GIT/config",
        ".Git/HEAD",
        "vendor/lib/.git/HEAD",
        "a/b/c/.git/new",
        ".git",
        ".lantern/state.json",
        ".lantern/new.json",
        "gitlink/config",
        "docs/evil/config",
    ] {
        let result = fx.call_with("write_file", write(raw), &mut grant_all);
        assert_error(&result, ErrorType::PermissionDenied, raw);
    }
    assert_eq!(
        std::fs::read_to_string(fx.root.join(".git/config")).unwrap(),
        "[core]"
    );
    assert_eq!(
        std::fs::read_to_string(fx.root.join("vendor/lib/.git/HEAD")).unwrap(),
        "ref: main"
    );
    assert_eq!(
        std::fs::read_to_string(fx.root.join(".lantern/state.json")).unwrap(),
        "{}"
    );
    assert!(!fx.root.join("a").exists() && !fx.root.join(".git/hooks").exists());
    // Reading them is fine.
    let data = assert_ok(&fx.call("read_file", read(".git/config")), "read .git");
    assert_eq!(data["content"], "[core]");
    fx.assert_outside_untouched();
}

// ---- grants that try to widen themselves ----

/// Answers from a list and counts the questions.
struct Answers {
    answers: Vec<Answer>,
    asked: Vec<PermissionRequest>,
}

impl Confirmer for Answers {
    fn confirm(&mut self, request: &PermissionRequest) -> Answer {
        self.asked.push(request.clone());
        if self.answers.is_empty() {
            Answer::Deny { message: None }
        } else {
            self.answers.remove(0)
        }
    }
}

#[test]
fn grants_that_reach_outside_are_not_recorded_and_cover_nothing_more() {
    for scope in [
        Scope::Glob("../**".into()),
        Scope::Glob("/etc/*".into()),
        Scope::Glob("a/../../**".into()),
        Scope::Glob("**/../../*".into()),
        Scope::Glob("".into()),
        Scope::Path("../outside/secret.txt".into()),
        Scope::Path("/tmp/x".into()),
        Scope::Path("a\0b".into()),
        Scope::Command("   ".into()),
    ] {
        let mut fx = Fx::new();
        let mut answers = Answers {
            answers: vec![Answer::AllowAlways {
                scope: scope.clone(),
            }],
            asked: Vec::new(),
        };
        // The user said yes to this call; the widened grant itself is refused, so it is
        // allowed once and nothing more.
        assert_ok(
            &fx.call_with("write_file", write("first.txt"), &mut answers),
            &format!("{scope:?}"),
        );
        assert_eq!(fx.session.grants().count(), 0, "{scope:?} was recorded");
        let second = fx.call_with("write_file", write("second.txt"), &mut answers);
        assert_error(
            &second,
            ErrorType::PermissionDenied,
            &format!("{scope:?} second"),
        );
        assert_eq!(
            answers.asked.len(),
            2,
            "{scope:?}: the second write must ask again"
        );
        assert!(!fx.root.join("second.txt").exists());
        fx.assert_outside_untouched();
    }
}

#[test]
fn grants_cover_only_what_they_name() {
    let mut fx = Fx::new();
    fx.write("docs/readme.md", "docs");
    fx.write("src/main.rs", "fn main() {}");
    fx.link("docs/src-link", "../src");
    // A command grant given for a write: write_file runs no command, so it covers nothing.
    // A glob grant for docs/**: not src/ reached through a link in docs/, not docs/../src.
    let mut answers = Answers {
        answers: vec![Answer::AllowSession {
            scope: Scope::Command("ls".into()),
        }],
        asked: Vec::new(),
    };
    assert_ok(
        &fx.call_with("write_file", write("a.txt"), &mut answers),
        "command grant",
    );
    assert_error(
        &fx.call_with("write_file", write("b.txt"), &mut answers),
        ErrorType::PermissionDenied,
        "asked again",
    );
    assert_eq!(answers.asked.len(), 2);
    answers.answers = vec![Answer::AllowSession {
        scope: Scope::Glob("docs/**".into()),
    }];
    assert_ok(
        &fx.call_with("write_file", write("docs/one.md"), &mut answers),
        "glob grant",
    );
    assert_ok(
        &fx.call_with("write_file", write("docs/deeper/two.md"), &mut answers),
        "covered",
    );
    assert_eq!(
        answers.asked.len(),
        3,
        "docs/** covers docs/deeper/two.md without asking"
    );
    for outside_the_grant in ["docs/src-link/main.rs", "docs/../src/main.rs", "docs"] {
        let result = fx.call_with("write_file", write(outside_the_grant), &mut answers);
        assert_error(&result, ErrorType::PermissionDenied, outside_the_grant);
    }
    assert_eq!(
        answers.asked.len(),
        6,
        "each call outside docs/** was asked about"
    );
    assert_eq!(
        std::fs::read_to_string(fx.root.join("src/main.rs")).unwrap(),
        "fn main() {}"
    );
    fx.assert_outside_untouched();
}

// ---- the task tools and argument validation ----
