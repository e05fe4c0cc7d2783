//! The terminal view as a person meets it: runbook in a real pseudo-terminal, its output played
//! through a terminal emulator, and the screen checked for what a person must be able to read:
//! whatever `TERM` and `NO_COLOR` say, at any width, through Ctrl-C, SIGTERM and a resized
//! window.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::pty::{Pty, Screen};
use crate::support::{self, TestContext};

/// The recorded OpenCode run whose tool call fails: its summary is 80 columns wide.
const TOOL_ERROR: &str = "opencode/d_tool_error";
/// Its summary, whole, after the duration (which depends on the run).
const TOOL_ERROR_SUMMARY: &str = "· 2 steps · 1 tool call (1 failed) · 2,985 tokens · $0.0056";

/// `runbook run` with the fake agent replaying a recorded OpenCode run as fast as it can.
fn replayed_run(ctx: &TestContext, recording: &str, extra: &[&str]) -> Command {
    let bin = support::fake_agent_bin();
    let mut args = vec!["run", "--agent-bin", bin.to_str().unwrap(), "do the thing"];
    args.extend_from_slice(extra);
    let mut cmd = ctx.runbook(&args);
    cmd.env(
        "FAKE_AGENT_REPLAY",
        support::fixtures().join(recording).to_str().unwrap(),
    )
    .env("FAKE_AGENT_SPEED", "0");
    cmd
}

/// `runbook run` with the fake agent playing `scenario` (see tests/support/fake_agent.rs).
fn scripted_run(ctx: &TestContext, scenario: &str, extra: &[&str]) -> Command {
    let mut cmd = ctx.fake_run(scenario, extra);
    cmd.env_remove("NO_COLOR");
    cmd
}

/// An OpenCode stand-in (for `--agent-bin`) that prints the lines of `before`, waits until the
/// test creates the gate file returned, then prints the lines of `after`.
fn gated_agent(ctx: &TestContext, before: &[&str], after: &[&str]) -> (String, PathBuf) {
    let gate = ctx.root().join("go");
    let lines = |lines: &[&str]| lines.iter().map(|l| format!(" '{l}'")).collect::<String>();
    let body = format!(
        "printf '%s\\n'{}\nwhile [ ! -e '{}' ]; do sleep 0.05; done\nprintf '%s\\n'{}",
        lines(before),
        gate.display(),
        lines(after)
    );
    (ctx.agent_script("gated", &body), gate)
}

/// `runbook run` of a [`gated_agent`] in a `cols`-wide terminal.
fn gated_run(ctx: &TestContext, agent: &str, cols: u16) -> Pty {
    let args = [
        "run",
        "--agent-bin",
        agent,
        "--inactivity-timeout",
        "60s",
        "fix it",
    ];
    let mut cmd = ctx.runbook(&args);
    cmd.env("TERM", "xterm-256color").env_remove("NO_COLOR");
    Pty::spawn(cmd, cols)
}

/// What `TERM` is for a case: unset, or this value.
fn set_term(cmd: &mut Command, term: Option<&str>) {
    match term {
        Some(term) => cmd.env("TERM", term),
        None => cmd.env_remove("TERM"),
    };
}

fn receipt_path(ctx: &TestContext) -> String {
    format!("{}/result.json", ctx.run_dir().display())
}

#[test]
fn every_terminal_shows_every_event_the_whole_summary_and_the_whole_receipt_path() {
    for tty in [true, false] {
        for term in [None, Some(""), Some("dumb"), Some("xterm-256color")] {
            for no_color in [false, true] {
                let case = format!("tty {tty}, TERM {term:?}, NO_COLOR {no_color}");
                let ctx = TestContext::new();
                let mut cmd = replayed_run(&ctx, TOOL_ERROR, &[]);
                set_term(&mut cmd, term);
                if !no_color {
                    cmd.env_remove("NO_COLOR");
                }
                let (seen, raw) = if tty {
                    let (status, screen, raw) = Pty::spawn(cmd, 80).finish_raw();
                    assert_eq!(status.code(), Some(0), "{case}\n{}", screen.text());
                    (screen.joined(), raw)
                } else {
                    let out = support::run(&mut cmd, std::time::Duration::from_secs(60));
                    out.assert_exit(0);
                    (
                        out.stderr.split_whitespace().collect::<Vec<_>>().join(" "),
                        out.stderr.into_bytes(),
                    )
                };
                for shown in [
                    "▶ opencode",
                    "✗ read /scratch/opencode-harness/d_tool_error/work/missing.txt",
                    "File not found: /scratch/opencode-harness/d_tool_error/work/missing.txt",
                    "│ The file missing.txt does not exist.",
                    "✓ completed in",
                    TOOL_ERROR_SUMMARY,
                    &format!("receipt: {}", receipt_path(&ctx)),
                ] {
                    assert!(seen.contains(shown), "{case}: no {shown:?} in:\n{seen}");
                }
                let raw = String::from_utf8_lossy(&raw);
                let colour = tty && !no_color && term == Some("xterm-256color");
                assert_eq!(raw.contains("\x1b[3"), colour, "{case}: colour\n{raw:?}");
                let live = tty && term == Some("xterm-256color");
                assert_eq!(
                    raw.contains('\x1b'),
                    live || colour,
                    "{case}: control codes\n{raw:?}"
                );
            }
        }
    }
}

#[test]
fn at_80_columns_the_summary_the_receipt_path_and_the_verdict_are_whole() {
    let ctx = TestContext::new();
    let scenario = r#"{"type":"step_start","timestamp":1795319500463,"sessionID":"ses_1","part":{"type":"step-start"}}
{"$hang": true}
"#;
    let mut cmd = scripted_run(&ctx, scenario, &["--inactivity-timeout", "1s"]);
    cmd.env("TERM", "xterm-256color");
    let (status, screen) = Pty::spawn(cmd, 80).finish();
    assert_eq!(status.code(), Some(3), "{}", screen.text());
    let receipt = ctx.receipt();
    let seen = screen.joined();
    // Why, as the watchdog said it (the verdict does not say it again); how long it had been
    // quiet is read a moment apart on a loaded machine (1.0s on the line, 1.1s in the receipt).
    let why = receipt.message.split(" for ").next().unwrap_or_default();
    assert!(
        seen.contains(why) && seen.contains("✗ hung after "),
        "{why:?} or the verdict not whole in:\n{}",
        screen.text()
    );
    assert!(seen.contains(&receipt_path(&ctx)), "{}", screen.text());
    assert!(!seen.contains('…'), "a line was cut:\n{}", screen.text());
}

/// An agent that starts a step, then waits (up to 60 s) for runbook to stop it.
const WAITING_AGENT: &str = r#"{"type":"step_start","timestamp":1795319500463,"sessionID":"ses_1","part":{"type":"step-start"}}
{"type":"text","timestamp":1795319500500,"sessionID":"ses_1","part":{"type":"text","text":"Reading the whole repository before anything else, which will take a while.","time":{"start":1,"end":2}}}
{"$sleep_ms": 60000}
"#;

/// The status line's mark: `00:03 · step 1 · …`.
fn status_rows(screen: &Screen) -> Vec<&String> {
    screen
        .rows()
        .iter()
        .filter(|r| r.contains(" · step "))
        .collect()
}

/// Runs the waiting agent at `cols` columns until its status line shows, then `stop`s runbook;
/// the screen once runbook has exited.
fn stopped(cols: u16, stop: impl FnOnce(&mut Pty)) -> (TestContext, Screen) {
    let ctx = TestContext::new();
    let mut cmd = scripted_run(&ctx, WAITING_AGENT, &["--inactivity-timeout", "60s"]);
    cmd.env("TERM", "xterm-256color");
    let mut pty = Pty::spawn(cmd, cols);
    pty.wait_for(" · step 1");
    stop(&mut pty);
    let (_, screen) = pty.finish();
    (ctx, screen)
}

/// The screen once runbook was stopped: no status line left behind, and why it stopped said.
#[track_caller]
fn assert_stopped_cleanly(screen: &Screen, why: &str) {
    let text = screen.text();
    assert!(
        status_rows(screen).is_empty(),
        "a stale status line:\n{text}"
    );
    assert!(screen.joined().contains(why), "{text}");
}

#[test]
fn ctrl_c_leaves_no_status_line_behind() {
    for cols in [60, 80, 200] {
        let (ctx, screen) = stopped(cols, |pty| pty.send("\x03"));
        assert_stopped_cleanly(
            &screen,
            "✗ stopping the agent: interrupted by Ctrl-C (SIGINT)",
        );
        assert!(
            screen.joined().contains(&receipt_path(&ctx)),
            "{}",
            screen.text()
        );
    }
}

#[test]
fn sigterm_leaves_no_status_line_behind() {
    let (_, screen) = stopped(80, |pty| {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(pty.pid()).unwrap());
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    });
    assert_stopped_cleanly(&screen, "✗ stopping the agent: runbook received SIGTERM");
}

#[test]
fn a_window_resized_mid_run_gets_lines_that_fit_it() {
    let ctx = TestContext::new();
    let step = r#"{"type":"step_start","timestamp":1795319500463,"sessionID":"ses_1","part":{"type":"step-start"}}"#;
    let error = r#"{"type":"tool_use","timestamp":1795319500589,"sessionID":"ses_1","part":{"type":"tool","tool":"bash","callID":"c1","state":{"status":"error","input":{"command":"cargo test --workspace --all-features -- --include-ignored"},"error":"error: could not compile `runbook` due to 3 previous errors; 2 warnings emitted","time":{"start":1,"end":2}}}}"#;
    let finish = r#"{"type":"step_finish","timestamp":1795319500668,"sessionID":"ses_1","part":{"type":"step-finish","reason":"stop","tokens":{"input":1000,"output":20,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0.001}}"#;
    let (agent, gate) = gated_agent(&ctx, &[step, error], &[error, finish]);
    let mut pty = gated_run(&ctx, &agent, 160);
    let before = pty.wait_for("✗ bash");
    pty.resize(60);
    std::fs::write(&gate, "").unwrap();
    let (_, screen) = pty.finish();
    // Before the resize the line took one row of 160; after it, rows of 60.
    let one_row = |r: &str| r.contains("✗ bash") && r.ends_with("2 warnings emitted");
    assert!(before.has_row(one_row), "{}", before.text());
    let text = screen.text();
    let rows = screen.rows();
    let second = rows.iter().rposition(|r| r.contains("✗ bash")).unwrap();
    assert!(!rows[second].contains("warnings"), "{text}");
    // Broken by runbook under the line's text, not wrapped by the terminal.
    assert!(rows[second + 1].starts_with("            "), "{text}");
    assert!(
        rows[second..].iter().all(|r| r.chars().count() <= 60),
        "{text}"
    );
    assert!(
        screen
            .joined()
            .contains("due to 3 previous errors; 2 warnings emitted"),
        "{text}"
    );
    assert!(status_rows(&screen).is_empty(), "{text}");
}

#[test]
fn width_and_columns_lay_out_lines_that_are_not_on_a_terminal() {
    for (flag, columns) in [(Some("60"), None), (None, Some("60"))] {
        let ctx = TestContext::new();
        let extra: Vec<&str> = flag.map(|w| vec!["--width", w]).unwrap_or_default();
        let mut cmd = replayed_run(&ctx, TOOL_ERROR, &extra);
        if let Some(c) = columns {
            cmd.env("COLUMNS", c);
        }
        let out = support::run(&mut cmd, std::time::Duration::from_secs(60));
        out.assert_exit(0);
        let summary: Vec<&str> = out
            .stderr
            .lines()
            .skip_while(|l| !l.contains("✓ completed"))
            .take(2)
            .collect();
        assert_eq!(summary.len(), 2, "{}", out.stderr);
        assert!(
            summary.iter().all(|l| l.chars().count() <= 60),
            "{}",
            out.stderr
        );
        assert!(summary[1].starts_with("            "), "{}", out.stderr);
    }
    // Without either, a log is never broken.
    let ctx = TestContext::new();
    let out = support::run(
        &mut replayed_run(&ctx, TOOL_ERROR, &[]),
        std::time::Duration::from_secs(60),
    );
    assert!(
        out.stderr
            .lines()
            .any(|l| l.contains("✓ completed") && l.ends_with("$0.0056")),
        "{}",
        out.stderr
    );
}

/// A copy of a recording under a path of fixed length, so that layouts do not depend on where
/// the tests run.
fn recording_copy(dir: &Path, recording: &str) -> PathBuf {
    let name = Path::new(recording).file_name().unwrap().to_str().unwrap();
    for ext in ["stdout.ndjson", "stderr.txt", "exit", "timing.ndjson"] {
        let from = support::fixtures().join(format!("{recording}.{ext}"));
        if from.exists() {
            std::fs::copy(&from, dir.join(format!("{name}.{ext}"))).unwrap();
        }
    }
    dir.join(format!("{name}.stdout.ndjson"))
}

#[test]
fn replays_read_well_at_60_80_120_and_200_columns() {
    let dir = tempfile::Builder::new()
        .prefix("rb")
        .tempdir_in("/tmp")
        .unwrap();
    let ctx = TestContext::new();
    for recording in [
        TOOL_ERROR,
        "opencode/e1_http500",
        "opencode/h_task_subagent",
    ] {
        let file = recording_copy(dir.path(), recording);
        for cols in [60, 80, 120, 200] {
            let mut cmd = ctx.runbook(&["replay", "--instant", file.to_str().unwrap()]);
            cmd.env("TERM", "xterm-256color");
            let (_, screen) = Pty::spawn(cmd, cols).finish();
            let name = format!(
                "{}_at_{cols}",
                Path::new(recording).file_name().unwrap().to_str().unwrap()
            );
            insta::with_settings!({
                filters => vec![(r"/tmp/rb[A-Za-z0-9_]{6}", "/tmp/rbXXXXXX")],
                snapshot_suffix => name,
                omit_expression => true,
            }, {
                insta::assert_snapshot!(screen.text());
            });
        }
    }
}

/// Runs `cmd` in an 80-column terminal, presses Ctrl-C once the screen shows `shown`, and checks
/// that it exited as interrupted with no status line left; the screen.
#[track_caller]
fn interrupted_once_it_shows(mut cmd: Command, shown: &str) -> Screen {
    cmd.env("TERM", "xterm-256color");
    let mut pty = Pty::spawn(cmd, 80);
    pty.wait_for(shown);
    pty.send("\x03");
    let (status, screen) = pty.finish();
    assert_eq!(status.code(), Some(130), "{}", screen.text());
    assert!(status_rows(&screen).is_empty(), "{}", screen.text());
    screen
}

#[test]
fn ctrl_c_during_a_replay_leaves_no_status_line_behind() {
    let ctx = TestContext::new();
    let fixture = support::fixtures().join(format!("{TOOL_ERROR}.stdout.ndjson"));
    let cmd = ctx.runbook(&["replay", "--speed", "0.01", fixture.to_str().unwrap()]);
    let screen = interrupted_once_it_shows(cmd, " · step 0");
    assert!(screen.text().contains("▶ opencode"), "{}", screen.text());
}

#[test]
fn status_live_in_a_second_terminal_shows_the_same_screen_status_line_included() {
    let ctx = TestContext::new();
    let step = r#"{"type":"step_start","timestamp":1795319500463,"sessionID":"ses_1","part":{"type":"step-start"}}"#;
    let text = r#"{"type":"text","timestamp":1795319500500,"sessionID":"ses_1","part":{"type":"text","text":"Looking at the failing test first.","time":{"start":1,"end":2}}}"#;
    let tool = r#"{"type":"tool_use","timestamp":1795319500589,"sessionID":"ses_1","part":{"type":"tool","tool":"read","callID":"c1","state":{"status":"completed","input":{"filePath":"/work/a-rather-long-path/to/the/tests/that/fail/sometimes.rs"},"output":"ok","time":{"start":1,"end":2}}}}"#;
    let finish = r#"{"type":"step_finish","timestamp":1795319500668,"sessionID":"ses_1","part":{"type":"step-finish","reason":"stop","tokens":{"input":18000,"output":902,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0.0123}}"#;
    // The agent goes on only once the follower has shown the status line mid-run.
    let gate = ctx.root().join("go");
    let agent = ctx.agent_script(
        "gated",
        &format!(
            "printf '%s\\n' '{step}' '{text}'\nwhile [ ! -e '{}' ]; do sleep 0.05; done\nprintf '%s\\n' '{tool}' '{finish}'",
            gate.display()
        ),
    );
    let args = [
        "run",
        "--agent-bin",
        &agent,
        "--inactivity-timeout",
        "60s",
        "fix it",
    ];
    let mut cmd = ctx.runbook(&args);
    cmd.env("TERM", "xterm-256color").env_remove("NO_COLOR");
    let run = Pty::spawn(cmd, 70);
    run.wait_for("Looking at the failing test first.");

    let mut follow = ctx.runbook(&["status", "--live"]);
    follow.env("TERM", "xterm-256color").env_remove("NO_COLOR");
    let follower = Pty::spawn(follow, 70);
    let mid_run = follower.wait_for(" · step 1");
    assert_eq!(status_rows(&mid_run).len(), 1, "{}", mid_run.text());
    std::fs::write(&gate, "").unwrap();

    let (run_status, run_screen) = run.finish();
    let (follow_status, follow_screen) = follower.finish();
    assert_eq!(run_status.code(), follow_status.code());
    assert_eq!(
        run_screen.text(),
        follow_screen.text(),
        "the run:\n{}\nthe follower:\n{}",
        run_screen.text(),
        follow_screen.text()
    );
}

/// The real OpenCode, editing README.md through the fake provider, in an 80-column terminal
/// with `TERM` unset (as in `kubectl exec -it`) and with `TERM=xterm-256color`.
#[test]
fn a_real_opencode_run_shows_everything_in_80_columns_whatever_term_says() {
    use crate::support::fake_llm::{self as chat, Reply, Usage};

    let Some(bin) = support::opencode_bin() else {
        return;
    };
    for term in [None, Some("xterm-256color")] {
        let mut ctx = TestContext::new();
        let _llm = chat::opencode_editing_readme(&mut ctx, |edit| {
            vec![
                Reply::tool_calls(None, vec![edit], Usage::new(16_000, 400)),
                Reply::text(chat::DONE_EDITING, Usage::new(18_000, 502)),
            ]
        });
        let mut cmd = ctx.runbook(&chat::opencode_run_args(&bin, &[]));
        set_term(&mut cmd, term);
        let (status, screen) = Pty::spawn(cmd, 80).finish();
        let text = screen.text();
        assert_eq!(status.code(), Some(0), "TERM {term:?}:\n{text}");
        ctx.ended_as(runbook::event::Outcome::Completed);
        let seen = screen.joined();
        for shown in [
            "▶ opencode (fake/fake-model)".to_owned(),
            "✓ edit".to_owned(),
            format!("│ {}", chat::DONE_EDITING),
            "· 1 tool call · 34,902 tokens ·".to_owned(),
            format!("receipt: {}", receipt_path(&ctx)),
        ] {
            assert!(
                seen.contains(&shown),
                "TERM {term:?}: no {shown:?} in\n{text}"
            );
        }
        assert!(status_rows(&screen).is_empty(), "TERM {term:?}:\n{text}");
    }
}

#[test]
fn a_negative_budget_gets_the_budgets_own_error_and_starts_nothing() {
    let ctx = TestContext::new();
    for args in [
        &["run", "--max-cost", "-1", "fix the flaky test"][..],
        &["run", "--timeout", "-5s", "fix the flaky test"],
        &["run", "--max-revisions", "-2", "fix the flaky test"],
    ] {
        let mut cmd = ctx.runbook(args);
        cmd.env("TERM", "xterm-256color");
        let (status, screen) = Pty::spawn(cmd, 80).finish();
        let seen = screen.joined();
        assert_eq!(status.code(), Some(2), "{args:?}: {seen}");
        assert!(
            seen.contains(&format!("invalid value '{}'", args[2])),
            "{args:?}: {seen}"
        );
        assert!(
            !seen.contains("-- -"),
            "{args:?} was told to pass the value to the agent: {seen}"
        );
    }
    assert!(ctx.run_dirs().is_empty(), "a run was started");
}

#[test]
fn a_list_filter_that_matches_nothing_says_so() {
    let ctx = TestContext::new();
    for _ in 0..2 {
        support::run(
            &mut replayed_run(&ctx, TOOL_ERROR, &[]),
            std::time::Duration::from_secs(60),
        )
        .assert_exit(0);
    }
    let mut cmd = ctx.runbook(&["list", "--outcome", "hung", "--agent", "opencode"]);
    cmd.env("TERM", "xterm-256color");
    let (status, screen) = Pty::spawn(cmd, 80).finish();
    let seen = screen.joined();
    assert_eq!(status.code(), Some(0), "{seen}");
    assert!(
        seen.contains(&format!(
            "none of the 2 runs in {} match --outcome hung --agent opencode",
            ctx.runs.display()
        )),
        "{seen}"
    );
}

#[test]
fn money_is_written_to_the_millionth_without_float_noise() {
    let ctx = TestContext::new();
    let step = r#"{"type":"step_start","timestamp":1795319500463,"sessionID":"ses_1","part":{"type":"step-start"}}
{"type":"step_finish","timestamp":1795319500668,"sessionID":"ses_1","part":{"type":"step-finish","reason":"tool-calls","tokens":{"input":1000,"output":20,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0.00357}}"#;
    let last = r#"{"type":"step_start","timestamp":1795319500463,"sessionID":"ses_1","part":{"type":"step-start"}}
{"type":"step_finish","timestamp":1795319500668,"sessionID":"ses_1","part":{"type":"step-finish","reason":"stop","tokens":{"input":1000,"output":20,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0.00357}}"#;
    let scenario = format!("{step}\n{step}\n{last}\n");
    let mut cmd = scripted_run(&ctx, &scenario, &["--max-cost", "2.5"]);
    cmd.env("TERM", "xterm-256color");
    let (status, screen) = Pty::spawn(cmd, 80).finish();
    assert_eq!(status.code(), Some(0), "{}", screen.text());
    assert!(screen.joined().contains("· $0.0107"), "{}", screen.text());
    // 3 × 0.00357 is 0.010709999999999999 in floating point.
    let receipt = std::fs::read_to_string(ctx.run_dir().join("result.json")).unwrap();
    assert!(receipt.contains("\"usd\": 0.01071"), "{receipt}");
    let log = std::fs::read_to_string(ctx.run_dir().join("events.ndjson")).unwrap();
    for text in [&receipt, &log] {
        assert!(!text.contains("0.0107099"), "float noise in:\n{text}");
        assert!(!text.contains("99999"), "float noise in:\n{text}");
    }
}

#[test]
fn replay_takes_a_run_id_a_prefix_or_a_run_directory_like_status() {
    let ctx = TestContext::new();
    support::run(
        &mut replayed_run(&ctx, TOOL_ERROR, &[]),
        std::time::Duration::from_secs(60),
    )
    .assert_exit(0);
    let dir = ctx.run_dir();
    let id = dir.file_name().unwrap().to_str().unwrap().to_owned();
    let random = id.rsplit('-').next().unwrap()[..3].to_owned();
    for name in [id.as_str(), &id[..12], &random, dir.to_str().unwrap()] {
        let mut cmd = ctx.runbook(&["replay", "--instant", name]);
        cmd.env("TERM", "xterm-256color");
        let (status, screen) = Pty::spawn(cmd, 100).finish();
        let seen = screen.joined();
        assert_eq!(status.code(), Some(0), "{name}: {seen}");
        for shown in [
            "✗ read",
            "│ The file missing.txt does not exist.",
            TOOL_ERROR_SUMMARY,
        ] {
            assert!(
                seen.contains(shown),
                "{name}: no {shown:?} in\n{}",
                screen.text()
            );
        }
    }
    for (name, said) in [
        (
            "30nca",
            "cannot replay 30nca: there is no such file, and no run matches `30nca`",
        ),
        (ctx.work.to_str().unwrap(), "is a directory but not a run's"),
    ] {
        let mut cmd = ctx.runbook(&["replay", name]);
        cmd.env("TERM", "xterm-256color");
        let (status, screen) = Pty::spawn(cmd, 100).finish();
        assert_eq!(status.code(), Some(2), "{name}: {}", screen.text());
        assert!(screen.joined().contains(said), "{name}: {}", screen.text());
        assert_eq!(
            screen
                .text()
                .lines()
                .filter(|l| l.starts_with("error:"))
                .count(),
            1,
            "{}",
            screen.text()
        );
    }
}

#[test]
fn each_denial_is_told_once_and_counted_as_denied_by_every_agent() {
    let ctx = TestContext::new();
    for (recording, denials, summary) in [
        (
            "opencode/i1_permission_bash_ask",
            1,
            "· 1 tool call (1 denied) ·",
        ),
        ("claude/permission_denied", 2, "· 2 tool calls (2 denied) ·"),
        ("codex/permission_denied", 1, "· 2 tool calls (1 denied) ·"),
    ] {
        let file = support::fixtures().join(format!("{recording}.stdout.ndjson"));
        let mut cmd = ctx.runbook(&["replay", "--instant", file.to_str().unwrap()]);
        cmd.env("TERM", "xterm-256color");
        let (_, screen) = Pty::spawn(cmd, 100).finish();
        let text = screen.text();
        let told = screen
            .rows()
            .iter()
            .filter(|r| r.contains("permission denied"))
            .count();
        assert_eq!(told, denials, "{recording}:\n{text}");
        assert!(screen.joined().contains(summary), "{recording}:\n{text}");
        assert!(!text.contains("failed"), "{recording}:\n{text}");
    }
}

#[test]
fn status_tells_a_denial_as_the_run_did_with_runbooks_exit_code() {
    let ctx = TestContext::new();
    let mut run = replayed_run(&ctx, "opencode/i1_permission_bash_ask", &[]);
    run.env("TERM", "xterm-256color");
    let (run_status, run_screen) = Pty::spawn(run, 100).finish();
    assert_eq!(run_status.code(), Some(1), "{}", run_screen.text());
    assert!(
        run_screen.joined().contains("· 1 tool call (1 denied) ·"),
        "{}",
        run_screen.text()
    );

    let mut status = ctx.runbook(&["status"]);
    status.env("TERM", "xterm-256color");
    let (_, screen) = Pty::spawn(status, 100).finish();
    let seen = screen.joined();
    for shown in [
        "truncated · exit 1 · agent exit 0",
        "1 tool call (1 denied): bash 1 (1 denied)",
    ] {
        assert!(seen.contains(shown), "no {shown:?} in\n{}", screen.text());
    }
    let denied = |r: &str| r.starts_with("denied ") && r.ends_with(" bash (echo hi)");
    assert!(screen.has_row(denied), "{}", screen.text());
    // Broken between words under its label, never mid-word.
    assert!(seen.contains("denied permission"), "{}", screen.text());
    assert!(!seen.contains("failed"), "{}", screen.text());
}

/// Plans when asked to plan (after saying what it does first), edits when asked to carry it out.
const PLANNER: &str = r##"
prompt="$(eval echo \"\${$#}\")"
say() { printf '%s\n' "$1"; }
say '{"type":"session.started","session_id":"s-1"}'
case "$prompt" in
  *"You are planning"*)
    say '{"type":"text","text":"Reading the repository first."}'
    say '{"type":"tool.completed","call_id":"r","name":"read","kind":"read","input":"README.md","status":"ok"}'
    say '{"type":"text","text":"# Plan\n\n## Files\n\n- `out.txt`: create it with the greeting\n\n## Testing\n\nRead it.\n\n## Risks\n\nNone."}' ;;
  *)
    echo made > out.txt
    say '{"type":"text","text":"Done."}' ;;
esac
say '{"type":"agent.result","ok":true}'
"##;

#[test]
fn the_plan_is_shown_once_whole_and_what_came_before_it_too() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script("planner", PLANNER);
    for cols in [80, 120] {
        let mut cmd = ctx.runbook(&[
            "run",
            "--agent-cmd",
            &agent,
            "--plan",
            "--yes",
            "create out.txt",
        ]);
        cmd.env("TERM", "xterm-256color");
        let (status, screen) = Pty::spawn(cmd, cols).finish();
        let text = screen.text();
        assert_eq!(status.code(), Some(0), "{text}");
        let once = |needle: &str| screen.rows().iter().filter(|r| r.contains(needle)).count();
        assert_eq!(once("`out.txt`: create it with the greeting"), 1, "{text}");
        assert_eq!(once("## Files"), 1, "{text}");
        assert_eq!(once("│ Reading the repository first."), 1, "{text}");
        assert_eq!(once("▶ the plan"), 1, "{text}");
        assert_eq!(once("✓ executing the plan"), 1, "{text}");
    }
}

#[test]
fn ctrl_c_in_a_follower_leaves_no_status_line_and_the_run_goes_on() {
    let ctx = TestContext::new();
    let mut run = scripted_run(&ctx, WAITING_AGENT, &["--inactivity-timeout", "60s"]);
    let mut run = ctx.spawn_until(&mut run, "text");
    interrupted_once_it_shows(ctx.runbook(&["status", "--live"]), " · step 1");
    assert!(run.try_wait().unwrap().is_none(), "the run was stopped too");
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(run.id()).unwrap()),
        nix::sys::signal::Signal::SIGINT,
    );
    assert_eq!(run.wait().unwrap().code(), Some(130));
}
