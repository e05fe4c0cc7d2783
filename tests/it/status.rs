//! `runbook status`, `status --live`, `list` and `replay`: following and inspecting runs from
//! another process.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use runbook::event::{Event, EventKind, Outcome};
use runbook::receipt::Receipt;

use crate::support::{self, TestContext, events_and_receipt, run};

const LIMIT: Duration = Duration::from_secs(60);

const STEP_START: &str = r#"{"type":"step_start","timestamp":1,"sessionID":"ses_live","part":{"id":"p1","messageID":"m1","sessionID":"ses_live","type":"step-start"}}"#;
const STEP_STOP: &str = r#"{"type":"step_finish","timestamp":2,"sessionID":"ses_live","part":{"id":"p9","reason":"stop","messageID":"m1","sessionID":"ses_live","type":"step-finish","tokens":{"total":1540,"input":1500,"output":40,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.0051}}"#;

fn text(n: usize) -> String {
    format!(
        r#"{{"type":"text","timestamp":1,"sessionID":"ses_live","part":{{"id":"t{n}","messageID":"m1","sessionID":"ses_live","type":"text","text":"line {n}"}}}}"#
    )
}

/// An agent that talks for a while: `n` text events `gap_ms` apart, then a clean finish.
fn chatty(n: usize, gap_ms: u64) -> String {
    let mut lines = vec![STEP_START.to_owned()];
    for i in 0..n {
        lines.push(text(i));
        lines.push(format!(r#"{{"$sleep_ms":{gap_ms}}}"#));
    }
    lines.push(STEP_STOP.to_owned());
    lines.join("\n")
}

fn wait_for(what: &str, mut check: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(20);
    while !check() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Starts a run whose agent hangs in its first step, once that step has started.
fn start_hanging_run(ctx: &TestContext) -> std::process::Child {
    let scenario = [STEP_START, r#"{"$hang":true}"#].join("\n");
    ctx.spawn_until(
        &mut ctx.fake_run(&scenario, &["--inactivity-timeout", "1m"]),
        "step.started",
    )
}

#[test]
fn live_follows_a_run_in_another_process_and_sees_every_event_once_in_order() {
    let ctx = TestContext::new();
    let writer = ctx
        .fake_run(&chatty(60, 15), &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the run directory", || !ctx.run_dirs().is_empty());
    let id = ctx.run_dirs()[0]
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    let follower = ctx
        .runbook(&["status", "--live", "--json", &id])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let run_out = support::finish(writer, LIMIT);
    let live = support::finish(follower, LIMIT);

    run_out.assert_exit(0);
    assert_eq!(
        live.code(),
        Some(0),
        "status --live exits with the run's exit code: {}",
        live.stderr
    );
    let (events, receipt) = events_and_receipt(&live.stdout);
    assert_eq!(
        events,
        ctx.events(),
        "every logged event, exactly once, in order"
    );
    assert_eq!(receipt, ctx.receipt());
}

#[test]
fn live_shows_the_same_lines_as_the_run_itself() {
    let ctx = TestContext::new();
    let out = ctx.run_fake(&chatty(3, 0), &[]);
    out.assert_exit(0);
    let live = ctx.run(&["status", "--live"]);
    live.assert_exit(0);
    // First a note that the run is over, then the very same view.
    let (note, view) = live.stderr.split_once('\n').unwrap();
    assert!(
        note.contains("has already finished; `--next` waits for the next one"),
        "{note}"
    );
    assert_eq!(
        view, out.stderr,
        "after the run, --live replays the very same view"
    );
    assert!(live.stdout.is_empty());
}

#[test]
fn live_started_before_the_first_event_waits_for_it_and_holds_partial_lines() {
    let ctx = TestContext::new();
    // A finished run to take realistic events from.
    ctx.run_fake(&chatty(2, 0), &[]).assert_exit(0);
    let template = fs::read_to_string(ctx.run_dir().join("events.ndjson")).unwrap();
    let mut lines: Vec<Event> = support::parse_events(&template);
    // The new run's supervisor is this test process: alive until the log is finished.
    if let EventKind::RunStarted(info) = &mut lines[0].kind {
        info.pid = std::process::id();
        info.pid_start = None;
        info.run_id = "20991231-235959-wait1".into();
    }
    let dir = ctx.runs.join("20991231-235959-wait1");
    fs::create_dir(&dir).unwrap();

    let follower = ctx
        .runbook(&["status", "--live", "--json", "wait1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let mut log = fs::File::create(dir.join("events.ndjson")).unwrap();
    for ev in &lines {
        let line = serde_json::to_string(ev).unwrap() + "\n";
        let (a, b) = line.split_at(line.len() / 2);
        log.write_all(a.as_bytes()).unwrap();
        log.flush().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        log.write_all(b.as_bytes()).unwrap();
        log.flush().unwrap();
    }
    let live = support::finish(follower, LIMIT);
    live.assert_exit(0);
    assert!(
        !live.stderr.contains("warning"),
        "half-written lines are not damage: {}",
        live.stderr
    );
    let (events, _) = events_and_receipt(&live.stdout);
    assert_eq!(events, lines);
}

#[test]
fn live_notices_a_killed_supervisor_and_says_abandoned() {
    let ctx = TestContext::new();
    let mut writer = start_hanging_run(&ctx);
    let follower = ctx
        .runbook(&["status", "--live"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    writer.kill().unwrap();
    writer.wait().unwrap();
    let live = support::finish(follower, LIMIT);

    // Even a SIGKILLed runbook takes its agent with it.
    ctx.assert_agent_gone();
    live.assert_exit(7);
    live.assert_stderr_has("✗ abandoned");

    let status = ctx.run(&["status", "--json"]);
    let receipt: Receipt =
        serde_json::from_str(&status.stdout).expect("a receipt built from the log");
    assert_eq!(receipt.outcome, Outcome::Abandoned);
    assert_eq!(receipt.steps, Some(0));

    // Following it afterwards ends with a shown (not logged) ending that continues the sequence.
    let again = ctx.run(&["status", "--live", "--json"]);
    again.assert_exit(7);
    let (events, receipt) = events_and_receipt(&again.stdout);
    let logged = ctx.events();
    assert_eq!(events[..logged.len()], logged[..]);
    let last = events.last().unwrap();
    assert_eq!(last.seq, logged.last().unwrap().seq + 1);
    assert!(
        matches!(&last.kind, EventKind::RunFinished { outcome: Outcome::Abandoned, duration_ms, .. } if *duration_ms > 0)
    );
    assert_eq!(receipt.outcome, Outcome::Abandoned);
}

#[test]
fn status_of_a_running_run_is_built_from_its_log() {
    let ctx = TestContext::new();
    let scenario = [STEP_START, &text(1), r#"{"$hang":true}"#].join("\n");
    let writer = ctx.spawn_until(
        &mut ctx.fake_run(
            &scenario,
            &["--inactivity-timeout", "1m", "--timeout", "20s"],
        ),
        "text",
    );
    let status = ctx.run(&["status", "--json"]);
    let human = ctx.run(&["status"]);
    kill(Pid::from_raw(writer.id() as i32), Signal::SIGINT).unwrap();
    let done = support::finish(writer, LIMIT);
    done.assert_exit(130);

    let receipt: Receipt = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(receipt.outcome, Outcome::Running);
    assert_eq!(receipt.session_id.as_deref(), Some("ses_live"));
    human.assert_stdout_has("outcome   running · the run is in progress");
    human.assert_stdout_has("running for");
}

#[test]
fn runs_are_found_by_latest_prefix_and_random_part_with_clear_errors() {
    let ctx = TestContext::new();
    for _ in 0..2 {
        ctx.run_fake(&chatty(1, 0), &[]).assert_exit(0);
    }
    let ids: Vec<String> = ctx
        .run_dirs()
        .iter()
        .map(|d| d.file_name().unwrap().to_str().unwrap().to_owned())
        .collect();
    let latest = ctx.run(&["status"]);
    assert!(
        latest.stdout.starts_with(&format!("run       {}", ids[1])),
        "{}",
        latest.stdout
    );
    let tail = ids[0].rsplit('-').next().unwrap();
    let by_tail = ctx.run(&["status", tail]);
    by_tail.assert_stdout_has(&ids[0]);

    let ambiguous = ctx.run(&["status", "20"]);
    ambiguous.assert_exit(2);
    ambiguous.assert_stderr_has("`20` matches 2 runs");
    let unknown = ctx.run(&["status", "nope"]);
    unknown.assert_exit(2);
    assert!(
        unknown.stderr.contains("no run matches `nope`") && unknown.stderr.contains(&ids[1]),
        "{}",
        unknown.stderr
    );
    assert_eq!(unknown.stderr.lines().count(), 1);

    let empty = TestContext::new();
    let none = empty.run(&["status"]);
    none.assert_exit(2);
    none.assert_stderr_has("no runs yet");
}

#[test]
fn a_damaged_log_is_reported_not_fatal() {
    let ctx = TestContext::new();
    let mut writer = start_hanging_run(&ctx);
    writer.kill().unwrap();
    writer.wait().unwrap();
    for pid in ctx.surviving_agent_processes() {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
    let log = ctx.run_dir().join("events.ndjson");
    let mut f = fs::OpenOptions::new().append(true).open(&log).unwrap();
    f.write_all(b"{this is not an event}\n{\"seq\":99,\"ts\":\"2026-")
        .unwrap();

    let status = ctx.run(&["status"]);
    status.assert_exit(0);
    status.assert_stdout_has("abandoned");
    let warnings: Vec<&str> = status.stderr.lines().collect();
    assert_eq!(
        warnings.len(),
        1,
        "one damaged line; the partial last line is not damage: {warnings:?}"
    );
    assert!(warnings[0].contains("is not a valid event"), "{warnings:?}");

    fs::write(ctx.run_dir().join("result.json"), "{ half a receipt").unwrap();
    let broken = ctx.run(&["status"]);
    broken.assert_exit(6);
    broken.assert_stderr_has("is not a valid receipt");
    assert_eq!(broken.stderr.lines().count(), 1);
}

#[test]
fn status_and_list_read_well() {
    let mut ctx = TestContext::new();
    ctx.env("FAKE_AGENT_VERSION", "1.18.33");
    ctx.run_fake(&chatty(1, 0), &["-m", "fake/fake-model"])
        .assert_exit(0);
    let denied = r#"{"type":"tool_use","timestamp":1,"sessionID":"ses_live","part":{"type":"tool","tool":"bash","callID":"c1","state":{"status":"error","input":{"command":"echo hi"},"error":"The user rejected permission to use this specific tool call.","time":{"start":1,"end":2}},"id":"p2","sessionID":"ses_live","messageID":"m1"}}"#;
    let finish_tools = STEP_STOP.replace(r#""reason":"stop""#, r#""reason":"tool-calls""#);
    let scenario = [
        STEP_START,
        r#"{"$stderr_raw":"! permission requested: bash (echo hi); auto-rejecting\n"}"#,
        denied,
        &finish_tools,
    ]
    .join("\n");
    ctx.run_fake(&scenario, &[]).assert_exit(1);

    let filters = vec![
        (r"\d{8}-\d{6}-[0-9a-z]{5}", "[RUN_ID]"),
        (
            r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC \([^)]*\)",
            "[STARTED]",
        ),
        (
            r"\d{2}-\d{2} \d{2}:\d{2} (just now|\d+[mhd] ago)",
            "[STARTED]",
        ),
        (r"took \d+(ms|\.\ds)", "took [TIME]"),
        (r"  \d+(ms|\.\ds) +", "  [TIME]  "),
        (r"TIME +STEPS", "TIME  STEPS"),
        (r"TIME +COST", "TIME  COST"),
        (r"AGE +OUTCOME", "AGE  OUTCOME"),
        (r"(just now|\d+m ago) +", "[AGE]  "),
        (r"/\S*/(work|runs)", "[TMP]/$1"),
    ];
    insta::with_settings!({ filters => filters }, {
        let status = ctx.run(&["status"]);
        insta::assert_snapshot!("status_truncated", status.stdout);
        let list = ctx.run(&["list"]);
        insta::assert_snapshot!("list", list.stdout);
    });

    let json = ctx.run(&["list", "--json"]);
    let receipts: Vec<Receipt> = json
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a receipt per line"))
        .collect();
    assert_eq!(
        receipts.iter().map(|r| r.outcome).collect::<Vec<_>>(),
        [Outcome::Truncated, Outcome::Completed]
    );
    let filtered = ctx.run(&["list", "--outcome", "completed", "--json"]);
    assert_eq!(filtered.stdout.lines().count(), 1);
    let here = ctx.run(&["list", "--here", "--agent", "opencode", "-n", "1"]);
    assert_eq!(
        here.stdout.lines().count(),
        2,
        "a header and one row: {}",
        here.stdout
    );
    let elsewhere = run(
        ctx.runbook(&["list", "--here"]).current_dir(ctx.root()),
        LIMIT,
    );
    assert!(
        elsewhere.stdout.is_empty()
            && elsewhere.stderr.contains("none of the 2 runs in ")
            && elsewhere.stderr.contains(" match --here ("),
        "{elsewhere:?}"
    );
}

#[test]
fn a_closed_pipe_ends_list_quietly() {
    let ctx = TestContext::new();
    ctx.run_fake(&chatty(1, 0), &[]).assert_exit(0);
    let template = ctx.run_dir();
    let receipt = fs::read_to_string(template.join("result.json")).unwrap();
    for i in 0..1500 {
        let dir = ctx.runs.join(format!("20250101-{:06}-aaaaa", i));
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("result.json"), &receipt).unwrap();
    }
    let mut child = ctx
        .runbook(&["list", "--all"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let out = support::finish(child, LIMIT);
    assert!(first.starts_with("RUN"), "{first}");
    assert_eq!(out.code(), Some(0), "a closed pipe is not an error");
    assert!(out.stderr.is_empty(), "{}", out.stderr);
}

#[test]
fn replay_shows_a_recorded_transcript_through_the_same_view() {
    let ctx = TestContext::new();
    let fixture = support::fixtures().join("opencode/d_tool_error.stdout.ndjson");
    let out = ctx.run(&["replay", "--instant", fixture.to_str().unwrap()]);
    out.assert_exit(0);
    // The path as the run showed it: relative to where it was recorded.
    out.assert_stderr_has("✗ read missing.txt 9ms: File not found");
    out.assert_stderr_has("✓ completed in 3.9s · 2 steps · 1 tool call (1 failed)");

    let json = ctx.run(&["replay", "--instant", "--json", fixture.to_str().unwrap()]);
    let (events, receipt) = events_and_receipt(&json.stdout);
    assert_eq!(receipt.outcome, Outcome::Completed);
    assert_eq!((receipt.steps, receipt.tool_calls.errors), (Some(2), 1));
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.kind, EventKind::ToolCompleted(t) if t.name == "read"))
    );

    // A runbook event log replays too, and the permission fixture's stderr sidecar is read.
    let denied = support::fixtures().join("opencode/i1_permission_bash_ask.stdout.ndjson");
    let out = ctx.run(&["replay", "--instant", denied.to_str().unwrap()]);
    out.assert_stderr_has("⊘ bash: permission denied (echo hi)");
    out.assert_stderr_has("✗ truncated");

    ctx.run_fake(&chatty(2, 0), &[]).assert_exit(0);
    let log = ctx.run_dir().join("events.ndjson");
    let again = ctx.run(&["replay", "--json", "--speed", "100", log.to_str().unwrap()]);
    let (events, _) = events_and_receipt(&again.stdout);
    assert_eq!(events, ctx.events());
}

#[test]
fn replay_tells_each_agents_transcripts_apart_and_refuses_the_rest_with_one_line() {
    let ctx = TestContext::new();
    for (agent, expected) in [
        ("opencode", "✓ bash"),
        ("claude", "✓ Bash echo hello-from-bash"),
        ("codex", "✓ shell echo hello-from-bash"),
    ] {
        let name = if agent == "opencode" {
            "c_bash"
        } else {
            "shell"
        };
        let file = support::fixtures().join(format!("{agent}/{name}.stdout.ndjson"));
        let out = ctx.run(&["replay", "--instant", file.to_str().unwrap()]);
        assert_eq!(out.code(), Some(0), "{agent}: {}", out.stderr);
        assert!(out.stderr.contains(expected), "{agent}: {}", out.stderr);
        assert!(
            out.stderr.contains("✓ completed"),
            "{agent}: {}",
            out.stderr
        );
    }
    let junk = ctx.root().join("junk.txt");
    fs::write(&junk, "hello\n").unwrap();
    let out = ctx.run(&["replay", junk.to_str().unwrap()]);
    out.assert_exit(2);
    out.assert_stderr_has("pass --agent opencode|claude|codex");
    let missing = ctx.run(&["replay", "/nonexistent.ndjson"]);
    missing.assert_exit(2);
    missing.assert_stderr_has("cannot replay /nonexistent.ndjson: there is no such file");
}

#[test]
fn a_receipt_claiming_absurd_figures_shows_them_unknown_with_the_reason() {
    let ctx = TestContext::new();
    ctx.run_fake(&chatty(1, 0), &[]).assert_exit(0);
    let path = ctx.run_dir().join("result.json");
    let mut receipt: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    receipt["cost"]["usd"] = serde_json::json!(1e308);
    receipt["cost"]["known_usd"] = serde_json::json!(1e308);
    receipt["tokens"]["input"] = serde_json::json!(u64::MAX);
    fs::write(&path, receipt.to_string()).unwrap();
    // No amount or count of 16 digits or more: the absurd figures are not shown as numbers.
    let long_number = |text: &str| {
        text.split(|c: char| !c.is_ascii_digit())
            .any(|digits| digits.len() >= 16)
    };
    for args in [&["status"][..], &["report"][..], &["list"][..]] {
        let out = ctx.run(args);
        out.assert_exit(0);
        assert!(
            !long_number(&out.stdout) && !out.stdout.contains("inf"),
            "{args:?}: {}",
            out.stdout
        );
    }
    let status = ctx.run(&["status"]);
    status
        .assert_stderr_has("the receipt's figure for cost ($1e308) is implausible")
        .assert_stderr_has(
            "the receipt's figure for tokens (18446744073709551615 tokens) is implausible",
        );
    assert_eq!(status.stderr.lines().count(), 2, "{}", status.stderr);
}

#[test]
fn five_thousand_refusals_from_opencode_are_a_few_lines_and_a_count() {
    let ctx = TestContext::new();
    let mut scenario = vec![STEP_START.to_owned()];
    for n in 0..5000 {
        scenario.push(format!(
            r#"{{"$stderr_raw":"! permission requested: bash (rm -rf b{n}); auto-rejecting\n"}}"#
        ));
        scenario.push(format!(
            r#"{{"type":"tool_use","timestamp":1,"sessionID":"ses_live","part":{{"type":"tool","tool":"bash","callID":"c{n}","state":{{"status":"error","input":{{"command":"rm -rf b{n}"}},"error":"The user rejected permission to use this specific tool call.","time":{{"start":1,"end":2}}}},"id":"p{n}","sessionID":"ses_live","messageID":"m1"}}}}"#
        ));
    }
    scenario.push(STEP_STOP.replace(r#""reason":"stop""#, r#""reason":"tool-calls""#));
    let out = ctx.run_fake(&scenario.join("\n"), &[]);
    let receipt = ctx.receipt();
    assert_eq!(receipt.tool_calls.by_name["bash"].denied, 5000);
    let lines = out.stderr.lines().count();
    assert!(lines < 20, "{lines} lines:\n{}", out.stderr);
    out.assert_stderr_has("… and 4,997 more refused (bash)");
}

/// `runbook ARGS` in a terminal `cols` wide, to its end: the screen a person sees.
fn on_a_terminal(ctx: &TestContext, args: &[&str], cols: u16) -> support::pty::Screen {
    let mut cmd = ctx.runbook(args);
    cmd.env("TERM", "xterm-256color");
    let (status, screen) = support::pty::Pty::spawn(cmd, cols).finish();
    assert_eq!(status.code(), Some(0), "{}", screen.text());
    screen
}

/// One real run, then 32 more receipts like it, of outcomes with long names, long prompts and
/// a long model name: 33 runs in all.
fn many_runs(ctx: &TestContext) {
    ctx.run_fake(
        &chatty(1, 0),
        &["-m", "fake/a-model-with-a-rather-long-name"],
    )
    .assert_exit(0);
    let template: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(ctx.run_dir().join("result.json")).unwrap())
            .unwrap();
    let outcomes = [
        "checks_failed",
        "agent_error",
        "budget_exceeded",
        "completed",
    ];
    for i in 0..32 {
        let id = format!("20250101-0000{i:02}-aaaaa");
        let mut r = template.clone();
        r["run_id"] = id.clone().into();
        r["outcome"] = outcomes[i % 4].into();
        r["prompt"] =
            format!("Fix the flaky parser test number {i} and explain why it failed on CI").into();
        let dir = ctx.runs.join(&id);
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("result.json"), r.to_string()).unwrap();
    }
}

/// Every word of the screen is a word of `whole` (the same output with every column whole)
/// or of `also`, or ends in `…` (a cut cell): no word is broken across rows.
#[track_caller]
fn words_are_whole(screen: &support::pty::Screen, whole: &str, also: &[&str]) {
    let known: std::collections::HashSet<&str> = whole
        .split_whitespace()
        .chain(also.iter().copied())
        .collect();
    assert!(
        screen.wrapped_rows().is_empty(),
        "rows ran past the edge:\n{}",
        screen.text()
    );
    for word in screen.text().split_whitespace() {
        let bar = word.chars().all(|c| c == '█');
        let number = word.chars().all(|c| c.is_ascii_digit());
        assert!(
            bar || number || word.ends_with('…') || known.contains(word),
            "{word:?} is not a whole word of the output:\n{}",
            screen.text()
        );
    }
}

#[test]
fn list_and_stats_fit_the_terminal_without_breaking_a_word() {
    let ctx = TestContext::new();
    many_runs(&ctx);
    let wide = ctx.run(&["list", "--all", "--wide"]);
    let limited = ctx.run(&["list", "--wide"]);
    let whole = format!("{} {}", wide.stdout, limited.stderr);
    let note = [
        "AGE", "·", "columns", "left", "out", "to", "fit", "(--wide", "shows", "them)", "it)",
    ];
    for cols in [80, 200] {
        let list = on_a_terminal(&ctx, &["list"], cols);
        words_are_whole(&list, &whole, &note);
        let rows = list.rows().iter().filter(|r| r.starts_with("202")).count();
        assert_eq!(rows, 20, "{}", list.text());
        assert!(
            list.has_row(|r| r.starts_with("20 of 33 runs (--all for every run)")),
            "{}",
            list.text()
        );
        for outcome in ["checks_failed", "agent_error", "budget_exceeded"] {
            assert!(list.text().contains(outcome), "{}", list.text());
        }
        let stats = on_a_terminal(&ctx, &["stats"], cols);
        let stats_wide = ctx.run(&["stats", "--wide"]);
        words_are_whole(&stats, &stats_wide.stdout, &["OK", "MEDIAN"]);
        assert!(stats.text().contains("agent_error 8"), "{}", stats.text());
    }
    let narrow = on_a_terminal(&ctx, &["list"], 80);
    assert!(
        !narrow.text().contains("MODEL") && narrow.has_row(|r| r.contains("columns left out")),
        "{}",
        narrow.text()
    );
    let roomy = on_a_terminal(&ctx, &["list"], 200);
    assert!(
        roomy.has_row(|r| ["MODEL", "STEPS", "CHECKS", "STARTED (UTC)"]
            .iter()
            .all(|h| r.contains(h)))
            // The model whole (it is copied into `-m`), the prompt abbreviated to the room left.
            && roomy.has_row(|r| r.contains("fake/a-model-with-a-rather-long-name")
                && r.contains("Fix the flaky parser test number 31")),
        "{}",
        roomy.text()
    );
    // Not a terminal: 80 columns, or as many as COLUMNS says.
    let piped = ctx.run(&["list"]);
    assert!(
        piped.stdout.lines().all(|l| l.chars().count() <= 80),
        "{}",
        piped.stdout
    );
    piped.assert_stderr_has("20 of 33 runs (--all for every run)");
    let mut cmd = ctx.runbook(&["list"]);
    let columns = run(cmd.env("COLUMNS", "200"), LIMIT);
    assert!(columns.stdout.starts_with("RUN  ") && columns.stdout.contains("MODEL"));
    assert!(
        wide.stdout.lines().any(|l| l.chars().count() > 200),
        "{}",
        wide.stdout
    );
}

#[test]
fn list_json_ends_with_a_line_saying_the_limit_left_runs_out() {
    let ctx = TestContext::new();
    many_runs(&ctx);
    let json = ctx.run(&["list", "--json"]);
    let lines: Vec<&str> = json.stdout.lines().collect();
    assert_eq!(lines.len(), 21, "{}", json.stdout);
    for line in &lines[..20] {
        serde_json::from_str::<Receipt>(line).expect("a receipt");
    }
    let last: serde_json::Value = serde_json::from_str(lines[20]).unwrap();
    assert_eq!(
        last,
        serde_json::json!({"type": "list.limited", "shown": 20, "total": 33})
    );
    let filtered = ctx.run(&["list", "--json", "-n", "2", "--outcome", "agent_error"]);
    let last: serde_json::Value =
        serde_json::from_str(filtered.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(
        last,
        serde_json::json!({"type": "list.limited", "shown": 2, "total": 8})
    );
    let all = ctx.run(&["list", "--json", "--all"]);
    assert_eq!(all.stdout.lines().count(), 33);
    assert!(!all.stdout.contains("list.limited"));
}
