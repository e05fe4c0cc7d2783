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
//! and 1,000,000 tiny Codex lines made here; `measure_stuck_detector` reads 200,000 OpenCode
//! lines shaped as the fake agent's `FAKE_AGENT_GENERATE` output, made here, and times the loop
//! detector (`--stuck`) on their events.

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

/// One OpenCode line of each kind the fake agent's `FAKE_AGENT_GENERATE` writes, for step
/// `step` (tool calls cycling read, edit, bash; every 600th a bash call with two 64 KiB outputs).
fn opencode_line(kind: &str, step: u64, call: u64, big: &str) -> String {
    let head = format!(
        "\"timestamp\":{},\"sessionID\":\"ses_1\"",
        1_700_000_000_000 + call
    );
    let (root, n) = ("/home/dev/demo", step);
    let tool = |tool: &str, input: &str, output: &str, metadata: &str| {
        format!(
            "{{\"type\":\"tool_use\",{head},\"part\":{{\"type\":\"tool\",\"tool\":\"{tool}\",\"callID\":\"call_{call}\",\"state\":{{\"status\":\"completed\",\"input\":{input},\"output\":\"{output}\",\"metadata\":{metadata},\"title\":\"t\",\"time\":{{\"start\":1,\"end\":2}}}},\"id\":\"prt_{call}\",\"sessionID\":\"ses_1\",\"messageID\":\"msg_{step}\"}}}}"
        )
    };
    match kind {
        "start" => format!(
            "{{\"type\":\"step_start\",{head},\"part\":{{\"id\":\"prt_s{step}\",\"messageID\":\"msg_{step}\",\"sessionID\":\"ses_1\",\"snapshot\":\"abc\",\"type\":\"step-start\"}}}}"
        ),
        "text" => format!(
            "{{\"type\":\"text\",{head},\"part\":{{\"id\":\"prt_t{step}\",\"messageID\":\"msg_{step}\",\"sessionID\":\"ses_1\",\"type\":\"text\",\"text\":\"Now I'll make the edit and run the tests.\",\"time\":{{\"start\":1,\"end\":2}}}}}}"
        ),
        "read" => tool(
            "read",
            &format!("{{\"filePath\":\"{root}/src/module_{n}.rs\"}}"),
            &format!(
                "<path>{root}/src/module_{n}.rs</path>\\n<content>\\n1: //! Module {n}.\\n2: pub fn answer() -> u32 {{ 42 }}\\n</content>"
            ),
            &format!("{{\"preview\":\"//! Module {n}.\",\"truncated\":false}}"),
        ),
        "edit" => tool(
            "edit",
            &format!(
                "{{\"filePath\":\"{root}/src/module_{n}.rs\",\"oldString\":\"    42\",\"newString\":\"    // The answer.\\n    42\"}}"
            ),
            "Edit applied successfully.",
            &format!(
                "{{\"diff\":\"--- {root}/src/module_{n}.rs\\n+++ {root}/src/module_{n}.rs\\n+    // The answer.\\n\",\"truncated\":false}}"
            ),
        ),
        "bash" => {
            let out = "\\nrunning 3 tests\\n...\\ntest result: ok. 3 passed; 0 failed\\n\\n";
            tool(
                "bash",
                &format!("{{\"command\":\"cargo test -q module_{n}\"}}"),
                out,
                &format!("{{\"output\":\"{out}\",\"exit\":0,\"truncated\":false}}"),
            )
        }
        "big" => tool(
            "bash",
            "{\"command\":\"cargo build -vv 2>&1\"}",
            big,
            &format!("{{\"output\":\"{big}\",\"exit\":0,\"truncated\":false}}"),
        ),
        _ => format!(
            "{{\"type\":\"step_finish\",{head},\"part\":{{\"id\":\"prt_f{step}\",\"reason\":\"tool-calls\",\"snapshot\":\"abc\",\"messageID\":\"msg_{step}\",\"sessionID\":\"ses_1\",\"type\":\"step-finish\",\"tokens\":{{\"total\":1200,\"input\":1000,\"output\":200,\"reasoning\":0,\"cache\":{{\"write\":0,\"read\":0}}}},\"cost\":0.001}}}}"
        ),
    }
}

/// About `events` lines shaped as the fake agent's `FAKE_AGENT_GENERATE` output.
fn opencode_generated(events: u64) -> Vec<u8> {
    let mut big = String::new();
    for i in 0.. {
        if big.len() >= 65_536 {
            break;
        }
        big.push_str(&format!(
            "   Compiling crate_{i:05} v0.1.0 (/home/dev/.cargo/registry/src/crate_{i:05})\\n"
        ));
    }
    let (mut data, mut lines, mut call, mut step) = (Vec::new(), 0, 0u64, 0u64);
    let tools = ["read", "edit", "bash"];
    while lines < events {
        let mut step_lines = vec!["start", "text"];
        for _ in 0..2 + step % 2 {
            call += 1;
            step_lines.push(if call.is_multiple_of(600) {
                "big"
            } else {
                tools[((call - 1) % 3) as usize]
            });
        }
        step_lines.push("finish");
        for kind in step_lines {
            data.extend_from_slice(opencode_line(kind, step, call, &big).as_bytes());
            data.push(b'\n');
            lines += 1;
        }
        step += 1;
    }
    data
}

#[test]
#[ignore = "a measurement, not a check: run it by hand"]
fn measure_stuck_detector() {
    use crate::stuck::{Detector, Mode, Thresholds};
    let data = stream(|| opencode_generated(200_000));
    let lines = lines_of(&data);
    let events = stamped(&crate::agent::OpenCode, &lines);
    let tools = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::ToolCompleted(_)))
        .count();
    let verdicts = {
        let mut detector = Detector::new(Mode::Warn, Thresholds::default()).expect("on");
        events.iter().filter_map(|e| detector.observe(e)).count()
    };
    let stages = [
        (
            "the events walked, no detector (--stuck off)",
            median_of_five(|| {
                events
                    .iter()
                    .filter(|e| std::hint::black_box(e).seq != u64::MAX)
                    .count()
            }),
        ),
        (
            "the events through the detector (--stuck warn)",
            median_of_five(|| {
                let mut detector = Detector::new(Mode::Warn, Thresholds::default()).expect("on");
                events
                    .iter()
                    .filter_map(|e| detector.observe(std::hint::black_box(e)))
                    .count()
            }),
        ),
        (
            "the events folded (RunStats::observe), for scale",
            median_of_five(|| {
                let mut stats = crate::stats::RunStats::default();
                for ev in &events {
                    stats.observe(ev);
                }
                events.len()
            }),
        ),
    ];
    #[expect(clippy::print_stderr, reason = "the measurement's result")]
    {
        eprintln!(
            "{} events ({tools} tool calls), {verdicts} verdicts; per event:",
            events.len()
        );
        for (stage, took) in &stages {
            let per = took.as_nanos() as f64 / events.len() as f64;
            eprintln!("  {stage}: {took:.1?} ({per:.1} ns an event)");
        }
    }
}
