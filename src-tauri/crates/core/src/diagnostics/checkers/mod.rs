//! The checkers, one file each. [`CHECKERS`] is the one place a checker is registered: to add
//! one, write a file that implements [`Checker`] and add it to the list.
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

/// Every checker, in the order their reports are listed.
pub(super) static CHECKERS: &[&dyn Checker] = &[
    &cargo::Cargo,
    &tsc::Tsc,
    &eslint::Eslint,
    &ruff::Ruff,
    &python::PyCompile,
    &go_vet::GoVet,
];
