//! `runbook demo`: a first look at runbook without an agent or an API key. A real OpenCode
//! session, bundled in the binary, is run as a real supervised run (the live view, the run
//! directory, the receipt) with runbook's own binary standing in for `opencode` and writing the
//! recorded output at its recorded pace ([`player`]) and making its one edit, in a git
//! repository of the demo's own, so that the run ends with the change it made; then its
//! `status` is shown, and where `--json` fits. The run goes into a directory of its own under
//! the system's temporary directory, never among the person's runs.

pub(crate) mod player;

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::Parser as _;

use crate::cli::{Cli, Command, DemoArgs};
use crate::config::{self, Flags};
use crate::exit::ExitStatus;
use crate::term::print::note;

/// The longest the session may take to play: a slower `--speed` is raised to fit.
const LONGEST_SECS: f64 = 15.0;

pub(crate) async fn demo(
    args: DemoArgs,
    global: &Flags<config::Global>,
) -> anyhow::Result<ExitStatus> {
    let speed = speed(&args);
    let dir = scratch_dir()?;
    let (work, runs) = (dir.join("work"), dir.join("runs"));
    for d in [&work, &runs] {
        std::fs::create_dir(d).with_context(|| format!("cannot create {}", d.display()))?;
    }
    // Without git (or with a git that refuses), the run just cannot tell what it changed.
    let _ = repository(&work);
    if !args.json {
        note(format_args!(
            "runbook demo: a real OpenCode {} session (recorded against a scripted model), replayed \
             by a stand-in for `opencode` at {}; no agent or API key needed. Its run directory \
             goes under {}.",
            player::RECORDED_VERSION,
            pace(speed),
            runs.display()
        ));
    }
    let exe = std::env::current_exe().context("cannot find runbook's own binary")?;
    let mut argv: Vec<std::ffi::OsString> = vec!["runbook".into(), "run".into()];
    for arg in [
        "--agent",
        "opencode",
        "--no-checks",
        "--model",
        player::RECORDED_MODEL,
    ] {
        argv.push(arg.into());
    }
    for (flag, path) in [
        ("--agent-bin", &exe),
        ("--cwd", &work),
        ("--runs-dir", &runs),
    ] {
        argv.extend([flag.into(), path.clone().into_os_string()]);
    }
    if args.json {
        argv.push("--json".into());
    }
    argv.push(player::RECORDED_PROMPT.into());
    let Command::Run(run_args) = Cli::try_parse_from(argv)?.command else {
        unreachable!("the demo's command line is a `run`")
    };
    let host = crate::commands::run::Host::terminal();
    let finished = crate::commands::run::execute(run_args, global, host).await?;
    if let Some(receipt) = finished.receipt.as_ref().filter(|_| !args.json) {
        afterwards(&receipt.run_id, &runs, global).await?;
    }
    Ok(finished.status)
}

/// The speed to play at: `--fast` does not wait; otherwise `--speed` (the recorded pace by
/// default), raised so that the session takes at most [`LONGEST_SECS`].
fn speed(args: &DemoArgs) -> f64 {
    if args.fast {
        return f64::INFINITY;
    }
    let recorded = player::arrivals().last().copied().unwrap_or_default();
    args.speed.max(recorded / LONGEST_SECS)
}

fn pace(speed: f64) -> String {
    if speed.is_infinite() {
        "full speed".to_owned()
    } else if (speed - 1.0).abs() < f64::EPSILON {
        "its recorded pace".to_owned()
    } else {
        format!("{speed}× its recorded pace")
    }
}

/// The session's repository in `work`: `README.md` as the session found it, committed.
fn repository(work: &Path) -> anyhow::Result<()> {
    let readme = crate::redact::Masked::own(player::README.as_bytes());
    crate::redact::write::atomically_shared(&work.join("README.md"), "tmp", &readme)?;
    let git = crate::git::Git::init(work)?;
    let git = [
        ("GIT_AUTHOR_NAME", "runbook demo"),
        ("GIT_AUTHOR_EMAIL", "demo@runbook.invalid"),
        ("GIT_COMMITTER_NAME", "runbook demo"),
        ("GIT_COMMITTER_EMAIL", "demo@runbook.invalid"),
    ]
    .into_iter()
    .fold(git, |git, (name, value)| git.with_env(name, value));
    git.out(&["add", "README.md"])?;
    git.out(&["commit", "-q", "-m", "The demo project"])?;
    Ok(())
}

/// A new directory of the demo's own under the system's temporary directory.
fn scratch_dir() -> anyhow::Result<PathBuf> {
    let tmp = std::env::temp_dir();
    let mut last = None;
    for _ in 0..8 {
        let dir = tmp.join(format!("runbook-demo-{:08x}", fastrand::u32(..)));
        // A new directory, never one that was there (nor a link someone left in its place).
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) => last = Some(e),
        }
    }
    Err(last.map_or_else(|| anyhow::anyhow!("no attempt"), anyhow::Error::new))
        .with_context(|| format!("cannot make a directory for the demo in {}", tmp.display()))
}

/// Tells whatever the demo's run starts (the stand-in, its version probe) to play the session,
/// and at what speed, through runbook's own environment, which they inherit.
///
/// # Safety
/// Only while runbook has a single thread: before the async runtime is built.
pub(crate) unsafe fn set_stand_in_env(args: &DemoArgs) {
    // SAFETY: the caller promises that no other thread reads the environment meanwhile.
    unsafe { std::env::set_var(player::SPEED_VAR, speed(args).to_string()) };
}

/// The run told by `status`, then where to go from here (its receipt among them).
async fn afterwards(
    run_id: &str,
    runs: &Path,
    global: &Flags<config::Global>,
) -> anyhow::Result<()> {
    note("\n$ runbook status");
    let mut argv: Vec<&std::ffi::OsStr> = vec!["runbook".as_ref(), "status".as_ref()];
    argv.extend(["--runs-dir".as_ref(), runs.as_os_str(), run_id.as_ref()]);
    let Command::Status(args) = Cli::try_parse_from(argv)?.command else {
        unreachable!("a `status` command line")
    };
    crate::commands::status::status(args, global).await?;
    note(format_args!(
        "\nThat was runbook. Next:\n  \
         runbook run \"Fix the flaky test\"        your task, with OpenCode (npm install -g opencode-ai)\n  \
         runbook run -m opencode/MODEL \"…\"       with one of OpenCode's free models, no API key needed\n                                          (`opencode models opencode` lists them)\n  \
         runbook run --json \"…\"                  every event, then the receipt, as JSON lines for scripts\n  \
         runbook status --json                   the latest run's receipt, as JSON (this one's: add --runs-dir {})",
        runs.display()
    ));
    Ok(())
}
