//! The soak: many runs at once, and one very long run, with runbook's peak memory, its open
//! file descriptors and the processes left behind measured.

use std::fs;
use std::path::Path;
use std::process::Child;
use std::thread;
use std::time::{Duration, Instant};

use super::{
    Config, devnull, exited, fake_bin, fresh_dir, median, proc_status_kib, reap, runbook_command,
    wait_quiet,
};

/// What was seen of one runbook process while it ran.
#[derive(Default, Clone, Copy)]
struct Watched {
    hwm_kib: u64,
    fds: usize,
}

/// Open descriptors of `pid` now.
fn fds(pid: u32) -> usize {
    fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// Processes still running the fake agent's binary (they should be none once every run ended).
fn leftover_agents() -> usize {
    let fake = fake_bin();
    let Ok(procs) = fs::read_dir("/proc") else {
        return 0;
    };
    procs
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter(|e| fs::read_link(e.path().join("exe")).is_ok_and(|exe| exe == fake))
        .count()
}

/// Starts `n` runs of `events` events each at once and watches them all to their end.
fn runs_at_once(dir: &Path, n: usize, events: u64) -> (Vec<Watched>, Vec<i32>, Duration) {
    let runs = dir.join("runs");
    let start = Instant::now();
    let children: Vec<Child> = (0..n)
        .map(|_| {
            let mut cmd = runbook_command(&runs, dir);
            cmd.env("FAKE_AGENT_GENERATE", events.to_string())
                .env("FAKE_AGENT_BIG_EVERY", "0")
                .args(["--json", "soak"])
                .stdout(devnull())
                .stderr(devnull());
            cmd.spawn().expect("spawn runbook")
        })
        .collect();
    let mut seen = vec![Watched::default(); n];
    let mut codes = vec![None; n];
    while codes.iter().any(Option::is_none) {
        for (i, child) in children.iter().enumerate() {
            if codes[i].is_some() {
                continue;
            }
            if exited(child) {
                codes[i] = Some(reap(child).exit_code().unwrap_or(-1));
                continue;
            }
            let w = &mut seen[i];
            w.hwm_kib = w
                .hwm_kib
                .max(proc_status_kib(child.id(), "VmHWM:").unwrap_or(0));
            w.fds = w.fds.max(fds(child.id()));
        }
        thread::sleep(Duration::from_millis(5));
    }
    (seen, codes.into_iter().flatten().collect(), start.elapsed())
}

fn row(what: &str, seen: &[Watched], codes: &[i32], wall: Duration, dir: &Path) -> String {
    let mut hwm: Vec<f64> = seen.iter().map(|w| w.hwm_kib as f64 / 1024.0).collect();
    let max_hwm = hwm.iter().copied().fold(0.0, f64::max);
    let max_fds = seen.iter().map(|w| w.fds).max().unwrap_or(0);
    let ok = codes.iter().filter(|&&c| c == 0).count();
    let receipts = fs::read_dir(dir.join("runs"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.path().join("result.json").is_file())
                .count()
        })
        .unwrap_or(0);
    format!(
        "| {what} | {ok}/{} | {receipts} | **{max_hwm:.1} MiB** | {:.1} MiB | {max_fds} | {} | {:.1} s |",
        codes.len(),
        median(&mut hwm),
        leftover_agents(),
        wall.as_secs_f64()
    )
}

pub(super) fn soak(cfg: &Config) {
    let mut lines = Vec::new();
    eprintln!("== soak: {} runs at once", cfg.soak_runs);
    wait_quiet();
    let dir = fresh_dir(&cfg.dir.join("soak-many"));
    let (seen, codes, wall) = runs_at_once(&dir, cfg.soak_runs, 2000);
    lines.push(row(
        &format!("{} runs at once, 2,000 events each", cfg.soak_runs),
        &seen,
        &codes,
        wall,
        &dir,
    ));
    let _ = fs::remove_dir_all(&dir);

    eprintln!("== soak: one run of {} events", cfg.soak_events);
    wait_quiet();
    let dir = fresh_dir(&cfg.dir.join("soak-long"));
    let (seen, codes, wall) = runs_at_once(&dir, 1, cfg.soak_events);
    lines.push(row(
        &format!("one run of {} events", cfg.soak_events),
        &seen,
        &codes,
        wall,
        &dir,
    ));
    let _ = fs::remove_dir_all(&dir);

    println!(
        "## 5. Soak\n\n`runbook run --json > /dev/null` over `FAKE_AGENT_GENERATE=N` \
         (`FAKE_AGENT_BIG_EVERY=0`), all started at once. Every runbook process is watched until \
         it exits: its peak RSS (VmHWM) and the most descriptors it had open at once \
         (/proc/PID/fd, sampled every 5 ms). Left behind: processes still running the fake \
         agent's binary once every run had ended.\n"
    );
    println!(
        "| load | exit 0 | receipts | runbook VmHWM (max) | VmHWM (median) | open fds (max) | agents left behind | wall |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for line in lines {
        println!("{line}");
    }
    println!();
}
