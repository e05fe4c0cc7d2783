//! `runbook status --live --next`, as a second terminal would use it: opened before the run
//! starts, it waits, then shows the next run (in this directory with `--here`) as the run itself
//! does, and exits with its code.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::pty::Pty;
use crate::support::{self, TestContext};

/// An OpenCode run of one step that says `words`, after `wait_ms`.
fn scenario(words: &str, wait_ms: u64) -> String {
    format!(
        r#"{{"$sleep_ms": {wait_ms}}}
{{"type":"step_start","timestamp":1795319500463,"sessionID":"ses_1","part":{{"type":"step-start"}}}}
{{"type":"text","timestamp":1795319500500,"sessionID":"ses_1","part":{{"type":"text","text":"{words}","time":{{"start":1,"end":2}}}}}}
{{"type":"step_finish","timestamp":1795319500668,"sessionID":"ses_1","part":{{"type":"step-finish","reason":"stop","tokens":{{"input":1000,"output":20,"reasoning":0,"cache":{{"read":0,"write":0}}}},"cost":0.001}}}}
"#
    )
}

/// `runbook status --live ARGS` in an 80-column terminal.
fn follower(ctx: &TestContext, args: &[&str]) -> Pty {
    let mut cmd = ctx.runbook(&[&["status", "--live"][..], args].concat());
    cmd.env("TERM", "xterm-256color");
    Pty::spawn(cmd, 80)
}

/// Starts a run in the background; the caller waits for it.
fn start(cmd: &mut Command) -> std::process::Child {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn runbook")
}

/// Waits for the follower to end: it followed the run that said `followed`, not the one that
/// said `passed_over`, and ended as it did.
#[track_caller]
fn followed_only(pty: Pty, followed: &str, passed_over: &str) {
    let (status, screen) = pty.finish();
    let (seen, text) = (screen.joined(), screen.text());
    assert_eq!(status.code(), Some(0), "{text}");
    assert!(seen.contains(&format!("│ {followed}")), "{text}");
    assert!(!seen.contains(passed_over), "{text}");
}

#[test]
fn next_waits_for_the_next_run_and_follows_it_to_its_end() {
    let ctx = TestContext::new();
    let pty = follower(&ctx, &["--next"]);
    pty.wait_for("waiting for the next run to start");
    let mut run = start(&mut ctx.fake_run(&scenario("Hello from the next run.", 300), &[]));
    let (status, screen) = pty.finish();
    assert!(run.wait().unwrap().success());
    let seen = screen.joined();
    assert_eq!(status.code(), Some(0), "{}", screen.text());
    let id = ctx
        .run_dir()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    for shown in [
        format!("run {id}"),
        "│ Hello from the next run.".to_owned(),
        "✓ completed in".to_owned(),
        format!("receipt: {}/result.json", ctx.run_dir().display()),
    ] {
        assert!(seen.contains(&shown), "no {shown:?} in\n{}", screen.text());
    }
}

#[test]
fn a_run_already_going_is_not_the_next_one() {
    let ctx = TestContext::new();
    let mut first = ctx.fake_run(
        &scenario("The first run.", 3000),
        &["--inactivity-timeout", "10s"],
    );
    let mut first = ctx.spawn_until(&mut first, "run.started");
    let pty = follower(&ctx, &["--next"]);
    pty.wait_for("waiting for the next run");
    let mut second = start(&mut ctx.fake_run(&scenario("The second run.", 0), &[]));
    followed_only(pty, "The second run.", "The first run.");
    assert!(second.wait().unwrap().success());
    assert!(first.wait().unwrap().success());
}

#[test]
fn here_follows_the_next_run_in_this_directory_only() {
    let ctx = TestContext::new();
    let elsewhere = ctx.root().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let pty = follower(&ctx, &["--next", "--here"]);
    pty.wait_for(&format!(
        "waiting for the next run in {}",
        ctx.work.display()
    ));
    let other = ctx.fake_run(
        &scenario("Working elsewhere.", 0),
        &["--cwd", elsewhere.to_str().unwrap()],
    );
    support::run(&mut { other }, Duration::from_secs(60)).assert_exit(0);
    let mut here = start(&mut ctx.fake_run(&scenario("Working here.", 0), &[]));
    followed_only(pty, "Working here.", "Working elsewhere.");
    assert!(here.wait().unwrap().success());

    // Without --next, --here is the latest run in this directory.
    let mut cmd = ctx.runbook(&["status", "--here"]);
    cmd.current_dir(&elsewhere).env("TERM", "xterm-256color");
    let (_, screen) = Pty::spawn(cmd, 100).finish();
    let cwd = format!(" {}", elsewhere.display());
    let row = |r: &str| r.starts_with("cwd ") && r.ends_with(&cwd);
    assert!(screen.has_row(row), "{}", screen.text());
}

#[test]
fn without_runs_live_says_how_to_wait_and_ctrl_c_ends_the_wait() {
    let ctx = TestContext::new();
    let (status, screen) = follower(&ctx, &[]).finish();
    assert_eq!(status.code(), Some(2), "{}", screen.text());
    assert!(
        screen.joined().contains("no runs yet in")
            && screen
                .joined()
                .contains("`runbook status --live --next` waits"),
        "{}",
        screen.text()
    );

    let mut pty = follower(&ctx, &["--next"]);
    pty.wait_for("Ctrl-C to stop");
    pty.send("\x03");
    let (status, screen) = pty.finish();
    assert_eq!(status.code(), Some(130), "{}", screen.text());
    assert!(ctx.run_dirs().is_empty());
}

#[test]
fn next_with_a_run_named_is_refused() {
    let ctx = TestContext::new();
    let (status, screen) = follower(&ctx, &["--next", "20261122"]).finish();
    assert_eq!(status.code(), Some(2), "{}", screen.text());
    assert!(
        screen.joined().contains("cannot be used with"),
        "{}",
        screen.text()
    );
}
