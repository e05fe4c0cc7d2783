//! Fault matrix: hostile output and hostile conditions that runbook already handles, kept here so
//! they stay handled. (Rows that other tests cover are named in docs/RELIABILITY.md.)

use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use runbook::event::{EventKind, Outcome, UnparsedReason};

use crate::support::{TestContext, finish};

const LIMIT: Duration = Duration::from_secs(60);

/// The reasons of the run's `unparsed` events, in order.
fn unparsed(ctx: &TestContext) -> Vec<(UnparsedReason, u64)> {
    ctx.events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::Unparsed(u) => Some((u.reason, u.bytes)),
            _ => None,
        })
        .collect()
}

const RESULT: &str = r#"echo '{"type":"agent.result","ok":true}'"#;

#[test]
fn nul_bytes_and_deep_nesting_are_unreadable_lines_not_crashes() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script(
        "hostile",
        &format!(
            r#"printf '{{"type":"text","text":"a\000b"}}\n'
printf '\000\000\000\n'
python3 -c 'print("[" * 200000 + "]" * 200000)'
python3 -c 'print("{{\"type\":\"text\",\"text\":" + "[" * 100000)'
{RESULT}"#
        ),
    );
    let out = ctx.run_agent_cmd(&agent, &["hostile output"]);
    out.assert_exit(0);
    let reasons: Vec<UnparsedReason> = unparsed(&ctx).into_iter().map(|(r, _)| r).collect();
    assert_eq!(reasons.len(), 4, "{reasons:?}");
    ctx.ended_as(Outcome::Completed);
}

#[test]
fn a_100_mb_line_is_counted_too_long_without_being_held() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script(
        "huge-line",
        &format!("head -c 100000000 /dev/zero | tr '\\0' 'a'\necho\n{RESULT}"),
    );
    let out = ctx.run_agent_cmd(&agent, &["one huge line"]);
    out.assert_exit(0);
    assert_eq!(
        unparsed(&ctx),
        [(UnparsedReason::TooLong, 100_000_000)],
        "the huge line is one too-long line"
    );
    let r = ctx.ended_as(Outcome::Completed);
    assert!(r.unparsed_lines.samples[0].head.len() <= 256);
}

#[test]
fn a_million_lines_all_arrive_in_the_log_in_order() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script(
        "million",
        &format!(
            r#"awk 'BEGIN {{ for (i = 0; i < 1000000; i++) printf "{{\"type\":\"text\",\"text\":\"%d\"}}\n", i }}'
{RESULT}"#
        ),
    );
    let out = ctx.run_agent_cmd(&agent, &["a million lines"]);
    out.assert_exit(0);
    let log = std::fs::read_to_string(ctx.run_dir().join("events.ndjson")).unwrap();
    let texts: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(r#""type":"text""#))
        .collect();
    assert_eq!(texts.len(), 1_000_000);
    assert!(texts[999_999].contains(r#""text":"999999""#));
    ctx.ended_as(Outcome::Completed);
}

#[test]
fn sighup_to_runbook_interrupts_the_run_with_its_receipt() {
    let ctx = TestContext::new();
    let agent = ctx.recorded_agent_script(
        "waiter",
        "echo '{\"type\":\"text\",\"text\":\"working\"}'\nexec sleep 600",
    );
    let mut cmd = ctx.runbook(&["run", "--agent-cmd", &agent, "wait"]);
    let child = ctx.spawn_until(&mut cmd, "text");
    kill(Pid::from_raw(child.id() as i32), Signal::SIGHUP).unwrap();
    let out = finish(child, LIMIT);
    out.assert_exit(130);
    let r = ctx.ended_as(Outcome::Interrupted);
    assert!(r.message.contains("SIGHUP"), "{}", r.message);
    ctx.assert_agent_gone();
}

#[test]
fn two_hundred_concurrent_runs_each_leave_their_own_whole_record() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script(
        "quick",
        &format!("echo '{{\"type\":\"text\",\"text\":\"hi\"}}'\n{RESULT}"),
    );
    let children: Vec<_> = (0..200)
        .map(|i| {
            ctx.runbook(&["run", "--agent-cmd", &agent, &format!("task {i}")])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn runbook")
        })
        .collect();
    for child in children {
        finish(child, Duration::from_secs(120)).assert_exit(0);
    }
    let dirs = ctx.run_dirs();
    assert_eq!(dirs.len(), 200, "one directory per run");
    let mut prompts: Vec<String> = dirs
        .iter()
        .map(|d| {
            let text = std::fs::read_to_string(d.join("result.json")).expect("a receipt");
            let r: serde_json::Value = serde_json::from_str(&text).expect("a whole receipt");
            assert_eq!(r["outcome"], "completed");
            r["prompt"].as_str().unwrap().to_owned()
        })
        .collect();
    prompts.sort();
    prompts.dedup();
    assert_eq!(prompts.len(), 200, "every run kept its own prompt");
}
