//! The `runbook list` table: one row per run, fitted to the terminal by the table renderer.

use std::time::SystemTime;

use super::Styles;
use super::report::outcome;
use super::table::{Cell, Column, Fit, Fitted, Table};
use crate::event::Outcome;
use crate::format::{age, duration_ms, money, utc};

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
    /// The task it ran and the batch's short id, for a run of a batch.
    pub batch: Option<(String, String)>,
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

/// The columns, and which give way first on a narrow terminal: the model (left out whole, never
/// cut); the start, shortened to its age (the run's id tells the time it started); the steps,
/// the agent, the checks, the time, the cost, then the age. The run, its outcome and its prompt
/// stay, the prompt abbreviated with `…` (the one column that is an abbreviation).
const COLUMNS: [Column; 10] = [
    Column::new("RUN"),
    Column::new("STARTED (UTC)").rank(2).or("AGE", 8),
    Column::new("AGENT").rank(4),
    Column::new("MODEL").rank(1),
    Column::new("OUTCOME"),
    Column::new("TIME").rank(6),
    Column::new("STEPS").rank(3),
    Column::new("COST").rank(7),
    Column::new("CHECKS").rank(5),
    Column::new("PROMPT").rank(9).fit(Fit::Cut { min: 16 }),
];

/// The table, laid out for `width` columns (`None`: every column whole), its header bold.
pub(crate) fn table(
    rows: &[Row],
    styles: &Styles,
    now: SystemTime,
    width: Option<usize>,
) -> Fitted {
    let mut table = Table::new(&COLUMNS);
    for r in rows {
        table.row(cells(r, styles, now));
    }
    let mut fitted = table.fit(width);
    fitted.header = fitted.header.map(|h| styles.bold.apply_to(h).to_string());
    fitted
}

/// A row's cells, its foreign text (the agent, model and prompt a receipt read back says)
/// escaped before the columns are measured.
fn cells(r: &Row, styles: &Styles, now: SystemTime) -> [Cell; 10] {
    let escape = |c: String| match crate::foreign::Foreign::new(&c).term() {
        std::borrow::Cow::Borrowed(_) => c,
        std::borrow::Cow::Owned(escaped) => escaped,
    };
    let started = utc(r.started_at);
    let age = age(r.started_at, now);
    [
        escape(r.run_id.clone()).into(),
        Cell::or(format!("{} {age}", &started[5..16]), age),
        escape(r.agent.clone()).into(),
        escape(r.model.clone().unwrap_or_else(|| "-".to_owned())).into(),
        outcome(r.outcome, styles).into(),
        duration_ms(r.duration_ms).into(),
        r.steps
            .map_or_else(|| "?".to_owned(), |n| n.to_string())
            .into(),
        r.cost_usd.map_or_else(|| "?".to_owned(), money).into(),
        r.checks
            .map_or_else(|| "-".to_owned(), |(passed, ran)| format!("{passed}/{ran}"))
            .into(),
        escape(prompt(r)).into(),
    ]
}

/// The prompt's first line; for a batch's run, after its task and batch:
/// `build-fix (batch ew2p8): Fix the build`.
fn prompt(r: &Row) -> String {
    let first = r.prompt.lines().next().unwrap_or("").trim();
    match &r.batch {
        Some((task, batch)) => format!("{task} (batch {batch}): {first}"),
        None => first.to_owned(),
    }
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
