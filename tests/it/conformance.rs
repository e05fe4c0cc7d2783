//! One conformance suite for every adapter: the canonical scenarios, as recorded from each real
//! agent CLI (fixtures/), read through `runbook replay`, must yield the same normalized facts —
//! tool calls and their statuses, turns, tokens, cost and its source, outcome — and the same turn
//! semantics. The expected tokens and costs are read from the raw transcripts independently of
//! the adapters. (The same scenarios run live against the real CLIs in `live.rs`.)

use std::fmt::Write as _;

use runbook::event::{CostSource, Event, EventKind, Outcome, ToolKind, ToolStatus};
use runbook::receipt::Receipt;
use serde_json::Value;

use crate::support::{self, TestContext, events_and_receipt, run};

const LIMIT: std::time::Duration = std::time::Duration::from_secs(30);

/// The canonical scenarios. All of them run live (`live.rs`); all but the last two were recorded
/// from every agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    Text,
    ReadEdit,
    Shell,
    ToolFail,
    ProviderError,
    PermissionDenied,
    Subagent,
    Multistep,
    Stall,
}

pub const ALL: [Scenario; 9] = [
    Scenario::Text,
    Scenario::ReadEdit,
    Scenario::Shell,
    Scenario::ToolFail,
    Scenario::ProviderError,
    Scenario::PermissionDenied,
    Scenario::Subagent,
    Scenario::Multistep,
    Scenario::Stall,
];

/// The scenarios recorded from every agent: all but multi-step and stall.
const RECORDED: &[Scenario] = ALL.split_at(7).0;

pub const AGENTS: [&str; 3] = ["opencode", "claude", "codex"];

/// What a run amounts to, the same way for every agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Facts {
    /// Every tool call in order: its kind, how it ended, whether a subagent made it.
    pub tools: Vec<(ToolKind, ToolStatus, bool)>,
    pub outcome: Outcome,
    /// `None`: unknown (the receipt says they are incomplete).
    pub tokens: Option<u64>,
    /// `None`: unknown (an agent that does not report its model calls).
    pub steps: Option<u32>,
    pub cost: Option<f64>,
    pub cost_source: Option<CostSource>,
    pub permission_denials: usize,
    pub provider_errors: usize,
    pub subagents: usize,
}

/// The facts of a run, after checking the turn semantics every adapter must keep: one
/// `turn.completed` or `turn.failed` per `turn.started`, after every tool call of the turn has
/// ended, and every started call ended.
pub fn facts(events: &[Event], receipt: &Receipt) -> Facts {
    let mut open_calls: Vec<&str> = Vec::new();
    let mut turn_open = false;
    let mut turns = 0;
    for ev in events {
        match &ev.kind {
            EventKind::TurnStarted { .. } => {
                assert!(!turn_open, "a turn started inside another: {ev:?}");
                turn_open = true;
            }
            EventKind::ToolStarted(t) => open_calls.push(&t.call_id),
            EventKind::ToolCompleted(t) => {
                let i = open_calls
                    .iter()
                    .position(|c| *c == t.call_id)
                    .unwrap_or_else(|| panic!("tool.completed without tool.started: {t:?}"));
                open_calls.remove(i);
            }
            EventKind::TurnCompleted { .. } | EventKind::TurnFailed { .. } => {
                assert!(turn_open, "a turn ended twice: {ev:?}");
                assert!(
                    open_calls.is_empty(),
                    "the turn ended before its calls {open_calls:?}"
                );
                turn_open = false;
                turns += 1;
            }
            _ => {}
        }
    }
    assert!(!turn_open, "a turn never ended");
    assert_eq!(turns, receipt.turns.len(), "one ending per turn");
    let completed = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::TurnCompleted { .. }))
        .count();
    assert_eq!(
        completed > 0,
        receipt.outcome == Outcome::Completed,
        "turn.completed exactly when the run completed"
    );
    Facts {
        tools: events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::ToolCompleted(t) => Some((t.kind, t.status, t.parent.is_some())),
                _ => None,
            })
            .collect(),
        outcome: receipt.outcome,
        tokens: (!receipt.tokens.incomplete).then_some(receipt.tokens.total),
        steps: receipt.steps,
        cost: receipt.cost.usd,
        cost_source: receipt.cost.source,
        permission_denials: receipt.permission_denials.len(),
        provider_errors: receipt.provider_errors.len(),
        subagents: events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::SubagentStarted { .. }))
            .count(),
    }
}

/// What a scenario must amount to: the facts that differ from agent to agent.
pub struct Expected {
    pub tools: Vec<(ToolKind, ToolStatus, bool)>,
    pub outcome: Outcome,
    /// `None`: unknown, never counted as 0.
    pub tokens: Option<u64>,
    /// Whether the agent reports its model calls (Codex does not: its steps are unknown).
    pub steps_known: bool,
    pub cost: Option<f64>,
    pub cost_source: Option<CostSource>,
}

/// Checks `got` against `want`, and what holds for every agent: denials are the denied calls,
/// provider errors come with the provider-error scenario, subagents with the subagent one.
pub fn assert_facts(
    got: &Facts,
    want: &Expected,
    provider_error: bool,
    subagent: bool,
    what: &str,
) {
    assert_eq!(got.outcome, want.outcome, "{what}");
    assert_eq!(got.tools, want.tools, "{what}");
    assert_eq!(got.tokens, want.tokens, "{what}");
    assert_eq!(
        got.steps.is_some(),
        want.steps_known,
        "{what}: steps {:?}",
        got.steps
    );
    if want.steps_known && got.tokens.is_some_and(|t| t > 0) {
        assert!(
            got.steps.is_some_and(|n| n > 0),
            "{what}: tokens without a step"
        );
    }
    assert_eq!(got.cost_source, want.cost_source, "{what}");
    match (got.cost, want.cost) {
        (Some(a), Some(b)) => assert!((a - b).abs() < 1e-9, "{what}: cost {a} vs {b}"),
        (a, b) => assert_eq!(a, b, "{what}"),
    }
    let denied = got
        .tools
        .iter()
        .filter(|t| t.1 == ToolStatus::Denied)
        .count();
    assert_eq!(got.permission_denials, denied, "{what}");
    assert_eq!(got.provider_errors > 0, provider_error, "{what}");
    assert_eq!(got.subagents > 0, subagent, "{what}");
}

/// The recording of a scenario by an agent, in `fixtures/AGENT/`.
fn recording(agent: &str, scenario: Scenario) -> &'static str {
    use Scenario::*;
    match (agent, scenario) {
        ("opencode", Text) => "a_text",
        ("opencode", ReadEdit) => "b_read_edit",
        ("opencode", Shell) => "c_bash",
        ("opencode", ToolFail) => "d_tool_error",
        ("opencode", ProviderError) => "e1_http500",
        ("opencode", PermissionDenied) => "i1_permission_bash_ask",
        ("opencode", Subagent) => "h_task_subagent",
        (_, Multistep | Stall) => unreachable!("not recorded"),
        (_, Text) => "text",
        (_, ReadEdit) => "read_edit",
        (_, Shell) => "shell",
        (_, ToolFail) => "tool_fail",
        (_, ProviderError) => "http500",
        (_, PermissionDenied) => "permission_denied",
        (_, Subagent) => "subagent",
    }
}

/// The model the recordings were made with (Codex does not say; its cost is estimated).
const CODEX_MODEL: &str = "gpt-5.5";

fn replay(ctx: &TestContext, agent: &str, name: &str, extra: &[&str]) -> support::Outcome {
    let file = support::fixtures().join(format!("{agent}/{name}.stdout.ndjson"));
    let mut args = vec!["replay", "--instant", "--agent", agent];
    if agent == "codex" {
        args.extend(["-m", CODEX_MODEL]);
    }
    args.extend_from_slice(extra);
    args.push(file.to_str().expect("UTF-8 path"));
    let out = run(&mut ctx.runbook(&args), LIMIT);
    assert_eq!(out.code(), Some(0), "{agent}/{name}: {}", out.stderr);
    out
}

/// Tokens and cost as the raw transcript states them, read without the adapters.
fn transcript_totals(agent: &str, name: &str) -> (Option<u64>, Option<f64>, Option<CostSource>) {
    let path = support::fixtures().join(format!("{agent}/{name}.stdout.ndjson"));
    let text = std::fs::read_to_string(path).expect("read fixture");
    let lines: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let n = |v: &Value, key: &str| v.get(key).and_then(Value::as_u64).unwrap_or(0);
    match agent {
        "opencode" => {
            let steps: Vec<&Value> = lines
                .iter()
                .filter(|l| l["type"] == "step_finish")
                .map(|l| &l["part"])
                .collect();
            let tokens = steps
                .iter()
                .map(|p| {
                    let t = &p["tokens"];
                    n(t, "input")
                        + n(t, "output")
                        + n(t, "reasoning")
                        + n(&t["cache"], "read")
                        + n(&t["cache"], "write")
                })
                .sum();
            let cost: f64 = steps.iter().filter_map(|p| p["cost"].as_f64()).sum();
            let known = !steps.is_empty();
            (
                Some(tokens),
                known.then_some(cost),
                known.then_some(CostSource::Reported),
            )
        }
        "claude" => {
            let result = lines
                .iter()
                .find(|l| l["type"] == "result")
                .expect("a result line");
            let tokens = result["modelUsage"]
                .as_object()
                .map(|models| {
                    models
                        .values()
                        .map(|m| {
                            n(m, "inputTokens")
                                + n(m, "outputTokens")
                                + n(m, "cacheReadInputTokens")
                                + n(m, "cacheCreationInputTokens")
                        })
                        .sum()
                })
                .unwrap_or(0);
            let cost = result["total_cost_usd"].as_f64();
            (Some(tokens), cost, cost.map(|_| CostSource::Reported))
        }
        _ => match lines.iter().find(|l| l["type"] == "turn.completed") {
            Some(done) => {
                let u = &done["usage"];
                let (input, cached, output) = (
                    n(u, "input_tokens"),
                    n(u, "cached_input_tokens"),
                    n(u, "output_tokens"),
                );
                // gpt-5.5 list price: $5 input, $0.50 cached input, $30 output per million.
                let cost =
                    ((input - cached) as f64 * 5.0 + cached as f64 * 0.5 + output as f64 * 30.0)
                        / 1e6;
                (
                    Some(input + output + n(u, "cache_write_input_tokens")),
                    Some(cost),
                    Some(CostSource::Estimated),
                )
            }
            // Codex gives its usage only in `turn.completed`: without it, it is unknown.
            None => (None, None, None),
        },
    }
}

/// The tool calls each agent made in each recording, normalized.
fn expected_tools(agent: &str, scenario: Scenario) -> Vec<(ToolKind, ToolStatus, bool)> {
    use Scenario::*;
    use ToolKind as K;
    use ToolStatus::{Denied, Error, Ok};
    let calls: &[(ToolKind, ToolStatus, bool)] = match (agent, scenario) {
        (_, Text | ProviderError) => &[],
        // Codex reads with a shell command.
        ("codex", ReadEdit) => &[(K::Shell, Ok, false), (K::Edit, Ok, false)],
        (_, ReadEdit) => &[(K::Read, Ok, false), (K::Edit, Ok, false)],
        (_, Shell) => &[(K::Shell, Ok, false)],
        ("opencode", ToolFail) => &[(K::Read, Error, false)],
        ("claude", ToolFail) => &[
            (K::Read, Error, false),
            (K::Shell, Error, false),
            (K::Search, Error, false),
        ],
        // The failed patch and the unknown tool are known only from Codex's stderr.
        ("codex", ToolFail) => &[
            (K::Shell, Error, false),
            (K::Shell, Error, false),
            (K::Edit, Error, false),
            (K::Other, Error, false),
        ],
        ("opencode", PermissionDenied) => &[(K::Shell, Denied, false)],
        ("claude", PermissionDenied) => &[(K::Shell, Denied, false), (K::Write, Denied, false)],
        // The sandbox blocks `touch` without a trace; the rejected patch is on stderr.
        ("codex", PermissionDenied) => &[(K::Shell, Ok, false), (K::Edit, Denied, false)],
        ("opencode", Subagent) => &[(K::Subagent, Ok, false)],
        // Claude reports the subagent's own calls, attributed to it.
        ("claude", Subagent) => &[(K::Shell, Ok, true), (K::Subagent, Ok, false)],
        ("codex", Subagent) => &[(K::Subagent, Ok, false), (K::Subagent, Ok, false)],
        _ => unreachable!("{agent} {scenario:?} was not recorded"),
    };
    calls.to_vec()
}

fn expected_outcome(agent: &str, scenario: Scenario) -> Outcome {
    match (agent, scenario) {
        (_, Scenario::ProviderError) => Outcome::AgentError,
        // OpenCode stops at the denied call without a final answer.
        ("opencode", Scenario::PermissionDenied) => Outcome::Truncated,
        _ => Outcome::Completed,
    }
}

#[test]
fn every_recorded_scenario_yields_the_same_facts_for_every_agent() {
    use Scenario::*;
    let ctx = TestContext::new();
    for &scenario in RECORDED {
        for agent in AGENTS {
            let name = recording(agent, scenario);
            let out = replay(&ctx, agent, name, &["--json"]);
            let (events, receipt) = events_and_receipt(&out.stdout);
            let (tokens, cost, cost_source) = transcript_totals(agent, name);
            let want = Expected {
                tools: expected_tools(agent, scenario),
                outcome: expected_outcome(agent, scenario),
                tokens,
                steps_known: agent != "codex",
                cost,
                cost_source,
            };
            let what = format!("{agent} {scenario:?} ({name})");
            assert_facts(
                &facts(&events, &receipt),
                &want,
                scenario == ProviderError,
                scenario == Subagent,
                &what,
            );
        }
    }
}

#[test]
fn the_same_scenario_looks_the_same_in_the_terminal_whichever_agent_ran() {
    let ctx = TestContext::new();
    let mut columns = Vec::new();
    for agent in AGENTS {
        let out = replay(&ctx, agent, recording(agent, Scenario::ReadEdit), &[]);
        let lines: Vec<String> = out
            .stderr
            .lines()
            // The work dir differs from machine to machine.
            .map(|l| l.split(" · /").next().unwrap_or(l).to_owned())
            .collect();
        columns.push((agent, lines));
    }
    let width = 62;
    let mut side_by_side = String::new();
    let rows = columns.iter().map(|(_, l)| l.len()).max().unwrap_or(0);
    let cell = |text: &str| {
        let mut t: String = text.chars().take(width).collect();
        let pad = width.saturating_sub(t.chars().count());
        t.extend(std::iter::repeat_n(' ', pad));
        t
    };
    let header: Vec<String> = columns.iter().map(|(a, _)| cell(a)).collect();
    writeln!(side_by_side, "{}", header.join(" │ ").trim_end()).unwrap();
    for row in 0..rows {
        let cells: Vec<String> = columns
            .iter()
            .map(|(_, lines)| cell(lines.get(row).map_or("", String::as_str)))
            .collect();
        writeln!(side_by_side, "{}", cells.join(" │ ").trim_end()).unwrap();
    }
    insta::assert_snapshot!(side_by_side);
}
