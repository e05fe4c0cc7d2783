//! runbook as an ACP client against small scripted agents (`--acp-cmd`, a shell script on the
//! agent's side of the pipes): what a misbehaving agent gets, and how a stop is asked for.

use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use runbook::event::{EventKind, Outcome};

use crate::support::{self, TestContext, types};

const LIMIT: Duration = Duration::from_secs(30);

/// Shell functions for a scripted agent: `answer NAME RESULT` reads one request and answers it
/// with its own id; `update JSON` sends a `session/update`.
pub(crate) const PRELUDE: &str = r#"
answer() {
  IFS= read -r line || exit 1
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$id" "$1"
}
update() {
  printf '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":%s}}\n' "$1"
}
answer '{"protocolVersion":1,"agentInfo":{"name":"scripted","version":"0.1.0"}}'
answer '{"sessionId":"s1"}'
"#;

/// The body of an ACP agent (for [`acp_agent`]) that, at the prompt, shows a `bash` call of
/// `command`, asks permission for it with options of the `kinds` given, and once answered ends
/// its turn.
pub(crate) fn asks_once(command: &str, kinds: &[&str]) -> String {
    let call = serde_json::json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "bash",
        "kind": "execute", "status": "pending", "rawInput": {"command": command}});
    let options: Vec<serde_json::Value> = kinds
        .iter()
        .map(|k| serde_json::json!({"optionId": k, "name": k, "kind": k}))
        .collect();
    let ask = serde_json::json!({"jsonrpc": "2.0", "id": "p1", "method": "session/request_permission",
        "params": {"sessionId": "s1", "toolCall": {"toolCallId": "c1"}, "options": options}});
    format!(
        r#"IFS= read -r prompt
update '{call}'
printf '%s\n' '{ask}'
IFS= read -r reply
update '{{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed"}}'
id=$(printf '%s' "$prompt" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
printf '{{"jsonrpc":"2.0","id":%s,"result":{{"stopReason":"end_turn"}}}}\n' "$id"
IFS= read -r eof
exit 0"#
    )
}

pub(crate) fn acp_agent(ctx: &TestContext, name: &str, body: &str) -> String {
    ctx.recorded_agent_script(name, &format!("{PRELUDE}{body}"))
}

pub(crate) fn run(ctx: &TestContext, agent: &str, extra: &[&str]) -> support::Outcome {
    let mut args = vec![
        "run",
        "--acp-cmd",
        agent,
        "--inactivity-timeout",
        "2s",
        "--kill-grace",
        "1s",
    ];
    args.extend_from_slice(extra);
    args.push("do the thing");
    support::run(&mut ctx.runbook(&args), LIMIT)
}

#[test]
fn a_misbehaving_agent_is_told_off_and_the_session_goes_on() {
    let ctx = TestContext::new();
    let answers = ctx.root().join("answers.txt");
    let agent = acp_agent(
        &ctx,
        "agent.sh",
        &format!(
            r#"IFS= read -r prompt
echo 'this is not json-rpc'
printf '%s\n' '{{"jsonrpc":"2.0","id":77,"result":{{}}}}'
printf '%s\n' '{{"jsonrpc":"2.0","id":"q1","method":"fs/read_text_file","params":{{"sessionId":"s1","path":"/etc/hosts"}}}}'
IFS= read -r reply
printf '%s\n' "$reply" > '{answers}'
update '{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"all done"}}}}'
id=$(printf '%s' "$prompt" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
printf '{{"jsonrpc":"2.0","id":%s,"result":{{"stopReason":"end_turn"}}}}\n' "$id"
IFS= read -r eof
exit 0"#,
            answers = answers.display()
        ),
    );
    let out = run(&ctx, &agent, &[]);
    out.assert_exit(0);
    let receipt = ctx.ended_as(Outcome::Completed);
    assert_eq!(
        receipt.exit.code,
        Some(0),
        "the agent exited once its stdin closed"
    );
    assert_eq!(receipt.agent.version.as_deref(), Some("0.1.0"));
    let reply = std::fs::read_to_string(&answers).unwrap();
    assert!(
        reply.contains(r#""id":"q1""#) && reply.contains("-32601"),
        "{reply}"
    );
    let events = ctx.events();
    let warnings: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::AgentWarning { message } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("id 77"), "{warnings:?}");
    assert!(warnings[1].contains("fs/read_text_file"), "{warnings:?}");
    assert_eq!(receipt.unparsed_lines.count, 1, "{:?}", types(&events));
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.kind, EventKind::Text { text } if text == "all done"))
    );
    ctx.assert_agent_gone();
}

#[test]
fn an_agent_that_never_answers_initialize_is_stopped_by_the_watchdog() {
    let ctx = TestContext::new();
    let agent = ctx.recorded_agent_script("silent.sh", "exec sleep 60");
    let out = run(&ctx, &agent, &[]);
    out.assert_exit(3);
    let receipt = ctx.ended_as(Outcome::Hung);
    assert!(receipt.watchdog.is_some());
    let events = ctx.events();
    assert!(
        types(&events).contains(&"signal.sent"),
        "with no session to cancel, signals end it: {:?}",
        types(&events)
    );
    let raw = std::fs::read_to_string(ctx.run_dir().join("stdout.log")).unwrap();
    assert!(!raw.contains("session/cancel"), "{raw}");
    ctx.assert_agent_gone();
}

#[test]
fn ctrl_c_asks_the_agent_to_cancel_before_any_signal() {
    let ctx = TestContext::new();
    let agent = acp_agent(
        &ctx,
        "agent.sh",
        r#"IFS= read -r prompt
update '{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"working"}}'
IFS= read -r cancel
case "$cancel" in *session/cancel*) ;; *) exit 9 ;; esac
id=$(printf '%s' "$prompt" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
printf '{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"cancelled"}}\n' "$id"
IFS= read -r eof
exit 0"#,
    );
    let mut cmd = ctx.runbook(&[
        "run",
        "--acp-cmd",
        &agent,
        "--inactivity-timeout",
        "1m",
        "do the thing",
    ]);
    let child = ctx.spawn_until(&mut cmd, "text.delta");
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let out = support::finish(child, LIMIT);
    out.assert_exit(130);
    let receipt = ctx.ended_as(Outcome::Interrupted);
    assert_eq!(
        receipt.exit.code,
        Some(0),
        "the agent ended its prompt and exited by itself"
    );
    let events = ctx.events();
    assert!(
        !types(&events).contains(&"signal.sent"),
        "no signal was needed: {:?}",
        types(&events)
    );
    ctx.assert_agent_gone();
}

#[test]
fn an_agent_that_ignores_the_cancel_gets_signals_after_the_grace() {
    let ctx = TestContext::new();
    let agent = acp_agent(
        &ctx,
        "agent.sh",
        r#"trap '' TERM
IFS= read -r prompt
update '{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"working"}}'
while :; do sleep 1; done"#,
    );
    let mut cmd = ctx.runbook(&[
        "run",
        "--acp-cmd",
        &agent,
        "--inactivity-timeout",
        "1m",
        "--kill-grace",
        "1s",
        "do the thing",
    ]);
    let child = ctx.spawn_until(&mut cmd, "text.delta");
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let out = support::finish(child, LIMIT);
    out.assert_exit(130);
    ctx.ended_as(Outcome::Interrupted);
    let raw = std::fs::read_to_string(ctx.run_dir().join("stdout.log")).unwrap();
    assert!(raw.contains("session/cancel"), "{raw}");
    let signals: Vec<String> = ctx
        .events()
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::SignalSent { signal, .. } => Some(signal.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        signals.first().map(String::as_str),
        Some("SIGTERM"),
        "{signals:?}"
    );
    assert!(signals.iter().any(|s| s == "SIGKILL"), "{signals:?}");
    ctx.assert_agent_gone();
}

#[test]
fn max_cost_is_held_mid_turn_from_a_usage_update_by_cancelling_the_prompt() {
    let ctx = TestContext::new();
    let agent = acp_agent(
        &ctx,
        "agent.sh",
        r#"IFS= read -r prompt
update '{"sessionUpdate":"usage_update","used":1000,"size":200000,"cost":{"amount":0.5,"currency":"USD"}}'
IFS= read -r cancel
case "$cancel" in *session/cancel*) ;; *) exit 9 ;; esac
id=$(printf '%s' "$prompt" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
printf '{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"cancelled"}}\n' "$id"
IFS= read -r eof
exit 0"#,
    );
    let out = run(&ctx, &agent, &["--max-cost", "0.1"]);
    out.assert_exit(4);
    let receipt = ctx.ended_as(Outcome::BudgetExceeded);
    assert_eq!(receipt.cost.known_usd, 0.5);
    assert!(
        !types(&ctx.events()).contains(&"signal.sent"),
        "the agent cancelled when asked: {:?}",
        types(&ctx.events())
    );
    ctx.assert_agent_gone();
}

#[test]
fn the_watchdog_names_the_tool_that_was_running() {
    let ctx = TestContext::new();
    let agent = acp_agent(
        &ctx,
        "agent.sh",
        r#"IFS= read -r prompt
update '{"sessionUpdate":"tool_call","toolCallId":"c1","title":"bash","kind":"execute","status":"in_progress","rawInput":{"command":"cargo test"}}'
exec sleep 60"#,
    );
    let out = run(&ctx, &agent, &[]);
    out.assert_exit(3);
    let receipt = ctx.ended_as(Outcome::Hung);
    let diagnostic = receipt.watchdog.expect("a diagnostic");
    assert_eq!(diagnostic.running_tool.as_deref(), Some("bash cargo test"));
    out.assert_stderr_has("running: bash cargo test");
    ctx.assert_agent_gone();
}

#[test]
fn a_budget_is_refused_for_an_acp_agent_that_tells_no_cost_before_anything_starts() {
    let ctx = TestContext::new();
    let marker = ctx.work.join("started");
    // Were it started, the "agent" would leave a mark.
    let agent = acp_agent(&ctx, "codex-acp", &format!("touch {}", marker.display()));
    let mut cmd = ctx.runbook(&[
        "run",
        "--via",
        "acp",
        "--agent",
        "codex",
        "--agent-bin",
        &agent,
        "--max-cost",
        "1",
        "Fix the test.",
    ]);
    let out = support::run(&mut cmd, Duration::from_secs(30));
    out.assert_exit(2);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(
        lines[0].contains("--max-cost cannot hold") && lines[0].contains("without `--via acp`"),
        "{}",
        out.stderr
    );
    assert!(!marker.exists(), "the agent was started");
    assert!(ctx.run_dirs().is_empty(), "no run was recorded");
    // Codex's own transport estimates its cost from its tokens: a budget holds there.
    let native = support::run(
        &mut ctx.runbook(&[
            "run",
            "--agent",
            "codex",
            "--agent-bin",
            &agent,
            "--max-cost",
            "1",
            "--timeout",
            "5s",
            "Fix the test.",
        ]),
        Duration::from_secs(30),
    );
    assert_ne!(native.code(), Some(2), "{}", native.stderr);
}

/// An agent that asks permission for `n` shell calls in one turn (each refused, without a
/// terminal), then for one edit, then ends its turn.
fn asks_again_and_again(n: u32) -> String {
    format!(
        r#"IFS= read -r prompt
ask() {{
  update "{{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"$1\",\"title\":\"$2\",\"kind\":\"$3\",\"status\":\"pending\",\"rawInput\":{{\"command\":\"rm -rf build$1\"}}}}"
  printf '{{"jsonrpc":"2.0","id":"p%s","method":"session/request_permission","params":{{"sessionId":"s1","toolCall":{{"toolCallId":"%s"}},"options":[{{"optionId":"allow","name":"Allow","kind":"allow_once"}},{{"optionId":"reject","name":"Reject","kind":"reject_once"}}]}}}}\n' "$1" "$1"
  IFS= read -r reply
  update "{{\"sessionUpdate\":\"tool_call_update\",\"toolCallId\":\"$1\",\"status\":\"failed\",\"content\":[{{\"type\":\"content\",\"content\":{{\"type\":\"text\",\"text\":\"permission rejected\"}}}}]}}"
}}
i=0
while [ $i -lt {n} ]; do
  i=$((i+1))
  ask "c$i" bash execute
done
ask e1 edit edit
update '{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"I could not do it."}}}}'
id=$(printf '%s' "$prompt" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
printf '{{"jsonrpc":"2.0","id":%s,"result":{{"stopReason":"end_turn"}}}}\n' "$id"
IFS= read -r eof
exit 0"#
    )
}

#[test]
fn a_flood_of_refusals_is_a_few_lines_and_a_count() {
    let ctx = TestContext::new();
    let agent = acp_agent(&ctx, "agent.sh", &asks_again_and_again(5000));
    let out = run(&ctx, &agent, &[]);
    out.assert_exit(0);
    // Each refusal is in the receipt, counted; the view shows the first three of each tool and
    // says how many more there were.
    let receipt = ctx.receipt();
    assert_eq!(receipt.tool_calls.by_name["bash"].denied, 5000);
    assert_eq!(receipt.tool_calls.by_name["edit"].denied, 1);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert!(lines.len() < 25, "{} lines:\n{}", lines.len(), out.stderr);
    let shown = |what: &str| lines.iter().filter(|l| l.contains(what)).count();
    assert_eq!(shown("⊘ bash: permission denied"), 3, "{}", out.stderr);
    assert_eq!(shown("⊘ edit: permission denied"), 1, "{}", out.stderr);
    assert_eq!(
        shown("… and 4,997 more refused (bash)"),
        1,
        "{}",
        out.stderr
    );
    // The summary comes when the flood ends: before the agent's words.
    let summary = lines
        .iter()
        .position(|l| l.contains("more refused"))
        .unwrap();
    let words = lines
        .iter()
        .position(|l| l.contains("I could not do it."))
        .unwrap();
    assert!(summary < words, "{}", out.stderr);
    // The turn's own account names a few, and says there were more.
    assert_eq!(
        shown(
            "⊘ 100 or more operations were refused permission: bash rm -rf buildc1 · bash rm -rf buildc2 · bash rm -rf buildc3 · … and 97 more"
        ),
        1,
        "{}",
        out.stderr
    );
    assert!(
        lines.iter().all(|l| l.chars().count() < 200),
        "{}",
        out.stderr
    );
    ctx.assert_agent_gone();
}

#[test]
fn a_flood_cut_short_by_the_end_of_the_turn_is_still_counted() {
    let ctx = TestContext::new();
    let script = asks_again_and_again(40).replace(
        "update '{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"I could not do it.\"}}'\n",
        "",
    );
    let agent = acp_agent(&ctx, "agent.sh", &script);
    let out = run(&ctx, &agent, &["--quiet"]);
    out.assert_exit(1);
    assert!(
        out.stderr.contains("… and 37 more refused (bash)"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.lines().count() < 15, "{}", out.stderr);
}

/// `runbook status` in a terminal `cols` wide, to its end: the screen a person sees.
fn status_on_a_terminal(ctx: &TestContext, cols: u16) -> crate::support::pty::Screen {
    let mut cmd = ctx.runbook(&["status"]);
    cmd.env("TERM", "xterm-256color");
    let (status, screen) = crate::support::pty::Pty::spawn(cmd, cols).finish();
    assert_eq!(status.code(), Some(0), "{}", screen.text());
    screen
}

/// What `status` says of a running run, and of its tokens: never `input 0` for tokens no one
/// has reported yet.
#[track_caller]
fn says_running(screen: &crate::support::pty::Screen, doing: &str) {
    let text = screen.text();
    let outcome = screen
        .rows()
        .iter()
        .find(|r| r.starts_with("outcome"))
        .unwrap_or_else(|| panic!("no outcome row:\n{text}"));
    assert!(
        outcome.contains(&format!("running · {doing}")),
        "the outcome row says what the run is doing:\n{text}"
    );
    assert!(!text.contains("in progress"), "{text}");
    let tokens = screen
        .rows()
        .iter()
        .find(|r| r.starts_with("tokens"))
        .unwrap_or_else(|| panic!("no tokens row:\n{text}"));
    assert!(
        !tokens.contains(" 0"),
        "tokens nobody reported are not 0:\n{text}"
    );
    assert!(screen.wrapped_rows().is_empty(), "{text}");
}

#[test]
fn status_of_a_run_waiting_for_permission_shows_the_request_and_how_long_it_waited() {
    let ctx = TestContext::new();
    let agent = acp_agent(
        &ctx,
        "agent.sh",
        &asks_once("echo hi", &["allow_once", "reject_once"]),
    );
    let mut cmd = ctx.runbook(&[
        "run",
        "--acp-cmd",
        &agent,
        "--inactivity-timeout",
        "1m",
        "do the thing",
    ]);
    cmd.env("TERM", "xterm-256color");
    let mut run = crate::support::pty::Pty::spawn(cmd, 80);
    run.wait_for("y allow once");
    std::thread::sleep(Duration::from_millis(1100));
    for cols in [80, 200] {
        let screen = status_on_a_terminal(&ctx, cols);
        says_running(&screen, "waiting for permission: bash echo hi (asked ");
        assert!(
            screen.has_row(|r| r.contains("(asked 1s ago)")
                || r.contains("(asked 2s ago)")
                || r.contains("(asked 3s ago)")),
            "with how long it has waited:\n{}",
            screen.text()
        );
    }
    run.send("y");
    let (status, screen) = run.finish();
    assert_eq!(status.code(), Some(0), "{}", screen.text());
    let done = status_on_a_terminal(&ctx, 80);
    assert!(
        done.has_row(|r| r.starts_with("outcome   completed")),
        "{}",
        done.text()
    );
}

#[test]
fn status_of_a_run_with_a_long_tool_shows_the_tool_and_its_clock() {
    let ctx = TestContext::new();
    let agent = acp_agent(
        &ctx,
        "agent.sh",
        r#"IFS= read -r prompt
update '{"sessionUpdate":"tool_call","toolCallId":"c1","title":"bash","kind":"execute","status":"in_progress","rawInput":{"command":"sleep 30"}}'
exec sleep 60"#,
    );
    let mut cmd = ctx.runbook(&[
        "run",
        "--acp-cmd",
        &agent,
        "--inactivity-timeout",
        "1m",
        "--kill-grace",
        "1s",
        "do the thing",
    ]);
    let writer = ctx.spawn_until(&mut cmd, "tool.started");
    std::thread::sleep(Duration::from_millis(2100));
    let screen = status_on_a_terminal(&ctx, 80);
    kill(Pid::from_raw(writer.id() as i32), Signal::SIGINT).unwrap();
    support::finish(writer, LIMIT).assert_exit(130);
    says_running(&screen, "running bash sleep 30 for ");
    assert!(
        screen.has_row(|r| ["2s", "3s", "4s", "5s"]
            .iter()
            .any(|s| r.contains(&format!("bash sleep 30 for {s}")))),
        "with its clock:\n{}",
        screen.text()
    );
    ctx.assert_agent_gone();
}

#[test]
fn a_finished_tool_shows_how_long_it_took_from_its_start_and_end() {
    let ctx = TestContext::new();
    let agent = acp_agent(
        &ctx,
        "agent.sh",
        r#"IFS= read -r prompt
update '{"sessionUpdate":"tool_call","toolCallId":"c1","title":"bash","kind":"execute","status":"in_progress","rawInput":{"command":"sleep 1"}}'
update '{"sessionUpdate":"tool_call","toolCallId":"c2","title":"bash","kind":"execute","status":"in_progress","rawInput":{"command":"true"}}'
update '{"sessionUpdate":"tool_call_update","toolCallId":"c2","status":"completed","rawOutput":{"output":"","metadata":{"exit":0}}}'
sleep 1
update '{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","rawOutput":{"output":"","metadata":{"exit":0}}}'
update '{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Done."}}'
id=$(printf '%s' "$prompt" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
printf '{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"end_turn"}}\n' "$id"
IFS= read -r eof
exit 0"#,
    );
    let out = run(&ctx, &agent, &["--inactivity-timeout", "10s"]);
    out.assert_exit(0);
    let events = ctx.events();
    let at = |id: &str, started: bool| {
        events
            .iter()
            .find(|e| match &e.kind {
                EventKind::ToolStarted(t) => started && t.call_id == id,
                EventKind::ToolCompleted(t) => !started && t.call_id == id,
                _ => false,
            })
            .unwrap_or_else(|| panic!("{id}: {}", out.stderr))
    };
    for id in ["c1", "c2"] {
        let (start, end) = (at(id, true), at(id, false));
        let EventKind::ToolCompleted(t) = &end.kind else {
            unreachable!()
        };
        // Read in one go, a call's start and end tell nothing of how long it took.
        let line = if end.ts == start.ts {
            assert_eq!(t.duration_ms, None, "{id}: {}", out.stderr);
            format!("✓ bash {}", t.input)
        } else {
            // The log keeps times to the millisecond.
            let between = end.ts.duration_since(start.ts).unwrap().as_millis() as u64;
            let took = t.duration_ms.expect("a duration");
            assert!(took.abs_diff(between) <= 1, "{id}: {took} {between}");
            let shown = match took {
                0..1000 => format!("{took}ms"),
                _ => format!("{:.1}s", took as f64 / 1000.0),
            };
            format!("✓ bash {} {shown}", t.input)
        };
        assert!(
            out.stderr
                .lines()
                .any(|l| l.trim_end().ends_with(&format!("] {line}"))),
            "{line:?} in:\n{}",
            out.stderr
        );
    }
    let EventKind::ToolCompleted(slow) = &at("c1", false).kind else {
        unreachable!()
    };
    // A second between the two, less what reading the start may have lagged.
    assert!(slow.duration_ms.is_some_and(|ms| ms >= 500), "{slow:?}");
    ctx.assert_agent_gone();
}
