//! End-to-end performance benchmarks of `runbook run` against the fake agent (Linux only).
//!
//! ```text
//! cargo bench --features test-support --bench pipeline
//! ```
//!
//! Builds `runbook` and `fake-agent` in release mode (cargo does that for a bench) and measures
//! the four product requirements, printing markdown tables on stdout (progress on stderr):
//!
//! 1. throughput: `FAKE_AGENT_GENERATE=200000` (~150 MB of real-format OpenCode NDJSON) through
//!    `runbook run --json > /dev/null`, next to baselines (`/dev/null`, `cat`, `tee`, `jq -c .`);
//! 2. peak memory (VmHWM of the runbook process itself) for 200,000 and 1,000,000 events, and for
//!    3,000,000 two-byte junk lines, 1,000,000 stderr lines and 1,000,000 text events;
//! 3. latency from the agent's write(2) to the line being on runbook's `--json` stdout and in
//!    `events.ndjson` (paced mode: events carry the CLOCK_REALTIME of their write);
//! 4. CPU used by runbook while a silent agent hangs for 60 s;
//! 5. soak: 200 runs at once, and one run of 10,000,000 events (peak RSS, open descriptors,
//!    processes left behind). Not in the default set: `BENCH_ONLY=soak`.
//!
//! Knobs (environment): `BENCH_ONLY=throughput,memory,latency,idle,soak` (default: all but soak),
//! `BENCH_REPS` (5), `BENCH_EVENTS` (200000), `BENCH_BIG_EVENTS` (1000000),
//! `BENCH_JUNK_LINES` (3000000), `BENCH_STDERR_LINES` (1000000), `BENCH_TEXT_EVENTS` (1000000),
//! `BENCH_PACED` (2000), `BENCH_INTERVAL_MS` (2), `BENCH_IDLE_SECS` (60),
//! `BENCH_SOAK_RUNS` (200), `BENCH_SOAK_EVENTS` (10000000),
//! `BENCH_DIR` (scratch directory; default a temporary directory under the system's),
//! `BENCH_QUIET_WAIT` (seconds to wait for an idle machine before each measurement; 120),
//! `BENCH_RUNBOOK` / `BENCH_FAKE_AGENT` (other binaries to measure, e.g. an older build).
//!
//! Every child gets a clean environment (`PATH` only, plus the fake agent's mode variables), so
//! no `RUNBOOK_*` setting and no secret-looking variable (which would turn masking on) leaks in;
//! one throughput row sets a dummy secret on purpose to show what masking costs.

#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "benchmarks write their own fixtures and print their figures"
)]
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark's report is its output"
)]
#![allow(
    clippy::zombie_processes,
    reason = "children are reaped with wait4(2), which std's wait() does not expose, for their rusage"
)]

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, BufRead, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crate::clock::realtime_ns;

#[path = "../tests/support/clock.rs"]
mod clock;
#[path = "pipeline/soak.rs"]
mod soak;

/// The binaries under test: the ones cargo built for this bench, or others named by
/// `BENCH_RUNBOOK` / `BENCH_FAKE_AGENT` (to compare two builds with the same bench).
fn runbook_bin() -> PathBuf {
    std::env::var_os("BENCH_RUNBOOK").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_runbook")),
        PathBuf::from,
    )
}

fn fake_bin() -> PathBuf {
    std::env::var_os("BENCH_FAKE_AGENT").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_fake-agent")),
        PathBuf::from,
    )
}
/// A value the masking code treats as a secret (by its variable's name); not a real credential.
const DUMMY_SECRET: (&str, &str) = ("BENCH_DUMMY_API_KEY", "bench-dummy-value-0123456789");

struct Config {
    only: Option<Vec<String>>,
    reps: usize,
    events: u64,
    big_events: u64,
    junk_lines: u64,
    stderr_lines: u64,
    text_events: u64,
    paced: u64,
    interval_ms: u64,
    idle_secs: u64,
    soak_runs: usize,
    soak_events: u64,
    dir: PathBuf,
    _tmp: Option<tempfile::TempDir>,
}

impl Config {
    fn from_env() -> Config {
        let num = |name: &str, default: u64| -> u64 {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(default)
        };
        let (dir, tmp) = match std::env::var_os("BENCH_DIR") {
            Some(d) => {
                let d = PathBuf::from(d);
                fs::create_dir_all(&d).expect("create BENCH_DIR");
                (d, None)
            }
            None => {
                let t = tempfile::Builder::new()
                    .prefix("runbook-bench-")
                    .tempdir()
                    .expect("temporary directory");
                (t.path().to_path_buf(), Some(t))
            }
        };
        Config {
            only: std::env::var("BENCH_ONLY")
                .ok()
                .filter(|v| !v.trim().is_empty())
                .map(|v| v.split(',').map(|s| s.trim().to_owned()).collect()),
            reps: num("BENCH_REPS", 5).max(1) as usize,
            events: num("BENCH_EVENTS", 200_000),
            big_events: num("BENCH_BIG_EVENTS", 1_000_000),
            junk_lines: num("BENCH_JUNK_LINES", 3_000_000),
            stderr_lines: num("BENCH_STDERR_LINES", 1_000_000),
            text_events: num("BENCH_TEXT_EVENTS", 1_000_000),
            paced: num("BENCH_PACED", 2000),
            interval_ms: num("BENCH_INTERVAL_MS", 2),
            idle_secs: num("BENCH_IDLE_SECS", 60),
            soak_runs: num("BENCH_SOAK_RUNS", 200).max(1) as usize,
            soak_events: num("BENCH_SOAK_EVENTS", 10_000_000),
            dir,
            _tmp: tmp,
        }
    }

    fn wants(&self, part: &str) -> bool {
        match &self.only {
            Some(only) => only.iter().any(|p| p == part),
            // The soak takes minutes and gigabytes of disk: only when asked for.
            None => part != "soak",
        }
    }
}

fn main() {
    // `cargo bench` passes `--bench`; there are no other options.
    let cfg = Config::from_env();
    eprintln!("scratch directory: {}", cfg.dir.display());
    eprintln!("runbook: {}", runbook_bin().display());
    println!("# runbook pipeline benchmarks\n");
    machine_facts();
    if cfg.wants("throughput") {
        throughput(&cfg);
    }
    if cfg.wants("memory") {
        memory(&cfg);
    }
    if cfg.wants("latency") {
        latency(&cfg);
    }
    if cfg.wants("idle") {
        idle(&cfg);
    }
    if cfg.wants("soak") {
        soak::soak(&cfg);
    }
}

// ------------------------------------------------------------------------------------ helpers

fn clean_command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_clear();
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    cmd
}

fn runbook_command(runs_dir: &Path, cwd: &Path) -> Command {
    let mut cmd = clean_command(runbook_bin());
    cmd.current_dir(cwd)
        .arg("run")
        .arg("--runs-dir")
        .arg(runs_dir)
        .arg("--agent-bin")
        .arg(fake_bin());
    cmd
}

fn devnull() -> Stdio {
    Stdio::from(File::create("/dev/null").expect("/dev/null"))
}

/// How a reaped child ended and what it used (its own usage plus that of children it reaped).
struct Reaped {
    status: i32,
    cpu: Duration,
    maxrss_kib: u64,
}

impl Reaped {
    fn exit_code(&self) -> Option<i32> {
        libc::WIFEXITED(self.status).then(|| libc::WEXITSTATUS(self.status))
    }
}

fn tv(t: libc::timeval) -> Duration {
    Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000)
}

/// wait4(2): reaps `child` and returns its rusage (std's `wait` does not expose it).
fn reap(child: &Child) -> Reaped {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: zeroed rusage is a valid out-parameter.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: valid pointers; pid is our own unreaped child.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            break;
        }
        assert!(
            r == -1 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted,
            "wait4({pid}) failed: {}",
            io::Error::last_os_error()
        );
    }
    Reaped {
        status,
        cpu: tv(ru.ru_utime) + tv(ru.ru_stime),
        maxrss_kib: ru.ru_maxrss as u64,
    }
}

/// Whether `child` has exited, without reaping it (its /proc entry stays readable).
fn exited(child: &Child) -> bool {
    // SAFETY: zeroed siginfo is a valid out-parameter.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer; WNOWAIT leaves the child waitable.
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            child.id(),
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // SAFETY: si_pid is valid for a SIGCHLD siginfo filled by waitid.
    r == 0 && unsafe { info.si_pid() } != 0
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    // Nearest rank.
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

fn us(ns: u64) -> String {
    format!("{:.0} µs", ns as f64 / 1000.0)
}

fn fresh_dir(path: &Path) -> PathBuf {
    let _ = fs::remove_dir_all(path);
    fs::create_dir_all(path).expect("create scratch dir");
    path.to_path_buf()
}

/// Removes the baselines' copy before a timed command writes it again: truncating it inside the
/// command would free its pages there, which runbook, writing a new run directory, never pays.
fn fresh_copy(dir: &Path) {
    let _ = fs::remove_file(dir.join("copy.ndjson"));
}

/// The single run directory under `runs`.
fn run_dir(runs: &Path) -> Option<PathBuf> {
    let mut dirs = fs::read_dir(runs)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path());
    let first = dirs.next()?;
    assert!(
        dirs.next().is_none(),
        "more than one run in {}",
        runs.display()
    );
    Some(first)
}

fn count_lines(path: &Path) -> u64 {
    let mut f = File::open(path).expect("open");
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0;
    loop {
        match f.read(&mut buf).expect("read") {
            0 => return n,
            k => n += buf[..k].iter().filter(|&&b| b == b'\n').count() as u64,
        }
    }
}

fn file_len(path: &Path) -> u64 {
    fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// Reads a `key: N kB` line of /proc/PID/status.
fn proc_status_kib(pid: u32, key: &str) -> Option<u64> {
    let s = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

/// CPU time of every thread of `pid` so far, from /proc/PID/task/*/schedstat (nanoseconds).
fn proc_cpu(pid: u32) -> Option<Duration> {
    let mut total = 0u64;
    for task in fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let task = task.ok()?;
        let s = fs::read_to_string(task.path().join("schedstat")).ok()?;
        total += s.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(Duration::from_nanos(total))
}

/// utime + stime of `pid` (all threads, clock ticks) from /proc/PID/stat.
fn proc_stat_cpu(pid: u32) -> Option<Duration> {
    let s = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14 and 15 of stat(5); `rest` starts at field 3.
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf is always safe to call.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(Duration::from_nanos(ticks * 1_000_000_000 / hz))
}

fn machine_facts() {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|r| r.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_else(|| "?".into());
    let mhz = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("cpu MHz"))
        .map(|r| r.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_else(|| "?".into());
    let nproc = thread::available_parallelism().map_or(0, |n| n.get());
    let mem = proc_meminfo_kib("MemTotal").map_or("?".into(), |k| {
        format!("{:.1} GiB", k as f64 / 1024.0 / 1024.0)
    });
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    println!("| machine | |\n|---|---|");
    println!("| nproc | {nproc} |");
    println!("| CPU | {model} ({mhz} MHz) |");
    println!("| memory | {mem} |");
    println!("| kernel | {} |", kernel.trim());
    println!();
}

fn proc_meminfo_kib(key: &str) -> Option<u64> {
    let s = fs::read_to_string("/proc/meminfo").ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|r| r.trim().trim_end_matches("kB").trim().parse().ok())
}

// --------------------------------------------------------------------------------- throughput

/// One timed repetition of a pipeline: wall time, CPU of all its processes.
struct Sample {
    wall: Duration,
    cpu: Duration,
    /// CPU time the rest of the machine used meanwhile (all CPUs' busy time minus `cpu`).
    others: Duration,
}

/// Busy time of all CPUs since boot, from /proc/stat (clock ticks).
fn machine_busy() -> Duration {
    let stat = fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: u64 = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .enumerate()
        // user nice system idle iowait irq softirq steal: all but idle and iowait.
        .filter(|(i, _)| !matches!(i, 3 | 4) && *i < 8)
        .filter_map(|(_, v)| v.parse::<u64>().ok())
        .sum();
    // SAFETY: sysconf is always safe to call.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Duration::from_nanos(ticks * 1_000_000_000 / hz)
}

/// Waits (up to `BENCH_QUIET_WAIT` seconds, default 120) until the machine has been nearly idle
/// for a second, so that a measurement does not start while something else is busy.
fn wait_quiet() {
    let limit = std::env::var("BENCH_QUIET_WAIT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(120u64);
    let start = Instant::now();
    loop {
        let before = machine_busy();
        thread::sleep(Duration::from_secs(1));
        let busy = machine_busy().saturating_sub(before).as_secs_f64();
        if busy < 0.1 {
            return;
        }
        if start.elapsed() > Duration::from_secs(limit) {
            eprintln!("  (the machine is still busy: {busy:.2} cores; measuring anyway)");
            return;
        }
    }
}

fn fake_generate(n: u64, cwd: &Path) -> Command {
    let mut cmd = clean_command(fake_bin());
    cmd.current_dir(cwd)
        .args(["run", "--format", "json", "--", "bench"])
        .env("FAKE_AGENT_GENERATE", n.to_string());
    cmd
}

/// Runs `first | second` (or just `first` when `second` is None), both reaped with their usage.
fn time_pipeline(first: Command, second: Option<Command>, sink: impl Fn() -> Stdio) -> Sample {
    let busy = machine_busy();
    let mut sample = run_pipeline(first, second, sink);
    sample.others = machine_busy()
        .saturating_sub(busy)
        .saturating_sub(sample.cpu);
    sample
}

fn run_pipeline(mut first: Command, second: Option<Command>, sink: impl Fn() -> Stdio) -> Sample {
    let start = Instant::now();
    match second {
        None => {
            let child = first.stdout(sink()).spawn().expect("spawn");
            let r = reap(&child);
            assert_eq!(r.exit_code(), Some(0), "{first:?} failed");
            Sample {
                wall: start.elapsed(),
                cpu: r.cpu,
                others: Duration::ZERO,
            }
        }
        Some(mut second) => {
            let mut a = first.stdout(Stdio::piped()).spawn().expect("spawn");
            let pipe = a.stdout.take().expect("piped");
            let b = second
                .stdin(Stdio::from(pipe))
                .stdout(sink())
                .spawn()
                .expect("spawn");
            let ra = reap(&a);
            let rb = reap(&b);
            let wall = start.elapsed();
            assert_eq!(ra.exit_code(), Some(0), "{first:?} failed");
            assert_eq!(rb.exit_code(), Some(0), "{second:?} failed");
            Sample {
                wall,
                cpu: ra.cpu + rb.cpu,
                others: Duration::ZERO,
            }
        }
    }
}

type Measure<'a> = Box<dyn FnMut() -> Sample + 'a>;

fn planned<'a>(
    what: &str,
    command: &str,
    reps: usize,
    f: Measure<'a>,
) -> (Row, usize, Measure<'a>) {
    let row = Row {
        what: what.to_owned(),
        command: command.to_owned(),
        samples: Vec::new(),
    };
    (row, reps, f)
}

struct Row {
    what: String,
    command: String,
    samples: Vec<Sample>,
}

fn throughput(cfg: &Config) {
    let n = cfg.events;
    eprintln!("== throughput: {n} events, {} repetitions", cfg.reps);
    let dir = fresh_dir(&cfg.dir.join("throughput"));
    let stream = dir.join("agent.ndjson");
    let runs = dir.join("runs");
    // The reference output (same cwd as every run below, so the same bytes).
    time_pipeline(fake_generate(n, &dir), None, || {
        Stdio::from(File::create(&stream).expect("create"))
    });
    let bytes = file_len(&stream);
    let lines = count_lines(&stream);
    assert_eq!(lines, n, "the fake agent wrote {lines} lines");
    // Streamed: reading 150 MB into memory would raise this process's peak RSS, which every
    // child spawned afterwards (vfork) would then report as its own ru_maxrss.
    let (mut tool_lines, mut big) = (0u64, 0u64);
    {
        let mut reader = io::BufReader::with_capacity(1 << 20, File::open(&stream).expect("open"));
        let mut line = Vec::new();
        while reader.read_until(b'\n', &mut line).expect("read") > 0 {
            tool_lines += u64::from(line.starts_with(br#"{"type":"tool_use""#));
            big += u64::from(line.len() > 64 * 1024);
            line.clear();
        }
    }

    let gen_cmd = || fake_generate(n, &dir);
    let check_run = || {
        let rd = run_dir(&runs).expect("a run directory");
        assert_eq!(
            file_len(&rd.join("stdout.log")),
            bytes,
            "stdout.log differs from the agent's output"
        );
        let events = count_lines(&rd.join("events.ndjson"));
        assert!(
            events >= n + tool_lines,
            "events.ndjson has {events} lines, expected at least {}",
            n + tool_lines
        );
        fs::remove_dir_all(&rd).expect("clean up the run");
    };
    let runbook = |secret: bool| {
        let mut cmd = runbook_command(&runs, &dir);
        cmd.env("FAKE_AGENT_GENERATE", n.to_string())
            .args(["--json", "bench"])
            .stderr(devnull());
        if secret {
            cmd.env(DUMMY_SECRET.0, DUMMY_SECRET.1);
        }
        cmd
    };
    let jq_reps = cfg.reps.min(3);
    let mut rows: Vec<(Row, usize, Measure<'_>)> = Vec::new();
    let mut add =
        |what: &str, command: &str, reps: usize, f| rows.push(planned(what, command, reps, f));
    add(
        "fake agent alone",
        "fake-agent > /dev/null",
        cfg.reps,
        Box::new(|| time_pipeline(gen_cmd(), None, devnull)),
    );
    add(
        "fake agent to a file",
        "fake-agent > file",
        cfg.reps,
        Box::new(|| {
            fresh_copy(&dir);
            time_pipeline(gen_cmd(), None, || {
                Stdio::from(File::create(dir.join("copy.ndjson")).expect("create"))
            })
        }),
    );
    add(
        "pipe baseline",
        "fake-agent | cat > /dev/null",
        cfg.reps,
        Box::new(|| time_pipeline(gen_cmd(), Some(clean_command("cat")), devnull)),
    );
    add(
        "pipe + raw log baseline",
        "fake-agent | tee file > /dev/null",
        cfg.reps,
        Box::new(|| {
            fresh_copy(&dir);
            let mut tee = clean_command("tee");
            tee.arg(dir.join("copy.ndjson"));
            time_pipeline(gen_cmd(), Some(tee), devnull)
        }),
    );
    add(
        "jq from a file",
        "jq -c . < file > /dev/null",
        jq_reps,
        Box::new(|| {
            let mut jq = clean_command("jq");
            jq.args(["-c", "."])
                .stdin(Stdio::from(File::open(&stream).expect("open")));
            time_pipeline(jq, None, devnull)
        }),
    );
    add(
        "jq through a pipe",
        "fake-agent | jq -c . > /dev/null",
        jq_reps,
        Box::new(|| {
            let mut jq = clean_command("jq");
            jq.args(["-c", "."]);
            time_pipeline(gen_cmd(), Some(jq), devnull)
        }),
    );
    add(
        "**runbook**",
        "runbook run --json > /dev/null",
        cfg.reps,
        Box::new(|| {
            let s = time_pipeline(runbook(false), None, devnull);
            check_run();
            s
        }),
    );
    add(
        "runbook, stdout through a pipe",
        "runbook run --json | cat > /dev/null",
        cfg.reps,
        Box::new(|| {
            let s = time_pipeline(runbook(false), Some(clean_command("cat")), devnull);
            check_run();
            s
        }),
    );
    add(
        "runbook, masking one secret",
        "BENCH_DUMMY_API_KEY=… runbook run --json > /dev/null",
        cfg.reps,
        Box::new(|| {
            let s = time_pipeline(runbook(true), None, devnull);
            check_run();
            s
        }),
    );
    // Round-robin: a slow spell on a shared machine hits every row alike, not one row.
    for rep in 0..cfg.reps {
        eprintln!("  round {}/{}", rep + 1, cfg.reps);
        wait_quiet();
        for (row, reps, measure) in &mut rows {
            if rep < *reps {
                row.samples.push(measure());
            }
        }
    }
    let rows: Vec<Row> = rows.into_iter().map(|(row, _, _)| row).collect();

    println!(
        "## 1. Throughput\n\n{n} events, {bytes} bytes ({:.1} MB, {big} tool outputs of 64 KiB) of agent output; \
         median of {} runs (jq: {jq_reps}), taken round-robin across the rows. MB/s = agent output bytes / wall time (10^6 bytes). \
         CPU = user + sys of every process in the row; others' CPU = \
         what the rest of the machine used meanwhile (median, in cores), a noise indicator.\n",
        bytes as f64 / 1e6,
        cfg.reps
    );
    println!(
        "| what | command | wall (median) | wall (min) | MB/s (median) | MB/s (best) | CPU s (median) | others' CPU |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for row in &rows {
        let mut walls: Vec<f64> = row.samples.iter().map(|s| s.wall.as_secs_f64()).collect();
        let mut cpus: Vec<f64> = row.samples.iter().map(|s| s.cpu.as_secs_f64()).collect();
        let mut others: Vec<f64> = row
            .samples
            .iter()
            .map(|s| s.others.as_secs_f64() / s.wall.as_secs_f64())
            .collect();
        let min = walls.iter().copied().fold(f64::INFINITY, f64::min);
        let med = median(&mut walls);
        println!(
            "| {} | `{}` | {:.3} s | {:.3} s | {:.0} | {:.0} | {:.3} | {:.2} cores |",
            row.what,
            row.command,
            med,
            min,
            bytes as f64 / 1e6 / med,
            bytes as f64 / 1e6 / min,
            median(&mut cpus),
            median(&mut others)
        );
    }
    println!();
    let _ = fs::remove_dir_all(&dir);
}

// ------------------------------------------------------------------------------------- memory

/// One stream runbook's memory is measured over: what the fake agent is told to do.
struct MemoryCase {
    what: String,
    /// The fake agent's mode variable and its value.
    mode: (&'static str, String),
}

/// The cases: real-format OpenCode output, and three streams of many small lines that each
/// become an event (unreadable lines, stderr lines, text events), which must not cost memory per
/// line either.
fn memory_cases(cfg: &Config, dir: &Path) -> Vec<MemoryCase> {
    let mut cases: Vec<MemoryCase> = [cfg.events, cfg.big_events]
        .into_iter()
        .map(|n| MemoryCase {
            what: format!("{n} events"),
            mode: ("FAKE_AGENT_GENERATE", n.to_string()),
        })
        .collect();
    let step_start = r#"{"type":"step_start","sessionID":"ses_bench","part":{"messageID":"m1"}}"#;
    let step_finish = r#"{"type":"step_finish","part":{"messageID":"m1","reason":"stop","tokens":{"input":10,"output":1},"cost":0.001}}"#;
    let streams = [
        (
            "junk",
            cfg.junk_lines,
            "2-byte junk lines on stdout",
            r#"{"$repeat": {"line": "x", "times": TIMES}}"#,
        ),
        (
            "stderr",
            cfg.stderr_lines,
            "1-byte stderr lines",
            r#"{"$repeat": {"line": "w", "times": TIMES, "stream": "stderr"}}"#,
        ),
        (
            "text",
            cfg.text_events,
            "text events",
            r#"{"$repeat": {"line": "{\"type\":\"text\",\"part\":{\"text\":\"a short piece of the answer\"}}", "times": TIMES}}"#,
        ),
    ];
    for (name, n, what, directive) in streams {
        let path = dir.join(format!("{name}.scenario.ndjson"));
        let body = directive.replace("TIMES", &n.to_string());
        fs::write(&path, format!("{step_start}\n{body}\n{step_finish}\n")).expect("write scenario");
        cases.push(MemoryCase {
            what: format!("{n} {what}"),
            mode: ("FAKE_AGENT_SCENARIO", path.display().to_string()),
        });
    }
    cases
}

fn memory(cfg: &Config) {
    let dir = fresh_dir(&cfg.dir.join("memory"));
    let runs = dir.join("runs");
    let mut lines = Vec::new();
    for case in memory_cases(cfg, &dir) {
        let (var, value) = &case.mode;
        eprintln!("== memory: {}, {} repetitions", case.what, cfg.reps);
        wait_quiet();
        let fake = {
            let mut cmd = clean_command(fake_bin());
            let child = cmd
                .current_dir(&dir)
                .args(["run", "--format", "json", "--", "bench"])
                .env(var, value)
                .stdout(devnull())
                .stderr(devnull())
                .spawn()
                .expect("spawn");
            reap(&child)
        };
        let (mut hwms, mut maxrss, mut out, mut walls) = (Vec::new(), 0, 0, Vec::new());
        for _ in 0..cfg.reps {
            let mut cmd = runbook_command(&runs, &dir);
            cmd.env(var, value)
                .args(["--json", "bench"])
                .stdout(devnull())
                .stderr(devnull());
            let start = Instant::now();
            let child = cmd.spawn().expect("spawn runbook");
            let mut hwm = 0;
            while !exited(&child) {
                if let Some(k) = proc_status_kib(child.id(), "VmHWM:") {
                    hwm = hwm.max(k);
                }
                thread::sleep(Duration::from_millis(1));
            }
            let r = reap(&child);
            walls.push(start.elapsed().as_secs_f64());
            assert_eq!(r.exit_code(), Some(0), "runbook failed on {}", case.what);
            let rd = run_dir(&runs).expect("run dir");
            out = file_len(&rd.join("stdout.log")) + file_len(&rd.join("stderr.log"));
            fs::remove_dir_all(&rd).expect("clean up");
            hwms.push(hwm as f64 / 1024.0);
            maxrss = maxrss.max(r.maxrss_kib);
        }
        let max = hwms.iter().copied().fold(0.0, f64::max);
        lines.push(format!(
            "| {} | {:.0} MB | **{max:.1} MiB** | {:.1} MiB | {} | {:.1} MiB | {:.1} MiB | {:.2} s |",
            case.what,
            out as f64 / 1e6,
            median(&mut hwms.clone()),
            hwms.iter()
                .map(|h| format!("{h:.1}"))
                .collect::<Vec<_>>()
                .join(", "),
            maxrss as f64 / 1024.0,
            fake.maxrss_kib as f64 / 1024.0,
            median(&mut walls)
        ));
    }
    println!(
        "## 2. Peak memory\n\n`runbook run --json > /dev/null` over `FAKE_AGENT_GENERATE=N`, and over \
         scenarios of N small lines (`$repeat`), {} runs each. VmHWM is runbook's own peak RSS, read \
         from /proc/PID/status every millisecond until the process exits (it only grows, so the \
         last reading is the peak). wait4's ru_maxrss is the largest of runbook's, its reaped \
         children's (the fake agent), and this bench's RSS when it spawned runbook (a vfork'd child \
         inherits its parent's high-water mark; this bench's own VmHWM: {:.1} MiB), so it is only \
         an upper bound.\n",
        cfg.reps,
        proc_status_kib(std::process::id(), "VmHWM:").unwrap_or(0) as f64 / 1024.0
    );
    println!(
        "| stream | agent output | runbook VmHWM (max) | VmHWM (median) | every run (MiB) | wait4 ru_maxrss (max) | fake agent alone ru_maxrss | wall (median) |"
    );
    println!("|---|---:|---:|---:|---|---:|---:|---:|");
    for line in lines {
        println!("{line}");
    }
    println!();
    let _ = fs::remove_dir_all(&dir);
}

// ------------------------------------------------------------------------------------ latency

/// Arrival stamps per t_ns of `text` events seen in a stream of NDJSON chunks.
#[derive(Default)]
struct Arrivals {
    partial: Vec<u8>,
    at: HashMap<u64, u64>,
    finished: bool,
}

impl Arrivals {
    /// Feeds one chunk that arrived at `now` (CLOCK_REALTIME ns).
    fn feed(&mut self, chunk: &[u8], now: u64) {
        self.partial.extend_from_slice(chunk);
        let mut start = 0;
        while let Some(nl) = memchr::memchr(b'\n', &self.partial[start..]) {
            let line = &self.partial[start..start + nl];
            if let Some(t) = t_ns(line) {
                self.at.entry(t).or_insert(now);
            }
            if contains(line, br#""type":"run.finished""#) {
                self.finished = true;
            }
            start += nl + 1;
        }
        self.partial.drain(..start);
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}

/// The t_ns=<19 digits> the fake agent put in a text event.
fn t_ns(line: &[u8]) -> Option<u64> {
    let at = memchr::memmem::find(line, b"t_ns=")? + 5;
    let digits = line.get(at..at + 19)?;
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// Reads `fd` to EOF, stamping each chunk on arrival.
fn read_pipe(mut pipe: impl Read) -> Arrivals {
    let mut arrivals = Arrivals::default();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => return arrivals,
            Ok(n) => {
                let now = realtime_ns();
                arrivals.feed(&buf[..n], now);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => panic!("read: {e}"),
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Watch {
    Inotify,
    Spin,
}

/// Follows `runs/<run>/events.ndjson` from its creation until run.finished, stamping each chunk.
fn follow_log(runs: PathBuf, watch: Watch, stop: Arc<AtomicBool>) -> Arrivals {
    let path = loop {
        if let Some(rd) = run_dir(&runs) {
            let p = rd.join("events.ndjson");
            if p.exists() {
                break p;
            }
        }
        assert!(!stop.load(Ordering::Relaxed), "no events.ndjson appeared");
        thread::sleep(Duration::from_micros(200));
    };
    let mut file = File::open(&path).expect("open events.ndjson");
    let inotify = (watch == Watch::Inotify).then(|| {
        // SAFETY: plain syscalls with valid arguments.
        let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
        assert!(fd >= 0, "inotify_init1: {}", io::Error::last_os_error());
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: as above.
        let wd = unsafe { libc::inotify_add_watch(fd, c.as_ptr(), libc::IN_MODIFY) };
        assert!(wd >= 0, "inotify_add_watch: {}", io::Error::last_os_error());
        fd
    });
    let mut arrivals = Arrivals::default();
    let mut buf = vec![0u8; 256 * 1024];
    let mut ev = [0u8; 4096];
    loop {
        let n = file.read(&mut buf).expect("read events.ndjson");
        if n > 0 {
            let now = realtime_ns();
            arrivals.feed(&buf[..n], now);
            if arrivals.finished {
                return arrivals;
            }
            continue;
        }
        if stop.load(Ordering::Relaxed) {
            // runbook has exited: whatever is left is already in the file.
            loop {
                let n = file.read(&mut buf).expect("read events.ndjson");
                if n == 0 {
                    return arrivals;
                }
                arrivals.feed(&buf[..n], realtime_ns());
            }
        }
        match inotify {
            Some(fd) => {
                let mut p = libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: valid pollfd; the timeout lets the loop notice the end of the run.
                if unsafe { libc::poll(&mut p, 1, 100) } > 0 {
                    // SAFETY: reading into a local buffer.
                    unsafe { libc::read(fd, ev.as_mut_ptr().cast(), ev.len()) };
                }
            }
            None => std::hint::spin_loop(),
        }
    }
}

struct Latencies {
    sorted: Vec<u64>,
    expected: usize,
}

impl Latencies {
    fn new(sent: impl Iterator<Item = (u64, u64)>, expected: usize) -> Self {
        let mut sorted: Vec<u64> = sent.map(|(t, at)| at.saturating_sub(t)).collect();
        sorted.sort_unstable();
        Latencies { sorted, expected }
    }

    fn row(&self, what: &str, others: f64) -> String {
        let s = &self.sorted;
        let over = s.iter().filter(|&&l| l > 1_000_000).count();
        format!(
            "| {what} | {}/{} | {} | {} | {} | {} | {} | {others:.2} cores |",
            s.len(),
            self.expected,
            us(percentile(s, 50.0)),
            us(percentile(s, 99.0)),
            us(percentile(s, 99.9)),
            us(s.last().copied().unwrap_or(0)),
            over
        )
    }
}

/// What the rest of the machine used during a measurement: all CPUs' busy time minus the
/// measured processes' and this bench's own.
struct Meter {
    start: Instant,
    busy: Duration,
    own: Duration,
}

fn self_cpu() -> Duration {
    // SAFETY: zeroed rusage is a valid out-parameter.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

impl Meter {
    fn start() -> Meter {
        Meter {
            start: Instant::now(),
            busy: machine_busy(),
            own: self_cpu(),
        }
    }

    /// In cores (CPU seconds per second).
    fn others(&self, measured: Duration) -> f64 {
        let used = machine_busy()
            .saturating_sub(self.busy)
            .saturating_sub(self_cpu().saturating_sub(self.own))
            .saturating_sub(measured);
        used.as_secs_f64() / self.start.elapsed().as_secs_f64()
    }
}

fn paced_env(cmd: &mut Command, cfg: &Config) {
    cmd.env("FAKE_AGENT_PACED", cfg.paced.to_string())
        .env("FAKE_AGENT_INTERVAL_MS", cfg.interval_ms.to_string());
}

fn latency(cfg: &Config) {
    let dir = fresh_dir(&cfg.dir.join("latency"));
    let expected = cfg.paced as usize;
    println!(
        "## 3. Latency\n\n`FAKE_AGENT_PACED={} FAKE_AGENT_INTERVAL_MS={}`: each text event carries \
         the CLOCK_REALTIME at which the fake agent wrote it; the bench stamps CLOCK_REALTIME when \
         the line arrives (on runbook's `--json` stdout, read through a pipe; in events.ndjson, \
         followed with inotify or by spinning on read(2)). \"both\" is the later of the two \
         arrivals per event: when the line is on stdout *and* in the log.\n",
        cfg.paced, cfg.interval_ms
    );
    println!("| path | events | p50 | p99 | p99.9 | max | > 1 ms | others' CPU |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");

    // Baseline: the fake agent straight into the bench through a pipe.
    eprintln!("== latency: pipe baseline");
    wait_quiet();
    let meter = Meter::start();
    let mut fake = clean_command(fake_bin());
    fake.args(["run", "--format", "json", "--", "bench"]);
    paced_env(&mut fake, cfg);
    let mut child = fake.stdout(Stdio::piped()).spawn().expect("spawn");
    let direct = read_pipe(child.stdout.take().expect("piped"));
    let r = reap(&child);
    assert_eq!(r.exit_code(), Some(0));
    let others = meter.others(r.cpu);
    println!(
        "{}",
        Latencies::new(direct.at.into_iter(), expected)
            .row("baseline: fake-agent → pipe → bench (no runbook)", others)
    );

    for watch in [Watch::Inotify, Watch::Spin] {
        let label = match watch {
            Watch::Inotify => "inotify",
            Watch::Spin => "spinning read(2)",
        };
        eprintln!("== latency: runbook, events.ndjson followed by {label}");
        let runs = fresh_dir(&dir.join("runs"));
        wait_quiet();
        let meter = Meter::start();
        let stop = Arc::new(AtomicBool::new(false));
        let follower = {
            let (runs, stop) = (runs.clone(), stop.clone());
            thread::spawn(move || follow_log(runs, watch, stop))
        };
        let mut cmd = runbook_command(&runs, &dir);
        paced_env(&mut cmd, cfg);
        cmd.args(["--json", "bench"]).stderr(devnull());
        let mut child = cmd.stdout(Stdio::piped()).spawn().expect("spawn runbook");
        let out = read_pipe(child.stdout.take().expect("piped"));
        let r = reap(&child);
        stop.store(true, Ordering::Relaxed);
        let log = follower.join().expect("follower");
        let others = meter.others(r.cpu);
        assert_eq!(r.exit_code(), Some(0), "runbook failed");
        let both = out.at.iter().filter_map(|(t, a)| {
            let b = log.at.get(t)?;
            Some((*t, (*a).max(*b)))
        });
        println!(
            "{}",
            Latencies::new(out.at.iter().map(|(t, a)| (*t, *a)), expected).row(
                &format!("runbook `--json` stdout (log followed by {label})"),
                others
            )
        );
        println!(
            "{}",
            Latencies::new(log.at.iter().map(|(t, a)| (*t, *a)), expected)
                .row(&format!("runbook events.ndjson ({label})"), others)
        );
        println!(
            "{}",
            Latencies::new(both, expected).row(&format!("**runbook: both** ({label})"), others)
        );
    }
    println!();
    let _ = fs::remove_dir_all(&dir);
}

// --------------------------------------------------------------------------------------- idle

fn idle(cfg: &Config) {
    let secs = cfg.idle_secs;
    eprintln!("== idle: {secs} s with a silent agent (two runs side by side)");
    wait_quiet();
    let dir = fresh_dir(&cfg.dir.join("idle"));
    let scenario = dir.join("hang.ndjson");
    fs::write(&scenario, "{\"$hang\":true}\n").expect("write scenario");
    struct Idle {
        label: &'static str,
        runs: PathBuf,
        child: Child,
        early: Option<Duration>,
        last: Option<Duration>,
        last_ticks: Option<Duration>,
    }
    let mut runs: Vec<Idle> = [
        ("`--json > /dev/null`", true),
        ("human view (stderr to a file)", false),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (label, json))| {
        let runs = fresh_dir(&dir.join(format!("runs{i}")));
        let mut cmd = runbook_command(&runs, &dir);
        cmd.env("FAKE_AGENT_SCENARIO", &scenario)
            .args(["--timeout", &format!("{secs}s")])
            .stdout(devnull())
            .stderr(Stdio::from(
                File::create(dir.join(format!("stderr{i}.txt"))).expect("create"),
            ));
        if json {
            cmd.arg("--json");
        }
        cmd.arg("bench");
        Idle {
            label,
            runs,
            child: cmd.spawn().expect("spawn runbook"),
            early: None,
            last: None,
            last_ticks: None,
        }
    })
    .collect();
    let start = Instant::now();
    while runs.iter().any(|r| !exited(&r.child)) {
        for r in runs.iter_mut().filter(|r| !exited(&r.child)) {
            let pid = r.child.id();
            if let Some(cpu) = proc_cpu(pid) {
                r.last = Some(cpu);
                if start.elapsed() < Duration::from_secs(2) || r.early.is_none() {
                    r.early = Some(cpu);
                }
            }
            if let Some(t) = proc_stat_cpu(pid) {
                r.last_ticks = Some(t);
            }
        }
        thread::sleep(Duration::from_millis(50));
    }
    println!(
        "## 4. Idle CPU\n\nA silent agent (`{{\"$hang\":true}}`, blocked in pause(2)) under \
         `runbook run --timeout {secs}s` (default 3 min inactivity timeout, so only the \
         --timeout ends it: outcome timed_out, exit 5). runbook's own CPU is utime+stime from \
         /proc/PID/stat (all its threads, including finished ones; 10 ms ticks), and the sum \
         of its live threads' run time from /proc/PID/task/*/schedstat (ns), both read every \
         50 ms until it exits; \"steady\" is the schedstat growth after the first 2 s \
         (startup). wait4 adds the children runbook reaped (fake agent, its `--version` probe) \
         and runbook's last 50 ms (stopping the agent, writing the receipt).\n"
    );
    println!(
        "| run | wall | runbook CPU (stat) | runbook CPU (schedstat, live threads) | steady after 2 s | wait4 user+sys incl. children | outcome |"
    );
    println!("|---|---:|---:|---:|---:|---:|---|");
    for r in &mut runs {
        let rr = reap(&r.child);
        let wall = start.elapsed();
        let rd = run_dir(&r.runs).expect("run dir");
        let receipt = fs::read_to_string(rd.join("result.json")).unwrap_or_default();
        let outcome = receipt
            .split("\"outcome\": \"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap_or("?");
        let ms = |d: Option<Duration>| {
            d.map_or("?".into(), |d| format!("{:.1} ms", d.as_secs_f64() * 1e3))
        };
        println!(
            "| {} | {:.1} s | **{}** | {} | {} | {} | {} (exit {}) |",
            r.label,
            wall.as_secs_f64(),
            ms(r.last_ticks),
            ms(r.last),
            ms(r.last.zip(r.early).map(|(l, e)| l.saturating_sub(e))),
            ms(Some(rr.cpu)),
            outcome,
            rr.exit_code().map_or("signal".into(), |c| c.to_string())
        );
    }
    println!();
    let _ = fs::remove_dir_all(&dir);
}
