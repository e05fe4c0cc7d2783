//! What the watchdog makes of a silent agent's CPU use, through the real binary and the fake
//! agent: idle timers (a little CPU now and then) are silence and the stop comes within the
//! timeout and one CPU sample; a tree at work (a compile) is activity however long it is silent;
//! a warning that activity withdraws says so.

use std::time::Duration;

use runbook::event::{ActivitySign, EventKind, Outcome};

use crate::support::{TestContext, types};

const STEP_START: &str = r#"{"type":"step_start","timestamp":1795319488573,"sessionID":"ses_cpu","part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_cpu","type":"step-start"}}"#;
const TEXT: &str = r#"{"type":"text","timestamp":1795319488778,"sessionID":"ses_cpu","part":{"id":"prt_2","messageID":"msg_1","sessionID":"ses_cpu","type":"text","text":"Built."}}"#;
const FINISH: &str = r#"{"type":"step_finish","timestamp":1795319488892,"sessionID":"ses_cpu","part":{"id":"prt_5","reason":"stop","messageID":"msg_1","sessionID":"ses_cpu","type":"step-finish","tokens":{"total":1540,"input":1500,"output":40,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.001}}"#;

/// The CPU sample at an inactivity timeout of `timeout`: a fifth of it, 250 ms at least.
fn sample(timeout: Duration) -> Duration {
    (timeout / 5).max(Duration::from_millis(250))
}

fn count(ctx: &TestContext, type_name: &str) -> usize {
    types(&ctx.events())
        .into_iter()
        .filter(|t| *t == type_name)
        .count()
}

#[test]
fn an_agent_whose_idle_timers_tick_is_stopped_within_the_timeout_and_one_sample() {
    // 5 ms of CPU every 100 ms: about 5% of a core, as a runtime's timers use while it waits on a
    // provider that stopped sending.
    let timeout = Duration::from_secs(3);
    let ctx = TestContext::new();
    let scenario = [
        STEP_START,
        r#"{"$hang_ticking":{"every_ms":100,"burn_ms":5}}"#,
    ]
    .join("\n");
    let out = ctx.run_fake(&scenario, &["--inactivity-timeout", "3s"]);
    out.assert_exit(3);
    let r = ctx.ended_as(Outcome::Hung);
    let d = r.watchdog.expect("a watchdog diagnostic");
    let (quiet, limit) = (
        Duration::from_millis(d.stdout_quiet_ms),
        timeout + sample(timeout),
    );
    assert!(
        quiet >= timeout && quiet <= limit,
        "stopped {quiet:?} after the last output, not within {limit:?}: {d:?}"
    );
    assert!(
        Duration::from_millis(d.cpu_quiet_ms) >= timeout,
        "the timers never counted as work: {d:?}"
    );
    let events = ctx.events();
    let at = |name: &str| {
        events
            .iter()
            .find(|e| e.kind.type_name() == name)
            .map(|e| e.ts)
            .expect(name)
    };
    let waited = at("watchdog.fired")
        .duration_since(at("step.started"))
        .expect("the stop after the step");
    assert!(
        waited <= limit + Duration::from_millis(500),
        "the stop came {waited:?} after the last output"
    );
    assert_eq!(count(&ctx, "watchdog.warning"), 1, "{}", out.stderr);
    assert_eq!(count(&ctx, "watchdog.resumed"), 0, "{}", out.stderr);
    ctx.assert_agent_gone();
}

#[test]
fn a_silent_parallel_build_outlives_the_timeout_many_times_over() {
    // Four jobs, as `make -j4` or cargo runs them: on a loaded machine a single job may get less
    // than the threshold of a core (docs/RELIABILITY.md, "What counts as activity").
    let ctx = TestContext::new();
    let scenario = [
        STEP_START,
        r#"{"$burn_cpu_jobs":{"jobs":4,"wall_ms":9000}}"#,
        TEXT,
        FINISH,
    ]
    .join("\n");
    let out = ctx.run_fake(&scenario, &["--inactivity-timeout", "3s"]);
    out.assert_exit(0);
    ctx.ended_as(Outcome::Completed);
    assert_eq!(count(&ctx, "watchdog.warning"), 0, "{}", out.stderr);
    assert_eq!(count(&ctx, "watchdog.fired"), 0, "{}", out.stderr);
}

#[test]
fn work_after_the_warning_withdraws_it_and_says_how_busy_the_tree_was() {
    let ctx = TestContext::new();
    // Quiet past the warning (at 1.5 s), then a compile before the stop (at 3 s).
    let scenario = [
        STEP_START,
        r#"{"$sleep_ms":1900}"#,
        r#"{"$burn_cpu_jobs":{"jobs":4,"wall_ms":2000}}"#,
        TEXT,
        FINISH,
    ]
    .join("\n");
    let out = ctx.run_fake(&scenario, &["--inactivity-timeout", "3s"]);
    out.assert_exit(0);
    ctx.ended_as(Outcome::Completed);
    let events = ctx.events();
    let t = types(&events);
    let warned = t.iter().position(|&t| t == "watchdog.warning");
    let resumed = t.iter().position(|&t| t == "watchdog.resumed");
    assert!(
        warned.is_some() && resumed > warned,
        "a warning, then its withdrawal: {t:?}"
    );
    assert_eq!(count(&ctx, "watchdog.resumed"), 1, "{t:?}");
    let percent = events
        .iter()
        .find_map(|e| match e.kind {
            EventKind::WatchdogResumed {
                by: ActivitySign::Cpu,
                cpu_percent,
            } => cpu_percent,
            _ => None,
        })
        .expect("withdrawn by the tree's CPU use, with its share");
    assert!(percent >= 20, "{percent}%");
    out.assert_stderr_has(&format!("✓ activity again: cpu {percent}%"));
}
