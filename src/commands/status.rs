//! `runbook status`: how a run went, or the run followed live from another terminal.

use std::path::Path;
use std::time::SystemTime;

use crate::cli::StatusArgs;
use crate::commands::runs_here::RunsHere;
use crate::config::{self, Flags};
use crate::consumer::Dispatcher;
use crate::exit::{Error, ExitStatus};
use crate::follow::{self, Ending};
use crate::foreign::term::escaped_copy;
use crate::next_run::next_run;
use crate::render::{self, Styles, report};
use crate::rundir::RECEIPT;
use crate::runs::{self, Runs};
use crate::supervisor::{Signals, unless_stopped};
use crate::term::out;
use crate::term::print::{note, warn};
use crate::term::{ColorChoice, TermEnv};

pub(crate) async fn status(
    args: StatusArgs,
    global: &Flags<config::Global>,
) -> anyhow::Result<ExitStatus> {
    let RunsHere { runs, color, here } = RunsHere::open(global, &args.runs_dir, args.here)?;
    let term = TermEnv::detect();

    if let Some(dir) = crate::commands::batch::resolve(&runs, args.run.as_deref())? {
        if args.json {
            return crate::commands::batch::follow::print_json(&dir, args.live).await;
        }
        let color = term.color(color);
        return crate::commands::batch::follow::follow(&dir, args.live, color).await;
    }
    let bucket = args.run.as_deref().filter(|r| crate::bucket::is_url(r));
    if bucket.is_some() && args.live {
        return Err(Error::Usage(
            "--live follows a run of this machine's runs directory, not one in a bucket".to_owned(),
        )
        .into());
    }
    if args.live || args.next {
        return live(&args, &runs, here.as_deref(), color).await;
    }
    let state = match bucket {
        Some(url) => super::remote::load(url)?,
        None => runs::load(&match &here {
            Some(cwd) => runs.latest_in(cwd)?,
            None => runs.locate(args.run.as_deref())?,
        })?,
    };
    for w in state.warnings {
        warn(w);
    }
    if args.json {
        out::print_json(&state.receipt, true)?;
    } else {
        let styles = Styles::new(term.color_stdout(color));
        // Its text escaped before it is laid out: the receipt is foreign once read back.
        let receipt = escaped_copy(&state.receipt).unwrap_or(state.receipt);
        out::print(&report::status(
            &receipt,
            &styles,
            SystemTime::now(),
            crate::term::stdout_width(),
        ))?;
    }
    Ok(ExitStatus::Completed)
}

/// `status --live`: the run named (or the latest, or with `--next` the next one to start),
/// followed through the run's own view until it ends, or until Ctrl-C.
async fn live(
    args: &StatusArgs,
    runs: &Runs,
    here: Option<&Path>,
    color: ColorChoice,
) -> anyhow::Result<ExitStatus> {
    let dir = if args.next {
        let place = here
            .map(|h| format!(" in {}", h.display()))
            .unwrap_or_default();
        note(format_args!(
            "waiting for the next run{place} to start (runs in {}); Ctrl-C to stop",
            runs.dir().display()
        ));
        match unless_stopped(next_run(runs, here)).await? {
            Some(dir) => dir?,
            None => return Ok(ExitStatus::Interrupted),
        }
    } else {
        let dir = match here {
            Some(cwd) => runs.latest_in(cwd),
            None if args.run.is_none() && runs.ids()?.is_empty() => Err(Error::Usage(format!(
                "no runs yet in {}; `runbook status --live --next` waits for the next one to start",
                runs.dir().display()
            ))
            .into()),
            None => runs.locate(args.run.as_deref()),
        }?;
        if args.run.is_none() && dir.join(RECEIPT).exists() {
            note(format_args!(
                "the latest run, {}, has already finished; `--next` waits for the next one",
                dir.file_name().unwrap_or_default().to_string_lossy()
            ));
        }
        dir
    };
    let consumers = render::views(color, args.json, args.verbosity.into(), false);
    let mut dispatch = Dispatcher::new(consumers);
    // Stopped (Ctrl-C), the view is closed all the same: no status line is left behind.
    let mut signals = Signals::install()?;
    let stop = async move {
        signals.recv().await;
    };
    let followed = follow::follow(&dir, &mut dispatch, &mut warn, stop);
    for failure in dispatch.close().failures {
        warn(failure);
    }
    Ok(match followed? {
        Ending::Finished(outcome) => ExitStatus::from_outcome(outcome),
        Ending::Abandoned => ExitStatus::Abandoned,
        Ending::Stopped => ExitStatus::Interrupted,
    })
}
