//! Where the time of reading Claude Code's lines goes, stage by stage: a measurement run by
//! hand, not a check (`cargo test --release --lib measure_claude_parse -- --ignored --nocapture`).

#![allow(
    clippy::disallowed_macros,
    reason = "a measurement run by hand prints its figures"
)]

use std::time::Duration;

use super::{Parser, fast};
use crate::agent::StdoutParser;
use crate::agent::scan::{Cursor, fixture_lines, median_of_five};

/// The stream measured: `RUNBOOK_MEASURE_STREAM` (e.g. the 150 MB stream `benches/adapters.py`
/// makes), else the recorded transcripts cycled to about 50 MB. The first two stages validate
/// any NDJSON, so they also measure other agents' streams.
fn stream() -> Vec<u8> {
    if let Some(path) = std::env::var_os("RUNBOOK_MEASURE_STREAM") {
        return std::fs::read(path).expect("RUNBOOK_MEASURE_STREAM names a readable file");
    }
    let lines = fixture_lines("claude");
    let mut data = Vec::new();
    while data.len() < 50_000_000 {
        for line in &lines {
            data.extend_from_slice(line.as_bytes());
            data.push(b'\n');
        }
    }
    data
}

fn cursor(line: &[u8]) -> Option<Cursor<'_>> {
    Cursor::ascii(line).or_else(|| Cursor::new(std::str::from_utf8(line).ok()?))
}

/// The median of five timings of `pass` over all lines.
fn median(lines: &[&[u8]], mut pass: impl FnMut(&[u8]) -> usize) -> Duration {
    median_of_five(|| lines.iter().map(|l| pass(l)).sum())
}

#[test]
#[ignore = "a measurement, not a check: run it by hand"]
fn measure_claude_parse() {
    let data = stream();
    let lines: Vec<&[u8]> = data
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let mut parser = Parser::default();
    let mut out = Vec::new();
    let stages: [(&str, Duration); 4] = [
        (
            "serde_json, validating only (IgnoredAny)",
            median(&lines, |l| {
                usize::from(serde_json::from_slice::<serde::de::IgnoredAny>(l).is_ok())
            }),
        ),
        (
            "the cursor, validating only (skip)",
            median(&lines, |l| {
                usize::from(cursor(l).and_then(|mut c| c.skip()).is_some())
            }),
        ),
        (
            "the cursor, reading the wire structs (fast::line)",
            median(&lines, |l| {
                usize::from(cursor(l).and_then(fast::line).is_some())
            }),
        ),
        (
            "the whole parser (lines to events)",
            median(&lines, |l| {
                parser.line(l, &mut out);
                let n = out.len();
                out.clear();
                n
            }),
        ),
    ];
    #[expect(clippy::print_stderr, reason = "the measurement's result")]
    {
        eprintln!(
            "{} MB, {} lines; median of 5 passes:",
            data.len() / 1_000_000,
            lines.len()
        );
        for (stage, took) in stages {
            let mbs = data.len() as f64 / 1e6 / took.as_secs_f64();
            eprintln!("  {stage}: {took:.1?} ({mbs:.0} MB/s)");
        }
    }
}
