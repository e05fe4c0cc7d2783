//! What went wrong or may: provider errors and retries, the agent's warnings and errors, its
//! stderr, output lines that could not be read, what it printed after its final word, the
//! watchdog's warning, its withdrawal and its diagnosis, and a run directory that could not be written.

use super::Lines;
use crate::event::{
    ActivitySign, Diagnostic, EventKind, ObserverReport, ProviderError, ProviderRetry, Unparsed,
    UnparsedReason,
};
use crate::format::{duration_ms, first_line_and_more, money, plural, thousands};

/// The lines of a warning or error event.
pub(super) fn show(l: &mut Lines<'_>, kind: &EventKind) {
    let s = l.s;
    match kind {
        EventKind::ProviderError(e) => provider_error(l, e),
        EventKind::ProviderRetry(r) => provider_retry(l, r),
        EventKind::AgentWarning { message } => {
            let text = format!("⚠ agent warning: {}", first_line_and_more(message));
            l.alert(s.warn.apply_to(text));
        }
        EventKind::AgentError { name, message } => {
            let text = format!("✗ agent error: {name}: {}", first_line_and_more(message));
            l.alert(s.error.apply_to(text));
        }
        EventKind::Stderr { line } => l.info(s.dim.apply_to(format!("stderr: {line}"))),
        EventKind::Unparsed(u) => unparsed(l, u),
        EventKind::WatchdogWarning {
            quiet_ms,
            timeout_ms,
        } => {
            let text = format!(
                "⚠ no activity for {}; the agent will be stopped after {} of silence",
                duration_ms(*quiet_ms),
                duration_ms(*timeout_ms)
            );
            l.alert(s.warn.apply_to(text));
        }
        EventKind::WatchdogResumed { by, cpu_percent } => resumed(l, *by, *cpu_percent),
        EventKind::WatchdogFired(d) => watchdog_fired(l, d),
        EventKind::ObserverFailed {
            index,
            target,
            problem,
        } => {
            let text = format!(
                "⚠ observer {index} ({target}) {problem}: it gets no more events; the run goes on"
            );
            l.alert(s.warn.apply_to(text));
        }
        EventKind::StuckWarning(stuck) => {
            let text = format!("⟳ {}", crate::stuck::describe(stuck));
            l.alert(s.warn.apply_to(text));
        }
        EventKind::StuckDetected(stuck) => {
            let text = format!(
                "✗ stuck: {}; stopping the agent",
                crate::stuck::describe(stuck)
            );
            l.alert(s.error.apply_to(text));
        }
        // The stuck line before it said what was repeated.
        EventKind::StuckNudged(_) => {
            let text = "⟳ nudging the agent once: it goes on in the same session, asked to change approach";
            l.alert(s.warn.apply_to(text));
        }
        // A tool's refusal was told on its own line.
        EventKind::SandboxDenied {
            call_id: Some(_), ..
        } => {}
        EventKind::SandboxDenied { source, detail, .. } => {
            let text = format!("⛔ sandbox refused {source}: {detail}");
            l.alert(s.warn.apply_to(text));
        }
        EventKind::ObserverFinished(o) => observer_finished(l, o),
        EventKind::UploadFailed(f) => {
            let text = format!("✗ cannot upload the run to {}: {}", f.url, f.error);
            l.alert(s.error.apply_to(text));
        }
        EventKind::StorageFailed { path, error } => {
            let text = format!("✗ cannot write {path}: {error}");
            l.alert(s.error.apply_to(text));
        }
        EventKind::AfterFinalWord { .. } => {
            crate::warning::of(kind, l.totals.steps_finished, |w| {
                l.alert(s.warn.apply_to(format!("⚠ {w}")));
            });
        }
        _ => {}
    }
}

/// `✓ activity again: cpu 42%`: said wherever the watchdog's warning was, since a warning that
/// no longer holds says so.
fn resumed(l: &mut Lines<'_>, by: ActivitySign, cpu_percent: Option<u32>) {
    let what = match (by, cpu_percent) {
        (ActivitySign::Cpu, Some(p)) => format!("cpu {p}%"),
        (ActivitySign::Cpu, None) => "cpu".to_owned(),
        (ActivitySign::Stdout, _) => "output".to_owned(),
        (ActivitySign::Stderr, _) => "stderr".to_owned(),
    };
    let text = format!("✓ activity again: {what}; the watchdog's warning is withdrawn");
    l.alert(l.s.ok.apply_to(text));
}

/// What an observer missed, at the end of the run: events dropped, and why it got no more
/// unless that was told as it happened.
fn observer_finished(l: &mut Lines<'_>, o: &ObserverReport) {
    let told = l.totals.observers_told.contains(&o.index);
    let problem = o.problem.clone().filter(|_| !told);
    let mut missed = Vec::new();
    if o.dropped > 0 {
        missed.push(format!(
            "{} of {} dropped",
            plural(o.dropped, "event"),
            thousands(o.dropped + o.queued)
        ));
    }
    missed.extend(problem);
    if missed.is_empty() {
        return;
    }
    let text = format!(
        "⚠ observer {} ({}): {}",
        o.index,
        o.target,
        missed.join(" · ")
    );
    l.alert(l.s.warn.apply_to(text));
}

/// `⚠ provider error: APIError 429: rate limited (retryable)`.
fn provider_error(l: &mut Lines<'_>, e: &ProviderError) {
    let status = e.status.map(|c| format!(" {c}")).unwrap_or_default();
    let retry = match e.retryable {
        Some(true) => " (retryable)",
        Some(false) => " (not retryable)",
        None => "",
    };
    let text = format!(
        "⚠ provider error: {}{status}: {}{retry}",
        e.name,
        first_line_and_more(&e.message)
    );
    l.alert(l.s.warn.apply_to(text));
}

/// `⟳ provider retry 1/3 in 600ms: overloaded 529`.
fn provider_retry(l: &mut Lines<'_>, r: &ProviderRetry) {
    let of = r.max_attempts.map(|m| format!("/{m}")).unwrap_or_default();
    let delay = r
        .delay_ms
        .map(|ms| format!(" in {}", duration_ms(ms)))
        .unwrap_or_default();
    let status = r.status.map(|c| format!(" {c}")).unwrap_or_default();
    let text = format!(
        "⟳ provider retry {}{of}{delay}: {}{status}",
        r.attempt,
        first_line_and_more(&r.message)
    );
    l.info(l.s.warn.apply_to(text));
}

/// `⚠ unreadable output line (not_json, 17 bytes): <its start>`.
fn unparsed(l: &mut Lines<'_>, u: &Unparsed) {
    let text = if u.reason == UnparsedReason::UnknownType {
        // Valid output of a kind this runbook does not know (a newer agent's): shown a few times,
        // then only counted, so that a new kind of line printed every second does not flood the
        // view. Every one is in the log and counted in the receipt.
        let seen = l.totals.unparsed_lines;
        if seen > SHOWN_UNKNOWN_LINES + 1 {
            return;
        }
        if seen == SHOWN_UNKNOWN_LINES + 1 {
            "⚠ more lines runbook does not know or cannot read: counted in the receipt's \
             unparsed_lines, kept in stdout.log"
                .to_owned()
        } else {
            format!(
                "⚠ output of a kind runbook does not know ({} bytes; kept and counted): {}",
                thousands(u.bytes),
                first_line_and_more(&u.head)
            )
        }
    } else {
        format!(
            "⚠ unreadable output line ({}, {} bytes): {}",
            reason_name(u.reason),
            thousands(u.bytes),
            first_line_and_more(&u.head)
        )
    };
    l.alert(l.s.warn.apply_to(text));
}

/// How many lines of an unknown kind are shown before they are only counted.
const SHOWN_UNKNOWN_LINES: u64 = 5;

/// The watchdog's diagnosis: how long each sign of life has been quiet, where the run was, and
/// the last of stderr.
fn watchdog_fired(l: &mut Lines<'_>, d: &Diagnostic) {
    let s = l.s;
    let step = d
        .open_step
        .map(|n| format!(" · in step {n}"))
        .unwrap_or_default();
    let cost = d
        .cost_usd
        .map(|c| format!(" · {} so far", money(c)))
        .unwrap_or_default();
    let last = d.last_event.as_deref().unwrap_or("none");
    l.alert(s.error.apply_to(format!(
        "✗ watchdog: no activity for {} (stdout quiet {}, stderr quiet {}, cpu idle {})",
        duration_ms(d.timeout_ms),
        duration_ms(d.stdout_quiet_ms),
        duration_ms(d.stderr_quiet_ms),
        duration_ms(d.cpu_quiet_ms),
    )));
    let done = match d.completed_steps {
        Some(n) => format!("{} done", plural(u64::from(n), "step")),
        None => "steps unknown".to_owned(),
    };
    if let Some(tool) = &d.running_tool {
        l.alert(s.dim.apply_to(format!("  running: {tool}")));
    }
    l.alert(
        s.dim
            .apply_to(format!("  last event {last}{step} · {done}{cost}")),
    );
    for line in &d.stderr_tail {
        l.alert(s.dim.apply_to(format!("  stderr: {line}")));
    }
}

/// The schema's name of an unparsed reason (`not_json`).
fn reason_name(reason: UnparsedReason) -> String {
    serde_json::to_value(reason)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}
