//! Fault matrix, budgets and bounds: costs an agent reports that cannot be used (negative, beyond
//! any number, of the wrong type), streams of millions of small lines, work after the agent's final
//! word, and the watchdog at short timeouts. One test per row, each through the real binary.

use std::process::Stdio;
use std::time::{Duration, Instant};

use runbook::event::{CostIssue, EventKind, Late, Outcome};

use runbook::receipt::Receipt;

use crate::support::{Outcome as Ran, TestContext, events_and_receipt, finish};

// OpenCode lines, trimmed to what the adapter reads.
const OC_START: &str = r#"{"type":"step_start","sessionID":"ses_b","part":{"messageID":"msg_1"}}"#;
const OC_TEXT: &str = r#"{"type":"text","sessionID":"ses_b","part":{"text":"All done."}}"#;
const OC_BASH: &str = r#"{"type":"tool_use","sessionID":"ses_b","part":{"tool":"bash","callID":"call_late","state":{"status":"completed","input":{"command":"rm -rf build"},"output":"","metadata":{"exit":0}}}}"#;

/// An OpenCode `step_finish` of 1,000 input and 10 output tokens, its `cost` spelled as given.
fn oc_finish(reason: &str, cost: &str) -> String {
    format!(
        r#"{{"type":"step_finish","sessionID":"ses_b","part":{{"messageID":"msg_1","reason":"{reason}","tokens":{{"input":1000,"output":10,"reasoning":0,"cache":{{"read":0,"write":0}}}},"cost":{cost}}}}}"#
    )
}

/// One OpenCode step costing `cost`, asking for more.
fn oc_step(cost: &str) -> String {
    [OC_START, &oc_finish("tool-calls", cost)].join("\n")
}

/// Claude Code: the init, one answer, and its result with `total_cost_usd` spelled as given.
fn claude_turn(total_cost: &str) -> String {
    [
        r#"{"type":"system","subtype":"init","cwd":"/w","session_id":"s-1","model":"claude-sonnet-4-5"}"#,
        r#"{"type":"assistant","session_id":"s-1","message":{"id":"msg_1","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Done."}],"usage":{"input_tokens":1000,"output_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}}"#,
        &format!(
            r#"{{"type":"result","subtype":"success","is_error":false,"session_id":"s-1","result":"Done.","total_cost_usd":{total_cost},"usage":{{"input_tokens":1000,"output_tokens":10}},"modelUsage":{{"claude-sonnet-4-5":{{"inputTokens":1000,"outputTokens":10,"cacheReadInputTokens":0,"cacheCreationInputTokens":0}}}}}}"#
        ),
    ]
    .join("\n")
}

/// Codex: a thread, an answer, and `turn.completed` with the usage given.
fn codex_turn(usage: &str) -> String {
    [
        r#"{"type":"thread.started","thread_id":"t-1"}"#,
        r#"{"type":"turn.started"}"#,
        r#"{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Done."}}"#,
        &format!(r#"{{"type":"turn.completed","usage":{usage}}}"#),
    ]
    .join("\n")
}

fn approx(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// The `cost_rejected` of each `step.finished` and `agent.result`, in order.
fn rejections(ctx: &TestContext) -> Vec<Option<CostIssue>> {
    ctx.events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::StepFinished(s) => Some(s.cost_rejected),
            EventKind::AgentResult(r) => Some(r.cost_rejected),
            _ => None,
        })
        .collect()
}

// ------------------------------------------------------------------------------------ costs

#[test]
fn a_negative_step_cost_never_lowers_the_total() {
    let ctx = TestContext::new();
    let scenario = [
        oc_step("0.5"),
        oc_step("-0.45"),
        OC_START.to_owned(),
        OC_TEXT.to_owned(),
        oc_finish("stop", "0.01"),
    ]
    .join("\n");
    // No model, so no price to estimate the negative step from: the total is incomplete.
    let out = ctx.run_fake(&scenario, &[]);
    out.assert_exit(0);
    let r = ctx.ended_as(Outcome::Completed);
    assert_eq!(r.steps, Some(3), "the negative step is counted");
    assert_eq!(r.tokens.input, 3000);
    assert_eq!(r.cost.usd, None, "a total with an unknown part is unknown");
    assert!(r.cost.incomplete);
    assert_eq!(r.cost.rejected, 1);
    assert!(approx(r.cost.known_usd, 0.51), "{}", r.cost.known_usd);
    assert!(
        r.warnings.samples[0].starts_with("step 2: the agent reported a negative cost"),
        "{:?}",
        r.warnings
    );
    assert_eq!(rejections(&ctx), [None, Some(CostIssue::Negative), None]);
    out.assert_stderr_has("⚠ step 2: the agent reported a negative cost")
        .assert_stderr_has("cost incomplete (at least $0.5100)");

    // `--json` says so in the event and in the receipt.
    let ctx = TestContext::new();
    let out = ctx.run_fake(&scenario, &["--json"]);
    out.assert_exit(0);
    let (events, r) = events_and_receipt(&out.stdout);
    assert!(events.iter().any(|e| matches!(
        &e.kind,
        EventKind::StepFinished(s) if s.cost_rejected == Some(CostIssue::Negative)
    )));
    assert!(r.cost.incomplete && r.cost.usd.is_none(), "{:?}", r.cost);

    // With a model that has a price, the step is priced from its tokens instead.
    let ctx = TestContext::new();
    let out = ctx.run_fake(&scenario, &["--model", "anthropic/claude-sonnet-4-5"]);
    out.assert_exit(0);
    let r = ctx.ended_as(Outcome::Completed);
    let estimate = (1000.0 * 3.0 + 10.0 * 15.0) / 1e6;
    assert!(approx(r.cost.usd.unwrap(), 0.51 + estimate), "{:?}", r.cost);
    assert!(!r.cost.incomplete);
    out.assert_stderr_has("runbook counted $0.0032 instead, estimated from the tokens");
}

#[test]
fn a_step_cost_that_is_a_string_is_counted_not_dropped() {
    let ctx = TestContext::new();
    let scenario = [
        oc_step(r#""0.30""#),
        OC_START.to_owned(),
        oc_finish("stop", r#"{"usd":1}"#),
    ]
    .join("\n");
    let out = ctx.run_fake(&scenario, &[]);
    out.assert_exit(0);
    let r = ctx.ended_as(Outcome::Completed);
    assert_eq!(r.unparsed_lines.count, 0, "the lines were read");
    assert_eq!((r.steps, r.tokens.total), (Some(2), 2020));
    assert_eq!(
        (r.cost.usd, r.cost.incomplete, r.cost.rejected),
        (None, true, 2)
    );
    assert_eq!(
        rejections(&ctx),
        [Some(CostIssue::Unreadable), Some(CostIssue::Unreadable)]
    );
    out.assert_stderr_has("step 1: the agent reported a cost that is not a number")
        .assert_stderr_has("cost unknown");
}

/// A run with `--max-cost 5` whose second step reports `cost` and which then hangs: it must be
/// stopped over the budget (exit 4).
fn budgeted_run_whose_second_step_costs(cost: &str) -> (TestContext, Ran, Receipt) {
    let ctx = TestContext::new();
    let scenario = [
        oc_step("0.01"),
        oc_step(cost),
        r#"{"$hang":true}"#.to_owned(),
    ]
    .join("\n");
    let out = ctx.run_fake(
        &scenario,
        &["--max-cost", "5", "--inactivity-timeout", "1m"],
    );
    out.assert_exit(4);
    let r = ctx.ended_as(Outcome::BudgetExceeded);
    (ctx, out, r)
}

#[test]
fn a_step_cost_beyond_any_number_keeps_its_tokens_and_stops_a_budgeted_run() {
    let (ctx, out, r) = budgeted_run_whose_second_step_costs("1e400");
    assert!(r.message.contains("an infinite cost"), "{}", r.message);
    assert!(r.message.contains("--max-cost $5.00"), "{}", r.message);
    assert_eq!(
        (r.steps, r.tokens.total),
        (Some(2), 2020),
        "the step's tokens count"
    );
    assert!(r.cost.incomplete);
    assert_eq!(rejections(&ctx), [None, Some(CostIssue::Infinite)]);
    out.assert_stderr_has("stopping the agent: the agent reported an infinite cost");
    ctx.assert_agent_gone();
}

#[test]
fn an_unreadable_step_cost_without_a_price_stops_a_budgeted_run() {
    let (ctx, _, r) = budgeted_run_whose_second_step_costs("\"lots\"");
    assert!(
        r.message
            .contains("a cost that is not a number and the model has no price"),
        "{}",
        r.message
    );
    ctx.assert_agent_gone();
}

#[test]
fn a_negative_step_cost_does_not_hide_spending_from_the_budget() {
    let ctx = TestContext::new();
    // 0.06 + 0.06 crosses 0.10; a step of -0.05 in between must not pull it back under.
    let scenario = [
        oc_step("0.06"),
        oc_step("-0.05"),
        oc_step("0.06"),
        r#"{"$hang":true}"#.to_owned(),
    ]
    .join("\n");
    let out = ctx.run_fake(
        &scenario,
        &[
            "--max-cost",
            "0.10",
            "--model",
            "anthropic/claude-sonnet-4-5",
            "--inactivity-timeout",
            "1m",
        ],
    );
    out.assert_exit(4);
    let r = ctx.ended_as(Outcome::BudgetExceeded);
    assert!(
        r.message.contains("crossed --max-cost $0.10"),
        "{}",
        r.message
    );
    assert!(r.cost.known_usd > 0.12, "{:?}", r.cost);
}

#[test]
fn claude_result_cost_that_cannot_be_read_is_estimated_and_the_result_still_counts() {
    let ctx = TestContext::new();
    let out = ctx.run_fake(&claude_turn(r#""0.0031""#), &["--agent", "claude"]);
    out.assert_exit(0);
    let r = ctx.ended_as(Outcome::Completed);
    assert_eq!(r.unparsed_lines.count, 0);
    let estimate = (1000.0 * 3.0 + 10.0 * 15.0) / 1e6;
    assert!(approx(r.cost.usd.unwrap(), estimate), "{:?}", r.cost);
    assert_eq!(r.cost.rejected, 1);
    assert_eq!(
        rejections(&ctx).last(),
        Some(&Some(CostIssue::Unreadable)),
        "the result says why its cost was not used"
    );
    out.assert_stderr_has("the agent's result: the agent reported a cost that is not a number");

    // Beyond any number: the same, and still the final word.
    let ctx = TestContext::new();
    ctx.run_fake(&claude_turn("1e400"), &["--agent", "claude"])
        .assert_exit(0);
    let r = ctx.ended_as(Outcome::Completed);
    assert!(approx(r.cost.usd.unwrap(), estimate), "{:?}", r.cost);
}

#[test]
fn codex_token_counts_of_the_wrong_type_keep_the_turn_and_make_its_cost_incomplete() {
    let ctx = TestContext::new();
    let usage = r#"{"input_tokens":"2700","cached_input_tokens":1500,"output_tokens":55,"reasoning_output_tokens":0}"#;
    let out = ctx.run_fake(
        &codex_turn(usage),
        &["--agent", "codex", "--model", "gpt-5.5"],
    );
    out.assert_exit(0);
    let r = ctx.ended_as(Outcome::Completed);
    assert_eq!(r.unparsed_lines.count, 0, "turn.completed was read");
    assert_eq!((r.tokens.cache_read, r.tokens.output), (1500, 55));
    assert_eq!(
        r.cost.usd, None,
        "no estimate from tokens that could not all be read"
    );
    assert!(r.cost.incomplete);
    assert!(
        r.warnings
            .samples
            .iter()
            .any(|w| w.contains("a token count the agent reported is not a whole number")),
        "{:?}",
        r.warnings
    );
}

// ----------------------------------------------------------------------------------- memory

/// Runs `runbook` on `scenario` to its end, reading its peak RSS (VmHWM, which only grows) from
/// /proc while it runs; returns the outcome and the last reading, in KiB.
fn run_measured(ctx: &TestContext, scenario: &str) -> (crate::support::Outcome, u64) {
    let mut cmd = ctx.fake_run(scenario, &["--inactivity-timeout", "1m"]);
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn runbook");
    let pid = child.id();
    let watch = std::thread::spawn(move || {
        let mut peak = 0;
        let until = Instant::now() + Duration::from_secs(120);
        while let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            if status.contains("State:\tZ") || Instant::now() > until {
                break;
            }
            if let Some(kib) = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak = peak.max(kib);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        peak
    });
    let out = finish(child, Duration::from_secs(120));
    (out, watch.join().expect("the watcher"))
}

/// Far above what runbook needs (about 20 MiB in a debug build), far below what keeping every
/// line cost (hundreds of MiB for these streams).
const GENEROUS_KIB: u64 = 64 * 1024;

fn repeated(line: &str, times: u32, stream: &str) -> String {
    let directive =
        serde_json::json!({"$repeat": {"line": line, "times": times, "stream": stream}});
    [
        OC_START.to_owned(),
        directive.to_string(),
        oc_finish("stop", "0.01"),
    ]
    .join("\n")
}

#[test]
fn half_a_million_junk_lines_are_counted_with_bounded_examples_in_bounded_memory() {
    let ctx = TestContext::new();
    let (out, peak) = run_measured(&ctx, &repeated("x", 500_000, "stdout"));
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    let r = ctx.ended_as(Outcome::Completed);
    assert_eq!(r.unparsed_lines.count, 500_000);
    assert_eq!(
        r.unparsed_lines.samples.len(),
        20,
        "examples are kept, not every line"
    );
    assert!(peak < GENEROUS_KIB, "peak RSS {peak} KiB");
}

#[test]
fn half_a_million_stderr_lines_are_counted_with_a_bounded_tail_in_bounded_memory() {
    let ctx = TestContext::new();
    let (out, peak) = run_measured(&ctx, &repeated("w", 500_000, "stderr"));
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    let r = ctx.ended_as(Outcome::Completed);
    assert_eq!(r.stderr.lines, 500_000);
    assert_eq!(r.stderr.tail.len(), 10);
    assert!(peak < GENEROUS_KIB, "peak RSS {peak} KiB");
}

#[test]
fn half_a_million_text_events_pass_through_in_bounded_memory() {
    let ctx = TestContext::new();
    let text =
        serde_json::json!({"type": "text", "part": {"text": "a piece of the answer ".repeat(4)}});
    let (out, peak) = run_measured(&ctx, &repeated(&text.to_string(), 500_000, "stdout"));
    assert_eq!(out.code(), Some(0), "{}", out.stderr);
    ctx.ended_as(Outcome::Completed);
    let log = std::fs::read_to_string(ctx.run_dir().join("events.ndjson")).expect("the log");
    let texts = log
        .lines()
        .filter(|l| l.contains(r#""type":"text""#))
        .count();
    assert_eq!(texts, 500_000, "every text event is logged");
    assert!(peak < GENEROUS_KIB, "peak RSS {peak} KiB");
}

// ------------------------------------------------------------------------- after the final word

/// The `after_final_word` events of the run.
fn late(ctx: &TestContext) -> Vec<(Late, String)> {
    ctx.events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::AfterFinalWord { what, detail } => Some((what, detail)),
            _ => None,
        })
        .collect()
}

#[test]
fn opencode_tool_call_after_its_final_step_is_counted_shown_and_fails_the_run() {
    let ctx = TestContext::new();
    let scenario = [OC_START, OC_TEXT, &oc_finish("stop", "0.01"), OC_BASH].join("\n");
    let out = ctx.run_fake(&scenario, &[]);
    out.assert_exit(1);
    let r = ctx.ended_as(Outcome::AgentError);
    assert!(
        r.message
            .contains("went on working after its final word: a tool call (bash rm -rf build)"),
        "{}",
        r.message
    );
    assert_eq!(r.tool_calls.total, 1, "the late call is counted");
    assert_eq!(r.after_final_word.tool_calls, 1);
    assert_eq!(late(&ctx), [(Late::Tool, "bash rm -rf build".to_owned())]);
    assert_eq!(r.warnings.count, 1);
    out.assert_stderr_has(
        "⚠ after its final word the agent went on: a tool call (bash rm -rf build)",
    )
    .assert_stderr_has("✓ bash rm -rf build");
}

#[test]
fn claude_tool_call_after_its_result_is_counted_with_its_tokens_and_fails_the_run() {
    let ctx = TestContext::new();
    let scenario = [
        claude_turn("0.0031").as_str(),
        r#"{"type":"assistant","session_id":"s-1","message":{"id":"msg_2","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_9","name":"Bash","input":{"command":"rm -rf build"}}],"usage":{"input_tokens":2000,"output_tokens":5}}}"#,
        r#"{"type":"user","session_id":"s-1","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"ok"}]}}"#,
    ]
    .join("\n");
    let out = ctx.run_fake(&scenario, &["--agent", "claude"]);
    out.assert_exit(1);
    let r = ctx.ended_as(Outcome::AgentError);
    assert!(
        r.message.contains("went on working after its final word"),
        "{}",
        r.message
    );
    assert_eq!((r.tool_calls.total, r.steps), (1, Some(2)));
    assert_eq!(r.tokens.input, 3000, "the late model call's tokens count");
    assert!(
        r.cost.usd.unwrap() > 0.0031,
        "and so does its cost: {:?}",
        r.cost
    );
    assert_eq!(
        late(&ctx),
        [
            (Late::Step, String::new()),
            (Late::Tool, "Bash rm -rf build".to_owned())
        ]
    );
    out.assert_stderr_has(
        "⚠ after its final word the agent went on: a tool call (Bash rm -rf build)",
    );
}

#[test]
fn codex_command_after_turn_completed_is_counted_shown_and_fails_the_run() {
    let ctx = TestContext::new();
    let usage = r#"{"input_tokens":2700,"cached_input_tokens":1500,"output_tokens":55,"reasoning_output_tokens":0}"#;
    let scenario = [
        codex_turn(usage).as_str(),
        r#"{"type":"item.started","item":{"id":"item_5","type":"command_execution","command":"/bin/bash -lc 'rm -rf build'","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#,
        r#"{"type":"item.completed","item":{"id":"item_5","type":"command_execution","command":"/bin/bash -lc 'rm -rf build'","aggregated_output":"","exit_code":0,"status":"completed"}}"#,
    ]
    .join("\n");
    let out = ctx.run_fake(&scenario, &["--agent", "codex", "--model", "gpt-5.5"]);
    out.assert_exit(1);
    let r = ctx.ended_as(Outcome::AgentError);
    assert!(
        r.message.contains("a tool call (shell rm -rf build)"),
        "{}",
        r.message
    );
    assert_eq!(r.tool_calls.total, 1);
    assert_eq!(
        late(&ctx),
        [(Late::Tool, "shell rm -rf build".to_owned())],
        "one call, marked once"
    );
    out.assert_stderr_has(
        "⚠ after its final word the agent went on: a tool call (shell rm -rf build)",
    );
}

#[test]
fn trailing_text_after_the_final_word_leaves_the_run_completed_with_a_warning() {
    let ctx = TestContext::new();
    let trailing = r#"{"type":"item.completed","item":{"id":"item_7","type":"agent_message","text":"One more thing."}}"#;
    let usage = r#"{"input_tokens":100,"cached_input_tokens":0,"output_tokens":5,"reasoning_output_tokens":0}"#;
    let scenario = [codex_turn(usage).as_str(), trailing, trailing].join("\n");
    let out = ctx.run_fake(&scenario, &["--agent", "codex", "--model", "gpt-5.5"]);
    out.assert_exit(0);
    let r = ctx.ended_as(Outcome::Completed);
    assert_eq!(r.after_final_word.texts, 1, "trailing text is marked once");
    assert_eq!(
        r.warnings.samples,
        ["after its final word the agent went on: text"]
    );
    out.assert_stderr_has("One more thing.");
}

// --------------------------------------------------------------------------------- watchdog

#[test]
fn a_busy_silent_agent_at_a_short_timeout_gets_no_watchdog_warning() {
    let ctx = TestContext::new();
    let scenario = [
        OC_START,
        // Four threads: on a loaded machine one may get less than the watchdog's 20% of a core.
        r#"{"$burn_cpu_threads":{"threads":4,"wall_ms":4000}}"#,
        OC_TEXT,
        &oc_finish("stop", "0.01"),
    ]
    .join("\n");
    let out = ctx.run_fake(&scenario, &["--inactivity-timeout", "2s"]);
    out.assert_exit(0);
    ctx.ended_as(Outcome::Completed);
    let warnings = ctx
        .events()
        .into_iter()
        .filter(|e| matches!(e.kind, EventKind::WatchdogWarning { .. }))
        .count();
    assert_eq!(warnings, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("no activity"), "{}", out.stderr);
}

#[test]
fn step_costs_of_1e308_are_implausible_and_never_sum_to_infinity() {
    let ctx = TestContext::new();
    let scenario = [
        oc_step("1e308"),
        oc_step("1e308"),
        OC_START.to_owned(),
        oc_finish("stop", "0.01"),
    ]
    .join("\n");
    let out = ctx.run_fake(&scenario, &[]);
    out.assert_exit(0);
    let r = ctx.ended_as(Outcome::Completed);
    assert_eq!(
        (r.cost.usd, r.cost.incomplete, r.cost.rejected),
        (None, true, 2)
    );
    assert!(
        r.cost.known_usd.is_finite() && r.cost.known_usd < 1.0,
        "{:?}",
        r.cost
    );
    assert_eq!(
        rejections(&ctx),
        [Some(CostIssue::Infinite), Some(CostIssue::Infinite), None]
    );
    let receipt = std::fs::read_to_string(ctx.run_dir().join("result.json")).unwrap();
    assert!(
        !receipt.contains("e308") && !receipt.contains("$inf"),
        "{receipt}"
    );
    out.assert_stderr_has("cost incomplete (at least $0.0100)");
    assert!(!out.stderr.contains("$inf"), "{}", out.stderr);
    out.assert_stderr_has("the agent reported an infinite cost (a number beyond any amount, or above $1e6 for one run)");
}
