//! The real OpenCode over the Agent Client Protocol (`--via acp`, `opencode acp`), driven through
//! the real `runbook` binary against the scripted fake provider (support/fake_llm.rs): tools as
//! they start, permissions answered by the policy, follow-up prompts in the same process.

use serde_json::json;

use runbook::event::{Event, EventKind, Outcome, PermissionAnswerer, ToolStatus};

use crate::opencode::{README, Setup, count, positions, show, tool_ends};
use crate::support::fake_llm::{OpencodeConfig, Reply, ToolCall, Usage};
use crate::support::{self};

/// Runs with `--via acp` and checks what every ACP run must hold: the exit `code`, one end per
/// turn, and nothing of the agent left running.
fn finish(
    s: &Setup,
    extra: &[&str],
    prompt: &str,
    code: i32,
) -> (support::Outcome, Vec<Event>, String) {
    let mut args = vec!["--via", "acp"];
    args.extend_from_slice(extra);
    let out = s.run(&args, prompt);
    let events = s.ctx.events();
    let why = show(&out, &events);
    assert_eq!(out.code(), Some(code), "{why}");
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.seq, i as u64, "seqs have a gap at {i}: {why}");
    }
    assert_eq!(
        count(&events, "turn.started"),
        count(&events, "turn.completed") + count(&events, "turn.failed"),
        "one end per turn: {why}"
    );
    assert!(
        matches!(
            events.last().map(|e| &e.kind),
            Some(EventKind::RunFinished { .. })
        ),
        "{why}"
    );
    let pids: Vec<u32> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::TurnStarted { pid, .. } => Some(pid),
            _ => None,
        })
        .collect();
    for pid in pids {
        assert!(
            !support::alive(pid as i32),
            "the agent {pid} outlived runbook: {why}"
        );
    }
    (out, events, why)
}

fn read_edit_script(work: &std::path::Path, old: &str, new: &str) -> Vec<Reply> {
    let readme = work.join("README.md");
    let path = readme.to_str().unwrap();
    vec![
        Reply::tool_calls(
            Some("I'll read the README first."),
            vec![ToolCall::new(
                "call_read_1",
                "read",
                json!({ "filePath": path }),
            )],
            Usage::new(1500, 40),
        ),
        Reply::tool_calls(
            None,
            vec![ToolCall::new(
                "call_edit_1",
                "edit",
                json!({ "filePath": path, "oldString": old, "newString": new }),
            )],
            Usage::cached(1700, 60, 1500),
        ),
        Reply::text(
            "Done: I changed the last line of README.md.",
            Usage::cached(1900, 15, 1700),
        ),
    ]
}

#[test]
fn a_read_and_an_edit_show_each_tool_from_its_start_to_its_end() {
    let old = "It has a few lines, and nothing else.";
    let new = "It has a few lines, and one the agent added.";
    let Some(s) = Setup::with(OpencodeConfig::default(), |work| {
        read_edit_script(work, old, new)
    }) else {
        return;
    };
    let (out, events, why) = finish(&s, &[], "Change the last line of README.md.", 0);
    assert_eq!(
        std::fs::read_to_string(s.readme()).unwrap(),
        README.replace(old, new),
        "README.md was edited on disk: {why}"
    );
    let receipt = s.ended_as(Outcome::Completed, &events, &why);
    assert_eq!(receipt.tool_calls.total, 2, "{why}");
    assert_eq!(
        receipt.exit.code,
        Some(0),
        "the agent exited once its stdin closed: {why}"
    );
    assert!(
        receipt
            .session_id
            .as_deref()
            .is_some_and(|s| s.starts_with("ses_")),
        "{why}"
    );
    assert!(receipt.tokens.output > 0, "{why}");
    // OpenCode tells one usage update for the prompt's three model calls: unknown, not 1.
    assert_eq!(receipt.steps, None, "{why}");
    assert!(receipt.turns.iter().all(|t| t.steps.is_none()), "{why}");
    for name in ["read", "edit"] {
        let started = positions(
            &events,
            |k| matches!(k, EventKind::ToolStarted(t) if t.name == name),
        );
        let ended = positions(
            &events,
            |k| matches!(k, EventKind::ToolCompleted(t) if t.name == name),
        );
        assert_eq!((started.len(), ended.len()), (1, 1), "{name}: {why}");
        assert!(
            started[0] < ended[0],
            "{name} started before it ended: {why}"
        );
    }
    // The edit starts after the read ended: each is shown as it happens, not at the end.
    let read_end = positions(
        &events,
        |k| matches!(k, EventKind::ToolCompleted(t) if t.name == "read"),
    )[0];
    let edit_start = positions(
        &events,
        |k| matches!(k, EventKind::ToolStarted(t) if t.name == "edit"),
    )[0];
    assert!(read_end < edit_start, "{why}");
    let ends = tool_ends(&events);
    assert_eq!(
        ends.iter()
            .map(|t| (t.name.as_str(), t.input.as_str(), t.status))
            .collect::<Vec<_>>(),
        [
            ("read", "README.md", ToolStatus::Ok),
            ("edit", "README.md", ToolStatus::Ok)
        ],
        "{why}"
    );
    assert!(out.stderr.contains("✓ edit README.md"), "{why}");
    // The raw log holds both directions, runbook's lines marked.
    let raw = std::fs::read_to_string(s.ctx.run_dir().join("stdout.log")).unwrap();
    let first = raw.lines().next().unwrap();
    assert!(
        first.starts_with("> {") && first.contains(r#""method":"initialize""#),
        "{raw}"
    );
    assert!(
        raw.lines()
            .any(|l| l.starts_with("> ") && l.contains("session/prompt")),
        "{raw}"
    );
    assert!(
        raw.lines()
            .any(|l| l.starts_with(r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn""#)),
        "{raw}"
    );

    // Replayed, the recorded stream tells the same tools in the same order.
    let log = s.ctx.run_dir().join("stdout.log");
    let replay = support::run(
        &mut s
            .ctx
            .runbook(&["replay", log.to_str().unwrap(), "--instant", "--json"]),
        std::time::Duration::from_secs(30),
    );
    replay.assert_exit(0);
    let replayed: Vec<Event> = replay
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let tools = |events: &[Event]| -> Vec<String> {
        events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::ToolStarted(t) => Some(format!("start {} {}", t.name, t.input)),
                EventKind::ToolCompleted(t) => Some(format!("end {} {}", t.name, t.input)),
                _ => None,
            })
            .collect()
    };
    assert_eq!(tools(&replayed), tools(&events), "{}", replay.stdout);
    assert!(
        replayed
            .iter()
            .any(|e| matches!(&e.kind, EventKind::AgentResult(r) if r.ok)),
        "{}",
        replay.stdout
    );
}

/// OpenCode configured to ask before `bash`, and a model that runs `echo hi` then answers.
fn asking_setup() -> Option<Setup> {
    let config = OpencodeConfig {
        overlay: Some(json!({"permission": {"bash": "ask"}})),
        ..OpencodeConfig::default()
    };
    Setup::with(config, |_| {
        vec![
            Reply::tool_calls(
                None,
                vec![ToolCall::new(
                    "call_bash_ask",
                    "bash",
                    json!({"command": "echo hi", "description": "Say hi"}),
                )],
                Usage::new(1400, 20),
            ),
            Reply::text("I ran it.", Usage::cached(1500, 5, 1400)),
        ]
    })
}

/// The `permission.answered` events: allowed, the option chosen, and who chose.
fn answers(events: &[Event]) -> Vec<(bool, Option<String>, PermissionAnswerer)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::PermissionAnswered {
                allowed,
                option,
                by,
                ..
            } => Some((*allowed, option.clone(), *by)),
            _ => None,
        })
        .collect()
}

#[test]
fn without_a_terminal_a_permission_request_is_refused_by_the_default_policy() {
    let Some(s) = asking_setup() else {
        return;
    };
    // Told the refusal, OpenCode ends its prompt without a word: it stopped there (exit 1),
    // as its native stream says of a refused call.
    let (out, events, why) = finish(&s, &[], "Run echo hi.", 1);
    let requested: Vec<(&str, &str, &Vec<String>)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::PermissionRequested {
                tool,
                input,
                options,
                ..
            } => Some((tool.as_str(), input.as_str(), options)),
            _ => None,
        })
        .collect();
    assert_eq!(requested.len(), 1, "{why}");
    assert_eq!(
        (requested[0].0, requested[0].1),
        ("bash", "echo hi"),
        "{why}"
    );
    assert!(requested[0].2.iter().any(|o| o == "allow_once"), "{why}");
    assert_eq!(
        answers(&events),
        [(
            false,
            Some("reject_once".to_owned()),
            PermissionAnswerer::Policy
        )],
        "{why}"
    );
    let receipt = s.ctx.receipt();
    let asked: Vec<(&str, &str, bool, PermissionAnswerer)> = receipt
        .permissions_asked
        .iter()
        .map(|p| (p.tool.as_str(), p.input.as_str(), p.allowed, p.by))
        .collect();
    assert_eq!(
        asked,
        [("bash", "echo hi", false, PermissionAnswerer::Policy)],
        "{why}"
    );
    assert_eq!(receipt.permission_denials.len(), 1, "{why}");
    assert_eq!(receipt.permission_denials[0].tool, "bash");
    assert!(
        out.stderr.contains("bash: permission denied (echo hi)"),
        "{why}"
    );
    let ends = tool_ends(&events);
    assert_eq!(ends.len(), 1, "{why}");
    assert_eq!(
        ends[0].status,
        ToolStatus::Denied,
        "the refused call did not run: {why}"
    );
    assert_eq!(receipt.outcome, Outcome::Truncated, "{why}");
    assert_eq!(
        receipt.message, "the agent stopped after a tool call was denied permission",
        "{why}"
    );
}

#[test]
fn without_a_terminal_a_policy_that_allows_it_lets_the_tool_run() {
    let Some(s) = asking_setup() else {
        return;
    };
    let (_, events, why) = finish(&s, &["--permissions", "workspace"], "Run echo hi.", 0);
    assert_eq!(
        answers(&events),
        [(
            true,
            Some("allow_once".to_owned()),
            PermissionAnswerer::Policy
        )],
        "{why}"
    );
    let ends = tool_ends(&events);
    assert_eq!(
        ends.iter()
            .map(|t| (t.name.as_str(), t.status))
            .collect::<Vec<_>>(),
        [("bash", ToolStatus::Ok)],
        "{why}"
    );
    s.ended_as(Outcome::Completed, &events, &why);
}

#[test]
fn then_is_another_prompt_to_the_same_process_and_session() {
    let Some(s) = Setup::new(vec![
        Reply::text("First answer.", Usage::new(1200, 5)),
        Reply::text("Second answer.", Usage::cached(1300, 6, 1200)),
    ]) else {
        return;
    };
    let (_, events, why) = finish(&s, &["--then", "And now the second."], "First.", 0);
    let pids: Vec<u32> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::TurnStarted { pid, .. } => Some(pid),
            _ => None,
        })
        .collect();
    assert_eq!(pids.len(), 2, "{why}");
    assert_eq!(pids[0], pids[1], "one agent process for both turns: {why}");
    assert_eq!(count(&events, "session.started"), 1, "one session: {why}");
    assert_eq!(count(&events, "turn.completed"), 2, "{why}");
    let receipt = s.ended_as(Outcome::Completed, &events, &why);
    let second = support::texts_of_turn(&events, 1);
    assert_eq!(second, ["Second answer."], "{why}");
    assert_eq!(receipt.turns.len(), 2, "{why}");
    assert_eq!(s.llm.main_requests().len(), 2, "{why}");
}

#[test]
fn ctrl_c_cancels_the_prompt_before_any_signal() {
    let Some(s) = Setup::new(vec![Reply::StallBeforeHeaders]) else {
        return;
    };
    let mut cmd = s.command(
        &["--via", "acp", "--inactivity-timeout", "1m"],
        "Summarize README.md.",
    );
    let child = s.ctx.spawn_until(&mut cmd, "turn.started");
    let out = support::interrupt_when(
        child,
        std::time::Duration::from_secs(60),
        "the agent never asked the provider",
        || !s.llm.main_requests().is_empty(),
    );
    let events = s.ctx.events();
    let why = show(&out, &events);
    assert_eq!(out.code(), Some(130), "{why}");
    s.ended_as(Outcome::Interrupted, &events, &why);
    let raw = std::fs::read_to_string(s.ctx.run_dir().join("stdout.log")).unwrap();
    let cancel = raw.find("session/cancel").expect("session/cancel was sent");
    let cancelled = raw
        .find(r#""stopReason":"cancelled""#)
        .expect("OpenCode ended its prompt cancelled");
    assert!(cancel < cancelled, "{raw}");
    assert_eq!(
        count(&events, "signal.sent"),
        0,
        "no signal was needed: {why}"
    );
    for pid in events.iter().filter_map(|e| match e.kind {
        EventKind::TurnStarted { pid, .. } => Some(pid as i32),
        _ => None,
    }) {
        assert!(support::wait_gone(&[pid]).is_empty(), "{why}");
    }
}

/// The timeout leaves room for OpenCode's start-up on a loaded machine: until the session is open
/// there is no prompt to cancel, and its start-up is silent, with stretches under the watchdog's
/// 20% of a core.
#[test]
fn agent_timing_a_stalled_provider_is_stopped_by_the_watchdog_which_asks_to_cancel_first() {
    let Some(s) = Setup::new(vec![Reply::StallBeforeHeaders]) else {
        return;
    };
    let (out, events, why) = finish(
        &s,
        &["--inactivity-timeout", "8s", "--kill-grace", "2s"],
        "Summarize README.md.",
        3,
    );
    let receipt = s.ended_as(Outcome::Hung, &events, &why);
    assert!(receipt.watchdog.is_some(), "{why}");
    assert_eq!(count(&events, "watchdog.fired"), 1, "{why}");
    let raw = std::fs::read_to_string(s.ctx.run_dir().join("stdout.log")).unwrap();
    assert!(raw.contains("session/cancel"), "{raw}");
    assert!(out.stderr.contains("watchdog: no activity"), "{why}");
}

/// `runbook run --via acp …` on a pseudo-terminal 120 columns wide, with a live status line.
fn on_a_terminal(s: &Setup, extra: &[&str], prompt: &str) -> crate::support::pty::Pty {
    let mut args = vec!["--via", "acp"];
    args.extend_from_slice(extra);
    let mut cmd = s.command(&args, prompt);
    cmd.env("TERM", "xterm-256color");
    crate::support::pty::Pty::spawn(cmd, 120)
}

#[test]
fn agent_timing_on_a_terminal_a_running_tool_is_on_the_status_line_with_its_clock_before_it_ends() {
    let Some(s) = Setup::new(vec![
        Reply::tool_calls(
            None,
            vec![ToolCall::new(
                "call_sleep",
                "bash",
                json!({"command": "sleep 4; echo slept", "description": "Wait"}),
            )],
            Usage::new(1400, 20),
        ),
        Reply::text("Slept.", Usage::cached(1500, 5, 1400)),
    ]) else {
        return;
    };
    let pty = on_a_terminal(&s, &[], "Sleep a while.");
    let running = pty.wait_for("bash sleep 4; echo slept");
    assert!(
        !running.text().contains("✓ bash"),
        "shown as running before it ended:\n{}",
        running.text()
    );
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let screen = pty.screen();
        if screen.has_row(|r| r.contains("echo slept 2s") || r.contains("echo slept 3s")) {
            assert!(!screen.text().contains("✓ bash"), "{}", screen.text());
            break;
        }
        assert!(
            std::time::Instant::now() < until,
            "no clock:\n{}",
            screen.text()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let (status, screen) = pty.finish();
    assert_eq!(status.code(), Some(0), "{}", screen.text());
    assert!(
        screen.text().contains("✓ bash sleep 4; echo slept"),
        "{}",
        screen.text()
    );
    // OpenCode over ACP tells no duration: runbook timed the call from its start to its end.
    let events = s.ctx.events();
    let took = tool_ends(&events)[0].duration_ms.expect("a duration");
    assert!(took >= 3000, "{took}ms: {}", screen.text());
    let shown = format!("✓ bash sleep 4; echo slept {:.1}s", took as f64 / 1000.0);
    assert!(screen.text().contains(&shown), "{shown}: {}", screen.text());
}

/// A permission asked on a terminal, answered by `key`; the receipt says who answered.
fn answered_by_key(key: &str, allowed: bool) {
    let Some(s) = asking_setup() else {
        return;
    };
    let mut pty = on_a_terminal(&s, &[], "Run echo hi.");
    let asked = pty.wait_for("y allow once");
    assert!(
        asked.text().contains("bash echo hi: asks permission"),
        "the request shows the tool and its input:\n{}",
        asked.text()
    );
    // The person takes their time: it is theirs, not the tool's.
    let think = std::time::Duration::from_secs(3);
    std::thread::sleep(think);
    pty.send(key);
    let (status, screen) = pty.finish();
    // Refused, OpenCode stops at the call: the run is truncated.
    let code = if allowed { 0 } else { 1 };
    assert_eq!(status.code(), Some(code), "{}", screen.text());
    let receipt = s.ctx.receipt();
    let asked: Vec<(bool, PermissionAnswerer)> = receipt
        .permissions_asked
        .iter()
        .map(|p| (p.allowed, p.by))
        .collect();
    assert_eq!(
        asked,
        [(allowed, PermissionAnswerer::Person)],
        "{}",
        screen.text()
    );
    let ends = tool_ends(&s.ctx.events())
        .iter()
        .map(|t| t.status)
        .collect::<Vec<_>>();
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0] == ToolStatus::Ok, allowed, "{}", screen.text());
    let took = tool_ends(&s.ctx.events())[0].duration_ms;
    if allowed {
        let took = took.expect("the call's duration");
        assert!(
            u128::from(took) < think.as_millis(),
            "`echo hi` took {took} ms"
        );
    }
}

#[test]
fn on_a_terminal_a_permission_is_allowed_by_a_key() {
    answered_by_key("y", true);
}

#[test]
fn on_a_terminal_a_permission_is_rejected_by_a_key() {
    answered_by_key("n", false);
}

/// The number in `(rejected by itself in 29s)` on the screen, in seconds.
fn seconds_left(screen: &crate::support::pty::Screen) -> Option<u64> {
    let text = screen.text();
    let at = text.find("rejected by itself in ")? + "rejected by itself in ".len();
    let left: String = text[at..].chars().take_while(|c| *c != ')').collect();
    match left.split_once(':') {
        Some((m, s)) => Some(m.parse::<u64>().ok()? * 60 + s.parse::<u64>().ok()?),
        None => left.strip_suffix('s')?.parse().ok(),
    }
}

#[test]
fn on_a_terminal_the_question_names_its_keys_in_words_counts_down_and_a_refusal_is_one_line() {
    let Some(s) = asking_setup() else {
        return;
    };
    let mut pty = on_a_terminal(&s, &["--permission-timeout", "2m"], "Run echo hi.");
    let asked = pty.wait_for("rejected by itself in ");
    let text = asked.text();
    assert!(
        text.contains("y allow once · a always allow · n reject"),
        "the options in words, each with its key:\n{text}"
    );
    // Said once: the question's own line names the call, the row under it the options.
    assert_eq!(text.matches("always allow").count(), 1, "{text}");
    let question = text.lines().find(|l| l.contains("asks permission"));
    assert!(
        question.is_some_and(|l| l.trim_end().ends_with("bash echo hi: asks permission")),
        "{text}"
    );
    assert!(!text.contains("allow_once"), "{text}");
    let first = seconds_left(&asked).expect("a countdown");
    assert!((100..=120).contains(&first), "{text}");
    // It ticks.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let screen = pty.screen();
        if seconds_left(&screen).is_some_and(|left| left < first) {
            break;
        }
        assert!(
            std::time::Instant::now() < until,
            "no tick:\n{}",
            screen.text()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    pty.send("n");
    let (status, screen) = pty.finish();
    // Refused, OpenCode stops at the call: the run is truncated.
    assert_eq!(status.code(), Some(1), "{}", screen.text());
    let text = screen.text();
    let refusals: Vec<&String> = screen.rows().iter().filter(|r| r.contains('⊘')).collect();
    assert_eq!(refusals.len(), 1, "one line for the refusal:\n{text}");
    assert!(
        refusals[0].contains("bash echo hi: rejected by you"),
        "{text}"
    );
    assert!(
        !text.contains("--retry-denied"),
        "no advice to the person who said no:\n{text}"
    );
    assert!(
        !text.contains("rejected by itself"),
        "the question was taken off:\n{text}"
    );
    let events = s.ctx.events();
    assert_eq!(
        count(&events, "permission.stalled"),
        0,
        "a choice, not a stall"
    );
    let receipt = s.ctx.receipt();
    let asked: Vec<(bool, Option<&str>, PermissionAnswerer)> = receipt
        .permissions_asked
        .iter()
        .map(|p| (p.allowed, p.option.as_deref(), p.by))
        .collect();
    assert_eq!(
        asked,
        [(false, Some("reject_once"), PermissionAnswerer::Person)],
        "{text}"
    );
}

#[test]
fn on_a_terminal_ctrl_c_at_the_question_interrupts_the_run_and_ends_the_agent() {
    let Some(s) = asking_setup() else {
        return;
    };
    let mut pty = on_a_terminal(&s, &[], "Run echo hi.");
    pty.wait_for("y allow once");
    pty.send("\x03");
    let (status, screen) = pty.finish();
    let text = screen.text();
    assert_eq!(status.code(), Some(130), "{text}");
    let events = s.ctx.events();
    let receipt = s.ended_as(Outcome::Interrupted, &events, &text);
    assert_eq!(receipt.permissions_asked.len(), 1, "{text}");
    assert_eq!(receipt.permissions_asked[0].by, PermissionAnswerer::Person);
    assert!(!receipt.permissions_asked[0].allowed, "{text}");
    assert!(text.contains("bash echo hi: cancelled by you"), "{text}");
    assert!(!text.contains("--retry-denied"), "{text}");
    for e in &events {
        if let EventKind::TurnStarted { pid, .. } = e.kind {
            assert!(
                !support::alive(pid as i32),
                "the agent {pid} outlived runbook: {text}"
            );
        }
    }
}

#[test]
fn status_live_shows_a_permission_request_waiting_for_its_answer() {
    let Some(s) = asking_setup() else {
        return;
    };
    let mut run = on_a_terminal(&s, &[], "Run echo hi.");
    run.wait_for("y allow once");
    let mut follow = s.ctx.runbook(&["status", "--live"]);
    follow.env("TERM", "xterm-256color");
    let follower = crate::support::pty::Pty::spawn(follow, 120);
    follower.wait_for("waiting for permission: bash echo hi");
    run.send("y");
    let (status, screen) = run.finish();
    assert_eq!(status.code(), Some(0), "{}", screen.text());
    let (status, screen) = follower.finish();
    assert_eq!(status.code(), Some(0), "{}", screen.text());
    assert!(
        screen.text().contains("bash echo hi: allowed once by you"),
        "{}",
        screen.text()
    );
}

#[test]
fn on_a_terminal_nobody_answering_within_the_permission_timeout_is_a_refusal() {
    let Some(s) = asking_setup() else {
        return;
    };
    let pty = on_a_terminal(&s, &["--permission-timeout", "2s"], "Run echo hi.");
    pty.wait_for("y allow once");
    let (status, screen) = pty.finish();
    assert_eq!(status.code(), Some(1), "{}", screen.text());
    assert!(
        screen
            .text()
            .contains("bash echo hi: rejected: nobody answered in time"),
        "{}",
        screen.text()
    );
    let receipt = s.ctx.receipt();
    let asked: Vec<(bool, PermissionAnswerer)> = receipt
        .permissions_asked
        .iter()
        .map(|p| (p.allowed, p.by))
        .collect();
    assert_eq!(
        asked,
        [(false, PermissionAnswerer::Timeout)],
        "{}",
        screen.text()
    );
}

#[test]
fn read_only_runs_opencode_in_its_plan_mode_so_the_edit_is_refused() {
    let old = "It has a few lines, and nothing else.";
    let new = "It has a few lines, and one the agent added.";
    let Some(s) = Setup::with(OpencodeConfig::default(), |work| {
        read_edit_script(work, old, new)
    }) else {
        return;
    };
    let (_, events, why) = finish(
        &s,
        &["--permissions", "read-only"],
        "Change the last line of README.md.",
        0,
    );
    assert_eq!(
        std::fs::read_to_string(s.readme()).unwrap(),
        README,
        "README.md is untouched: {why}"
    );
    let raw = std::fs::read_to_string(s.ctx.run_dir().join("stdout.log")).unwrap();
    assert!(
        raw.lines().any(|l| l.starts_with("> ")
            && l.contains("session/set_config_option")
            && l.contains(r#""value":"plan""#)),
        "{raw}"
    );
    let edit = tool_ends(&events)
        .into_iter()
        .find(|t| t.name == "edit")
        .map(|t| t.status);
    assert_ne!(edit, Some(ToolStatus::Ok), "{why}");
}

#[test]
fn the_model_is_chosen_for_the_session_among_those_opencode_offers() {
    let Some(s) = Setup::new(vec![Reply::text("Hi.", Usage::new(1200, 5))]) else {
        return;
    };
    let out = support::run(
        &mut s.ctx.runbook(&[
            "run",
            "--via",
            "acp",
            "--agent-bin",
            s.bin.to_str().unwrap(),
            "-m",
            "fake/fake-small",
            "Say hi.",
        ]),
        std::time::Duration::from_secs(90),
    );
    let events = s.ctx.events();
    let why = show(&out, &events);
    assert_eq!(out.code(), Some(0), "{why}");
    // The fake provider serves `fake-small` as OpenCode's title model, and counts only the
    // requests to `fake-model` as the agent's own: none went there.
    assert!(s.llm.main_requests().is_empty(), "{why}");
    assert!(
        s.llm
            .requests()
            .iter()
            .all(|r| r.body["model"].as_str() != Some("fake-model")),
        "{why}"
    );
    let raw = std::fs::read_to_string(s.ctx.run_dir().join("stdout.log")).unwrap();
    assert!(raw.contains(r#""configId":"model""#), "{raw}");
}

/// OpenCode's first model call runs `sleep 30`; Ctrl-C comes while it runs.
fn interrupted_mid_command() -> Option<(Setup, support::Outcome, Vec<Event>, String)> {
    let s = Setup::new(vec![
        Reply::tool_calls(
            Some("Let me wait."),
            vec![ToolCall::new(
                "call_sleep_1",
                "bash",
                json!({"command": "sleep 30", "description": "Wait"}),
            )],
            Usage::new(1500, 40),
        ),
        Reply::text("Done.", Usage::cached(1600, 5, 1500)),
    ])?;
    let mut cmd = s.command(
        &["--via", "acp", "--inactivity-timeout", "1m"],
        "Wait a while.",
    );
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn runbook");
    // OpenCode takes a while to start on a busy machine: wait for the command to run.
    let out = support::interrupt_when(
        child,
        std::time::Duration::from_secs(80),
        "the command never started",
        || {
            s.logged_lines()
                .iter()
                .any(|l| l.contains(r#""type":"tool.started""#))
        },
    );
    let events = s.ctx.events();
    let why = show(&out, &events);
    Some((s, out, events, why))
}

#[test]
fn ctrl_c_mid_command_leaves_the_cost_incomplete_and_the_command_unfinished() {
    let Some((s, out, events, why)) = interrupted_mid_command() else {
        return;
    };
    assert_eq!(out.code(), Some(130), "{why}");
    let receipt = s.ended_as(Outcome::Interrupted, &events, &why);
    // The model call was made (and paid for): its cost is known only in part, never $0.
    assert!(receipt.cost.incomplete, "{why}");
    assert_eq!(receipt.cost.usd, None, "{why}");
    assert!(receipt.tokens.incomplete, "{why}");
    assert!(!out.stderr.contains("$0.0000"), "{}", out.stderr);
    // The command did not finish: not a success, anywhere.
    let ends = tool_ends(&events);
    assert_eq!(
        ends.iter()
            .map(|t| (t.name.as_str(), t.status))
            .collect::<Vec<_>>(),
        [("bash", ToolStatus::Error)],
        "{why}"
    );
    assert_eq!(receipt.tool_calls.by_name["bash"].errors, 1, "{why}");
    assert!(
        !out.stderr.lines().any(|l| l.contains('✓')),
        "{}",
        out.stderr
    );
}
