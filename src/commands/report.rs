//! `runbook report`: one run told for a pull request, as Markdown or JSON, on stdout.

use crate::cli::{ReportArgs, ReportFormat};
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
    let state = match args.run.as_deref().filter(|r| crate::bucket::is_url(r)) {
        Some(url) => super::remote::load(url)?,
        None => {
            let runs = Runs::new(rundir::runs_dir(&config)?);
            runs::load(&runs.locate(args.run.as_deref())?)?
        }
    };
    for w in state.warnings {
        warn(w);
    }
    match args.format {
        ReportFormat::Markdown => out::print(&pr::markdown(&state.receipt))?,
        ReportFormat::Json => out::print_json(&pr::Facts::of(&state.receipt), true)?,
    }
    Ok(ExitStatus::Completed)
}
