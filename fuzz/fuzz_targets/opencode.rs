//! OpenCode's stdout and stderr lines, through the adapter's line feed.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| runbook::fuzzing::opencode(data));
