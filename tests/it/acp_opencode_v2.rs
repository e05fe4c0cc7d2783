//! OpenCode 2.1.2 over the Agent Client Protocol (`opencode acp`, `--via acp`) live: the real
//! CLI, run by the real `runbook` binary against the fake Chat Completions provider, in a home of
//! its own. What it tells of a prompt's usage (every model call's, a cancelled prompt's too), of
//! its provider retries and of its version must reach the receipt as it told it.

use std::path::Path;
use std::time::Duration;

use runbook::event::{Event, EventKind, Fidelity, Outcome, ProviderRetry};
use runbook::receipt::Receipt;

use crate::record::opencode_v2 as v2;
use crate::support::fake_llm::{self as chat, FAKE_MODEL_PRICES, Reply, Usage};
use crate::support::sse::{self, Scenario};
use crate::support::{self, TestContext};

const LIMIT: Duration = Duration::from_secs(120);

/// What OpenCode 2 adds to its session's cost for the title it asks `fake-small` for (50 tokens
/// in, 4 out, at 0.1 and 0.2 USD per million): its `usage_update` tells the session's cost.
const TITLE_COST: f64 = (50.0 * 0.1 + 4.0 * 0.2) / 1e6;

/// What one run left.
struct Ran {
    events: Vec<Event>,
    receipt: Receipt,
    why: String,
}

/// `runbook run --via acp --agent opencode` of OpenCode 2.1.2 on `sc`, the provider failing its
/// first `failures` main requests with a 500; `extra` flags before the prompt.
fn run(sc: &Scenario<Reply>, failures: u32, extra: &[&str]) -> Option<Ran> {
    let bin = support::opencode_v2_bin("2.1.2")?;
    let mut ctx = TestContext::new();
    sse::write_readme(&ctx.work).expect("write README.md");
    support::git_init(&ctx.work, &ctx.home);
    let fake = chat::FakeLlm::start(sc.script.clone()).failing_first(failures, 500);
    chat::opencode_against(&mut ctx, &fake.base_url(), &chat::OpencodeConfig::default());
    let bin = bin.to_str().expect("UTF-8 path");
    let mut args = vec!["run", "--json", "--via", "acp", "--agent", "opencode"];
    args.extend(["--agent-bin", bin, "--finish-grace", "3s"]);
    args.extend(["--permissions", "bypass"]);
    args.extend_from_slice(extra);
    args.push(&sc.prompt);
    let out = support::run(&mut ctx.runbook(&args), LIMIT);
    let (events, receipt) = support::events_and_receipt(&out.stdout);
    let why = format!(
        "stderr:\n{}\nevents: {:?}",
        out.stderr,
        support::types(&events)
    );
    Some(Ran {
        events,
        receipt,
        why,
    })
}

/// The tokens and cost of `usage`, priced as the fake model is.
fn served(usage: &[Usage]) -> (u64, f64) {
    let tokens = usage.iter().map(|u| u.prompt + u.completion).sum();
    let cost = usage.iter().map(|u| FAKE_MODEL_PRICES.cost_of(u)).sum();
    (tokens, cost)
}

fn usage_of(script: &[Reply]) -> Vec<Usage> {
    script
        .iter()
        .filter_map(|r| match r {
            Reply::Text { usage, .. } | Reply::ToolCalls { usage, .. } => Some(*usage),
            _ => None,
        })
        .collect()
}

fn assert_cost(receipt: &Receipt, want: f64, why: &str) {
    let usd = receipt.cost.usd.unwrap_or(f64::NAN);
    assert!((usd - want).abs() < 1e-9, "cost {usd} != {want}\n{why}");
    assert!(!receipt.cost.incomplete, "{why}");
}

/// A prompt of two model calls (a shell command, then the answer): OpenCode 2 tells their sum,
/// and the receipt has it whole, not flagged incomplete, with its version judged tested.
#[test]
fn opencode_2_over_acp_counts_every_model_call_of_a_prompt() {
    let sc = v2::shell(Path::new("."));
    let Some(ran) = run(&sc, 0, &[]) else {
        return;
    };
    let why = &ran.why;
    let r = &ran.receipt;
    assert_eq!(r.outcome, Outcome::Completed, "{why}");
    let (tokens, cost) = served(&usage_of(&sc.script));
    assert_eq!(r.tokens.total, tokens, "{why}");
    assert!(!r.tokens.incomplete, "{why}");
    assert_cost(r, cost + TITLE_COST, why);
    assert_eq!(r.agent.version.as_deref(), Some("2.1.2"), "{why}");
    assert_eq!(r.fidelity, Fidelity::Tested, "{why}");
    assert_eq!(r.unparsed_lines.count, 0, "{why}");
}

/// The watchdog cancels a prompt whose second model call stalls: OpenCode 2 tells the usage of
/// the call that finished, and the receipt keeps it.
#[test]
fn agent_timing_opencode_2_over_acp_keeps_a_cancelled_prompts_usage() {
    let mut sc = v2::shell(Path::new("."));
    sc.script[1] = Reply::StallMidStream {
        text: "Thinking it over ".to_owned(),
    };
    let flags = ["--inactivity-timeout", "5s", "--kill-grace", "2s"];
    let Some(ran) = run(&sc, 0, &flags) else {
        return;
    };
    let why = &ran.why;
    let r = &ran.receipt;
    assert_eq!(r.outcome, Outcome::Hung, "{why}");
    let (tokens, cost) = served(&usage_of(&sc.script));
    assert_eq!(r.tokens.total, tokens, "{why}");
    assert!(!r.tokens.incomplete, "{why}");
    assert_cost(r, cost + TITLE_COST, why);
}

/// The provider fails twice with a 500 before it answers: each retry OpenCode 2 announces is a
/// `provider.retry`, numbered from 1 with the status, as the native adapters tell theirs.
#[test]
fn opencode_2_over_acp_tells_each_provider_retry() {
    let sc = chat::scenario::text(Path::new("."));
    let Some(ran) = run(&sc, 2, &[]) else {
        return;
    };
    let why = &ran.why;
    assert_eq!(ran.receipt.outcome, Outcome::Completed, "{why}");
    let retries: Vec<(u32, Option<u16>)> = ran
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ProviderRetry(ProviderRetry {
                attempt, status, ..
            }) => Some((*attempt, *status)),
            _ => None,
        })
        .collect();
    assert_eq!(retries, [(1, Some(500)), (2, Some(500))], "{why}");
    let (tokens, cost) = served(&usage_of(&sc.script));
    assert_eq!(ran.receipt.tokens.total, tokens, "{why}");
    assert_cost(&ran.receipt, cost + TITLE_COST, why);
    assert_eq!(ran.receipt.unparsed_lines.count, 0, "{why}");
}

/// An agent over ACP that says it is OpenCode 3.0.0, then sends an update of a kind runbook does
/// not know, one with a `_meta` key it does not read, and its answer.
const OPENCODE_3: &str = r#"
answer() {
  IFS= read -r line || exit 1
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$id" "$1"
}
update() {
  printf '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":%s}}\n' "$1"
}
answer '{"protocolVersion":1,"agentInfo":{"name":"OpenCode","version":"3.0.0"}}'
answer '{"sessionId":"s1"}'
IFS= read -r prompt
update '{"sessionUpdate":"agent_todo_update","todos":[]}'
update '{"sessionUpdate":"session_info_update","_meta":{"opencode/usage-v3":{"calls":2}}}'
update '{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"done"}}'
id=$(printf '%s' "$prompt" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
printf '{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"end_turn"}}\n' "$id"
IFS= read -r eof
exit 0
"#;

/// A major version of OpenCode runbook never ran, over ACP: the receipt says `untested` and
/// keeps the warning, and what runbook cannot read of it is counted, not dropped.
#[test]
fn an_untested_opencode_over_acp_is_untested_in_its_receipt() {
    let ctx = TestContext::new();
    let agent = ctx.recorded_agent_script("opencode3.sh", OPENCODE_3);
    let args = ["run", "--acp-cmd", &agent, "--inactivity-timeout", "5s"];
    let out = support::run(&mut ctx.runbook(&[&args[..], &["go"]].concat()), LIMIT);
    out.assert_exit(0);
    let receipt = ctx.ended_as(Outcome::Completed);
    assert_eq!(receipt.agent.version.as_deref(), Some("3.0.0"));
    assert_eq!(receipt.fidelity, Fidelity::Untested);
    assert!(
        receipt.warnings.samples.iter().any(|w| w
            .contains("not tested with this agent version (3.0.0; tested: 1.18.33, 2.1.")
            && w.contains("a major version it has never run")),
        "{:?}",
        receipt.warnings
    );
    assert!(out.stderr.contains("3.0.0"), "{}", out.stderr);
    assert_eq!(
        receipt.unparsed_lines.count, 2,
        "{:?}",
        receipt.unparsed_lines
    );
}
