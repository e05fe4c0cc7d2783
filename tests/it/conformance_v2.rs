//! The recordings of the canonical scenarios of each OpenCode 2 release runbook is tested with
//! (fixtures/opencode-VERSION/), played by `runbook replay` without being told which OpenCode
//! made them, must yield the normalized facts
//! every adapter keeps (conformance.rs), and the receipt the live run gets: the tokens, cost,
//! steps and ending expected are read from OpenCode's own session export recorded beside each
//! stream, independently of the adapter.

use runbook::event::{CostSource, Event, EventKind, Fidelity, Outcome, ToolKind, ToolStatus};
use runbook::receipt::Receipt;
use serde_json::Value;

use crate::conformance::{Expected, Scenario, assert_facts, facts};
use crate::support::{self, TestContext, events_and_receipt, run};

const LIMIT: std::time::Duration = std::time::Duration::from_secs(30);
/// Each OpenCode 2 release the scenarios were recorded from, with its fixtures directory (see
/// `runbook::agent::versions`).
const RELEASES: [(&str, &str); 2] = [("2.1.2", "opencode-2.1.2"), ("2.2.5", "opencode-2.2.5")];
/// The release the tests of one recording use.
const DIR: &str = "opencode-2.1.2";

/// Each recorded scenario, by its recording; `turn1` and `turn2` are the two turns of `--then`
/// (the second continuing the first's session).
const RECORDED: [(Scenario, &str); 10] = [
    (Scenario::Text, "text"),
    (Scenario::ReadEdit, "read_edit"),
    (Scenario::Shell, "shell"),
    (Scenario::ToolFail, "tool_fail"),
    (Scenario::ProviderError, "http400"),
    (Scenario::PermissionDenied, "permission_denied"),
    (Scenario::Subagent, "subagent"),
    (Scenario::Multistep, "multistep"),
    (Scenario::Text, "turn1"),
    (Scenario::Text, "turn2"),
];

fn path(name: &str, ext: &str) -> std::path::PathBuf {
    path_in(DIR, name, ext)
}

fn path_in(dir: &str, name: &str, ext: &str) -> std::path::PathBuf {
    support::fixtures().join(format!("{dir}/{name}.{ext}"))
}

/// `runbook replay --instant --json` of the recording `name`, with `extra` arguments.
fn replay(ctx: &TestContext, name: &str, extra: &[&str]) -> support::Outcome {
    replay_in(ctx, DIR, name, extra)
}

/// [`replay`] of the recording `name` in `dir`.
fn replay_in(ctx: &TestContext, dir: &str, name: &str, extra: &[&str]) -> support::Outcome {
    let file = path_in(dir, name, "stdout.ndjson");
    let mut args = vec!["replay", "--instant", "--json"];
    args.extend_from_slice(extra);
    args.push(file.to_str().expect("UTF-8 path"));
    run(&mut ctx.runbook(&args), LIMIT)
}

/// What OpenCode's own export says of the recording's turn (the messages after its last prompt):
/// the tokens and cost of its assistant messages, how many there are, and the turn's outcome.
struct Exported {
    tokens: u64,
    /// `None` when no message states one (a request the provider refused).
    cost: Option<f64>,
    steps: u32,
    outcome: Option<String>,
}

fn exported(dir: &str, name: &str) -> Exported {
    let text =
        std::fs::read_to_string(path_in(dir, name, "export.json")).expect("the recorded export");
    let export: Value = serde_json::from_str(&text).expect("an export's JSON");
    let messages = export["messages"].as_array().cloned().unwrap_or_default();
    let from = messages
        .iter()
        .rposition(|m| m["type"] == "user")
        .map_or(0, |i| i + 1);
    let turn = &messages[from..];
    let n = |t: &Value, k: &str| t[k].as_u64().unwrap_or(0);
    let assistant: Vec<&Value> = turn.iter().filter(|m| m["type"] == "assistant").collect();
    let tokens = assistant
        .iter()
        .map(|m| {
            let (t, c) = (&m["tokens"], &m["tokens"]["cache"]);
            n(t, "input") + n(t, "output") + n(t, "reasoning") + n(c, "read") + n(c, "write")
        })
        .sum();
    let costs: Vec<f64> = assistant
        .iter()
        .filter_map(|m| m["cost"].as_f64())
        .collect();
    Exported {
        tokens,
        cost: (!costs.is_empty()).then(|| costs.iter().sum()),
        steps: assistant.len() as u32,
        outcome: turn
            .iter()
            .rfind(|m| m["type"] == "idle")
            .and_then(|m| m["outcome"].as_str().map(str::to_owned)),
    }
}

/// The exit code recorded beside `name`.
fn exit_code(dir: &str, name: &str) -> i32 {
    let text = std::fs::read_to_string(path_in(dir, name, "exit")).expect("the recorded exit");
    text.trim().parse().expect("an exit code")
}

/// The tool calls OpenCode 2 made in each recording, normalized.
fn expected_tools(scenario: Scenario) -> Vec<(ToolKind, ToolStatus, bool)> {
    use Scenario::*;
    use ToolKind as K;
    use ToolStatus::{Denied, Error, Ok};
    let calls: &[(ToolKind, ToolStatus, bool)] = match scenario {
        Text | ProviderError => &[],
        ReadEdit => &[(K::Read, Ok, false), (K::Edit, Ok, false)],
        Shell => &[(K::Shell, Ok, false)],
        // A missing file, then a command that exits 3.
        ToolFail => &[(K::Read, Error, false), (K::Shell, Error, false)],
        PermissionDenied => &[(K::Shell, Denied, false)],
        Subagent => &[(K::Subagent, Ok, false)],
        Multistep => &[
            (K::Shell, Ok, false),
            (K::Read, Ok, false),
            (K::Shell, Ok, false),
            (K::Write, Ok, false),
            (K::Shell, Ok, false),
        ],
        Stall => unreachable!("not recorded"),
    };
    calls.to_vec()
}

/// The ending OpenCode itself states: exit 0 and a turn that `succeeded` is a finished run,
/// a turn that `failed` (exit 1) an agent error.
fn expected_outcome(code: i32, outcome: Option<&str>) -> Outcome {
    match (code, outcome) {
        (0, Some("succeeded")) => Outcome::Completed,
        (_, Some("failed")) => Outcome::AgentError,
        other => panic!("no recorded scenario ends as {other:?}"),
    }
}

#[test]
fn every_opencode_2_recording_replays_to_the_facts_its_own_export_states() {
    let ctx = TestContext::new();
    for (release, dir) in RELEASES {
        for (scenario, name) in RECORDED {
            replays_to_its_own_facts(&ctx, release, dir, scenario, name);
        }
    }
}

/// The recording `name` of `release` (in `dir`) replayed: the facts its export states, every
/// step counted, no warning.
fn replays_to_its_own_facts(
    ctx: &TestContext,
    release: &str,
    dir: &str,
    scenario: Scenario,
    name: &str,
) {
    let out = replay_in(ctx, dir, name, &[]);
    assert_eq!(out.code(), Some(0), "{release} {name}: {}", out.stderr);
    let (events, receipt) = events_and_receipt(&out.stdout);
    let own = exported(dir, name);
    let want = Expected {
        tools: expected_tools(scenario),
        outcome: expected_outcome(exit_code(dir, name), own.outcome.as_deref()),
        tokens: Some(own.tokens),
        steps_known: true,
        cost: own.cost,
        cost_source: own.cost.map(|_| CostSource::Reported),
    };
    let failed = scenario == Scenario::ProviderError;
    let what = format!("OpenCode {release} {scenario:?} ({name})");
    let got = facts(&events, &receipt);
    assert_facts(&got, &want, failed, scenario == Scenario::Subagent, &what);
    assert_eq!(got.steps, Some(own.steps), "{what}");
    assert!(
        receipt.warnings.count == 0,
        "{what}: {:?}",
        receipt.warnings
    );
}

/// The provider errors and retries of a replay's events.
fn retries(events: &[Event]) -> usize {
    let retry = |e: &&Event| matches!(e.kind, EventKind::ProviderRetry(_));
    events.iter().filter(retry).count()
}

#[test]
fn a_500_retried_until_stopped_is_each_retry_and_never_completed() {
    let ctx = TestContext::new();
    for (release, dir) in RELEASES {
        a_500_is_each_retry(&ctx, release, dir);
    }
}

fn a_500_is_each_retry(ctx: &TestContext, release: &str, dir: &str) {
    let out = replay_in(ctx, dir, "http500", &[]);
    assert_eq!(out.code(), Some(0), "{release}: {}", out.stderr);
    let (events, receipt) = events_and_receipt(&out.stdout);
    let text =
        std::fs::read_to_string(path_in(dir, "http500", "stdout.ndjson")).expect("the recording");
    let starts = text
        .lines()
        .filter(|l| l.contains("\"step_start\""))
        .count();
    assert_eq!(
        retries(&events),
        starts - 1,
        "{release}: {:?}",
        support::types(&events)
    );
    assert_ne!(
        receipt.outcome,
        Outcome::Completed,
        "{release}: {receipt:?}"
    );
    // Killed while retrying, OpenCode kept no step: none is counted, and none as free.
    assert_eq!(exported(dir, "http500").steps, 0, "{release}");
    assert!(receipt.steps.is_some_and(|n| n <= 1), "{:?}", receipt.steps);
}

#[test]
fn the_version_given_decides_which_opencode_the_recording_is_read_as() {
    let ctx = TestContext::new();
    let as_v2 = replay(
        &ctx,
        "text",
        &["--agent", "opencode", "--agent-version", "2.1.2"],
    );
    let (_, receipt) = events_and_receipt(&as_v2.stdout);
    assert_eq!(receipt.outcome, Outcome::Completed, "{}", as_v2.stderr);
    assert_eq!(receipt.fidelity, Fidelity::Tested);
    assert_eq!(receipt.agent.version.as_deref(), Some("2.1.2"));
    // Read as 1.x, OpenCode 2's lone answer is a step that never finished.
    let as_v1 = replay(&ctx, "text", &["--agent-version", "1.18.33"]);
    let (_, receipt) = events_and_receipt(&as_v1.stdout);
    assert_eq!(receipt.outcome, Outcome::Truncated, "{}", as_v1.stderr);
}

#[test]
fn an_agent_version_that_is_no_version_or_for_an_event_log_is_refused_in_one_line() {
    let ctx = TestContext::new();
    let out = replay(&ctx, "text", &["--agent-version", "latest"]);
    assert_eq!(out.code(), Some(2), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("--agent-version \"latest\" holds no version number")
    );
    assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
    let log = ctx.root().join("events.ndjson");
    let replayed = replay(&ctx, "text", &[]);
    std::fs::write(&log, replayed.stdout.lines().next().unwrap_or_default()).expect("a log");
    let mut args = vec!["replay", "--instant", "--agent-version", "2.1.2"];
    args.push(log.to_str().expect("UTF-8 path"));
    let out = run(&mut ctx.runbook(&args), LIMIT);
    assert_eq!(out.code(), Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("leave --agent-version out"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_recording_without_its_export_is_not_completed_and_its_cost_and_tokens_are_unknown() {
    let ctx = TestContext::new();
    let file = ctx.root().join("alone.stdout.ndjson");
    std::fs::copy(path("shell", "stdout.ndjson"), &file).expect("copy the stream");
    let mut args = vec!["replay", "--instant", "--json"];
    args.push(file.to_str().expect("UTF-8 path"));
    let out = run(&mut ctx.runbook(&args), LIMIT);
    let (events, receipt): (Vec<Event>, Receipt) = events_and_receipt(&out.stdout);
    assert_eq!(receipt.outcome, Outcome::Truncated, "{receipt:?}");
    assert_eq!(receipt.cost.usd, None, "{receipt:?}");
    assert!(receipt.cost.incomplete, "{receipt:?}");
    // The steps the stream did not end have unknown tokens: the count is a lower bound.
    assert!(receipt.tokens.incomplete, "{receipt:?}");
    let told = events.iter().any(|e| {
        matches!(&e.kind, EventKind::AgentWarning { message } if message.contains("session export"))
    });
    assert!(told, "{:?}", support::types(&events));
}
