//! The generic adapter's lines (universal events printed by an `--agent-cmd` program).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| runbook::fuzzing::generic(data));
