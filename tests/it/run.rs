//! `runbook run` against the fake agent: every outcome, the watchdog, limits, signals, leftovers.

use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use runbook::event::{EventKind, Outcome, ToolStatus, UnparsedReason};

use crate::support::{self, TestContext, run, types};

const LIMIT: Duration = Duration::from_secs(60);

// Real OpenCode lines, trimmed to what the adapter reads.
const STEP_START: &str = r#"{"type":"step_start","timestamp":1795319488573,"sessionID":"ses_test","part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_test","snapshot":"5743","type":"step-start"}}"#;
const STEP_START_2: &str = r#"{"type":"step_start","timestamp":1795319488573,"sessionID":"ses_test","part":{"id":"prt_3","messageID":"msg_2","sessionID":"ses_test","snapshot":"5743","type":"step-start"}}"#;
const TEXT: &str = r#"{"type":"text","timestamp":1795319488778,"sessionID":"ses_test","part":{"id":"prt_2","messageID":"msg_1","sessionID":"ses_test","type":"text","text":"All done.","time":{"start":1795319488595,"end":1795319488772}}}"#;
const TOOL_BASH: &str = r#"{"type":"tool_use","timestamp":1795319495152,"sessionID":"ses_test","part":{"type":"tool","tool":"bash","callID":"call_bash_1","state":{"status":"completed","input":{"command":"echo hi && ls"},"output":"hi\n","metadata":{"output":"hi\n","exit":0,"truncated":false},"title":"echo hi && ls","time":{"start":1795319495034,"end":1795319495136}},"id":"prt_9","sessionID":"ses_test","messageID":"msg_1"}}"#;

fn step_finish(reason: &str, cost: f64) -> String {
    format!(
        r#"{{"type":"step_finish","timestamp":1795319488892,"sessionID":"ses_test","part":{{"id":"prt_5","reason":"{reason}","snapshot":"5743","messageID":"msg_1","sessionID":"ses_test","type":"step-finish","tokens":{{"total":1540,"input":1500,"output":40,"reasoning":0,"cache":{{"write":0,"read":0}}}},"cost":{cost}}}}}"#
    )
}

/// A complete, successful run: one step, a tool call, text, a final `stop`.
fn happy() -> String {
    [STEP_START, TOOL_BASH, TEXT, &step_finish("stop", 0.0051)].join("\n")
}

fn lines(parts: &[&str]) -> String {
    parts.join("\n")
}

/// The signals runbook sent to the agent, in order.
fn signals_sent(ctx: &TestContext) -> Vec<String> {
    ctx.events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::SignalSent { signal, .. } => Some(signal),
            _ => None,
        })
        .collect()
}

#[test]
fn a_completed_run_leaves_a_whole_log_a_receipt_and_the_raw_output() {
    let mut ctx = TestContext::new();
    ctx.env("FAKE_AGENT_VERSION", "1.18.33");
    let out = ctx.run_fake(&happy(), &[]);
    out.assert_exit(0);
    assert!(
        out.stdout.is_empty(),
        "stdout is for results only: {:?}",
        out.stdout
    );

    let r = ctx.ended_as(Outcome::Completed);
    assert_eq!(
        (
            r.steps,
            r.tool_calls.total,
            r.tool_calls.by_name["bash"].calls
        ),
        (Some(1), 1, 1)
    );
    assert_eq!(
        (r.tokens.input, r.tokens.output, r.tokens.total),
        (1500, 40, 1540)
    );
    assert_eq!(r.cost.usd, Some(0.0051));
    assert_eq!(r.session_id.as_deref(), Some("ses_test"));
    assert_eq!(r.agent.version.as_deref(), Some("1.18.33"));
    assert_eq!(r.exit.code, Some(0));

    let events = ctx.events();
    for (i, ev) in events.iter().enumerate() {
        assert_eq!(ev.seq, i as u64, "sequence numbers have no gaps");
        assert_eq!(ev.turn.index, 0);
    }
    let t = types(&events);
    assert_eq!(t.first(), Some(&"run.started"));
    assert_eq!(t.last(), Some(&"run.finished"));
    assert_eq!(t.iter().filter(|&&t| t == "turn.completed").count(), 1);
    let completed = t.iter().position(|&t| t == "turn.completed").unwrap();
    let last_tool = t.iter().rposition(|&t| t == "tool.completed").unwrap();
    assert!(
        completed > last_tool,
        "the turn completes after its last tool call: {t:?}"
    );

    let raw = std::fs::read_to_string(ctx.run_dir().join("stdout.log")).unwrap();
    assert_eq!(raw, happy() + "\n", "the agent's stdout is kept verbatim");
    out.assert_stderr_has("✓ bash echo hi && ls");
    out.assert_stderr_has("completed in");
}

#[test]
fn every_recorded_transcript_ends_with_the_right_outcome_and_exit_code() {
    let cases = [
        ("a_text", Outcome::Completed, 0),
        ("b_read_edit", Outcome::Completed, 0),
        ("c_bash", Outcome::Completed, 0),
        ("d_tool_error", Outcome::Completed, 0),
        ("e1_http500", Outcome::AgentError, 1),
        ("e3_http400", Outcome::AgentError, 1),
        ("h_task_subagent", Outcome::Completed, 0),
        ("i1_permission_bash_ask", Outcome::Truncated, 1),
        ("l_finish_length", Outcome::Truncated, 1),
        ("p_empty_message", Outcome::AgentError, 1),
    ];
    for (name, outcome, code) in cases {
        let ctx = TestContext::new();
        let mut cmd = ctx.fake_run("", &[]);
        cmd.env_remove("FAKE_AGENT_SCENARIO")
            .env(
                "FAKE_AGENT_REPLAY",
                support::fixtures().join("opencode").join(name),
            )
            .env("FAKE_AGENT_SPEED", "0");
        let out = run(&mut cmd, LIMIT);
        assert_eq!(out.code(), Some(code), "{name}: {}", out.stderr);
        let r = ctx.receipt();
        assert_eq!(r.outcome, outcome, "{name}: {}", r.message);
        let raw = std::fs::read(ctx.run_dir().join("stdout.log")).unwrap();
        let recorded =
            std::fs::read(support::fixtures().join(format!("opencode/{name}.stdout.ndjson")))
                .unwrap();
        assert_eq!(
            raw, recorded,
            "{name}: raw stdout differs from what the agent wrote"
        );
        let t = types(&ctx.events());
        let ends = t
            .iter()
            .filter(|&&t| t == "turn.completed" || t == "turn.failed")
            .count();
        assert_eq!(ends, 1, "{name}: exactly one turn end: {t:?}");
    }
}

#[test]
fn a_stream_that_stops_inside_a_step_is_truncated_even_with_exit_zero() {
    let ctx = TestContext::new();
    let out = ctx.run_fake(&lines(&[STEP_START, TEXT]), &[]);
    out.assert_exit(1);
    let r = ctx.ended_as(Outcome::Truncated);
    assert!(r.message.contains("inside a step"), "{}", r.message);
}

#[test]
fn a_last_step_asking_for_tool_calls_is_truncated() {
    let ctx = TestContext::new();
    let out = ctx.run_fake(&lines(&[STEP_START, &step_finish("tool-calls", 0.01)]), &[]);
    out.assert_exit(1);
    ctx.ended_as(Outcome::Truncated);
}

#[test]
fn a_nonzero_exit_after_finished_work_is_an_agent_error() {
    let ctx = TestContext::new();
    let out = ctx.run_fake(&format!("{}\n{{\"$exit\":3}}", happy()), &[]);
    out.assert_exit(1);
    let r = ctx.receipt();
    assert_eq!((r.outcome, r.exit.code), (Outcome::AgentError, Some(3)));
}

#[test]
fn an_agent_dying_of_a_signal_is_killed() {
    let ctx = TestContext::new();
    let out = ctx.run_fake(
        &format!("{STEP_START}\n{{\"$kill_self\":\"SIGSEGV\"}}"),
        &[],
    );
    out.assert_exit(1);
    let r = ctx.receipt();
    assert_eq!((r.outcome, r.exit.signal), (Outcome::Killed, Some(11)));
    assert!(r.message.contains("SIGSEGV"), "{}", r.message);
}

#[test]
fn unreadable_lines_become_unparsed_events_and_the_run_goes_on() {
    let ctx = TestContext::new();
    let scenario = lines(&[
        STEP_START,
        "this is not json",
        r#"{"$stdout_hex":"7b 22 61 22 3a 22 ff fe 22 7d 0a"}"#,
        r#"{"$long_line":50000000}"#,
        r#"{"type":"brand_new_event","sessionID":"ses_test"}"#,
        TEXT,
        &step_finish("stop", 0.001),
    ]);
    let out = ctx.run_fake(&scenario, &[]);
    out.assert_exit(0);
    let reasons: Vec<UnparsedReason> = ctx
        .events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::Unparsed(u) => Some(u.reason),
            _ => None,
        })
        .collect();
    assert_eq!(
        reasons,
        [
            UnparsedReason::NotJson,
            UnparsedReason::NotUtf8,
            UnparsedReason::TooLong,
            UnparsedReason::UnknownType
        ]
    );
    let r = ctx.receipt();
    assert_eq!(r.unparsed_lines.count, 4);
    assert_eq!(r.unparsed_lines.samples[2].bytes, 50_000_000);
    assert!(
        r.unparsed_lines.samples[2].head.len() <= 256,
        "only the head of a huge line is kept"
    );
    assert_eq!(r.outcome, Outcome::Completed);
    out.assert_stderr_has("unreadable output line");
    out.assert_stderr_has("output of a kind runbook does not know");
}

#[test]
fn the_watchdog_stops_a_silent_agent_and_says_why() {
    let ctx = TestContext::new();
    let scenario = lines(&[
        STEP_START,
        r#"{"$sleep_ms":200}"#,
        r#"{"$stderr":"connecting to provider"}"#,
        r#"{"$hang":true}"#,
    ]);
    let out = ctx.run_fake(&scenario, &[]);
    out.assert_exit(3);
    let r = ctx.ended_as(Outcome::Hung);
    let d = r.watchdog.expect("a watchdog diagnostic");
    assert_eq!(d.timeout_ms, 2000);
    assert!(d.stdout_quiet_ms >= 2000 && d.cpu_quiet_ms >= 2000, "{d:?}");
    assert_eq!((d.open_step, d.completed_steps), (Some(1), Some(0)));
    assert_eq!(d.last_event.as_deref(), Some("stderr"));
    assert_eq!(d.stderr_tail, ["connecting to provider"]);
    let t = types(&ctx.events());
    let warn = t
        .iter()
        .position(|&t| t == "watchdog.warning")
        .expect("a warning first");
    let fired = t
        .iter()
        .position(|&t| t == "watchdog.fired")
        .expect("fired");
    assert!(warn < fired && t.contains(&"signal.sent"), "{t:?}");
    out.assert_stderr_has("watchdog: no activity for 2.0s");
    ctx.assert_agent_gone();
}

#[test]
fn a_silent_but_busy_agent_is_not_hung() {
    // Several threads, or jobs, as a runtime or a build has: on a loaded machine a single one may
    // get less than the watchdog's 20% of a core (docs/RELIABILITY.md, "What counts as activity").
    for directive in [
        r#"{"$burn_cpu_threads":{"threads":4,"wall_ms":4000}}"#,
        r#"{"$burn_cpu_jobs":{"jobs":4,"wall_ms":4000}}"#,
    ] {
        let ctx = TestContext::new();
        let scenario = lines(&[STEP_START, directive, TEXT, &step_finish("stop", 0.001)]);
        let out = ctx.run_fake(&scenario, &["--inactivity-timeout", "1500ms"]);
        assert_eq!(out.code(), Some(0), "{directive}: {}", out.stderr);
        assert_eq!(ctx.receipt().outcome, Outcome::Completed, "{directive}");
    }
}

#[test]
fn an_agent_that_ignores_sigterm_is_killed_after_the_grace_period() {
    let ctx = TestContext::new();
    let scenario = lines(&[
        STEP_START,
        r#"{"$ignore_sigterm":true}"#,
        r#"{"$hang":true}"#,
    ]);
    let out = ctx.run_fake(&scenario, &[]);
    out.assert_exit(3);
    let signals = signals_sent(&ctx);
    assert_eq!(signals, ["SIGTERM", "SIGKILL"]);
    ctx.assert_agent_gone();
}

#[test]
fn a_grandchild_holding_stdout_open_is_ended_after_the_agent_exits() {
    for setsid in [false, true] {
        let ctx = TestContext::new();
        let spawn = format!(r#"{{"$spawn_grandchild":{{"sleep_ms":60000,"setsid":{setsid}}}}}"#);
        let scenario = lines(&[STEP_START, &spawn, TEXT, &step_finish("stop", 0.001)]);
        let out = ctx.run_fake(&scenario, &[]);
        assert_eq!(out.code(), Some(0), "setsid {setsid}: {}", out.stderr);
        ctx.ended_as(Outcome::Completed);
        assert!(
            out.took < Duration::from_secs(30),
            "runbook waited for the grandchild ({:?})",
            out.took
        );
        ctx.assert_agent_gone();
    }
}

#[test]
fn a_leftover_process_is_ended_even_when_it_closed_its_output() {
    let ctx = TestContext::new();
    // The grandchild keeps running after the agent exits, with the pipes closed by the agent's exit
    // only once it exits too; a setsid grandchild escapes the group.
    let scenario = lines(&[
        r#"{"$spawn_grandchild":{"sleep_ms":60000,"setsid":true}}"#,
        &happy(),
    ]);
    let out = ctx.run_fake(&scenario, &[]);
    out.assert_exit(0);
    ctx.assert_agent_gone();
}

#[test]
fn the_wall_clock_timeout_stops_the_run() {
    let ctx = TestContext::new();
    let scenario = lines(&[STEP_START, r#"{"$hang":true}"#]);
    let out = ctx.run_fake(
        &scenario,
        &["--inactivity-timeout", "1m", "--timeout", "1s"],
    );
    out.assert_exit(5);
    let r = ctx.ended_as(Outcome::TimedOut);
    assert_eq!(r.limits.timeout, Some(Duration::from_secs(1)));
    ctx.assert_agent_gone();
}

#[test]
fn crossing_the_budget_stops_the_agent() {
    let ctx = TestContext::new();
    let scenario = lines(&[
        STEP_START,
        &step_finish("tool-calls", 0.04),
        STEP_START_2,
        &step_finish("tool-calls", 0.07),
        r#"{"$hang":true}"#,
    ]);
    let out = ctx.run_fake(
        &scenario,
        &["--max-cost", "0.10", "--inactivity-timeout", "1m"],
    );
    out.assert_exit(4);
    let r = ctx.ended_as(Outcome::BudgetExceeded);
    assert!(r.message.contains("--max-cost"), "{}", r.message);
    assert_eq!(
        r.steps,
        Some(2),
        "the step that crossed the budget is counted"
    );
    out.assert_stderr_has("stopping the agent: cost $0.1100 crossed --max-cost $0.10");
    ctx.assert_agent_gone();
}

/// Starts runbook in the background and waits until the agent has said something.
fn start_and_wait_for_agent(
    ctx: &TestContext,
    scenario: &str,
    extra: &[&str],
) -> std::process::Child {
    ctx.spawn_until(&mut ctx.fake_run(scenario, extra), "step.started")
}

#[test]
fn ctrl_c_interrupts_the_agent_and_still_writes_a_receipt() {
    let ctx = TestContext::new();
    let child = start_and_wait_for_agent(
        &ctx,
        &lines(&[STEP_START, r#"{"$hang":true}"#]),
        &["--inactivity-timeout", "1m"],
    );
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let out = support::finish(child, LIMIT);
    out.assert_exit(130);
    let r = ctx.ended_as(Outcome::Interrupted);
    assert_eq!(r.steps, Some(0));
    assert!(
        types(&ctx.events()).contains(&"step.started"),
        "what was received is kept"
    );
    ctx.assert_agent_gone();
}

#[test]
fn a_second_ctrl_c_kills_at_once() {
    let ctx = TestContext::new();
    let scenario = lines(&[
        STEP_START,
        r#"{"$ignore_sigterm":true}"#,
        r#"{"$hang":true}"#,
    ]);
    let child = start_and_wait_for_agent(
        &ctx,
        &scenario,
        &["--inactivity-timeout", "1m", "--kill-grace", "1m"],
    );
    let pid = Pid::from_raw(child.id() as i32);
    kill(pid, Signal::SIGINT).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    kill(pid, Signal::SIGINT).unwrap();
    let out = support::finish(child, Duration::from_secs(30));
    out.assert_exit(130);
    let signals = signals_sent(&ctx);
    assert_eq!(
        signals,
        ["SIGTERM", "SIGKILL"],
        "the second Ctrl-C did not wait out the minute of grace"
    );
    ctx.assert_agent_gone();
}

#[test]
fn json_mode_prints_every_event_then_the_receipt_and_nothing_else() {
    let ctx = TestContext::new();
    let out = ctx.run_fake(&happy(), &["--json"]);
    out.assert_exit(0);
    assert!(
        out.stderr.is_empty(),
        "--json keeps stderr quiet: {}",
        out.stderr
    );
    let mut lines: Vec<&str> = out.stdout.lines().collect();
    let receipt: runbook::receipt::Receipt =
        serde_json::from_str(lines.pop().unwrap()).expect("receipt last");
    let events = support::parse_events(&lines.join("\n"));
    assert_eq!(
        events,
        ctx.events(),
        "--json and events.ndjson carry the same events"
    );
    assert_eq!(receipt, ctx.receipt());
    let tools: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCompleted(t) => Some((t.name.as_str(), t.status)),
            _ => None,
        })
        .collect();
    assert_eq!(tools, [("bash", ToolStatus::Ok)]);
}

#[test]
fn stderr_lines_are_logged_and_evented_and_permission_denials_recognised() {
    let ctx = TestContext::new();
    let scenario = lines(&[
        r#"{"$stderr":"warning: slow disk"}"#,
        r#"{"$stderr_raw":"\u001b[93m\u001b[1m! \u001b[0mpermission requested: bash (rm -rf /); auto-rejecting\n"}"#,
        &happy(),
    ]);
    let out = ctx.run_fake(&scenario, &[]);
    out.assert_exit(0);
    let r = ctx.receipt();
    assert_eq!(r.stderr.tail, ["warning: slow disk"]);
    assert_eq!(r.permission_denials.len(), 1);
    assert_eq!(
        (
            r.permission_denials[0].tool.as_str(),
            r.permission_denials[0].detail.as_str()
        ),
        ("bash", "rm -rf /")
    );
    let raw = std::fs::read_to_string(ctx.run_dir().join("stderr.log")).unwrap();
    assert!(
        raw.contains("warning: slow disk") && raw.contains("\u{1b}[93m"),
        "stderr.log keeps the raw bytes"
    );
    out.assert_stderr_has("⊘ bash: permission denied (rm -rf /)");
}

#[test]
fn secrets_in_the_environment_never_reach_the_run_dir_or_the_terminal() {
    let mut ctx = TestContext::new();
    ctx.env("ACME_API_KEY", "sk-acme-0123456789");
    let leak = r#"{"type":"text","timestamp":1,"sessionID":"ses_test","part":{"id":"p","messageID":"msg_1","sessionID":"ses_test","type":"text","text":"key is sk-acme-0123456789"}}"#;
    let scenario = lines(&[
        STEP_START,
        leak,
        r#"{"$stderr":"auth with sk-acme-0123456789"}"#,
        &step_finish("stop", 0.001),
    ]);
    let mut cmd = ctx.fake_run(&scenario, &["-v"]);
    let out = run(&mut cmd, LIMIT);
    out.assert_exit(0);
    ctx.assert_no_run_file_holds("sk-acme-0123456789");
    out.assert_hides("sk-acme-0123456789");
    out.assert_stderr_has("key is [REDACTED]");
}

#[test]
fn the_agent_gets_its_command_line_working_dir_and_a_closed_stdin() {
    let ctx = TestContext::new();
    let sub = ctx.work.join("sub");
    std::fs::create_dir(&sub).unwrap();
    let argv_file = ctx.root().join("argv.json");
    let mut cmd = ctx.fake_run(
        &happy(),
        &[
            "-m",
            "prov/model-x",
            "--cwd",
            sub.to_str().unwrap(),
            "--",
            "--agent",
            "plan",
        ],
    );
    cmd.env("FAKE_AGENT_ARGV_FILE", &argv_file);
    let out = run(&mut cmd, LIMIT);
    out.assert_exit(0);
    let seen: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&argv_file).unwrap()).unwrap();
    let argv: Vec<&str> = seen["argv"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        argv,
        [
            "run",
            "--format",
            "json",
            "--model",
            "prov/model-x",
            "--agent",
            "plan",
            "--",
            "do the thing"
        ]
    );
    assert_eq!(seen["cwd"], sub.to_str().unwrap());
    assert_eq!(ctx.receipt().model.as_deref(), Some("prov/model-x"));
}

#[test]
fn a_missing_agent_is_a_one_line_error_with_its_own_exit_code() {
    let ctx = TestContext::new();
    let out = ctx.run(&["run", "--agent-bin", "/nonexistent/opencode", "hi"]);
    out.assert_exit(127);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    out.assert_stderr_has("/nonexistent/opencode not found");

    let mut cmd = ctx.runbook(&["run", "hi"]);
    cmd.env("PATH", ctx.root());
    let out = run(&mut cmd, LIMIT);
    out.assert_exit(127);
    out.assert_stderr_has("npm install -g opencode-ai");
    assert!(
        ctx.run_dirs().is_empty(),
        "nothing was started, so no run dir"
    );
}

#[test]
fn bad_arguments_are_usage_errors_before_anything_starts() {
    let ctx = TestContext::new();
    let fake = support::fake_agent_bin();
    let fake = fake.to_str().unwrap();
    let not_executable = ctx.write_work("agent.txt", "not a program");
    let not_executable = not_executable.to_str().unwrap().to_owned();
    for (args, needle) in [
        (
            vec!["run", "--agent-bin", fake, "   "],
            "the prompt is empty",
        ),
        (
            vec![
                "run",
                "--agent-bin",
                fake,
                "--inactivity-timeout",
                "soon",
                "x",
            ],
            "expected a duration above zero and at most a day, such as \"90s\"",
        ),
        (
            vec!["run", "--agent-bin", fake, "--max-cost=-3", "x"],
            "--max-cost",
        ),
        (
            vec!["run", "--agent-bin", fake, "--cwd", "/nonexistent/dir", "x"],
            "is not a directory",
        ),
        (
            vec!["run", "--agent-bin", "/tmp", "x"],
            "--agent-bin /tmp is a directory: it must name opencode's executable",
        ),
        (
            vec!["run", "--agent-bin", &not_executable, "x"],
            "is not executable (`chmod +x` it)",
        ),
    ] {
        let out = ctx.run(&args);
        assert_eq!(out.code(), Some(2), "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(needle), "{args:?}: {}", out.stderr);
    }
    assert!(ctx.run_dirs().is_empty());
}

#[test]
fn lines_interleaved_on_both_pipes_keep_each_pipes_order_in_the_log_and_on_stdout() {
    // Lone lines (which the stdout reader may deliver itself) among bursts larger than one
    // small read and stderr lines: each pipe's events stay in the order the agent wrote them.
    // A race would show only now and then: a few runs.
    for _ in 0..4 {
        both_pipes_in_order();
    }
}

fn both_pipes_in_order() {
    let ctx = TestContext::new();
    let pad = "x".repeat(60);
    let mut body = String::new();
    let mut n = 0;
    for round in 0..40 {
        for _ in 0..5 {
            n += 1;
            body.push_str(&format!(
                "printf '%s\\n' '{{\"type\":\"text\",\"text\":\"t{n:05} {pad}\"}}'\n"
            ));
            body.push_str(&format!("echo 'e{n:05}' >&2\n"));
        }
        if round % 8 == 0 {
            body.push_str("cat <<'EOF'\n");
            for _ in 0..300 {
                n += 1;
                body.push_str(&format!(
                    "{{\"type\":\"text\",\"text\":\"t{n:05} {pad}\"}}\n"
                ));
            }
            body.push_str("EOF\n");
        }
    }
    body.push_str("echo '{\"type\":\"agent.result\",\"ok\":true}'\n");
    let agent = ctx.agent_script("both-pipes", &body);
    let out = ctx.run_agent_cmd(
        &agent,
        &["--json", "--inactivity-timeout", "60s", "both pipes"],
    );
    out.assert_exit(0);
    let texts = |events: &[runbook::event::Event]| -> Vec<String> {
        events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Text { text } => Some(text[..6].to_owned()),
                _ => None,
            })
            .collect()
    };
    let logged = ctx.events();
    let expected: Vec<String> = (1..=n).map(|i| format!("t{i:05}")).collect();
    assert_eq!(texts(&logged), expected, "the log keeps stdout's order");
    let (printed, _) = support::events_and_receipt(&out.stdout);
    assert_eq!(texts(&printed), expected, "--json keeps stdout's order");
    let seqs: Vec<u64> = logged.iter().map(|e| e.seq).collect();
    assert!(
        seqs.windows(2).all(|w| w[1] == w[0] + 1),
        "sequence numbers without gaps"
    );
    let stderr: Vec<String> = logged
        .iter()
        .filter_map(|e| {
            let json = serde_json::to_string(&e.kind).unwrap();
            let at = json.find("e0")?;
            Some(json[at..at + 6].to_owned())
        })
        .collect();
    let mut sorted = stderr.clone();
    sorted.sort();
    assert!(!stderr.is_empty(), "stderr lines became events");
    assert_eq!(stderr, sorted, "the log keeps stderr's order");
}
