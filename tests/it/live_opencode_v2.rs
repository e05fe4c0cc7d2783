//! OpenCode 2 (`@opencode/cli`) live, each release runbook is tested with (2.1.2, and 2.2.5 in
//! `opencode_2_2_5`): the real CLI, run by the real `runbook` binary against the fake Chat
//! Completions provider, in a home of its own. runbook must tell it from 1.x by
//! itself, keep its work in the run (`--standalone`), and count what the provider served and
//! what OpenCode's own session export says, whatever its stream left out.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use runbook::event::{CostSource, Event, EventKind, Fidelity, Outcome, ToolKind, ToolStatus};
use runbook::receipt::Receipt;
use serde_json::{Value, json};

use crate::record::opencode_v2 as v2;
use crate::support::fake_llm::{self as chat, Reply};
use crate::support::sse::{self, Scenario};
use crate::support::{self, TestContext};

const LIMIT: Duration = Duration::from_secs(120);

/// What one run left: its events, its receipt, and OpenCode's own export of its session.
struct Ran {
    events: Vec<Event>,
    receipt: Receipt,
    export: Value,
    code: Option<i32>,
    why: String,
    /// The usage the fake provider was scripted to serve the main session.
    served: Vec<chat::Usage>,
}

/// `script` run by OpenCode `release`, asked for the shell's permission if `ask_shell`.
fn run(release: &str, script: fn(&Path) -> Scenario<Reply>, ask_shell: bool) -> Option<Ran> {
    run_with(release, script, ask_shell, &[])
}

/// [`run`] with more of runbook's options.
fn run_with(
    release: &str,
    script: fn(&Path) -> Scenario<Reply>,
    ask_shell: bool,
    more: &[&str],
) -> Option<Ran> {
    let bin = support::opencode_v2_bin(release)?;
    let mut ctx = TestContext::new();
    sse::write_readme(&ctx.work).expect("write README.md");
    support::git_init(&ctx.work, &ctx.home);
    let sc = script(&ctx.work);
    let fake = chat::FakeLlm::start_with_subagent(sc.script.clone(), sc.subagent_script.clone());
    let config = chat::OpencodeConfig {
        overlay: ask_shell.then(|| json!({"permission": {"bash": "ask"}})),
        ..chat::OpencodeConfig::default()
    };
    chat::write_opencode_config(&ctx.work, &fake.base_url(), &config).expect("opencode.json");
    for (k, v) in chat::opencode_env(&ctx.home) {
        ctx.env(&k, v);
    }
    let bin_arg = bin.to_str().expect("UTF-8 path");
    let mut args = vec![
        "run",
        "--json",
        "--agent",
        "opencode",
        "--agent-bin",
        bin_arg,
    ];
    args.extend(["--finish-grace", "3s", "-m", "fake/fake-model"]);
    if !ask_shell {
        args.extend(["--permissions", "bypass"]);
    }
    args.extend_from_slice(more);
    args.push(&sc.prompt);
    let out = support::run(&mut ctx.runbook(&args), LIMIT);
    let (events, receipt) = support::events_and_receipt(&out.stdout);
    let export = export(&bin, &ctx, receipt.session_id.as_deref());
    let served = sc
        .script
        .iter()
        .filter_map(|r| match r {
            Reply::Text { usage, .. } | Reply::ToolCalls { usage, .. } => Some(*usage),
            _ => None,
        })
        .collect();
    let why = format!(
        "stderr:\n{}\nevents: {:?}",
        out.stderr,
        support::types(&events)
    );
    Some(Ran {
        code: out.code(),
        events,
        receipt,
        export,
        why,
        served,
    })
}

/// `opencode session export ID` in the run's home, as OpenCode itself tells the session.
fn export(bin: &Path, ctx: &TestContext, session: Option<&str>) -> Value {
    let Some(session) = session else {
        return Value::Null;
    };
    let out = Command::new(bin)
        .args(["session", "export", "--standalone", session])
        .current_dir(&ctx.work)
        .env_clear()
        .envs(chat::opencode_env(&ctx.home))
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .output()
        .expect("run opencode session export");
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

/// The tokens and cost of the turn's assistant messages in OpenCode's export.
fn exported(export: &Value) -> (u64, f64) {
    let messages = export["messages"].as_array().cloned().unwrap_or_default();
    let n = |t: &Value, k: &str| t[k].as_u64().unwrap_or(0);
    messages
        .iter()
        .filter(|m| m["type"] == "assistant")
        .fold((0, 0.0), |(tokens, cost), m| {
            let t = &m["tokens"];
            let c = &t["cache"];
            let sum = n(t, "input") + n(t, "output") + n(t, "reasoning");
            let sum = sum + n(c, "read") + n(c, "write");
            (tokens + sum, cost + m["cost"].as_f64().unwrap_or(0.0))
        })
}

fn tools(ran: &Ran) -> Vec<(ToolKind, ToolStatus)> {
    ran.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCompleted(t) => Some((t.kind, t.status)),
            _ => None,
        })
        .collect()
}

/// The run completed with the tokens and cost the provider served and OpenCode's export says,
/// in a step per model call, with `--standalone` on the agent's command line, of a release
/// runbook says it was tested with.
#[track_caller]
fn assert_completed_and_exact(ran: &Ran) {
    let why = &ran.why;
    assert_eq!(ran.receipt.outcome, Outcome::Completed, "{why}");
    assert_eq!(ran.code, Some(0), "{why}");
    assert_eq!(ran.receipt.fidelity, Fidelity::Tested, "{why}");
    assert_eq!(
        ran.receipt.warnings.count, 0,
        "{why}: {:?}",
        ran.receipt.warnings
    );
    let served: u64 = ran.served.iter().map(|u| u.prompt + u.completion).sum();
    let priced: f64 = ran
        .served
        .iter()
        .map(|u| chat::FAKE_MODEL_PRICES.cost_of(u))
        .sum();
    let (tokens, cost) = exported(&ran.export);
    assert!(!ran.receipt.tokens.incomplete, "{why}");
    assert_eq!(ran.receipt.tokens.total, served, "{why}: served");
    assert_eq!(ran.receipt.tokens.total, tokens, "{why}: exported");
    let got = ran.receipt.cost.usd.expect("a cost");
    assert!((got - priced).abs() < 1e-9, "{why}: {got} vs {priced}");
    assert!((got - cost).abs() < 1e-9, "{why}: {got} vs export {cost}");
    assert_eq!(ran.receipt.cost.source, Some(CostSource::Reported), "{why}");
    assert_eq!(ran.receipt.steps, Some(ran.served.len() as u32), "{why}");
    let argv = support::argvs(&ran.events);
    assert!(
        argv[0].iter().any(|a| a == "--standalone"),
        "{why}: {argv:?}"
    );
}

/// The scenarios each release meets, each a test of its own named as its function in
/// [`scenario`].
macro_rules! release_tests {
    ($release:literal: $($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                crate::live_opencode_v2::scenario::$name($release);
            }
        )*
    };
}

release_tests!("2.1.2":
    a_plain_answer_completes_with_the_tokens_of_the_step_the_stream_did_not_end,
    a_failing_command_and_a_missing_file_are_errors_with_their_exit_code,
    a_subagent_is_one_started_and_finished,
    five_calls_in_six_steps_are_counted_exactly,
    a_command_refused_without_a_person_is_a_denial,
    a_refused_request_is_a_provider_error_with_its_status,
    a_read_and_an_edit_complete_with_every_step_counted,
    a_command_completes_with_its_output,
    a_second_turn_continues_the_session_and_both_are_counted_exactly,
    a_500_retried_without_end_is_each_retry_and_stops_at_the_runs_timeout,
);

/// OpenCode 2.2.5, the newest release: the same scenarios once, without the multi-turn run and the
/// 25 s of retries 2.1.2's tests already cover (its recordings of both are replayed in
/// `conformance_v2`).
mod opencode_2_2_5 {
    release_tests!("2.2.5":
        a_plain_answer_completes_with_the_tokens_of_the_step_the_stream_did_not_end,
        a_failing_command_and_a_missing_file_are_errors_with_their_exit_code,
        a_subagent_is_one_started_and_finished,
        five_calls_in_six_steps_are_counted_exactly,
        a_command_refused_without_a_person_is_a_denial,
        a_refused_request_is_a_provider_error_with_its_status,
        a_read_and_an_edit_complete_with_every_step_counted,
        a_command_completes_with_its_output,
    );
}

/// Each scenario, for the release given.
mod scenario {
    use super::*;

    pub(super) fn a_plain_answer_completes_with_the_tokens_of_the_step_the_stream_did_not_end(
        release: &str,
    ) {
        let Some(ran) = run(release, chat::scenario::text, false) else {
            return;
        };
        assert_completed_and_exact(&ran);
    }

    pub(super) fn a_failing_command_and_a_missing_file_are_errors_with_their_exit_code(
        release: &str,
    ) {
        let Some(ran) = run(release, v2::tool_fail, false) else {
            return;
        };
        assert_completed_and_exact(&ran);
        let (k, s) = (ToolKind::Read, ToolStatus::Error);
        assert_eq!(tools(&ran), [(k, s), (ToolKind::Shell, s)], "{}", ran.why);
    }

    pub(super) fn a_subagent_is_one_started_and_finished(release: &str) {
        let Some(ran) = run(release, v2::subagent, false) else {
            return;
        };
        assert_completed_and_exact(&ran);
        assert_eq!(
            tools(&ran),
            [(ToolKind::Subagent, ToolStatus::Ok)],
            "{}",
            ran.why
        );
        let told = |f: fn(&EventKind) -> bool| ran.events.iter().filter(|e| f(&e.kind)).count();
        assert_eq!(
            told(|k| matches!(
                k,
                EventKind::SubagentStarted {
                    session_id: Some(_),
                    ..
                }
            )),
            1
        );
        assert_eq!(told(|k| matches!(k, EventKind::SubagentFinished { .. })), 1);
    }

    pub(super) fn five_calls_in_six_steps_are_counted_exactly(release: &str) {
        let Some(ran) = run(release, v2::multistep, false) else {
            return;
        };
        assert_completed_and_exact(&ran);
        assert_eq!(tools(&ran).len(), 5, "{}", ran.why);
    }

    pub(super) fn a_command_refused_without_a_person_is_a_denial(release: &str) {
        let Some(ran) = run(release, v2::permission_denied, true) else {
            return;
        };
        assert_eq!(
            tools(&ran),
            [(ToolKind::Shell, ToolStatus::Denied)],
            "{}",
            ran.why
        );
        assert!(!ran.receipt.permission_denials.is_empty(), "{}", ran.why);
    }

    pub(super) fn a_refused_request_is_a_provider_error_with_its_status(release: &str) {
        let Some(ran) = run(release, chat::scenario::provider_error, false) else {
            return;
        };
        let why = &ran.why;
        assert_eq!(ran.receipt.outcome, Outcome::AgentError, "{why}");
        let errors = &ran.receipt.provider_errors;
        assert_eq!(errors.len(), 1, "{why}");
        assert_eq!(errors[0].status, Some(400), "{why}");
        assert_eq!(errors[0].name, "provider.invalid-request", "{why}");
    }

    pub(super) fn a_read_and_an_edit_complete_with_every_step_counted(release: &str) {
        let Some(ran) = run(release, v2::read_edit, false) else {
            return;
        };
        assert_completed_and_exact(&ran);
        let ok = ToolStatus::Ok;
        let want = [(ToolKind::Read, ok), (ToolKind::Edit, ok)];
        assert_eq!(tools(&ran), want, "{}", ran.why);
    }

    pub(super) fn a_command_completes_with_its_output(release: &str) {
        let Some(ran) = run(release, v2::shell, false) else {
            return;
        };
        assert_completed_and_exact(&ran);
        let want = [(ToolKind::Shell, ToolStatus::Ok)];
        assert_eq!(tools(&ran), want, "{}", ran.why);
    }

    /// Two answers: the first turn's, then the one `--then` asks for in the same session.
    fn two_turns(_work: &Path) -> Scenario<Reply> {
        let script = vec![
            Reply::text(sse::canon::TEXT_ANSWER, chat::Usage::new(1200, 18)),
            Reply::text("done", chat::Usage::new(1250, 2)),
        ];
        Scenario::new(sse::canon::TEXT_PROMPT, script, &[])
    }

    pub(super) fn a_second_turn_continues_the_session_and_both_are_counted_exactly(release: &str) {
        let Some(ran) = run_with(
            release,
            two_turns,
            false,
            &["--then", "Now say it once more."],
        ) else {
            return;
        };
        assert_completed_and_exact(&ran);
        assert_eq!(ran.receipt.turns.len(), 2, "{}", ran.why);
        let argv = support::argvs(&ran.events);
        let session = ran.receipt.session_id.clone().expect("a session");
        assert!(
            argv[1]
                .windows(2)
                .any(|w| w == ["--session", session.as_str()]),
            "{}: {argv:?}",
            ran.why
        );
    }

    pub(super) fn a_500_retried_without_end_is_each_retry_and_stops_at_the_runs_timeout(
        release: &str,
    ) {
        let Some(ran) = run_with(release, v2::http500, false, &["--timeout", "12s"]) else {
            return;
        };
        let why = &ran.why;
        assert_eq!(ran.receipt.outcome, Outcome::TimedOut, "{why}");
        let retried = |e: &&Event| matches!(e.kind, EventKind::ProviderRetry(_));
        assert!(ran.events.iter().filter(retried).count() >= 1, "{why}");
        assert!(ran.receipt.tokens.total == 0, "{why}");
    }
}
