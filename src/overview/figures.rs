//! The figures over a set of runs: outcomes, cost, tokens, durations, the tools that fail, the
//! provider errors and denials that recur, repair; per day, and per agent, model and project.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use super::read::{Found, RunFacts};
use crate::event::{Outcome, RepairStop};
use crate::receipt::TokenTotals as Tokens;

/// How many of the most failing tools, errors and denials are kept.
const TOP: usize = 5;

/// Everything `runbook stats` says, as `--json` prints it.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct Figures {
    /// Runs with a receipt that pass the filters.
    pub runs: u32,
    /// Runs without a receipt whose runbook is still running them.
    pub running: u32,
    /// Runs without a receipt whose runbook is gone.
    pub abandoned: u32,
    /// Receipts that could not be used, by why (`cut short`, `not a receipt`, `too large`,
    /// `of schema version 2`).
    pub skipped: BTreeMap<String, u32>,
    /// Figures of receipts beyond their bounds (a run costs from $0 to $1e6, uses at most 1e15
    /// tokens of a kind, takes at most a year, makes at most 1e9 calls of a tool), left out of
    /// every total as unknown: one entry per figure.
    pub implausible: Vec<Implausible>,
    /// The first and last start, RFC 3339.
    pub first: Option<String>,
    /// The last start.
    pub last: Option<String>,
    /// Of the runs with a receipt, the share that completed (0 to 1).
    pub success_rate: Option<f64>,
    /// Runs by outcome.
    pub outcomes: BTreeMap<String, u32>,
    /// What the runs cost.
    pub cost: CostFigures,
    /// All runs' tokens, by kind.
    pub tokens: Tokens,
    /// How long runs took, in milliseconds.
    pub duration_ms: Spread,
    /// The tools whose calls failed most: name, failed calls, calls.
    pub failing_tools: Vec<(String, u32, u32)>,
    /// The most common provider errors, with how many runs met each.
    pub provider_errors: Vec<(String, u32)>,
    /// The tools most often refused, with how many times.
    pub denials: Vec<(String, u32)>,
    /// Runs whose checks failed after the task, and how many of them were repaired.
    pub repair: Option<RepairFigures>,
    /// Runs stopped for going round in circles (`--stuck`), and what they spent until then.
    pub stuck: Option<StuckFigures>,
    /// Each day (UTC) with runs, oldest first.
    pub per_day: Vec<Group>,
    /// Per agent, most runs first.
    pub per_agent: Vec<Group>,
    /// Per model, most runs first.
    pub per_model: Vec<Group>,
    /// Per project (a run's git root, else its directory), most runs first.
    pub per_project: Vec<Group>,
}

/// One figure that some receipts hold beyond its bound.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct Implausible {
    /// `cost`, `tokens`, `duration` or `tool calls`.
    pub figure: String,
    /// How many runs' figure was left out.
    pub runs: u32,
    /// The first such value (`$1e308`, `18446744073709551615 tokens`).
    pub example: String,
    /// What the figure must be.
    pub bound: String,
}

/// The cost of the runs.
#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
pub(crate) struct CostFigures {
    /// The known costs added up, in USD: a lower bound when `unknown` is not 0.
    pub total_usd: f64,
    /// Per run, of the runs whose cost is known.
    pub median_usd: Option<f64>,
    /// The 90th percentile per run.
    pub p90_usd: Option<f64>,
    /// Runs whose cost is unknown, or beyond its bound (not counted above).
    pub unknown: u32,
}

/// The median and 90th percentile of some amounts.
#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
pub(crate) struct Spread {
    /// The middle value.
    pub median: Option<u64>,
    /// 90% of the values are at most this.
    pub p90: Option<u64>,
}

/// Repair over the runs whose checks failed after the task.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct RepairFigures {
    /// Runs whose first checks failed.
    pub failing: u32,
    /// Of those, the runs whose checks passed in the end.
    pub repaired: u32,
    /// `repaired` / `failing`.
    pub rate: f64,
}

/// The runs stopped for going round in circles: ended `stuck`, or their repair was.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct StuckFigures {
    /// Runs stopped so.
    pub runs: u32,
    /// What they spent until they were stopped, added up, in USD; null when some run's cost is
    /// unknown.
    pub spent_usd: Option<f64>,
    /// The costs that are known added up, in USD (a lower bound when `cost_unknown` is not 0).
    pub known_spent_usd: f64,
    /// Of those runs, those whose cost is unknown.
    pub cost_unknown: u32,
}

/// The runs of one day, agent, model or project.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct Group {
    /// The day (`2026-11-24`), agent, model or project.
    pub key: String,
    /// Runs.
    pub runs: u32,
    /// Runs that completed.
    pub completed: u32,
    /// Runs that failed (not those a person stopped, nor a plan not approved).
    pub failed: u32,
    /// The runs' cost added up, in USD; null when some run's cost is unknown.
    pub cost_usd: Option<f64>,
    /// The costs that are known added up, in USD (a lower bound when `cost_unknown` is not 0).
    pub known_cost_usd: f64,
    /// Runs whose cost is unknown, or beyond its bound.
    pub cost_unknown: u32,
    /// The median run's duration, in milliseconds; null when no run's is within its bound.
    pub median_duration_ms: Option<u64>,
}

impl Figures {
    pub(crate) fn of(found: &Found) -> Self {
        let runs = &found.runs;
        let outcomes = outcomes(found);
        let completed = runs
            .iter()
            .filter(|r| r.outcome == Outcome::Completed)
            .count();
        let known: Vec<f64> = runs.iter().filter_map(|r| r.cost_usd).collect();
        // A provider error counts once per run that met it.
        let provider_errors = top(runs.iter().flat_map(|r| {
            let mut names = r.provider_errors.clone();
            names.sort();
            names.dedup();
            names
        }));
        let denials = top(runs.iter().flat_map(|r| r.denials.iter().cloned()));
        let failing = runs
            .iter()
            .filter(|r| r.checks.is_some_and(|(failed, _)| failed));
        let failing_count = failing.clone().count() as u32;
        let repaired = failing
            .filter(|r| {
                r.checks.is_some_and(|(_, passed)| passed) || r.repaired == Some(RepairStop::Passed)
            })
            .count() as u32;
        Self {
            runs: runs.len() as u32,
            running: found.running,
            abandoned: found.abandoned,
            skipped: found.skipped.clone(),
            implausible: implausible(runs),
            first: runs.first().map(|r| rfc3339(r.started_at)),
            last: runs.last().map(|r| rfc3339(r.started_at)),
            success_rate: (!runs.is_empty()).then(|| completed as f64 / runs.len() as f64),
            outcomes,
            cost: CostFigures {
                total_usd: sum(known.iter().copied()),
                median_usd: percentile_f(&known, 50),
                p90_usd: percentile_f(&known, 90),
                unknown: runs.iter().filter(|r| r.cost_usd.is_none()).count() as u32,
            },
            tokens: tokens(runs),
            duration_ms: Spread {
                median: percentile(runs.iter().filter_map(|r| r.duration_ms).collect(), 50),
                p90: percentile(runs.iter().filter_map(|r| r.duration_ms).collect(), 90),
            },
            failing_tools: failing_tools(runs),
            provider_errors,
            denials,
            repair: (failing_count > 0).then(|| RepairFigures {
                failing: failing_count,
                repaired,
                rate: f64::from(repaired) / f64::from(failing_count),
            }),
            stuck: stuck(runs),
            per_day: groups(runs, |r| day(r.started_at), false),
            per_agent: groups(runs, |r| r.agent.clone(), true),
            per_model: groups(
                runs,
                |r| {
                    r.model
                        .clone()
                        .unwrap_or_else(|| "(agent's default)".to_owned())
                },
                true,
            ),
            per_project: groups(runs, |r| r.project.clone(), true),
        }
    }
}

/// The runs stopped for going round in circles, and what they spent; `None` when there are none.
fn stuck(runs: &[RunFacts]) -> Option<StuckFigures> {
    let stuck: Vec<&RunFacts> = runs
        .iter()
        .filter(|r| r.outcome == Outcome::Stuck || r.repaired == Some(RepairStop::Stuck))
        .collect();
    let known = sum(stuck.iter().filter_map(|r| r.cost_usd));
    let unknown = stuck.iter().filter(|r| r.cost_usd.is_none()).count() as u32;
    (!stuck.is_empty()).then(|| StuckFigures {
        runs: stuck.len() as u32,
        spent_usd: (unknown == 0).then_some(known),
        known_spent_usd: known,
        cost_unknown: unknown,
    })
}

/// How many runs ended each way, those running and abandoned included.
fn outcomes(found: &Found) -> BTreeMap<String, u32> {
    let mut outcomes: BTreeMap<String, u32> = BTreeMap::new();
    for r in &found.runs {
        *outcomes.entry(r.outcome.as_str().to_owned()).or_default() += 1;
    }
    if found.running > 0 {
        outcomes.insert(Outcome::Running.as_str().to_owned(), found.running);
    }
    if found.abandoned > 0 {
        outcomes.insert(Outcome::Abandoned.as_str().to_owned(), found.abandoned);
    }
    outcomes
}

/// The runs' tokens of each kind added up, saturating.
fn tokens(runs: &[RunFacts]) -> Tokens {
    let mut tokens = Tokens::default();
    for t in runs.iter().map(|r| &r.tokens) {
        tokens.input = tokens.input.saturating_add(t.input);
        tokens.output = tokens.output.saturating_add(t.output);
        tokens.reasoning = tokens.reasoning.saturating_add(t.reasoning);
        tokens.cache_read = tokens.cache_read.saturating_add(t.cache_read);
        tokens.cache_write = tokens.cache_write.saturating_add(t.cache_write);
        tokens.total = tokens.total.saturating_add(t.total);
        tokens.incomplete |= t.incomplete;
    }
    tokens
}

/// The tools whose calls failed most: (name, failed calls, calls), at most `TOP`.
fn failing_tools(runs: &[RunFacts]) -> Vec<(String, u32, u32)> {
    let mut tools: BTreeMap<&str, (u32, u32)> = BTreeMap::new();
    for (name, t) in runs.iter().flat_map(|r| &r.tools) {
        let entry = tools.entry(name).or_default();
        entry.0 = entry.0.saturating_add(t.errors);
        entry.1 = entry.1.saturating_add(t.calls);
    }
    let mut failing: Vec<(String, u32, u32)> = tools
        .into_iter()
        .filter(|(_, (errors, _))| *errors > 0)
        .map(|(name, (errors, calls))| (name.to_owned(), errors, calls))
        .collect();
    failing.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    failing.truncate(TOP);
    failing
}

/// The figures left out for being beyond their bounds, one entry per figure, in the runs' order.
fn implausible(runs: &[RunFacts]) -> Vec<Implausible> {
    let mut all: Vec<Implausible> = Vec::new();
    for out in runs.iter().flat_map(|r| r.out_of_bounds.iter().copied()) {
        match all.iter_mut().find(|i| i.figure == out.figure()) {
            Some(i) => i.runs = i.runs.saturating_add(1),
            None => all.push(Implausible {
                figure: out.figure().to_owned(),
                runs: 1,
                example: out.value(),
                bound: out.bound().to_owned(),
            }),
        }
    }
    all
}

/// Amounts added up, from 0 (not the -0 an empty `Sum` gives).
fn sum(amounts: impl Iterator<Item = f64>) -> f64 {
    amounts.fold(0.0, |total, a| total + a)
}

/// The most common of `names`, with their counts, most first (then by name).
fn top(names: impl Iterator<Item = String>) -> Vec<(String, u32)> {
    let mut counts: BTreeMap<String, u32> = BTreeMap::new();
    for name in names {
        *counts.entry(name).or_default() += 1;
    }
    let mut all: Vec<(String, u32)> = counts.into_iter().collect();
    all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    all.truncate(TOP);
    all
}

/// The runs grouped by `key`: by key's order, or most runs first.
fn groups(runs: &[RunFacts], key: impl Fn(&RunFacts) -> String, by_size: bool) -> Vec<Group> {
    let mut by: BTreeMap<String, Vec<&RunFacts>> = BTreeMap::new();
    for r in runs {
        by.entry(key(r)).or_default().push(r);
    }
    let mut groups: Vec<Group> = by
        .into_iter()
        .map(|(key, runs)| Group {
            key,
            runs: runs.len() as u32,
            completed: runs
                .iter()
                .filter(|r| r.outcome == Outcome::Completed)
                .count() as u32,
            failed: runs.iter().filter(|r| r.outcome.failed()).count() as u32,
            cost_usd: runs
                .iter()
                .map(|r| r.cost_usd)
                .sum::<Option<f64>>()
                .map(|total| total + 0.0),
            known_cost_usd: sum(runs.iter().filter_map(|r| r.cost_usd)),
            cost_unknown: runs.iter().filter(|r| r.cost_usd.is_none()).count() as u32,
            median_duration_ms: percentile(runs.iter().filter_map(|r| r.duration_ms).collect(), 50),
        })
        .collect();
    if by_size {
        groups.sort_by(|a, b| b.runs.cmp(&a.runs).then_with(|| a.key.cmp(&b.key)));
    }
    groups
}

/// The `p`th percentile (nearest rank) of `values`.
fn percentile(mut values: Vec<u64>, p: usize) -> Option<u64> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable();
    Some(values[rank(values.len(), p)])
}

fn percentile_f(values: &[f64], p: usize) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut values = values.to_vec();
    values.sort_by(f64::total_cmp);
    Some(values[rank(values.len(), p)])
}

/// The index of the nearest-rank `p`th percentile of `n` sorted values.
fn rank(n: usize, p: usize) -> usize {
    (n * p).div_ceil(100).max(1) - 1
}

/// `2026-11-24`, in UTC.
fn day(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs();
    let date =
        humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(secs - secs % 86_400));
    date.to_string()[..10].to_owned()
}

fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        assert_eq!(percentile(vec![5, 1, 3], 50), Some(3));
        assert_eq!(percentile((1..=10).collect(), 90), Some(9));
        assert_eq!(percentile((1..=10).collect(), 50), Some(5));
        assert_eq!(percentile(vec![7], 90), Some(7));
        assert_eq!(percentile(Vec::new(), 50), None);
        assert_eq!(
            day(UNIX_EPOCH + Duration::from_secs(86_400 * 3 + 5)),
            "1970-01-04"
        );
    }
}
