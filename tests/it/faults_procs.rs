//! Fault matrix, processes: an agent's tree that tries to outlive the run (a grandchild that
//! re-forks itself every few milliseconds, one that left the agent's session, one that closed its
//! output) and a runbook that is killed outright. Each row runs twice where it matters: with the
//! run's processes in a cgroup of their own, and with `RUNBOOK_NO_CGROUP=1`, where they are found
//! by the mark they inherit and swept from `/proc`.
//!
//! Every process a test starts carries a mark of the test's own in its environment (runbook passes
//! its environment on), so what is left is found independently of how runbook finds it, and is
//! killed when the test ends, whether it passed or not.

use std::path::PathBuf;
use std::process::{Child, Command};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use runbook::event::Outcome;
use runbook::receipt::Receipt;

use crate::support::{self, Outcome as Finished, TestContext};

/// How long a run here may take before the test fails (and its processes are killed).
const LIMIT: Duration = Duration::from_secs(30);
/// How long the processes of a run may take to be gone once runbook is.
const GONE_WITHIN: Duration = Duration::from_secs(10);

const STEP_START: &str = r#"{"type":"step_start","timestamp":1795319488573,"sessionID":"ses_test","part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_test","snapshot":"5743","type":"step-start"}}"#;
const TEXT: &str = r#"{"type":"text","timestamp":1795319488778,"sessionID":"ses_test","part":{"id":"prt_2","messageID":"msg_1","sessionID":"ses_test","type":"text","text":"All done.","time":{"start":1795319488595,"end":1795319488772}}}"#;
const FINAL: &str = r#"{"type":"step_finish","timestamp":1795319488892,"sessionID":"ses_test","part":{"id":"prt_5","reason":"stop","snapshot":"5743","messageID":"msg_1","sessionID":"ses_test","type":"step-finish","tokens":{"total":1540,"input":1500,"output":40,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.001}}"#;
const HANG: &str = r#"{"$hang":true}"#;

/// A grandchild that forks its next generation every 2 ms and exits, holding the agent's pipes,
/// each generation in a session of its own (out of the agent's process group).
const REFORK: &str = r#"{"$refork_holding_stdout":{"every_ms":2,"setsid":true}}"#;
/// The same, with its output closed: the pipes close when the agent exits.
const REFORK_CLOSED: &str =
    r#"{"$refork_holding_stdout":{"every_ms":2,"setsid":true,"close_output":true}}"#;
/// The agent, and what it starts from then on, ignore SIGTERM.
const IGNORE_TERM: &str = r#"{"$ignore_sigterm":true}"#;

/// How the run's processes are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Grouping {
    /// A cgroup of the run's own (where the machine lets runbook make one).
    Cgroup,
    /// `RUNBOOK_NO_CGROUP=1`: the mark swept from `/proc`.
    Sweep,
}

/// A test's runs, with every process they start marked and killed when the test ends.
struct Marked {
    ctx: TestContext,
    mark: String,
    grouping: Grouping,
}

impl Marked {
    fn new(grouping: Grouping) -> Self {
        let mut ctx = TestContext::new();
        let mark = format!(
            "{}-{}",
            std::process::id(),
            ctx.root().file_name().unwrap().to_string_lossy()
        );
        ctx.env(MARK, mark.clone());
        ctx.env(
            "FAKE_AGENT_CGROUP_FILE",
            cgroup_file(&ctx).display().to_string(),
        );
        if grouping == Grouping::Sweep {
            ctx.env("RUNBOOK_NO_CGROUP", "1");
        }
        Self {
            ctx,
            mark,
            grouping,
        }
    }

    /// `runbook run` with the fake agent playing `scenario`.
    fn command(&self, scenario: &[&str], extra: &[&str]) -> Command {
        self.ctx.fake_run(&scenario.join("\n"), extra)
    }

    /// Runs it to its end.
    fn run(&self, scenario: &[&str], extra: &[&str]) -> Finished {
        support::run(&mut self.command(scenario, extra), LIMIT)
    }

    /// The living (not zombie) processes that carry this test's mark: found in `/proc`, or
    /// recorded by the fake agent (a process that re-forks every few milliseconds can be missed
    /// by a look through `/proc`, but each generation is recorded by the one before).
    fn survivors(&self) -> Vec<i32> {
        let mut left = marked(&self.mark);
        let entry = format!("{MARK}={}", self.mark);
        for pid in self.ctx.surviving_agent_processes() {
            if !left.contains(&pid) && has_entry(pid, &entry) {
                left.push(pid);
            }
        }
        left
    }

    /// How many pids the fake agent has recorded.
    fn recorded(&self) -> usize {
        std::fs::read_to_string(self.ctx.pid_file()).map_or(0, |t| t.lines().count())
    }

    /// `Ok` when three looks 30 ms apart find no marked process and no new recorded pid.
    fn settled(&self) -> Result<(), Vec<i32>> {
        let mut recorded = None;
        for _ in 0..3 {
            let left = self.survivors();
            let now = self.recorded();
            if !left.is_empty() || recorded.is_some_and(|r| r != now) {
                return Err(left);
            }
            recorded = Some(now);
            thread::sleep(Duration::from_millis(30));
        }
        Ok(())
    }

    /// Fails the test unless every marked process is gone within [`GONE_WITHIN`].
    #[track_caller]
    fn assert_nothing_left(&self) {
        let until = Instant::now() + GONE_WITHIN;
        let mut settled = self.settled();
        while settled.is_err() && Instant::now() < until {
            thread::sleep(Duration::from_millis(50));
            settled = self.settled();
        }
        if let Err(left) = settled {
            panic!(
                "processes of the run outlived it: {} ({} pids recorded)",
                describe(&left),
                self.recorded()
            );
        }
    }

    /// Fails the test unless the agent ran in the grouping this test is about: a cgroup runbook
    /// made for the run, or (with `RUNBOOK_NO_CGROUP=1`) none. Where the machine has no writable
    /// cgroup2 hierarchy, the cgroup rows run the sweep and say so.
    #[track_caller]
    fn assert_grouping(&self) {
        let text = std::fs::read_to_string(cgroup_file(&self.ctx)).expect("the agent's cgroup");
        let in_run_cgroup = text
            .lines()
            .any(|l| l.starts_with("0::") && l.contains("/runbook-"));
        match self.grouping {
            Grouping::Sweep => assert!(!in_run_cgroup, "RUNBOOK_NO_CGROUP=1: {text}"),
            Grouping::Cgroup if cgroups_expected() => {
                assert!(in_run_cgroup, "the agent ran outside a run cgroup: {text}");
            }
            Grouping::Cgroup => {
                #[expect(clippy::print_stderr, reason = "a skipped path must say so")]
                {
                    eprintln!("SKIPPED cgroup path: no writable cgroup2 hierarchy (not root)");
                }
            }
        }
    }

    /// Starts runbook in the background; returns once the agent has said something.
    fn start(&self, scenario: &[&str], extra: &[&str]) -> Child {
        let mut cmd = self.command(scenario, extra);
        self.ctx.spawn_until(&mut cmd, "step.started")
    }
}

impl Drop for Marked {
    fn drop(&mut self) {
        // Whatever the test did, nothing it started is left running on the machine.
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            for pid in self.survivors() {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
            if self.settled().is_ok() || Instant::now() > until {
                return;
            }
        }
    }
}

/// The variable that marks a test's processes.
const MARK: &str = "FAULTS_PROCS_MARK";

fn cgroup_file(ctx: &TestContext) -> PathBuf {
    ctx.root().join("agent.cgroup")
}

/// Whether runbook can be expected to make a cgroup here: root, with a cgroup2 hierarchy mounted.
fn cgroups_expected() -> bool {
    let mounted = std::fs::read_to_string("/proc/self/mountinfo")
        .is_ok_and(|m| m.lines().any(|l| l.contains(" - cgroup2 ")));
    mounted && nix::unistd::geteuid().is_root()
}

/// Every living process whose environment holds `MARK=mark`, newest first.
fn marked(mark: &str) -> Vec<i32> {
    let entry = format!("{MARK}={mark}");
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut pids: Vec<i32> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .collect();
    pids.sort_unstable_by(|a, b| b.cmp(a));
    pids.into_iter()
        .filter(|&pid| pid != std::process::id() as i32 && has_entry(pid, &entry))
        .collect()
}

/// Whether process `pid` is alive and its environment holds `entry`.
fn has_entry(pid: i32, entry: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|&b| b == 0).any(|v| v == entry.as_bytes()))
        && support::alive(pid)
}

/// `pid (name)` for each process, for a failure message.
fn describe(pids: &[i32]) -> String {
    pids.iter()
        .map(|pid| {
            let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            format!("{pid} ({})", name.trim())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// runbook's receipt as `runbook status --json` tells it (built from the log when runbook
/// left none).
fn status(ctx: &TestContext) -> Receipt {
    let out = ctx.run(&["status", "--json"]);
    serde_json::from_str(&out.stdout).expect("a receipt from status")
}

// ------------------------------------------------------------------------------------------------
// A re-forking grandchild holds the agent's stdout after the agent exits.

fn refork_after_the_agent_exits(grouping: Grouping) {
    let m = Marked::new(grouping);
    let out = m.run(&[STEP_START, REFORK, TEXT, FINAL], &[]);
    out.assert_exit(0);
    m.ctx.ended_as(Outcome::Completed);
    m.assert_grouping();
    m.assert_nothing_left();
}

#[test]
fn reforking_grandchild_holding_stdout_after_the_agent_exits_is_ended_cgroup() {
    refork_after_the_agent_exits(Grouping::Cgroup);
}

#[test]
fn reforking_grandchild_holding_stdout_after_the_agent_exits_is_ended_sweep() {
    refork_after_the_agent_exits(Grouping::Sweep);
}

#[test]
fn reforking_grandchild_that_ignores_sigterm_after_the_agent_exits_is_ended_sweep() {
    let m = Marked::new(Grouping::Sweep);
    let out = m.run(&[STEP_START, IGNORE_TERM, REFORK, TEXT, FINAL], &[]);
    out.assert_exit(0);
    m.ctx.ended_as(Outcome::Completed);
    m.assert_nothing_left();
}

// ------------------------------------------------------------------------------------------------
// A re-forking grandchild that closed its output: the run would end, leaving it behind.

fn refork_closed(grouping: Grouping) {
    let m = Marked::new(grouping);
    let out = m.run(&[STEP_START, REFORK_CLOSED, TEXT, FINAL], &[]);
    out.assert_exit(0);
    m.ctx.ended_as(Outcome::Completed);
    m.assert_grouping();
    m.assert_nothing_left();
}

#[test]
fn reforking_grandchild_with_its_output_closed_does_not_survive_a_completed_run_cgroup() {
    refork_closed(Grouping::Cgroup);
}

#[test]
fn reforking_grandchild_with_its_output_closed_does_not_survive_a_completed_run_sweep() {
    refork_closed(Grouping::Sweep);
}

// ------------------------------------------------------------------------------------------------
// --timeout while the agent lives, with a re-forking grandchild beside it.

fn refork_timeout(grouping: Grouping) {
    let m = Marked::new(grouping);
    let out = m.run(
        &[STEP_START, REFORK, HANG],
        &["--inactivity-timeout", "1m", "--timeout", "1s"],
    );
    out.assert_exit(5);
    m.ctx.ended_as(Outcome::TimedOut);
    m.assert_grouping();
    m.assert_nothing_left();
}

#[test]
fn reforking_grandchild_and_a_timeout_while_the_agent_lives_ends_timed_out_cgroup() {
    refork_timeout(Grouping::Cgroup);
}

#[test]
fn reforking_grandchild_and_a_timeout_while_the_agent_lives_ends_timed_out_sweep() {
    refork_timeout(Grouping::Sweep);
}

// ------------------------------------------------------------------------------------------------
// The watchdog, with a re-forking grandchild that ignores SIGTERM beside a hung agent.

#[test]
fn reforking_grandchild_that_ignores_sigterm_beside_a_hung_agent_ends_hung_sweep() {
    let m = Marked::new(Grouping::Sweep);
    let out = m.run(
        &[STEP_START, IGNORE_TERM, REFORK, HANG],
        &["--inactivity-timeout", "1s"],
    );
    out.assert_exit(3);
    m.ctx.ended_as(Outcome::Hung);
    m.assert_nothing_left();
}

// ------------------------------------------------------------------------------------------------
// Ctrl-C once the agent has exited and a re-forking grandchild holds its pipes.

#[test]
fn ctrl_c_while_a_reforking_grandchild_holds_the_pipes_ends_the_run_interrupted() {
    let m = Marked::new(Grouping::Cgroup);
    let child = m.start(
        &[STEP_START, IGNORE_TERM, REFORK, TEXT],
        &["--kill-grace", "1m"],
    );
    // The agent exits at once; the grandchild holds the pipes through the two seconds' linger.
    thread::sleep(Duration::from_millis(500));
    let runbook = Pid::from_raw(child.id() as i32);
    kill(runbook, Signal::SIGINT).unwrap();
    thread::sleep(Duration::from_millis(200));
    kill(runbook, Signal::SIGINT).unwrap();
    let out = support::finish(child, LIMIT);
    out.assert_exit(130);
    m.ctx.ended_as(Outcome::Interrupted);
    m.assert_nothing_left();
}

// ------------------------------------------------------------------------------------------------
// The limits still apply while runbook ends what the agent left behind: a re-forking grandchild
// that closed its output (so the agent's pipes closed with it) and ignores SIGTERM, with a long
// grace before SIGKILL.

#[test]
fn ctrl_c_while_ending_a_reforking_grandchild_that_ignores_sigterm_kills_it_at_once() {
    let m = Marked::new(Grouping::Cgroup);
    let mut cmd = m.command(
        &[STEP_START, IGNORE_TERM, REFORK_CLOSED, TEXT, FINAL],
        &["--kill-grace", "1m"],
    );
    let child = m.ctx.spawn_until(&mut cmd, "signal.sent");
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let out = support::finish(child, LIMIT);
    out.assert_exit(130);
    m.ctx.ended_as(Outcome::Interrupted);
    m.assert_nothing_left();
}

#[test]
fn the_timeout_while_ending_a_reforking_grandchild_that_ignores_sigterm_kills_it() {
    let m = Marked::new(Grouping::Sweep);
    let out = m.run(
        &[STEP_START, IGNORE_TERM, REFORK_CLOSED, TEXT, FINAL],
        &["--kill-grace", "1m", "--timeout", "2s"],
    );
    // The agent finished its work before the deadline: what it left is ended, its verdict stays.
    out.assert_exit(0);
    m.ctx.ended_as(Outcome::Completed);
    m.assert_nothing_left();
}

// ------------------------------------------------------------------------------------------------
// runbook itself is killed (SIGKILL): the agent dies with it, and so must everything it started.

fn sigkill_runbook(grouping: Grouping, leftover: &str) {
    let m = Marked::new(grouping);
    let runbook = m.start(
        &[STEP_START, leftover, HANG],
        &["--inactivity-timeout", "1m"],
    );
    // The leftover has started once the agent has recorded it.
    let until = Instant::now() + Duration::from_secs(10);
    while m.ctx.surviving_agent_processes().len() < 2 && Instant::now() < until {
        thread::sleep(Duration::from_millis(10));
    }
    let mut runbook = runbook;
    runbook.kill().unwrap();
    runbook.wait().unwrap();
    m.assert_grouping();
    m.assert_nothing_left();
    assert_eq!(status(&m.ctx).outcome, Outcome::Abandoned);
}

const GRANDCHILD: &str = r#"{"$spawn_grandchild":{"sleep_ms":60000}}"#;
const SETSID_GRANDCHILD: &str = r#"{"$spawn_grandchild":{"sleep_ms":60000,"setsid":true}}"#;

#[test]
fn runbook_sigkilled_leaves_no_child_of_the_agents_group_cgroup() {
    sigkill_runbook(Grouping::Cgroup, GRANDCHILD);
}

#[test]
fn runbook_sigkilled_leaves_no_child_of_the_agents_group_sweep() {
    sigkill_runbook(Grouping::Sweep, GRANDCHILD);
}

#[test]
fn runbook_sigkilled_leaves_no_child_that_left_with_setsid_cgroup() {
    sigkill_runbook(Grouping::Cgroup, SETSID_GRANDCHILD);
}

#[test]
fn runbook_sigkilled_leaves_no_child_that_left_with_setsid_sweep() {
    sigkill_runbook(Grouping::Sweep, SETSID_GRANDCHILD);
}

#[test]
fn runbook_sigkilled_leaves_no_reforking_grandchild_cgroup() {
    sigkill_runbook(Grouping::Cgroup, REFORK);
}

#[test]
fn runbook_sigkilled_leaves_no_reforking_grandchild_sweep() {
    sigkill_runbook(Grouping::Sweep, REFORK);
}

/// runbook is killed after the agent started `env -i setsid sleep` (no mark, a session of its
/// own): outside a cgroup only what runbook told its guardian finds it.
fn sigkill_runbook_after_an_unmarked_setsid_child(grouping: Grouping) {
    use crate::faults_observers::{Reaper, unique_sleep};
    let m = Marked::new(grouping);
    let arg = unique_sleep();
    let _reaper = Reaper(arg.clone());
    let spawn = serde_json::json!({ "$spawn": ["env", "-i", "setsid", "sleep", arg] }).to_string();
    let runbook = m.start(&[STEP_START, &spawn, HANG], &["--inactivity-timeout", "1m"]);
    sigkill_once_told_of(runbook, &arg);
    m.assert_grouping();
    m.assert_nothing_left();
}

/// Once `sleep ARG` runs and runbook has had time to tell its guardian of it, SIGKILLs runbook
/// and fails the test unless the sleep is gone within [`GONE_WITHIN`].
fn sigkill_once_told_of(mut runbook: Child, arg: &str) {
    use crate::faults_observers::{appears, with_argument};
    assert!(appears(arg, Duration::from_secs(10)), "the sleep started");
    // runbook tells its guardian of the processes below it twice a second.
    thread::sleep(Duration::from_millis(1500));
    runbook.kill().unwrap();
    runbook.wait().unwrap();
    let until = Instant::now() + GONE_WITHIN;
    while !with_argument(arg).is_empty() && Instant::now() < until {
        thread::sleep(Duration::from_millis(20));
    }
    let left = with_argument(arg);
    assert!(
        left.is_empty(),
        "sleep {arg} outlived a killed runbook: {}",
        describe(&left)
    );
}

#[test]
fn runbook_sigkilled_leaves_no_unmarked_setsid_child_cgroup() {
    sigkill_runbook_after_an_unmarked_setsid_child(Grouping::Cgroup);
}

#[test]
fn runbook_sigkilled_leaves_no_unmarked_setsid_child_sweep() {
    sigkill_runbook_after_an_unmarked_setsid_child(Grouping::Sweep);
}

/// runbook is killed while an observer's unmarked `setsid sleep` runs.
fn sigkill_runbook_with_an_observers_child(grouping: Grouping) {
    use crate::faults_observers::{Reaper, unique_sleep};
    let m = Marked::new(grouping);
    let arg = unique_sleep();
    let _reaper = Reaper(arg.clone());
    let observer = format!("env -i setsid sleep {arg} & cat > /dev/null");
    let runbook = m.start(
        &[STEP_START, HANG],
        &["--inactivity-timeout", "1m", "--on-event", &observer],
    );
    sigkill_once_told_of(runbook, &arg);
    m.assert_nothing_left();
}

#[test]
fn runbook_sigkilled_leaves_no_child_of_an_observer_cgroup() {
    sigkill_runbook_with_an_observers_child(Grouping::Cgroup);
}

#[test]
fn runbook_sigkilled_leaves_no_child_of_an_observer_sweep() {
    sigkill_runbook_with_an_observers_child(Grouping::Sweep);
}

// ------------------------------------------------------------------------------------------------
// A run that went well leaves nothing either: no agent process, no guardian, no cgroup.

fn completed_run_leaves_nothing(grouping: Grouping) {
    let m = Marked::new(grouping);
    let out = m.run(&[STEP_START, TEXT, FINAL], &[]);
    out.assert_exit(0);
    m.ctx.ended_as(Outcome::Completed);
    m.assert_grouping();
    // Right away: runbook has waited for everything it started.
    let left = m.survivors();
    assert!(left.is_empty(), "left running: {}", describe(&left));
    let cgroup = std::fs::read_to_string(cgroup_file(&m.ctx)).unwrap();
    if let Some(dir) = run_cgroup_dir(&cgroup) {
        assert!(
            !dir.exists(),
            "the run's cgroup {} is still there",
            dir.display()
        );
    }
}

#[test]
fn a_completed_run_leaves_no_process_and_no_cgroup_cgroup() {
    completed_run_leaves_nothing(Grouping::Cgroup);
}

#[test]
fn a_completed_run_leaves_no_process_sweep() {
    completed_run_leaves_nothing(Grouping::Sweep);
}

/// The directory of the run's cgroup, from the agent's `/proc/self/cgroup`.
fn run_cgroup_dir(cgroup: &str) -> Option<PathBuf> {
    let path = cgroup
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .filter(|p| p.contains("/runbook-"))?;
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mount = mountinfo
        .lines()
        .find(|l| l.contains(" - cgroup2 "))?
        .split(' ')
        .nth(4)?;
    Some(PathBuf::from(format!("{mount}{path}")))
}

// ------------------------------------------------------------------------------------------------
// How long ending a re-forking tree takes, each way. Run with
// `cargo test --release --test it measure_ending -- --ignored --nocapture`.

#[test]
#[ignore = "a measurement, not a check: run it by hand"]
fn measure_ending_a_reforking_tree() {
    for grouping in [Grouping::Cgroup, Grouping::Sweep] {
        if grouping == Grouping::Cgroup && !cgroups_expected() {
            continue;
        }
        let mut took: Vec<Duration> = (0..10).map(|i| end_reforker_once(grouping, i)).collect();
        took.sort();
        #[expect(clippy::print_stderr, reason = "the measurement's result")]
        {
            eprintln!(
                "{grouping:?}: min {:?}, median {:?}, max {:?} over {} runs",
                took[0],
                took[took.len() / 2],
                took[took.len() - 1],
                took.len()
            );
        }
    }
}

/// Starts a re-forking grandchild marked for (and, with a cgroup, in) a run, has runbook's
/// guardian end the run, and times that from the moment it learns runbook is gone.
fn end_reforker_once(grouping: Grouping, i: usize) -> Duration {
    use std::os::unix::process::CommandExt as _;

    let m = Marked::new(grouping);
    let tag = format!("measure-{}-{i}", std::process::id());
    let cgroup = (grouping == Grouping::Cgroup).then(|| {
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap();
        let own = own
            .lines()
            .find_map(|l| l.strip_prefix("0::"))
            .unwrap()
            .to_owned();
        let base = run_cgroup_dir(&format!("0::{own}/runbook-x")).unwrap();
        let dir = base.parent().unwrap().join(format!("runbook-{tag}"));
        std::fs::create_dir(&dir).unwrap();
        dir
    });
    let scenario = m.ctx.root().join("refork.ndjson");
    std::fs::write(&scenario, format!("{REFORK}\n")).unwrap();
    let mut agent = Command::new(support::fake_agent_bin());
    agent
        .args(["run", "x"])
        .env("FAKE_AGENT_SCENARIO", &scenario)
        .env("FAKE_AGENT_PID_FILE", m.ctx.pid_file())
        .env(MARK, &m.mark)
        .env("RUNBOOK_RUN", &tag)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0);
    if let Some(dir) = &cgroup {
        let procs = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join("cgroup.procs"))
            .unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&procs);
        // SAFETY: only write(2) between fork and exec; `procs` outlives the spawn.
        unsafe {
            agent.pre_exec(move || {
                libc::write(fd, b"0".as_ptr().cast(), 1);
                Ok(())
            });
        }
        agent.spawn().unwrap().wait().unwrap();
        drop(procs);
    } else {
        agent.spawn().unwrap().wait().unwrap();
    }
    thread::sleep(Duration::from_millis(300));
    assert!(m.settled().is_err(), "the grandchild is re-forking");
    let mut guardian = Command::new(support::runbook_bin());
    guardian
        .args(["__guardian", &tag])
        .env(MARK, &m.mark)
        .stdin(std::process::Stdio::piped());
    if let Some(dir) = &cgroup {
        guardian.arg(dir);
    }
    let mut guardian = guardian.spawn().unwrap();
    thread::sleep(Duration::from_millis(100));
    let start = Instant::now();
    drop(guardian.stdin.take());
    let status = guardian.wait().unwrap();
    let took = start.elapsed();
    assert!(status.success(), "the guardian ended everything");
    m.assert_nothing_left();
    if let Some(dir) = cgroup {
        assert!(!dir.exists(), "the guardian removed the cgroup");
    }
    took
}
