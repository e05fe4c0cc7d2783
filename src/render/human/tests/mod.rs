//! The human view's tests: a run showing every kind of event, in each display and style.

use std::sync::{Arc, Mutex};

use super::*;
use crate::event::{
    CostSource, Diagnostic, ExitInfo, Limits, Outcome, ProviderError, RunInfo, StepUsage, Stream,
    Tokens, ToolEnd, ToolStart, ToolStatus, TurnKind, Unparsed, UnparsedReason,
};

/// A writer the test can read back.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Folds an event and shows it, as the dispatcher would.
fn feed(
    human: &mut Human,
    totals: &mut RunStats,
    seq: u64,
    ts: SystemTime,
    turn: Turn,
    kind: EventKind,
) {
    let event = Event {
        seq,
        ts,
        turn,
        kind,
    };
    totals.observe(&event);
    human
        .event(&Delivery {
            event: &event,
            totals,
            json: None,
        })
        .unwrap();
}

fn at(ms: u64) -> SystemTime {
    humantime::parse_rfc3339("2026-11-22T04:00:00Z").unwrap() + Duration::from_millis(ms)
}

fn tool(name: &str, input: &str, status: ToolStatus, error: Option<&str>) -> [EventKind; 2] {
    [
        EventKind::ToolStarted(ToolStart {
            call_id: "c".into(),
            name: name.into(),
            kind: crate::event::ToolKind::of(name),
            input: input.into(),
            parent: None,
        }),
        EventKind::ToolCompleted(ToolEnd {
            call_id: "c".into(),
            name: name.into(),
            kind: crate::event::ToolKind::of(name),
            input: input.into(),
            parent: None,
            status,
            error: error.map(Into::into),
            output_bytes: Some(120),
            duration_ms: Some(42),
        }),
    ]
}

/// A run that shows every kind of event once.
fn every_event() -> Vec<(u64, EventKind)> {
    let step = |reason: &str, cost| {
        EventKind::StepFinished(StepUsage {
            id: None,
            reason: reason.into(),
            tokens: Tokens {
                input: 1500,
                output: 40,
                reasoning: 10,
                cache_read: 1000,
                cache_write: 0,
            },
            cost_usd: Some(cost),
            cost_source: Some(CostSource::Reported),
        })
    };
    let mut events = vec![
        (
            0,
            EventKind::RunStarted(RunInfo {
                schema_version: 1,
                run_id: "20261122-040000-abcde".into(),
                runbook_version: "0.1.0".into(),
                agent: "opencode".into(),
                model: Some("fake/fake-model".into()),
                prompt: "Fix the flaky test".into(),
                cwd: "/work/repo".into(),
                run_dir: "/state/runs/20261122-040000-abcde".into(),
                pid: 1,
                pid_start: None,
                limits: Limits {
                    inactivity_timeout_ms: 180_000,
                    kill_grace_ms: 10_000,
                    timeout_ms: None,
                    max_cost_usd: None,
                },
                settings: Vec::new(),
                env: Vec::new(),
            }),
        ),
        (
            5,
            EventKind::TurnStarted {
                argv: vec![
                    "opencode".into(),
                    "run".into(),
                    "--format".into(),
                    "json".into(),
                ],
                pid: 42,
            },
        ),
        (
            800,
            EventKind::AgentVersion {
                version: "1.18.33".into(),
            },
        ),
        (
            3100,
            EventKind::SessionStarted {
                session_id: "ses_abc".into(),
            },
        ),
        (3200, EventKind::StepStarted { id: None }),
        (
            3300,
            EventKind::Reasoning {
                text: "The test races on a shared temp dir.".into(),
            },
        ),
        (
            3400,
            EventKind::Text {
                text: "I'll look at the test first.\n\nThen fix it.\nThen run it.\nThen report."
                    .into(),
            },
        ),
    ];
    let [a, b] = tool("read", "tests/flaky.rs", ToolStatus::Ok, None);
    events.extend([(3500, a), (3540, b)]);
    let [a, b] = tool(
        "read",
        "missing.txt",
        ToolStatus::Error,
        Some("File not found: missing.txt\nmore detail"),
    );
    events.extend([(3600, a), (3610, b)]);
    let [a, b] = tool(
        "bash",
        "rm -rf target",
        ToolStatus::Denied,
        Some("rejected"),
    );
    events.extend([(3700, a), (3710, b)]);
    events.extend([
        (
            3711,
            EventKind::PermissionDenied {
                tool: "bash".into(),
                detail: "rm -rf target".into(),
            },
        ),
        (
            3800,
            EventKind::SubagentStarted {
                session_id: Some("ses_child".into()),
                call_id: "t".into(),
                description: "Summarize README".into(),
            },
        ),
        (
            3850,
            EventKind::ToolCompleted(ToolEnd {
                call_id: "n".into(),
                name: "bash".into(),
                kind: crate::event::ToolKind::Shell,
                input: "ls".into(),
                parent: Some("t".into()),
                status: ToolStatus::Ok,
                error: None,
                output_bytes: None,
                duration_ms: None,
            }),
        ),
        (
            3860,
            EventKind::SubagentFinished {
                call_id: "t".into(),
                status: ToolStatus::Ok,
                message: Some("README has 4 lines".into()),
            },
        ),
        (
            3870,
            EventKind::PermissionDenied {
                tool: "write".into(),
                detail: "/etc/hosts".into(),
            },
        ),
        (
            3880,
            EventKind::TextDelta {
                text: "Now the fix".into(),
            },
        ),
        (3900, step("tool-calls", 0.0051)),
        (
            3950,
            EventKind::ProviderRetry(crate::event::ProviderRetry {
                attempt: 1,
                max_attempts: Some(3),
                delay_ms: Some(600),
                status: Some(529),
                message: "overloaded".into(),
            }),
        ),
        (
            3960,
            EventKind::AgentWarning {
                message: "Model metadata for `gpt-x` not found".into(),
            },
        ),
        (
            3970,
            EventKind::AgentResult(crate::event::AgentResult {
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
                model_calls: None,
                duration_ms: Some(3900),
            }),
        ),
        (
            4000,
            EventKind::Stderr {
                line: "warning: slow disk".into(),
            },
        ),
        (
            4100,
            EventKind::Unparsed(Unparsed {
                stream: Stream::Stdout,
                reason: UnparsedReason::NotJson,
                bytes: 17,
                head: "this is not json".into(),
            }),
        ),
        (
            4200,
            EventKind::ProviderError(ProviderError {
                name: "APIError".into(),
                message: "rate limited".into(),
                status: Some(429),
                retryable: Some(true),
            }),
        ),
        (
            4300,
            EventKind::AgentError {
                name: "UnknownError".into(),
                message: "Unexpected server error".into(),
            },
        ),
        (
            94_300,
            EventKind::WatchdogWarning {
                quiet_ms: 90_000,
                timeout_ms: 180_000,
            },
        ),
        (
            184_300,
            EventKind::WatchdogFired(Box::new(Diagnostic {
                timeout_ms: 180_000,
                stdout_quiet_ms: 180_000,
                stderr_quiet_ms: 180_300,
                cpu_quiet_ms: 180_000,
                last_event: Some("step.started".into()),
                open_step: Some(2),
                completed_steps: 1,
                cost_usd: Some(0.0051),
                stderr_tail: vec!["warning: slow disk".into()],
            })),
        ),
        (
            184_301,
            EventKind::SignalSent {
                signal: "SIGTERM".into(),
                processes: 3,
            },
        ),
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
                exit: ExitInfo {
                    code: None,
                    signal: Some(15),
                },
            },
        ),
        (
            184_600,
            EventKind::RunFinished {
                outcome: Outcome::Hung,
                message: "no activity for 3m 0s: the agent looks hung".into(),
                duration_ms: 184_600,
                exit: ExitInfo {
                    code: None,
                    signal: Some(15),
                },
            },
        ),
    ]);
    events
}

fn render(display: Display, styles: Styles, verbose: bool, events: &[(u64, EventKind)]) -> String {
    let out = Shared::default();
    let mut human = Human::new(display, styles, verbose, Box::new(out.clone()));
    let mut totals = RunStats::default();
    for (seq, (ms, kind)) in events.iter().enumerate() {
        let turn = Turn {
            index: 0,
            kind: TurnKind::Start,
        };
        feed(
            &mut human,
            &mut totals,
            seq as u64,
            at(*ms),
            turn,
            kind.clone(),
        );
    }
    human.close().unwrap();
    String::from_utf8(out.0.lock().unwrap().clone()).unwrap()
}

#[test]
fn plain_lines_show_every_kind_of_event() {
    insta::assert_snapshot!(render(
        Display::Lines,
        Styles::plain(),
        false,
        &every_event()
    ));
}

#[test]
fn verbose_lines_add_the_details() {
    insta::assert_snapshot!(render(
        Display::Lines,
        Styles::plain(),
        true,
        &every_event()
    ));
}

#[test]
fn quiet_shows_only_what_needs_attention() {
    insta::assert_snapshot!(render(
        Display::Quiet,
        Styles::plain(),
        false,
        &every_event()
    ));
}

#[test]
fn colours_mark_success_failure_and_warnings() {
    let out = render(Display::Lines, Styles::colored(), false, &every_event());
    insta::assert_snapshot!(out.replace('\u{1b}', "\\e"));
}

#[test]
fn plain_output_has_no_control_codes() {
    let out = render(Display::Lines, Styles::plain(), true, &every_event());
    assert!(!out.contains('\u{1b}'), "{out}");
}

#[test]
fn a_completed_run_ends_with_a_one_line_summary() {
    let mut events = every_event();
    events.truncate(7);
    events.push((
        5100,
        EventKind::StepFinished(StepUsage {
            id: None,
            reason: "stop".into(),
            tokens: Tokens {
                input: 1000,
                output: 18,
                reasoning: 0,
                cache_read: 200,
                cache_write: 0,
            },
            cost_usd: Some(0.00333),
            cost_source: Some(CostSource::Reported),
        }),
    ));
    events.push((
        5200,
        EventKind::RunFinished {
            outcome: Outcome::Completed,
            message: "the agent finished".into(),
            duration_ms: 5200,
            exit: ExitInfo {
                code: Some(0),
                signal: None,
            },
        },
    ));
    let out = render(Display::Lines, Styles::plain(), false, &events);
    let summary = out.lines().rev().nth(1).unwrap();
    assert_eq!(
        summary,
        "[00:05.2] ✓ completed in 5.2s · 1 step · 0 tool calls · 1,218 tokens · $0.0033"
    );
}

#[test]
fn streaming_text_shows_on_the_status_line_until_the_whole_text_arrives() {
    let mut human = Human::new(
        Display::Lines,
        Styles::plain(),
        false,
        Box::new(Shared::default()),
    );
    let mut totals = RunStats::default();
    let mut feed = |human: &mut Human, seq: u64, kind: EventKind| {
        feed(human, &mut totals, seq, at(seq), Turn::FIRST, kind);
    };
    for (seq, piece) in [
        "Hello! This is a scri",
        "pted answer.\nSecond li",
        "ne so far",
    ]
    .into_iter()
    .enumerate()
    {
        feed(
            &mut human,
            seq as u64,
            EventKind::TextDelta {
                text: piece.to_owned(),
            },
        );
    }
    let line = human.status_line(at(10), &RunStats::default());
    assert!(line.ends_with("│ Second line so far"), "{line}");
    feed(
        &mut human,
        4,
        EventKind::Text {
            text: "Hello! This is a scripted answer.\nSecond line so far.".to_owned(),
        },
    );
    assert!(
        !human
            .status_line(at(10), &RunStats::default())
            .contains('│')
    );
}
