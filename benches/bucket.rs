//! `runbook stats` and `runbook list` over a bucket of 10,000 receipts: wall time and the
//! requests made, against a real S3-compatible server on 127.0.0.1 (`s3s-fs`, signatures
//! checked, the same as the tests'), beside `runbook stats` over the same receipts in a local
//! runs directory; the bucket's figures must equal the local ones.
//!
//! `cargo bench --bench bucket` prints a markdown table (see BENCHMARKS.md); `BUCKET_SIZE=2000`
//! picks the size. The server is the tests' (`s3s-fs`), which walks every file under the prefix
//! for each page of a listing: its time, not runbook's, grows with the square of the size.

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

#[path = "../tests/it/support/s3.rs"]
#[allow(
    dead_code,
    reason = "the tests use more of the server than the benchmark"
)]
mod s3;

#[path = "common/receipts.rs"]
mod receipts;

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNBOOK: &str = env!("CARGO_BIN_EXE_runbook");
const REPEATS: usize = 3;

fn main() {
    let n: usize = std::env::var("BUCKET_SIZE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let tmp = std::env::temp_dir().join(format!("runbook-bench-bucket-{}", std::process::id()));
    let local = tmp.join("runs");
    let server = s3::S3Server::start(&tmp.join("s3"));
    generate(&local, &server.root.join(s3::BUCKET).join("bench/runs"), n);
    let url = "s3://team-runs/bench";
    let env = server.env();
    println!("{}, load average {} at the start\n", host(), loadavg());
    println!(
        "| {n} receipts | wall time (median of {REPEATS}) | requests: list pages | requests: GET of a receipt |"
    );
    println!("| --- | --- | --- | --- |");
    let mut figures = Vec::new();
    for (what, args) in [
        ("`stats s3://… --json`", vec!["stats", url, "--json"]),
        (
            "`list s3://… --json` (20 rows)",
            vec!["list", url, "--json"],
        ),
        (
            "`list s3://… --all --json`",
            vec!["list", url, "--all", "--json"],
        ),
    ] {
        let mut times = Vec::new();
        let mut counts = (0, 0);
        for _ in 0..REPEATS {
            let before = server.requests().len();
            let (took, out) = time(&args, &env, &local);
            let made = &server.requests()[before..];
            let lists = made
                .iter()
                .filter(|(_, p)| p == &format!("/{}", s3::BUCKET))
                .count();
            counts = (lists, made.len() - lists);
            times.push(took);
            if args[0] == "stats" {
                figures.push(out);
            }
        }
        times.sort();
        println!(
            "| {what} | {:.0} ms | {} | {} |",
            ms(times[REPEATS / 2]),
            counts.0,
            counts.1
        );
    }
    let file = format!("file://{}", local.display());
    let mut times = Vec::new();
    for _ in 0..REPEATS {
        let (took, out) = time(&["stats", &file, "--json"], &env, &local);
        times.push(took);
        assert_eq!(out, figures[0], "the local backend reads the same");
    }
    times.sort();
    println!(
        "| `stats file://… --json` (object_store's local backend) | {:.0} ms | – | – |",
        ms(times[REPEATS / 2])
    );
    let mut times = Vec::new();
    for _ in 0..REPEATS {
        let (took, out) = time(&["stats", local.to_str().unwrap(), "--json"], &env, &local);
        times.push(took);
        assert_eq!(out, figures[0], "the bucket's stats are the local ones");
    }
    times.sort();
    println!(
        "| `stats RUNS_DIR --json`, the same receipts on local disk | {:.0} ms | – | – |",
        ms(times[REPEATS / 2])
    );
    println!("\nload average {} at the end", loadavg());
    drop(server);
    let _ = fs::remove_dir_all(&tmp);
}

/// Cores, CPU model and kernel, as BENCHMARKS.md names the host.
fn host() -> String {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("?", |(_, m)| m.trim());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{cores} cores ({model}), Linux {}", kernel.trim())
}

/// The load averages over 1, 5 and 15 minutes.
fn loadavg() -> String {
    let text = fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// `runbook ARGS`, to its end: how long it took, and its stdout.
fn time(args: &[&str], env: &[(String, String)], runs: &Path) -> (Duration, String) {
    let start = Instant::now();
    let out = Command::new(RUNBOOK)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .env("RUNBOOK_RUNS_DIR", runs)
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(out.status.success());
    (start.elapsed(), String::from_utf8(out.stdout).unwrap())
}

/// `n` receipts like the fixture's, varied, each in its run directory.
fn generate(local: &Path, bucket: &Path, n: usize) {
    receipts::write(&[local, bucket], n);
}
