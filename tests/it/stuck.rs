//! Loop and stuck detection through the real binary, with the fake agent printing OpenCode's
//! lines: each rule stops (or warns) where it should, and the runs that only look alike never
//! trip one.

use runbook::event::{Event, EventKind, Outcome, StuckRule};

use crate::support::{TestContext, types};

const START: &str = r#"{"type":"step_start","sessionID":"ses_s","part":{"messageID":"msg_1"}}"#;
const MORE: &str = r#"{"type":"step_finish","sessionID":"ses_s","part":{"messageID":"msg_1","reason":"tool-calls","tokens":{"input":10,"output":1},"cost":0.001}}"#;
const DONE: &str = r#"{"type":"text","sessionID":"ses_s","part":{"text":"All done."}}"#;
const STOP: &str = r#"{"type":"step_finish","sessionID":"ses_s","part":{"messageID":"msg_1","reason":"stop","tokens":{"input":10,"output":1},"cost":0.001}}"#;
const HANG: &str = r#"{"$hang": true}"#;

/// One step that calls `tool` with `input` (JSON), ending as `status` with `output` or `error`.
fn call(n: usize, tool: &str, input: &str, exit: i32, output: &str) -> String {
    let output = serde_json::to_string(output).unwrap();
    let state = if exit == 0 {
        format!(r#""status":"completed","input":{input},"output":{output},"metadata":{{"exit":0}}"#)
    } else if tool == "bash" {
        format!(
            r#""status":"completed","input":{input},"output":{output},"metadata":{{"exit":{exit}}}"#
        )
    } else {
        format!(r#""status":"error","input":{input},"error":{output}"#)
    };
    let line = format!(
        r#"{{"type":"tool_use","sessionID":"ses_s","part":{{"tool":"{tool}","callID":"call_{n}","state":{{{state},"time":{{"start":{n},"end":{}}}}}}}}}"#,
        n * 7 + 3
    );
    [START, &line, MORE].join("\n")
}

fn scenario(steps: &[String], end: &str) -> String {
    let mut lines: Vec<&str> = steps.iter().map(String::as_str).collect();
    let tail = [START, DONE, STOP];
    if end == HANG {
        lines.push(HANG);
    } else {
        lines.extend(tail);
    }
    lines.join("\n") + "\n"
}

fn stuck_events(events: &[Event]) -> Vec<(bool, StuckRule, u32)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::StuckWarning(s) => Some((false, s.rule, s.count)),
            EventKind::StuckDetected(s) => Some((true, s.rule, s.count)),
            _ => None,
        })
        .collect()
}

fn cat(n: usize) -> String {
    call(
        n,
        "bash",
        r#"{"command":"cat notes.txt","description":"Show notes"}"#,
        0,
        "remember the milk\n",
    )
}

#[test]
fn five_identical_calls_warn_at_three_and_stop_the_agent_at_five() {
    let ctx = TestContext::new();
    let steps: Vec<String> = (0..5).map(cat).collect();
    let out = ctx.run_fake(&scenario(&steps, HANG), &[]);
    out.assert_exit(10)
        .assert_stderr_has("⟳ bash cat notes.txt: same call, same result 3×")
        .assert_stderr_has("stuck: bash cat notes.txt: same call, same result 5×");
    let receipt = ctx.ended_as(Outcome::Stuck);
    let stuck = receipt.stuck.expect("the receipt says what was repeated");
    assert_eq!((stuck.rule, stuck.count), (StuckRule::Repeat, 5));
    assert_eq!(stuck.tool.as_deref(), Some("bash"));
    assert_eq!(stuck.input.as_deref(), Some("cat notes.txt"));
    assert!(stuck.first_seq < stuck.last_seq);
    let events = ctx.events();
    assert_eq!(
        stuck_events(&events),
        [(false, StuckRule::Repeat, 3), (true, StuckRule::Repeat, 5)]
    );
    // The stop goes through the phase machine, as a budget's does.
    let kinds = types(&events);
    let detected = kinds.iter().position(|t| *t == "stuck.detected").unwrap();
    let stop = kinds.iter().position(|t| *t == "stop.requested");
    assert!(stop.is_some_and(|stop| stop > detected), "{kinds:?}");
    assert!(
        !kinds[detected..].contains(&"tool.started"),
        "no call after the stop: {kinds:?}"
    );
    // The fingerprints are in the log; the output they were made of is not.
    let completed = events.iter().find_map(|e| match &e.kind {
        EventKind::ToolCompleted(end) => Some(end.clone()),
        _ => None,
    });
    let completed = completed.expect("a tool call");
    assert_eq!(completed.input_hash.as_deref().map(str::len), Some(16));
    assert_eq!(completed.result_hash.as_deref().map(str::len), Some(16));
    for file in ["events.ndjson", "result.json"] {
        let text = std::fs::read_to_string(ctx.run_dir().join(file)).unwrap();
        assert!(!text.contains("remember the milk"), "{file}");
    }
    ctx.assert_agent_gone();
}

/// `list` and `stats` tell a stuck run, and what it spent before it was stopped.
#[test]
fn a_stuck_run_is_listed_and_counted_with_what_it_spent() {
    let ctx = TestContext::new();
    let steps: Vec<String> = (0..5).map(cat).collect();
    ctx.run_fake(&scenario(&steps, HANG), &[]).assert_exit(10);
    let list = ctx.run(&["list"]);
    let row = list.stdout.lines().nth(1).unwrap_or_default();
    assert!(row.contains("stuck"), "{}", list.stdout);
    let runs = ctx.run_dir();
    let runs = runs.parent().unwrap().to_str().unwrap();
    let out = ctx.run(&["stats", runs, "--json"]);
    out.assert_exit(0);
    let stats: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(stats["outcomes"], serde_json::json!({"stuck": 1}));
    assert_eq!(stats["cost"]["total_usd"], 0.005, "{stats}");
    assert_eq!(
        stats["stuck"],
        serde_json::json!({"runs": 1, "spent_usd": 0.005, "known_spent_usd": 0.005, "cost_unknown": 0}),
        "{stats}"
    );
    // A completed run beside it spends, but is not counted as stuck.
    let out = ctx.run_fake(&scenario(&[cat(0)], ""), &[]);
    out.assert_exit(0);
    let out = ctx.run(&["stats", runs, "--json"]);
    let stats: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(stats["stuck"]["runs"], 1, "{stats}");
    assert_eq!(stats["stuck"]["spent_usd"], 0.005, "{stats}");
    let out = ctx.run(&["stats", runs]);
    out.assert_exit(0);
    let row = out
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("stuck"));
    assert!(
        row.is_some_and(
            |r| r.contains("1 run stopped going round in circles, having spent $0.0050")
        ),
        "{}",
        out.stdout
    );
    let page = ctx.work.join("stats.html");
    ctx.run(&["stats", runs, "--html", page.to_str().unwrap()])
        .assert_exit(0);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("1 run stopped going round in circles, having spent $0.0050 until then."),
        "{html}"
    );
}

#[test]
fn the_same_test_failing_the_same_way_after_each_edit_is_stuck() {
    let ctx = TestContext::new();
    let mut steps = Vec::new();
    for i in 0..5 {
        let output = format!(
            "\u{1b}[31mtest adds ... FAILED\u{1b}[0m\nleft: 3, right: 4\nfinished in 0.{i}{}s",
            i * 3
        );
        steps.push(call(
            2 * i,
            "bash",
            r#"{"command":"cargo test"}"#,
            101,
            &output,
        ));
        let edit = format!(r#"{{"filePath":"/w/src/lib.rs","oldString":"a","newString":"b{i}"}}"#);
        steps.push(call(2 * i + 1, "edit", &edit, 0, "Edit applied."));
    }
    let out = ctx.run_fake(&scenario(&steps, HANG), &[]);
    out.assert_exit(10)
        .assert_stderr_has("⟳ bash cargo test: same failure 3×");
    let receipt = ctx.ended_as(Outcome::Stuck);
    let stuck = receipt.stuck.expect("what was repeated");
    assert_eq!((stuck.rule, stuck.count), (StuckRule::SameFailure, 5));
    assert_eq!(
        stuck_events(&ctx.events()),
        [
            (false, StuckRule::SameFailure, 3),
            (true, StuckRule::SameFailure, 5)
        ]
    );
}

/// A failing shell command is judged as one whether the agent flags it an error or prints its
/// exit code: the same failure is warned at 3 and stopped at 5 (`same_failure`), never stopped
/// at 3 as the same error; the stop is said once.
#[test]
fn a_shell_failure_the_agent_flags_as_an_error_is_the_same_failure_warned_then_stopped() {
    let ctx = TestContext::new();
    let steps: Vec<String> = (0..5)
        .map(|i| {
            let line = format!(
                r#"{{"type":"tool_use","sessionID":"ses_s","part":{{"tool":"bash","callID":"call_{i}","state":{{"status":"error","input":{{"command":"cargo test"}},"error":"test adds ... FAILED","time":{{"start":{i},"end":{}}}}}}}}}"#,
                i + 1
            );
            [START, &line, MORE].join("\n")
        })
        .collect();
    let out = ctx.run_fake(&scenario(&steps, HANG), &[]);
    out.assert_exit(10)
        .assert_stderr_has("⟳ bash cargo test: same failure 3×");
    assert_eq!(
        stuck_events(&ctx.events()),
        [
            (false, StuckRule::SameFailure, 3),
            (true, StuckRule::SameFailure, 5)
        ]
    );
    assert_eq!(
        out.stderr.matches("same failure 5×").count(),
        1,
        "the stop said more than once:\n{}",
        out.stderr
    );
}

#[test]
fn calls_in_turn_with_unchanged_results_are_stuck() {
    let ctx = TestContext::new();
    let mut steps = Vec::new();
    for i in 0..3 {
        steps.push(call(
            2 * i,
            "read",
            r#"{"filePath":"/w/a.rs"}"#,
            0,
            "fn a() {}",
        ));
        steps.push(call(
            2 * i + 1,
            "read",
            r#"{"filePath":"/w/b.rs"}"#,
            0,
            "fn b() {}",
        ));
    }
    ctx.run_fake(&scenario(&steps, HANG), &[]).assert_exit(10);
    let stuck = ctx
        .ended_as(Outcome::Stuck)
        .stuck
        .expect("what was repeated");
    assert_eq!((stuck.rule, stuck.count), (StuckRule::PingPong, 3));
}

#[test]
fn the_same_error_three_times_in_a_row_is_stuck() {
    let ctx = TestContext::new();
    let steps: Vec<String> = (0..3)
        .map(|i| {
            call(
                i,
                "read",
                r#"{"filePath":"/w/missing.rs"}"#,
                1,
                "File not found: /w/missing.rs",
            )
        })
        .collect();
    ctx.run_fake(&scenario(&steps, HANG), &[]).assert_exit(10);
    let stuck = ctx
        .ended_as(Outcome::Stuck)
        .stuck
        .expect("what was repeated");
    assert_eq!((stuck.rule, stuck.count), (StuckRule::SameError, 3));
}

#[test]
fn with_stuck_warn_the_agent_is_warned_and_goes_on() {
    let ctx = TestContext::new();
    let steps: Vec<String> = (0..6).map(cat).collect();
    ctx.run_fake(&scenario(&steps, ""), &["--stuck", "warn"])
        .assert_exit(0)
        .assert_stderr_has("⟳ bash cat notes.txt: same call, same result 5×");
    ctx.ended_as(Outcome::Completed);
    assert_eq!(
        stuck_events(&ctx.events()),
        [(false, StuckRule::Repeat, 3), (false, StuckRule::Repeat, 5)]
    );
}

#[test]
fn with_stuck_off_nothing_is_said() {
    let ctx = TestContext::new();
    let steps: Vec<String> = (0..6).map(cat).collect();
    ctx.run_fake(&scenario(&steps, ""), &["--stuck", "off"])
        .assert_exit(0);
    assert_eq!(stuck_events(&ctx.events()), []);
}

#[test]
fn a_bad_stuck_mode_is_refused_with_what_it_may_be() {
    let ctx = TestContext::new();
    let out = ctx.run_fake(&scenario(&[], ""), &["--stuck", "sometimes"]);
    out.assert_exit(2).assert_stderr_has("sometimes");
    let mut ctx = TestContext::new();
    ctx.env("RUNBOOK_STUCK", "loud");
    let out = ctx.run_fake(&scenario(&[], ""), &[]);
    out.assert_exit(2)
        .assert_stderr_has("RUNBOOK_STUCK")
        .assert_stderr_has("\"off\", \"warn\", \"stop\"");
}

/// Runs that look like loops and are not: none may warn.
#[test]
fn work_that_only_looks_alike_never_trips_a_rule() {
    let ctx = TestContext::new();
    let mut steps = Vec::new();
    let mut n = 0;
    let mut next = |tool: &str, input: &str, exit: i32, output: &str| {
        n += 1;
        call(n, tool, input, exit, output)
    };
    // Polling whose output changes.
    for pct in [10, 30, 55, 80, 95, 100] {
        steps.push(next(
            "bash",
            r#"{"command":"gh run view 7"}"#,
            0,
            &format!("in progress: {pct}%"),
        ));
    }
    // A TDD loop: fail A, edit, fail B, edit, pass.
    steps.push(next(
        "bash",
        r#"{"command":"cargo test"}"#,
        101,
        "left: 1, right: 2",
    ));
    steps.push(next(
        "edit",
        r#"{"filePath":"/w/src/lib.rs","newString":"1"}"#,
        0,
        "ok",
    ));
    steps.push(next(
        "bash",
        r#"{"command":"cargo test"}"#,
        101,
        "left: 2, right: 3",
    ));
    steps.push(next(
        "edit",
        r#"{"filePath":"/w/src/lib.rs","newString":"2"}"#,
        0,
        "ok",
    ));
    steps.push(next(
        "bash",
        r#"{"command":"cargo test"}"#,
        0,
        "test result: ok",
    ));
    // Twenty edits to twenty files, each with the same answer.
    for i in 0..20 {
        let input = format!(r#"{{"filePath":"/w/src/m{i}.rs","oldString":"x","newString":"y"}}"#);
        steps.push(next("edit", &input, 0, "Edit applied successfully."));
    }
    // The same `ls` twice, with a file created between.
    steps.push(next("bash", r#"{"command":"ls"}"#, 0, "a\n"));
    steps.push(next(
        "write",
        r#"{"filePath":"/w/b","content":""}"#,
        0,
        "Wrote file",
    ));
    steps.push(next("bash", r#"{"command":"ls"}"#, 0, "a\nb\n"));
    // A call refused five times is the stall logic's to judge, not a loop.
    for _ in 0..5 {
        steps.push(START.to_owned() + "\n" + r#"{"type":"tool_use","sessionID":"ses_s","part":{"tool":"bash","callID":"call_d","state":{"status":"error","input":{"command":"rm -rf /"},"error":"The user rejected permission to use this specific tool call."}}}"# + "\n" + MORE);
    }
    ctx.run_fake(&scenario(&steps, ""), &["--permissions", "workspace"])
        .assert_exit(0);
    ctx.ended_as(Outcome::Completed);
    assert_eq!(stuck_events(&ctx.events()), []);
}

/// The run's own output, replayed, is judged the same way as it was live.
#[test]
fn a_replayed_transcript_gets_the_same_verdict() {
    let ctx = TestContext::new();
    let steps: Vec<String> = (0..5).map(cat).collect();
    ctx.run_fake(&scenario(&steps, HANG), &[]).assert_exit(10);
    let log = ctx.run_dir().join("stdout.log");
    let out = ctx.run(&["replay", log.to_str().unwrap(), "--instant", "--json"]);
    let (events, receipt) = crate::support::events_and_receipt(&out.stdout);
    assert_eq!(receipt.outcome, Outcome::Stuck, "{}", receipt.message);
    let stuck = receipt
        .stuck
        .expect("the replay's receipt says what was repeated");
    assert_eq!((stuck.rule, stuck.count), (StuckRule::Repeat, 5));
    assert_eq!(
        stuck_events(&events),
        [(false, StuckRule::Repeat, 3), (true, StuckRule::Repeat, 5)],
        "{:?}",
        types(&events)
    );
}

#[test]
fn each_rule_stops_where_the_configuration_says() {
    let ctx = TestContext::new();
    ctx.write_global_config("stuck_repeat = 4\n");
    let steps: Vec<String> = (0..4).map(cat).collect();
    ctx.run_fake(&scenario(&steps, HANG), &[]).assert_exit(10);
    assert_eq!(
        stuck_events(&ctx.events()),
        [(false, StuckRule::Repeat, 2), (true, StuckRule::Repeat, 4)]
    );

    // 0 turns a rule off: three identical errors are then only a repeat, warned of.
    let ctx = TestContext::new();
    let steps: Vec<String> = (0..3)
        .map(|i| {
            call(
                i,
                "read",
                r#"{"filePath":"/w/missing.rs"}"#,
                1,
                "File not found",
            )
        })
        .collect();
    ctx.run_fake(&scenario(&steps, ""), &["--stuck-same-error", "0"])
        .assert_exit(0);
    assert_eq!(stuck_events(&ctx.events()), [(false, StuckRule::Repeat, 3)]);

    let out = ctx.run_fake(&scenario(&[], ""), &["--stuck-repeat", "99"]);
    out.assert_exit(2).assert_stderr_has("99");
}

/// A repair turn that goes round in circles ends the repair, and the run ends on the checks
/// that still fail; an `--agent-cmd` agent's own fingerprints are judged like any others.
#[test]
fn a_repair_attempt_that_gets_stuck_ends_the_repair_not_the_run() {
    let ctx = TestContext::new();
    let agent = ctx.recorded_agent_script(
        "looper",
        r#"prompt="$(eval echo \"\${$#}\")"
echo '{"type":"session.started","session_id":"s-1"}'
case "$prompt" in
  *"checks fail"*)
    for i in 1 2 3 4 5; do
      echo "{\"type\":\"tool.started\",\"call_id\":\"c$i\",\"name\":\"bash\",\"kind\":\"shell\",\"input\":\"cargo test\"}"
      echo "{\"type\":\"tool.completed\",\"call_id\":\"c$i\",\"name\":\"bash\",\"kind\":\"shell\",\"input\":\"cargo test\",\"status\":\"error\",\"input_hash\":\"00aa\",\"result_hash\":\"00bb\"}"
    done
    sleep 30 ;;
esac
echo '{"type":"step.finished","reason":"stop","tokens":{"input":10,"output":1,"reasoning":0,"cache_read":0,"cache_write":0},"cost_usd":0.01}'
echo '{"type":"agent.result","ok":true}'"#,
    );
    let out = ctx.run_agent_cmd(
        &agent,
        &["--check", "test=echo 'left: 3'; exit 1", "fix the test"],
    );
    out.assert_exit(9)
        .assert_stderr_has("stuck: bash cargo test: same failure 5×");
    let receipt = ctx.ended_as(Outcome::ChecksFailed);
    // The verdict says the repair ended because the agent went round in circles.
    let why = "repair stopped after 1 attempt: the agent went round in circles and was stopped";
    assert!(receipt.message.contains(why), "{}", receipt.message);
    out.assert_stderr_has(why);
    let repair = receipt.repair.expect("a repair record");
    assert_eq!(repair.stopped, Some(runbook::event::RepairStop::Stuck));
    assert_eq!(repair.attempts.len(), 1);
    ctx.assert_agent_gone();
}

/// Every threshold in a `[stuck]` section, the same as the flat `stuck_*` keys: applied to the
/// run, shown by `runbook config` with the file, line and column it came from.
#[test]
fn the_stuck_section_sets_each_threshold_and_config_says_where() {
    let ctx = TestContext::new();
    ctx.write_work(
        "runbook.toml",
        "model = \"x/y\"\n\n[stuck]\nmode = \"warn\"\nrepeat = 4\nsame_failure = 6\n  same_error = 0\nping_pong = 7\nmonologue = 8\n",
    );
    let steps: Vec<String> = (0..4).map(cat).collect();
    ctx.run_fake(&scenario(&steps, ""), &[]).assert_exit(0);
    // `warn`: no stop, only the warnings, at 2 and at 4.
    assert_eq!(
        stuck_events(&ctx.events()),
        [(false, StuckRule::Repeat, 2), (false, StuckRule::Repeat, 4)]
    );
    let out = ctx.run(&["config", "--json"]);
    out.assert_exit(0);
    let config: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let file = ctx.work.join("runbook.toml").display().to_string();
    let expected = [
        ("stuck", serde_json::json!("warn"), 4, 1),
        ("stuck_repeat", serde_json::json!(4), 5, 1),
        ("stuck_same_failure", serde_json::json!(6), 6, 1),
        ("stuck_same_error", serde_json::json!(0), 7, 3),
        ("stuck_ping_pong", serde_json::json!(7), 8, 1),
        ("stuck_monologue", serde_json::json!(8), 9, 1),
    ];
    let settings = config["settings"].as_array().unwrap();
    for (key, value, line, column) in expected {
        let s = settings.iter().find(|s| s["key"] == key).unwrap();
        assert_eq!(s["value"], value, "{key}: {s}");
        assert_eq!(s["from"]["file"], file.as_str(), "{key}: {s}");
        assert_eq!(
            (s["from"]["line"].clone(), s["from"]["column"].clone()),
            (line.into(), column.into()),
            "{key}: {s}"
        );
    }
    // The human listing names the place too.
    let out = ctx.run(&["config", "--wide"]);
    let row = out
        .stdout
        .lines()
        .find(|l| l.starts_with("stuck_repeat"))
        .unwrap_or_default();
    assert!(row.contains("runbook.toml:5:1"), "{}", out.stdout);
    // A flag still beats the file.
    let steps: Vec<String> = (0..4).map(cat).collect();
    ctx.run_fake(&scenario(&steps, HANG), &["--stuck", "stop"])
        .assert_exit(10);
}

/// A key the `[stuck]` section does not have, a bad value in it, or a threshold set both in
/// the section and as a flat key: one line with the file, line and column, and nothing runs.
#[test]
fn a_bad_stuck_section_is_one_line_saying_where() {
    let cases = [
        (
            "[stuck]\nrepeat = 4\nrepaet = 5\n",
            "runbook.toml:3:1: unknown key `repaet` in [stuck]; did you mean `repeat`?",
        ),
        (
            "[stuck]\nfrobnicate = 1\n",
            "runbook.toml:2:1: unknown key `frobnicate` in [stuck]; expected one of mode, repeat, same_failure, same_error, ping_pong, monologue",
        ),
        (
            "[stuck]\nrepeat = \"many\"\n",
            "runbook.toml:2:10: `stuck_repeat`: expected",
        ),
        (
            "[stuck]\nmode = \"loud\"\n",
            "runbook.toml:2:8: `stuck`: expected one of",
        ),
        (
            "stuck_repeat = 4\n[stuck]\nrepeat = 5\n",
            "runbook.toml:3:1: `stuck_repeat` is set twice, as `stuck_repeat` and as `repeat` in [stuck]; keep one",
        ),
        (
            "[stuck]\nsame_error = 2\n[agents.opencode]\nbin = \"x\"\n",
            "",
        ),
        ("stuck = 3\n", "runbook.toml:1:9: `stuck`: expected one of"),
    ];
    for (toml, needle) in cases {
        let ctx = TestContext::new();
        ctx.write_work("runbook.toml", toml);
        let out = ctx.run(&["config"]);
        if needle.is_empty() {
            out.assert_exit(0);
            continue;
        }
        out.assert_exit(2);
        let expected = format!("error: {}/{needle}", ctx.work.display());
        assert!(
            out.stderr.starts_with(&expected),
            "{toml:?}:\n  got {}\n want {expected}",
            out.stderr.trim()
        );
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    }
}

/// An `--agent-cmd` agent that loops until it is told what it repeats; `session` is whether it
/// announces a session runbook can resume.
fn looping_agent(ctx: &TestContext, session: bool) -> String {
    let announce = if session {
        r#"echo '{"type":"session.started","session_id":"s-1"}'"#
    } else {
        ""
    };
    ctx.recorded_agent_script(
        "looper",
        &format!(
            r#"prompt="$(eval echo \"\${{$#}}\")"
{announce}
case "$prompt" in
  *"Change approach"*)
    [ "$RUNBOOK_RESUME_SESSION" = s-1 ] || exit 7
    echo '{{"type":"text","text":"The fixture is missing; I cannot go on without it."}}' ;;
  *)
    for i in 1 2 3 4 5; do
      echo "{{\"type\":\"tool.started\",\"call_id\":\"c$i\",\"name\":\"bash\",\"kind\":\"shell\",\"input\":\"cat notes.txt\"}}"
      echo "{{\"type\":\"tool.completed\",\"call_id\":\"c$i\",\"name\":\"bash\",\"kind\":\"shell\",\"input\":\"cat notes.txt\",\"status\":\"ok\",\"input_hash\":\"00aa\",\"result_hash\":\"00bb\"}}"
    done
    sleep 30 ;;
esac
echo '{{"type":"step.finished","reason":"stop","tokens":{{"input":10,"output":1,"reasoning":0,"cache_read":0,"cache_write":0}},"cost_usd":0.01}}'
echo '{{"type":"agent.result","ok":true}}'"#
        ),
    )
}

/// A native session is nudged by resuming it with the nudge for its prompt; one that cannot
/// be resumed is stopped as with `--stuck stop`, and that is said once.
#[test]
fn with_stuck_nudge_a_resumable_session_is_resumed_with_the_nudge_and_another_is_stopped() {
    let ctx = TestContext::new();
    let agent = looping_agent(&ctx, true);
    let out = ctx.run_agent_cmd(&agent, &["--stuck", "nudge", "read the notes"]);
    out.assert_exit(0)
        .assert_stderr_has("⟳ nudging the agent once");
    // The stuck line says what was repeated, once; the nudge is one line, without the turn's
    // own header repeating runbook's prompt.
    assert_eq!(
        out.stderr.matches("same call, same result 5×").count(),
        1,
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("▶ turn 2"), "{}", out.stderr);
    let receipt = ctx.ended_as(Outcome::Completed);
    assert!(receipt.stuck.is_some_and(|s| s.nudged));
    let kinds = types(&ctx.events());
    assert!(kinds.contains(&"stuck.nudged"), "{kinds:?}");
    ctx.assert_agent_gone();

    let ctx = TestContext::new();
    let agent = looping_agent(&ctx, false);
    let out = ctx.run_agent_cmd(&agent, &["--stuck", "nudge", "read the notes"]);
    out.assert_exit(10).assert_stderr_has(
        "cannot nudge the agent: it announced no session to continue; it was stopped as with --stuck stop",
    );
    assert_eq!(
        out.stderr.matches("cannot nudge").count(),
        1,
        "{}",
        out.stderr
    );
    let receipt = ctx.ended_as(Outcome::Stuck);
    assert!(receipt.stuck.is_some_and(|s| !s.nudged));
    assert!(!types(&ctx.events()).contains(&"stuck.nudged"));
    ctx.assert_agent_gone();
}

/// A provider refusing ten times (429) before the agent goes on, told as `provider.retry` and
/// `provider.error` between the same steps: never a loop.
#[test]
fn a_storm_of_provider_retries_then_success_never_trips_a_rule() {
    let ctx = TestContext::new();
    let agent = ctx.recorded_agent_script(
        "retrier",
        r#"echo '{"type":"session.started","session_id":"s-1"}'
for i in 1 2 3 4 5 6 7 8 9 10; do
  echo '{"type":"step.started"}'
  echo "{\"type\":\"provider.retry\",\"attempt\":$i,\"status\":429,\"message\":\"rate limited\"}"
  echo '{"type":"provider.error","name":"rate_limit","message":"rate limited","status":429,"retryable":true}'
  echo '{"type":"step.finished","reason":"error","tokens":{"input":0,"output":0,"reasoning":0,"cache_read":0,"cache_write":0}}'
done
echo '{"type":"step.started"}'
echo '{"type":"tool.started","call_id":"c1","name":"bash","kind":"shell","input":"cat notes.txt"}'
echo '{"type":"tool.completed","call_id":"c1","name":"bash","kind":"shell","input":"cat notes.txt","status":"ok","input_hash":"00aa","result_hash":"00bb"}'
echo '{"type":"text","text":"Done."}'
echo '{"type":"step.finished","reason":"stop","tokens":{"input":10,"output":1,"reasoning":0,"cache_read":0,"cache_write":0},"cost_usd":0.01}'
echo '{"type":"agent.result","ok":true}'"#,
    );
    ctx.run_agent_cmd(&agent, &["read the notes"])
        .assert_exit(0);
    ctx.ended_as(Outcome::Completed);
    let events = ctx.events();
    let kinds = types(&events);
    assert_eq!(
        kinds.iter().filter(|k| **k == "provider.retry").count(),
        10,
        "{kinds:?}"
    );
    assert_eq!(stuck_events(&events), []);
}
