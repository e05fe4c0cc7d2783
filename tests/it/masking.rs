//! Secrets never reach a file or a pipe: whatever prints one (a failing check, the agent, an
//! observer), in any JSON spelling and split across writes, every file of the run directory,
//! `--json`, the terminal, the observers and the repair prompt the agent gets hold it masked.

use std::path::{Path, PathBuf};
use std::time::Duration;

use runbook::event::Outcome;

use crate::support::{self, TestContext, unescaped};

/// A secret in a variable whose name says so.
const TOKEN: &str = "sk-live-0123456789abcdef";
/// A value runbook sets for the agent (from `.env.local`), under a name that says nothing.
const SET: &str = "postgres://u:pw-98765@db/app";

/// An agent (universal events) that tells both secrets, completes its task, and on a repair
/// records its prompt and "fixes" the check.
const AGENT: &str = r#"
prompt="$(eval echo \"\${$#}\")"
printf '%s\n---\n' "$prompt" >> prompts
echo '{"type":"session.started","session_id":"s-1"}'
echo "{\"type\":\"text\",\"text\":\"token $MY_API_TOKEN url $DEPLOY_URL\"}"
echo '{"type":"agent.result","ok":true}'
"#;

/// A check that prints both secrets plainly, JSON-escaped and split across writes, then fails.
fn leaking_check() -> String {
    let escaped = r"\u0073k-live-0123456789\u0061bcdef";
    let slashed = r"postgres:\/\/u:pw-98765@db\/app";
    format!(
        "leak=echo \"plain $MY_API_TOKEN\"; cat .env.local >&2; \
         printf '%s\\n' '{{\"t\":\"{escaped}\",\"u\":\"{slashed}\"}}'; \
         printf 'split sk-live-01234'; sleep 0.2; printf '56789abcdef\\n' >&2; \
         printf 'split postgres://u:pw'; sleep 0.2; printf '%s\\n' '-98765@db/app'; exit 1"
    )
}

/// Every file under `dir`, however deep.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// Fails if `text` holds either secret, as written or once its escapes are decoded.
#[track_caller]
fn assert_hidden(place: &str, text: &str) {
    for secret in [TOKEN, SET] {
        assert!(!text.contains(secret), "{secret:?} in {place}:\n{text}");
        assert!(
            !unescaped(text).contains(secret),
            "{secret:?} spelled with escapes in {place}:\n{text}"
        );
    }
}

#[test]
fn a_secret_a_failing_check_prints_reaches_no_file_no_output_and_no_repair_prompt() {
    let mut ctx = TestContext::new();
    ctx.env("MY_API_TOKEN", TOKEN);
    ctx.write_work(".env.local", format!("DEPLOY_URL={SET}\n"));
    let agent = ctx.agent_script("leaker", AGENT);
    let events_to = ctx.root().join("events-to.ndjson");
    let observed = ctx.work.join("observed.ndjson");
    let observer = format!(
        "cat > {}; echo \"observer $MY_API_TOKEN\"",
        observed.display()
    );
    let check = leaking_check();
    let literal = format!("literal=echo {TOKEN} >/dev/null; exit 2");
    let mut cmd = ctx.runbook(&[
        "run",
        "--agent-cmd",
        &agent,
        "--json",
        "--check",
        &check,
        "--check",
        &literal,
        "--repair-attempts",
        "1",
        "--on-event",
        &observer,
        "--on-event-raw",
        "--events-to",
        events_to.to_str().unwrap(),
        "fix the flaky test",
    ]);
    let out = support::run(&mut cmd, Duration::from_secs(60));
    assert_hidden("--json stdout", &out.stdout);
    assert_hidden("stderr", &out.stderr);
    let receipt = ctx.ended_as(Outcome::ChecksFailed);

    // Masked, not dropped: the check's output still says where the secrets were.
    let leak = &receipt.checks[0];
    assert_eq!(leak.name, "leak");
    let tail = leak.tail.join("\n");
    assert!(tail.contains("plain [REDACTED]"), "{tail}");
    assert!(tail.contains("DEPLOY_URL=[REDACTED]"), "{tail}");
    assert!(
        tail.contains(r#"{"t":"[REDACTED]","u":"[REDACTED]"}"#),
        "{tail}"
    );
    assert!(tail.contains("split [REDACTED]"), "{tail}");
    let log = std::fs::read_to_string(ctx.run_dir().join("checks/0/leak.log")).unwrap();
    assert_eq!(log.matches("[REDACTED]").count(), 6, "{log}");
    assert_eq!(
        receipt.checks[1].command,
        "echo [REDACTED] >/dev/null; exit 2"
    );

    let mut read = 0;
    for dir in ctx.run_dirs() {
        for file in files_under(&dir) {
            let bytes = std::fs::read(&file).unwrap();
            assert_hidden(
                &file.display().to_string(),
                &String::from_utf8_lossy(&bytes),
            );
            read += 1;
        }
    }
    assert!(
        read >= 8,
        "events, raw logs, receipt, two check logs, observer logs: {read}"
    );
    let observer_log = std::fs::read_to_string(ctx.run_dir().join("observers/1.stdout.log"));
    assert_eq!(observer_log.unwrap(), "observer [REDACTED]\n");

    for (place, path) in [
        ("--events-to", &events_to),
        ("the observer's stdin", &observed),
    ] {
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.contains("check.finished"), "{place}: {text}");
        assert_hidden(place, &text);
    }
    let observed = std::fs::read_to_string(&observed).unwrap();
    assert!(
        observed.contains(
            r#""raw":"{\"type\":\"text\",\"text\":\"token [REDACTED] url [REDACTED]\"}""#
        ),
        "the observer's raw lines: {observed}"
    );

    // The agent's repair prompt holds the failure, masked.
    let prompts = std::fs::read_to_string(ctx.work.join("prompts")).unwrap();
    let repair = prompts.split("\n---\n").nth(1).expect("a repair prompt");
    assert!(repair.contains("## `leak` failed (exit 1)"), "{repair}");
    assert!(repair.contains("plain [REDACTED]"), "{repair}");
    assert_hidden("the repair prompt", repair);
}

/// An ACP agent that keeps every line runbook writes to its stdin in `GOT`, and ends its one
/// prompt at once.
const ACP_AGENT: &str = r#"
answer() {
  IFS= read -r line || exit 1
  printf '%s\n' "$line" >> "$GOT"
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$id" "$1"
}
answer '{"protocolVersion":1,"agentInfo":{"name":"scripted","version":"0.1.0"}}'
answer '{"sessionId":"s1"}'
printf '%s\n' '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"done"}}}}'
answer '{"stopReason":"end_turn"}'
while IFS= read -r line; do printf '%s\n' "$line" >> "$GOT"; done
"#;

#[test]
fn what_runbook_writes_to_an_acp_agents_stdin_holds_no_secret() {
    let mut ctx = TestContext::new();
    ctx.env("MY_API_TOKEN", TOKEN);
    ctx.write_work(".env.local", format!("DEPLOY_URL={SET}\n"));
    let got = ctx.root().join("stdin.ndjson");
    ctx.env("GOT", got.to_str().unwrap());
    let agent = ctx.recorded_agent_script("acp.sh", ACP_AGENT);
    let prompt = format!("deploy with {TOKEN} to {SET}");
    let out = support::run(
        &mut ctx.runbook(&["run", "--acp-cmd", &agent, "--json", &prompt]),
        Duration::from_secs(60),
    );
    assert_hidden("--json stdout", &out.stdout);
    assert_hidden("stderr", &out.stderr);
    let stdin = std::fs::read_to_string(&got).unwrap();
    assert_hidden("the agent's stdin", &stdin);
    let sent = stdin
        .lines()
        .find(|l| l.contains("session/prompt"))
        .unwrap_or_else(|| panic!("no prompt sent: {stdin}"));
    assert!(
        sent.contains("deploy with [REDACTED] to [REDACTED]"),
        "{sent}"
    );
    for dir in ctx.run_dirs() {
        for file in files_under(&dir) {
            let bytes = std::fs::read(&file).unwrap();
            assert_hidden(
                &file.display().to_string(),
                &String::from_utf8_lossy(&bytes),
            );
        }
    }
}
