//! How much CPU the real agents use while they wait on a stalled provider, and while one of their
//! tools is busy: the numbers the watchdog's CPU threshold is chosen from (docs/RELIABILITY.md,
//! "What counts as activity"). Each agent runs under runbook (no watchdog in the way) on a
//! script of two model calls: a shell tool that burns a core for a while with no output, as a
//! long compile does, then a reply that stalls mid-stream. The agent's process tree is sampled
//! from /proc meanwhile.
//!
//! `cargo test --test it idle_cpu -- --ignored --nocapture --test-threads 1`
//!
//! Ignored by default: it takes about a minute and a half per agent.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use runbook::event::EventKind;
use serde_json::json;

use crate::support::sse::{self, Fake, Protocol};
use crate::support::{
    self, TestContext, fake_anthropic as anthropic, fake_llm as chat, fake_responses as responses,
};

/// How long the tool keeps a core busy.
const BUSY: Duration = Duration::from_secs(15);
/// How long the stalled agent is watched.
const IDLE: Duration = Duration::from_secs(45);
/// The watchdog's sampling interval at its default, and the shorter spans it judges by.
const SPANS: [Duration; 5] = [
    Duration::from_millis(250),
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(5),
];
/// What marks the busy tool among the tree's processes.
const MARK: &str = "runbook-busy-tool";

/// The shell command of the busy tool: a loop with no output, then one line.
fn busy_command() -> String {
    format!(
        "timeout {} sh -c 'while :; do :; done # {MARK}'; echo done",
        BUSY.as_secs()
    )
}

/// The agent's process tree's CPU time (its own and its reaped children's), in clock ticks.
fn tree_ticks(root: i32) -> u64 {
    let mut procs = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        // After the name: state, ppid, …; utime, stime, cutime, cstime are the 12th-15th.
        let ppid: i32 = f[1].parse().unwrap_or(0);
        let ticks: u64 = f[11..15]
            .iter()
            .map(|t| t.parse::<u64>().unwrap_or(0))
            .sum();
        procs.push((pid, ppid, ticks));
    }
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(procs.iter().filter(|p| p.1 == parent).map(|p| p.0));
        i += 1;
    }
    procs
        .iter()
        .filter(|p| tree.contains(&p.0))
        .map(|p| p.2)
        .sum()
}

/// The agent's pid, from the `turn.started` of the newest run in `runs`, once it has started.
fn agent_of(runs: &Path) -> Option<i32> {
    let mut dirs: Vec<_> = std::fs::read_dir(runs)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    std::fs::read_to_string(dirs.pop()?.join("events.ndjson"))
        .ok()?
        .lines()
        .find_map(
            |l| match serde_json::from_str::<runbook::event::Event>(l).ok()?.kind {
                EventKind::TurnStarted { pid, .. } => i32::try_from(pid).ok(),
                _ => None,
            },
        )
}

/// Samples the CPU time of the agent of the run in `runs` every 100 ms until `done`: (when, clock
/// ticks).
pub(crate) fn sample_run(
    runs: &Path,
    done: &std::sync::atomic::AtomicBool,
) -> Vec<(std::time::SystemTime, u64)> {
    let mut root = None;
    let mut out = Vec::new();
    while !done.load(std::sync::atomic::Ordering::Relaxed) {
        root = root.or_else(|| agent_of(runs));
        if let Some(root) = root {
            out.push((std::time::SystemTime::now(), tree_ticks(root)));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    out
}

/// The end of the last span of at least `span` in `samples`, ending by `before`, over which the
/// tree used `share` of a core or more.
pub(crate) fn last_busy(
    samples: &[(std::time::SystemTime, u64)],
    span: Duration,
    share: f64,
    before: std::time::SystemTime,
) -> Option<std::time::SystemTime> {
    let mut last = None;
    for (i, &(t0, ticks0)) in samples.iter().enumerate() {
        let Some(&(t1, ticks1)) = samples[i..]
            .iter()
            .find(|(t, _)| t.duration_since(t0).unwrap_or_default() >= span)
        else {
            break;
        };
        let secs = t1.duration_since(t0).unwrap_or_default().as_secs_f64();
        if t1 <= before && ticks1.saturating_sub(ticks0) as f64 / clock_ticks() / secs >= share {
            last = Some(t1);
        }
    }
    last
}

/// Whether the busy tool is running in the tree.
fn tool_running() -> bool {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(MARK))
        })
}

/// Samples the tree every 100 ms for `span`, or while `go_on` holds; returns (elapsed, ticks).
fn sample(root: i32, span: Duration, go_on: impl Fn() -> bool) -> Vec<(Duration, u64)> {
    let t0 = Instant::now();
    let mut out = Vec::new();
    while t0.elapsed() < span && go_on() {
        out.push((t0.elapsed(), tree_ticks(root)));
        std::thread::sleep(Duration::from_millis(100));
    }
    out
}

/// The tree's use, as a share of one core, over each span of `every` in `samples`: (max, median,
/// mean) in percent.
fn shares(samples: &[(Duration, u64)], every: Duration) -> (f64, f64, f64) {
    let tick = 1.0 / clock_ticks();
    let mut rates = Vec::new();
    let mut start = 0;
    for (i, &(at, ticks)) in samples.iter().enumerate() {
        let (t0, ticks0) = samples[start];
        if at - t0 >= every {
            rates.push((ticks - ticks0) as f64 * tick / (at - t0).as_secs_f64() * 100.0);
            start = i;
        }
    }
    if rates.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let mean = rates.iter().sum::<f64>() / rates.len() as f64;
    rates.sort_by(f64::total_cmp);
    (rates[rates.len() - 1], rates[rates.len() / 2], mean)
}

/// The host's load over the last minute, from /proc/loadavg.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .next()
        .unwrap_or("?")
        .to_owned()
}

/// Runs `args` under runbook in `ctx`, measures the busy tool and then the stall, prints the
/// numbers, and returns the idle maximum over spans of a second or more and the busy minimum
/// (percent of a core).
#[expect(clippy::print_stdout, reason = "a measurement prints its numbers")]
fn measure(
    agent: &str,
    ctx: &TestContext,
    args: &[&str],
    tool: bool,
    stalled: impl Fn() -> bool,
) -> (f64, f64) {
    let mut cmd = ctx.runbook(args);
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let mut child: Child = cmd.spawn().expect("runbook starts");
    let root = wait_for(Duration::from_secs(60), || {
        ctx.run_dirs().pop().and_then(|dir| {
            std::fs::read_to_string(dir.join("events.ndjson"))
                .ok()?
                .lines()
                .find_map(
                    |l| match serde_json::from_str::<runbook::event::Event>(l).ok()?.kind {
                        EventKind::TurnStarted { pid, .. } => i32::try_from(pid).ok(),
                        _ => None,
                    },
                )
        })
    })
    .expect("the agent started");
    let busy = if tool {
        wait_for(Duration::from_secs(60), || tool_running().then_some(()))
            .expect("the busy tool started");
        sample(root, BUSY, tool_running)
    } else {
        Vec::new()
    };
    wait_for(Duration::from_secs(60), || stalled().then_some(()))
        .expect("the agent waits on the stalled reply");
    // Without a tool first, OpenCode is still starting up: some seconds of a whole core, work
    // that counts as such.
    std::thread::sleep(Duration::from_secs(if tool { 2 } else { 10 }));
    let idle = sample(root, IDLE, || true);
    let series: Vec<String> = idle
        .windows(11)
        .step_by(10)
        .map(|w| format!("{:.0}", (w[10].1 - w[0].1) as f64 / clock_ticks() * 100.0))
        .collect();
    println!(
        "{agent}: idle, % of a core each second: {}",
        series.join(" ")
    );
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    let _ = child.wait();
    println!("{agent}: load {} (1 min)", load());
    let mut busy_min = f64::INFINITY;
    let mut idle_max: f64 = 0.0;
    for every in SPANS {
        let (imax, imed, imean) = shares(&idle, every);
        let (bmax, bmed, bmean) = shares(&busy[..busy.len().saturating_sub(3)], every);
        let bmin = {
            let mut v = busy_rates(&busy, every);
            v.sort_by(f64::total_cmp);
            v.first().copied().unwrap_or(f64::NAN)
        };
        println!(
            "  per {every:?}: idle max {imax:.1}% median {imed:.1}% mean {imean:.1}% · busy min {bmin:.1}% median {bmed:.1}% max {bmax:.1}% mean {bmean:.1}%"
        );
        // The watchdog's sample is a second or more at timeouts of 5 s and more.
        if every >= Duration::from_secs(1) {
            idle_max = idle_max.max(imax);
        }
        busy_min = busy_min.min(bmin);
    }
    (idle_max, busy_min)
}

/// The busy tool's per-span shares, its last half second left out (it may end within it).
fn busy_rates(samples: &[(Duration, u64)], every: Duration) -> Vec<f64> {
    let tick = 1.0 / clock_ticks();
    let samples = &samples[..samples.len().saturating_sub(5)];
    let mut rates = Vec::new();
    let mut start = 0;
    for (i, &(at, ticks)) in samples.iter().enumerate() {
        let (t0, ticks0) = samples[start];
        if at - t0 >= every {
            rates.push((ticks - ticks0) as f64 * tick / (at - t0).as_secs_f64() * 100.0);
            start = i;
        }
    }
    rates
}

/// The kernel's clock ticks a second, which /proc counts CPU time in.
fn clock_ticks() -> f64 {
    // SAFETY: sysconf only reads a constant.
    unsafe { libc::sysconf(libc::_SC_CLK_TCK) as f64 }
}

fn wait_for<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if let Some(v) = f() {
            return Some(v);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

fn work_dir() -> TestContext {
    let ctx = TestContext::new();
    sse::write_readme(&ctx.work).expect("write README.md");
    support::git_init(&ctx.work, &ctx.home);
    ctx
}

fn args<'a>(agent: &'a str, bin: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--agent",
        agent,
        "--agent-bin",
        bin.to_str().expect("UTF-8 agent path"),
        "--inactivity-timeout",
        "1h",
        "--timeout",
        "10m",
    ];
    args.extend_from_slice(extra);
    args.push("Run the build, then tell me how it went.");
    args
}

/// The idle agent's highest share stays under the watchdog's threshold. The busy tool's lowest is
/// printed beside it: it is what the tool got of a core, and on a loaded machine a single loop
/// gets less than the threshold (the load is printed too).
#[expect(clippy::print_stdout, reason = "a measurement prints its verdict")]
fn check(agent: &str, (idle_max, busy_min): (f64, f64)) {
    let threshold = runbook_threshold();
    println!(
        "  {agent}: idle at most {idle_max:.1}%, busy at least {busy_min:.1}%, threshold {threshold}%"
    );
    assert!(
        idle_max < threshold,
        "{agent}: idle max {idle_max:.1}% is not under the watchdog's threshold of {threshold}%"
    );
}

/// The threshold runbook's watchdog judges by, as documented (docs/RELIABILITY.md).
fn runbook_threshold() -> f64 {
    20.0
}

fn stalled_after<P: Protocol>(fake: &Fake<P>, calls: usize) -> impl Fn() -> bool + '_ {
    move || fake.main_requests().len() >= calls
}

#[test]
#[ignore = "a measurement: about a minute and a half"]
fn idle_cpu_of_opencode() {
    let Some(bin) = support::opencode_bin() else {
        return;
    };
    let mut ctx = work_dir();
    let call = chat::ToolCall::new(
        "call_build",
        "bash",
        json!({"command": busy_command(), "description": "Build", "timeout": 120000}),
    );
    let fake = chat::FakeLlm::start(vec![
        chat::Reply::tool_calls(None, vec![call], chat::Usage::new(1000, 20)),
        chat::Reply::StallMidStream {
            text: "The build".to_owned(),
        },
    ]);
    chat::opencode_against(&mut ctx, &fake.base_url(), &chat::OpencodeConfig::default());
    let args = args("opencode", &bin, &["-m", "fake/fake-model"]);
    let m = measure("opencode, a tool then a stall", &ctx, &args, true, || {
        fake.main_requests().len() >= 2
    });
    // After a tool call OpenCode works on for a few seconds (more on a loaded machine): that is
    // work, not idling. Idle is measured on a stall of its first call.
    let (_, busy_min) = m;
    let mut ctx = work_dir();
    let fake = chat::FakeLlm::start(vec![chat::Reply::StallMidStream {
        text: "The build".to_owned(),
    }]);
    chat::opencode_against(&mut ctx, &fake.base_url(), &chat::OpencodeConfig::default());
    let (idle_max, _) = measure("opencode, stalled mid-stream", &ctx, &args, false, || {
        !fake.main_requests().is_empty()
    });
    check("opencode", (idle_max, busy_min));
}

#[test]
#[ignore = "a measurement: about a minute and a half"]
fn idle_cpu_of_claude_code() {
    let Some(bin) = support::claude_bin() else {
        return;
    };
    let mut ctx = work_dir();
    let call = anthropic::Block::tool_use(
        "toolu_build",
        "Bash",
        json!({"command": busy_command(), "description": "Build", "timeout": 120000}),
    );
    let sc = sse::Scenario::new(
        "Run the build.",
        vec![
            anthropic::Reply::message(vec![call], anthropic::Usage::new(1000, 20)),
            anthropic::Reply::StallAfterHeaders,
        ],
        &[],
    );
    let fake = anthropic::FakeAnthropic::for_scenario(&sc);
    for (k, v) in anthropic::claude_env(&ctx.home, &fake.base_url()) {
        ctx.env(&k, v);
    }
    let args = args("claude", &bin, &["--permissions", "bypass"]);
    let m = measure("claude", &ctx, &args, true, stalled_after(&fake, 2));
    check("claude", m);
}

#[test]
#[ignore = "a measurement: about a minute and a half"]
fn idle_cpu_of_codex() {
    let Some(bin) = support::codex_bin() else {
        return;
    };
    let mut ctx = work_dir();
    let sc = sse::Scenario::new(
        "Run the build.",
        vec![
            responses::Reply::output(
                vec![responses::Item::exec("call_build", &busy_command())],
                responses::Usage::new(1000, 20),
            ),
            responses::Reply::StallAfterHeaders,
        ],
        &[],
    );
    let fake = responses::FakeResponses::for_scenario(&sc);
    let home = responses::CodexHome::new(&fake.base_url(), &responses::CodexConfig::default())
        .expect("a Codex home");
    for (k, v) in responses::codex_env(&ctx.home, &home) {
        ctx.env(&k, v);
    }
    let args = args("codex", &bin, &["--permissions", "bypass"]);
    let m = measure("codex", &ctx, &args, true, stalled_after(&fake, 2));
    check("codex", m);
}
