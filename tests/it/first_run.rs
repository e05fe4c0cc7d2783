//! A first run whose agent prints nothing at all (OpenCode with no model configured waits for
//! ever): once it has been silent a while the view says what usually causes it and the agent's
//! own command that shows what it can use, on a terminal and in plain lines, before the watchdog.

use crate::support::TestContext;
use crate::support::pty::Pty;

/// `runbook run` of an OpenCode that prints nothing, stopped by the watchdog after 17 s.
fn silent_opencode(ctx: &mut TestContext) -> std::process::Command {
    let agent = ctx.agent_script("opencode", "sleep 100");
    ctx.env("RUNBOOK_OPENCODE_BIN", &agent);
    ctx.runbook(&["run", "--inactivity-timeout", "17s", "fix the flaky test"])
}

#[test]
fn an_agent_that_prints_nothing_is_said_to_lack_a_model_or_key_with_the_command_that_shows() {
    let mut ctx = TestContext::new();
    let mut cmd = silent_opencode(&mut ctx);
    cmd.env("TERM", "xterm-256color");
    let pty = Pty::spawn(cmd, 80);
    let screen = pty.wait_for("nothing from the agent in");
    let text = screen.joined();
    assert!(
        text.contains(
            "the agent has printed nothing in 15s: most often no model or API key is configured; `opencode models` shows what it can use"
        ),
        "{}",
        screen.text()
    );
    let (_, end) = pty.finish();
    assert!(end.text().contains("✗ hung after"), "{}", end.text());

    // In plain lines (CI's log) too, once.
    let out = silent_opencode(&mut ctx).output().expect("runbook");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr
            .matches("the agent has printed nothing in 15s")
            .count(),
        1,
        "{stderr}"
    );
}
