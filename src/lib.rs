//! runbook: supervise a coding agent's headless run.
//!
//! This crate is the `runbook` command and a library for programs that run agents themselves:
//! [`Run`] runs one as `runbook run` does (the same configuration, supervision, checks and run
//! directory) and returns its [`receipt::Receipt`], giving every [`event::Event`] with its
//! [`Meta`] to the program's observers on the way. The event and receipt types are the same
//! ones `--json`, `events.ndjson` and `result.json` carry (`docs/events.md`).
//!
//! Inside, adapters (`agent`) turn an agent's native output into universal events (`event`); the
//! supervisor (`supervisor`, `watchdog`) owns the agent's processes and limits; consumers
//! (`render`, `store`, `receipt`, `observers`) only receive events, through the dispatcher
//! (`consumer`).
#![deny(missing_docs)]
mod agent;
mod agent_env;
mod agent_kind;
mod batch_run;
mod batched;
mod bounds;
mod bucket;
mod cli;
mod commands;
mod config;
mod consumer;
mod digest;
mod encode;
pub mod event;
mod exit;
mod files;
mod fingerprint;
mod follow;
mod foreign;
mod format;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
#[cfg(test)]
mod generated;
mod git;
mod library;
mod lifecycle;
mod lines;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(test)]
mod measure;
mod money;
mod next_run;
mod observers;
mod overview;
mod plan;
pub mod prices;
pub mod provenance;
#[cfg(test)]
mod public_api;
pub mod receipt;
mod redact;
mod render;
mod rundir;
mod runs;
mod sandbox;
mod stats;
mod store;
mod stuck;
mod supervisor;
mod term;
mod tool_clock;
mod trust;
mod version;
mod warning;
mod watchdog;

#[cfg(not(target_os = "linux"))]
compile_error!(
    "runbook supports Linux only: it reads the agent's process tree from /proc and has the kernel \
     end the agent with runbook (prctl); see docs/platforms.md"
);

use std::process::ExitCode;

use clap::Parser as _;

pub use exit::ExitStatus;
pub use library::{Agent, Permissions, Run, RunError};
pub use observers::Meta;

/// Parses the command line, runs the command, and turns the result into an exit code.
pub fn main() -> ExitCode {
    if let Some(exit) = supervisor::guardian_invocation() {
        return exit;
    }
    if let Some(exit) = commands::batch::setup::invocation() {
        return exit;
    }
    if let Some(exit) = commands::demo::player::invocation() {
        return exit;
    }
    if version::verbose_asked(std::env::args_os()) {
        return match term::out::print(&version::long()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::FAILURE,
        };
    }
    let cli = cli::Cli::parse();
    if let cli::Command::Demo(args) = &cli.command {
        // SAFETY: runbook has one thread until the runtime below is built.
        unsafe { commands::demo::set_stand_in_env(args) };
    }
    if let Some(columns) = cli.width {
        term::set_width(columns);
    }
    // For runbook's own errors, which may be about the configuration: the flag alone decides.
    let color = term::TermEnv::detect().color(config::color_flag(&cli.global));
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            return report(
                &anyhow::Error::new(e).context("cannot start the async runtime"),
                color,
            );
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            cli::Command::Run(args) => commands::run::run(args, &cli.global).await,
            cli::Command::Batch(args) => commands::batch::batch(args, &cli.global).await,
            cli::Command::Status(args) => commands::status::status(args, &cli.global).await,
            cli::Command::List(args) => commands::list::list(&args, &cli.global),
            cli::Command::Report(args) => commands::report::report(&args, &cli.global),
            cli::Command::Stats(args) => commands::stats::stats(&args, &cli.global),
            cli::Command::Upload(args) => commands::upload::upload(&args, &cli.global),
            cli::Command::Fleet(args) => commands::fleet::fleet(&args),
            cli::Command::Replay(args) => commands::replay::replay(args, &cli.global).await,
            cli::Command::Demo(args) => commands::demo::demo(args, &cli.global).await,
            cli::Command::Config(args) => commands::config::config(&args, &cli.global),
            cli::Command::Doctor(args) => commands::doctor::doctor(&args, &cli.global).await,
            cli::Command::Trust(args) => commands::trust::trust(&args),
            cli::Command::Completions { shell } => commands::completions::completions(shell),
        }
    });
    // Don't wait for stray blocking tasks (a read on a pipe a leftover process holds) at exit.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match result {
        Ok(status) => status.into(),
        Err(err) => report(&err, color),
    }
}

/// Prints an error as one line and picks its exit code. A closed stdout (`runbook list | head`)
/// is the reader's choice, not an error: it exits 0 quietly.
fn report(err: &anyhow::Error, color: bool) -> ExitCode {
    let broken_pipe = err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    });
    if broken_pipe {
        return ExitCode::SUCCESS;
    }
    let status = err
        .downcast_ref::<exit::Error>()
        .map_or(ExitStatus::Internal, exit::Error::status);
    term::print::error(format_args!("{err:#}"), color);
    status.into()
}
