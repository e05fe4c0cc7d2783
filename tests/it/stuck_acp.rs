//! Loop and stuck detection over the Agent Client Protocol, with small scripted agents
//! (`--acp-cmd`): an ACP agent's tool calls carry the same fingerprints as a native agent's, so
//! the same rules stop it, and the same look-alikes do not.

use runbook::event::{EventKind, Outcome, StuckRule};

use crate::acp_scripted::{acp_agent, run};
use crate::support::{TestContext, types};

/// Shell functions for the scripted agent's calls: `call ID COMMAND OUTPUT EXIT` tells a shell
/// call from its start to its end; `finish STOP_REASON` answers the prompt in `$prompt`.
pub(crate) const CALLS: &str = r#"
call() {
  update "{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"$1\",\"title\":\"bash\",\"kind\":\"execute\",\"status\":\"pending\",\"rawInput\":{\"cwd\":\"/w\"}}"
  update "{\"sessionUpdate\":\"tool_call_update\",\"toolCallId\":\"$1\",\"status\":\"in_progress\",\"rawInput\":{\"command\":\"$2\",\"cwd\":\"/w\"}}"
  update "{\"sessionUpdate\":\"tool_call_update\",\"toolCallId\":\"$1\",\"status\":\"completed\",\"content\":[{\"type\":\"content\",\"content\":{\"type\":\"text\",\"text\":\"$3\"}}],\"rawOutput\":{\"output\":\"$3\",\"metadata\":{\"exit\":$4}}}"
}
finish() {
  id=$(printf '%s' "$prompt" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  printf '{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"%s"}}\n' "$id" "$1"
}
"#;

pub(crate) fn stuck_events(events: &[runbook::event::Event]) -> Vec<(bool, StuckRule, u32)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::StuckWarning(s) => Some((false, s.rule, s.count)),
            EventKind::StuckDetected(s) => Some((true, s.rule, s.count)),
            _ => None,
        })
        .collect()
}

#[test]
fn an_acp_agent_running_the_same_command_with_the_same_result_is_stopped_as_stuck() {
    let ctx = TestContext::new();
    let agent = acp_agent(
        &ctx,
        "agent.sh",
        &format!(
            r#"{CALLS}IFS= read -r prompt
for i in 1 2 3 4 5; do call c$i 'cat notes.txt' 'remember the milk' 0; done
IFS= read -r cancel
case "$cancel" in *session/cancel*) ;; *) exit 9 ;; esac
finish cancelled
IFS= read -r eof
exit 0"#
        ),
    );
    let out = run(&ctx, &agent, &["--inactivity-timeout", "10s"]);
    out.assert_exit(10)
        .assert_stderr_has("⟳ bash cat notes.txt: same call, same result 3×")
        .assert_stderr_has("stuck: bash cat notes.txt: same call, same result 5×");
    let receipt = ctx.ended_as(Outcome::Stuck);
    let stuck = receipt.stuck.expect("the receipt says what was repeated");
    assert_eq!((stuck.rule, stuck.count), (StuckRule::Repeat, 5));
    let events = ctx.events();
    assert_eq!(
        stuck_events(&events),
        [(false, StuckRule::Repeat, 3), (true, StuckRule::Repeat, 5)]
    );
    // Stopped the ACP way: the prompt was cancelled, and no signal was needed.
    assert!(
        !types(&events).contains(&"signal.sent"),
        "{:?}",
        types(&events)
    );
    for file in ["events.ndjson", "result.json"] {
        let text = std::fs::read_to_string(ctx.run_dir().join(file)).unwrap();
        assert!(!text.contains("remember the milk"), "{file}");
    }
    ctx.assert_agent_gone();

    // Replayed, the log gets the same verdict.
    let log = ctx.run_dir().join("stdout.log");
    let out = ctx.run(&["replay", log.to_str().unwrap(), "--instant", "--json"]);
    let (events, receipt) = crate::support::events_and_receipt(&out.stdout);
    assert_eq!(receipt.outcome, Outcome::Stuck, "{}", receipt.message);
    assert_eq!(
        stuck_events(&events),
        [(false, StuckRule::Repeat, 3), (true, StuckRule::Repeat, 5)]
    );
}

#[test]
fn an_acp_agent_failing_the_same_way_five_times_is_stuck_and_one_whose_output_moves_is_not() {
    let ctx = TestContext::new();
    let agent = acp_agent(
        &ctx,
        "agent.sh",
        &format!(
            r#"{CALLS}IFS= read -r prompt
for i in 1 2 3 4 5; do call c$i 'cargo test' 'left: 3, right: 4' 101; done
IFS= read -r cancel
finish cancelled
IFS= read -r eof
exit 0"#
        ),
    );
    run(&ctx, &agent, &["--inactivity-timeout", "10s"]).assert_exit(10);
    let stuck = ctx
        .ended_as(Outcome::Stuck)
        .stuck
        .expect("what was repeated");
    // A failing command is `same_failure`'s, warned at 3 and stopped at 5.
    assert_eq!((stuck.rule, stuck.count), (StuckRule::SameFailure, 5));
    ctx.assert_agent_gone();

    // Polling whose output changes, and the same `ls` with a file made between: no rule trips,
    // though every call has its fingerprints.
    let ctx = TestContext::new();
    let agent = acp_agent(
        &ctx,
        "agent.sh",
        &format!(
            r#"{CALLS}IFS= read -r prompt
for pct in 10 30 55 80 95 100; do call p$pct 'gh run view 7' "in progress: $pct%" 0; done
call l1 ls 'a' 0
call w1 'touch b' '' 0
call l2 ls 'a b' 0
update '{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"Done."}}}}'
finish end_turn
IFS= read -r eof
exit 0"#
        ),
    );
    run(&ctx, &agent, &["--inactivity-timeout", "10s"]).assert_exit(0);
    ctx.ended_as(Outcome::Completed);
    let events = ctx.events();
    assert_eq!(stuck_events(&events), []);
    let ends: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCompleted(end) => Some(end),
            _ => None,
        })
        .collect();
    assert_eq!(ends.len(), 9);
    for end in &ends {
        assert_eq!(end.input_hash.as_deref().map(str::len), Some(16), "{end:?}");
        assert_eq!(
            end.result_hash.as_deref().map(str::len),
            Some(16),
            "{end:?}"
        );
    }
    // The same command, told apart by its result only.
    assert_eq!(ends[0].input_hash, ends[1].input_hash);
    assert_ne!(ends[0].result_hash, ends[1].result_hash);
}

/// A scripted ACP agent that repeats itself until it is cancelled, then is prompted again: it
/// then answers (`recovers`) or repeats itself once more.
fn nudged_agent(ctx: &TestContext, recovers: bool) -> String {
    let after = if recovers {
        r#"update '{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"notes.txt is all there is; nothing else to read."}}'
finish end_turn"#
    } else {
        r#"for i in 6 7 8 9 10; do call c$i 'cat notes.txt' 'remember the milk' 0; done
IFS= read -r cancel
finish cancelled"#
    };
    acp_agent(
        ctx,
        "agent.sh",
        &format!(
            r#"{CALLS}IFS= read -r prompt
for i in 1 2 3 4 5; do call c$i 'cat notes.txt' 'remember the milk' 0; done
IFS= read -r cancel
finish cancelled
IFS= read -r prompt
case "$prompt" in *"Change approach"*) ;; *) exit 9 ;; esac
{after}
IFS= read -r eof
exit 0"#
        ),
    )
}

#[test]
fn with_stuck_nudge_the_agent_is_prompted_once_and_may_recover() {
    let ctx = TestContext::new();
    let agent = nudged_agent(&ctx, true);
    let out = run(
        &ctx,
        &agent,
        &["--inactivity-timeout", "10s", "--stuck", "nudge"],
    );
    out.assert_exit(0)
        .assert_stderr_has("⟳ nudging the agent once: it goes on in the same session");
    let receipt = ctx.ended_as(Outcome::Completed);
    let stuck = receipt
        .stuck
        .expect("the receipt says what it was nudged about");
    assert!(stuck.nudged, "{stuck:?}");
    assert_eq!((stuck.rule, stuck.count), (StuckRule::Repeat, 5));
    let events = ctx.events();
    let kinds = types(&events);
    let nudged = kinds
        .iter()
        .position(|t| *t == "stuck.nudged")
        .expect("stuck.nudged");
    assert!(kinds[..nudged].contains(&"stuck.detected"), "{kinds:?}");
    let prompt = events[nudged..].iter().find_map(|e| match &e.kind {
        EventKind::TurnStarted { prompt, .. } => prompt.clone(),
        _ => None,
    });
    assert_eq!(
        prompt.as_deref(),
        Some(
            "You have made the same call (`bash cat notes.txt`) 5 times in a row with the same result. Change approach, or say what blocks you."
        )
    );
    assert_eq!(count(&kinds, "turn.started"), 2, "{kinds:?}");
    ctx.assert_agent_gone();
}

#[test]
fn with_stuck_nudge_an_agent_stuck_again_after_the_nudge_is_stopped_as_stuck() {
    let ctx = TestContext::new();
    let agent = nudged_agent(&ctx, false);
    let out = run(
        &ctx,
        &agent,
        &["--inactivity-timeout", "10s", "--stuck", "nudge"],
    );
    out.assert_exit(10);
    let receipt = ctx.ended_as(Outcome::Stuck);
    assert!(
        receipt.message.contains("again after a nudge"),
        "{}",
        receipt.message
    );
    let stuck = receipt.stuck.expect("what was repeated");
    assert!(stuck.nudged && stuck.count == 5, "{stuck:?}");
    let kinds = types(&ctx.events());
    assert_eq!(
        count(&kinds, "stuck.nudged"),
        1,
        "one nudge only: {kinds:?}"
    );
    assert_eq!(count(&kinds, "stuck.detected"), 2, "{kinds:?}");
    ctx.assert_agent_gone();
}

fn count(kinds: &[&str], kind: &str) -> usize {
    kinds.iter().filter(|k| **k == kind).count()
}
