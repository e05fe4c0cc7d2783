//! A `result.json` read as `list` and `status` read it.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| runbook::fuzzing::receipt(data));
