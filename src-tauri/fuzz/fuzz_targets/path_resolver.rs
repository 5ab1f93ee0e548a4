//! The sandbox's resolver on arbitrary path strings over a tree with links inside and to
//! outside: a resolved path is always inside the workspace.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lantern_fuzz::path_resolver(data));
