//! `runbook status`: how a run went, or the run followed live from another terminal.

use std::io::Write as _;
use std::time::SystemTime;

use crate::cli::StatusArgs;
use crate::config::{self, Flags};
use crate::consumer::Dispatcher;
use crate::exit::ExitStatus;
use crate::follow::{self, Ending};
use crate::render::{self, Styles, report};
use crate::rundir;
use crate::runs::{self, Runs};
use crate::term::TermEnv;
use crate::term::print::warn;

pub(crate) async fn status(
    args: StatusArgs,
    global: &Flags<config::Global>,
) -> anyhow::Result<ExitStatus> {
    let config = config::load_here(global.values().iter().chain(args.runs_dir.values()))?;
    let runs = Runs::new(rundir::runs_dir(&config)?);
    let color = config.value(&config::keys::COLOR);
    let dir = runs.locate(args.run.as_deref())?;
    let term = TermEnv::detect();

    if args.live {
        let consumers = render::views(color, args.json, args.verbosity);
        let mut dispatch = Dispatcher::new(consumers);
        let ending = follow::follow(&dir, &mut dispatch, &mut warn).await?;
        for failure in dispatch.close().failures {
            warn(failure);
        }
        return Ok(match ending {
            Ending::Finished(outcome) => ExitStatus::from_outcome(outcome),
            Ending::Abandoned => ExitStatus::Abandoned,
        });
    }

    let state = runs::load(&dir)?;
    for w in state.warnings {
        warn(w);
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &state.receipt)?;
        out.write_all(b"\n")?;
    } else {
        let styles = Styles::new(term.color_stdout(color));
        out.write_all(
            report::status(
                &state.receipt,
                &styles,
                SystemTime::now(),
                crate::term::stdout_width(),
            )
            .as_bytes(),
        )?;
    }
    out.flush()?;
    Ok(ExitStatus::Completed)
}
