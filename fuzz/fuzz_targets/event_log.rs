//! An `events.ndjson` read back as `status`, `list`, `replay` and `follow` read it.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| runbook::fuzzing::event_log(data));
