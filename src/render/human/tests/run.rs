//! A run that shows every kind of event once, built family by family, each event with the
//! millisecond of the run it arrives at.

use std::time::Duration;

use crate::event::{
    AgentResult, CostSource, Diagnostic, EventKind, ExitInfo, Limits, Outcome, ProviderError,
    ProviderRetry, RunInfo, StepUsage, Stream, Tokens, ToolEnd, ToolKind, ToolStart, ToolStatus,
    Unparsed, UnparsedReason,
};

/// Events, each with the millisecond it arrives at.
pub(super) type Timed = Vec<(u64, EventKind)>;

/// The whole run, in order.
pub(super) fn every_event() -> Timed {
    let mut events = start();
    events.extend(words());
    events.extend(tools());
    events.extend(streamed_step());
    events.extend(agent_reports());
    events.extend(watchdog());
    events.extend(ending());
    events
}

/// The run and its first turn starting, the agent's version and session, and a step opening.
pub(super) fn start() -> Timed {
    let argv = ["opencode", "run", "--format", "json"].map(String::from);
    vec![
        (0, EventKind::RunStarted(Box::new(run_info()))),
        (
            5,
            EventKind::TurnStarted {
                argv: argv.to_vec(),
                pid: 42,
                planning: false,
                steps_unreported: false,
                prompt: Some("fix the flaky test".into()),
            },
        ),
        (
            800,
            EventKind::AgentVersion {
                version: "1.18.33".into(),
                tested_with: Vec::new(),
                fidelity: Some(crate::event::Fidelity::Tested),
            },
        ),
        (
            3100,
            EventKind::SessionStarted {
                session_id: "ses_abc".into(),
            },
        ),
        (3200, EventKind::StepStarted { id: None }),
    ]
}

/// What the run was started with.
fn run_info() -> RunInfo {
    RunInfo {
        schema_version: 1,
        run_id: "20261122-040000-abcde".into(),
        runbook_version: "0.1.0".into(),
        agent: "opencode".into(),
        model: Some("fake/fake-model".into()),
        model_file: None,
        prompt: "Fix the flaky test".into(),
        cwd: "/work/repo".into(),
        run_dir: "/state/runs/20261122-040000-abcde".into(),
        name: None,
        git: None,
        pid: 1,
        pid_start: None,
        limits: Limits {
            inactivity_timeout: Duration::from_secs(180),
            kill_grace: Duration::from_secs(10),
            finish_grace: Duration::from_secs(5),
            timeout: None,
            max_cost_usd: None,
        },
        settings: Vec::new(),
        env: Vec::new(),
        sandbox: None,
    }
}

/// The agent's reasoning, then its text (more lines than are shown without `-v`).
pub(super) fn words() -> Timed {
    let text = "I'll look at the test first.\n\nThen fix it.\nThen run it.\nThen report.";
    vec![
        (
            3300,
            EventKind::Reasoning {
                text: "The test races on a shared temp dir.".into(),
            },
        ),
        (3400, EventKind::Text { text: text.into() }),
    ]
}

/// A call that works, one that fails, one denied (and its denial), a subagent with a call of
/// its own, and a denial with no call shown.
fn tools() -> Timed {
    let mut events = Vec::new();
    let [a, b] = tool("read", "tests/flaky.rs", ToolStatus::Ok, None);
    events.extend([(3500, a), (3540, b)]);
    let error = "File not found: missing.txt\nmore detail";
    let [a, b] = tool("read", "missing.txt", ToolStatus::Error, Some(error));
    events.extend([(3600, a), (3610, b)]);
    let [a, b] = tool(
        "bash",
        "rm -rf target",
        ToolStatus::Denied,
        Some("rejected"),
    );
    events.extend([(3700, a), (3710, b)]);
    events.push((3711, denied("bash", "rm -rf target")));
    events.extend(subagent());
    events.push((3870, denied("write", "/etc/hosts")));
    events
}

/// A tool call starting and then completing, `42ms` later by its own account.
fn tool(name: &str, input: &str, status: ToolStatus, error: Option<&str>) -> [EventKind; 2] {
    [
        EventKind::ToolStarted(ToolStart {
            call_id: "c".into(),
            name: name.into(),
            kind: ToolKind::of(name),
            input: input.into(),
            parent: None,
        }),
        EventKind::ToolCompleted(ToolEnd {
            call_id: "c".into(),
            name: name.into(),
            kind: ToolKind::of(name),
            input: input.into(),
            parent: None,
            status,
            error: error.map(Into::into),
            output_bytes: Some(120),
            duration_ms: Some(42),
            input_hash: None,
            result_hash: None,
        }),
    ]
}

fn denied(tool: &str, detail: &str) -> EventKind {
    EventKind::PermissionDenied {
        tool: tool.into(),
        detail: detail.into(),
        call_id: None,
    }
}

/// A subagent starting, making one call, and finishing.
fn subagent() -> Timed {
    let call = ToolEnd {
        call_id: "n".into(),
        name: "bash".into(),
        kind: ToolKind::Shell,
        input: "ls".into(),
        parent: Some("t".into()),
        status: ToolStatus::Ok,
        error: None,
        output_bytes: None,
        duration_ms: None,
        input_hash: None,
        result_hash: None,
    };
    vec![
        (
            3800,
            EventKind::SubagentStarted {
                session_id: Some("ses_child".into()),
                call_id: "t".into(),
                description: "Summarize README".into(),
            },
        ),
        (3850, EventKind::ToolCompleted(call)),
        (
            3860,
            EventKind::SubagentFinished {
                call_id: "t".into(),
                status: ToolStatus::Ok,
                message: Some("README has 4 lines".into()),
            },
        ),
    ]
}

/// Text streaming in, then the step finishing.
fn streamed_step() -> Timed {
    let tokens = Tokens {
        input: 1500,
        output: 40,
        reasoning: 10,
        cache_read: 1000,
        cache_write: 0,
    };
    let step = StepUsage {
        id: None,
        reason: "tool-calls".into(),
        tokens,
        cost_usd: Some(0.0051),
        cost_source: Some(CostSource::Reported),
        cost_rejected: None,
        tokens_unreadable: false,
    };
    vec![
        (
            3880,
            EventKind::TextDelta {
                text: "Now the fix".into(),
            },
        ),
        (3900, EventKind::StepFinished(step)),
    ]
}

/// A retry, a warning, the agent's result, a line of stderr, an unreadable line, and errors.
fn agent_reports() -> Timed {
    let retry = ProviderRetry {
        attempt: 1,
        max_attempts: Some(3),
        delay_ms: Some(600),
        status: Some(529),
        message: "overloaded".into(),
    };
    let unparsed = Unparsed {
        stream: Stream::Stdout,
        reason: UnparsedReason::NotJson,
        bytes: 17,
        head: "this is not json".into(),
    };
    let provider = ProviderError {
        name: "APIError".into(),
        message: "rate limited".into(),
        status: Some(429),
        retryable: Some(true),
    };
    let warning = "Model metadata for `gpt-x` not found";
    vec![
        (3950, EventKind::ProviderRetry(retry)),
        (
            3960,
            EventKind::AgentWarning {
                message: warning.into(),
            },
        ),
        (3970, EventKind::AgentResult(agent_result())),
        (
            4000,
            EventKind::Stderr {
                line: "warning: slow disk".into(),
            },
        ),
        (4100, EventKind::Unparsed(unparsed)),
        (4200, EventKind::ProviderError(provider)),
        (
            4300,
            EventKind::AgentError {
                name: "UnknownError".into(),
                message: "Unexpected server error".into(),
            },
        ),
    ]
}

/// The agent's own account of the run, with an estimated cost.
fn agent_result() -> AgentResult {
    AgentResult {
        ok: true,
        message: None,
        tokens: Some(Tokens {
            input: 3000,
            output: 80,
            reasoning: 20,
            cache_read: 2000,
            cache_write: 0,
        }),
        cost_usd: Some(0.0123),
        cost_source: Some(CostSource::Estimated),
        cost_rejected: None,
        tokens_unreadable: false,
        tokens_partial: false,
        model_calls: None,
        duration_ms: Some(3900),
    }
}

/// The watchdog warning at half the timeout, firing at the timeout, and the agent signalled.
fn watchdog() -> Timed {
    let diagnostic = Diagnostic {
        timeout_ms: 180_000,
        stdout_quiet_ms: 180_000,
        stderr_quiet_ms: 180_300,
        cpu_quiet_ms: 180_000,
        last_event: Some("step.started".into()),
        open_step: Some(2),
        completed_steps: Some(1),
        cost_usd: Some(0.0051),
        stderr_tail: vec!["warning: slow disk".into()],
        running_tool: None,
    };
    vec![
        (
            94_300,
            EventKind::WatchdogWarning {
                quiet_ms: 90_000,
                timeout_ms: 180_000,
            },
        ),
        (184_300, EventKind::WatchdogFired(Box::new(diagnostic))),
        (
            184_301,
            EventKind::SignalSent {
                signal: "SIGTERM".into(),
                processes: 3,
            },
        ),
    ]
}

/// A stop requested, the turn failing, and the run finishing as hung.
fn ending() -> Timed {
    let killed = ExitInfo {
        code: None,
        signal: Some(15),
    };
    vec![
        (
            184_400,
            EventKind::StopRequested {
                reason: Outcome::BudgetExceeded,
                message: "cost $2.0100 crossed --max-cost $2.00".into(),
            },
        ),
        (
            184_500,
            EventKind::TurnFailed {
                outcome: Outcome::Hung,
                message: "no activity for 3m 0s".into(),
                exit: killed,
            },
        ),
        (
            184_600,
            EventKind::RunFinished {
                outcome: Outcome::Hung,
                message: "no activity for 3m 0s: the agent looks hung".into(),
                duration_ms: 184_600,
                exit: killed,
            },
        ),
    ]
}
