//! Where the time of a stream of tiny Codex lines goes on the reader's and the supervisor's
//! threads, stage by stage: a measurement run by hand, not a check (`RUNBOOK_MEASURE_STREAM=
//! /path/to/tiny5000000.ndjson cargo test --release --lib measure_codex_tiny -- --ignored
//! --nocapture`; without the variable, 1,000,000 lines made here).

#![allow(
    clippy::disallowed_macros,
    reason = "a measurement run by hand prints its figures"
)]

use std::time::{Duration, SystemTime};

use super::{Parser, fast};
use crate::agent::StdoutParser;
use crate::agent::scan::{Cursor, median_of_five};
use crate::event::{Event, EventKind, Turn};

fn stream() -> Vec<u8> {
    if let Some(path) = std::env::var_os("RUNBOOK_MEASURE_STREAM") {
        return std::fs::read(path).expect("RUNBOOK_MEASURE_STREAM names a readable file");
    }
    let mut data = b"{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n".to_vec();
    for i in 0..333_333 {
        data.extend_from_slice(format!(
            "{{\"type\":\"item.started\",\"item\":{{\"id\":\"item_{i:07}\",\"type\":\"command_execution\",\"command\":\"ls\"}}}}\n\
             {{\"type\":\"item.completed\",\"item\":{{\"id\":\"item_{i:07}\",\"type\":\"command_execution\",\"exit_code\":0}}}}\n\
             {{\"type\":\"item.completed\",\"item\":{{\"id\":\"item_{i:07}\",\"type\":\"agent_message\",\"text\":\"ok\"}}}}\n"
        ).as_bytes());
    }
    data
}

#[test]
#[ignore = "a measurement, not a check: run it by hand"]
fn measure_codex_tiny() {
    let data = stream();
    let lines: Vec<&[u8]> = data
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let stamped = stamped(&lines);
    let stages: [(&str, Duration); 5] = [
        (
            "the cursor, validating only (skip)",
            median_of_five(|| validated(&lines)),
        ),
        (
            "the cursor, reading the wire structs (an item in place, else fast::line)",
            median_of_five(|| read_fast(&lines)),
        ),
        (
            "the whole parser, lines to events, dropped a batch at a time",
            median_of_five(|| parsed(&lines)),
        ),
        (
            "the events encoded (encode::event)",
            median_of_five(|| encoded(&stamped)),
        ),
        (
            "the events folded (RunStats::observe)",
            median_of_five(|| {
                let mut stats = crate::stats::RunStats::default();
                for ev in &stamped {
                    stats.observe(ev);
                }
                stamped.len()
            }),
        ),
    ];
    #[expect(clippy::print_stderr, reason = "the measurement's result")]
    {
        eprintln!(
            "{} MB, {} lines, {} events; median of 5 passes:",
            data.len() / 1_000_000,
            lines.len(),
            stamped.len()
        );
        for (stage, took) in stages {
            let per = took.as_nanos() as f64 / lines.len() as f64;
            eprintln!("  {stage}: {took:.1?} ({per:.0} ns a line)");
        }
    }
}

/// The events the parser makes of `lines`, stamped as the dispatcher would.
fn stamped(lines: &[&[u8]]) -> Vec<Event> {
    let mut parser = Parser::default();
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

/// The lines the cursor validates (skipping each value).
fn validated(lines: &[&[u8]]) -> usize {
    lines
        .iter()
        .filter(|l| Cursor::ascii(l).and_then(|mut c| c.skip()).is_some())
        .count()
}

/// The lines the fast path reads into its wire structs.
fn read_fast(lines: &[&[u8]]) -> usize {
    lines
        .iter()
        .filter(|l| {
            Cursor::ascii(l).is_some_and(|c| {
                fast::item_line(c.clone(), |_, item| std::hint::black_box(item).id.len())
                    .or_else(|| fast::line(c).map(|line| line.kind.len()))
                    .is_some()
            })
        })
        .count()
}

/// The events of the whole parser, dropped a batch of 512 lines at a time, as the reader did
/// until its batches grew (so that the numbers compare with the earlier passes').
fn parsed(lines: &[&[u8]]) -> usize {
    let mut parser = Parser::default();
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
