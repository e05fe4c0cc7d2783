//! `runbook list`: runs newest first, one row each, filtered by outcome, agent or directory.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::cli::ListArgs;
use crate::commands::runs_here::RunsHere;
use crate::config::{self, Flags};
use crate::event::Outcome;
use crate::exit::ExitStatus;
use crate::format::thousands;
use crate::receipt::Receipt;
use crate::render::Styles;
use crate::render::list::{self as list_table, Row};
use crate::render::table::Fitted;
use crate::rundir::RECEIPT;
use crate::runs::{self, Runs};
use crate::term::TermEnv;
use crate::term::out;
use crate::term::print::{note, warn};
use crate::term::wrap::wrap;

pub(crate) fn list(args: &ListArgs, global: &Flags<config::Global>) -> anyhow::Result<ExitStatus> {
    let RunsHere { runs, color, here } = RunsHere::open(global, &args.runs_dir, args.here)?;
    let (found, place) = match &args.bucket {
        Some(url) => {
            let bucket = crate::bucket::open(url)?;
            let found = scan_bucket(&bucket, args, here.as_deref())?;
            (found, bucket.shown().to_owned())
        }
        None => (
            scan(&runs, args, here.as_deref())?,
            runs.dir().display().to_string(),
        ),
    };
    let Found {
        rows,
        receipts,
        seen,
        more,
    } = found;
    let limited = (more > 0).then(|| Limited {
        kind: "list.limited",
        shown: rows.len(),
        total: rows.len() + more,
    });

    if args.json {
        let mut out = out::json_stdout();
        for (r, row) in receipts.iter().zip(&rows) {
            serde_json::to_writer(&mut out, &with_batch(r, row)?)?;
            out.write_all(b"\n")?;
        }
        if let Some(limited) = &limited {
            serde_json::to_writer(&mut out, limited)?;
            out.write_all(b"\n")?;
        }
        out.flush()?;
    } else if rows.is_empty() {
        let dir = place;
        match seen {
            0 => warn(format!("no runs to list in {dir}")),
            1 => warn(format!(
                "the one run in {dir} does not match {}",
                filters(args, here.as_deref())
            )),
            n => warn(format!(
                "none of the {} runs in {dir} match {}",
                thousands(n as u64),
                filters(args, here.as_deref())
            )),
        }
        return Ok(ExitStatus::Completed);
    } else {
        let term = TermEnv::detect();
        let styles = Styles::new(term.color_stdout(color));
        let width = crate::term::table_width(args.wide);
        let mut fitted = list_table::table(&rows, &styles, SystemTime::now(), width);
        out::print(&fitted.text())?;
        // Columns left out are told to a person looking at the table, not to a pipe.
        if !term.stdout_is_terminal {
            fitted.left_out.clear();
        }
        if let Some(footer) = footer(limited.as_ref(), &fitted, width) {
            note(footer);
        }
    }
    if !args.json
        && let Some(left) = crate::commands::batch::leftover_note(runs.dir())
    {
        note(left);
    }
    Ok(ExitStatus::Completed)
}

/// A receipt as `list --json` gives it: with the batch task it ran, for a run of a batch
/// (`"batch": {"task": "build-fix", "id": "ew2p8"}`).
fn with_batch(receipt: &Receipt, row: &Row) -> serde_json::Result<serde_json::Value> {
    let mut value = serde_json::to_value(receipt)?;
    if let (Some((task, id)), Some(map)) = (&row.batch, value.as_object_mut()) {
        map.insert(
            "batch".to_owned(),
            serde_json::json!({"task": task, "id": id}),
        );
    }
    Ok(value)
}

/// The runs a listing shows, and how many more match past its limit.
struct Found {
    rows: Vec<Row>,
    /// With `--json`: each row's whole receipt.
    receipts: Vec<Receipt>,
    /// Runs read (before the filters).
    seen: usize,
    /// Runs that match but are past the limit.
    more: usize,
}

/// Reads the runs newest first: up to the limit, the runs the filters keep; past it, only how
/// many more there are (without filters, the run directories left, not read at all).
fn scan(runs: &Runs, args: &ListArgs, here: Option<&Path>) -> anyhow::Result<Found> {
    let limit = if args.all { usize::MAX } else { args.limit };
    let filtered = !args.outcome.is_empty() || args.agent.is_some() || here.is_some();
    let wanted = |row: &Row, cwd: &Path| {
        (args.outcome.is_empty() || args.outcome.contains(&row.outcome))
            && args.agent.as_deref().is_none_or(|a| a == row.agent)
            && here.is_none_or(|h| cwd == h)
    };
    let ids = runs.ids()?;
    let mut found = Found {
        rows: Vec::new(),
        receipts: Vec::new(),
        seen: 0,
        more: 0,
    };
    for (i, id) in ids.iter().rev().enumerate() {
        let dir = runs.path(id);
        if found.rows.len() >= limit {
            if !filtered {
                found.more = ids.len() - i;
                break;
            }
            found.more += usize::from(summary(&dir).is_ok_and(|(row, cwd)| wanted(&row, &cwd)));
            continue;
        }
        let read = if args.json {
            load(&dir).map(|r| (row_of(&r), Some(r)))
        } else {
            summary(&dir).map(|r| (r, None))
        };
        let ((row, cwd), receipt) = match read {
            Ok(read) => read,
            Err(e) => {
                warn(format!("skipping {id}: {e:#}"));
                continue;
            }
        };
        found.seen += 1;
        if wanted(&row, &cwd) {
            found.rows.push(row);
            found.receipts.extend(receipt);
        }
    }
    Ok(found)
}

/// [`scan`] over a bucket: the runs listed (page by page), newest first, and only the receipts
/// the listing shows fetched (all of them with filters), a bounded number at a time. A run
/// whose receipt is not there was not uploaded whole, and is skipped with a warning.
fn scan_bucket(
    bucket: &crate::bucket::Bucket,
    args: &ListArgs,
    here: Option<&Path>,
) -> anyhow::Result<Found> {
    let limit = if args.all { usize::MAX } else { args.limit };
    let filtered = !args.outcome.is_empty() || args.agent.is_some() || here.is_some();
    let listed = crate::bucket::list_runs(bucket).map_err(anyhow::Error::msg)?;
    if let Some(note) = listed.unusable_note() {
        warn(note);
    }
    let newest: Vec<_> = listed.runs.iter().rev().collect();
    let read = if filtered {
        newest.len()
    } else {
        newest.len().min(limit)
    };
    let mut found = Found {
        rows: Vec::new(),
        receipts: Vec::new(),
        seen: 0,
        more: newest.len() - read,
    };
    let whole: Vec<_> = newest[..read].iter().filter(|r| r.receipt).collect();
    for run in newest[..read].iter().filter(|r| !r.receipt) {
        warn(format!(
            "skipping {}: not uploaded whole (no {RECEIPT})",
            run.id
        ));
    }
    let files: Vec<Vec<&str>> = whole.iter().map(|r| r.file(RECEIPT)).collect();
    let fetched = crate::bucket::fetch_all(bucket, &files, crate::files::RECEIPT_LIMIT);
    for (run, got) in whole.into_iter().zip(fetched) {
        let name = bucket.shown_at(&run.file(RECEIPT));
        let read = got
            .map_err(|e| anyhow::anyhow!("cannot read {name}: {e}"))
            .and_then(|bytes| bytes.ok_or_else(|| anyhow::anyhow!("{name} is gone")))
            .and_then(|bytes| {
                if args.json {
                    let receipt = runs::parse_receipt(&bytes, &name)?.receipt;
                    Ok((row_of(&receipt), Some(receipt)))
                } else {
                    summary_of(&bytes).map(|r| (r, None))
                }
            });
        let ((row, cwd), receipt) = match read {
            Ok(read) => read,
            Err(e) => {
                warn(format!("skipping {}: {e:#}", run.id));
                continue;
            }
        };
        found.seen += 1;
        let wanted = (args.outcome.is_empty() || args.outcome.contains(&row.outcome))
            && args.agent.as_deref().is_none_or(|a| a == row.agent)
            && here.is_none_or(|h| cwd == h);
        if !wanted {
            continue;
        }
        if found.rows.len() >= limit {
            found.more += 1;
            continue;
        }
        found.rows.push(row);
        found.receipts.extend(receipt);
    }
    Ok(found)
}

/// The line `list --json` ends with when the limit left runs out.
#[derive(Serialize)]
struct Limited {
    #[serde(rename = "type")]
    kind: &'static str,
    /// The runs listed.
    shown: usize,
    /// The runs that match (every run, without filters).
    total: usize,
}

/// What the table does not show, and how to see it: `20 of 33 runs (--all for every run)`,
/// the columns left out to fit; broken between words to the width.
fn footer(limited: Option<&Limited>, fitted: &Fitted, width: Option<usize>) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(l) = limited {
        parts.push(format!(
            "{} of {} runs (--all for every run)",
            thousands(l.shown as u64),
            thousands(l.total as u64)
        ));
    }
    match fitted.left_out.len() {
        0 => {}
        1 => parts.push(format!(
            "{} left out to fit (--wide shows it)",
            fitted.left_out[0]
        )),
        n => parts.push(format!("{n} columns left out to fit (--wide shows them)")),
    }
    let line = parts.join(" · ");
    match width {
        _ if parts.is_empty() => None,
        Some(width) => Some(wrap(&line, width, 0, 2).join("\n")),
        None => Some(line),
    }
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
        Some(bytes) => summary_of(&bytes),
        None => Ok(row_of(&load(dir)?)),
    }
}

/// Just what a row shows, from a receipt's bytes.
fn summary_of(bytes: &[u8]) -> anyhow::Result<(Row, PathBuf)> {
    let s: Summary = serde_json::from_slice(bytes)?;
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
        batch: None,
    };
    Ok(placed(row, PathBuf::from(s.cwd)))
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
        batch: None,
    };
    placed(row, PathBuf::from(&r.cwd))
}

/// The row with its batch and task, if it ran one, and where it belongs: for a batch's task,
/// the place in the repository the batch was made from (`--here` there lists it); else where
/// it ran.
fn placed(mut row: Row, cwd: PathBuf) -> (Row, PathBuf) {
    let Some(run) = crate::batch_run::of(&cwd) else {
        return (row, cwd);
    };
    row.batch = Some((run.task.clone(), run.short_id().to_owned()));
    (row, run.home().unwrap_or(cwd))
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
