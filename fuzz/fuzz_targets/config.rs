//! A `runbook.toml` (any configuration layer) and `RUNBOOK_*` variables, resolved and shown.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| runbook::fuzzing::config(data));
