//! Where the time of reading an agent's stream goes, stage by stage, inside one process: the
//! measurements run by hand (test builds only, every test `#[ignore]`d), in one place, through
//! the adapters' ordinary entry points. End-to-end figures are `benches/adapters.py`'s.
//!
//! ```sh
//! cargo test --release --lib measure_claude_parse -- --ignored --nocapture
//! RUNBOOK_MEASURE_STREAM=/path/to/tiny5000000.ndjson \
//!     cargo test --release --lib measure_codex_tiny -- --ignored --nocapture
//! ```
//! Without `RUNBOOK_MEASURE_STREAM`, Claude Code's recorded transcripts cycled to about 50 MB,
//! and 1,000,000 tiny Codex lines made here.

#![allow(
    clippy::disallowed_macros,
    reason = "a measurement run by hand prints its figures"
)]

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use crate::agent::scan::{Cursor, fixture_lines};
use crate::agent::{Adapter, Claude, Codex, ParseContext, StdoutParser};
use crate::event::{Event, EventKind, Turn};

/// The median of five timings of `pass`.
fn median_of_five(mut pass: impl FnMut() -> usize) -> Duration {
    let mut took: Vec<Duration> = (0..5)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(pass());
            start.elapsed()
        })
        .collect();
    took.sort();
    took[2]
}

/// `RUNBOOK_MEASURE_STREAM`'s bytes, or `made` when it is not set.
fn stream(made: impl FnOnce() -> Vec<u8>) -> Vec<u8> {
    match std::env::var_os("RUNBOOK_MEASURE_STREAM") {
        Some(path) => std::fs::read(path).expect("RUNBOOK_MEASURE_STREAM names a readable file"),
        None => made(),
    }
}

fn lines_of(data: &[u8]) -> Vec<&[u8]> {
    data.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect()
}

fn parser(adapter: &dyn Adapter) -> Box<dyn StdoutParser> {
    adapter.stdout_parser(ParseContext::new(PathBuf::from("/")))
}

/// The lines the cursor validates, skipping each value.
fn validated(lines: &[&[u8]]) -> usize {
    fn cursor(l: &[u8]) -> Option<Cursor<'_>> {
        Cursor::ascii(l).or_else(|| Cursor::new(std::str::from_utf8(l).ok()?))
    }
    lines
        .iter()
        .filter(|l| cursor(l).and_then(|mut c| c.skip()).is_some())
        .count()
}

/// The events a fresh parser makes of `lines`, dropped a batch of 512 lines at a time.
fn parsed(adapter: &dyn Adapter, lines: &[&[u8]]) -> usize {
    let mut parser = parser(adapter);
    let mut out: Vec<EventKind> = Vec::new();
    let mut n = 0;
    for chunk in lines.chunks(512) {
        out.clear();
        for l in chunk {
            parser.line(l, &mut out);
        }
        n += out.len();
    }
    n
}

/// The events the parser makes of `lines`, stamped as the dispatcher would.
fn stamped(adapter: &dyn Adapter, lines: &[&[u8]]) -> Vec<Event> {
    let mut parser = parser(adapter);
    let mut made = Vec::new();
    for l in lines {
        parser.line(l, &mut made);
    }
    let ts = SystemTime::now();
    made.into_iter()
        .enumerate()
        .map(|(seq, kind)| Event {
            seq: seq as u64,
            ts,
            turn: Turn::FIRST,
            kind,
        })
        .collect()
}

/// The bytes of the events encoded as JSON lines.
fn encoded(stamped: &[Event]) -> usize {
    let mut buf = Vec::with_capacity(1 << 20);
    let mut n = 0;
    for ev in stamped {
        crate::encode::event(&mut buf, ev).expect("encodes");
        buf.push(b'\n');
        if buf.len() > 1 << 19 {
            n += buf.len();
            buf.clear();
        }
    }
    n
}

fn report(data: &[u8], lines: usize, stages: &[(&str, Duration)]) {
    #[expect(clippy::print_stderr, reason = "the measurement's result")]
    {
        eprintln!(
            "{} MB, {lines} lines; median of 5 passes:",
            data.len() / 1_000_000
        );
        for (stage, took) in stages {
            let mbs = data.len() as f64 / 1e6 / took.as_secs_f64();
            let per = took.as_nanos() as f64 / lines as f64;
            eprintln!("  {stage}: {took:.1?} ({mbs:.0} MB/s, {per:.0} ns a line)");
        }
    }
}

#[test]
#[ignore = "a measurement, not a check: run it by hand"]
fn measure_claude_parse() {
    let data = stream(|| {
        let lines = fixture_lines("claude");
        let mut data = Vec::new();
        while data.len() < 50_000_000 {
            for line in &lines {
                data.extend_from_slice(line.as_bytes());
                data.push(b'\n');
            }
        }
        data
    });
    let lines = lines_of(&data);
    let stages = [
        (
            "serde_json, validating only (IgnoredAny)",
            median_of_five(|| {
                lines
                    .iter()
                    .filter(|l| serde_json::from_slice::<serde::de::IgnoredAny>(l).is_ok())
                    .count()
            }),
        ),
        (
            "the cursor, validating only (skip)",
            median_of_five(|| validated(&lines)),
        ),
        (
            "the whole parser, lines to events",
            median_of_five(|| parsed(&Claude, &lines)),
        ),
    ];
    report(&data, lines.len(), &stages);
}

#[test]
#[ignore = "a measurement, not a check: run it by hand"]
fn measure_codex_tiny() {
    let data = stream(|| {
        let mut data = b"{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n".to_vec();
        for i in 0..333_333 {
            data.extend_from_slice(format!(
                "{{\"type\":\"item.started\",\"item\":{{\"id\":\"item_{i:07}\",\"type\":\"command_execution\",\"command\":\"ls\"}}}}\n\
                 {{\"type\":\"item.completed\",\"item\":{{\"id\":\"item_{i:07}\",\"type\":\"command_execution\",\"exit_code\":0}}}}\n\
                 {{\"type\":\"item.completed\",\"item\":{{\"id\":\"item_{i:07}\",\"type\":\"agent_message\",\"text\":\"ok\"}}}}\n"
            ).as_bytes());
        }
        data
    });
    let lines = lines_of(&data);
    let events = stamped(&Codex, &lines);
    let stages = [
        (
            "the cursor, validating only (skip)",
            median_of_five(|| validated(&lines)),
        ),
        (
            "the whole parser, lines to events, dropped a batch at a time",
            median_of_five(|| parsed(&Codex, &lines)),
        ),
        (
            "the events encoded (encode::event)",
            median_of_five(|| encoded(&events)),
        ),
        (
            "the events folded (RunStats::observe)",
            median_of_five(|| {
                let mut stats = crate::stats::RunStats::default();
                for ev in &events {
                    stats.observe(ev);
                }
                events.len()
            }),
        ),
    ];
    report(&data, lines.len(), &stages);
}
