//! Benchmarks for inspecting runs from another process:
//! - `runbook status --live`: latency from an event appended to `events.ndjson` to that event
//!   printed on the follower's stdout, and the follower's CPU while the run is silent;
//! - `runbook list`: wall time over 10,000 run directories.
//!
//! `cargo bench --bench inspect` prints a markdown table (see BENCHMARKS.md).

#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "benchmarks write their own fixtures and print their figures"
)]
#![expect(
    clippy::print_stdout,
    reason = "a benchmark reports its table on stdout"
)]

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

const RUNBOOK: &str = env!("CARGO_BIN_EXE_runbook");
/// Events appended in the latency run, and the gap between them.
const EVENTS: usize = 2000;
const GAP: Duration = Duration::from_millis(5);
/// Runs in the list benchmark, and how many times it is timed.
const RUNS: usize = 10_000;
const LIST_REPEATS: usize = 15;
/// How long the silent-follower CPU measurement lasts.
const SILENCE: Duration = Duration::from_secs(20);

fn main() {
    let tmp = std::env::temp_dir().join(format!("runbook-bench-inspect-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp).unwrap();

    let (lat, idle_cpu) = live_latency(&tmp.join("live"));
    let (all, top) = list_time(&tmp.join("list"));
    let _ = fs::remove_dir_all(&tmp);

    println!("| measurement | result | target |");
    println!("| --- | --- | --- |");
    println!(
        "| `status --live`: event appended → printed ({EVENTS} events, {} ms apart) | p50 {:.2} ms · p99 {:.2} ms · max {:.2} ms | p99 ≤ 50 ms |",
        GAP.as_millis(),
        lat[0],
        lat[1],
        lat[2]
    );
    println!(
        "| `status --live` following a silent run for {} s: CPU used | {:.3} s | no busy polling |",
        SILENCE.as_secs(),
        idle_cpu
    );
    println!(
        "| `list --all` over {RUNS} runs (median of {LIST_REPEATS}) | {:.0} ms (p95 {:.0} ms) | ≤ 200 ms |",
        all[0], all[1]
    );
    println!(
        "| `list` (newest 20) over {RUNS} runs (median of {LIST_REPEATS}) | {:.1} ms | |",
        top[0]
    );
}

/// A template of a real event line: the text carries the moment it was written.
fn text_event(seq: u64, t_ns: u128) -> String {
    format!(
        r#"{{"seq":{seq},"ts":"{}","turn":{{"index":0,"kind":"start"}},"type":"text","text":"t_ns={t_ns}"}}"#,
        humantime::format_rfc3339_micros(SystemTime::now())
    )
}

fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// Appends events to a run's log while `status --live --json` follows it; returns the latency
/// percentiles (ms) and the follower's CPU seconds during a silent spell.
fn live_latency(runs: &Path) -> ([f64; 3], f64) {
    let id = "20991231-235959-bench";
    let dir = runs.join(id);
    fs::create_dir_all(&dir).unwrap();
    let mut log = fs::File::create(dir.join("events.ndjson")).unwrap();
    // The supervisor is this process: alive for the whole measurement.
    let started = format!(
        r#"{{"seq":0,"ts":"{}","turn":{{"index":0,"kind":"start"}},"type":"run.started","schema_version":1,"run_id":"{id}","runbook_version":"0","agent":"opencode","prompt":"bench","cwd":"/","run_dir":"{}","pid":{},"limits":{{"inactivity_timeout_ms":180000,"kill_grace_ms":10000}}}}"#,
        humantime::format_rfc3339_micros(SystemTime::now()),
        dir.display(),
        std::process::id()
    );
    writeln!(log, "{started}").unwrap();

    let mut follower = Command::new(RUNBOOK)
        .args([
            "status",
            "--live",
            "--json",
            "--runs-dir",
            runs.to_str().unwrap(),
            id,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = follower.id();
    let stdout = follower.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut latencies = Vec::with_capacity(EVENTS);
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap();
            let arrived = now_ns();
            if let Some(i) = line.find("t_ns=") {
                let sent: u128 = line[i + 5..]
                    .trim_end_matches(|c: char| !c.is_ascii_digit())
                    .parse()
                    .unwrap();
                latencies.push((arrived - sent) as f64 / 1e6);
            }
        }
        latencies
    });
    std::thread::sleep(Duration::from_millis(500));

    let mut next = Instant::now();
    for seq in 1..=EVENTS as u64 {
        next += GAP;
        while Instant::now() < next {
            std::thread::sleep(next - Instant::now());
        }
        let line = text_event(seq, now_ns()) + "\n";
        log.write_all(line.as_bytes()).unwrap();
    }

    let before = cpu_seconds(pid);
    std::thread::sleep(SILENCE);
    let idle_cpu = cpu_seconds(pid) - before;

    let finished = format!(
        r#"{{"seq":{},"ts":"{}","turn":{{"index":0,"kind":"start"}},"type":"run.finished","outcome":"completed","message":"done","duration_ms":1,"exit":{{"code":0}}}}"#,
        EVENTS + 1,
        humantime::format_rfc3339_micros(SystemTime::now())
    );
    writeln!(log, "{finished}").unwrap();
    let status = follower.wait().unwrap();
    assert!(status.success(), "the follower failed: {status}");
    let mut latencies = reader.join().unwrap();
    assert_eq!(latencies.len(), EVENTS, "every event was printed once");
    latencies.sort_by(f64::total_cmp);
    (
        [
            percentile(&latencies, 0.5),
            percentile(&latencies, 0.99),
            *latencies.last().unwrap(),
        ],
        idle_cpu,
    )
}

/// User + system CPU seconds of a process so far.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    // SAFETY: sysconf has no preconditions.
    ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

/// Times `runbook list --all` and `runbook list` over RUNS run directories with receipts.
fn list_time(runs: &Path) -> ([f64; 2], [f64; 1]) {
    fs::create_dir_all(runs).unwrap();
    let receipt = include_str!("../fixtures/receipt.json");
    for i in 0..RUNS {
        let id = format!("2026{:04}-{:06}-{:05}", 1000 + i / 1000, i % 1000, i);
        let dir: PathBuf = runs.join(&id);
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("result.json"), receipt.replace("RUN_ID", &id)).unwrap();
    }
    let time = |args: &[&str]| -> Vec<f64> {
        let mut times: Vec<f64> = (0..LIST_REPEATS)
            .map(|_| {
                let start = Instant::now();
                let out = Command::new(RUNBOOK)
                    .args(args)
                    .args(["--runs-dir", runs.to_str().unwrap()])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .unwrap();
                assert!(out.success());
                start.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        times.sort_by(f64::total_cmp);
        times
    };
    let all = time(&["list", "--all"]);
    let top = time(&["list"]);
    (
        [percentile(&all, 0.5), percentile(&all, 0.95)],
        [percentile(&top, 0.5)],
    )
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}
