//! The live view as a person reads it in a real terminal: the status line ticks through every
//! phase of a run (a check, not only the agent's turns), and no line says again what another
//! has just said, in other colours or other words.

use std::process::Command;

use crate::support::pty::{Pty, Screen};
use crate::support::{TestContext, sh};

/// An agent (universal events) with a session to resume, that says `$TEXT` (by default that it
/// fixed the test), having run `$DO` first, and completes; with `FAIL=1` it gives up.
const AGENT: &str = r#"
[ -n "$DO" ] && sh -c "$DO"
echo '{"type":"session.started","session_id":"s-1"}'
printf '{"type":"text","text":"%s"}\n' "${TEXT:-I fixed the test.}"
if [ -n "$FAIL" ]; then echo '{"type":"agent.result","ok":false,"message":"gave up"}'; exit 1; fi
echo '{"type":"agent.result","ok":true}'
"#;

/// `runbook run` of [`AGENT`] with `extra` arguments, in a terminal with colour.
fn agent_run(ctx: &TestContext, extra: &[&str]) -> Command {
    let agent = ctx.agent_script("fixer", AGENT);
    let mut args = vec!["run", "--agent-cmd", &agent];
    args.extend_from_slice(extra);
    args.push("fix the flaky test");
    let mut cmd = ctx.runbook(&args);
    cmd.env("TERM", "xterm-256color").env_remove("NO_COLOR");
    cmd
}

/// The status row (`⠋ 00:03 · step …`) on `screen`, if one is drawn.
fn status_row(screen: &Screen) -> Option<String> {
    screen
        .rows()
        .iter()
        .rev()
        .find(|r| r.contains(" · step "))
        .cloned()
}

/// How many rows of `screen` hold `text`.
fn rows_with(screen: &Screen, text: &str) -> usize {
    screen.rows().iter().filter(|r| r.contains(text)).count()
}

#[test]
fn the_status_line_keeps_ticking_while_a_check_runs() {
    let ctx = TestContext::new();
    let cmd = agent_run(&ctx, &["--check", "slow=sleep 5; echo ok"]);
    let pty = Pty::spawn(cmd, 100);
    // The check's own clock, and the run's, go on while nothing else happens.
    let early = status_row(&pty.wait_for("· check slow 1s")).expect("a status row");
    let later = status_row(&pty.wait_for("· check slow 3s")).expect("a status row");
    let clock = |row: &str| row.split(" · ").next().unwrap_or_default().to_owned();
    assert_ne!(clock(&early), clock(&later), "{early:?} then {later:?}");
    let (status, screen) = pty.finish();
    assert_eq!(status.code(), Some(0), "{}", screen.text());
    assert!(screen.joined().contains("✓ slow"), "{}", screen.text());
    assert!(status_row(&screen).is_none(), "{}", screen.text());
}

#[test]
fn the_summary_is_not_said_again_when_the_agents_last_words_said_it() {
    let ctx = TestContext::new();
    sh(
        &ctx.work,
        "git init -q && echo a > a.txt && git add . && git -c user.name=a -c user.email=a@a commit -qm init",
    );
    let mut cmd = agent_run(&ctx, &[]);
    cmd.env("TEXT", "Nothing needed changing: the test passes as it is.");
    let (status, screen) = Pty::spawn(cmd, 100).finish();
    let text = screen.text();
    assert_eq!(status.code(), Some(0), "{text}");
    assert_eq!(rows_with(&screen, "the test passes as it is."), 1, "{text}");
    assert_eq!(rows_with(&screen, "summary:"), 0, "{text}");
    // The receipt keeps it all the same.
    let receipt = ctx.receipt();
    assert_eq!(
        receipt.summary.map(|s| s.text).as_deref(),
        Some("Nothing needed changing: the test passes as it is.")
    );
    // Nothing changed: said in the same words live and by `status`.
    assert_eq!(rows_with(&screen, "± no files changed"), 1, "{text}");
    let mut status = ctx.runbook(&["status"]);
    status.env("TERM", "xterm-256color");
    let (_, shown) = Pty::spawn(status, 100).finish();
    assert!(
        shown.has_row(|r| r.starts_with("changes ") && r.ends_with(" no files changed")),
        "{}",
        shown.text()
    );
    assert!(
        !shown.joined().contains("0 files changed"),
        "{}",
        shown.text()
    );
}

#[test]
fn a_count_of_nought_is_not_drawn_as_an_alarm() {
    let ctx = TestContext::new();
    sh(
        &ctx.work,
        "git init -q && echo a > a.txt && git add . && git -c user.name=a -c user.email=a@a commit -qm init",
    );
    let mut cmd = agent_run(&ctx, &[]);
    cmd.env("DO", "printf 'one\\ntwo\\n' > new.txt");
    let (status, screen) = Pty::spawn(cmd, 100).finish();
    let text = screen.text();
    assert_eq!(status.code(), Some(0), "{text}");
    assert_eq!(rows_with(&screen, "± 1 file changed (+2 −0)"), 1, "{text}");
    let added = screen.cells_of("+2").expect("+2 on the screen");
    assert!(
        added.iter().all(|c| c.fg == vt100::Color::Idx(2)),
        "{added:?}"
    );
    let nought = screen.cells_of("−0").expect("−0 on the screen");
    assert!(
        nought
            .iter()
            .all(|c| c.fg == vt100::Color::Default && !c.bold),
        "{nought:?}"
    );
}

#[test]
fn why_a_run_ended_is_said_once_on_a_line_apart_from_its_figures() {
    let ctx = TestContext::new();
    let cmd = agent_run(
        &ctx,
        &[
            "--check",
            "lint=echo 'error: unused import `Mutex`'; exit 1",
        ],
    );
    let (status, screen) = Pty::spawn(cmd, 120).finish();
    let text = screen.text();
    assert_eq!(status.code(), Some(9), "{text}");
    // The figures, then why, on a row of its own: not `cost unknown: the task completed, …`.
    let verdict = screen
        .rows()
        .iter()
        .position(|r| r.contains("✗ checks_failed after "))
        .unwrap_or_else(|| panic!("no verdict in\n{text}"));
    assert!(screen.rows()[verdict].ends_with("cost unknown"), "{text}");
    assert!(
        screen.rows()[verdict + 1].ends_with("  the task completed, but the check `lint` failed"),
        "{text}"
    );
    // The repair's end was said where it happened, and is not said again.
    let seen = screen.joined();
    assert_eq!(
        seen.matches("the last attempt left the same failures")
            .count(),
        1,
        "{text}"
    );
    assert_eq!(seen.matches("the check `lint` failed").count(), 1, "{text}");
    // The failing check's output is the text to read: not dimmed.
    let output = screen
        .cells_of("error: unused import")
        .expect("the check's output on the screen");
    assert!(output.iter().all(|c| !c.dim), "{output:?}");
}

/// An agent that starts a step, then waits for runbook to stop it.
const WAITING: &str = r#"
echo '{"type":"session.started","session_id":"s-1"}'
echo '{"type":"step.started"}'
echo '{"type":"text","text":"Reading the whole repository first."}'
sleep 60
"#;

#[test]
fn a_stop_is_said_once_where_it_happens() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script("waiting", WAITING);
    let mut cmd = ctx.runbook(&["run", "--agent-cmd", &agent, "fix it"]);
    cmd.env("TERM", "xterm-256color");
    let mut pty = Pty::spawn(cmd, 100);
    pty.wait_for(" · step 1");
    pty.send("\x03");
    let (status, screen) = pty.finish();
    let text = screen.text();
    assert_eq!(status.code(), Some(130), "{text}");
    assert_eq!(rows_with(&screen, "interrupted by Ctrl-C"), 1, "{text}");
    assert!(
        screen.has_row(|r| r.contains("✗ stopping the agent: interrupted by Ctrl-C (SIGINT)")),
        "{text}"
    );
    assert!(
        screen.has_row(|r| r.contains("✗ interrupted after ")),
        "{text}"
    );
}

/// Plans when asked to plan, and does nothing else.
const PLANNER: &str = r##"
say() { printf '%s\n' "$1"; }
say '{"type":"session.started","session_id":"s-1"}'
say '{"type":"text","text":"# Plan\n\n## Files\n\n- `out.txt`: create it\n\n## Testing\n\nRead it.\n\n## Risks\n\nNone."}'
say '{"type":"agent.result","ok":true}'
"##;

#[test]
fn a_plan_not_approved_is_said_once() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script("planner", PLANNER);
    let mut cmd = ctx.runbook(&["run", "--agent-cmd", &agent, "--plan", "create out.txt"]);
    cmd.env("TERM", "xterm-256color");
    let mut pty = Pty::spawn(cmd, 100);
    pty.wait_for("[e]xecute");
    pty.send("a");
    let (status, screen) = pty.finish();
    let text = screen.text();
    assert_eq!(status.code(), Some(8), "{text}");
    assert_eq!(rows_with(&screen, "not approved"), 1, "{text}");
    assert!(screen.has_row(|r| r.contains("✗ aborted after ")), "{text}");
}

#[test]
fn a_later_turn_shows_the_prompt_it_sends_on_one_row() {
    let ctx = TestContext::new();
    let then = format!(
        "Now add a regression test\nfor the race, {}and run it.",
        "with a comment that says why it matters, ".repeat(4)
    );
    let cmd = agent_run(&ctx, &["--then", &then]);
    let (status, screen) = Pty::spawn(cmd, 200).finish();
    let text = screen.text();
    assert_eq!(status.code(), Some(0), "{text}");
    let row = screen
        .rows()
        .iter()
        .find(|r| r.contains("▶ turn 2 (resume)"))
        .unwrap_or_else(|| panic!("no second turn in\n{text}"));
    assert!(
        row.contains("▶ turn 2 (resume): Now add a regression test for the race, with a comment"),
        "{text}"
    );
    assert!(row.ends_with('…'), "{text}");
    assert!(!row.contains("and run it."), "{text}");
}

/// Streams one long line of text, then thinks for a while before it ends the text.
const STREAMING: &str = r#"
echo '{"type":"step.started"}'
echo '{"type":"text.delta","text":"Reading every module of the crate, one after another, to find where the retry loses its lock; "}'
echo '{"type":"text.delta","text":"so far the lock is taken in retry.rs and released in WAIT_FOR_ME"}'
sleep 3
echo '{"type":"text","text":"Found it."}'
echo '{"type":"agent.result","ok":true}'
"#;

#[test]
fn text_cut_at_its_start_on_the_status_line_says_so() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script("streaming", STREAMING);
    let mut cmd = ctx.runbook(&["run", "--agent-cmd", &agent, "find it"]);
    cmd.env("TERM", "xterm-256color");
    let pty = Pty::spawn(cmd, 100);
    let screen = pty.wait_for("WAIT_FOR_ME");
    let row = status_row(&screen).expect("a status row");
    assert!(row.contains("│ …"), "{row:?}");
    assert!(row.ends_with("WAIT_FOR_ME"), "{row:?}");
    let (status, screen) = pty.finish();
    assert_eq!(status.code(), Some(0), "{}", screen.text());
}

/// With `--max-cost`, the status line shows what was spent against the budget.
#[test]
fn the_status_line_shows_the_spend_against_the_budget() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script(
        "spends",
        r#"echo '{"type":"step.finished","reason":"tool-calls","tokens":{"input":10,"output":1,"reasoning":0,"cache_read":0,"cache_write":0},"cost_usd":0.0123}'
sleep 100"#,
    );
    let mut cmd = ctx.runbook(&[
        "run",
        "--agent-cmd",
        &agent,
        "--max-cost",
        "2",
        "--inactivity-timeout",
        "3s",
        "fix the flaky test",
    ]);
    cmd.env("TERM", "xterm-256color");
    let pty = Pty::spawn(cmd, 100);
    let screen = pty.wait_for("step 1");
    assert!(
        screen.has_row(|r| r.contains("step 1 · 11 tokens · $0.0123 of $2.00")),
        "{}",
        screen.text()
    );
    pty.finish();
}
