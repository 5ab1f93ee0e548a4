//! The reading ceiling: which read a task is given, and a run whose first call is that read.

use lantern_core::agent::AgentConfig;
use lantern_core::model::ScriptedModel;
use lantern_core::toolbox::Toolbox;
use lantern_eval::{given_read, run_task, EvalTask, FirstCallGiven, Shown};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A folder of fixtures holding one project, `kiosk`, removed when dropped.
struct Fixtures(PathBuf);

impl Fixtures {
    fn kiosk(files: &[(&str, &str)]) -> Fixtures {
        let root = std::env::temp_dir().join(format!(
            "lantern-given-reads-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        for (path, text) in files {
            let path = root.join("kiosk").join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        Fixtures(root)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Fixtures {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn task(category: &str, prompt: &str, answer: &str) -> EvalTask {
    serde_json::from_value(json!({
        "id": "kiosk-task", "fixture": "kiosk", "category": category, "prompt": prompt,
        "needs_tool": true, "tools": ["read_file", "search_code"],
        "success": {"answer_contains_any": [answer]}
    }))
    .unwrap()
}

const SETTINGS: &str =
    "[net]\nhost = \"0.0.0.0\"\nlisten_port = 7311\n\n[menu]\nlanguage = \"fr\"\n";

#[test]
fn the_read_given_is_the_line_that_says_the_answer_and_is_most_about_the_question() {
    let fixtures = Fixtures::kiosk(&[
        (
            "NOTES.txt",
            "Ticket 7311 closed on Monday.\nThe kiosk is fine.\n",
        ),
        ("conf/settings.ini", SETTINGS),
    ]);
    let asked = task("lookup", "kiosk listen_port value?", "7311");
    let read = given_read(&asked, fixtures.path(), Shown::Lines).unwrap();
    assert_eq!(read.tool, "read_file");
    assert_eq!(
        read.args,
        json!({"path": "conf/settings.ini", "start_line": 1, "end_line": 6})
    );
    let whole = given_read(&asked, fixtures.path(), Shown::File).unwrap();
    assert_eq!(whole.args, json!({"path": "conf/settings.ini"}));
}

#[test]
fn no_read_is_given_where_no_line_says_the_answer_or_the_answer_is_no_value() {
    let fixtures = Fixtures::kiosk(&[("conf/settings.ini", SETTINGS)]);
    let root = fixtures.path();
    let unsaid = task("lookup", "kiosk listen_port value?", "9999");
    assert_eq!(given_read(&unsaid, root, Shown::Lines), None);
    // A count of files is in no line; a line that happens to hold the number is no answer.
    let count = task("listing", "Count the ini files under conf.", "1");
    assert_eq!(given_read(&count, root, Shown::Lines), None);
    // An explanation is checked by words any line of prose may hold.
    let explain = task("explain", "menu section: its purpose?", "language");
    assert_eq!(given_read(&explain, root, Shown::Lines), None);
}

#[test]
fn a_run_with_a_given_read_starts_with_that_read_and_the_model_writes_the_rest() {
    let fixtures = Fixtures::kiosk(&[("conf/settings.ini", SETTINGS)]);
    let asked = task("lookup", "kiosk listen_port value?", "7311");
    let read = given_read(&asked, fixtures.path(), Shown::Lines).unwrap();
    let model = ScriptedModel::new(["The kiosk listens on port 7311."]);
    let mut given = FirstCallGiven::new(Box::new(model), read);
    let toolbox = Arc::new(Toolbox::standard());
    let config = AgentConfig::default();
    let outcome = run_task(&asked, 0, fixtures.path(), &toolbox, &mut given, &config);
    assert_eq!(
        outcome.calls,
        [r#"read_file {"path":"conf/settings.ini","start_line":1,"end_line":6}"#]
    );
    assert_eq!(outcome.first_tool.as_deref(), Some("read_file"));
    assert_eq!(outcome.steps, 2);
    assert_eq!(outcome.model_answer, "The kiosk listens on port 7311.");
    assert!(outcome.success);
    // The wrapped model is handed back for the next run, its script used up.
    let mut model = given.into_inner();
    assert_eq!(model.name(), "scripted");
    let again = run_task(
        &asked,
        0,
        fixtures.path(),
        &toolbox,
        model.as_mut(),
        &config,
    );
    assert!(!again.success);
}
