//! The project's checks after the task: `✓ test 12.3s`, or `✗ lint (exit 1) 0.8s` and the last
//! lines of its output; the attempts to repair what failed; and a turn that stalled on refused
//! permissions, with the pass that may follow.

use super::Lines;
use crate::event::{CheckResult, Denial, EventKind, RepairStop};
use crate::format::{duration_ms, money, plural};

/// How many of a failed check's last lines are shown (the log has them all).
const FAILURE_LINES: usize = 5;

/// The lines of a check event; a failure needs attention.
pub(super) fn show(l: &mut Lines<'_>, kind: &EventKind) {
    match kind {
        EventKind::CheckStarted { command, .. } if l.verbose => {
            l.info(l.s.dim.apply_to(format!("  $ {command}")));
        }
        EventKind::CheckFinished(c) => finished(l, c),
        EventKind::RepairStarted {
            attempt,
            failing,
            budget_usd,
        } => {
            let budget = budget_usd
                .map(|b| format!(" (up to {})", money(b)))
                .unwrap_or_default();
            l.info(format!(
                "{} repair attempt {attempt}{budget}: fixing {}",
                l.s.accent.apply_to("↻"),
                failing.join(", ")
            ));
        }
        EventKind::RepairFinished { attempts, stopped } => {
            if *stopped == RepairStop::Passed {
                let attempts = plural(u64::from(*attempts), "attempt");
                l.info(format!("{} repaired in {attempts}", l.s.ok.apply_to("✓")));
            } else {
                let text = format!("✗ {}", repair_stopped(*attempts, *stopped));
                l.alert(l.s.error.apply_to(text));
            }
        }
        EventKind::PermissionStalled {
            denied,
            retry,
            budget_usd,
        } => stalled(l, denied, *retry, *budget_usd),
        _ => {}
    }
}

/// `repair stopped after 2 attempts: its budget was spent`.
pub(super) fn repair_stopped(attempts: u32, stopped: RepairStop) -> String {
    let attempts = plural(u64::from(attempts), "attempt");
    format!("repair stopped after {attempts}: {}", stopped.describe())
}

/// How many refused operations the line of a stalled turn names.
const STALLED_SHOWN: usize = 3;

/// `⊘ 2 operations were refused permission: bash touch x · write a.txt`, then the pass that
/// follows, or how to have one.
fn stalled(l: &mut Lines<'_>, denied: &[Denial], retry: bool, budget_usd: Option<f64>) {
    let s = l.s;
    let mut what: Vec<String> = denied
        .iter()
        .take(STALLED_SHOWN)
        .map(|d| format!("{} {}", d.tool, d.detail).trim_end().to_owned())
        .collect();
    if denied.len() > STALLED_SHOWN {
        what.push(format!("… and {} more", denied.len() - STALLED_SHOWN));
    }
    // The run keeps the first of a flood of refusals, not all of them.
    let count = match denied.len() {
        1 => "an operation was".to_owned(),
        n if n >= crate::stats::KEEP_DENIALS => format!("{n} or more operations were"),
        n => format!("{n} operations were"),
    };
    l.alert(format!(
        "{} {count} refused permission: {}",
        s.warn.apply_to("⊘"),
        what.join(" · ")
    ));
    if retry {
        let budget = budget_usd
            .map(|b| format!(" (up to {})", money(b)))
            .unwrap_or_default();
        l.info(format!(
            "{} one more pass{budget}: reach the goal without them, or say what is needed",
            s.accent.apply_to("↻")
        ));
    } else {
        l.alert(s.dim.apply_to(
            "  --retry-denied gives the session one more pass without them; --permissions allows more",
        ));
    }
}

fn finished(l: &mut Lines<'_>, c: &CheckResult) {
    let s = l.s;
    let took = s.dim.apply_to(duration_ms(c.duration_ms));
    let name = s.bold.apply_to(&c.name);
    if c.passed {
        l.info(format!("{} {name} {took}", s.ok.apply_to("✓")));
        return;
    }
    let why = match (&c.error, c.timed_out) {
        (Some(error), _) => error.clone(),
        (None, true) => "timed out".to_owned(),
        (None, false) => c.exit.to_string(),
    };
    l.alert(format!(
        "{} {name} ({}) {took}",
        s.error.apply_to("✗"),
        s.error.apply_to(why)
    ));
    let shown = c.tail.len().saturating_sub(FAILURE_LINES);
    // What failed is the text to read: drawn as it is, only its margin dim.
    for line in &c.tail[shown..] {
        l.alert(format!("  {} {line}", s.dim.apply_to("│")));
    }
    l.alert(s.dim.apply_to(format!("  log: {}", c.log)));
}
