//! Loop and stuck detection through the real OpenCode against the scripted fake provider, each
//! run replayed from its own log with the same verdict: the loops users meet stop (or warn),
//! and work that only looks like a loop never trips a rule.

use std::path::Path;
use std::time::Duration;

use runbook::event::{Event, EventKind, Outcome, StuckRule};
use serde_json::json;

use crate::opencode::{Setup, assert_well_formed, show};
use crate::stuck_acp::stuck_events;
use crate::support::fake_llm::{Reply, ToolCall, Usage};
use crate::support::{self, events_and_receipt};

/// One step calling `tool` with `args`.
fn step(n: &mut u32, tool: &str, args: serde_json::Value) -> Reply {
    *n += 1;
    let call = ToolCall::new(&format!("call_{n}"), tool, args);
    Reply::tool_calls(None, vec![call], Usage::new(1000, 20))
}

fn bash(n: &mut u32, command: &str) -> Reply {
    step(
        n,
        "bash",
        json!({"command": command, "description": "Run it"}),
    )
}

fn write(n: &mut u32, work: &Path, name: &str, content: &str) -> Reply {
    let path = work.join(name).display().to_string();
    step(n, "write", json!({"filePath": path, "content": content}))
}

fn done() -> Reply {
    Reply::text("Done.", Usage::new(1000, 5))
}

/// How long one run may take: OpenCode alone takes seconds to start, more on a busy machine.
const LIMIT: Duration = Duration::from_secs(240);

/// Runs OpenCode on `script` (made from the work dir) with `files` in the work dir, to the exit
/// `code`; the setup (for a replay of its log) and the run's events.
fn live(
    files: &[(&str, &str)],
    extra: &[&str],
    code: i32,
    script: impl FnOnce(&Path) -> Vec<Reply>,
) -> Option<(Setup, Vec<Event>)> {
    let s = Setup::with(Default::default(), script)?;
    for (name, contents) in files {
        s.ctx.write_work(name, contents);
    }
    let out = support::run(&mut s.command(extra, "work on it"), LIMIT);
    let events = s.ctx.events();
    let why = show(&out, &events);
    assert_eq!(out.code(), Some(code), "{why}");
    let kinds = support::types(&events);
    let n = |kind: &str| kinds.iter().filter(|k| **k == kind).count();
    if n("turn.started") == 1 {
        assert_well_formed(&events);
    } else {
        // A nudge's run: one end per turn.
        assert_eq!(
            n("turn.started"),
            n("turn.completed") + n("turn.failed"),
            "{why}"
        );
    }
    assert!(!support::types(&events).contains(&"unparsed"), "{why}");
    for pid in events.iter().filter_map(|e| match e.kind {
        EventKind::TurnStarted { pid, .. } => Some(pid),
        _ => None,
    }) {
        assert!(
            !support::alive(pid as i32),
            "OpenCode {pid} outlived runbook: {why}"
        );
    }
    Some((s, events))
}

/// One step of several calls, which OpenCode runs in whatever order.
fn together(calls: Vec<ToolCall>) -> Reply {
    Reply::tool_calls(None, calls, Usage::new(1000, 20))
}

fn call_write(id: String, work: &Path, name: &str, content: &str) -> ToolCall {
    let path = work.join(name).display().to_string();
    ToolCall::new(&id, "write", json!({"filePath": path, "content": content}))
}

/// The run's own stdout.log replayed, with `env` for the configuration: its events and receipt.
fn replay(s: &Setup, env: &[(&str, &str)]) -> (Vec<Event>, runbook::receipt::Receipt) {
    let log = s
        .ctx
        .run_dirs()
        .pop()
        .expect("a run dir")
        .join("stdout.log");
    // The format is told from the log: OpenCode's own lines, or its ACP session.
    let mut cmd = s
        .ctx
        .runbook(&["replay", log.to_str().unwrap(), "--instant", "--json"]);
    cmd.envs(env.iter().copied());
    let out = support::run(&mut cmd, LIMIT);
    events_and_receipt(&out.stdout)
}

fn verdict(events: &[Event]) -> Vec<(bool, StuckRule, u32)> {
    stuck_events(events)
}

#[test]
fn real_opencode_reading_the_same_file_five_times_is_warned_at_three_and_stopped_at_five() {
    let Some((s, events)) = live(&[("notes.txt", "remember the milk\n")], &[], 10, |_| {
        let mut n = 0;
        let mut script: Vec<Reply> = (0..5).map(|_| bash(&mut n, "cat notes.txt")).collect();
        script.extend((0..3).map(|_| bash(&mut n, "cat notes.txt")));
        script.push(done());
        script
    }) else {
        return;
    };
    let want = [(false, StuckRule::Repeat, 3), (true, StuckRule::Repeat, 5)];
    assert_eq!(verdict(&events), want);
    let receipt = s.ctx.ended_as(Outcome::Stuck);
    let stuck = receipt.stuck.expect("what was repeated");
    assert_eq!(stuck.input.as_deref(), Some("cat notes.txt"));
    // No sixth call was let through.
    let calls = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::ToolStarted(_)))
        .count();
    assert_eq!(calls, 5);
    let (replayed, receipt) = replay(&s, &[]);
    assert_eq!(receipt.outcome, Outcome::Stuck, "{}", receipt.message);
    assert_eq!(verdict(&replayed), want);
}

/// Over ACP (`opencode acp`), the same calls carry the same fingerprints: the prompt is
/// cancelled at the fifth, and the session's log replays to the same verdict.
#[test]
fn real_opencode_over_acp_reading_the_same_file_five_times_is_stopped() {
    let files = [("notes.txt", "remember the milk\n")];
    let Some((s, events)) = live(&files, &["--via", "acp"], 10, |_| {
        let mut n = 0;
        let mut script: Vec<Reply> = (0..8).map(|_| bash(&mut n, "cat notes.txt")).collect();
        script.push(done());
        script
    }) else {
        return;
    };
    let want = [(false, StuckRule::Repeat, 3), (true, StuckRule::Repeat, 5)];
    assert_eq!(verdict(&events), want);
    s.ctx.ended_as(Outcome::Stuck);
    let (replayed, receipt) = replay(&s, &[]);
    assert_eq!(receipt.outcome, Outcome::Stuck, "{}", receipt.message);
    assert_eq!(verdict(&replayed), want);
}

/// `--stuck nudge` with the real OpenCode: stopped at the fifth identical call, its session is
/// resumed with the nudge for its prompt, and it answers instead of looping.
#[test]
fn real_opencode_stuck_once_is_resumed_with_the_nudge_and_answers() {
    let files = [("notes.txt", "remember the milk\n")];
    let blocked = "notes.txt is all there is; I am blocked without the rest.";
    let Some((s, events)) = live(&files, &["--stuck", "nudge"], 0, |_| {
        let mut n = 0;
        let mut script: Vec<Reply> = (0..5).map(|_| bash(&mut n, "cat notes.txt")).collect();
        // The stopped process may have asked for its next step already: any reply after the
        // fifth call is the answer.
        script.extend((0..3).map(|_| Reply::text(blocked, Usage::new(1000, 9))));
        script
    }) else {
        return;
    };
    s.ctx.ended_as(Outcome::Completed);
    let receipt = s.ctx.receipt();
    assert!(receipt.stuck.is_some_and(|st| st.nudged && st.count == 5));
    let kinds = support::types(&events);
    let nudged = kinds.iter().position(|k| *k == "stuck.nudged");
    let nudged = nudged.unwrap_or_else(|| panic!("{kinds:?}"));
    let resumed = events[nudged..].iter().find_map(|e| match &e.kind {
        EventKind::TurnStarted { prompt, .. } => Some((e.turn.kind, prompt.clone())),
        _ => None,
    });
    let (kind, prompt) = resumed.expect("a turn after the nudge");
    assert_eq!(kind, runbook::event::TurnKind::Resume);
    let prompt = prompt.unwrap_or_default();
    assert!(prompt.contains("Change approach"), "{prompt}");
    // The agent was told it, in the same session.
    let last = s.llm.main_requests().pop().expect("a request");
    assert!(
        last.body.to_string().contains("Change approach"),
        "{}",
        last.body
    );
    let answer = events.iter().rev().find_map(|e| match &e.kind {
        EventKind::Text { text } => Some(text.trim()),
        _ => None,
    });
    assert_eq!(answer, Some(blocked));
}

#[test]
fn real_opencode_failing_the_same_way_three_times_is_stopped() {
    let Some((s, events)) = live(&[], &[], 10, |work| {
        let missing = work.join("missing.txt").display().to_string();
        let mut n = 0;
        let mut script: Vec<Reply> = (0..4)
            .map(|_| step(&mut n, "read", json!({"filePath": missing})))
            .collect();
        script.push(done());
        script
    }) else {
        return;
    };
    let want = [(true, StuckRule::SameError, 3)];
    assert_eq!(verdict(&events), want);
    s.ctx.ended_as(Outcome::Stuck);
    let (replayed, receipt) = replay(&s, &[]);
    assert_eq!(receipt.outcome, Outcome::Stuck, "{}", receipt.message);
    assert_eq!(verdict(&replayed), want);
}

/// The same failing test after each edit, then two calls in turn: in one run with `--stuck
/// warn`, each is warned of where it would stop; replayed with `stop`, each rule alone stops
/// the run where its loop is.
#[test]
fn real_opencode_the_failing_test_loop_and_a_ping_pong_are_each_stuck() {
    let test = "#!/bin/sh\necho 'test adds ... FAILED: left 3, right 4'\nexit 1\n";
    let files = [("test.sh", test), ("a.txt", "alpha\n"), ("b.txt", "beta\n")];
    let Some((s, events)) = live(&files, &["--stuck", "warn"], 0, |work| {
        let mut n = 0;
        let mut script = Vec::new();
        // Each step runs the test and edits a file, in whatever order.
        for i in 0..5 {
            let test = json!({"command": "sh test.sh", "description": "Run it"});
            script.push(together(vec![
                ToolCall::new(&format!("call_t{i}"), "bash", test),
                call_write(
                    format!("call_w{i}"),
                    work,
                    &format!("fix{i}.rs"),
                    &format!("// try {i}\n"),
                ),
            ]));
        }
        for _ in 0..3 {
            script.push(bash(&mut n, "cat a.txt"));
            script.push(bash(&mut n, "cat b.txt"));
        }
        script.push(done());
        script
    }) else {
        return;
    };
    s.ctx.ended_as(Outcome::Completed);
    let want = [
        (false, StuckRule::SameFailure, 3),
        (false, StuckRule::SameFailure, 5),
        (false, StuckRule::PingPong, 3),
    ];
    assert_eq!(verdict(&events), want);
    let (replayed, _) = replay(&s, &[("RUNBOOK_STUCK", "warn")]);
    assert_eq!(verdict(&replayed), want, "the same verdicts replayed");
    let (replayed, receipt) = replay(&s, &[]);
    assert_eq!(receipt.outcome, Outcome::Stuck, "{}", receipt.message);
    assert_eq!(
        verdict(&replayed).last(),
        Some(&(true, StuckRule::SameFailure, 5))
    );
    let (replayed, receipt) = replay(&s, &[("RUNBOOK_STUCK_SAME_FAILURE", "0")]);
    assert_eq!(receipt.outcome, Outcome::Stuck, "{}", receipt.message);
    assert_eq!(
        verdict(&replayed).last(),
        Some(&(true, StuckRule::PingPong, 3))
    );
}

/// Work that only looks like a loop, in one run: polling whose output moves on, a TDD loop
/// (fail A, edit, fail B, edit, pass), twenty writes to twenty files, the same `ls` twice with a
/// file made between. Not one warning, live or replayed. (OpenCode gives up at a provider's
/// first 429 rather than retry it: a storm of retries is `--agent-cmd`'s to show, in `stuck.rs`.)
#[test]
fn real_opencode_work_that_only_looks_like_a_loop_never_trips_a_rule() {
    let check = "#!/bin/sh\nv=$(cat v.txt)\nif [ \"$v\" = 3 ]; then echo ok; else echo \"expected 3, got $v\"; exit 1; fi\n";
    let files = [("check.sh", check), ("v.txt", "1\n")];
    let Some((s, events)) = live(&files, &[], 0, |work| {
        let mut n = 0;
        let mut script = Vec::new();
        for _ in 0..3 {
            script.push(bash(&mut n, "echo tick >> poll.log; wc -l < poll.log"));
        }
        script.push(bash(&mut n, "sh check.sh"));
        script.push(bash(&mut n, "echo 2 > v.txt"));
        script.push(bash(&mut n, "sh check.sh"));
        script.push(bash(&mut n, "echo 3 > v.txt"));
        script.push(bash(&mut n, "sh check.sh"));
        // Twenty writes in one step, each answered the same.
        let writes = (0..20)
            .map(|i| call_write(format!("call_m{i}"), work, &format!("m{i}.txt"), "same\n"))
            .collect();
        script.push(together(writes));
        script.push(bash(&mut n, "ls"));
        script.push(write(&mut n, work, "new.txt", "new\n"));
        script.push(bash(&mut n, "ls"));
        script.push(done());
        script
    }) else {
        return;
    };
    s.ctx.ended_as(Outcome::Completed);
    let kinds = support::types(&events);
    let ends: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCompleted(end) => Some(end),
            _ => None,
        })
        .collect();
    assert_eq!(ends.len(), 31, "{kinds:?}");
    assert!(
        ends.iter()
            .all(|e| e.input_hash.is_some() && e.result_hash.is_some())
    );
    assert_eq!(verdict(&events), []);
    let (replayed, receipt) = replay(&s, &[]);
    assert_eq!(receipt.outcome, Outcome::Completed, "{}", receipt.message);
    assert_eq!(verdict(&replayed), []);
}
