//! `runbook stats`: the numbers over the runs of one or more runs directories.

use crate::cli::StatsArgs;
use crate::config::{self, Flags};
use crate::exit::{Error, ExitStatus};
use std::path::PathBuf;

use crate::overview::{Figures, Filter, read_all, read_bucket};
use crate::term::out;
use anyhow::Context as _;

use crate::render::{Styles, dashboard, overview};
use crate::rundir;
use crate::term::TermEnv;
use crate::term::print::note;

pub(crate) fn stats(
    args: &StatsArgs,
    global: &Flags<config::Global>,
) -> anyhow::Result<ExitStatus> {
    let config = config::load_here(global.values().iter().chain(args.runs_dir.values()))?;
    // Buckets (`s3://…`) are read from object storage, the rest as runs directories.
    let (urls, locals): (Vec<&PathBuf>, Vec<&PathBuf>) = args
        .dirs
        .iter()
        .partition(|d| d.to_str().is_some_and(crate::bucket::is_url));
    let buckets = urls
        .iter()
        .map(|u| crate::bucket::open(&u.to_string_lossy()))
        .collect::<Result<Vec<_>, _>>()?;
    let dirs = if args.dirs.is_empty() {
        // No runs yet is zero runs, not an error.
        let own = rundir::runs_dir(&config)?;
        rundir::ensure_runs_dir(&own)?;
        vec![own]
    } else {
        locals.into_iter().cloned().collect()
    };
    for dir in &dirs {
        if !dir.is_dir() {
            let message = format!(
                "{} is not a runs directory (no such directory)",
                dir.display()
            );
            return Err(Error::Usage(message).into());
        }
    }
    let filter = filter_of(args);
    let mut found = read_all(&dirs, &filter)?;
    for bucket in &buckets {
        found.merge(read_bucket(bucket, &filter).map_err(anyhow::Error::msg)?);
    }
    // Named as given, buckets with any credential in their URL masked.
    let dirs: Vec<PathBuf> = dirs
        .into_iter()
        .chain(buckets.iter().map(|b| PathBuf::from(b.shown())))
        .collect();
    let figures = Figures::of(&found);
    if let Some(path) = &args.html {
        let names: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        let page = dashboard::page(&figures, &found.runs, &names);
        // Run names and prompts are foreign: masked, like everything runbook writes.
        let masked = crate::redact::current().mask(page.as_bytes());
        crate::redact::write::atomically_shared(path, "html.tmp", &masked)
            .with_context(|| format!("cannot write {}", path.display()))?;
        note(format_args!("wrote {}", path.display()));
        return Ok(ExitStatus::Completed);
    }
    if args.json {
        out::print_json(&figures, true)?;
    } else {
        let term = TermEnv::detect();
        let color = config.value(&config::keys::COLOR);
        let styles = Styles::new(term.color_stdout(color));
        let charts = term.stdout_is_terminal;
        let filtered = args.since.is_some()
            || args.until.is_some()
            || !args.agent.is_empty()
            || !args.model.is_empty()
            || args.project.is_some()
            || !args.outcome.is_empty();
        let width = crate::term::table_width(args.wide);
        let text = overview::text(&figures, &dirs, &styles, charts, filtered, width);
        out::print(&text)?;
    }
    Ok(ExitStatus::Completed)
}

/// The runs `args` asks about.
fn filter_of(args: &StatsArgs) -> Filter {
    Filter {
        since: args.since,
        until: args.until,
        agents: args.agent.clone(),
        models: args.model.clone(),
        project: args
            .project
            .as_ref()
            .map(|p| p.canonicalize().unwrap_or_else(|_| p.clone())),
        outcomes: args.outcome.clone(),
    }
}
