//! The turn parser on a streamed response cut into pieces chosen by the input: the same turn
//! as parsing it whole, and a call reported complete is final.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lantern_fuzz::parser_streamed(data));
