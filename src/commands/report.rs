//! `runbook report`: one run told for a pull request, as Markdown or JSON, on stdout.

use std::path::Path;

use crate::cli::{ReportArgs, ReportFormat};
use crate::commands::batch;
use crate::config::{self, Flags};
use crate::exit::ExitStatus;
use crate::render::pr;
use crate::rundir;
use crate::runs::{self, Runs};
use crate::term::out;
use crate::term::print::warn;

pub(crate) fn report(
    args: &ReportArgs,
    global: &Flags<config::Global>,
) -> anyhow::Result<ExitStatus> {
    let config = config::load_here(global.values().iter().chain(args.runs_dir.values()))?;
    if let Some(url) = args.run.as_deref().filter(|r| crate::bucket::is_url(r)) {
        let state = super::remote::load(url)?;
        return report_state(state, args);
    }
    let runs = Runs::new(rundir::runs_dir(&config)?);
    if let Some(dir) = batch::resolve(&runs, args.run.as_deref())? {
        return report_batch(&dir, args.format);
    }
    report_state(runs::load(&runs.locate(args.run.as_deref())?)?, args)
}

/// A run's report, from its state however it was read.
fn report_state(state: runs::RunState, args: &ReportArgs) -> anyhow::Result<ExitStatus> {
    for w in state.warnings {
        warn(w);
    }
    match args.format {
        ReportFormat::Markdown => out::print_document(&pr::markdown(&state.receipt))?,
        ReportFormat::Json => out::print_json(&pr::Facts::of(&state.receipt), true)?,
    }
    Ok(ExitStatus::Completed)
}

fn report_batch(dir: &Path, format: ReportFormat) -> anyhow::Result<ExitStatus> {
    let record = batch::record::load(dir)?;
    match format {
        ReportFormat::Markdown => out::print_document(&batch::report::markdown(&record))?,
        ReportFormat::Json => out::print_json(&record, true)?,
    }
    Ok(ExitStatus::Completed)
}
