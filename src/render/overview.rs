//! `runbook stats` as text: the headline numbers, what failed and how, then per day (a bar chart
//! on a terminal, the numbers alone elsewhere) and per agent, model and project.

use std::path::PathBuf;

use super::Styles;
use super::report::token_kinds;
use super::table::{Column, Fit, KEEP, Table};
use crate::format::{duration_ms, money, money_of, plural, short_count};
use crate::overview::{Figures, Group, StuckFigures};
use crate::term::wrap::wrap;

/// The widest bar of the per-day chart, in cells.
const BAR: usize = 30;

/// The whole text, fitted to `width` columns (`None`: lines as long as they are);
/// `filtered`: some filter was given.
pub(crate) fn text(
    f: &Figures,
    dirs: &[PathBuf],
    s: &Styles,
    charts: bool,
    filtered: bool,
    width: Option<usize>,
) -> String {
    let mut out = String::new();
    // A line of prose, broken between words to the width.
    let mut say = |line: String| {
        match width {
            Some(width) => out.push_str(&wrap(&line, width, 0, 2).join("\n")),
            None => out.push_str(&line),
        }
        out.push('\n');
    };
    let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    let span = match (&f.first, &f.last) {
        (Some(first), Some(last)) => format!(", {} to {}", &first[..10], &last[..10]),
        _ => String::new(),
    };
    say(format!(
        "{} in {}{span}",
        s.bold.apply_to(plural(u64::from(f.runs), "run")),
        dirs.join(", ")
    ));
    if !f.skipped.is_empty() {
        let total: u32 = f.skipped.values().sum();
        let why: Vec<String> = f.skipped.iter().map(|(w, n)| format!("{n} {w}")).collect();
        say(s
            .warn
            .apply_to(format!(
                "{} skipped: {}",
                plural(u64::from(total), "receipt"),
                why.join(", ")
            ))
            .to_string());
    }
    for i in &f.implausible {
        let whose = if i.runs == 1 {
            format!("1 run's {}", i.figure)
        } else {
            format!("{} runs' {}", i.runs, i.figure)
        };
        say(s
            .warn
            .apply_to(format!(
                "{whose} skipped: implausible ({}; {})",
                i.example, i.bound
            ))
            .to_string());
    }
    if f.runs == 0 && f.running == 0 && f.abandoned == 0 {
        say(if filtered {
            "No runs match: widen the filters, or name other runs directories.".to_owned()
        } else {
            "No runs yet: `runbook run` makes the first.".to_owned()
        });
        return out;
    }
    out.push_str(&headline(f, s, width));
    out.push('\n');
    out.push_str(&per_day(&f.per_day, s, charts, width));
    for (title, groups) in [
        ("AGENT", &f.per_agent),
        ("MODEL", &f.per_model),
        ("PROJECT", &f.per_project),
    ] {
        out.push('\n');
        out.push_str(&table(title, groups, s, width));
    }
    out
}

/// How the runs ended, the completed ones said once: `7 of 14 completed (50.0%) · hung 4 ·
/// agent_error 3`.
fn outcomes(f: &Figures) -> String {
    let completed = f.outcomes.get("completed").copied().unwrap_or(0);
    let rate = f.success_rate.map_or_else(String::new, |r| {
        format!("{completed} of {} completed ({:.1}%)", f.runs, r * 100.0)
    });
    let mut others: Vec<(&String, &u32)> = f
        .outcomes
        .iter()
        .filter(|(o, _)| o.as_str() != "completed" || rate.is_empty())
        .collect();
    others.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    let parts = std::iter::once(rate)
        .filter(|r| !r.is_empty())
        .chain(others.iter().map(|(o, n)| format!("{o} {n}")));
    parts.collect::<Vec<_>>().join(" · ")
}

/// The headline numbers: one labelled row each, broken under the label when too long.
fn headline(f: &Figures, s: &Styles, width: Option<usize>) -> String {
    let mut rows = Table::new(&[Column::new(""), Column::new("").fit(Fit::Wrap { min: 20 })]);
    let mut row = |label: &str, value: String| {
        rows.row([s.dim.apply_to(label).to_string(), value]);
    };
    row("outcomes", outcomes(f));
    let c = &f.cost;
    let unknown = if c.unknown > 0 {
        format!(" (unknown for {})", plural(u64::from(c.unknown), "run"))
    } else {
        String::new()
    };
    let total = (c.unknown == 0).then_some(c.total_usd);
    row(
        "cost",
        format!(
            "{} total · median {} · p90 {} per run{unknown}",
            money_of(total, c.total_usd),
            c.median_usd.map_or("-".to_owned(), money),
            c.p90_usd.map_or("-".to_owned(), money)
        ),
    );
    row("tokens", token_kinds(&f.tokens, short_count));
    row(
        "duration",
        format!(
            "median {} · p90 {}",
            f.duration_ms.median.map_or("-".to_owned(), duration_ms),
            f.duration_ms.p90.map_or("-".to_owned(), duration_ms)
        ),
    );
    if let Some(r) = &f.repair {
        row(
            "repair",
            format!(
                "{} of {} whose checks failed passed in the end ({:.1}%)",
                r.repaired,
                plural(u64::from(r.failing), "run"),
                r.rate * 100.0
            ),
        );
    }
    if let Some(st) = &f.stuck {
        row("stuck", stuck_line(st));
    }
    if !f.failing_tools.is_empty() {
        let tools: Vec<String> = f
            .failing_tools
            .iter()
            .map(|(name, errors, calls)| format!("{name} {errors} of {calls}"))
            .collect();
        row(
            "failing",
            format!("{} (failed calls of all)", tools.join(" · ")),
        );
    }
    if !f.provider_errors.is_empty() {
        row("provider", counted(&f.provider_errors, "run"));
    }
    if !f.denials.is_empty() {
        row("denied", counted(&f.denials, "time"));
    }
    rows.fit(width).text()
}

/// `2 runs stopped going round in circles, having spent $0.41`.
fn stuck_line(st: &StuckFigures) -> String {
    let unknown = if st.cost_unknown > 0 {
        format!(
            " (unknown for {})",
            plural(u64::from(st.cost_unknown), "run")
        )
    } else {
        String::new()
    };
    format!(
        "{} stopped going round in circles, having spent {}{unknown}",
        plural(u64::from(st.runs), "run"),
        money_of(st.spent_usd, st.known_spent_usd)
    )
}

/// `bash 22 · write 4`.
fn counted(items: &[(String, u32)], unit: &str) -> String {
    let items: Vec<String> = items
        .iter()
        .map(|(name, n)| format!("{name} {}", plural(u64::from(*n), unit)))
        .collect();
    items.join(" · ")
}

/// Each day: runs (and failures), cost; with a bar of runs on a terminal, in the room the
/// numbers leave (at most [`BAR`] cells).
fn per_day(days: &[Group], s: &Styles, charts: bool, width: Option<usize>) -> String {
    let mut table = Table::new(&[
        Column::new("DAY"),
        Column::new("RUNS"),
        Column::new("FAILED").rank(2),
        Column::new("COST").rank(3),
    ]);
    for d in days {
        table.row([
            d.key.clone(),
            d.runs.to_string(),
            d.failed.to_string(),
            money_of(d.cost_usd, d.known_cost_usd),
        ]);
    }
    let fitted = table.fit(width);
    let used = fitted
        .header
        .iter()
        .chain(&fitted.rows)
        .map(|r| console::measure_text_width(r))
        .max()
        .unwrap_or(0);
    let room = width.map_or(BAR, |w| w.saturating_sub(used + 2)).min(BAR);
    let most = days.iter().map(|d| d.runs).max().unwrap_or(0).max(1) as usize;
    let mut out = bold(fitted.header.as_deref(), s);
    for (row, d) in fitted.rows.iter().zip(days) {
        out.push_str(row);
        // Bars too short to compare are left out.
        if charts && room >= 5 {
            // Completed, then failed, then the rest (stopped by a person, running).
            let cells = |n: u32| (n as usize * room / most).max(usize::from(n > 0));
            let rest = d.runs - d.completed - d.failed;
            let pad = used - console::measure_text_width(row) + 2;
            out.push_str(&format!(
                "{}{}{}{}",
                " ".repeat(pad),
                s.ok.apply_to("█".repeat(cells(d.completed))),
                s.error.apply_to("█".repeat(cells(d.failed))),
                s.warn.apply_to("█".repeat(cells(rest)))
            ));
        }
        out.push('\n');
    }
    out
}

/// Per agent, model or project: runs, success, cost, median duration; a name never cut (it is
/// what `--agent`, `--model` and `--project` take): too long for its column, on a row of its own.
fn table(title: &'static str, groups: &[Group], s: &Styles, width: Option<usize>) -> String {
    let mut table = Table::new(&[
        Column::new(title).fit(Fit::Path { min: 16 }).rank(KEEP),
        Column::new("RUNS"),
        Column::new("COMPLETED").rank(4).or("OK", 6),
        Column::new("COST").rank(5),
        Column::new("MEDIAN TIME").rank(3).or("MEDIAN", 4),
    ]);
    for g in groups {
        table.row([
            g.key.clone(),
            g.runs.to_string(),
            format!(
                "{:.0}%",
                f64::from(g.completed) * 100.0 / f64::from(g.runs.max(1))
            ),
            money_of(g.cost_usd, g.known_cost_usd),
            g.median_duration_ms
                .map_or_else(|| "unknown".to_owned(), duration_ms),
        ]);
    }
    let fitted = table.fit(width);
    let mut out = bold(fitted.header.as_deref(), s);
    for row in &fitted.rows {
        out.push_str(row);
        out.push('\n');
    }
    out
}

/// A table's header row, bold, and its newline.
fn bold(header: Option<&str>, s: &Styles) -> String {
    header.map_or_else(String::new, |h| format!("{}\n", s.bold.apply_to(h)))
}
