//! `runbook list`: runs newest first, one row each, filtered by outcome, agent or directory.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Deserialize;

use crate::cli::ListArgs;
use crate::config::{self, Flags};
use crate::event::Outcome;
use crate::exit::ExitStatus;
use crate::format::thousands;
use crate::receipt::Receipt;
use crate::render::Styles;
use crate::render::table::{self, Row};
use crate::rundir::{self, RECEIPT};
use crate::runs::{self, Runs};
use crate::term::TermEnv;
use crate::term::out;
use crate::term::print::warn;

/// Table width when stdout is not a terminal.
const PLAIN_WIDTH: usize = 160;

pub(crate) fn list(args: &ListArgs, global: &Flags<config::Global>) -> anyhow::Result<ExitStatus> {
    let config = config::load_here(global.values().iter().chain(args.runs_dir.values()))?;
    let runs = Runs::new(rundir::runs_dir(&config)?);
    let color = config.value(&config::keys::COLOR);
    let here = if args.here {
        Some(std::env::current_dir()?.canonicalize()?)
    } else {
        None
    };
    let limit = if args.all { usize::MAX } else { args.limit };

    let mut rows = Vec::new();
    let mut receipts = Vec::new();
    let mut seen = 0;
    for id in runs.ids()?.iter().rev() {
        if rows.len() >= limit {
            break;
        }
        let dir = runs.path(id);
        let found = if args.json {
            load(&dir).map(|r| (row_of(&r), Some(r)))
        } else {
            summary(&dir).map(|r| (r, None))
        };
        let (row, cwd, receipt) = match found {
            Ok(((row, cwd), receipt)) => (row, cwd, receipt),
            Err(e) => {
                warn(format!("skipping {id}: {e:#}"));
                continue;
            }
        };
        seen += 1;
        let wanted = (args.outcome.is_empty() || args.outcome.contains(&row.outcome))
            && args.agent.as_deref().is_none_or(|a| a == row.agent)
            && here.as_deref().is_none_or(|h| Path::new(&cwd) == h);
        if wanted {
            rows.push(row);
            receipts.extend(receipt);
        }
    }

    if args.json {
        let mut out = out::json_stdout();
        for r in &receipts {
            serde_json::to_writer(&mut out, r)?;
            out.write_all(b"\n")?;
        }
        out.flush()?;
    } else if rows.is_empty() {
        let dir = runs.dir().display();
        match seen {
            0 => warn(format!("no runs to list in {dir}")),
            1 => warn(format!(
                "the one run in {dir} does not match {}",
                filters(args, here.as_deref())
            )),
            n => warn(format!(
                "none of the {} runs in {dir} match {}",
                thousands(n),
                filters(args, here.as_deref())
            )),
        }
        return Ok(ExitStatus::Completed);
    } else {
        let term = TermEnv::detect();
        let styles = Styles::new(term.color_stdout(color));
        let width = if term.stdout_is_terminal {
            out::columns(out::Stream::Stdout).unwrap_or(PLAIN_WIDTH)
        } else {
            PLAIN_WIDTH
        };
        out::print(&table::table(&rows, &styles, SystemTime::now(), width))?;
    }
    Ok(ExitStatus::Completed)
}

/// The filters given, as they were typed: `--outcome hung --here (/src/app)`.
fn filters(args: &ListArgs, here: Option<&Path>) -> String {
    let mut out: Vec<String> = args
        .outcome
        .iter()
        .map(|o| format!("--outcome {}", o.as_str()))
        .collect();
    if let Some(agent) = &args.agent {
        out.push(format!("--agent {agent}"));
    }
    if let Some(dir) = here {
        out.push(format!("--here ({})", dir.display()));
    }
    out.join(" ")
}

/// The full receipt (folded from the log for a run without one).
fn load(dir: &Path) -> anyhow::Result<Receipt> {
    Ok(runs::load(dir)?.receipt)
}

/// Just what a row shows, read cheaply from the receipt when there is one.
pub(crate) fn summary(dir: &Path) -> anyhow::Result<(Row, PathBuf)> {
    match runs::read_receipt(&dir.join(RECEIPT))? {
        Some(bytes) => {
            let s: Summary = serde_json::from_slice(&bytes)?;
            let started_at = humantime::parse_rfc3339_weak(&s.started_at)?;
            let row = Row {
                run_id: s.run_id,
                started_at,
                agent: s.agent.name,
                model: s.model,
                outcome: s.outcome,
                duration_ms: s.duration_ms,
                steps: s.steps,
                // A cost beyond its bound is unknown (`?`), never a 309-digit amount.
                cost_usd: s.cost.usd.and_then(|usd| crate::bounds::cost(usd).ok()),
                checks: Row::last_checks(s.checks.iter().map(|c| (c.attempt, c.passed))),
                prompt: s.prompt,
            };
            Ok((row, PathBuf::from(s.cwd)))
        }
        None => Ok(row_of(&load(dir)?)),
    }
}

fn row_of(r: &Receipt) -> (Row, PathBuf) {
    let row = Row {
        run_id: r.run_id.clone(),
        started_at: r.started_at,
        agent: r.agent.name.clone(),
        model: r.model.clone(),
        outcome: r.outcome,
        duration_ms: r.duration_ms,
        steps: r.steps,
        cost_usd: r.cost.usd,
        checks: Row::last_checks(r.checks.iter().map(|c| (c.attempt, c.passed))),
        prompt: r.prompt.clone(),
    };
    (row, PathBuf::from(&r.cwd))
}

/// The part of a receipt a row needs; the rest is skipped without being kept.
#[derive(Deserialize)]
struct Summary {
    run_id: String,
    started_at: String,
    agent: SummaryAgent,
    model: Option<String>,
    prompt: String,
    cwd: String,
    outcome: Outcome,
    duration_ms: u64,
    steps: Option<u32>,
    cost: SummaryCost,
    #[serde(default)]
    checks: Vec<SummaryCheck>,
}

#[derive(Deserialize)]
struct SummaryCheck {
    attempt: u32,
    passed: bool,
}

#[derive(Deserialize)]
struct SummaryAgent {
    name: String,
}

#[derive(Deserialize)]
struct SummaryCost {
    usd: Option<f64>,
}
