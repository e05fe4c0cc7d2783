//! `runbook run --check NAME=CMD`: the project's checks after the task, one after another in the
//! agent's working directory, each output whole in the run directory; the run completes only if
//! they all pass.

use std::process::Command;
use std::time::Duration;

use runbook::event::{EventKind, Outcome};

use crate::support::pty::Pty;
use crate::support::{self, TestContext};

/// An agent (universal events) that completes its task, or fails it with `FAIL=1`.
const AGENT: &str = r#"
echo '{"type":"text","text":"I fixed the test."}'
if [ -n "$FAIL" ]; then echo '{"type":"agent.result","ok":false,"message":"gave up"}'; exit 1; fi
echo '{"type":"agent.result","ok":true}'
"#;

/// `runbook run` of [`AGENT`] with `extra` arguments.
fn fixer_run(ctx: &TestContext, extra: &[&str]) -> Command {
    let agent = ctx.agent_script("fixer", AGENT);
    let mut args = vec!["run", "--agent-cmd", &agent];
    args.extend_from_slice(extra);
    args.push("fix the flaky test");
    ctx.runbook(&args)
}

/// [`fixer_run`] with these checks (and a short timeout), to its end.
fn run_checked(ctx: &TestContext, checks: &[&str]) -> support::Outcome {
    run_checked_within(ctx, "2s", checks)
}

/// [`run_checked`] with each check's `--check-timeout`.
fn run_checked_within(ctx: &TestContext, timeout: &str, checks: &[&str]) -> support::Outcome {
    let mut extra = vec!["--check-timeout", timeout];
    for check in checks {
        extra.extend(["--check", check]);
    }
    support::run(&mut fixer_run(ctx, &extra), Duration::from_secs(60))
}

#[test]
fn passing_checks_complete_the_run_and_keep_their_output() {
    let ctx = TestContext::new();
    let out = run_checked(&ctx, &["build=echo built; pwd", "test=echo 3 passed >&2"]);
    out.assert_exit(0)
        .assert_stderr_has("✓ build")
        .assert_stderr_has("✓ test");
    let receipt = ctx.ended_as(Outcome::Completed);
    assert_eq!(
        receipt
            .checks
            .iter()
            .map(|c| (c.name.as_str(), c.passed))
            .collect::<Vec<_>>(),
        [("build", true), ("test", true)]
    );
    let log = std::fs::read_to_string(ctx.run_dir().join("checks/0/build.log")).unwrap();
    assert_eq!(
        log,
        format!("built\n{}\n", ctx.work.display()),
        "run in the agent's directory"
    );
    assert_eq!(receipt.checks[1].tail, ["3 passed"]);
}

#[test]
fn a_failing_check_ends_the_run_checks_failed_with_its_last_lines() {
    let ctx = TestContext::new();
    let out = run_checked(
        &ctx,
        &[
            "lint=printf 'src/a.rs:1: unused import\\nsrc/b.rs:9: missing docs\\n'; exit 1",
            "missing=no-such-checker --all",
            "test=true",
        ],
    );
    out.assert_exit(9)
        .assert_stderr_has("✗ lint (exit 1)")
        .assert_stderr_has("│ src/b.rs:9: missing docs")
        .assert_stderr_has("✗ missing (exit 127)")
        .assert_stderr_has("✓ test")
        .assert_stderr_has(
            "the check `missing` could not run (exit 127: its command was not found): fix the \
             check; also failed: lint",
        );
    let receipt = ctx.ended_as(Outcome::ChecksFailed);
    let lint = &receipt.checks[0];
    assert_eq!((lint.passed, lint.exit.code), (false, Some(1)));
    assert_eq!(
        lint.tail,
        ["src/a.rs:1: unused import", "src/b.rs:9: missing docs"]
    );
    assert!(lint.log.ends_with("checks/0/lint.log"), "{}", lint.log);
    assert!(
        receipt.checks[1].tail[0].contains("not found"),
        "{:?}",
        receipt.checks[1]
    );
    // `list` says how many of the checks passed.
    let list = ctx.run(&["list", "--wide"]);
    let header = list.stdout.lines().next().unwrap_or_default();
    let row = list.stdout.lines().nth(1).unwrap_or_default();
    let column = header.find("CHECKS").expect("a CHECKS column");
    assert_eq!(row.get(column..column + 3), Some("1/3"), "{}", list.stdout);
}

#[test]
fn a_check_that_hangs_is_ended_with_its_tree_at_its_timeout() {
    let ctx = TestContext::new();
    let pids = ctx.pid_file();
    let hang = format!(
        "hang=sleep 60 & echo $! >> {p}; setsid sleep 60 & echo $! >> {p}; sleep 60",
        p = pids.display()
    );
    let out = run_checked(&ctx, &[&hang]);
    out.assert_exit(9).assert_stderr_has("✗ hang (timed out)");
    assert!(out.took < Duration::from_secs(30), "{:?}", out.took);
    assert!(ctx.ended_as(Outcome::ChecksFailed).checks[0].timed_out);
    ctx.assert_agent_gone();
}

#[test]
fn a_check_that_prints_100_mb_keeps_it_all_in_its_log_and_only_a_tail_in_the_receipt() {
    let ctx = TestContext::new();
    // 100 MB through three processes and runbook's log takes seconds on a loaded machine.
    let out = run_checked_within(
        &ctx,
        "30s",
        &["loud=head -c 100000000 /dev/zero | tr '\\0' 'x' | fold -w 99; echo; echo end"],
    );
    out.assert_exit(0);
    let receipt = ctx.ended_as(Outcome::Completed);
    let loud = &receipt.checks[0];
    assert!(loud.output_bytes > 100_000_000, "{}", loud.output_bytes);
    assert_eq!(loud.tail.len(), 80);
    assert_eq!(loud.tail.last().unwrap(), "end");
    let size = std::fs::metadata(ctx.run_dir().join("checks/0/loud.log"))
        .unwrap()
        .len();
    assert_eq!(size, loud.output_bytes);
    let receipt_size = std::fs::metadata(ctx.run_dir().join("result.json"))
        .unwrap()
        .len();
    assert!(receipt_size < 64 * 1024, "{receipt_size}");
}

#[test]
fn no_checks_and_a_failed_task_run_none() {
    let ctx = TestContext::new();
    run_checked(&ctx, &[]).assert_exit(0);
    assert!(ctx.receipt().checks.is_empty());
    assert!(!ctx.run_dir().join("checks").exists());

    let ctx = TestContext::new();
    let mut failing = fixer_run(&ctx, &["--check", "test=touch ran"]);
    failing.env("FAIL", "1");
    support::run(&mut failing, Duration::from_secs(60)).assert_exit(1);
    assert!(ctx.receipt().checks.is_empty());
    assert!(
        !ctx.work.join("ran").exists(),
        "a task that failed is not checked"
    );

    let ctx = TestContext::new();
    let mut both = fixer_run(&ctx, &["--check", "test=touch ran", "--no-checks"]);
    let out = support::run(&mut both, Duration::from_secs(60));
    out.assert_exit(2).assert_stderr_has("cannot be used with");
}

#[test]
fn a_bad_check_is_a_one_line_usage_error() {
    let ctx = TestContext::new();
    for (check, said) in [
        ("cargo test", "is not NAME=CMD"),
        ("../x=true", "is not a check name"),
        ("test=", "has no command"),
    ] {
        let out = run_checked(&ctx, &[check]);
        out.assert_exit(2).assert_stderr_has(said);
    }
    assert!(ctx.run_dirs().is_empty());
}

#[test]
fn ctrl_c_during_a_check_ends_it_and_the_run_as_interrupted() {
    let ctx = TestContext::new();
    let mut cmd = fixer_run(&ctx, &["--check", "slow=echo started; sleep 60"]);
    cmd.env("TERM", "xterm-256color");
    let mut pty = Pty::spawn(cmd, 100);
    pty.wait_for("I fixed the test.");
    // The check has started once its log says so.
    let started = || {
        ctx.run_dirs().first().is_some_and(|d| {
            std::fs::read_to_string(d.join("checks/0/slow.log"))
                .is_ok_and(|l| l.contains("started"))
        })
    };
    let until = std::time::Instant::now() + Duration::from_secs(30);
    while !started() && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    // The status line says which check is running.
    pty.wait_for("· check slow");
    pty.send("\x03");
    let (status, screen) = pty.finish();
    assert_eq!(status.code(), Some(130), "{}", screen.text());
    assert!(screen.joined().contains("✗ slow"), "{}", screen.text());
    let receipt = ctx.ended_as(Outcome::Interrupted);
    assert!(!receipt.checks[0].passed);
    let events = ctx.events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e.kind, EventKind::CheckStarted { .. }))
    );
}

/// An agent that "fixes" the code on resume: it writes `fixed` when its prompt asks it to fix
/// failing checks (on `FIX_AT`-th resume, default the first), and records every prompt and the
/// session it resumed. `COST` is what each turn reports spending.
const REPAIRER: &str = r#"
prompt="$(eval echo \"\${$#}\")"
n=$(cat turns 2>/dev/null || echo 0); n=$((n+1)); echo $n > turns
printf '%s\n---\n' "$prompt" >> prompts
echo "${RUNBOOK_RESUME_SESSION:-none}" >> sessions
echo '{"type":"session.started","session_id":"s-1"}'
case "$prompt" in
  *"checks fail"*)
    if [ "$n" -gt "${FIX_AT:-1}" ]; then echo ok > fixed; fi
    if [ -n "$SLOW_REPAIR" ]; then
      echo "{\"type\":\"step.finished\",\"reason\":\"tool-calls\",\"tokens\":{\"input\":1000,\"output\":10,\"reasoning\":0,\"cache_read\":0,\"cache_write\":0},\"cost_usd\":${COST:-0.6}}"
      sleep 30
    fi ;;
esac
echo "{\"type\":\"step.finished\",\"reason\":\"stop\",\"tokens\":{\"input\":1000,\"output\":10,\"reasoning\":0,\"cache_read\":0,\"cache_write\":0},\"cost_usd\":${COST:-0.01}}"
echo '{"type":"text","text":"Done."}'
echo '{"type":"agent.result","ok":true}'
"#;

/// `runbook run` of [`REPAIRER`] with a check that passes once `fixed` exists (printing `what`
/// when it fails), and `extra` arguments.
fn repair_run(ctx: &TestContext, what: &str, extra: &[&str]) -> Command {
    let agent = ctx.agent_script("repairer", REPAIRER);
    let check = format!("test=test -e fixed || {{ echo \"{what}\"; exit 1; }}");
    let mut args = vec![
        "run",
        "--agent-cmd",
        &agent,
        "--check",
        &check,
        "--check",
        "build=true",
    ];
    args.extend_from_slice(extra);
    args.push("fix the flaky test");
    ctx.runbook(&args)
}

#[test]
fn a_check_that_cannot_run_ends_the_run_without_paying_for_a_repair() {
    for (check, why) in [
        (
            "test=pytestx-not-installed -q",
            "exit 127: its command was not found",
        ),
        (
            "test=./not-executable.sh",
            "exit 126: its command could not be run",
        ),
    ] {
        let ctx = TestContext::new();
        ctx.write_work("not-executable.sh", "#!/bin/sh\nexit 0\n");
        let agent = ctx.agent_script("repairer", REPAIRER);
        let mut cmd = ctx.runbook(&["run", "--agent-cmd", &agent, "--check", check, "fix it"]);
        let out = support::run(&mut cmd, Duration::from_secs(60));
        out.assert_exit(9);
        let said = format!("the check `test` could not run ({why}): fix the check");
        out.assert_stderr_has(&said);
        assert!(
            !out.stderr.contains("repair attempt"),
            "no repair: {}",
            out.stderr
        );
        let receipt = ctx.ended_as(Outcome::ChecksFailed);
        assert_eq!(receipt.message, said);
        assert!(receipt.repair.is_none_or(|r| r.attempts.is_empty()));
        let sessions = std::fs::read_to_string(ctx.work.join("sessions")).unwrap();
        assert_eq!(sessions, "none\n", "the agent ran once, for the task only");
    }
}

#[test]
fn a_failing_check_is_repaired_in_the_same_session_with_a_prompt_of_only_its_failure() {
    let ctx = TestContext::new();
    let out = support::run(
        &mut repair_run(&ctx, "assertion failed: left == right", &[]),
        Duration::from_secs(60),
    );
    out.assert_exit(0)
        .assert_stderr_has("↻ repair attempt 1: fixing test")
        .assert_stderr_has("✓ repaired in 1 attempt");
    let receipt = ctx.ended_as(Outcome::Completed);
    let repair = receipt.repair.expect("a repair record");
    assert_eq!(repair.stopped, Some(runbook::event::RepairStop::Passed));
    assert_eq!(repair.attempts.len(), 1);
    assert_eq!(repair.attempts[0].turn, 1);
    assert_eq!(receipt.checks.iter().filter(|c| c.attempt == 1).count(), 2);
    let prompts = std::fs::read_to_string(ctx.work.join("prompts")).unwrap();
    let repair_prompt = prompts.split("\n---\n").nth(1).unwrap();
    assert!(
        repair_prompt.contains("## `test` failed (exit 1)"),
        "{repair_prompt}"
    );
    assert!(
        repair_prompt.contains("assertion failed: left == right"),
        "{repair_prompt}"
    );
    assert!(
        !repair_prompt.contains("`build`"),
        "only the failing check: {repair_prompt}"
    );
    assert!(
        !repair_prompt.contains("fix the flaky test"),
        "{repair_prompt}"
    );
    let sessions = std::fs::read_to_string(ctx.work.join("sessions")).unwrap();
    assert_eq!(
        sessions, "none\ns-1\n",
        "the repair resumed the task's session"
    );
}

#[test]
fn repair_stops_early_on_the_same_failures_and_after_its_attempts() {
    let ctx = TestContext::new();
    let mut never = repair_run(&ctx, "still broken", &["--repair-attempts", "3"]);
    never.env("FIX_AT", "99");
    let out = support::run(&mut never, Duration::from_secs(60));
    out.assert_exit(9).assert_stderr_has(
        "repair stopped after 1 attempt: the last attempt left the same failures",
    );
    let repair = ctx.ended_as(Outcome::ChecksFailed).repair.unwrap();
    assert_eq!(
        repair.stopped,
        Some(runbook::event::RepairStop::SameFailures)
    );

    // Failures that change each time run out of attempts instead.
    let ctx = TestContext::new();
    let mut changing = repair_run(&ctx, "failure number $(cat turns)", &[]);
    changing.env("FIX_AT", "99");
    support::run(&mut changing, Duration::from_secs(60)).assert_exit(9);
    let repair = ctx.ended_as(Outcome::ChecksFailed).repair.unwrap();
    assert_eq!(
        repair.stopped,
        Some(runbook::event::RepairStop::AttemptsExhausted)
    );
    assert_eq!(repair.attempts.len(), 2);

    // No attempts: no repair.
    let ctx = TestContext::new();
    support::run(
        &mut repair_run(&ctx, "x", &["--repair-attempts", "0"]),
        Duration::from_secs(60),
    )
    .assert_exit(9);
    assert!(ctx.receipt().repair.is_none());
}

#[test]
fn the_repair_budget_stops_the_agent_mid_attempt() {
    let ctx = TestContext::new();
    // --max-cost 2: repair may spend max(0.4, 1) = $1; the attempt spends $1.20 and hangs.
    let mut run = repair_run(&ctx, "x", &["--max-cost", "2"]);
    run.env("SLOW_REPAIR", "1").env("COST", "1.2");
    let out = support::run(&mut run, Duration::from_secs(60));
    out.assert_exit(9)
        .assert_stderr_has("↻ repair attempt 1 (up to $1.00)")
        .assert_stderr_has("repair stopped after 1 attempt: its budget was spent");
    assert!(out.took < Duration::from_secs(25), "{:?}", out.took);
    let receipt = ctx.ended_as(Outcome::ChecksFailed);
    let repair = receipt.repair.unwrap();
    assert_eq!(repair.stopped, Some(runbook::event::RepairStop::Budget));
    assert_eq!(repair.budget_usd, Some(1.0));
}

/// The real OpenCode: the task leaves README.md unchanged, so the check fails; the repair turn,
/// in the same OpenCode session, makes the edit and the check passes.
#[test]
fn the_real_opencode_repairs_a_failing_check_in_its_own_session() {
    use crate::support::fake_llm::{self as chat, Reply, Usage};
    use crate::support::sse;

    let Some(bin) = support::opencode_bin() else {
        return;
    };
    let mut ctx = TestContext::new();
    let llm = chat::opencode_editing_readme(&mut ctx, |edit| {
        vec![
            Reply::text(
                "I read README.md; it looks fine to me.",
                Usage::new(1200, 30),
            ),
            Reply::tool_calls(None, vec![edit], Usage::new(1500, 40)),
            Reply::text(chat::DONE_EDITING, Usage::new(1700, 20)),
        ]
    });
    let check = format!("readme=grep -q '{}' README.md", sse::README_NEW_LINE);
    let args = chat::opencode_run_args(&bin, &["--check", &check]);
    let out = support::run(&mut ctx.runbook(&args), Duration::from_secs(90));
    out.assert_exit(0)
        .assert_stderr_has("✗ readme (exit 1)")
        .assert_stderr_has("↻ repair attempt 1: fixing readme")
        .assert_stderr_has("✓ repaired in 1 attempt");
    let receipt = ctx.ended_as(Outcome::Completed);
    let repair = receipt.repair.expect("a repair record");
    assert_eq!(repair.attempts.len(), 1);
    assert!(repair.attempts[0].cost_usd.is_some(), "{repair:?}");

    // The repair turn resumed the task's session, with a prompt of only the failing check.
    let events = ctx.events();
    let session = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::SessionStarted { session_id } => Some(session_id.clone()),
            _ => None,
        })
        .expect("a session");
    let argvs = support::argvs(&events);
    assert_eq!(argvs.len(), 2);
    assert!(argvs[1].contains(&session), "{:?}", argvs[1]);
    let requests = llm.main_requests();
    let last_user = requests
        .iter()
        .rev()
        .flat_map(|r| r.messages().iter().rev())
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    assert!(
        last_user.contains("## `readme` failed (exit 1)"),
        "{last_user}"
    );
    assert!(!last_user.contains("Change the last line"), "{last_user}");
}

#[test]
fn plan_then_execute_then_checks_then_repair_compose() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script(
        "planner",
        r##"
prompt="$(eval echo \"\${$#}\")"
echo '{"type":"session.started","session_id":"s-1"}'
case "$prompt" in
  *"You are planning"*) printf '%s\n' '{"type":"text","text":"# Plan\n\n## Files\n\n- fixed"}' ;;
  *"checks fail"*) echo ok > fixed; echo '{"type":"text","text":"Fixed."}' ;;
  *) echo '{"type":"text","text":"Executed, I think."}' ;;
esac
echo '{"type":"agent.result","ok":true}'
"##,
    );
    let args = [
        "run",
        "--agent-cmd",
        &agent,
        "--plan",
        "--yes",
        "--check",
        "test=test -e fixed",
        "make it so",
    ];
    let out = support::run(&mut ctx.runbook(&args), Duration::from_secs(60));
    out.assert_exit(0)
        .assert_stderr_has("executing the plan")
        .assert_stderr_has("✓ repaired in 1 attempt");
    let receipt = ctx.ended_as(Outcome::Completed);
    assert_eq!(receipt.turns.len(), 3, "plan, execute, repair");
    assert_eq!(receipt.repair.unwrap().attempts[0].turn, 2);
    let attempts: Vec<(u32, bool)> = receipt
        .checks
        .iter()
        .map(|c| (c.attempt, c.passed))
        .collect();
    assert_eq!(attempts, [(0, false), (1, true)]);
}

#[test]
fn the_runs_timeout_covers_its_checks() {
    let ctx = TestContext::new();
    let mut run = fixer_run(
        &ctx,
        &[
            "--timeout",
            "2s",
            "--check",
            "slow=sleep 60",
            "--check",
            "next=true",
        ],
    );
    let out = support::run(&mut run, Duration::from_secs(60));
    out.assert_exit(5)
        .assert_stderr_has("the run reached its --timeout during the check `slow`");
    assert!(out.took < Duration::from_secs(20), "{:?}", out.took);
    let receipt = ctx.ended_as(Outcome::TimedOut);
    assert_eq!(receipt.checks.len(), 1, "the next check is not started");
    assert!(!receipt.checks[0].passed);
}

#[test]
fn checks_from_runbook_toml_run_in_order_with_their_own_timeout_and_directory() {
    let ctx = TestContext::new();
    std::fs::create_dir(ctx.work.join("web")).unwrap();
    ctx.write_work(
        "runbook.toml",
        r#"
check_timeout = "1m"

[checks]
test = "echo testing"
where = { command = "pwd", cwd = "web" }
slow = { command = "sleep 60", timeout = "1s" }
lint = "echo linted"
"#,
    );
    // `runbook config` shows them, in order, with the file and line that set each.
    let config = ctx.run(&["config", "--wide"]);
    config.assert_exit(0);
    let rows: Vec<&str> = config
        .stdout
        .lines()
        .filter(|l| l.starts_with("checks."))
        .collect();
    assert_eq!(rows.len(), 4, "{}", config.stdout);
    assert!(rows[0].starts_with("checks.\"test\""), "{rows:?}");
    assert!(
        rows[1].contains("cwd = ") && rows[1].contains("runbook.toml:6:1"),
        "{rows:?}"
    );
    assert!(rows[2].contains("timeout = \"1s\""), "{rows:?}");

    // `--check` replaces the check of its name in its place, and adds the others at the end.
    let out = support::run(
        &mut fixer_run(
            &ctx,
            &[
                "--trust",
                "--check",
                "lint=echo relinted",
                "--check",
                "extra=true",
            ],
        ),
        Duration::from_secs(60),
    );
    out.assert_exit(9).assert_stderr_has("✗ slow (timed out)");
    let receipt = ctx.ended_as(Outcome::ChecksFailed);
    let ran: Vec<(&str, bool)> = receipt
        .checks
        .iter()
        .map(|c| (c.name.as_str(), c.passed))
        .collect();
    assert_eq!(
        ran,
        [
            ("test", true),
            ("where", true),
            ("slow", false),
            ("lint", true),
            ("extra", true)
        ]
    );
    assert_eq!(
        receipt.checks[1].tail,
        [ctx.work.join("web").display().to_string()]
    );
    assert_eq!(receipt.checks[3].command, "echo relinted");
    assert!(receipt.checks[2].timed_out);
    assert!(receipt.checks[2].duration_ms < 30_000);

    // `--no-checks` runs none of them.
    let ctx2 = TestContext::new();
    ctx2.write_work("runbook.toml", "[checks]\ntest = \"false\"\n");
    support::run(
        &mut fixer_run(&ctx2, &["--trust", "--no-checks"]),
        Duration::from_secs(60),
    )
    .assert_exit(0);
    assert!(ctx2.ended_as(Outcome::Completed).checks.is_empty());
}

#[test]
fn a_local_file_turns_off_a_check_and_the_repair_prompt_is_the_users_template() {
    let ctx = TestContext::new();
    ctx.write_work(
        "runbook.toml",
        "repair_prompt = \"\"\"\nOur checks fail (try {attempt} of {attempts}); fix the code.\n{failures}\"\"\"\n\n[checks]\ntest = \"test -e fixed || { echo 'boom'; exit 1; }\"\nslow = \"sleep 60\"\n",
    );
    ctx.write_work("runbook.local.toml", "[checks]\nslow = false\n");
    let agent = ctx.agent_script("repairer", REPAIRER);
    let out = support::run(
        &mut ctx.runbook(&[
            "run",
            "--trust",
            "--agent-cmd",
            &agent,
            "fix the flaky test",
        ]),
        Duration::from_secs(60),
    );
    out.assert_exit(0)
        .assert_stderr_has("✓ repaired in 1 attempt");
    let receipt = ctx.ended_as(Outcome::Completed);
    assert!(
        receipt.checks.iter().all(|c| c.name == "test"),
        "{:?}",
        receipt.checks
    );
    let prompts = std::fs::read_to_string(ctx.work.join("prompts")).unwrap();
    let repair_prompt = prompts.split("\n---\n").nth(1).unwrap();
    assert!(
        repair_prompt.starts_with("Our checks fail (try 1 of 2); fix the code.\n"),
        "{repair_prompt}"
    );
    assert!(
        repair_prompt.contains("## `test` failed (exit 1)"),
        "{repair_prompt}"
    );
    assert!(repair_prompt.contains("boom"), "{repair_prompt}");
    assert!(
        !repair_prompt.contains("without weakening"),
        "{repair_prompt}"
    );
}

#[test]
fn bad_check_settings_are_one_line_usage_errors_before_anything_runs() {
    let ctx = TestContext::new();
    ctx.write_work("runbook.toml", "repair_prompt = \"Fix the checks.\"\n");
    let out = ctx.run(&["run", "--agent-cmd", "true", "x"]);
    out.assert_exit(2)
        .assert_stderr_has("repair_prompt")
        .assert_stderr_has("has no {failures}");
    assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
    assert!(ctx.run_dirs().is_empty(), "nothing was started");

    let ctx = TestContext::new();
    ctx.write_work("runbook.toml", "[checks]\n\"../x\" = \"true\"\n");
    let out = ctx.run(&["run", "--agent-cmd", "true", "x"]);
    out.assert_exit(2)
        .assert_stderr_has("runbook.toml:2:1")
        .assert_stderr_has("is not a check name");

    let out = ctx.run(&["run", "--repair-attempts", "-1", "x"]);
    out.assert_exit(2)
        .assert_stderr_has("a whole number from 0 to 20");
}

/// An agent whose tool is refused permission: its first turn ends without its result (the
/// agent stopped short); a turn whose prompt names what was refused completes without it. It
/// records every prompt and the session it resumed; `COST` is what each turn spends.
const STALLER: &str = r#"
prompt="$(eval echo \"\${$#}\")"
printf '%s\n---\n' "$prompt" >> prompts
echo "${RUNBOOK_RESUME_SESSION:-none}" >> sessions
echo '{"type":"session.started","session_id":"s-1"}'
echo "{\"type\":\"step.finished\",\"reason\":\"tool-calls\",\"tokens\":{\"input\":1000,\"output\":10,\"reasoning\":0,\"cache_read\":0,\"cache_write\":0},\"cost_usd\":${COST:-0.01}}"
case "$prompt" in
  *"refused permission"*)
    echo '{"type":"text","text":"I cleaned up with the tools I have."}'
    echo '{"type":"agent.result","ok":true}' ;;
  *)
    echo '{"type":"tool.started","call_id":"c1","name":"bash","kind":"shell","input":"rm -rf build"}'
    echo '{"type":"tool.completed","call_id":"c1","name":"bash","kind":"shell","input":"rm -rf build","status":"denied","error":"permission denied"}'
    echo '{"type":"permission.denied","tool":"bash","detail":"rm -rf build"}' ;;
esac
"#;

#[test]
fn a_permission_stall_is_told_and_retry_denied_gives_the_session_one_more_pass() {
    // Without --retry-denied: what was refused, how to get a pass, and the run is truncated.
    let ctx = TestContext::new();
    let agent = ctx.agent_script("staller", STALLER);
    let out = support::run(
        &mut ctx.runbook(&["run", "--agent-cmd", &agent, "clean the build"]),
        Duration::from_secs(60),
    );
    out.assert_exit(1)
        .assert_stderr_has("⊘ an operation was refused permission: bash rm -rf build")
        .assert_stderr_has("--retry-denied gives the session one more pass");
    let stall = ctx.ended_as(Outcome::Truncated).permission_stall.unwrap();
    assert_eq!(stall.denied.len(), 1);
    assert!(stall.pass.is_none());

    // With it: one more pass in the same session, with a prompt that names what was refused.
    let ctx = TestContext::new();
    let agent = ctx.agent_script("staller", STALLER);
    let out = support::run(
        &mut ctx.runbook(&[
            "run",
            "--agent-cmd",
            &agent,
            "--retry-denied",
            "clean the build",
        ]),
        Duration::from_secs(60),
    );
    out.assert_exit(0).assert_stderr_has("↻ one more pass");
    let receipt = ctx.ended_as(Outcome::Completed);
    let pass = receipt.permission_stall.unwrap().pass.expect("a pass");
    assert_eq!(pass.turn, 1);
    assert_eq!(pass.outcome, Some(Outcome::Completed));
    assert!(pass.cost_usd.is_some());
    let prompts = std::fs::read_to_string(ctx.work.join("prompts")).unwrap();
    let second = prompts.split("\n---\n").nth(1).unwrap();
    assert!(second.contains("- bash: rm -rf build"), "{second}");
    assert!(second.contains("say exactly what you need"), "{second}");
    let sessions = std::fs::read_to_string(ctx.work.join("sessions")).unwrap();
    assert_eq!(sessions, "none\ns-1\n");
    let status = ctx.run(&["status"]);
    status.assert_stdout_has("1 operation refused · one more pass: completed");
}

#[test]
fn the_pass_after_a_stall_spends_from_the_repair_budget() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script("staller", STALLER);
    // --max-cost 2: the repair budget is $1; the pass spends $0.70 of it, and the check that
    // then fails may be repaired with what is left.
    let mut run = ctx.runbook(&[
        "run",
        "--agent-cmd",
        &agent,
        "--retry-denied",
        "--max-cost",
        "2",
        "--check",
        "test=false",
        "--repair-attempts",
        "1",
        "clean the build",
    ]);
    run.env("COST", "0.7");
    let out = support::run(&mut run, Duration::from_secs(60));
    out.assert_stderr_has("↻ one more pass (up to $1.00)")
        .assert_stderr_has("↻ repair attempt 1 (up to $0.3000)");
    let receipt = ctx.ended_as(Outcome::ChecksFailed);
    assert_eq!(
        receipt.permission_stall.unwrap().pass.unwrap().budget_usd,
        Some(1.0)
    );
}
