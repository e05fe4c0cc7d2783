//! OpenCode's fast line reader against serde_json, then the whole adapter.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| runbook::fuzzing::opencode_fast(data));
