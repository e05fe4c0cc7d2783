//! One run told for a pull request (`runbook report`): its summary, what it changed, its checks,
//! and what it took, as paste-ready Markdown without links, or the same facts as JSON.

use serde::Serialize;

use super::format::{duration_ms, money, plural, steps, thousands, tokens, tool_calls};
use crate::event::{Changes, CheckResult, Outcome, RepairStop};
use crate::receipt::Receipt;

/// How many changed paths the Markdown lists.
const LISTED_PATHS: usize = 30;

/// The report as JSON: the facts a pull request needs, from the receipt.
#[derive(Debug, Serialize)]
pub(crate) struct Facts<'a> {
    run_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    outcome: Outcome,
    message: &'a str,
    agent: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    changes: Option<&'a Changes>,
    /// The checks as they last ran.
    checks: Vec<&'a CheckResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    repair: Option<RepairFacts>,
    duration_ms: u64,
    /// Null when the agent does not report its model calls.
    steps: Option<u32>,
    tool_calls: u32,
    /// Null when some of them are unknown.
    tokens: Option<u64>,
    #[serde(serialize_with = "crate::money::usd_opt")]
    cost_usd: Option<f64>,
}

/// How repair went, in short.
#[derive(Debug, Serialize)]
struct RepairFacts {
    attempts: usize,
    stopped: Option<RepairStop>,
}

impl<'a> Facts<'a> {
    pub(crate) fn of(r: &'a Receipt) -> Self {
        Self {
            run_id: &r.run_id,
            name: r.name.as_deref(),
            outcome: r.outcome,
            message: &r.message,
            agent: &r.agent.name,
            model: r.model.as_deref(),
            summary: r.summary.as_ref().map(|s| s.text.as_str()),
            changes: r.changes.as_ref(),
            checks: last_checks(r),
            repair: r.repair.as_ref().map(|rep| RepairFacts {
                attempts: rep.attempts.len(),
                stopped: rep.stopped,
            }),
            duration_ms: r.duration_ms,
            steps: r.steps,
            tool_calls: r.tool_calls.total,
            tokens: (!r.tokens.incomplete).then_some(r.tokens.total),
            cost_usd: r.cost.usd,
        }
    }
}

/// The checks of the last attempt.
fn last_checks(r: &Receipt) -> Vec<&CheckResult> {
    let last = r.checks.iter().map(|c| c.attempt).max();
    r.checks
        .iter()
        .filter(|c| Some(c.attempt) == last)
        .collect()
}

/// The report as Markdown.
pub(crate) fn markdown(r: &Receipt) -> String {
    let mut out = String::new();
    out.push_str("## Summary\n\n");
    match &r.summary {
        Some(s) => out.push_str(&format!("{}\n", s.text)),
        None => out.push_str("_The agent gave no summary._\n"),
    }
    if let Some(c) = &r.changes {
        out.push_str("\n## Changes\n\n");
        out.push_str(&changes(c));
    }
    let checks = last_checks(r);
    if !checks.is_empty() {
        out.push_str("\n## Checks\n\n| check | result | time |\n| --- | --- | --- |\n");
        for c in &checks {
            let result = if c.passed {
                "✅ passed".to_owned()
            } else if c.timed_out {
                "❌ timed out".to_owned()
            } else {
                format!("❌ {}", c.exit)
            };
            out.push_str(&format!(
                "| `{}` | {result} | {} |\n",
                c.name,
                duration_ms(c.duration_ms)
            ));
        }
        if let Some(repair) = &r.repair {
            let attempts = plural(repair.attempts.len() as u64, "repair attempt");
            let how = match repair.stopped {
                Some(RepairStop::Passed) => "the checks passed after it".to_owned(),
                Some(stop) => format!("then repair stopped: {}", stop.describe()),
                None => "the run ended during repair".to_owned(),
            };
            out.push_str(&format!("\n{attempts}; {how}.\n"));
        }
    }
    out.push_str("\n## Run\n\n| | |\n| --- | --- |\n");
    let model = r
        .model
        .as_deref()
        .map(|m| format!(" ({m})"))
        .unwrap_or_default();
    let cost = match (r.cost.usd, r.cost.source) {
        (Some(usd), Some(src)) => format!("{} ({})", money(usd), format!("{src:?}").to_lowercase()),
        (Some(usd), None) => money(usd),
        (None, _) if r.cost.known_usd > 0.0 => {
            format!("unknown (at least {})", money(r.cost.known_usd))
        }
        (None, _) => "unknown".to_owned(),
    };
    let calls = &r.tool_calls;
    for (label, value) in [
        ("Outcome", format!("{}: {}", r.outcome.as_str(), r.message)),
        ("Agent", format!("{}{model}", r.agent.name)),
        ("Duration", duration_ms(r.duration_ms)),
        (
            "Work",
            format!(
                "{} · {}",
                steps(r.steps),
                tool_calls(
                    u64::from(calls.total),
                    u64::from(calls.errors),
                    u64::from(calls.denied)
                )
            ),
        ),
        (
            "Tokens",
            if r.tokens.incomplete {
                tokens(r.tokens.total, true)
            } else {
                thousands(r.tokens.total)
            },
        ),
        ("Cost", cost),
    ] {
        out.push_str(&format!("| {label} | {} |\n", cell(&value)));
    }
    out.push_str(&format!(
        "\n<sub>runbook {} · run {}</sub>\n",
        r.runbook_version, r.run_id
    ));
    out
}

/// `3 files changed (+42 −7) · 1 commit`, the paths and the commits.
fn changes(c: &Changes) -> String {
    let mut out = super::format::changes(c);
    out.push_str(".\n\n");
    for path in c.paths.iter().take(LISTED_PATHS) {
        out.push_str(&format!("- `{path}`\n"));
    }
    let more = c.files_changed as usize - c.paths.len().min(LISTED_PATHS);
    if more > 0 {
        out.push_str(&format!("- and {more} more\n"));
    }
    if !c.commits.is_empty() {
        out.push_str("\nCommits:\n\n");
        for commit in &c.commits {
            let short = &commit.id[..commit.id.len().min(10)];
            out.push_str(&format!("- `{short}` {}\n", commit.subject));
        }
    }
    out
}

/// Text that keeps a Markdown table cell whole.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixture receipt, with a summary, changes, checks and a repair.
    fn receipt() -> Receipt {
        let mut r: serde_json::Value =
            serde_json::from_str(include_str!("../../fixtures/receipt.json")).unwrap();
        r["summary"] = serde_json::json!({
            "text": "The retry now waits for the lock before reading. I added a regression test.",
            "asked": false
        });
        r["changes"] = serde_json::json!({
            "files_changed": 2,
            "insertions": 14,
            "deletions": 3,
            "paths": ["src/retry.rs", "tests/retry.rs"],
            "commits_total": 1,
            "commits": [{"id": "4f1c2a9e0b7d6c5a4f3e2d1c0b9a8f7e6d5c4b3a", "subject": "Make the retry wait | lock"}]
        });
        let check = |attempt: u32, name: &str, passed: bool| {
            serde_json::json!({
                "attempt": attempt, "name": name, "command": format!("cargo {name}"),
                "passed": passed, "exit": {"code": if passed { 0 } else { 101 }},
                "duration_ms": 12_300, "output_bytes": 10, "tail": [], "log": "checks/x.log"
            })
        };
        r["checks"] = serde_json::json!([
            check(0, "test", false),
            check(1, "test", true),
            check(1, "clippy", true)
        ]);
        r["repair"] = serde_json::json!({
            "budget_usd": 1.0,
            "stopped": "passed",
            "attempts": [{"attempt": 1, "turn": 1, "tokens": {"input": 1, "output": 1, "reasoning": 0, "cache_read": 0, "cache_write": 0}, "cost_usd": 0.01}]
        });
        serde_json::from_value(r).unwrap()
    }

    #[test]
    fn a_run_reads_as_a_pull_request_description() {
        insta::assert_snapshot!(markdown(&receipt()));
    }

    #[test]
    fn the_json_report_holds_the_same_facts() {
        let r = receipt();
        let json = serde_json::to_value(Facts::of(&r)).unwrap();
        assert_eq!(json["summary"], r.summary.as_ref().unwrap().text.as_str());
        assert_eq!(json["changes"]["files_changed"], 2);
        assert_eq!(
            json["checks"].as_array().unwrap().len(),
            2,
            "the last attempt's"
        );
        assert_eq!(json["repair"]["stopped"], "passed");
        assert_eq!(json["outcome"], "completed");
    }
}
