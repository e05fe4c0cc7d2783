//! The Claude Code and Codex ACP adapters (`--via acp --agent claude|codex`), installed by
//! `.ci/install-agents` into `.agents/acp`, driven live against the project's fake providers with
//! the canonical read-and-edit scenario: each tool is told as it starts, before it ends.

use std::path::{Path, PathBuf};
use std::time::Duration;

use runbook::event::{Event, EventKind, Outcome};

use crate::support::fake_anthropic as anthropic;
use crate::support::fake_responses as responses;
use crate::support::{self, TestContext, sse};

/// `.agents/acp/node_modules/.bin/NAME`; missing is a failure unless real-agent tests are
/// explicitly skipped.
pub(crate) fn adapter_bin(name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".agents/acp/node_modules/.bin")
        .join(name);
    if path.exists() {
        return Some(path);
    }
    let skip = std::env::var_os("RUNBOOK_SKIP_REAL_AGENTS").is_some_and(|v| v == "1");
    assert!(
        skip && std::env::var_os("CI").is_none(),
        "{} is missing: run .ci/install-agents",
        path.display()
    );
    None
}

fn work_dir() -> TestContext {
    let ctx = TestContext::new();
    sse::write_readme(&ctx.work).expect("write README.md");
    support::git_init(&ctx.work, &ctx.home);
    ctx
}

/// Runs `agent` over ACP with `--permissions bypass` (the scenario edits a file) and checks the
/// read and the edit: each started before it ended, the edit on disk, the run completed.
fn assert_reads_and_edits(
    ctx: &TestContext,
    agent: &str,
    bin: &Path,
    prompt: &str,
    agent_args: &[&str],
    read: &str,
) -> Vec<Event> {
    let mut args = vec![
        "run",
        "--via",
        "acp",
        "--agent",
        agent,
        "--agent-bin",
        bin.to_str().unwrap(),
        "--permissions",
        "bypass",
        "--inactivity-timeout",
        "60s",
        prompt,
    ];
    if !agent_args.is_empty() {
        args.push("--");
        args.extend_from_slice(agent_args);
    }
    let out = support::run(&mut ctx.runbook(&args), Duration::from_secs(120));
    let events = ctx.events();
    let log: Vec<String> = events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect();
    let raw = std::fs::read_to_string(ctx.run_dir().join("stdout.log")).unwrap_or_default();
    let why = format!("{}\n{}\n--- raw ---\n{raw}", out.stderr, log.join("\n"));
    assert_eq!(out.code(), Some(0), "{why}");
    let receipt = ctx.ended_as(Outcome::Completed);
    assert!(receipt.session_id.is_some(), "{why}");
    assert_eq!(
        std::fs::read_to_string(ctx.work.join("README.md")).unwrap(),
        sse::README.replace(sse::README_LAST_LINE, sse::README_NEW_LINE),
        "README.md was edited: {why}"
    );
    let mut kinds = Vec::new();
    for e in &events {
        match &e.kind {
            EventKind::ToolStarted(t) => kinds.push(format!("start {:?}", t.kind)),
            EventKind::ToolCompleted(t) => kinds.push(format!("end {:?} {:?}", t.kind, t.status)),
            _ => {}
        }
    }
    let read_start = kinds.iter().position(|k| *k == format!("start {read}"));
    let read_end = kinds
        .iter()
        .position(|k| k.starts_with(&format!("end {read}")));
    let edit_start = kinds.iter().position(|k| k == "start Edit");
    let edit_end = kinds.iter().position(|k| k.starts_with("end Edit"));
    assert!(
        read_start < read_end
            && read_end < edit_start
            && edit_start < edit_end
            && read_start.is_some(),
        "{kinds:?}\n{why}"
    );
    for e in &events {
        if let EventKind::TurnStarted { pid, .. } = e.kind {
            assert!(support::wait_gone(&[pid as i32]).is_empty(), "{why}");
        }
    }
    events
}

#[test]
fn codex_over_acp_reads_and_edits_with_each_tool_told_as_it_starts() {
    let Some(bin) = adapter_bin("codex-acp") else {
        return;
    };
    let mut ctx = work_dir();
    let scenario = responses::scenario::read_edit(&ctx.work);
    let fake = responses::FakeResponses::for_scenario(&scenario);
    let home = responses::CodexHome::new(&fake.base_url(), &responses::CodexConfig::default())
        .expect("a Codex home");
    for (k, v) in responses::codex_env(&ctx.home, &home) {
        ctx.env(&k, v);
    }
    // Its sandbox needs bubblewrap, which a test machine may lack: the scenario runs unsandboxed,
    // as the native Codex tests do.
    let events = assert_reads_and_edits(
        &ctx,
        "codex",
        &bin,
        &scenario.prompt,
        &[
            "-c",
            "sandbox_mode=\"danger-full-access\"",
            "-c",
            "approval_policy=\"never\"",
        ],
        // Codex reads with `cat`: a shell call, as its native stream says.
        "Shell",
    );
    let read = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolStarted(t) => Some(t.input.clone()),
            _ => None,
        })
        .unwrap_or_default();
    assert!(
        read.starts_with("cat ") && read.ends_with("README.md"),
        "{read}"
    );
}

#[test]
fn claude_over_acp_reads_and_edits_with_each_tool_told_as_it_starts() {
    let Some(bin) = adapter_bin("claude-agent-acp") else {
        return;
    };
    let mut ctx = work_dir();
    let scenario = anthropic::scenario::read_edit(&ctx.work);
    let fake = anthropic::FakeAnthropic::for_scenario(&scenario);
    for (k, v) in anthropic::claude_env(&ctx.home, &fake.base_url()) {
        ctx.env(&k, v);
    }
    assert_reads_and_edits(&ctx, "claude", &bin, &scenario.prompt, &[], "Read");
}
