//! Whether runbook was tested with the agent's version, kept in the receipt (`fidelity`) and said
//! by `status` and `report`: a run of a major version runbook has never run reads as untested
//! wherever it is looked at, not only in the warning on stderr.

use serde_json::Value;

use crate::support::TestContext;

// Real OpenCode lines, trimmed to what the adapter reads: one step that answers.
const STEP_START: &str = r#"{"type":"step_start","timestamp":1,"sessionID":"ses_f","part":{"id":"p1","messageID":"m1","sessionID":"ses_f","type":"step-start"}}"#;
const TEXT: &str = r#"{"type":"text","timestamp":2,"sessionID":"ses_f","part":{"id":"p2","messageID":"m1","sessionID":"ses_f","type":"text","text":"Done.","time":{"start":1,"end":2}}}"#;
const STEP_STOP: &str = r#"{"type":"step_finish","timestamp":3,"sessionID":"ses_f","part":{"id":"p3","reason":"stop","messageID":"m1","sessionID":"ses_f","type":"step-finish","tokens":{"total":1540,"input":1500,"output":40,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.0051}}"#;

/// A run of the fake OpenCode whose `--version` prints `version`: its receipt as JSON, and what
/// `status` and `report --format json` say of it.
fn run_as(version: &str) -> (Value, String, Value) {
    let mut ctx = TestContext::new();
    ctx.env("FAKE_AGENT_VERSION", version);
    let out = ctx.run_fake(&[STEP_START, TEXT, STEP_STOP].join("\n"), &[]);
    out.assert_exit(0);
    let text = std::fs::read_to_string(ctx.run_dir().join("result.json")).expect("result.json");
    let receipt: Value = serde_json::from_str(&text).expect("a JSON receipt");
    let status = ctx.run(&["status"]);
    status.assert_exit(0);
    let report = ctx.run(&["report", "--format", "json"]);
    report.assert_exit(0);
    let report = serde_json::from_str(report.stdout.trim()).expect("the report's JSON");
    (receipt, status.stdout, report)
}

#[test]
fn a_run_of_an_untested_major_version_is_untested_in_its_receipt_status_and_report() {
    let (receipt, status, report) = run_as("opencode v3.0.0");
    assert_eq!(receipt["fidelity"], "untested", "{receipt:#}");
    assert_eq!(report["fidelity"], "untested", "{report:#}");
    let agent = status
        .lines()
        .find(|l| l.trim_start().starts_with("agent"))
        .unwrap_or_else(|| panic!("an agent row: {status}"));
    assert!(agent.contains("opencode v3.0.0 (untested)"), "{status}");
    // The warning says it is a major version runbook has never run.
    let warned = receipt["warnings"]["samples"][0]
        .as_str()
        .unwrap_or_default();
    assert!(
        warned.contains("a major version it has never run"),
        "{receipt:#}"
    );
}

#[test]
fn a_tested_version_is_tested_and_an_unreadable_one_unknown() {
    let (receipt, status, report) = run_as("1.18.33");
    assert_eq!(receipt["fidelity"], "tested", "{receipt:#}");
    assert_eq!(report["fidelity"], "tested", "{report:#}");
    assert!(!status.contains("untested"), "{status}");

    let (receipt, _, report) = run_as("a build of the day");
    assert_eq!(receipt["fidelity"], "unknown", "{receipt:#}");
    assert_eq!(report["fidelity"], "unknown", "{report:#}");
}

#[test]
fn a_newer_release_of_a_tested_major_is_untested_but_not_a_new_major() {
    let (receipt, _, _) = run_as("1.99.0");
    assert_eq!(receipt["fidelity"], "untested", "{receipt:#}");
    let warned = receipt["warnings"]["samples"][0]
        .as_str()
        .unwrap_or_default();
    assert!(
        warned.contains("not tested with this agent version"),
        "{receipt:#}"
    );
    assert!(!warned.contains("major"), "{receipt:#}");
}
