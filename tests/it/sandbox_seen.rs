//! `--sandbox` as a person meets it: the run's header, `-v` and `status` say the run is
//! sandboxed and by what; each refusal is told once, as the sandbox's, and the end line counts
//! them; a refusal to start names only what is true of the run.

use crate::sandbox::{attempt, scenario};
use crate::support::TestContext;
use crate::support::pty::{Pty, Screen};

/// The rows of `screen` that hold `text`.
fn rows_with(screen: &Screen, text: &str) -> usize {
    screen.rows().iter().filter(|r| r.contains(text)).count()
}

/// `runbook run --sandbox EXTRA…` in a terminal `cols` wide, the fake agent trying `tries`.
fn run_in_pty(ctx: &TestContext, tries: &[String], extra: &[&str], cols: u16) -> Screen {
    let mut args = vec!["--sandbox"];
    args.extend_from_slice(extra);
    let mut cmd = ctx.fake_run(&scenario(tries), &args);
    cmd.env("FAKE_AGENT_PID_FILE", ctx.work.join("agent.pids"))
        .env("TERM", "xterm-256color");
    let (status, screen) = Pty::spawn(cmd, cols).finish();
    assert_eq!(status.code(), Some(0), "{}", screen.text());
    screen
}

#[test]
fn a_sandboxed_run_says_so_and_tells_each_refusal_once_as_the_sandboxs() {
    let ctx = TestContext::new();
    std::fs::create_dir_all(ctx.home.join(".ssh")).unwrap();
    let tries = [
        attempt("write", ctx.home.join(".ssh/x").display(), false),
        attempt("write", "/etc/runbook-sandbox-seen", false),
        attempt("write", "../outside", false),
        attempt("write", ctx.home.join("notes").display(), false),
        attempt("write", "inside.txt", false),
    ];
    let screen = run_in_pty(&ctx, &tries, &[], 200);
    let text = screen.text();
    assert_eq!(rows_with(&screen, "sandboxed by landlock"), 1, "{text}");
    // Each refusal on one row, the sandbox's; never also as a plain tool failure.
    assert_eq!(rows_with(&screen, "refused by the sandbox:"), 4, "{text}");
    assert_eq!(rows_with(&screen, "Permission denied"), 4, "{text}");
    assert_eq!(rows_with(&screen, "✗ "), 0, "{text}");
    assert!(
        screen.has_row(|r| r.contains("5 tool calls (4 refused by the sandbox)")),
        "{text}"
    );

    let mut status = ctx.runbook(&["status"]);
    status.env("TERM", "xterm-256color");
    let (_, shown) = Pty::spawn(status, 200).finish();
    let work = ctx.work.canonicalize().unwrap().display().to_string();
    let joined = shown.joined();
    assert!(
        shown.has_row(|r| r.starts_with("sandbox ") && r.contains("landlock")),
        "{}",
        shown.text()
    );
    assert!(
        joined.contains(&work) && joined.contains("· 4 refused"),
        "{joined}"
    );
}

#[test]
fn with_v_a_sandboxed_run_lists_where_the_agent_may_write_and_connect() {
    let ctx = TestContext::new();
    let screen = run_in_pty(&ctx, &[], &["-v"], 200);
    let work = ctx.work.canonicalize().unwrap().display().to_string();
    let joined = screen.joined();
    let writes = joined.split("sandbox writes:").nth(1).unwrap_or_default();
    assert!(writes.contains(&work), "{}", screen.text());
    assert!(
        screen.has_row(|r| r.contains("sandbox ports:") && r.contains("443")),
        "{}",
        screen.text()
    );
}

#[test]
fn run_from_home_the_refusal_names_a_secret_that_is_there_and_no_setting_never_set() {
    let ctx = TestContext::new();
    std::fs::create_dir_all(ctx.home.join(".ssh")).unwrap();
    let mut cmd = ctx.fake_run(&scenario(&[]), &["--sandbox"]);
    cmd.current_dir(&ctx.home);
    let out = crate::support::run(&mut cmd, std::time::Duration::from_secs(60));
    assert_eq!(out.code(), Some(2), "{}", out.stderr);
    let said = &out.stderr;
    assert!(said.contains(".ssh") && said.contains("work dir"), "{said}");
    assert!(!said.contains(".aws"), "~/.aws is not there: {said}");
    assert!(!said.contains("sandbox.write"), "never set: {said}");
    assert_eq!(said.trim().lines().count(), 1, "{said}");
}
