//! What runbook can and cannot know of a real Codex run (docs/visibility.md), live: the real
//! `codex` against the fake Responses provider. Codex prints no event per model call, gives its
//! usage only when a turn completes, leaves no trace of a command its sandbox blocks, and names
//! its default model only in its own configuration file; runbook must say unknown where it cannot
//! know, and never 0.

use serde_json::Value;

use crate::conformance::Scenario;
use crate::live::{self, Ran};
use crate::support::fake_responses as responses;

fn codex(scenario: Scenario, args: &[&str]) -> Option<Ran> {
    live::run("codex", scenario, live::codex, args)
}

/// `runbook status RUN` (the human view of the finished run) and `runbook report RUN`.
fn status_and_report(ran: &Ran) -> (String, String) {
    let id = ran.receipt.run_id.as_str();
    let status = ran.ctx.run(&["status", id]);
    let report = ran.ctx.run(&["report", id]);
    (
        status.stderr + &status.stdout,
        report.stdout + &report.stderr,
    )
}

/// The value of `label`'s row in `runbook status`'s table.
fn row<'a>(status: &'a str, label: &str) -> &'a str {
    status
        .lines()
        .find_map(|l| l.strip_prefix(label).filter(|rest| rest.starts_with(' ')))
        .map_or("", str::trim)
}

/// The outputs of tool calls Codex sent back to the model in its last request.
fn tool_outputs(body: &str) -> Vec<String> {
    let body: Value = serde_json::from_str(body).expect("a JSON request body");
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| {
            matches!(
                item["type"].as_str(),
                Some("function_call_output" | "custom_tool_call_output")
            )
        })
        .map(|item| item["output"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn codex_steps_are_unknown_never_zero_in_the_receipt_each_turn_status_and_report() {
    let Some(ran) = codex(Scenario::Multistep, &[]) else {
        return;
    };
    let why = &ran.why;
    ran.assert_exit(0);
    // The provider answered one request per tool call and one more: Codex made several model
    // calls, and printed none of them.
    let outputs = tool_outputs(&(ran.last_request)());
    assert!(outputs.len() >= 4, "{why}: {outputs:?}");
    assert_eq!(ran.receipt.steps, None, "{why}");
    assert!(!ran.receipt.turns.is_empty(), "{why}");
    assert!(ran.receipt.turns.iter().all(|t| t.steps.is_none()), "{why}");
    // Its usage came at the end of the turn, so tokens and cost are known.
    assert!(!ran.receipt.tokens.incomplete, "{why}");
    assert!(ran.receipt.tokens.total > 0, "{why}");
    assert!(ran.receipt.cost.usd.is_some(), "{why}");
    let json = serde_json::to_value(&ran.receipt).expect("a receipt serializes");
    assert_eq!(json["steps"], Value::Null, "{why}");
    assert_eq!(json["turns"][0]["steps"], Value::Null, "{why}");

    let (status, report) = status_and_report(&ran);
    assert_eq!(
        row(&status, "steps"),
        "unknown (the agent does not report them)",
        "{status}"
    );
    assert!(report.contains("steps unknown"), "{report}");
}

#[test]
fn a_codex_provider_failure_leaves_tokens_and_cost_unknown_not_zero() {
    let Some(ran) = codex(Scenario::ProviderError, &[]) else {
        return;
    };
    let why = &ran.why;
    ran.assert_exit(1);
    let r = &ran.receipt;
    assert!(!r.provider_errors.is_empty(), "{why}");
    assert!(r.tokens.incomplete, "{why}");
    assert_eq!(
        r.tokens.total, 0,
        "{why}: nothing is known, and 0 is not claimed"
    );
    assert!(r.turns.iter().all(|t| t.tokens_unknown), "{why}");
    assert_eq!(r.cost.usd, None, "{why}");
    assert!(r.cost.incomplete, "{why}");
    assert_eq!(r.steps, None, "{why}");

    let (status, report) = status_and_report(&ran);
    // Unknown, and no kind of them shown as 0.
    assert_eq!(row(&status, "tokens"), "unknown", "{status}");
    assert_eq!(row(&status, "cost"), "unknown", "{status}");
    assert!(report.contains("| Tokens | tokens unknown |"), "{report}");
    assert!(report.contains("steps unknown"), "{report}");
}

#[test]
fn a_command_blocked_by_codexs_read_only_sandbox_leaves_no_trace_a_refused_patch_is_a_denial() {
    let Some(ran) = codex(Scenario::PermissionDenied, &[]) else {
        return;
    };
    let why = &ran.why;
    ran.assert_exit(0);
    // Codex ran `touch` in its sandbox and told the model it failed...
    let outputs = tool_outputs(&(ran.last_request)());
    assert!(
        outputs
            .iter()
            .any(|o| o.contains("Read-only file system") && o.contains("exited with code 1")),
        "{why}: {outputs:?}"
    );
    assert!(!ran.ctx.work.join("created_by_agent.txt").exists());
    // ...and printed it in some runs, not in others (the same Codex against the same script).
    // Printed, it is a failed shell call, never a success or a denial; not printed, nothing
    // names it, on stdout or stderr.
    let logged = std::fs::read_to_string(ran.ctx.run_dir().join("events.ndjson")).expect("log");
    let stdout = std::fs::read_to_string(ran.ctx.run_dir().join("stdout.log")).expect("stdout");
    let told = stdout.contains("touch");
    assert_eq!(logged.contains("touch"), told, "{why}");
    let stderr = std::fs::read_to_string(ran.ctx.run_dir().join("stderr.log")).expect("stderr");
    assert!(!stderr.contains("touch"), "stderr.log: {stderr}");
    // The refused patch is on stderr, and it is a denial.
    let r = &ran.receipt;
    assert_eq!(r.tool_calls.total, 1 + u32::from(told), "{why}");
    assert_eq!(r.tool_calls.denied, 1, "{why}");
    assert_eq!(r.tool_calls.errors, u32::from(told), "{why}");
    assert_eq!(r.permission_denials.len(), 1, "{why}");
    assert_eq!(r.permission_denials[0].tool, "apply_patch", "{why}");
    assert!(
        r.permission_denials[0]
            .detail
            .contains("blocked by read-only sandbox"),
        "{why}"
    );
}

#[test]
fn codex_without_a_model_is_priced_from_its_config_file_and_the_receipt_and_header_say_so() {
    let Some(ran) = codex(Scenario::Text, &[]) else {
        return;
    };
    let why = &ran.why;
    ran.assert_exit(0);
    let config = ran
        .codex_home
        .as_ref()
        .expect("a CODEX_HOME")
        .join("config.toml");
    let r = &ran.receipt;
    assert_eq!(r.model.as_deref(), Some(responses::MODEL), "{why}");
    assert_eq!(
        r.model_file.as_deref(),
        Some(config.to_str().expect("UTF-8")),
        "{why}"
    );
    assert!(r.cost.usd.is_some_and(|c| c > 0.0), "{why}");
    let (status, _) = status_and_report(&ran);
    assert!(
        row(&status, "agent").ends_with(&format!(
            "· model {} (from {})",
            responses::MODEL,
            config.display()
        )),
        "{status}"
    );
    // The run's own header says it too.
    let replayed = ran.ctx.run(&[
        "replay",
        ran.ctx
            .run_dir()
            .join("events.ndjson")
            .to_str()
            .expect("UTF-8"),
    ]);
    let header = replayed.stderr.lines().next().unwrap_or_default();
    assert!(
        header.contains(&format!(
            "({}, from {})",
            responses::MODEL,
            config.display()
        )),
        "{}",
        replayed.stderr
    );

    // A model asked for is the one priced, and no file is named.
    let Some(ran) = codex(Scenario::Text, &["-m", responses::SUBAGENT_MODEL]) else {
        return;
    };
    let r = &ran.receipt;
    assert_eq!(
        r.model.as_deref(),
        Some(responses::SUBAGENT_MODEL),
        "{}",
        ran.why
    );
    assert_eq!(r.model_file, None, "{}", ran.why);
}
