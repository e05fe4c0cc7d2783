//! Fault matrix, observers: an `--on-event` command that leaves processes behind (with `setsid`,
//! by forking twice with its descriptors closed, without the run's mark), one that writes without
//! end, and the privacy of what they write. Each process row runs with the run's cgroups and with
//! `RUNBOOK_NO_CGROUP=1`.

use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::CommandExt as _;
use std::time::{Duration, Instant};

use runbook::event::Outcome;

use crate::support::{self, TestContext};

const STEP_START: &str = r#"{"type":"step_start","timestamp":1795319488573,"sessionID":"ses_test","part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_test","snapshot":"5743","type":"step-start"}}"#;
const TEXT: &str = r#"{"type":"text","timestamp":1795319488778,"sessionID":"ses_test","part":{"id":"prt_2","messageID":"msg_1","sessionID":"ses_test","type":"text","text":"All done.","time":{"start":1795319488595,"end":1795319488772}}}"#;
const FINAL: &str = r#"{"type":"step_finish","timestamp":1795319488892,"sessionID":"ses_test","part":{"id":"prt_5","reason":"stop","snapshot":"5743","messageID":"msg_1","sessionID":"ses_test","type":"step-finish","tokens":{"total":1540,"input":1500,"output":40,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.001}}"#;
/// The agent takes its time, so that observers are well under way before the run ends.
const PAUSE: &str = r#"{"$sleep_ms":700}"#;

/// A `sleep` argument no other process on the machine has: `600.<digits>`, found in the process
/// table by it whatever the process did to its environment, group or session.
pub(crate) fn unique_sleep() -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "600.{}{:09}{}",
        std::process::id(),
        nanos,
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// The living processes one of whose arguments is `arg`.
pub(crate) fn with_argument(arg: &str) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.split(|&b| b == 0).any(|a| a == arg.as_bytes()))
                && support::alive(pid)
        })
        .collect()
}

/// Kills what has the argument when the test ends, passed or not.
pub(crate) struct Reaper(pub String);

impl Drop for Reaper {
    fn drop(&mut self) {
        for pid in with_argument(&self.0) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// Waits up to `within` for `arg` to be on the process table; whether it is.
pub(crate) fn appears(arg: &str, within: Duration) -> bool {
    let until = Instant::now() + within;
    while with_argument(arg).is_empty() {
        if Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

/// Runs an observer that starts `sleep <unique>` the way `start` says (`{}` is the sleep's
/// argument) and then reads its input, and checks that nothing of it is left once runbook exits.
fn observer_leaves_nothing(start: &str, no_cgroup: bool) {
    let mut ctx = TestContext::new();
    if no_cgroup {
        ctx.env("RUNBOOK_NO_CGROUP", "1");
    }
    let arg = unique_sleep();
    let _reaper = Reaper(arg.clone());
    let started = ctx.root().join("observer-started");
    let observer = format!(
        "{}\ntouch '{}'\ncat > /dev/null",
        start.replace("{}", &arg),
        started.display()
    );
    let out = ctx.run_fake(
        &[STEP_START, PAUSE, TEXT, FINAL].join("\n"),
        &["--on-event", &observer],
    );
    out.assert_exit(0);
    let receipt = ctx.ended_as(Outcome::Completed);
    assert!(
        started.exists(),
        "the observer ran: {:?}",
        receipt.observers
    );
    // Right away: runbook ends what observers left before it exits.
    let left = with_argument(&arg);
    assert!(
        left.is_empty(),
        "the observer's sleep {arg} outlived the run: {left:?}"
    );
}

/// `setsid sleep` in the background: a session of its own, the observer's pipes held.
const SETSID: &str = "setsid sleep {} &";
/// Forked twice (re-parented), in a session of its own, its descriptors closed, and without the
/// environment runbook gave it.
const DOUBLE_FORK: &str = "( env -i setsid sleep {} </dev/null >/dev/null 2>&1 & )";

#[test]
fn an_observers_setsid_child_does_not_outlive_the_run_cgroup() {
    observer_leaves_nothing(SETSID, false);
}

#[test]
fn an_observers_setsid_child_does_not_outlive_the_run_sweep() {
    observer_leaves_nothing(SETSID, true);
}

#[test]
fn an_observers_double_forked_child_without_its_fds_or_environment_does_not_outlive_the_run_cgroup()
{
    observer_leaves_nothing(DOUBLE_FORK, false);
}

#[test]
fn an_observers_double_forked_child_without_its_fds_or_environment_does_not_outlive_the_run_sweep()
{
    observer_leaves_nothing(DOUBLE_FORK, true);
}

fn observer_outlives_a_turn(no_cgroup: bool) {
    // The first turn's agent is ended with its tree; the observer's reader, which left the
    // observer's group and was re-parented to runbook like an orphan of the agent's, is not.
    let mut ctx = TestContext::new();
    if no_cgroup {
        ctx.env("RUNBOOK_NO_CGROUP", "1");
    }
    let seen = ctx.root().join("seen.ndjson");
    let observer = format!(
        "exec 3<&0; ( setsid sh -c 'exec cat > \"$0\"' '{seen}' <&3 3<&- & ); exec 3<&-; \
         until grep -q run.finished '{seen}' 2>/dev/null; do sleep 0.05; done",
        seen = seen.display()
    );
    let out = ctx.run_fake(
        &[STEP_START, TEXT, FINAL].join("\n"),
        &["--on-event", &observer, "--then", "once more"],
    );
    out.assert_exit(0);
    ctx.ended_as(Outcome::Completed);
    let text = std::fs::read_to_string(&seen).unwrap_or_default();
    let turns: Vec<u64> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "turn.started" || v["type"] == "run.finished")
        .map(|v| v["meta"]["turn_index"].as_u64().unwrap_or(99))
        .collect();
    assert!(
        text.contains("\"run.finished\"") && turns.contains(&1),
        "the observer's reader saw the second turn and the end of the run: {text}"
    );
}

#[test]
fn an_observers_reader_outlives_the_first_turns_agent_cgroup() {
    observer_outlives_a_turn(false);
}

#[test]
fn an_observers_reader_outlives_the_first_turns_agent_sweep() {
    observer_outlives_a_turn(true);
}

#[test]
fn an_observer_that_writes_without_end_fills_its_capped_log_and_the_run_completes() {
    let ctx = TestContext::new();
    let out = ctx.run_fake(
        &[STEP_START, PAUSE, TEXT, FINAL].join("\n"),
        &["--on-event", "yes"],
    );
    out.assert_exit(0);
    let receipt = ctx.ended_as(Outcome::Completed);
    let log = receipt.observers[0]
        .log
        .clone()
        .unwrap_or_else(|| panic!("no log record: {:?}", receipt.observers));
    assert_eq!(log.cap_bytes, 8 * 1024 * 1024);
    assert!(log.cut_bytes > 0, "{log:?}");
    let path = ctx.run_dir().join("observers/1.stdout.log");
    let bytes = std::fs::read(&path).unwrap();
    assert!(
        bytes.len() as u64 <= log.cap_bytes,
        "{} bytes in {}",
        bytes.len(),
        path.display()
    );
    assert!(
        bytes.len() as u64 > log.cap_bytes / 2,
        "the head and the tail are kept"
    );
    let text = String::from_utf8(bytes).unwrap();
    let cut: Vec<&str> = text.lines().filter(|l| *l != "y").collect();
    let [line] = cut[..] else {
        panic!("one line about the cut, the rest the output: {cut:?}");
    };
    assert!(
        line.starts_with("[runbook: ") && line.contains("bytes of output cut here"),
        "{line}"
    );
    assert!(text.starts_with("y\ny\n") && text.ends_with("y\ny\n"));
    // The receipt counts at least what the log had cut when it was made.
    let said: u64 = line["[runbook: ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(said >= log.cut_bytes, "{said} < {}", log.cut_bytes);
}

#[test]
fn observer_logs_are_for_the_user_only_whatever_the_umask() {
    let ctx = TestContext::new();
    let mut cmd = ctx.fake_run(
        &[STEP_START, TEXT, FINAL].join("\n"),
        &["--on-event", "echo out; echo err >&2; cat > /dev/null"],
    );
    // SAFETY: umask(2) is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            nix::sys::stat::umask(nix::sys::stat::Mode::empty());
            Ok(())
        });
    }
    let out = support::run(&mut cmd, Duration::from_secs(30));
    out.assert_exit(0);
    ctx.ended_as(Outcome::Completed);
    let dir = ctx.run_dir().join("observers");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700, "{}", dir.display());
    for name in ["1.stdout.log", "1.stderr.log"] {
        assert_eq!(mode(&dir.join(name)), 0o600, "{name}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("1.stdout.log")).unwrap(),
        "out\n"
    );
}
