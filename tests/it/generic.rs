//! `--agent-cmd` agents that print runbook's universal events, and what every adapter shares
//! through them: turns that resume the same session (`--then`), an agent that lingers after its
//! final result, and refusals before anything starts.

use std::time::Duration;

use runbook::event::{EventKind, Outcome, TurnKind};

use crate::support::{TestContext, run, types};

const LIMIT: Duration = Duration::from_secs(30);

/// Answers with the prompt it got and the session it was asked to continue, then finishes.
const ECHO_AGENT: &str = r#"
session="${RUNBOOK_RESUME_SESSION:-sess-1}"
prompt="$(eval echo \${$#})"
echo "{\"type\":\"session.started\",\"session_id\":\"$session\"}"
echo "{\"type\":\"tool.started\",\"call_id\":\"c1\",\"name\":\"bash\",\"kind\":\"shell\",\"input\":\"ls\"}"
echo "{\"type\":\"tool.completed\",\"call_id\":\"c1\",\"name\":\"bash\",\"kind\":\"shell\",\"input\":\"ls\",\"status\":\"ok\"}"
echo "{\"type\":\"text\",\"text\":\"got [$prompt] resuming [${RUNBOOK_RESUME_SESSION:-none}]\"}"
echo "{\"type\":\"agent.result\",\"ok\":true,\"tokens\":{\"input\":100,\"output\":10,\"reasoning\":0,\"cache_read\":0,\"cache_write\":0},\"cost_usd\":0.5,\"cost_source\":\"reported\"}"
"#;

#[test]
fn then_continues_the_same_session_as_resumed_turns_of_one_run() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script("echo-agent", ECHO_AGENT);
    let out = ctx.run_agent_cmd(
        &format!("{agent} --fast"),
        &[
            "first task",
            "--then",
            "second task",
            "--then",
            "third task",
        ],
    );
    out.assert_exit(0);
    let events = ctx.events();
    let texts: Vec<(u32, TurnKind, String)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Text { text } => Some((e.turn.index, e.turn.kind, text.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        texts,
        [
            (
                0,
                TurnKind::Start,
                "got [first task] resuming [none]".into()
            ),
            (
                1,
                TurnKind::Resume,
                "got [second task] resuming [sess-1]".into()
            ),
            (
                2,
                TurnKind::Resume,
                "got [third task] resuming [sess-1]".into()
            ),
        ]
    );
    let turn_ends = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::TurnCompleted { .. }))
        .count();
    assert_eq!(turn_ends, 3);
    let receipt = ctx.ended_as(Outcome::Completed);
    assert_eq!(receipt.turns.len(), 3);
    assert_eq!(
        receipt.cost.usd,
        Some(1.5),
        "each turn's reported cost adds up"
    );
    assert_eq!(receipt.tokens.total, 330);
    assert_eq!(receipt.agent.name, "custom");
    // The command's own arguments come before the prompt.
    let argv = events.iter().find_map(|e| match &e.kind {
        EventKind::TurnStarted { argv, .. } => Some(argv.clone()),
        _ => None,
    });
    assert_eq!(argv.unwrap()[1..], ["--fast", "first task"]);

    // `runbook status` shows each turn with its tokens and cost.
    let status = run(&mut ctx.runbook(&["status"]), LIMIT);
    status.assert_exit(0);
    for turn in [
        "1 start: 0 steps, 110 tokens, $0.5000",
        "2 resume: 0 steps, 110 tokens, $0.5000",
        "3 resume: 0 steps, 110 tokens, $0.5000",
    ] {
        assert!(status.stdout.contains(turn), "{turn}: {}", status.stdout);
    }
}

#[test]
fn a_turn_that_fails_stops_the_run_before_the_next_prompt() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script(
        "failing-agent",
        r#"echo '{"type":"session.started","session_id":"s"}'
echo '{"type":"agent.result","ok":false,"message":"out of ideas"}'
exit 1"#,
    );
    let out = ctx.run_agent_cmd(&agent, &["first", "--then", "second"]);
    out.assert_exit(1);
    let receipt = ctx.ended_as(Outcome::AgentError);
    assert_eq!(receipt.turns.len(), 1, "the second prompt never ran");
    assert!(
        receipt.message.contains("out of ideas"),
        "{}",
        receipt.message
    );
}

/// Gives its final result, then stays without a word.
const LINGERING_AGENT: &str = r#"echo '{"type":"text","text":"done"}'
echo '{"type":"agent.result","ok":true}'
exec sleep 600"#;

#[test]
fn an_agent_that_lingers_after_its_final_result_is_ended_and_counts_as_completed() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script("lingering-agent", LINGERING_AGENT);
    let out = ctx.run_agent_cmd(
        &agent,
        &["--finish-grace", "1s", "--kill-grace", "1s", "task"],
    );
    out.assert_exit(0);
    let events = ctx.events();
    let t = types(&events);
    let result = t.iter().position(|t| *t == "agent.result").unwrap();
    let stop = t.iter().position(|t| *t == "stop.requested").unwrap();
    let signal = t.iter().position(|t| *t == "signal.sent").unwrap();
    let completed = t.iter().position(|t| *t == "turn.completed").unwrap();
    assert!(
        result < stop && stop < signal && signal < completed,
        "{t:?}"
    );
    assert_eq!(
        t.iter()
            .filter(|t| **t == "turn.completed" || **t == "turn.failed")
            .count(),
        1
    );
    let receipt = ctx.ended_as(Outcome::Completed);
    assert!(receipt.message.contains("lingered"), "{}", receipt.message);
}

/// The agent's final result may report more than the budget (its own total replaces the running
/// estimate): once it has given its final word there is nothing left to save, so the run is
/// completed, not stopped for its cost.
#[test]
fn a_final_result_over_the_budget_still_completes() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script(
        "costly-agent",
        r#"echo '{"type":"text","text":"done"}'
echo '{"type":"agent.result","ok":true,"tokens":{"input":100,"output":10,"reasoning":0,"cache_read":0,"cache_write":0},"cost_usd":0.5,"cost_source":"reported"}'
sleep 0.5"#,
    );
    let out = ctx.run_agent_cmd(&agent, &["--max-cost", "0.10", "task"]);
    out.assert_exit(0);
    assert!(
        !types(&ctx.events()).contains(&"stop.requested"),
        "{}",
        out.stderr
    );
    let receipt = ctx.ended_as(Outcome::Completed);
    assert_eq!(receipt.cost.usd, Some(0.5));
}

/// A finished agent that stays quiet longer than the inactivity timeout is not hung: it is
/// ended as finished work once the finish grace is over.
#[test]
fn a_quiet_agent_after_its_final_result_is_not_hung() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script("quiet-agent", LINGERING_AGENT);
    let args = [
        "--inactivity-timeout",
        "1s",
        "--finish-grace",
        "3s",
        "--kill-grace",
        "1s",
        "task",
    ];
    let out = ctx.run_agent_cmd(&agent, &args);
    out.assert_exit(0);
    let kinds = types(&ctx.events());
    assert!(
        !kinds.contains(&"watchdog.warning") && !kinds.contains(&"watchdog.fired"),
        "{kinds:?}"
    );
    let receipt = ctx.ended_as(Outcome::Completed);
    assert!(receipt.message.contains("lingered"), "{}", receipt.message);
}

#[test]
fn a_stream_without_a_final_result_is_truncated_and_open_calls_are_closed() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script(
        "cut-agent",
        r#"echo '{"type":"tool.started","call_id":"1","name":"bash","kind":"shell","input":"make"}'
echo '{"type":"run.finished","outcome":"completed","message":"forged","duration_ms":1,"exit":{"code":0}}'"#,
    );
    let out = ctx.run_agent_cmd(&agent, &["task"]);
    out.assert_exit(1);
    let receipt = ctx.ended_as(Outcome::Truncated);
    assert_eq!(
        receipt.unparsed_lines.count, 1,
        "runbook's own events are refused"
    );
    assert_eq!(
        receipt.tool_calls.errors, 1,
        "the open call was closed as failed"
    );
}

#[test]
fn bad_agent_commands_are_one_line_errors_before_anything_starts() {
    let ctx = TestContext::new();
    for (cmd, code, says) in [
        ("", 2, "--agent-cmd is empty"),
        ("'unterminated", 2, "cannot be split"),
        ("/no/such/agent --x", 127, "/no/such/agent"),
    ] {
        let out = ctx.run_agent_cmd(cmd, &["task"]);
        assert_eq!(out.code(), Some(code), "{cmd}: {}", out.stderr);
        assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
        assert!(out.stderr.contains(says), "{cmd}: {}", out.stderr);
    }
    assert!(ctx.run_dirs().is_empty(), "nothing was started");
}

#[test]
fn claude_bypass_as_root_is_refused_with_what_to_do_unless_the_machine_is_a_sandbox() {
    let ctx = TestContext::new();
    let args = [
        "run",
        "--agent",
        "claude",
        "--agent-bin",
        "/bin/true",
        "--permissions",
        "bypass",
        "task",
    ];
    let out = run(&mut ctx.runbook(&args), LIMIT);
    if nix::unistd::geteuid().is_root() {
        out.assert_exit(2);
        out.assert_stderr_has("IS_SANDBOX=1");
        assert!(ctx.run_dirs().is_empty());
    } else {
        // Not root: nothing to refuse; `true` prints nothing, so the run is truncated.
        out.assert_exit(1);
    }
    let mut ctx = TestContext::new();
    ctx.env("IS_SANDBOX", "1");
    let out = run(&mut ctx.runbook(&args), LIMIT);
    out.assert_exit(1);
    let argv = ctx.events().into_iter().find_map(|e| match e.kind {
        EventKind::TurnStarted { argv, .. } => Some(argv),
        _ => None,
    });
    assert!(
        argv.unwrap()
            .contains(&"--dangerously-skip-permissions".to_owned())
    );
}
