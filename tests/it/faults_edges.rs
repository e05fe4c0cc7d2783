//! Fault matrix: values out of range. No input makes runbook panic: a value it cannot honour is
//! a usage error (exit 2, one line) before anything starts.

use crate::support::TestContext;

/// `runbook run` with `args` must refuse with exit 2 and an error naming the setting, and leave
/// no run behind.
#[track_caller]
fn refused(ctx: &TestContext, args: &[&str], names: &str) {
    let agent = ctx.agent_script("never", "echo started >> \"$0.ran\"");
    let mut all = vec!["run", "--agent-cmd", &agent];
    all.extend_from_slice(args);
    all.push("a task");
    let out = ctx.run(&all);
    out.assert_exit(2);
    let first = out.stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("error: ") && first.contains(names),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    assert!(ctx.run_dirs().is_empty(), "a run was started");
    assert!(!std::path::Path::new(&format!("{agent}.ran")).exists());
}

#[test]
fn durations_too_long_for_the_clock_are_usage_errors_not_panics() {
    let ctx = TestContext::new();
    for flag in [
        "--timeout",
        "--inactivity-timeout",
        "--kill-grace",
        "--finish-grace",
    ] {
        refused(&ctx, &[flag, "18446744073709551615s"], flag);
        refused(&ctx, &[flag, "18446744073709551615"], flag);
        let too_long = if flag == "--inactivity-timeout" {
            "write `off`"
        } else {
            "at most a year"
        };
        refused(&ctx, &[flag, "9000h"], too_long);
    }
}

#[test]
fn a_configured_duration_too_long_is_a_usage_error_naming_the_file() {
    let ctx = TestContext::new();
    ctx.write_work("runbook.toml", "timeout = 9223372036854775807\n");
    refused(&ctx, &[], "runbook.toml:1");
}

#[test]
fn budgets_that_are_not_positive_amounts_are_usage_errors() {
    let ctx = TestContext::new();
    for bad in ["-1", "0", "nan", "inf", "1e400", "$-2"] {
        refused(&ctx, &[&format!("--max-cost={bad}")], "--max-cost");
    }
}
