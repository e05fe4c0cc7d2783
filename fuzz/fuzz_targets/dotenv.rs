//! A `.env` file with `${VAR}` references.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| runbook::fuzzing::dotenv(data));
