//! The run and its turns: the start, each new turn, the agent's version, session and own
//! sandbox, stop requests and the signals sent, and at the end the one-line summary and the
//! receipt's path.

use super::Lines;
use crate::event::{EventKind, Outcome, RunInfo, TurnKind};
use crate::format::{duration_ms, money, steps, tokens, tool_calls_sandboxed, truncate};

/// The lines of a run or turn event.
pub(super) fn show(l: &mut Lines<'_>, kind: &EventKind) {
    let s = l.s;
    match kind {
        EventKind::RunStarted(info) => run_started(l, info),
        EventKind::TurnStarted { argv, prompt, .. } => turn_started(l, argv, prompt.as_deref()),
        EventKind::AgentVersion { version, .. } => {
            if l.verbose {
                l.info(s.dim.apply_to(format!("  agent version {version}")));
            }
            // An untested version: one warning, said here once per run.
            crate::warning::of(kind, 0, |w| l.alert(s.warn.apply_to(format!("⚠ {w}"))));
        }
        EventKind::SessionStarted { session_id } if l.verbose => {
            l.info(s.dim.apply_to(format!("  session {session_id}")));
        }
        EventKind::AgentSandbox { enabled } if l.verbose => {
            let state = if *enabled { "on" } else { "off" };
            l.info(
                s.dim
                    .apply_to(format!("  the agent's own sandbox: {state}")),
            );
        }
        EventKind::ModelAnnounced { model, .. } => {
            // The header names the model asked for, if any; the one the agent runs is said here.
            l.info(s.dim.apply_to(format!("  model {model}")));
            crate::warning::of(kind, l.totals.steps_finished, |w| {
                l.alert(s.warn.apply_to(format!("⚠ {w}")));
            });
        }
        // The stuck line before it said why, and that the agent is being stopped.
        EventKind::StopRequested {
            reason: Outcome::Stuck,
            ..
        } => {}
        EventKind::StopRequested { message, .. } => {
            l.alert(s.error.apply_to(format!("✗ stopping the agent: {message}")));
        }
        EventKind::SignalSent { signal, processes } => {
            let plural = if *processes == 1 { "" } else { "es" };
            l.alert(
                s.dim
                    .apply_to(format!("→ {signal} to {processes} process{plural}")),
            );
        }
        EventKind::TurnFailed {
            outcome, message, ..
        } if l.verbose => {
            let turn = l.turn.index + 1;
            l.info(
                s.dim
                    .apply_to(format!("  turn {turn} {outcome}: {message}")),
            );
        }
        _ => {}
    }
}

/// `▶ opencode (model) · run <id> · <cwd>`.
fn run_started(l: &mut Lines<'_>, info: &RunInfo) {
    let s = l.s;
    let model = match (&info.model, &info.model_file) {
        (Some(m), Some(file)) => format!(" ({m}, from {file})"),
        (Some(m), None) => format!(" ({m})"),
        (None, _) => String::new(),
    };
    l.info(format!(
        "{} {}{model} · run {} · {}",
        s.accent.apply_to("▶"),
        s.bold.apply_to(&info.agent),
        info.run_id,
        s.dim.apply_to(&info.cwd)
    ));
    if let Some(sandbox) = &info.sandbox {
        sandboxed(l, sandbox);
    }
}

/// `  sandboxed by landlock: writes only in the work dir, …`, said before anything happens; in
/// warning colour with what it does not keep, when it keeps less than the whole promise. With
/// `-v`, where it lets the agent write and connect.
fn sandboxed(l: &mut Lines<'_>, sandbox: &crate::event::Sandbox) {
    let s = l.s;
    if sandbox.not_enforced.is_empty() {
        l.info(s.dim.apply_to(format!(
            "  sandboxed by {}: writes only in the work dir, the run's temp dir and the agent's own dirs",
            sandbox.by
        )));
    } else {
        l.alert(s.warn.apply_to(format!(
            "  sandboxed by {}; not enforced: {}",
            sandbox.by,
            sandbox.not_enforced.join(", ")
        )));
    }
    if l.verbose {
        l.info(
            s.dim
                .apply_to(format!("  sandbox writes: {}", sandbox.write.join(", "))),
        );
        if !sandbox.ports.is_empty() {
            let ports: Vec<String> = sandbox.ports.iter().map(u16::to_string).collect();
            l.info(
                s.dim
                    .apply_to(format!("  sandbox ports: {}", ports.join(", "))),
            );
        }
    }
}

/// The most characters of a turn's prompt its line shows.
const PROMPT_CHARS: usize = 100;

/// A turn after the first, with the prompt it sends on one row, and with `-v` the agent's
/// command line.
fn turn_started(l: &mut Lines<'_>, argv: &[String], prompt: Option<&str>) {
    let s = l.s;
    if l.turn.index > 0 {
        let kind = match l.turn.kind {
            TurnKind::Start => "start",
            TurnKind::Resume => "resume",
        };
        let head = format!(
            "{} turn {} ({kind})",
            s.accent.apply_to("▶"),
            l.turn.index + 1
        );
        match prompt.map(one_row).filter(|p| !p.is_empty()) {
            Some(prompt) => l.preview(format!("{head}: {}", truncate(&prompt, PROMPT_CHARS))),
            None => l.info(head),
        }
    }
    if l.verbose {
        l.info(s.dim.apply_to(format!("  $ {}", argv.join(" "))));
    }
}

/// A prompt's words on one row: its lines and runs of spaces joined by one space.
fn one_row(prompt: &str) -> String {
    prompt.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The summary, why the run ended on a line of its own (what of it the view has not said
/// already: `None` when it said it all), and where the receipt is.
pub(super) fn run_finished(
    l: &mut Lines<'_>,
    outcome: Outcome,
    message: Option<&str>,
    took_ms: u64,
) {
    let summary = summary(l, outcome, took_ms);
    l.alert(summary);
    // Not on the line of the figures, which it would seem to explain (`cost unknown: …`).
    if outcome != Outcome::Completed
        && let Some(message) = message.filter(|m| !m.trim().is_empty())
    {
        l.alert(format!("  {message}"));
    }
    if let Some(info) = l.totals.info.as_ref().filter(|i| !i.run_dir.is_empty()) {
        l.alert(
            l.s.dim
                .apply_to(format!("  receipt: {}/result.json", info.run_dir)),
        );
    }
}

/// `1,218 tokens · $0.0033`: what the run has spent so far, what is not known said so.
pub(super) fn spent(st: &crate::stats::RunStats) -> String {
    let cost = match st.cost() {
        Some(usd) => money(usd),
        None if st.cost_incomplete() && st.known_cost() > 0.0 => {
            format!("cost incomplete (at least {})", money(st.known_cost()))
        }
        None => "cost unknown".to_owned(),
    };
    format!(
        "{} · {cost}",
        tokens(st.tokens.total(), st.tokens_incomplete())
    )
}

/// `✓ completed in 5.2s · 1 step · 0 tool calls · 1,218 tokens · $0.0033`, or how it ended.
fn summary(l: &Lines<'_>, outcome: Outcome, took_ms: u64) -> String {
    let (s, st) = (l.s, l.totals);
    let tools = tool_calls_sandboxed(
        u64::from(st.tool_calls),
        u64::from(st.failed_tools()),
        u64::from(st.denied_tools()),
        u64::from(st.sandbox_refused_calls),
    );
    // An agent that does not report its model calls (Codex) has steps unknown, never 0; no
    // step at all (a provider error before any) goes unsaid.
    let steps = match st.steps() {
        Some(0) => String::new(),
        n => format!("{} · ", steps(n)),
    };
    let facts = format!("{} · {steps}{tools} · {}", duration_ms(took_ms), spent(st));
    if outcome == Outcome::Completed {
        format!(
            "{} {} in {facts}",
            s.ok.apply_to("✓"),
            s.ok.apply_to("completed")
        )
    } else {
        format!(
            "{} {} after {facts}",
            s.error.apply_to("✗"),
            s.error.apply_to(outcome.as_str())
        )
    }
}
