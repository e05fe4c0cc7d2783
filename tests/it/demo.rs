//! `runbook demo` and `runbook --version`: what a newcomer sees first, through the real binary.

use std::time::{Duration, Instant};

use crate::support::pty::Pty;
use crate::support::{self, TestContext};

/// `runbook demo ARGS` in a test of its own: its temporary directory is the test's.
fn demo(ctx: &TestContext, args: &[&str]) -> std::process::Command {
    let mut cmd = ctx.runbook(&[&["demo"], args].concat());
    cmd.env("TMPDIR", ctx.root());
    cmd
}

/// The run directories the demo made under the test's temporary directory.
fn demo_runs(ctx: &TestContext) -> Vec<std::path::PathBuf> {
    let mut runs = Vec::new();
    for entry in std::fs::read_dir(ctx.root()).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("runbook-demo-") {
            for run in std::fs::read_dir(entry.path().join("runs"))
                .unwrap()
                .flatten()
            {
                runs.push(run.path());
            }
        }
    }
    runs
}

#[test]
fn the_demo_plays_a_recorded_session_live_then_shows_its_change_status_and_where_json_is() {
    let ctx = TestContext::new();
    let mut cmd = demo(&ctx, &["--speed", "4"]);
    cmd.env("TERM", "xterm-256color");
    let started = Instant::now();
    let pty = Pty::spawn(cmd, 100);
    // The live view, with its status line, while the recorded session plays.
    let live = pty.wait_for(" · step ");
    assert!(
        live.text().contains("▶ opencode (fake/fake-model)"),
        "{}",
        live.text()
    );
    let (status, screen) = pty.finish();
    let took = started.elapsed();
    let text = screen.text();
    assert_eq!(status.code(), Some(0), "{text}");
    for shown in [
        "│ I'll read the README first.",
        "✓ read README.md",
        "✓ edit README.md",
        "± 1 file changed (+1 −0)",
        "✓ completed in",
        "$ runbook status",
        "outcome   completed · exit 0",
        "agent     opencode 1.18.33 · model fake/fake-model",
        "tools     2 tool calls: edit 1, read 1",
        "changes   1 file changed (+1 −0) · README.md",
        "runbook run --json",
        "runbook status --json",
        "opencode models opencode",
    ] {
        assert!(text.contains(shown), "no {shown:?} on the screen:\n{text}");
    }
    // The receipt is named, not printed: one line says where its JSON is.
    assert!(!text.contains("\"type\": \"receipt\""), "{text}");
    let rows = screen
        .rows()
        .iter()
        .filter(|r| !r.trim().is_empty())
        .count();
    assert!(rows < 60, "{rows} rows:\n{text}");
    // The live view's status line is gone once the run has ended.
    assert!(
        !screen.rows().iter().any(|r| r.contains(" · step ")),
        "{text}"
    );
    // The session's recorded moments are kept: ~4.9 s recorded, at 4× no less than 1.2 s.
    assert!(took >= Duration::from_millis(1200), "played in {took:?}");
    // Not among the person's runs: in a directory of the demo's own.
    assert!(
        ctx.run_dirs().is_empty(),
        "the demo's run went among the person's runs"
    );
    let runs = demo_runs(&ctx);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert!(
        text.contains(&runs[0].join("result.json").display().to_string()),
        "{text}"
    );
}

#[test]
fn the_demo_without_a_terminal_prints_plain_lines_and_with_json_the_events_and_receipt() {
    let ctx = TestContext::new();
    let out = support::run(&mut demo(&ctx, &["--fast"]), Duration::from_secs(60));
    out.assert_exit(0)
        .assert_stderr_has("✓ read README.md")
        .assert_stderr_has("✓ completed in")
        .assert_stdout_has("outcome   completed")
        .assert_stdout_has("changes   1 file changed (+1 −0) · README.md");
    assert!(!out.stdout.contains("\"tool_calls\""), "{}", out.stdout);
    assert!(
        !out.stderr.contains('\x1b'),
        "control codes off a terminal:\n{:?}",
        out.stderr
    );
    assert!(!out.stdout.contains('\x1b'), "{:?}", out.stdout);

    let out = support::run(
        &mut demo(&ctx, &["--fast", "--json"]),
        Duration::from_secs(60),
    );
    out.assert_exit(0);
    let lines: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let receipt = lines.last().expect("a receipt");
    assert_eq!(receipt["type"], "receipt");
    assert_eq!(receipt["outcome"], "completed");
    assert_eq!(receipt["agent"]["version"], "1.18.33");
    assert_eq!(receipt["tool_calls"]["total"], 2);
    let tools: Vec<&str> = lines
        .iter()
        .filter(|e| e["type"] == "tool.completed")
        .filter_map(|e| e["name"].as_str())
        .collect();
    assert_eq!(tools, ["read", "edit"], "{}", out.stdout);
    assert_eq!(demo_runs(&ctx).len(), 2);
    assert!(ctx.run_dirs().is_empty());
}

#[test]
fn a_speed_out_of_range_is_refused_in_one_line() {
    let ctx = TestContext::new();
    let out = support::run(&mut demo(&ctx, &["--speed", "0"]), Duration::from_secs(30));
    out.assert_exit(2).assert_stderr_has("`0` is not a speed");
    assert!(demo_runs(&ctx).is_empty());
}

/// The commit this checkout is at, as `runbook --version` names it; `None` outside git.
fn head_commit() -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["-C", env!("CARGO_MANIFEST_DIR"), "rev-parse", "HEAD"])
        .output()
        .ok()?;
    let sha = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && sha.len() >= 10).then(|| sha[..10].to_owned())
}

#[test]
fn the_version_names_the_commit_and_verbose_adds_the_schemas() {
    let ctx = TestContext::new();
    let version = env!("CARGO_PKG_VERSION");
    let commit = head_commit().map_or("unknown commit".to_owned(), |c| format!("commit {c}"));
    for flag in ["--version", "-V"] {
        let out = ctx.run(&[flag]);
        out.assert_exit(0);
        assert_eq!(out.stdout, format!("runbook {version} ({commit})\n"));
    }
    let out = ctx.run(&["--version", "--verbose"]);
    out.assert_exit(0);
    let schema = runbook::event::SCHEMA_VERSION;
    for line in [
        format!("runbook {version} ({commit})"),
        format!("event schema    {schema} (docs/events.md)"),
        format!("receipt schema  {schema} (docs/receipt.schema.json)"),
    ] {
        assert!(
            out.stdout.lines().any(|l| l == line),
            "no {line:?} in:\n{}",
            out.stdout
        );
    }
}
