//! The checkers, one file each. [`CHECKERS`] is the one place a checker is registered: to add
//! one, write a file that implements [`Checker`], declare it below and add it to the list.
//!
//! The parsers are pure functions of the output, tested on recorded samples; the programs
//! themselves are exercised by the fixture tests.

mod cargo;
mod eslint;
mod go_vet;
mod python;
mod ruff;
mod tsc;

use super::checker::Checker;

/// Every checker, in the order their reports are listed. A checker that only runs in another's
/// place (py_compile for ruff) is listed too: its environment must hold for all of them.
pub(super) static CHECKERS: &[&dyn Checker] = &[
    &cargo::Cargo,
    &tsc::Tsc,
    &eslint::Eslint,
    &ruff::Ruff,
    &python::PyCompile,
    &go_vet::GoVet,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Results are cached by checker name, and a fallback's environment is set only when it is
    /// listed.
    #[test]
    fn names_are_unique_and_fallbacks_listed() {
        let names: Vec<&str> = CHECKERS.iter().map(|c| c.name()).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        for checker in CHECKERS {
            if let Some(fallback) = checker.fallback() {
                assert!(names.contains(&fallback.name()), "{}", fallback.name());
            }
        }
    }
}
