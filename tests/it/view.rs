//! The live view as a person reads it in a real terminal: the status line ticks through every
//! phase of a run (a check, not only the agent's turns), and no line says again what another
//! has just said, in other colours or other words.

use std::process::Command;

use crate::support::TestContext;
use crate::support::pty::{Pty, Screen};

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
