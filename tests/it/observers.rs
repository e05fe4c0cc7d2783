//! `--on-event CMD` and `--events-to PATH`: every event, live, to other programs, each line with
//! its run's and turn's `meta`; best-effort, so that nothing an observer does can hurt the run.

use std::time::Duration;

use runbook::event::{Outcome, TurnKind};
use serde_json::Value;

use crate::support::{self, TestContext};

/// An agent (universal events) that says `LINES` things (default 3) and completes; resumed, it
/// says one more.
const TALKER: &str = r#"
echo '{"type":"session.started","session_id":"s-1"}'
i=0; while [ $i -lt "${LINES:-3}" ]; do echo "{\"type\":\"text\",\"text\":\"line $i\"}"; i=$((i+1)); done
echo '{"type":"agent.result","ok":true}'
"#;

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// An observer line without its `meta`: the event as `--json` prints it.
fn without_meta(mut line: Value) -> Value {
    line.as_object_mut().unwrap().remove("meta");
    line
}

#[test]
fn an_observer_gets_every_event_in_order_with_its_turns_meta() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script("talker", TALKER);
    let seen = ctx.work.join("seen.ndjson");
    let copy = ctx.work.join("copy.ndjson");
    let out = support::run(
        &mut ctx.runbook(&[
            "run",
            "--json",
            "--agent-cmd",
            &agent,
            "--name",
            "nightly",
            "--on-event",
            &format!("cat > {}", seen.display()),
            "--events-to",
            copy.to_str().unwrap(),
            "--plan",
            "--yes",
            "--then",
            "once more",
            "say things",
        ]),
        Duration::from_secs(60),
    );
    out.assert_exit(0);
    let (events, receipt) = support::events_and_receipt(&out.stdout);
    // The planning turn, its execution and the `--then` turn.
    let turns: Vec<(u32, TurnKind)> = events
        .iter()
        .filter(|e| matches!(e.kind, runbook::event::EventKind::TurnStarted { .. }))
        .map(|e| (e.turn.index, e.turn.kind))
        .collect();
    assert_eq!(
        turns,
        [
            (0, TurnKind::Start),
            (1, TurnKind::Resume),
            (2, TurnKind::Resume)
        ]
    );
    let json: Vec<Value> = out
        .stdout
        .lines()
        .take(events.len())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for got in [lines(&seen), lines(&copy)] {
        assert_eq!(
            got.len(),
            events.len(),
            "every event, run.finished included"
        );
        for (line, event) in got.iter().zip(&events) {
            let meta = &line["meta"];
            assert_eq!(meta["run_id"], receipt.run_id);
            assert_eq!(meta["run_name"], "nightly");
            assert_eq!(meta["agent"], "custom");
            assert_eq!(meta["turn_index"], event.turn.index);
            let kind = if event.turn.kind == TurnKind::Start {
                "start"
            } else {
                "resume"
            };
            assert_eq!(meta["turn_kind"], kind);
        }
        let plain: Vec<Value> = got.into_iter().map(without_meta).collect();
        assert_eq!(plain, json, "exactly what --json prints, in its order");
    }
    assert_eq!(receipt.name.as_deref(), Some("nightly"));
    assert_eq!(receipt.observers.len(), 2);
    for o in &receipt.observers {
        assert_eq!(o.dropped, 0, "{o:?}");
        assert!(o.problem.is_none(), "{o:?}");
    }
}

#[test]
fn a_slow_observer_misses_events_but_never_holds_the_run_up() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script("talker", TALKER);
    let fast = ctx.work.join("fast.ndjson");
    let mut run = ctx.runbook(&[
        "run",
        "--json",
        "--agent-cmd",
        &agent,
        "--on-event",
        "while read -r line; do sleep 0.1; done",
        "--on-event",
        &format!("cat > {}", fast.display()),
        "say many things",
    ]);
    run.env("LINES", "10000");
    let out = support::run(&mut run, Duration::from_secs(60));
    out.assert_exit(0).assert_stderr_has(
        "observer 1 (while read -r line; do sleep 0.1; done) fell behind: events are dropped",
    );
    assert!(out.took < Duration::from_secs(30), "{:?}", out.took);
    let (events, receipt) = support::events_and_receipt(&out.stdout);
    assert!(events.len() > 10_000);
    let slow = &receipt.observers[0];
    assert!(slow.dropped > 1000, "{slow:?}");
    // Every event but those after its report: the two reports and run.finished.
    assert_eq!(slow.queued + slow.dropped, events.len() as u64 - 3);
    let quick = &receipt.observers[1];
    assert_eq!(quick.dropped, 0, "{quick:?}");
    assert_eq!(lines(&fast).len(), events.len());
    // Told once, not once per event.
    assert_eq!(
        out.stderr.matches("fell behind").count(),
        1,
        "{}",
        out.stderr
    );
}

#[test]
fn observers_that_crash_or_stop_reading_are_told_once_and_the_run_completes() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script("talker", TALKER);
    let mut run = ctx.runbook(&[
        "run",
        "--agent-cmd",
        &agent,
        "--on-event",
        "echo broken >&2; exit 3",
        "--on-event",
        // A duration no other test uses: what is left of it is found by it.
        "sleep 987",
        "--on-event",
        "head -n 1 > /dev/null",
        "say many things",
    ]);
    run.env("LINES", "20000");
    let out = support::run(&mut run, Duration::from_secs(60));
    out.assert_exit(0);
    let receipt = ctx.ended_as(Outcome::Completed);
    let [crashed, asleep, closed] = &receipt.observers[..] else {
        panic!("{:?}", receipt.observers);
    };
    assert!(
        crashed
            .problem
            .as_deref()
            .is_some_and(|p| p.contains("exit 3") || p.contains("closed its input")),
        "{crashed:?}"
    );
    assert!(asleep.dropped > 0 && asleep.problem.is_none(), "{asleep:?}");
    assert!(closed.problem.is_some(), "{closed:?}");
    assert_eq!(
        out.stderr.matches("observer 1 (").count(),
        1,
        "told once, where it happened: {}",
        out.stderr
    );
    let log = std::fs::read_to_string(ctx.run_dir().join("observers/1.stderr.log")).unwrap();
    assert_eq!(log, "broken\n");
    // Nothing of theirs is left running.
    let left = std::process::Command::new("pgrep")
        .args(["-f", "sleep 987"])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&left.stdout)
    );
}

#[test]
fn an_observer_that_cannot_start_is_told_with_its_cause() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script("talker", TALKER);
    let mut run = ctx.runbook(&[
        "run",
        "--agent-cmd",
        &agent,
        "--on-event",
        "no-such-observer-cmd",
        "say many things",
    ]);
    let out = support::run(&mut run, Duration::from_secs(60));
    out.assert_exit(0);
    let cause = "sh: 1: no-such-observer-cmd: not found";
    out.assert_stderr_has(&format!(
        "⚠ observer 1 (no-such-observer-cmd) exited (exit 127): {cause}"
    ));
    // Said once, in the run's own lines (a time, a mark), not as a message of another style.
    let told: Vec<&str> = out.stderr.lines().filter(|l| l.contains(cause)).collect();
    assert_eq!(told.len(), 1, "the cause said once: {}", out.stderr);
    assert!(
        told[0].starts_with('['),
        "a line of the run: {}",
        out.stderr
    );
    assert!(!out.stderr.contains("warning: observer"), "{}", out.stderr);
    assert!(
        !out.stderr.contains("closed its input"),
        "the cause, not its effect: {}",
        out.stderr
    );
    // The log says so as it happened, before the run's end.
    let events = ctx.events();
    let failed = events
        .iter()
        .position(|e| e.kind.type_name() == "observer.failed")
        .unwrap_or_else(|| panic!("an observer.failed event: {:?}", support::types(&events)));
    let finished = events
        .iter()
        .position(|e| e.kind.type_name() == "run.finished")
        .expect("run.finished");
    assert!(failed < finished);
    let receipt = ctx.ended_as(Outcome::Completed);
    let problem = receipt.observers[0].problem.clone().unwrap_or_default();
    assert!(problem.contains("not found"), "{problem}");
}

/// A FIFO in the work dir, with no reader yet.
fn fifo_in(ctx: &TestContext) -> std::path::PathBuf {
    let fifo = ctx.work.join("events.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    fifo
}

#[test]
fn a_fifo_without_a_reader_or_whose_reader_leaves_never_blocks_the_run() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script("talker", TALKER);
    let fifo = fifo_in(&ctx);
    // No reader at all.
    let out = support::run(
        &mut ctx.runbook(&[
            "run",
            "--agent-cmd",
            &agent,
            "--events-to",
            fifo.to_str().unwrap(),
            "say things",
        ]),
        Duration::from_secs(30),
    );
    out.assert_exit(0).assert_stderr_has("has no reader");
    let o = &ctx.ended_as(Outcome::Completed).observers[0];
    assert_eq!(o.written, 0);
    assert!(o.dropped > 0);

    // A reader that takes one line and leaves mid-run.
    let ctx = TestContext::new();
    let agent = ctx.agent_script("talker", &format!("sleep 1\n{TALKER}"));
    let fifo = fifo_in(&ctx);
    let reader = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("head -n 1 {}", fifo.display()))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut run = ctx.runbook(&[
        "run",
        "--agent-cmd",
        &agent,
        "--events-to",
        fifo.to_str().unwrap(),
        "say things",
    ]);
    run.env("LINES", "5000");
    let out = support::run(&mut run, Duration::from_secs(30));
    out.assert_exit(0);
    let first = reader.wait_with_output().unwrap();
    let line: Value = serde_json::from_slice(&first.stdout).unwrap();
    assert_eq!(line["type"], "run.started");
    let o = &ctx.ended_as(Outcome::Completed).observers[0];
    assert!(o.written >= 1 && o.dropped > 0, "{o:?}");
}

#[test]
fn observers_from_runbook_toml_come_first_and_raw_ones_get_the_agents_own_lines() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script("talker", TALKER);
    ctx.write_work(
        "runbook.toml",
        "[[observers]]\ncommand = \"cat > configured.ndjson\"\nraw = true\n\n[[observers]]\ncommand = \"cat > plain.ndjson\"\n",
    );
    let out = support::run(
        &mut ctx.runbook(&[
            "run",
            "--trust",
            "--agent-cmd",
            &agent,
            "--on-event",
            "cat > flagged.ndjson",
            "--on-event-raw",
            "say things",
        ]),
        Duration::from_secs(60),
    );
    out.assert_exit(0);
    let receipt = ctx.ended_as(Outcome::Completed);
    let targets: Vec<&str> = receipt
        .observers
        .iter()
        .map(|o| o.target.as_str())
        .collect();
    assert_eq!(
        targets,
        [
            "cat > configured.ndjson",
            "cat > plain.ndjson",
            "cat > flagged.ndjson"
        ]
    );
    for (file, raw) in [("configured", true), ("plain", false), ("flagged", true)] {
        let got = lines(&ctx.work.join(format!("{file}.ndjson")));
        let text = got
            .iter()
            .find(|l| l["type"] == "text")
            .expect("a text event");
        if raw {
            assert_eq!(text["raw"], r#"{"type":"text","text":"line 0"}"#, "{file}");
        } else {
            assert!(text.get("raw").is_none(), "{file}");
        }
        // runbook's own events come from no line of the agent's.
        assert!(got[0].get("raw").is_none(), "{file}");
    }
}
