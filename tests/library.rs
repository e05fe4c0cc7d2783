//! The library: a Rust program runs an agent through `runbook::Run`, gets every event with its
//! meta in its own observers, and the receipt. Its own process (not the `it` binary's): a run
//! in-process installs signal handlers, which should not meet the other tests.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests write their own fixtures"
)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use runbook::event::{Event, EventKind, Outcome, TurnKind};
use runbook::{Meta, Run, RunError};

/// A work dir, a runs dir and an agent script in a temporary directory.
struct Place {
    _dir: tempfile::TempDir,
    work: PathBuf,
    runs: PathBuf,
}

impl Place {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        let runs = dir.path().join("runs");
        std::fs::create_dir_all(&work).unwrap();
        Self {
            work,
            runs,
            _dir: dir,
        }
    }

    /// An executable script of `body` (universal events on stdout), by its path.
    fn agent(&self, body: &str) -> String {
        let path = self.work.join("agent.sh");
        std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    }

    fn run(&self, agent: &str, prompt: &str) -> Run {
        Run::new(prompt)
            .agent_command(agent)
            .cwd(&self.work)
            .runs_dir(&self.runs)
    }

    /// The run's events as its log has them.
    fn logged(&self) -> Vec<Event> {
        let dir = std::fs::read_dir(&self.runs)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.join("events.ndjson").exists())
            .expect("a run directory");
        std::fs::read_to_string(dir.join("events.ndjson"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// Says a few things; planning, it writes a plan; resumed, it says one more.
const TALKER: &str = r##"
prompt="$(eval echo \"\${$#}\")"
echo '{"type":"session.started","session_id":"s-1"}'
case "$prompt" in
  *"You are planning"*) printf '%s\n' '{"type":"text","text":"# Plan\n\n- say things"}' ;;
  *) echo '{"type":"text","text":"one"}'; echo '{"type":"text","text":"two"}' ;;
esac
echo '{"type":"agent.result","ok":true}'
"##;

type Seen = Arc<Mutex<Vec<(Event, Meta)>>>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_gets_every_event_in_order_with_its_meta_and_the_receipt() {
    let place = Place::new();
    let agent = place.agent(TALKER);
    let (sync_seen, async_seen): (Seen, Seen) = Default::default();
    let (s, a) = (Arc::clone(&sync_seen), Arc::clone(&async_seen));
    let receipt = place
        .run(&agent, "say things")
        .name("from a program")
        .plan(true)
        .then("once more")
        .on_event(move |event, meta| s.lock().unwrap().push((event, meta)))
        .on_event_async(move |event, meta| {
            let a = Arc::clone(&a);
            async move { a.lock().unwrap().push((event, meta)) }
        })
        .run()
        .await
        .unwrap();
    assert_eq!(receipt.outcome, Outcome::Completed);
    assert_eq!(receipt.name.as_deref(), Some("from a program"));
    assert!(receipt.plan.is_some());
    let logged = place.logged();
    for seen in [sync_seen, async_seen] {
        let seen = seen.lock().unwrap();
        // The log keeps times to the microsecond.
        let key = |e: &Event| (e.seq, e.turn, e.kind.clone());
        let events: Vec<_> = seen.iter().map(|(e, _)| key(e)).collect();
        assert_eq!(
            events,
            logged.iter().map(key).collect::<Vec<_>>(),
            "every event, in order"
        );
        for (event, meta) in seen.iter() {
            assert_eq!(meta.run_id, receipt.run_id);
            assert_eq!(meta.run_name, "from a program");
            assert_eq!(meta.agent, "custom");
            assert_eq!(meta.turn_index, event.turn.index);
            assert_eq!(meta.turn_kind, event.turn.kind);
        }
        // The planning turn, its execution and the `then` turn.
        let turns: Vec<(u32, TurnKind)> = seen
            .iter()
            .filter(|(e, _)| matches!(e.kind, EventKind::TurnStarted { .. }))
            .map(|(_, m)| (m.turn_index, m.turn_kind))
            .collect();
        assert_eq!(
            turns,
            [
                (0, TurnKind::Start),
                (1, TurnKind::Resume),
                (2, TurnKind::Resume)
            ]
        );
    }
    assert_eq!(receipt.observers.len(), 2);
    assert!(
        receipt
            .observers
            .iter()
            .all(|o| o.dropped == 0 && o.panics == 0)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_or_slow_callback_never_fails_or_holds_up_the_run() {
    let place = Place::new();
    let agent = place.agent(
        r#"echo '{"type":"text","text":"first"}'
sleep 3
i=0; while [ $i -lt 6000 ]; do echo "{\"type\":\"text\",\"text\":\"line $i\"}"; i=$((i+1)); done
echo '{"type":"agent.result","ok":true}'"#,
    );
    let calls = Arc::new(Mutex::new(0u64));
    let counted = Arc::clone(&calls);
    let started = std::time::Instant::now();
    let receipt = place
        .run(&agent, "talk")
        .on_event(move |event, _| {
            *counted.lock().unwrap() += 1;
            // Caught, with the default panic hook's message (and backtrace) on stderr.
            if matches!(&event.kind, EventKind::Text { text } if text == "first") {
                panic!("an observer's bug");
            }
        })
        .on_event(|_, _| std::thread::sleep(std::time::Duration::from_millis(50)))
        .run()
        .await
        .unwrap();
    assert_eq!(receipt.outcome, Outcome::Completed);
    let [panicky, slow] = &receipt.observers[..] else {
        panic!("{:?}", receipt.observers)
    };
    assert_eq!(panicky.panics, 1, "{panicky:?}");
    assert!(
        *calls.lock().unwrap() > 6000,
        "it got the events after its panic"
    );
    assert!(slow.dropped > 1000, "{slow:?}");
    // 6,000 events at 50 ms each would be five minutes; the run ends when the agent does.
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_options_are_usage_errors_and_start_nothing() {
    let place = Place::new();
    let agent = place.agent(TALKER);
    let err = place
        .run(&agent, "x")
        .max_cost(-1.0)
        .run()
        .await
        .unwrap_err();
    assert!(
        matches!(&err, RunError::Usage(m) if m.contains("max-cost") && !m.contains('\n')),
        "{err:?}"
    );
    let err = place.run(&agent, "  ").run().await.unwrap_err();
    assert!(
        matches!(&err, RunError::Usage(m) if m.contains("prompt is empty")),
        "{err:?}"
    );
    let err = Run::new("x")
        .agent(runbook::Agent::Codex)
        .agent_bin("/nonexistent/codex")
        .cwd(&place.work)
        .runs_dir(&place.runs)
        .run()
        .await
        .unwrap_err();
    assert!(
        matches!(&err, RunError::Usage(m) if m.contains("/nonexistent/codex")),
        "{err:?}"
    );
    assert!(!place.runs.exists() || std::fs::read_dir(&place.runs).unwrap().next().is_none());
}

/// The examples, as a user would run them.
fn example(name: &str) -> PathBuf {
    // target/debug/deps/library-… → target/debug/examples/NAME
    let exe = std::env::current_exe().unwrap();
    exe.parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join(name)
}

fn run_example(place: &Place, name: &str, args: &[&str]) -> std::process::Output {
    let agent = place.agent(TALKER);
    std::process::Command::new(example(name))
        .args(args)
        .current_dir(&place.work)
        .env("RUNBOOK_AGENT_CMD", agent)
        .env("RUNBOOK_RUNS_DIR", &place.runs)
        .env("XDG_CONFIG_HOME", place.work.join("no-config"))
        .output()
        .unwrap()
}

#[test]
fn the_examples_tee_the_events_and_count_tool_calls() {
    let place = Place::new();
    let out = run_example(&place, "tee_events", &["events.ndjson", "say things"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = std::fs::read_to_string(place.work.join("events.ndjson")).unwrap();
    let logged = place.logged();
    assert_eq!(lines.lines().count(), logged.len());
    let first: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert_eq!(first["event"]["type"], "run.started");
    assert_eq!(first["meta"]["turn_kind"], "start");

    let place = Place::new();
    let out = run_example(&place, "count_tools", &["say things"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "0 tool calls (0 seen live); outcome Completed\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_is_never_asked_to_trust_a_repositorys_file_and_nothing_runs() {
    let place = Place::new();
    let agent = place.agent(TALKER);
    let mark = place.work.join("it-ran");
    std::fs::write(
        place.work.join("runbook.toml"),
        format!("[checks]\ntest = \"touch '{}'\"\n", mark.display()),
    )
    .unwrap();
    let err = place
        .run(&agent, "say things")
        .show(true)
        .run()
        .await
        .unwrap_err();
    assert!(
        matches!(&err, RunError::Usage(m) if m.contains("not trusted") && m.contains("RUNBOOK_TRUST") && !m.contains('\n')),
        "{err:?}"
    );
    assert!(!mark.exists(), "the repository's check ran");
    assert!(!place.runs.exists() || std::fs::read_dir(&place.runs).unwrap().next().is_none());
}
