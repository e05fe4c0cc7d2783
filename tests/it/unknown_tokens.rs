//! Tokens no agent reported are unknown wherever a person reads them, as the cost is: a run that
//! hung before its first step shows `? tokens · $?` while it runs, `tokens unknown` at its end,
//! in `status` and in `stats`, never `0`.

use crate::support::TestContext;
use crate::support::pty::Pty;

#[test]
fn a_run_that_hung_before_its_first_step_has_its_tokens_unknown_everywhere() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script("hangs", "sleep 100");
    let mut cmd = ctx.runbook(&[
        "run",
        "--agent-cmd",
        &agent,
        "--inactivity-timeout",
        "3s",
        "fix the flaky test",
    ]);
    cmd.env("TERM", "xterm-256color");
    let pty = Pty::spawn(cmd, 100);
    let live = pty.wait_for("step 0");
    assert!(
        live.has_row(|r| r.contains("step 0 · ? tokens · $?")),
        "{}",
        live.text()
    );
    let (_, end) = pty.finish();
    assert!(
        end.has_row(|r| r.contains("✗ hung after") && r.contains("· tokens unknown · cost unknown")),
        "{}",
        end.text()
    );

    let status = ctx.run(&["status"]);
    assert!(
        status.stdout.lines().any(|l| l == "tokens    unknown"),
        "{}",
        status.stdout
    );
    let stats = ctx.run(&["stats"]);
    assert!(
        stats.stdout.lines().any(|l| l == "tokens    unknown"),
        "{}",
        stats.stdout
    );
    let json = ctx.run(&["stats", "--json"]);
    let figures: serde_json::Value = serde_json::from_str(json.stdout.trim()).expect("JSON");
    assert_eq!(figures["tokens"]["incomplete"], true, "{figures}");
}

#[test]
fn each_turn_that_reported_no_usage_has_its_tokens_unknown_in_status() {
    let ctx = TestContext::new();
    // Plans, then carries the plan out; never says what it used.
    let agent = ctx.agent_script(
        "planner",
        "printf '%s\\n' '{\"type\":\"session.started\",\"session_id\":\"s-1\"}' '{\"type\":\"text\",\"text\":\"# Plan\"}' '{\"type\":\"agent.result\",\"ok\":true}'",
    );
    let out = ctx.run(&["run", "--agent-cmd", &agent, "--plan", "do it"]);
    out.assert_exit(0);
    let status = ctx.run(&["status"]);
    let turns = status
        .stdout
        .lines()
        .find(|l| l.starts_with("turns "))
        .unwrap_or_else(|| panic!("no turns row:\n{}", status.stdout));
    assert_eq!(turns.matches("tokens unknown").count(), 2, "{turns}");
    assert!(!turns.contains("0 tokens"), "{turns}");
}
