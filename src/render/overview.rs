//! `runbook stats` as text: the headline numbers, what failed and how, then per day (a bar chart
//! on a terminal, the numbers alone elsewhere) and per agent, model and project.

use std::path::PathBuf;

use super::Styles;
use super::settings::columns;
use crate::format::{duration_ms, money, money_of, plural, short_count};
use crate::overview::{Figures, Group};

/// The widest bar of the per-day chart, in cells.
const BAR: usize = 30;

/// The whole text; `filtered`: some filter was given.
pub(crate) fn text(
    f: &Figures,
    dirs: &[PathBuf],
    s: &Styles,
    charts: bool,
    filtered: bool,
) -> String {
    let mut out = String::new();
    let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    let span = match (&f.first, &f.last) {
        (Some(first), Some(last)) => format!(", {} to {}", &first[..10], &last[..10]),
        _ => String::new(),
    };
    out.push_str(&format!(
        "{} in {}{span}\n",
        s.bold.apply_to(plural(u64::from(f.runs), "run")),
        dirs.join(", ")
    ));
    if !f.skipped.is_empty() {
        let total: u32 = f.skipped.values().sum();
        let why: Vec<String> = f.skipped.iter().map(|(w, n)| format!("{n} {w}")).collect();
        out.push_str(&format!(
            "{}\n",
            s.warn.apply_to(format!(
                "{} skipped: {}",
                plural(u64::from(total), "receipt"),
                why.join(", ")
            ))
        ));
    }
    for i in &f.implausible {
        let whose = if i.runs == 1 {
            format!("1 run's {}", i.figure)
        } else {
            format!("{} runs' {}", i.runs, i.figure)
        };
        out.push_str(&format!(
            "{}\n",
            s.warn.apply_to(format!(
                "{whose} skipped: implausible ({}; {})",
                i.example, i.bound
            ))
        ));
    }
    if f.runs == 0 && f.running == 0 && f.abandoned == 0 {
        out.push_str(if filtered {
            "No runs match: widen the filters, or name other runs directories.\n"
        } else {
            "No runs yet: `runbook run` makes the first.\n"
        });
        return out;
    }
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut row =
        |label: &str, value: String| rows.push(vec![s.dim.apply_to(label).to_string(), value]);
    let rate = f
        .success_rate
        .map_or_else(String::new, |r| format!("{:.1}% completed · ", r * 100.0));
    let mut outcomes: Vec<(&String, &u32)> = f.outcomes.iter().collect();
    outcomes.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    let outcomes: Vec<String> = outcomes.iter().map(|(o, n)| format!("{o} {n}")).collect();
    row("outcomes", format!("{rate}{}", outcomes.join(" · ")));
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
    let t = &f.tokens;
    row(
        "tokens",
        format!(
            "{}{} · input {} · output {} · reasoning {} · cache read {} · cache write {}",
            if t.incomplete { "at least " } else { "" },
            short_count(t.total),
            short_count(t.input),
            short_count(t.output),
            short_count(t.reasoning),
            short_count(t.cache_read),
            short_count(t.cache_write)
        ),
    );
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
    for line in columns(&rows) {
        out.push_str(&line);
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&per_day(&f.per_day, s, charts));
    for (title, groups) in [
        ("AGENT", &f.per_agent),
        ("MODEL", &f.per_model),
        ("PROJECT", &f.per_project),
    ] {
        out.push('\n');
        out.push_str(&table(title, groups, s));
    }
    out
}

/// `bash 22 · write 4`.
fn counted(items: &[(String, u32)], unit: &str) -> String {
    let items: Vec<String> = items
        .iter()
        .map(|(name, n)| format!("{name} {}", plural(u64::from(*n), unit)))
        .collect();
    items.join(" · ")
}

/// Each day: runs (and failures), cost; with a bar of runs on a terminal.
fn per_day(days: &[Group], s: &Styles, charts: bool) -> String {
    let most = days.iter().map(|d| d.runs).max().unwrap_or(0).max(1) as usize;
    let mut rows = vec![vec![
        s.bold.apply_to("DAY").to_string(),
        s.bold.apply_to("RUNS").to_string(),
        s.bold.apply_to("FAILED").to_string(),
        s.bold.apply_to("COST").to_string(),
        String::new(),
    ]];
    for d in days {
        let bar = if charts {
            let ok = d.completed as usize * BAR / most;
            let failed = (d.runs - d.completed) as usize * BAR / most;
            format!(
                "{}{}",
                s.ok.apply_to("█".repeat(ok.max(usize::from(d.completed > 0)))),
                s.error
                    .apply_to("█".repeat(failed.max(usize::from(d.runs > d.completed))))
            )
        } else {
            String::new()
        };
        rows.push(vec![
            d.key.clone(),
            d.runs.to_string(),
            (d.runs - d.completed).to_string(),
            money_of(d.cost_usd, d.known_cost_usd),
            bar,
        ]);
    }
    let mut out = String::new();
    for line in columns(&rows) {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Per agent, model or project: runs, success, cost, median duration.
fn table(title: &str, groups: &[Group], s: &Styles) -> String {
    let mut rows = vec![
        [title, "RUNS", "COMPLETED", "COST", "MEDIAN TIME"]
            .iter()
            .map(|h| s.bold.apply_to(*h).to_string())
            .collect::<Vec<_>>(),
    ];
    for g in groups {
        rows.push(vec![
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
    let mut out = String::new();
    for line in columns(&rows) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}
