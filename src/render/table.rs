//! The `runbook list` table: one row per run, columns sized to their content.

use std::time::SystemTime;

use super::Styles;
use super::report::outcome;
use crate::event::Outcome;
use crate::format::{age, duration_ms, fit, money, utc};

/// What a row shows of a run.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub run_id: String,
    pub started_at: SystemTime,
    pub agent: String,
    pub model: Option<String>,
    pub outcome: Outcome,
    pub duration_ms: u64,
    /// `None`: unknown (an agent that does not report its model calls).
    pub steps: Option<u32>,
    pub cost_usd: Option<f64>,
    /// The last run of the project's checks: how many passed, of how many; `None` without
    /// checks.
    pub checks: Option<(usize, usize)>,
    pub prompt: String,
}

impl Row {
    /// How many of the checks that ran last passed, of how many, from each check's attempt
    /// and whether it passed.
    pub(crate) fn last_checks(checks: impl Iterator<Item = (u32, bool)>) -> Option<(usize, usize)> {
        let checks: Vec<(u32, bool)> = checks.collect();
        let last = checks.iter().map(|c| c.0).max()?;
        let ran: Vec<bool> = checks.iter().filter(|c| c.0 == last).map(|c| c.1).collect();
        Some((ran.iter().filter(|&&p| p).count(), ran.len()))
    }
}

/// The table, as lines fitting `width` columns (the prompt column takes what is left).
pub(crate) fn table(rows: &[Row], styles: &Styles, now: SystemTime, width: usize) -> String {
    const HEADERS: [&str; 10] = [
        "RUN",
        "STARTED (UTC)",
        "AGENT",
        "MODEL",
        "OUTCOME",
        "TIME",
        "STEPS",
        "COST",
        "CHECKS",
        "PROMPT",
    ];
    let cells: Vec<[String; 10]> = rows.iter().map(|r| cells(r, now)).collect();
    let mut widths: [usize; 9] = HEADERS[..9]
        .iter()
        .map(|h| h.len())
        .collect::<Vec<_>>()
        .try_into()
        .unwrap_or([0; 9]);
    for row in &cells {
        for (w, cell) in widths.iter_mut().zip(row.iter()) {
            *w = (*w).max(console::measure_text_width(cell));
        }
    }
    let used: usize = widths.iter().map(|w| w + 2).sum();
    let prompt_width = width.saturating_sub(used).max(12);

    let mut out = String::new();
    let header: Vec<String> = HEADERS[..9]
        .iter()
        .zip(widths)
        .map(|(h, w)| format!("{h:<w$}"))
        .collect();
    out.push_str(
        &styles
            .bold
            .apply_to(format!("{}  PROMPT", header.join("  ")))
            .to_string(),
    );
    out.push('\n');
    for (row, r) in cells.iter().zip(rows) {
        for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
            let pad = w.saturating_sub(console::measure_text_width(cell));
            let text = if i == 4 {
                outcome(r.outcome, styles)
            } else {
                cell.clone()
            };
            out.push_str(&text);
            out.push_str(&" ".repeat(pad + 2));
        }
        out.push_str(&fit(&row[9], prompt_width));
        out.push('\n');
    }
    out
}

/// A row's cells as plain text, in the order of the headers.
/// A row's cells, its foreign text (the agent, model and prompt a receipt read back says)
/// escaped before the columns are measured.
fn cells(r: &Row, now: SystemTime) -> [String; 10] {
    let started = utc(r.started_at);
    let cells = [
        r.run_id.clone(),
        format!("{} {}", &started[5..16], age(r.started_at, now)),
        r.agent.clone(),
        r.model.clone().unwrap_or_else(|| "-".to_owned()),
        r.outcome.as_str().to_owned(),
        duration_ms(r.duration_ms),
        r.steps.map_or_else(|| "?".to_owned(), |n| n.to_string()),
        r.cost_usd.map_or_else(|| "?".to_owned(), money),
        r.checks
            .map_or_else(|| "-".to_owned(), |(passed, ran)| format!("{passed}/{ran}")),
        r.prompt.lines().next().unwrap_or("").trim().to_owned(),
    ];
    cells.map(|c| match crate::foreign::Foreign::new(&c).term() {
        std::borrow::Cow::Borrowed(_) => c,
        std::borrow::Cow::Owned(escaped) => escaped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checks_column_counts_the_last_run_of_the_checks() {
        assert_eq!(Row::last_checks(std::iter::empty()), None);
        let runs = [(0, false), (0, true), (1, true), (1, true)];
        assert_eq!(Row::last_checks(runs.into_iter()), Some((2, 2)));
        assert_eq!(
            Row::last_checks([(0, false), (0, true)].into_iter()),
            Some((1, 2))
        );
    }
}
