//! ARCHITECTURE.md's lever table is the lever lists of `lantern_core::levers`, row for row:
//! a lever added, renamed or changed in the code is a lever changed in the document. Run with
//! `LANTERN_UPDATE_DOCS=1` to rewrite the table from the code.

use lantern_core::levers::{Lever, AGENT_LEVERS, GENERATION_LEVERS};
use std::path::Path;

const START: &str = "<!-- levers: made from crates/core/src/levers.rs by tests/lever_table.rs -->";
const END: &str = "<!-- /levers -->";

fn rows<T: Default>(kind: &str, levers: &[Lever<T>]) -> String {
    levers
        .iter()
        .map(|lever| {
            let default = if lever.default() { "on" } else { "off" };
            format!(
                "| `{}` | {kind} | {default} | {} | {} |\n",
                lever.name,
                lever.purpose.replace('|', "\\|"),
                lever.acts_in
            )
        })
        .collect()
}

fn table() -> String {
    format!(
        "{START}\n| lever | of | default | what it does | where it acts |\n|---|---|---|---|---|\n{}{}{END}",
        rows("generation", GENERATION_LEVERS),
        rows("agent", AGENT_LEVERS)
    )
}

#[test]
fn architecture_md_lists_every_lever_as_the_code_declares_it() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../ARCHITECTURE.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let start = doc
        .find(START)
        .expect("ARCHITECTURE.md has the lever table's start marker");
    let end = doc[start..].find(END).expect("the lever table ends") + start + END.len();
    let expected = table();
    if std::env::var_os("LANTERN_UPDATE_DOCS").is_some() {
        std::fs::write(&path, format!("{}{expected}{}", &doc[..start], &doc[end..])).unwrap();
        return;
    }
    assert_eq!(
        doc[start..end],
        expected,
        "the lever table differs from the code; LANTERN_UPDATE_DOCS=1 rewrites it"
    );
}

/// The command-line reference is written by hand, with a line on what each flag is for; it
/// must at least name every lever, so that a lever added is a flag documented.
#[test]
fn the_command_line_reference_names_every_lever() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../docs/cli.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    for lever in GENERATION_LEVERS {
        let flag = format!("`--{} on` or `off`", lever.name);
        assert!(doc.contains(&flag), "docs/cli.md has no row for {flag}");
    }
    for lever in AGENT_LEVERS {
        let named = format!("`{}`", lever.name);
        assert!(
            doc.contains(&named),
            "docs/cli.md's `--off` list does not name {named}"
        );
    }
}
