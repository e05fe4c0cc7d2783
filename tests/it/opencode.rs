//! The real OpenCode CLI, driven through the real `runbook` binary, against the scripted fake
//! provider (support/fake_llm.rs). Every expectation is derived from what the provider served.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use runbook::event::{CostSource, Event, EventKind, Outcome, ToolEnd, ToolStatus};
use runbook::receipt::Receipt;
use serde_json::json;

use crate::support::fake_llm::{
    self, FAKE_MODEL_PRICES, FakeLlm, OpencodeConfig, Reply, ToolCall, Usage,
};
use crate::support::{self, TestContext};

/// Each run's time limit: OpenCode alone takes 3–7 s to start on a small machine.
const LIMIT: Duration = Duration::from_secs(90);
/// The OpenCode version the project pins (`.ci/install-agents`).
const OPENCODE_VERSION: &str = "1.18.33";
const MODEL: &str = "fake/fake-model";
pub(crate) const README: &str = "# Demo project\n\nThis is a demo repository used by runbook's tests.\nIt has a few lines, and nothing else.\n";

/// A work dir set up for OpenCode, the fake provider it talks to, and the OpenCode binary.
pub(crate) struct Setup {
    pub(crate) ctx: TestContext,
    pub(crate) llm: FakeLlm,
    pub(crate) bin: PathBuf,
}

impl Setup {
    /// `None` when real-agent tests are explicitly skipped.
    pub(crate) fn new(script: Vec<Reply>) -> Option<Setup> {
        Setup::with(OpencodeConfig::default(), |_| script)
    }

    /// A work dir with `opencode.json`, a README.md and a git repository, and a provider playing
    /// the script made from the work dir's path.
    pub(crate) fn with(
        config: OpencodeConfig,
        script: impl FnOnce(&Path) -> Vec<Reply>,
    ) -> Option<Setup> {
        let bin = support::opencode_bin()?;
        let mut ctx = TestContext::new();
        let llm = FakeLlm::start(script(&ctx.work));
        fake_llm::opencode_against(&mut ctx, &llm.base_url(), &config);
        std::fs::write(ctx.work.join("README.md"), README).expect("write README.md");
        support::git_init(&ctx.work, &ctx.home);
        Some(Setup { ctx, llm, bin })
    }

    /// `runbook run --agent-bin OPENCODE -m fake/fake-model EXTRA… PROMPT`.
    pub(crate) fn command(&self, extra: &[&str], prompt: &str) -> Command {
        let bin = self.bin.to_str().expect("UTF-8 OpenCode path");
        let mut args = vec!["run", "--agent-bin", bin, "-m", MODEL];
        args.extend_from_slice(extra);
        args.push(prompt);
        self.ctx.runbook(&args)
    }

    /// Runs runbook to its end; a run that outlives [`LIMIT`] fails the test with the events
    /// logged so far.
    pub(crate) fn run(&self, extra: &[&str], prompt: &str) -> support::Outcome {
        let mut cmd = self.command(extra, prompt);
        match std::panic::catch_unwind(AssertUnwindSafe(|| support::run(&mut cmd, LIMIT))) {
            Ok(out) => out,
            Err(panic) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                panic!(
                    "{message}\n--- events so far ---\n{}",
                    self.logged_lines().join("\n")
                );
            }
        }
    }

    /// The lines of the run's event log so far, if there is one (read leniently: the run may
    /// have been cut short).
    pub(crate) fn logged_lines(&self) -> Vec<String> {
        let Some(dir) = self.ctx.run_dirs().pop() else {
            return Vec::new();
        };
        std::fs::read_to_string(dir.join("events.ndjson"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Runs runbook to its end and checks what every run must hold: the exit `code` and a
    /// well-formed log. Returns runbook's output, the logged events, and both shown for
    /// assertion messages.
    pub(crate) fn finish(
        &self,
        extra: &[&str],
        prompt: &str,
        code: i32,
    ) -> (support::Outcome, Vec<Event>, String) {
        let out = self.run(extra, prompt);
        let events = self.ctx.events();
        let why = show(&out, &events);
        assert_eq!(out.code(), Some(code), "{why}");
        assert_well_formed(&events);
        (out, events, why)
    }

    /// The receipt, which must say (as the log's last event does) that the run ended as
    /// `outcome`.
    #[track_caller]
    pub(crate) fn ended_as(&self, outcome: Outcome, events: &[Event], why: &str) -> Receipt {
        let receipt = self.ctx.receipt();
        assert_eq!(receipt.outcome, outcome, "{why}");
        assert!(
            matches!(
                events.last().map(|e| &e.kind),
                Some(EventKind::RunFinished { outcome: last, .. }) if *last == outcome
            ),
            "{why}"
        );
        receipt
    }

    pub(crate) fn readme(&self) -> PathBuf {
        self.ctx.work.join("README.md")
    }
}

impl Drop for Setup {
    /// A runbook killed at the time limit leaves its agent running (it is in its own process
    /// group): end whatever of it is left, so that a failing test does not leak processes.
    fn drop(&mut self) {
        let lines = self.logged_lines();
        let finished = lines.iter().any(|l| l.contains(r#""type":"run.finished""#));
        // A finished runbook has ended its agent's group; only a cut-short one may have left it.
        let pgid = lines.iter().filter(|_| !finished).find_map(|l| {
            match serde_json::from_str::<Event>(l).ok()?.kind {
                EventKind::TurnStarted { pid, .. } => i32::try_from(pid).ok(),
                _ => None,
            }
        });
        for (pid, _) in leftovers(&self.ctx.work, pgid.unwrap_or(-1)) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// Context for assertion messages: what runbook printed and what it logged.
pub(crate) fn show(out: &support::Outcome, events: &[Event]) -> String {
    let log: Vec<String> = events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect();
    format!(
        "exit {:?} after {:?}\n--- stderr ---\n{}\n--- events ---\n{}",
        out.code(),
        out.took,
        out.stderr,
        log.join("\n")
    )
}

/// The invariants of every run's log: gapless seqs from 0, `run.started` first, `run.finished`
/// last, exactly one turn end, after every tool event and everything else the agent said.
pub(crate) fn assert_well_formed(events: &[Event]) {
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.seq, i as u64, "seqs have a gap at {i}: {e:?}");
    }
    assert!(
        matches!(
            events.first().map(|e| &e.kind),
            Some(EventKind::RunStarted(_))
        ),
        "the first event is run.started: {:?}",
        support::types(events)
    );
    assert!(
        matches!(
            events.last().map(|e| &e.kind),
            Some(EventKind::RunFinished { .. })
        ),
        "the last event is run.finished: {:?}",
        support::types(events)
    );
    let ends: Vec<usize> = positions(events, |k| {
        matches!(
            k,
            EventKind::TurnCompleted { .. } | EventKind::TurnFailed { .. }
        )
    });
    assert_eq!(
        ends.len(),
        1,
        "exactly one turn end: {:?}",
        support::types(events)
    );
    let from_agent = positions(events, EventKind::is_from_agent);
    assert!(
        from_agent.iter().all(|&i| i < ends[0]),
        "nothing from the agent after the turn ended: {:?}",
        support::types(events)
    );
}

pub(crate) fn positions(events: &[Event], pred: impl Fn(&EventKind) -> bool) -> Vec<usize> {
    events
        .iter()
        .enumerate()
        .filter(|(_, e)| pred(&e.kind))
        .map(|(i, _)| i)
        .collect()
}

pub(crate) fn count(events: &[Event], type_name: &str) -> usize {
    events
        .iter()
        .filter(|e| e.kind.type_name() == type_name)
        .count()
}

pub(crate) fn tool_ends(events: &[Event]) -> Vec<&ToolEnd> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCompleted(t) => Some(t),
            _ => None,
        })
        .collect()
}

pub(crate) fn texts(events: &[Event]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// What a run served with these usages should add up to, as OpenCode reports it.
fn assert_usage(receipt: &Receipt, served: &[Usage]) {
    let sum = |f: fn(&Usage) -> u64| served.iter().map(f).sum::<u64>();
    let t = &receipt.tokens;
    assert_eq!(
        t.input,
        sum(|u| u.prompt - u.cached),
        "input tokens exclude cached ones"
    );
    assert_eq!(t.cache_read, sum(|u| u.cached), "cache reads");
    assert_eq!(
        t.output,
        sum(|u| u.completion - u.reasoning),
        "output tokens"
    );
    assert_eq!(t.reasoning, sum(|u| u.reasoning), "reasoning tokens");
    assert_eq!(t.cache_write, 0, "OpenAI usage has no cache writes");
    assert_eq!(t.total, sum(|u| u.prompt + u.completion), "total tokens");
    let expected: f64 = served.iter().map(|u| FAKE_MODEL_PRICES.cost_of(u)).sum();
    assert!(expected > 0.0, "the served usage costs something");
    let usd = receipt.cost.usd.expect("the cost is known");
    assert!(
        (usd - expected).abs() < 1e-9,
        "cost {usd} != {expected} (from the served usage)"
    );
    assert!((receipt.cost.known_usd - expected).abs() < 1e-9);
    assert_eq!(receipt.cost.source, Some(CostSource::Reported));
}

/// The agent process's pid (and process group) from `turn.started`.
pub(crate) fn agent_pid(events: &[Event]) -> i32 {
    events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::TurnStarted { pid, .. } => Some(*pid as i32),
            _ => None,
        })
        .expect("a turn.started event")
}

/// Living processes working inside `dir` or belonging to process group `pgid`, with their
/// command lines.
pub(crate) fn leftovers(dir: &Path, pgid: i32) -> Vec<(i32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("read /proc").flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if !support::alive(pid) {
            continue;
        }
        let in_dir = in_dir(pid, dir);
        let in_group = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                let rest = s.rsplit_once(')')?.1.to_owned();
                rest.split_ascii_whitespace().nth(2)?.parse::<i32>().ok()
            })
            == Some(pgid);
        if in_dir || in_group {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
                .unwrap_or_default();
            found.push((pid, cmdline));
        }
    }
    found
}

/// Whether a process works in `dir` or below it.
fn in_dir(pid: i32, dir: &Path) -> bool {
    std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c.starts_with(dir))
}

/// The one text answer of scenario 1 and the usage it is served with.
fn text_answer(text: &str) -> (Vec<Reply>, Usage) {
    let usage = Usage::cached(1234, 56, 200);
    (vec![Reply::text(text, usage)], usage)
}

#[test]
fn a_text_answer_completes_with_the_served_usage_cost_and_session() {
    let answer = "The README describes a demo project.";
    let (script, usage) = text_answer(answer);
    let Some(s) = Setup::new(script) else { return };
    let (out, events, why) = s.finish(&[], "Summarize README.md in one sentence.", 0);
    assert!(
        out.stdout.is_empty(),
        "stdout without --json: {:?}",
        out.stdout
    );
    let receipt = s.ended_as(Outcome::Completed, &events, &why);
    assert_eq!(receipt.steps, Some(1), "{why}");
    assert_usage(&receipt, &[usage]);

    let served = s.llm.main_requests();
    assert_eq!(served.len(), 1, "one model request: {served:?}");
    let session = served[0]
        .session_id
        .clone()
        .expect("OpenCode sends x-session-id");
    assert_eq!(
        receipt.session_id.as_deref(),
        Some(session.as_str()),
        "{why}"
    );
    assert_eq!(receipt.agent.name, "opencode");
    assert_eq!(receipt.agent.version.as_deref(), Some(OPENCODE_VERSION));
    assert_eq!(receipt.model.as_deref(), Some(MODEL));

    assert_eq!(texts(&events).concat().trim(), answer, "{why}");
    assert_eq!(count(&events, "turn.completed"), 1, "{why}");
    assert_eq!(count(&events, "turn.failed"), 0, "{why}");
    assert!(
        out.stderr.contains(answer),
        "the human view shows the answer: {why}"
    );
}

#[test]
fn a_read_and_an_edit_change_the_file_and_are_counted() {
    let old = "It has a few lines, and nothing else.";
    let new = "It has a few lines, and one the agent added.";
    let usages = [
        Usage::new(1500, 40),
        Usage::cached(1700, 60, 1500),
        Usage::cached(1900, 15, 1700),
    ];
    let Some(s) = Setup::with(OpencodeConfig::default(), |work| {
        let readme = work.join("README.md");
        let path = readme.to_str().unwrap();
        vec![
            Reply::tool_calls(
                Some("I'll read the README first."),
                vec![ToolCall::new(
                    "call_read_1",
                    "read",
                    json!({ "filePath": path }),
                )],
                usages[0],
            ),
            Reply::tool_calls(
                None,
                vec![ToolCall::new(
                    "call_edit_1",
                    "edit",
                    json!({ "filePath": path, "oldString": old, "newString": new }),
                )],
                usages[1],
            ),
            Reply::text("Done: I changed the last line of README.md.", usages[2]),
        ]
    }) else {
        return;
    };
    let (out, events, why) = s.finish(&[], "Change the last line of README.md.", 0);
    assert_eq!(
        std::fs::read_to_string(s.readme()).unwrap(),
        README.replace(old, new),
        "README.md was edited on disk: {why}"
    );
    let receipt = s.ended_as(Outcome::Completed, &events, &why);
    assert_eq!(receipt.steps, Some(3), "{why}");
    assert_eq!(receipt.tool_calls.total, 2, "{why}");
    assert_eq!(receipt.tool_calls.errors, 0, "{why}");
    assert_eq!(receipt.tool_calls.denied, 0, "{why}");
    for name in ["read", "edit"] {
        let tally = receipt.tool_calls.by_name.get(name).copied();
        assert_eq!(
            tally.map(|t| (t.calls, t.errors, t.denied)),
            Some((1, 0, 0)),
            "{name}: {:?}",
            receipt.tool_calls
        );
    }
    assert_usage(&receipt, &usages);
    assert_eq!(s.llm.main_requests().len(), 3, "{why}");

    let ends = tool_ends(&events);
    assert_eq!(
        ends.iter()
            .map(|t| (t.name.as_str(), t.input.as_str(), t.status))
            .collect::<Vec<_>>(),
        [
            ("read", "README.md", ToolStatus::Ok),
            ("edit", "README.md", ToolStatus::Ok)
        ],
        "{why}"
    );

    for tool in ["read", "edit"] {
        let want = format!("✓ {tool} README.md");
        assert!(
            out.stderr.lines().any(|l| l.contains(&want)),
            "the human view has a line `{want}`: {why}"
        );
    }
    let abs = s.readme().display().to_string();
    assert!(
        !out.stderr.contains(&abs),
        "the human view shows the path relative to the work dir: {why}"
    );
}

#[test]
fn a_failing_tool_is_counted_and_the_agent_recovers() {
    let usages = [Usage::new(1400, 25), Usage::cached(1550, 10, 1400)];
    let answer = "The file missing.txt does not exist.";
    let Some(s) = Setup::with(OpencodeConfig::default(), |work| {
        let missing = work.join("missing.txt");
        vec![
            Reply::tool_calls(
                None,
                vec![ToolCall::new(
                    "call_read_missing",
                    "read",
                    json!({ "filePath": missing.to_str().unwrap() }),
                )],
                usages[0],
            ),
            Reply::text(answer, usages[1]),
        ]
    }) else {
        return;
    };
    let (out, events, why) = s.finish(&[], "Read missing.txt.", 0);
    let ends = tool_ends(&events);
    assert_eq!(ends.len(), 1, "{why}");
    assert_eq!(ends[0].name, "read");
    assert_eq!(ends[0].status, ToolStatus::Error, "{why}");
    let error = ends[0].error.as_deref().unwrap_or_default();
    assert!(
        error.contains("missing.txt"),
        "the error names the file: {error:?}"
    );

    let receipt = s.ended_as(Outcome::Completed, &events, &why);
    assert_eq!(receipt.tool_calls.total, 1, "{why}");
    assert_eq!(receipt.tool_calls.errors, 1, "{why}");
    assert_eq!(
        receipt.tool_calls.by_name.get("read").map(|t| t.errors),
        Some(1)
    );
    assert_eq!(receipt.steps, Some(2), "{why}");
    assert_usage(&receipt, &usages);
    assert_eq!(texts(&events).concat().trim(), answer, "{why}");
    assert!(
        out.stderr
            .lines()
            .any(|l| l.contains("✗ read missing.txt") && l.contains("missing.txt")),
        "the human view shows the failed call: {why}"
    );
}

#[test]
fn a_provider_error_fails_the_run_with_the_served_status_and_message() {
    let message = "fake_llm: invalid request (context too long?)";
    let Some(s) = Setup::new(vec![Reply::http_error(400, message)]) else {
        return;
    };
    let (out, events, why) = s.finish(&[], "Summarize README.md.", 1);
    let receipt = s.ended_as(Outcome::AgentError, &events, &why);
    assert_eq!(receipt.provider_errors.len(), 1, "{why}");
    assert_eq!(receipt.provider_errors[0].status, Some(400), "{why}");
    assert_eq!(receipt.provider_errors[0].message, message, "{why}");
    assert!(
        receipt.message.contains(message),
        "the receipt says why: {:?}",
        receipt.message
    );
    let provider_errors: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ProviderError(p) => Some(p),
            _ => None,
        })
        .collect();
    assert_eq!(provider_errors.len(), 1, "{why}");
    assert_eq!(provider_errors[0].status, Some(400));
    assert_eq!(provider_errors[0].retryable, Some(false));
    assert_eq!(count(&events, "turn.failed"), 1, "{why}");
    assert_eq!(
        s.llm.main_requests().len(),
        1,
        "a 400 is not retried: {why}"
    );
    assert!(
        out.stderr.contains(message),
        "the human view shows the provider's message: {why}"
    );
}

/// OpenCode prints nothing before the provider answers: while it starts up (several seconds of
/// CPU on a loaded machine, counted as work) and then waits (a percent or two, silence), only its
/// CPU use tells the two apart. The timeout leaves room for the start-up on a loaded machine.
#[test]
fn agent_timing_a_stalled_provider_is_stopped_by_the_watchdog_and_nothing_is_left_running() {
    assert_a_stall_is_stopped(5, 2);
}

/// The same with a longer timeout: CPU samples of 1.6 s.
#[test]
fn agent_timing_a_stalled_provider_is_stopped_by_the_watchdog_with_a_longer_timeout() {
    assert_a_stall_is_stopped(8, 2);
}

/// OpenCode waits on a provider that never answers; `--inactivity-timeout TIMEOUT` must stop it.
fn assert_a_stall_is_stopped(timeout_secs: u64, grace_secs: u64) {
    let Some(s) = Setup::new(vec![Reply::StallBeforeHeaders]) else {
        return;
    };
    let (timeout, grace) = (format!("{timeout_secs}s"), format!("{grace_secs}s"));
    let (out, events, why) = s.finish(
        &["--inactivity-timeout", &timeout, "--kill-grace", &grace],
        "Summarize README.md.",
        3,
    );
    let left = leftovers(&s.ctx.work, agent_pid(&events));
    assert!(
        left.is_empty(),
        "processes of the agent outlived runbook: {left:?}\n{why}"
    );
    assert!(
        !s.llm.main_requests().is_empty(),
        "the agent was waiting on the provider: {why}"
    );
    let receipt = s.ended_as(Outcome::Hung, &events, &why);
    let timeout_ms = timeout_secs * 1000;
    let d = receipt.watchdog.clone().expect("a watchdog diagnostic");
    assert_eq!(d.timeout_ms, timeout_ms);
    assert!(
        d.stdout_quiet_ms >= timeout_ms
            && d.stderr_quiet_ms >= timeout_ms
            && d.cpu_quiet_ms >= timeout_ms,
        "every activity signal was quiet for the whole timeout: {d:?}"
    );
    assert_eq!(d.completed_steps, Some(0), "{d:?}");
    assert_eq!(count(&events, "watchdog.fired"), 1, "{why}");
    let signals: Vec<(&str, u32)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::SignalSent { signal, processes } => Some((signal.as_str(), *processes)),
            _ => None,
        })
        .collect();
    assert!(
        matches!(signals.first(), Some(&("SIGTERM", n)) if n >= 1),
        "the tree got SIGTERM first: {signals:?}"
    );
    if receipt.exit.signal == Some(9) {
        assert!(
            signals.iter().any(|&(sig, _)| sig == "SIGKILL"),
            "OpenCode died of SIGKILL, so runbook sent one: {signals:?}"
        );
    }
    let fired = positions(&events, |k| matches!(k, EventKind::WatchdogFired(_)))[0];
    let first_signal = positions(&events, |k| matches!(k, EventKind::SignalSent { .. }))[0];
    assert!(
        fired < first_signal,
        "the diagnostic comes before the signals: {why}"
    );
    assert!(
        out.stderr.contains("watchdog: no activity"),
        "the human view says why: {why}"
    );
}

/// OpenCode stalled mid-stream (the provider stopped sending after a few words, on the call after
/// a tool's) waits using a percent or two of a core: that is silence, so the warning comes once,
/// is never withdrawn, and the stop comes within the timeout and one CPU sample of the stall: of
/// the provider's last words, or of the end of OpenCode's own work after them (its tree's CPU,
/// sampled from /proc by the test, under the watchdog's threshold from then on).
#[test]
fn agent_timing_a_provider_that_stalls_mid_stream_is_stopped_within_the_timeout_and_one_sample() {
    let Some(s) = Setup::with(OpencodeConfig::default(), |work| {
        let readme = work.join("README.md").to_string_lossy().into_owned();
        vec![
            Reply::tool_calls(
                None,
                vec![ToolCall::new(
                    "call_read",
                    "read",
                    json!({ "filePath": readme }),
                )],
                Usage::new(1000, 20),
            ),
            Reply::StallMidStream {
                text: "The README says".to_owned(),
            },
        ]
    }) else {
        return;
    };
    let timeout = Duration::from_secs(STALL_TIMEOUT_SECS);
    let sample = timeout / 5;
    let mut cmd = s.command(
        &[
            "--inactivity-timeout",
            &format!("{STALL_TIMEOUT_SECS}s"),
            "--kill-grace",
            "2s",
        ],
        "Summarize README.md.",
    );
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("runbook starts");
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let (done, runs) = (done.clone(), s.ctx.runs.clone());
        std::thread::spawn(move || crate::idle_cpu::sample_run(&runs, &done))
    };
    let out = support::finish(child, LIMIT);
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let samples = sampler.join().expect("the sampler");
    let events = s.ctx.events();
    let why = show(&out, &events);
    assert_eq!(out.code(), Some(3), "{why}");
    let receipt = s.ended_as(Outcome::Hung, &events, &why);
    let d = receipt.watchdog.clone().expect("a watchdog diagnostic");
    let last_words = s
        .llm
        .main_requests()
        .last()
        .expect("the agent asked the provider")
        .at;
    let fired = events
        .iter()
        .find(|e| matches!(e.kind, EventKind::WatchdogFired(_)))
        .expect("the watchdog fired")
        .ts;
    let worked_until = crate::idle_cpu::last_busy(&samples, sample, 0.2, fired);
    let stalled = worked_until.map_or(last_words, |w| w.max(last_words));
    let waited = fired.duration_since(stalled).unwrap_or_default();
    // Half a second for the machine: the clocks are read by two processes.
    assert!(
        fired.duration_since(last_words).unwrap_or_default() >= timeout
            && waited <= timeout + sample + Duration::from_millis(500),
        "stopped {waited:?} after the stall (OpenCode worked until {worked_until:?}, the provider \
         stopped at {last_words:?}): {d:?}\n{why}"
    );
    assert_eq!(count(&events, "watchdog.warning"), 1, "{why}");
    assert_eq!(count(&events, "watchdog.resumed"), 0, "{why}");
    assert_eq!(
        out.stderr.matches("will be stopped after").count(),
        1,
        "the warning said once: {why}"
    );
    let left = leftovers(&s.ctx.work, agent_pid(&events));
    assert!(left.is_empty(), "{left:?}\n{why}");
}

/// The inactivity timeout of the mid-stream stall: long enough that a CPU sample (a fifth of it)
/// spans more than a second, over which OpenCode's bursts while it waits stay under 13% of a core.
const STALL_TIMEOUT_SECS: u64 = 6;

#[test]
fn a_denied_permission_is_reported_and_the_run_is_truncated() {
    let config = OpencodeConfig {
        overlay: Some(json!({"permission": {"bash": "ask"}})),
        ..OpencodeConfig::default()
    };
    let Some(s) = Setup::with(config, |_| {
        vec![Reply::tool_calls(
            None,
            vec![ToolCall::new(
                "call_bash_ask",
                "bash",
                json!({"command": "echo hi", "description": "Say hi"}),
            )],
            Usage::new(1400, 20),
        )]
    }) else {
        return;
    };
    let (out, events, why) = s.finish(&[], "Run echo hi.", 1);
    let denials: Vec<(&str, &str)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::PermissionDenied { tool, detail, .. } => {
                Some((tool.as_str(), detail.as_str()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(denials, [("bash", "echo hi")], "{why}");
    let ends = tool_ends(&events);
    assert_eq!(
        ends.iter()
            .map(|t| (t.name.as_str(), t.input.as_str(), t.status))
            .collect::<Vec<_>>(),
        [("bash", "echo hi", ToolStatus::Denied)],
        "{why}"
    );
    let receipt = s.ended_as(Outcome::Truncated, &events, &why);
    assert_eq!(receipt.tool_calls.denied, 1, "{why}");
    assert_eq!(receipt.permission_denials.len(), 1, "{why}");
    assert_eq!(receipt.permission_denials[0].tool, "bash");
    assert_eq!(receipt.permission_denials[0].detail, "echo hi");
    assert_eq!(
        s.llm.main_requests().len(),
        1,
        "the agent stopped after the denial: {why}"
    );
    assert!(
        out.stderr.contains("⊘ bash: permission denied (echo hi)"),
        "the human view shows the denial: {why}"
    );
}

#[test]
fn json_mode_prints_exactly_the_logged_events_and_the_receipt() {
    let answer = "The README describes a demo project.";
    let (script, usage) = text_answer(answer);
    let Some(s) = Setup::new(script) else { return };
    let (out, events, why) = s.finish(&["--json"], "Summarize README.md in one sentence.", 0);

    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(lines.len() >= 2, "events and a receipt: {:?}", out.stdout);
    let (receipt_line, event_lines) = lines.split_last().unwrap();
    let printed: Vec<Event> = event_lines
        .iter()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("not an event ({e}): {l}\n{why}"))
        })
        .collect();
    let printed_receipt: Receipt = serde_json::from_str(receipt_line)
        .unwrap_or_else(|e| panic!("not a receipt ({e}): {receipt_line}"));

    assert_eq!(printed, events, "--json prints the logged events");
    let logged = std::fs::read_to_string(s.ctx.run_dir().join("events.ndjson")).unwrap();
    assert_eq!(
        event_lines.join("\n") + "\n",
        logged,
        "byte for byte the event log"
    );
    let receipt = s.ctx.receipt();
    assert_eq!(printed_receipt, receipt, "--json ends with the receipt");
    assert_eq!(printed_receipt.kind, "receipt");
    assert_eq!(receipt.outcome, Outcome::Completed);
    assert_usage(&receipt, &[usage]);
    assert_eq!(texts(&printed).concat().trim(), answer);
    assert_well_formed(&printed);
}

#[test]
fn secrets_from_the_environment_are_masked_in_everything_runbook_writes() {
    let secret = "tok-secret-98765";
    let answer = format!("I used the token {secret} as asked.");
    let (script, _) = text_answer(&answer);
    let Some(mut s) = Setup::new(script) else {
        return;
    };
    s.ctx.env("MY_SERVICE_TOKEN", secret);
    let prompt = format!("Call the service with the token {secret}.");
    // -v: the human view also shows the agent's command line (with the prompt) and all its text.
    let (out, events, why) = s.finish(&["-v"], &prompt, 0);

    let served = s.llm.main_requests();
    assert!(
        served
            .first()
            .is_some_and(|r| r.body["messages"].to_string().contains(secret)),
        "the provider received the secret in the prompt: {served:?}"
    );
    let dir = s.ctx.run_dir();
    let files = s.ctx.assert_no_run_file_holds(secret);
    assert!(files >= 4, "events, two raw logs and the receipt");
    out.assert_hides(secret);

    // Masked, not dropped: the places that carried it say so.
    let receipt = s.ctx.receipt();
    assert_eq!(receipt.prompt, prompt.replace(secret, "[REDACTED]"));
    assert_eq!(
        texts(&events).concat().trim(),
        answer.replace(secret, "[REDACTED]")
    );
    let stdout_log = std::fs::read_to_string(dir.join("stdout.log")).unwrap();
    assert!(stdout_log.contains("[REDACTED]"), "{stdout_log}");
    assert!(out.stderr.contains("[REDACTED]"), "{why}");
}
