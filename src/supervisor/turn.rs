//! One agent invocation, start to end: spawn in its own process group, read both pipes, keep the
//! watchdog, the wall-clock limit and the budget, handle Ctrl-C, and decide how the turn ended.

use std::fs::File;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use nix::sys::signal::Signal;
use tokio::process::Command;
use tokio::sync::mpsc;
use tokio::time::{Instant, MissedTickBehavior, sleep_until};

use super::readers::{self, Batch};
use super::signals::{Received, Signals};
use super::tree::Tree;
use crate::agent::{Adapter, ParseContext, StreamEnd};
use crate::consumer::Dispatcher;
use crate::event::{Diagnostic, EventKind, ExitInfo, Outcome, Stream, Turn};
use crate::redact::Redactor;
use crate::watchdog::{Activity, CpuWindow, Verdict, Watchdog};

/// After the agent exits, how long its pipes may stay open (held by a leftover grandchild) before
/// the rest of its tree is ended.
const LINGER: Duration = Duration::from_secs(2);
/// How long the agent's `--version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);
/// How many stderr lines a watchdog diagnostic quotes.
const DIAGNOSTIC_STDERR_LINES: usize = 5;

/// What to run for this turn.
pub(crate) struct TurnSpec<'a> {
    pub program: &'a Path,
    pub args: Vec<String>,
    pub cwd: &'a Path,
    pub adapter: &'a dyn Adapter,
    /// What the adapter's parser is told.
    pub parse: ParseContext,
    /// Set in the agent's environment, on top of runbook's own.
    pub env: Vec<(String, String)>,
    pub turn: Turn,
    /// Ask the agent binary for its version alongside the run.
    pub probe_version: bool,
}

/// Limits that apply to the turn.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub inactivity: Duration,
    pub grace: Duration,
    /// The run's wall-clock deadline (shared by all turns).
    pub deadline: Option<Instant>,
    /// The run's budget in USD (shared by all turns).
    pub max_cost: Option<f64>,
    /// How long an agent that printed its final result may take to exit before it is ended.
    pub finish_grace: Duration,
}

/// Where the agent's raw output goes (appended; shared by all turns of a run).
pub(crate) struct RawLogs<'a> {
    pub stdout: &'a File,
    pub stderr: &'a File,
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TurnEnd {
    pub outcome: Outcome,
    pub message: String,
    pub exit: ExitInfo,
}

/// A stop runbook decided on, and when it escalates to SIGKILL.
struct Stopping {
    reason: Outcome,
    message: String,
}

/// Runs one turn to its end. Events go to `dispatch` as they happen; exactly one `turn.completed`
/// or `turn.failed` is emitted, after everything the agent wrote has been read.
pub(crate) async fn run_turn(
    spec: TurnSpec<'_>,
    limits: Limits,
    logs: RawLogs<'_>,
    redactor: &Redactor,
    dispatch: &mut Dispatcher,
    signals: &mut Signals,
) -> anyhow::Result<TurnEnd> {
    dispatch.set_turn(spec.turn);
    let mut command = Command::new(spec.program);
    command
        .args(&spec.args)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(spec.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    die_with_runbook(&mut command);
    let mut child = command
        .spawn()
        .with_context(|| format!("failed to start {}", spec.program.display()))?;
    let pid = child
        .id()
        .context("the agent exited before it could be watched")?;
    let tree = Tree::new(pid);
    let mut argv = vec![spec.program.display().to_string()];
    argv.extend(spec.args.iter().map(|a| redactor.str(a).into_owned()));
    dispatch.emit_now(SystemTime::now(), EventKind::TurnStarted { argv, pid });

    let (tx, mut rx) = mpsc::channel::<Batch>(readers::QUEUE);
    let parser = spec.adapter.stdout_parser(spec.parse.clone());
    let out_reader = readers::stdout(
        child.stdout.take().context("stdout is piped")?,
        logs.stdout.try_clone()?,
        parser,
        redactor.clone(),
        tx.clone(),
    );
    // The stdout reader parses a fast agent's output nonstop: on a thread of its own it stays on
    // one core, with its allocator arena and caches, instead of hopping between the runtime's
    // workers each time it waits.
    let runtime = tokio::runtime::Handle::current();
    let out_task = tokio::task::spawn_blocking(move || runtime.block_on(out_reader));
    let err_task = tokio::spawn(readers::stderr(
        child.stderr.take().context("stderr is piped")?,
        logs.stderr.try_clone()?,
        spec.adapter.stderr_parser(),
        redactor.clone(),
        tx,
    ));
    let mut version = std::pin::pin!(probe_version(
        spec.program,
        spec.adapter,
        spec.probe_version
    ));
    let mut version_done = !spec.probe_version;

    let start = Instant::now();
    let mut watchdog = Watchdog::new(limits.inactivity, start);
    let mut cpu = CpuMeter::new(tree, limits.inactivity);
    let mut next_sample = start + cpu.interval;
    let mut stopping: Option<Stopping> = None;
    let mut kill_at: Option<Instant> = None;
    let mut exit_status = None;
    let mut linger_until: Option<Instant> = None;
    // Set once the agent printed its final result: it should exit on its own by then.
    let mut finish_by: Option<Instant> = None;
    let mut ended_after_finish = false;
    let mut pipes_open = true;
    let mut ticker = tokio::time::interval(Duration::from_secs(1));
    ticker.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let far = start + Duration::from_secs(86400 * 365);

    while pipes_open || exit_status.is_none() {
        // Once runbook is ending the agent (a stop, or a lingering finished agent), no other
        // limit may take over the decision.
        let running = exit_status.is_none() && stopping.is_none() && !ended_after_finish;
        tokio::select! {
            biased;
            got = signals.recv() => {
                if signals.count == 1 || stopping.is_none() {
                    let message = match got {
                        Received::Interrupt => "interrupted by Ctrl-C (SIGINT)".to_owned(),
                        other => format!("runbook received {}", other.name()),
                    };
                    request_stop(&tree, dispatch, &mut stopping, &mut kill_at, limits.grace,
                        Outcome::Interrupted, message, None);
                } else {
                    // A second interrupt: no more grace.
                    send(&tree, dispatch, Signal::SIGKILL);
                    kill_at = None;
                }
            }
            batch = rx.recv(), if pipes_open => match batch {
                Some(mut batch) => {
                    let what = match batch.stream { Stream::Stdout => Activity::Stdout, Stream::Stderr => Activity::Stderr };
                    watchdog.observe(what, batch.at);
                    for kind in &mut batch.events {
                        if finish_by.is_none() && matches!(kind, EventKind::AgentResult(_)) {
                            finish_by = Some(Instant::now() + limits.finish_grace);
                        }
                        dispatch.emit_borrowed(batch.ts, kind);
                    }
                    batch.recycle();
                    if let Some(max) = limits.max_cost {
                        let spent = dispatch.totals().known_cost();
                        if spent > max && stopping.is_none() && exit_status.is_none() {
                            let message = format!("cost ${spent:.4} crossed --max-cost ${max:.2}");
                            request_stop(&tree, dispatch, &mut stopping, &mut kill_at, limits.grace,
                                Outcome::BudgetExceeded, message, None);
                        }
                    }
                }
                None => pipes_open = false,
            },
            status = child.wait(), if exit_status.is_none() => {
                exit_status = Some(status.context("failed to wait for the agent")?);
                linger_until = Some(Instant::now() + LINGER);
            }
            () = sleep_until(watchdog.next_check()), if running => {
                let now = Instant::now();
                if cpu.busy(now) {
                    watchdog.observe(Activity::Cpu, now);
                }
                match watchdog.poll(now) {
                    Verdict::Fine => {}
                    Verdict::Warn { quiet } => dispatch.emit(SystemTime::now(), EventKind::WatchdogWarning {
                        quiet_ms: millis(quiet),
                        timeout_ms: millis(watchdog.timeout()),
                    }),
                    Verdict::Fire { quiet } => {
                        let diagnostic = diagnose(&watchdog, dispatch, now);
                        let message = format!("no activity for {}: the agent looks hung", format_duration(quiet));
                        request_stop(&tree, dispatch, &mut stopping, &mut kill_at, limits.grace,
                            Outcome::Hung, message, Some(diagnostic));
                    }
                }
            }
            () = sleep_until(next_sample), if running => {
                let now = Instant::now();
                // Only a quiet agent needs its CPU looked at; output already proves it alive.
                if watchdog.quiet_for(now) >= cpu.interval {
                    if cpu.busy(now) {
                        watchdog.observe(Activity::Cpu, now);
                    }
                } else {
                    cpu.forget();
                }
                next_sample = now + cpu.interval;
            }
            () = sleep_until(limits.deadline.unwrap_or(far)), if running && limits.deadline.is_some() => {
                request_stop(&tree, dispatch, &mut stopping, &mut kill_at, limits.grace,
                    Outcome::TimedOut, "the run reached its --timeout".to_owned(), None);
            }
            () = sleep_until(kill_at.unwrap_or(far)), if kill_at.is_some() => {
                send(&tree, dispatch, Signal::SIGKILL);
                kill_at = None;
            }
            () = sleep_until(finish_by.unwrap_or(far)), if running && finish_by.is_some() => {
                // Done, by its own account, yet still running: end it, as finished work.
                finish_by = None;
                ended_after_finish = true;
                dispatch.emit(SystemTime::now(), EventKind::StopRequested {
                    reason: Outcome::Completed,
                    message: format!(
                        "the agent printed its final result but had not exited after {}; ending it",
                        format_duration(limits.finish_grace)
                    ),
                });
                send(&tree, dispatch, Signal::SIGTERM);
                kill_at = Some(Instant::now() + limits.grace);
            }
            () = sleep_until(linger_until.unwrap_or(far)), if linger_until.is_some() && pipes_open => {
                // The agent is gone but something it started still holds its output open.
                linger_until = None;
                send(&tree, dispatch, Signal::SIGTERM);
                kill_at.get_or_insert(Instant::now() + limits.grace);
            }
            v = &mut version, if !version_done => {
                version_done = true;
                if let Some(version) = v {
                    dispatch.emit(SystemTime::now(), EventKind::AgentVersion { version: redactor.str(&version).into_owned() });
                }
            }
            _ = ticker.tick() => {
                let now = Instant::now();
                dispatch.tick(SystemTime::now(), watchdog.quiet_for(now));
            }
        }
        dispatch.flush();
    }

    // A fast agent can be done before its `--version` answers; give the answer a moment.
    if !version_done
        && let Ok(Some(version)) = tokio::time::timeout(Duration::from_secs(2), &mut version).await
    {
        dispatch.emit(
            SystemTime::now(),
            EventKind::AgentVersion {
                version: redactor.str(&version).into_owned(),
            },
        );
    }
    let stream_end = out_task
        .await
        .unwrap_or_else(|e| StreamEnd::Truncated(format!("stdout reader failed: {e}")));
    let _ = err_task.await;
    end_leftovers(&tree, dispatch, limits.grace, pid).await;

    let status = exit_status.expect("loop ends only after exit");
    let exit = ExitInfo {
        code: status.code(),
        signal: std::os::unix::process::ExitStatusExt::signal(&status),
    };
    let end = if ended_after_finish && stopping.is_none() {
        match stream_end {
            StreamEnd::Finished => TurnEnd {
                outcome: Outcome::Completed,
                message: "the agent finished (it lingered after its final result and was ended)"
                    .to_owned(),
                exit,
            },
            // Its own verdict stands; the signal was runbook's, not a crash.
            other => classify(
                None,
                other,
                ExitInfo {
                    code: Some(0),
                    ..exit
                },
            ),
        }
    } else {
        classify(stopping, stream_end, exit)
    };
    let kind = if end.outcome == Outcome::Completed {
        EventKind::TurnCompleted { exit }
    } else {
        EventKind::TurnFailed {
            outcome: end.outcome,
            message: end.message.clone(),
            exit,
        }
    };
    dispatch.emit_now(SystemTime::now(), kind);
    Ok(end)
}

/// How the agent's own ending reads, when runbook did not stop it. Fail closed: `completed`
/// needs a clean exit and a finished stream.
pub(crate) fn agent_outcome(stream: StreamEnd, exit: ExitInfo) -> (Outcome, String) {
    match stream {
        StreamEnd::Failed(message) => (Outcome::AgentError, message),
        _ if exit.signal.is_some() => (Outcome::Killed, format!("the agent was {exit}")),
        _ if exit.code != Some(0) => (Outcome::AgentError, format!("the agent failed with {exit}")),
        StreamEnd::Truncated(message) => (Outcome::Truncated, message),
        StreamEnd::Finished => (Outcome::Completed, "the agent finished".to_owned()),
    }
}

/// Decides the turn's outcome: a stop runbook asked for wins over what the agent did.
fn classify(stopping: Option<Stopping>, stream: StreamEnd, exit: ExitInfo) -> TurnEnd {
    let (outcome, message) = match stopping {
        Some(stop) => (stop.reason, stop.message),
        None => agent_outcome(stream, exit),
    };
    TurnEnd {
        outcome,
        message,
        exit,
    }
}

#[expect(
    clippy::too_many_arguments,
    reason = "the loop's state, passed explicitly rather than hidden in a struct"
)]
fn request_stop(
    tree: &Tree,
    dispatch: &mut Dispatcher,
    stopping: &mut Option<Stopping>,
    kill_at: &mut Option<Instant>,
    grace: Duration,
    reason: Outcome,
    message: String,
    diagnostic: Option<Diagnostic>,
) {
    if stopping.is_some() {
        return;
    }
    let now = SystemTime::now();
    match diagnostic {
        Some(d) => dispatch.emit(now, EventKind::WatchdogFired(Box::new(d))),
        None => dispatch.emit(
            now,
            EventKind::StopRequested {
                reason,
                message: message.clone(),
            },
        ),
    }
    send(tree, dispatch, Signal::SIGTERM);
    *kill_at = Some(Instant::now() + grace);
    *stopping = Some(Stopping { reason, message });
}

fn send(tree: &Tree, dispatch: &mut Dispatcher, sig: Signal) {
    let processes = tree.signal(sig);
    if processes > 0 {
        dispatch.emit_now(
            SystemTime::now(),
            EventKind::SignalSent {
                signal: sig.as_str().to_owned(),
                processes,
            },
        );
    }
}

/// Makes sure nothing the agent started outlives the turn: SIGTERM, a grace period, SIGKILL.
async fn end_leftovers(tree: &Tree, dispatch: &mut Dispatcher, grace: Duration, agent_pid: u32) {
    if tree.alive() > 0 {
        send(tree, dispatch, Signal::SIGTERM);
        let until = Instant::now() + grace;
        while tree.alive() > 0 && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(20)).await;
            tree.reap_orphans(Some(agent_pid));
        }
        if tree.alive() > 0 {
            send(tree, dispatch, Signal::SIGKILL);
            while tree.alive() > 0 {
                tokio::time::sleep(Duration::from_millis(10)).await;
                tree.reap_orphans(Some(agent_pid));
            }
        }
    }
    tree.reap_orphans(Some(agent_pid));
}

/// What the watchdog diagnostic says: which signals were quiet, where the agent was, what it cost.
fn diagnose(watchdog: &Watchdog, dispatch: &Dispatcher, now: Instant) -> Diagnostic {
    let stats = dispatch.totals();
    let tail = stats
        .stderr_tail
        .iter()
        .rev()
        .take(DIAGNOSTIC_STDERR_LINES)
        .rev()
        .cloned()
        .collect();
    Diagnostic {
        timeout_ms: millis(watchdog.timeout()),
        stdout_quiet_ms: millis(watchdog.quiet(Activity::Stdout, now)),
        stderr_quiet_ms: millis(watchdog.quiet(Activity::Stderr, now)),
        cpu_quiet_ms: millis(watchdog.quiet(Activity::Cpu, now)),
        last_event: stats.last_agent_event.map(str::to_owned),
        open_step: stats.step_open.then_some(stats.steps_started),
        completed_steps: stats.steps_finished,
        cost_usd: stats.cost(),
        stderr_tail: tail,
    }
}

/// Reads the CPU time of the agent's tree at a steady interval, for the watchdog's window.
struct CpuMeter {
    tree: Tree,
    interval: Duration,
    window: CpuWindow,
}

impl CpuMeter {
    fn new(tree: Tree, inactivity: Duration) -> Self {
        let interval = (inactivity / 10).clamp(Duration::from_millis(100), Duration::from_secs(5));
        Self {
            tree,
            interval,
            window: CpuWindow::new(inactivity),
        }
    }

    /// Whether the tree has been busy over the window ending now.
    fn busy(&mut self, now: Instant) -> bool {
        self.window.record(now, self.tree.cpu_time())
    }

    fn forget(&mut self) {
        self.window.clear();
    }
}

/// Has the kernel kill the agent if runbook itself dies without ending it (SIGKILL, a crash),
/// so that not even a killed runbook leaves its agent running.
fn die_with_runbook(command: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: between fork and exec only async-signal-safe calls are made (prctl, getppid).
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // runbook may have died between fork and prctl.
            if libc::getppid() != parent {
                return Err(std::io::Error::other(
                    "runbook exited while starting the agent",
                ));
            }
            Ok(())
        });
    }
}

/// Runs `AGENT --version` in its own process group, with a time limit.
async fn probe_version(program: &Path, adapter: &dyn Adapter, enabled: bool) -> Option<String> {
    if !enabled {
        return None;
    }
    let child = Command::new(program)
        .args(adapter.version_args())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .ok()?;
    let out = tokio::time::timeout(VERSION_TIMEOUT, child.wait_with_output())
        .await
        .ok()?
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    (out.status.success() && line.len() < 200).then(|| line.to_owned())
}

pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// `3m 0s`, `12s`, `850ms`: short and exact enough for messages.
pub(crate) fn format_duration(d: Duration) -> String {
    let ms = millis(d);
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        let s = d.as_secs();
        format!("{}m {}s", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exit(code: i32) -> ExitInfo {
        ExitInfo {
            code: Some(code),
            signal: None,
        }
    }

    #[test]
    fn only_a_clean_exit_after_finished_work_is_completed() {
        assert_eq!(
            classify(None, StreamEnd::Finished, exit(0)).outcome,
            Outcome::Completed
        );
        assert_eq!(
            classify(None, StreamEnd::Finished, exit(2)).outcome,
            Outcome::AgentError
        );
        assert_eq!(
            classify(None, StreamEnd::Truncated("x".into()), exit(0)).outcome,
            Outcome::Truncated
        );
        assert_eq!(
            classify(None, StreamEnd::Failed("boom".into()), exit(1)).outcome,
            Outcome::AgentError
        );
        let killed = ExitInfo {
            code: None,
            signal: Some(9),
        };
        assert_eq!(
            classify(None, StreamEnd::Finished, killed).outcome,
            Outcome::Killed
        );
    }

    #[test]
    fn a_stop_runbook_asked_for_wins_over_what_the_agent_did() {
        let stop = Stopping {
            reason: Outcome::Hung,
            message: "quiet".into(),
        };
        let end = classify(
            Some(stop),
            StreamEnd::Finished,
            ExitInfo {
                code: None,
                signal: Some(15),
            },
        );
        assert_eq!(
            (end.outcome, end.message.as_str()),
            (Outcome::Hung, "quiet")
        );
    }
}
