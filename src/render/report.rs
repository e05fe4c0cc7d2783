//! The `runbook status` report: one run's receipt, for a person.

use std::fmt::Write as _;
use std::time::SystemTime;

use super::Styles;
use super::tone::Tone;
use crate::event::{Decision, Diagnostic, Fidelity, Outcome};
use crate::exit::ExitStatus;
use crate::format::{
    age, duration_ms, first_line_and_more, money, plural, steps, thousands, tokens, tool_calls, utc,
};
use crate::receipt::Receipt;
use crate::term::wrap::wrap;

/// The report for a receipt, as of `now` (for the run's age): one labelled row per fact, the
/// run first, then its turns and plan, what it did and cost, what went wrong, and its log.
///
/// With a `width`, values longer than a row are broken into rows under their label's column.
pub(crate) fn status(
    r: &Receipt,
    styles: &Styles,
    now: SystemTime,
    width: Option<usize>,
) -> String {
    let mut rows = Rows {
        s: styles,
        width,
        out: String::new(),
    };
    the_run(&mut rows, r, now);
    turns(&mut rows, r);
    plan(&mut rows, r);
    work(&mut rows, r);
    checks(&mut rows, r);
    produced(&mut rows, r);
    troubles(&mut rows, r);
    rows.row("log", r.run_dir.clone());
    rows.out
}

/// The report as it is written: a dim label padded to one width, then the value.
struct Rows<'a> {
    s: &'a Styles,
    width: Option<usize>,
    out: String,
}

/// Columns of a row's label and the space after it.
const LABEL_WIDTH: usize = 10;

impl Rows<'_> {
    fn row(&mut self, label: &str, value: String) {
        let value = match self.width {
            Some(width) => wrap(&value, width, LABEL_WIDTH, LABEL_WIDTH).join("\n"),
            None => value,
        };
        let _ = writeln!(
            self.out,
            "{} {value}",
            self.s.dim.apply_to(format!("{label:<9}"))
        );
    }
}

/// Which run, how it ended, the agent, the prompt, where and when it ran, and its session.
fn the_run(rows: &mut Rows<'_>, r: &Receipt, now: SystemTime) {
    let s = rows.s;
    rows.row("run", s.bold.apply_to(&r.run_id).to_string());
    // runbook's exit code, which is what scripts see, then the agent's own.
    let runbook = ExitStatus::from_outcome(r.outcome) as u8;
    let exit = match (r.outcome, r.exit.code, r.exit.signal) {
        (Outcome::Running | Outcome::Abandoned, ..) => String::new(),
        (_, None, None) => format!(" · exit {runbook} · agent not started"),
        _ => format!(" · exit {runbook} · agent {}", r.exit),
    };
    rows.row(
        "outcome",
        format!("{}{exit} · {}", outcome(r.outcome, s), r.message),
    );
    let version = r
        .agent
        .version
        .as_deref()
        .map(|v| match r.fidelity {
            Fidelity::Untested => format!(" {v} (untested)"),
            Fidelity::Tested | Fidelity::Unknown => format!(" {v}"),
        })
        .unwrap_or_default();
    let model = r
        .model
        .as_deref()
        .map(|m| match &r.model_file {
            Some(file) => format!(" · model {m} (from {file})"),
            None => format!(" · model {m}"),
        })
        .unwrap_or_default();
    rows.row("agent", format!("{}{version}{model}", r.agent.name));
    rows.row("prompt", first_line_and_more(&r.prompt));
    rows.row("cwd", r.cwd.clone());
    if let Some(sandbox) = &r.sandbox {
        rows.row("sandbox", sandboxed(sandbox));
    }
    let took = if r.outcome == Outcome::Running {
        "running for"
    } else {
        "took"
    };
    rows.row(
        "started",
        format!(
            "{} ({}) · {took} {}",
            utc(r.started_at),
            age(r.started_at, now),
            duration_ms(r.duration_ms)
        ),
    );
    if let Some(session) = &r.session_id {
        rows.row("session", session.clone());
    }
}

/// `landlock · writes in /home/me/project, /tmp/… · ports 443 · 4 refused`: the sandbox the
/// agent ran in, and how often it said no.
fn sandboxed(sandbox: &crate::event::Sandbox) -> String {
    let mut parts = vec![sandbox.by.clone()];
    if !sandbox.write.is_empty() {
        parts.push(format!("writes in {}", sandbox.write.join(", ")));
    }
    if !sandbox.ports.is_empty() {
        let ports: Vec<String> = sandbox.ports.iter().map(u16::to_string).collect();
        parts.push(format!("ports {}", ports.join(", ")));
    }
    if !sandbox.not_enforced.is_empty() {
        parts.push(format!("not enforced: {}", sandbox.not_enforced.join(", ")));
    }
    parts.push(match sandbox.denied {
        0 => "nothing refused".to_owned(),
        n => format!("{} refused", crate::format::thousands(n)),
    });
    parts.join(" · ")
}

/// Each turn's steps, tokens and cost, when there was more than one.
fn turns(rows: &mut Rows<'_>, r: &Receipt) {
    if r.turns.len() <= 1 {
        return;
    }
    let turns: Vec<String> = r
        .turns
        .iter()
        .map(|t| {
            let cost = match t.cost_usd {
                Some(usd) if !t.cost_incomplete => money(usd),
                Some(usd) if usd > 0.0 => format!("cost unknown (at least {})", money(usd)),
                _ => "cost unknown".to_owned(),
            };
            format!(
                "{} {}: {}, {}, {cost}",
                t.index + 1,
                format!("{:?}", t.kind).to_lowercase(),
                steps(t.steps),
                tokens(t.tokens.total(), t.tokens_incomplete())
            )
        })
        .collect();
    rows.row("turns", turns.join(" · "));
}

/// What became of the plan, for runs with `--plan`.
fn plan(rows: &mut Rows<'_>, r: &Receipt) {
    let Some(plan) = &r.plan else {
        return;
    };
    let decided = match plan.decision {
        Some(Decision::Execute) => "executed",
        Some(Decision::Abort) => "aborted",
        Some(Decision::Stop) => "plan only",
        Some(Decision::Revise) => "being revised",
        None => "undecided",
    };
    let cost = plan
        .cost_usd
        .map(money)
        .unwrap_or_else(|| "cost unknown".to_owned());
    rows.row(
        "plan",
        format!(
            "{decided} after {} · {cost} · plan.md",
            plural(u64::from(plan.revisions), "revision")
        ),
    );
}

/// The steps, the tool calls by tool, the tokens by kind, and the cost.
fn work(rows: &mut Rows<'_>, r: &Receipt) {
    rows.row(
        "steps",
        r.steps.map_or_else(
            || "unknown (the agent does not report them)".to_owned(),
            |n| n.to_string(),
        ),
    );
    let tools: Vec<String> = r
        .tool_calls
        .by_name
        .iter()
        .map(|(name, t)| {
            let mut notes = Vec::new();
            if t.errors > 0 {
                notes.push(format!("{} failed", t.errors));
            }
            if t.denied > 0 {
                notes.push(format!("{} denied", t.denied));
            }
            if notes.is_empty() {
                format!("{name} {}", t.calls)
            } else {
                format!("{name} {} ({})", t.calls, notes.join(", "))
            }
        })
        .collect();
    let tools = if tools.is_empty() {
        String::new()
    } else {
        format!(": {}", tools.join(", "))
    };
    let calls = &r.tool_calls;
    rows.row(
        "tools",
        format!(
            "{}{tools}",
            tool_calls(
                u64::from(calls.total),
                u64::from(calls.errors),
                u64::from(calls.denied)
            )
        ),
    );
    rows.row("tokens", token_kinds(&r.tokens, thousands));
    rows.row("cost", cost(r));
}

/// `$0.0123 (reported)`, or how much is known of an unknown cost.
fn cost(r: &Receipt) -> String {
    match (r.cost.usd, r.cost.source) {
        (Some(usd), Some(src)) => format!("{} ({})", money(usd), format!("{src:?}").to_lowercase()),
        (Some(usd), None) => money(usd),
        (None, _) if r.cost.known_usd > 0.0 => {
            format!("unknown (at least {})", money(r.cost.known_usd))
        }
        (None, _) => "unknown".to_owned(),
    }
}

/// What the run produced: its changes to the repository and the run's summary.
fn produced(rows: &mut Rows<'_>, r: &Receipt) {
    if let Some(git) = &r.git {
        let commit = git
            .commit
            .as_deref()
            .map_or("no commit yet", |c| crate::format::first_chars(c, 10));
        let branch = git
            .branch
            .as_deref()
            .map(|b| format!(" on {b}"))
            .unwrap_or_default();
        let dirty = if git.dirty {
            " (with uncommitted changes)"
        } else {
            ""
        };
        rows.row("git", format!("{commit}{branch}{dirty}"));
    }
    if let Some(c) = &r.changes {
        let mut line = crate::format::changes(c);
        let shown: Vec<&str> = c.paths.iter().take(5).map(String::as_str).collect();
        if !shown.is_empty() {
            let more = c.files_changed as usize - shown.len();
            let more = if more > 0 {
                format!(", {more} more")
            } else {
                String::new()
            };
            line.push_str(&format!(" · {}{more}", shown.join(", ")));
        }
        rows.row("changes", line);
    }
    if let Some(summary) = &r.summary {
        rows.row("summary", summary.text.clone());
    }
}

/// Each check, as it last ran: `test ✓ 12.3s`, `lint ✗ exit 1 0.8s (log: …)`; and how the
/// repair went.
fn checks(rows: &mut Rows<'_>, r: &Receipt) {
    let s = rows.s;
    if let Some(stall) = &r.permission_stall {
        // What was refused is on the `denied` row.
        let pass = match &stall.pass {
            None => "no pass (--retry-denied gives one)".to_owned(),
            Some(pass) => format!(
                "one more pass: {} · {}",
                pass.outcome.map_or("it did not finish", |o| o.as_str()),
                pass.cost_usd
                    .map_or_else(|| "cost unknown".to_owned(), money)
            ),
        };
        let refused = plural(stall.denied.len() as u64, "operation");
        rows.row("stalled", format!("{refused} refused · {pass}"));
    }
    if let Some(repair) = &r.repair {
        let spent: f64 = repair.attempts.iter().filter_map(|a| a.cost_usd).sum();
        let why = repair.stopped.map_or("it did not finish", |s| s.describe());
        rows.row(
            "repair",
            format!(
                "{} · {} · stopped: {why}",
                plural(repair.attempts.len() as u64, "attempt"),
                money(spent)
            ),
        );
    }
    let Some(last) = r.checks.iter().map(|c| c.attempt).max() else {
        return;
    };
    for c in r.checks.iter().filter(|c| c.attempt == last) {
        let took = duration_ms(c.duration_ms);
        let line = if c.passed {
            format!("{} {} {took}", c.name, s.ok.apply_to("✓"))
        } else {
            let why = match (&c.error, c.timed_out) {
                (Some(error), _) => error.clone(),
                (None, true) => "timed out".to_owned(),
                (None, false) => c.exit.to_string(),
            };
            format!(
                "{} {} {} {took} (log: {})",
                c.name,
                s.error.apply_to("✗"),
                s.error.apply_to(why),
                c.log
            )
        };
        rows.row("check", line);
    }
}

/// Denials, provider and agent errors, unreadable lines, the watchdog's diagnosis and the end
/// of stderr.
fn troubles(rows: &mut Rows<'_>, r: &Receipt) {
    let s = rows.s;
    for d in &r.permission_denials {
        let denial = format!("{} ({})", d.tool, d.detail);
        rows.row("denied", s.warn.apply_to(denial).to_string());
    }
    for e in &r.provider_errors {
        let status = e.status.map(|c| format!(" {c}")).unwrap_or_default();
        let error = format!("{}{status}: {}", e.name, first_line_and_more(&e.message));
        rows.row("provider", s.warn.apply_to(error).to_string());
    }
    for e in &r.agent_errors {
        rows.row(
            "error",
            s.error.apply_to(first_line_and_more(e)).to_string(),
        );
    }
    for w in &r.warnings.samples {
        rows.row("warning", s.warn.apply_to(w).to_string());
    }
    let unshown = r
        .warnings
        .count
        .saturating_sub(r.warnings.samples.len() as u64);
    if unshown > 0 {
        rows.row("warning", format!("… and {unshown} more"));
    }
    if r.unparsed_lines.count > 0 {
        rows.row(
            "unparsed",
            format!("{} unreadable output lines", r.unparsed_lines.count),
        );
    }
    if let Some(d) = &r.watchdog {
        rows.row("watchdog", s.error.apply_to(watchdog(d)).to_string());
    }
    for line in &r.stderr.tail {
        rows.row("stderr", s.dim.apply_to(line).to_string());
    }
}

/// What the watchdog saw when it stopped the agent.
fn watchdog(d: &Diagnostic) -> String {
    format!(
        "no activity for {} (stdout quiet {}, stderr quiet {}, cpu idle {}), last event {}",
        duration_ms(d.timeout_ms),
        duration_ms(d.stdout_quiet_ms),
        duration_ms(d.stderr_quiet_ms),
        duration_ms(d.cpu_quiet_ms),
        d.last_event.as_deref().unwrap_or("none")
    )
}

/// `5,215 · input 1,900 · output 115 · reasoning 0 · cache read 3,200 · cache write 0`: tokens
/// by kind, each count written by `count`. With some unknown: `unknown` when none are known,
/// else `at least` what is known and only the kinds seen, for a kind at 0 is then not known to
/// be 0: never `input 0` for tokens nobody counted.
pub(crate) fn token_kinds(t: &crate::receipt::TokenTotals, count: fn(u64) -> String) -> String {
    if t.incomplete && t.total == 0 {
        return "unknown".to_owned();
    }
    let kinds: Vec<String> = [
        ("input", t.input),
        ("output", t.output),
        ("reasoning", t.reasoning),
        ("cache read", t.cache_read),
        ("cache write", t.cache_write),
    ]
    .into_iter()
    .filter(|&(_, n)| !t.incomplete || n > 0)
    .map(|(kind, n)| format!("{kind} {}", count(n)))
    .collect();
    let least = if t.incomplete { "at least " } else { "" };
    format!("{least}{} · {}", count(t.total), kinds.join(" · "))
}

/// An outcome, coloured by how good it is.
pub(crate) fn outcome(o: Outcome, s: &Styles) -> String {
    let style = match Tone::of(o) {
        Tone::Good => &s.ok,
        Tone::Going => &s.accent,
        Tone::Warn => &s.warn,
        Tone::Bad => &s.error,
    };
    style.apply_to(o.as_str()).to_string()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// The sample receipt, with `changes` laid over its fields.
    fn receipt(changes: Value) -> Receipt {
        let mut r: Value =
            serde_json::from_str(include_str!("../../fixtures/receipt.json")).unwrap();
        for (key, value) in changes.as_object().unwrap() {
            r[key] = value.clone();
        }
        serde_json::from_value(r).unwrap()
    }

    /// A little over an hour after the sample run started.
    fn now() -> SystemTime {
        humantime::parse_rfc3339("2026-11-22T06:30:00Z").unwrap()
    }

    #[test]
    fn unknown_tokens_are_never_shown_as_zero() {
        let mut t = crate::receipt::TokenTotals {
            input: 1500,
            output: 40,
            total: 1540,
            ..Default::default()
        };
        assert_eq!(
            token_kinds(&t, thousands),
            "1,540 · input 1,500 · output 40 · reasoning 0 · cache read 0 · cache write 0"
        );
        t.incomplete = true;
        assert_eq!(
            token_kinds(&t, thousands),
            "at least 1,540 · input 1,500 · output 40"
        );
        t = crate::receipt::TokenTotals {
            incomplete: true,
            ..Default::default()
        };
        assert_eq!(token_kinds(&t, thousands), "unknown");
    }

    #[test]
    fn a_completed_run_reads_well() {
        insta::assert_snapshot!(status(&receipt(json!({})), &Styles::plain(), now(), None));
    }

    /// A hung run with every section of the report filled.
    fn troubled() -> Value {
        let tokens =
            json!({"input": 10, "output": 2, "reasoning": 0, "cache_read": 0, "cache_write": 0});
        json!({
            "outcome": "hung",
            "message": "no activity for 3m 0s: the agent looks hung",
            "exit": {"signal": 15},
            "prompt": "Fix the flaky test\nand tell me why",
            "duration_ms": 3_725_400,
            "tool_calls": {"total": 3, "errors": 1, "denied": 1, "by_name": {
                "bash": {"calls": 2, "errors": 0, "denied": 1},
                "read": {"calls": 1, "errors": 1, "denied": 0}
            }},
            "cost": {"usd": null, "source": null, "known_usd": 0.0051},
            "turns": [
                {"index": 0, "kind": "start", "steps": 1, "tool_calls": 3, "tokens": tokens, "cost_usd": 0.0051},
                {"index": 1, "kind": "resume", "steps": 0, "tool_calls": 0, "tokens": tokens}
            ],
            "plan": {"text": "# Plan", "revisions": 1, "decision": "execute", "feedback": ["smaller"], "tokens": 12, "cost_usd": 0.002},
            "permission_denials": [{"tool": "bash", "detail": "rm -rf target"}],
            "provider_errors": [{"name": "APIError", "message": "rate limited\nretry later", "status": 429, "retryable": true}],
            "agent_errors": ["UnknownError: Unexpected server error"],
            "unparsed_lines": {"count": 2, "samples": []},
            "stderr": {"lines": 1, "tail": ["warning: slow disk"]},
            "watchdog": {
                "timeout_ms": 180_000, "stdout_quiet_ms": 180_000, "stderr_quiet_ms": 180_300,
                "cpu_quiet_ms": 180_000, "last_event": "step.started", "open_step": 2,
                "completed_steps": 1, "cost_usd": 0.0051, "stderr_tail": []
            }
        })
    }

    #[test]
    fn every_section_of_a_troubled_run_reads_well() {
        insta::assert_snapshot!(status(&receipt(troubled()), &Styles::plain(), now(), None));
    }
}
