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

/// Each Claude Code release the scenarios were recorded from, with its fixtures directory: the
/// pinned one and the newer one (see `runbook::agent::versions`).
const CLAUDE_RELEASES: [(&str, &str); 4] = [
    ("2.1.197", "claude"),
    ("2.1.330", "claude-2.1.330"),
    ("2.1.332", "claude-2.1.332"),
    ("2.1.337", "claude-2.1.337"),
];

/// Each Codex release the scenarios were recorded from, with its fixtures directory.
const CODEX_RELEASES: [(&str, &str); 2] = [("0.169.0", "codex"), ("0.171.0", "codex-0.171.0")];

/// What a Claude Code run's own lines say of it, read without the adapters: its last
/// `result`'s cost and tokens (cumulative), its model calls (each `result`'s `num_turns`, for
/// its own main-thread run; a provider error's counts the failed call), and the tokens and cost
/// of each model it used.
#[derive(Debug)]
pub struct ClaudeOwn {
    pub cost: Option<f64>,
    pub tokens: u64,
    pub steps: u32,
    /// Each model of the last `result`'s `modelUsage`: its tokens and Claude's `costUSD`.
    pub models: Vec<(String, runbook::event::Tokens, Option<f64>)>,
}

/// [`ClaudeOwn`] of Claude Code's stdout; `None` without a `result`.
pub fn claude_own(stdout: &str) -> Option<ClaudeOwn> {
    let results: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["type"] == "result")
        .collect();
    let last = results.last()?;
    let n = |v: &Value, key: &str| v.get(key).and_then(Value::as_u64).unwrap_or(0);
    let models: Vec<_> = last["modelUsage"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(model, m)| {
            let tokens = runbook::event::Tokens {
                input: n(m, "inputTokens"),
                output: n(m, "outputTokens"),
                reasoning: 0,
                cache_read: n(m, "cacheReadInputTokens"),
                cache_write: n(m, "cacheCreationInputTokens"),
            };
            (model.clone(), tokens, m["costUSD"].as_f64())
        })
        .collect();
    let steps = results
        .iter()
        .filter(|r| r["api_error_status"].is_null())
        .map(|r| n(r, "num_turns") as u32)
        .sum();
    Some(ClaudeOwn {
        cost: last["total_cost_usd"].as_f64(),
        tokens: models.iter().map(|(_, t, _)| t.total()).sum(),
        steps,
        models,
    })
}

/// Where runbook's price table disagrees with the cost Claude Code computed for a model from
/// its own bundled prices (`modelUsage.*.costUSD`): one line each; empty when they agree.
pub fn price_disagreements(own: &ClaudeOwn) -> Vec<String> {
    let table = runbook::prices::PriceTable::new(Default::default());
    own.models
        .iter()
        .filter_map(|(model, tokens, said)| {
            let said = (*said)?;
            match table.estimate(model, tokens) {
                Some(ours) if (ours - said).abs() < 1e-9 => None,
                Some(ours) => Some(format!(
                    "{model}: Claude Code computed ${said} for its tokens, runbook's price table ${ours:.6}"
                )),
                None => Some(format!("{model}: not in runbook's price table (Claude Code computed ${said})")),
            }
        })
        .collect()
}

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

/// The calls seen, but for the one difference the agent itself makes from run to run: Codex
/// 0.169.0 fails a command its read-only sandbox blocks, and tells it as a failed shell call in
/// some runs and not at all in others (the same binary against the same script). When only the
/// refused patch is expected, such a failed shell call before it is the sandbox's, read as Codex
/// told it; any other difference stays one.
fn sandbox_told(
    got: &[(ToolKind, ToolStatus, bool)],
    want: &[(ToolKind, ToolStatus, bool)],
) -> Vec<(ToolKind, ToolStatus, bool)> {
    let refused_patch = [(ToolKind::Edit, ToolStatus::Denied, false)];
    let told = [
        (ToolKind::Shell, ToolStatus::Error, false),
        refused_patch[0],
    ];
    if want == refused_patch && got == told {
        return refused_patch.to_vec();
    }
    got.to_vec()
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
    assert_eq!(sandbox_told(&got.tools, &want.tools), want.tools, "{what}");
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
    replay_from(ctx, agent, agent, name, extra)
}

/// [`replay`] of the recording in `fixtures/DIR/`.
fn replay_from(
    ctx: &TestContext,
    agent: &str,
    dir: &str,
    name: &str,
    extra: &[&str],
) -> support::Outcome {
    let file = support::fixtures().join(format!("{dir}/{name}.stdout.ndjson"));
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
    transcript_totals_in(agent, agent, name)
}

/// [`transcript_totals`] of the recording in `fixtures/DIR/`.
fn transcript_totals_in(
    agent: &str,
    dir: &str,
    name: &str,
) -> (Option<u64>, Option<f64>, Option<CostSource>) {
    let path = support::fixtures().join(format!("{dir}/{name}.stdout.ndjson"));
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
            // No step finished: nothing of the run's usage was told, so its tokens are unknown
            // as its cost is.
            let known = !steps.is_empty();
            (
                known.then_some(tokens),
                known.then_some(cost),
                known.then_some(CostSource::Reported),
            )
        }
        "claude" => {
            // Each `result` states the run's cumulative totals: the last one has them all.
            let result = lines
                .iter()
                .rfind(|l| l["type"] == "result")
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

#[test]
fn every_claude_code_release_yields_the_same_facts() {
    use Scenario::*;
    let ctx = TestContext::new();
    for (release, dir) in CLAUDE_RELEASES {
        for &scenario in RECORDED {
            let name = recording("claude", scenario);
            let out = replay_from(&ctx, "claude", dir, name, &["--json"]);
            let (events, receipt) = events_and_receipt(&out.stdout);
            let (tokens, cost, cost_source) = transcript_totals_in("claude", dir, name);
            let mut tools = expected_tools("claude", scenario);
            if dir != "claude" && scenario == ToolFail {
                // Recorded from the fake provider's script, which has no search step.
                tools.truncate(2);
            }
            let want = Expected {
                tools,
                outcome: expected_outcome("claude", scenario),
                tokens,
                steps_known: true,
                cost,
                cost_source,
            };
            let what = format!("Claude Code {release} {scenario:?}");
            let got = facts(&events, &receipt);
            assert_facts(
                &got,
                &want,
                scenario == ProviderError,
                scenario == Subagent,
                &what,
            );
            // The totals agree with the calls: a refused call is never also an error.
            let denied = got
                .tools
                .iter()
                .filter(|t| t.1 == ToolStatus::Denied)
                .count();
            let errors = got
                .tools
                .iter()
                .filter(|t| t.1 == ToolStatus::Error)
                .count();
            assert_eq!(receipt.tool_calls.denied as usize, denied, "{what}");
            assert_eq!(receipt.tool_calls.errors as usize, errors, "{what}");
            assert_eq!(
                receipt.unparsed_lines.count, 0,
                "{what}: {:?}",
                receipt.unparsed_lines
            );
            assert_eq!(receipt.after_final_word.model_calls, 0, "{what}");
            // The model Claude named in its first line is the receipt's.
            let model = receipt.model.as_deref().unwrap_or_default();
            assert!(model.starts_with("claude-"), "{what}: {model:?}");
            // The release's own word: its model calls, and its cost of each model is runbook's
            // price of the same tokens.
            let path = support::fixtures().join(format!("{dir}/{name}.stdout.ndjson"));
            let own = claude_own(&std::fs::read_to_string(path).unwrap()).expect("a result");
            assert_eq!(receipt.steps, Some(own.steps), "{what}: steps");
            assert_eq!(price_disagreements(&own), Vec::<String>::new(), "{what}");
        }
    }
}

#[test]
fn every_codex_release_yields_the_same_facts() {
    use Scenario::*;
    let ctx = TestContext::new();
    for (release, dir) in CODEX_RELEASES {
        for &scenario in RECORDED {
            let name = recording("codex", scenario);
            let out = replay_from(&ctx, "codex", dir, name, &["--json"]);
            let (events, receipt) = events_and_receipt(&out.stdout);
            let (tokens, cost, cost_source) = transcript_totals_in("codex", dir, name);
            let mut tools = expected_tools("codex", scenario);
            if dir != "codex" {
                // Recorded from the fake provider's scripts (tests/it/record.rs): a failing
                // command twice; the refused patch alone (the sandbox's blocked command is told
                // in some runs, as a failed call).
                match scenario {
                    ToolFail => tools.truncate(2),
                    PermissionDenied => tools.retain(|t| t.1 == ToolStatus::Denied),
                    _ => {}
                }
            }
            let want = Expected {
                tools,
                outcome: expected_outcome("codex", scenario),
                tokens,
                steps_known: false,
                cost,
                cost_source,
            };
            let what = format!("Codex {release} {scenario:?}");
            assert_facts(
                &facts(&events, &receipt),
                &want,
                scenario == ProviderError,
                scenario == Subagent,
                &what,
            );
            assert_eq!(
                receipt.unparsed_lines.count, 0,
                "{what}: {:?}",
                receipt.unparsed_lines
            );
        }
    }
}

/// Claude Code 2.1.332 and later say whether their own sandbox is on; the receipt keeps it, and
/// a release that does not say leaves it out.
#[test]
fn the_agents_own_sandbox_is_in_the_receipt_as_the_release_said_it() {
    let ctx = TestContext::new();
    for (release, dir) in CLAUDE_RELEASES {
        let out = replay_from(&ctx, "claude", dir, "text", &["--json"]);
        let (_, receipt) = events_and_receipt(&out.stdout);
        // From 2.1.332 on.
        let said = (!matches!(release, "2.1.197" | "2.1.330")).then_some(false);
        assert_eq!(receipt.agent_sandbox, said, "{release}");
        let json: Value = serde_json::from_str(out.stdout.lines().last().unwrap()).unwrap();
        assert_eq!(
            json.get("agent_sandbox").cloned(),
            said.map(Value::Bool),
            "{release}"
        );
    }
}

/// Both releases refuse the plan-mode Write, and the receipt says so without contradiction:
/// denied in its tally, listed among the denials, never counted as an error.
#[test]
fn a_write_refused_in_plan_mode_is_a_denial_in_every_release() {
    let ctx = TestContext::new();
    for (release, dir) in CLAUDE_RELEASES {
        let out = replay_from(&ctx, "claude", dir, "plan_denied", &["--json"]);
        let (_, receipt) = events_and_receipt(&out.stdout);
        assert_shell_and_write_denied(&receipt, release);
    }
}

/// Claude Code 2.1.337 ends a plan-mode run in which its auto mode could not check a shell
/// command as an error (`is_error` with `subtype: success`, exit 1), its reason in `errors`: the
/// run fails for that reason, not for the agent's last words, its refusals are still denials, and
/// 2.1.332, which ended the same run without error, still completes.
#[test]
fn a_release_failing_a_run_for_unchecked_actions_is_told_in_its_own_words() {
    let ctx = TestContext::new();
    let out = replay_from(&ctx, "claude", "claude-2.1.337", "plan_denied", &["--json"]);
    let (_, receipt) = events_and_receipt(&out.stdout);
    assert_eq!(receipt.outcome, Outcome::AgentError);
    assert!(
        receipt.message.contains(
            "Auto mode could not check some actions Claude tried, so they did not run: Bash"
        ),
        "{}",
        receipt.message
    );
    assert!(
        !receipt
            .message
            .contains("I was not allowed to run the tools"),
        "{}",
        receipt.message
    );
    assert!(
        receipt.provider_errors.is_empty(),
        "{:?}",
        receipt.provider_errors
    );
    assert_shell_and_write_denied(&receipt, "2.1.337");
    let out = replay_from(&ctx, "claude", "claude-2.1.332", "plan_denied", &["--json"]);
    assert_eq!(
        events_and_receipt(&out.stdout).1.outcome,
        Outcome::Completed
    );
}

/// The receipt of Claude Code refusing the permission scenario's shell command and Write (in
/// plan mode): the Write denied in its tally, both listed among the denials, no error counted.
pub fn assert_shell_and_write_denied(receipt: &Receipt, why: &str) {
    let write = &receipt.tool_calls.by_name["Write"];
    assert_eq!(
        (write.calls, write.errors, write.denied),
        (1, 0, 1),
        "{why}"
    );
    assert_eq!(receipt.tool_calls.denied, 2, "{why}");
    assert_eq!(receipt.tool_calls.errors, 0, "{why}");
    let listed: Vec<&str> = receipt
        .permission_denials
        .iter()
        .map(|d| d.tool.as_str())
        .collect();
    assert_eq!(listed, ["Bash", "Write"], "{why}");
}

/// Claude Code 2.1.330 runs the subagent in the background: it ends at its notification, after
/// its own call ran, and the run's two `result`s are one cumulative total, with one final text.
#[test]
fn a_background_subagent_ends_at_its_notification_and_results_are_not_summed() {
    let ctx = TestContext::new();
    let out = replay_from(&ctx, "claude", "claude-2.1.330", "subagent", &["--json"]);
    let (events, receipt) = events_and_receipt(&out.stdout);
    let position = |pred: &dyn Fn(&EventKind) -> bool| {
        events
            .iter()
            .position(|e| pred(&e.kind))
            .expect("the event is there")
    };
    let inner_call_done =
        position(&|k| matches!(k, EventKind::ToolCompleted(t) if t.call_id == "toolu_sub_ls"));
    let subagent_done = position(&|k| matches!(k, EventKind::SubagentFinished { .. }));
    assert!(
        inner_call_done < subagent_done,
        "the subagent ended before its own call"
    );
    match &events[subagent_done].kind {
        EventKind::SubagentFinished { message, .. } => assert_eq!(
            message.as_deref(),
            Some("Files: README.md (from the subagent).")
        ),
        _ => unreachable!(),
    }
    let results = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::AgentResult(_)))
        .count();
    assert_eq!(results, 2);
    // Both results say $0.05017 in all: the run cost that, not twice that.
    assert!(
        (receipt.cost.usd.unwrap() - 0.05017).abs() < 1e-9,
        "{:?}",
        receipt.cost
    );
    assert_eq!(receipt.outcome, Outcome::Completed);
    assert_eq!(receipt.after_final_word.model_calls, 0);
}

/// `runbook run` of a Claude Code recording, replayed by the fake agent with its own timing
/// (sped up `speed` times), from `dir` (a copy of a fixtures directory, or one of them).
fn run_recording(
    ctx: &TestContext,
    dir: &std::path::Path,
    name: &str,
    speed: &str,
    extra: &[&str],
) -> support::Outcome {
    let bin = support::fake_agent_bin();
    let mut args = vec![
        "run",
        "--agent",
        "claude",
        "--agent-bin",
        bin.to_str().expect("UTF-8 path"),
        "--json",
    ];
    args.extend_from_slice(extra);
    args.push("do the thing");
    let mut cmd = ctx.runbook(&args);
    cmd.env("FAKE_AGENT_REPLAY", dir.join(name))
        .env("FAKE_AGENT_SPEED", speed);
    run(&mut cmd, LIMIT)
}

#[test]
fn the_final_text_of_a_run_with_two_results_appears_once() {
    let ctx = TestContext::new();
    let dir = support::fixtures().join("claude-2.1.330");
    let out = run_recording(&ctx, &dir, "subagent", "0", &[]);
    let (_, receipt) = events_and_receipt(&out.stdout);
    assert_eq!(receipt.outcome, Outcome::Completed, "{}", out.stderr);
    // The answer of Claude's last main-thread run, as its last `result` states it, once.
    let summary = receipt.summary.expect("a summary");
    assert_eq!(summary.text, "done");
    assert!((receipt.cost.usd.unwrap() - 0.05017).abs() < 1e-9);
}

/// A `--max-cost` of $0.03 stops Claude Code 2.1.330's multi-step run mid-run, from the steps'
/// estimated costs, long before its own `result` (which says $0.064 for all six steps).
#[test]
fn a_budget_stops_claude_code_2_1_330_mid_run() {
    let ctx = TestContext::new();
    let dir = support::fixtures().join("claude-2.1.330");
    // At a sixth of its recorded pace, the budget is crossed about 0.3 s before the result.
    let out = run_recording(&ctx, &dir, "multistep", "0.15", &["--max-cost", "0.03"]);
    let (events, receipt) = events_and_receipt(&out.stdout);
    assert_eq!(receipt.outcome, Outcome::BudgetExceeded, "{}", out.stderr);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.kind, EventKind::AgentResult(_))),
        "stopped only after Claude's final result"
    );
    let steps: u32 = receipt.turns.iter().filter_map(|t| t.steps).sum();
    assert!((3..6).contains(&steps), "{steps} steps");
    assert_eq!(receipt.cost.source, Some(CostSource::Estimated));
    let cost = receipt.cost.known_usd;
    assert!((0.03..0.06).contains(&cost), "{cost}");
}

/// The same run on a model runbook does not know (the recording with its model renamed): it is
/// said at the start, priced at Anthropic's highest known price, and still stopped mid-run.
#[test]
fn a_budget_holds_for_a_model_missing_from_the_price_table() {
    let ctx = TestContext::new();
    let dir = ctx.home.join("recording");
    std::fs::create_dir_all(&dir).unwrap();
    let source = support::fixtures().join("claude-2.1.330");
    for ext in ["stdout.ndjson", "stderr.txt", "exit", "timing.ndjson"] {
        let text = std::fs::read_to_string(source.join(format!("multistep.{ext}"))).unwrap();
        let renamed = text.replace("claude-opus-5-5", "claude-opus-9-1");
        std::fs::write(dir.join(format!("multistep.{ext}")), renamed).unwrap();
    }
    let out = run_recording(&ctx, &dir, "multistep", "0.5", &["--max-cost", "0.03"]);
    let (events, receipt) = events_and_receipt(&out.stdout);
    assert_eq!(receipt.outcome, Outcome::BudgetExceeded, "{}", out.stderr);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.kind, EventKind::AgentResult(_)))
    );
    let announced = events
        .iter()
        .position(|e| {
            matches!(&e.kind, EventKind::ModelAnnounced { model, price }
                if model == "claude-opus-9-1" && *price == runbook::event::PriceBasis::Conservative)
        })
        .expect("the unknown model is announced");
    let first_step = events
        .iter()
        .position(|e| matches!(e.kind, EventKind::StepStarted { .. }))
        .expect("a step");
    assert!(announced < first_step, "said at the start of the run");
    assert_eq!(receipt.model.as_deref(), Some("claude-opus-9-1"));
    assert_eq!(receipt.cost.source, Some(CostSource::Conservative));
    // The first step alone costs more than $0.03 at that price.
    let steps: u32 = receipt.turns.iter().filter_map(|t| t.steps).sum();
    assert!(steps < 6, "{steps} steps");
    assert!(receipt.cost.known_usd > 0.03, "{:?}", receipt.cost);
    assert!(
        receipt
            .warnings
            .samples
            .iter()
            .any(|w| w.contains("claude-opus-9-1 is not in runbook's price table")),
        "{:?}",
        receipt.warnings
    );
    // On the terminal: one warning line, before the first tool call.
    let bin = support::fake_agent_bin();
    let mut cmd = ctx.runbook(&[
        "run",
        "--agent",
        "claude",
        "--agent-bin",
        bin.to_str().expect("UTF-8 path"),
        "--max-cost",
        "0.03",
        "do the thing",
    ]);
    cmd.env("FAKE_AGENT_REPLAY", dir.join("multistep"))
        .env("FAKE_AGENT_SPEED", "0.5")
        .env("NO_COLOR", "1");
    let out = run(&mut cmd, LIMIT);
    let lines: Vec<&str> = out.stderr.lines().collect();
    let warned: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains("claude-opus-9-1 is not in runbook's price table"))
        .collect();
    assert_eq!(warned.len(), 1, "{}", out.stderr);
    let first_call = lines.iter().position(|l| l.contains("echo step-1"));
    assert!(first_call.is_none_or(|c| warned[0] < c), "{}", out.stderr);
}

/// A newer Claude Code's line of a kind runbook does not know is kept and counted, never dropped
/// or called unreadable; printed every second, it is shown a few times, then only counted.
#[test]
fn lines_of_a_new_kind_are_counted_and_shown_a_few_times() {
    let ctx = TestContext::new();
    let source = support::fixtures().join("claude-2.1.330/text.stdout.ndjson");
    let mut text = std::fs::read_to_string(source).unwrap();
    let (init, rest) = text.split_once('\n').unwrap();
    let heartbeat = r#"{"type":"system","subtype":"heartbeat","n":1,"session_id":"s"}"#;
    text = format!("{init}\n{}{rest}", format!("{heartbeat}\n").repeat(8));
    let file = ctx.home.join("heartbeat.stdout.ndjson");
    std::fs::write(&file, text).unwrap();
    let path = file.to_str().unwrap();
    let out = run(
        &mut ctx.runbook(&["replay", "--instant", "--agent", "claude", path]),
        LIMIT,
    );
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    let shown = out
        .stderr
        .matches("output of a kind runbook does not know")
        .count();
    assert_eq!(shown, 5, "{}", out.stderr);
    assert_eq!(
        out.stderr
            .matches("more lines runbook does not know")
            .count(),
        1
    );
    assert!(
        !out.stderr.contains("unreadable output line"),
        "{}",
        out.stderr
    );
    let out = run(
        &mut ctx.runbook(&["replay", "--instant", "--json", "--agent", "claude", path]),
        LIMIT,
    );
    let (_, receipt) = events_and_receipt(&out.stdout);
    assert_eq!(receipt.unparsed_lines.count, 8);
    assert_eq!(receipt.outcome, Outcome::Completed);
}

/// A release's own word, read from its lines: Claude Code's model calls are its results'
/// `num_turns` (a provider error's left out), and a cost it computes otherwise than runbook's
/// table (another price in its catalog, or a model runbook lacks) is told, model by model.
#[test]
fn a_release_pricing_a_model_otherwise_than_runbooks_table_is_told() {
    let read = |name: &str| {
        let path = support::fixtures().join(format!("claude-2.1.332/{name}.stdout.ndjson"));
        std::fs::read_to_string(path).unwrap()
    };
    let steps = |name: &str| claude_own(&read(name)).expect("a result").steps;
    assert_eq!(
        (steps("text"), steps("subagent"), steps("http500")),
        (1, 3, 0)
    );
    let text = read("text");
    let own = claude_own(&text).unwrap();
    assert!(
        own.cost.is_some_and(|c| (c - 0.0068).abs() < 1e-12),
        "{own:?}"
    );
    assert_eq!(own.tokens, 1525);
    assert!(price_disagreements(&own).is_empty());
    // The same tokens at 2.1.197's price of its default model: told, with both amounts.
    let repriced = text.replace(r#""costUSD":0.006799999999999999"#, r#""costUSD":0.0085"#);
    let told = price_disagreements(&claude_own(&repriced).unwrap());
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(
        told[0].starts_with("claude-opus-5-5: Claude Code computed $0.0085"),
        "{told:?}"
    );
    assert!(told[0].contains("$0.006800"), "{told:?}");
    let unknown = text.replace("claude-opus-5-5", "claude-opus-9-9");
    let told = price_disagreements(&claude_own(&unknown).unwrap());
    assert_eq!(
        told,
        [
            "claude-opus-9-9: not in runbook's price table (Claude Code computed $0.006799999999999999)"
        ]
    );
}

/// Claude Code 2.1.332's raw API stream (`--include-partial-messages`, as runbook runs it) has
/// fields 2.1.197's had not (`api_message_id`, `thinking_display` in its `stream_event`s,
/// `begun_message_ids` in its `result`), and 2.1.337's the time each line was written
/// (`written_at`): read to the same receipt as the plain stream, nothing unread.
#[test]
fn claude_code_2_1_332s_raw_stream_reads_as_its_plain_stream() {
    let ctx = TestContext::new();
    let runs = ["claude-2.1.332", "claude-2.1.337"]
        .into_iter()
        .flat_map(|dir| {
            [("text_partial", "text"), ("subagent_partial", "subagent")].map(|(a, b)| (dir, a, b))
        });
    for (dir, partial, plain) in runs {
        let fields = std::fs::read_to_string(
            support::fixtures().join(format!("{dir}/{partial}.stdout.ndjson")),
        )
        .unwrap();
        for field in ["api_message_id", "begun_message_ids", "sandbox_enabled"] {
            assert!(fields.contains(field), "{dir}/{partial} lacks {field}");
        }
        let receipt = |name: &str| {
            let out = replay_from(&ctx, "claude", dir, name, &["--json"]);
            events_and_receipt(&out.stdout).1
        };
        let (a, b) = (receipt(partial), receipt(plain));
        assert_eq!(
            a.unparsed_lines.count, 0,
            "{dir}/{partial}: {:?}",
            a.unparsed_lines
        );
        assert_eq!(a.outcome, b.outcome, "{dir}/{partial}");
        assert_eq!(a.steps, b.steps, "{dir}/{partial}");
        assert_eq!(a.tokens.total, b.tokens.total, "{dir}/{partial}");
        assert_eq!(a.cost.usd, b.cost.usd, "{dir}/{partial}");
        assert_eq!(a.tool_calls.total, b.tool_calls.total, "{dir}/{partial}");
        assert_eq!(a.agent_sandbox, Some(false), "{dir}/{partial}");
    }
}
