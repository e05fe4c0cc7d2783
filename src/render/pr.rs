//! One run told for a pull request (`runbook report`): its summary, what it changed, its checks,
//! and what it took, as paste-ready Markdown without links, or the same facts as JSON.

use serde::Serialize;

use super::document::Document;
use crate::event::{Changes, CheckResult, Fidelity, Outcome, RepairStop};
use crate::foreign::Foreign;
use crate::foreign::markdown::Inline;
use crate::format::{duration_ms, money, plural, steps, thousands, tokens, tool_calls};
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
    /// Whether runbook was tested with the agent's version (the receipt's `fidelity`).
    fidelity: Fidelity,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    /// The task's prompt, secrets masked.
    prompt: String,
    /// What the whole run did (the receipt's `summary.text`).
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
            fidelity: r.fidelity,
            model: r.model.as_deref(),
            prompt: masked(&r.prompt),
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

/// `text` with the secrets this process knows masked: a receipt read back may hold one its
/// run did not know of.
fn masked(text: &str) -> String {
    crate::redact::current().str(text).into_owned()
}

/// The report as Markdown: runbook's own Markdown around foreign text (the summary, the task's
/// prompt, paths, commits, names, messages, even the receipt's run id and version) that renders
/// as the text it is.
pub(crate) fn markdown(r: &Receipt) -> String {
    let mut doc = Document::new();
    doc.heading("Summary");
    match &r.summary {
        Some(s) => doc.block(&Foreign::new(&s.text).md_paragraphs()),
        None => doc.paragraph(Inline::own("_The agent gave no summary._")),
    }
    if !r.prompt.trim().is_empty() {
        doc.heading("Task");
        doc.block(&Foreign::new(&masked(&r.prompt)).md_paragraphs());
    }
    if let Some(c) = &r.changes {
        doc.heading("Changes");
        changes(&mut doc, c);
    }
    let checks = last_checks(r);
    if !checks.is_empty() {
        doc.heading("Checks");
        doc.table(
            &["check", "result", "time"],
            checks.iter().map(|c| {
                let result = if c.passed {
                    Inline::own("✅ passed")
                } else if c.timed_out {
                    Inline::own("❌ timed out")
                } else {
                    Inline::own("❌ ").then(Inline::made(&c.exit.to_string()))
                };
                vec![
                    Foreign::new(&c.name).md_code(),
                    result,
                    Inline::made(&duration_ms(c.duration_ms)),
                ]
            }),
        );
        if let Some(repair) = &r.repair {
            let attempts = plural(repair.attempts.len() as u64, "repair attempt");
            let how = match repair.stopped {
                Some(RepairStop::Passed) => Inline::own("the checks passed after it"),
                Some(stop) => Inline::own("then repair stopped: ").and(stop.describe()),
                None => Inline::own("the run ended during repair"),
            };
            doc.paragraph(Inline::made(&attempts).and("; ").then(how).and("."));
        }
        for c in checks.iter().filter(|c| !c.passed && !c.tail.is_empty()) {
            failed_output(&mut doc, c);
        }
    }
    doc.heading("Run");
    doc.table(&["", ""], run_rows(r));
    doc.paragraph(
        Inline::own("<sub>runbook ")
            .then(Foreign::new(&r.runbook_version).md_inline())
            .and(" · run ")
            .then(Foreign::new(&r.run_id).md_inline())
            .and("</sub>"),
    );
    doc.finish()
}

/// The last lines a failed check printed, folded, as they were printed.
fn failed_output(doc: &mut Document, c: &CheckResult) {
    doc.details("Output of a failed check", |doc| {
        let lines = plural(c.tail.len() as u64, "line");
        doc.paragraph(
            Foreign::new(&c.name)
                .md_code()
                .and(": its last ")
                .then(Inline::made(&lines)),
        );
        doc.block(&Foreign::new(&masked(&c.tail.join("\n"))).md_block());
    });
}

/// The rows of the Run table: how it ended, the agent, and what it took.
fn run_rows(r: &Receipt) -> Vec<Vec<Inline>> {
    let mut agent = Foreign::new(&r.agent.name).md_inline();
    if let Some(m) = &r.model {
        agent = agent.and(" (").then(Foreign::new(m).md_inline()).and(")");
    }
    if r.fidelity == Fidelity::Untested {
        agent = agent.and(" · untested version");
    }
    let cost = match (r.cost.usd, r.cost.source) {
        (Some(usd), Some(src)) => dollars(usd)
            .and(" (")
            .then(Inline::made(&format!("{src:?}").to_lowercase()))
            .and(")"),
        (Some(usd), None) => dollars(usd),
        (None, _) if r.cost.known_usd > 0.0 => Inline::own("unknown (at least ")
            .then(dollars(r.cost.known_usd))
            .and(")"),
        (None, _) => Inline::own("unknown"),
    };
    let calls = &r.tool_calls;
    let work = format!(
        "{} · {}",
        steps(r.steps),
        tool_calls(
            u64::from(calls.total),
            u64::from(calls.errors),
            u64::from(calls.denied)
        )
    );
    let tokens = if r.tokens.incomplete {
        tokens(r.tokens.total, true)
    } else {
        thousands(r.tokens.total)
    };
    let outcome = Inline::own(r.outcome.as_str())
        .and(": ")
        .then(Foreign::new(&r.message).md_inline());
    [
        ("Outcome", outcome),
        ("Agent", agent),
        ("Duration", Inline::made(&duration_ms(r.duration_ms))),
        ("Work", Inline::made(&work)),
        ("Tokens", Inline::made(&tokens)),
        ("Cost", cost),
    ]
    .into_iter()
    .map(|(label, value)| vec![Inline::own(label), value])
    .collect()
}

/// `$0.0123`: the dollar sign is runbook's own, and one to a cell opens no GitHub math.
fn dollars(usd: f64) -> Inline {
    Inline::own("$").then(Inline::made(money(usd).trim_start_matches('$')))
}

/// `3 files changed (+42 −7) · 1 commit`, the paths and the commits.
fn changes(doc: &mut Document, c: &Changes) {
    doc.paragraph(Inline::made(&crate::format::changes(c)).and("."));
    let paths = c.paths.iter().take(LISTED_PATHS);
    let mut items: Vec<Inline> = paths.map(|p| Foreign::new(p).md_code()).collect();
    let more = (c.files_changed as usize).saturating_sub(c.paths.len().min(LISTED_PATHS));
    if more > 0 {
        items.push(Inline::made(&format!("and {more} more")));
    }
    if !items.is_empty() {
        doc.list(items);
    }
    if !c.commits.is_empty() {
        doc.paragraph(Inline::own("Commits:"));
        doc.list(c.commits.iter().map(|commit| {
            let short: String = commit.id.chars().take(10).collect();
            Foreign::new(&short)
                .md_code()
                .and(" ")
                .then(Foreign::new(&commit.subject).md_inline())
        }));
    }
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
        assert_eq!(json["prompt"], r.prompt.as_str());
    }

    #[test]
    fn hostile_text_reads_as_text() {
        let mut r = receipt();
        r.summary.as_mut().unwrap().text =
            "</details><details open>\n@octocat ![x](http://evil/x.png) #1\n```\n<script>\n\n# Heading  \n1. item"
                .to_owned();
        let changes = r.changes.as_mut().unwrap();
        changes.paths = vec!["we`ird``path|x.md".to_owned()];
        changes.commits[0].subject = "Fix **it** <b>now</b> :tada: www.x.example".to_owned();
        // A receipt read back may say anything: fewer files than paths, an id not in ASCII.
        changes.files_changed = 0;
        changes.commits[0].id = "aéééééééééé".to_owned();
        r.checks[2].name = "li|nt`er".to_owned();
        r.checks[2].passed = false;
        r.checks[2].exit.code = Some(1);
        r.checks[2].tail = vec![
            "</details><details open>".to_owned(),
            "````".to_owned(),
            "@octocat <script>".to_owned(),
        ];
        r.message = "done | ok\n--- | ---".to_owned();
        r.prompt =
            "# Do it\n```\n</details><details open> @octocat\n\n| a | b |\n| - | - |".to_owned();
        r.model = Some("m<i>x</i>".to_owned());
        r.run_id = "id</sub><img src=x>".to_owned();
        insta::assert_snapshot!(markdown(&r));
    }
}
