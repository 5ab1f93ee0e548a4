//! The turn parser on a whole response: never panics, and what it finds lies in the text.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lantern_fuzz::parser_whole(data));
