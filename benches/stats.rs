//! `runbook stats` over many receipts: wall time to read and summarise 10,000 and 100,000
//! synthetic receipts (the fixture's, with agents, models, projects, outcomes, costs, durations
//! and days varied), in a runs directory of their own.
//!
//! `cargo bench --bench stats` prints a markdown table (see BENCHMARKS.md); `STATS_SIZES=10000`
//! picks the sizes.

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

#[path = "common/receipts.rs"]
mod receipts;

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNBOOK: &str = env!("CARGO_BIN_EXE_runbook");
const REPEATS: usize = 5;

fn main() {
    let sizes: Vec<usize> = std::env::var("STATS_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000, 100_000]);
    let tmp = std::env::temp_dir().join(format!("runbook-bench-stats-{}", std::process::id()));
    println!(
        "| receipts | `runbook stats --json` (median of {REPEATS}) | floor: read every receipt's bytes, one thread | target |"
    );
    println!("| --- | --- | --- | --- |");
    for n in sizes {
        let runs = tmp.join(n.to_string());
        generate(&runs, n);
        // Alternating, so that both see the same cache and machine load.
        let (mut times, mut floors) = (Vec::new(), Vec::new());
        for _ in 0..REPEATS {
            times.push(time(&runs));
            floors.push(floor(&runs));
        }
        times.sort();
        floors.sort();
        let target = if n <= 10_000 { "≤ 300 ms" } else { "≤ 3 s" };
        println!(
            "| {n} | {:.0} ms | {:.0} ms | {target} |",
            ms(times[REPEATS / 2]),
            ms(floors[REPEATS / 2])
        );
    }
    let _ = fs::remove_dir_all(&tmp);
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// `runbook stats RUNS --json`, to its end.
fn time(runs: &Path) -> Duration {
    let start = Instant::now();
    let status = Command::new(RUNBOOK)
        .args(["stats", "--json"])
        .arg(runs)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    start.elapsed()
}

/// The least any summary must do: read each run directory's receipt, whole, one after another.
fn floor(runs: &Path) -> Duration {
    let start = Instant::now();
    let mut bytes = 0;
    for entry in fs::read_dir(runs).unwrap() {
        bytes += fs::read(entry.unwrap().path().join("result.json"))
            .unwrap()
            .len();
    }
    assert!(bytes > 0);
    start.elapsed()
}

/// `n` receipts like the fixture's, varied, each in its run directory.
fn generate(runs: &Path, n: usize) {
    receipts::write(&[runs], n);
}
