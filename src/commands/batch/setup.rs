//! A task's `setup` command, run as a project check is (`supervisor::check`): by a process of
//! its own (runbook's binary, started as `runbook __setup LOG TIMEOUT_MS TAG`, which is not a
//! command for people and is read before the command line is) that holds the setup's scope (its
//! cgroup, its mark, its guardian), is the subreaper of everything the setup starts, and dies
//! with the batch. What the setup leaves running, detached or not, is ended with it; a setup that
//! outlives its `setup_timeout`, or a Ctrl-C, ends its whole tree; a killed batch leaves none of
//! it behind (the guardian). Its output goes to `setup/<task>.log` in the batch's directory.

use std::io::Read as _;
use std::os::unix::fs::DirBuilderExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::watch;

use super::plan::Job;
use crate::supervisor::check::{self, Check};
use crate::supervisor::{Scope, end_the_rest};

/// The first argument that makes runbook a setup's runner.
const ARG: &str = "__setup";
/// How long a setup's processes have between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(3);
/// How long ending what is left of the setup may take before runbook gives up on it.
const KILL_BOUND: Duration = Duration::from_secs(5);
/// The longest setup command read from the batch.
const COMMAND_LIMIT: u64 = 16 * 1024 * 1024;
/// The most of the runner's word read back.
const WORD_LIMIT: u64 = 64 * 1024;

/// Runs the task's `setup` in `dir` (`RUNBOOK_ROOT_PATH` set to the main checkout `root`), its
/// output in `log`; why it failed, if it did. A Ctrl-C (`cancel`) has the runner end the setup's
/// tree; a second one, or a runner that outlives the setup's timeout by far, is killed, and its
/// guardian ends what the setup left.
pub(super) async fn run(
    job: &Job,
    command: &str,
    (dir, root): (&Path, &Path),
    log: &Path,
    tag: &str,
    mut cancel: watch::Receiver<u8>,
) -> Result<(), String> {
    let mut runner =
        spawn(job, (dir, root), log, tag).map_err(|e| format!("cannot start its setup: {e}"))?;
    let pid = runner.id().and_then(|p| i32::try_from(p).ok());
    if let Some(mut stdin) = runner.stdin.take() {
        // The runner reads the command whole before it starts anything.
        let _ = stdin.write_all(command.as_bytes()).await;
    }
    let mut stdout = runner.stdout.take().expect("piped");
    let word = tokio::spawn(async move {
        let mut all = Vec::new();
        let _ = (&mut stdout).take(WORD_LIMIT).read_to_end(&mut all).await;
        String::from_utf8_lossy(&all).into_owned()
    });
    let backstop = job
        .setup_timeout
        .saturating_add(GRACE + KILL_BOUND + Duration::from_secs(10));
    let signal = |sig| {
        if let Some(pid) = pid {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig);
        }
    };
    let deadline = tokio::time::sleep(backstop);
    tokio::pin!(deadline);
    let (mut level, mut open, mut told, mut killed) = (*cancel.borrow(), true, 0, false);
    let status = loop {
        // The first Ctrl-C has the runner end the setup's tree; a second kills the runner.
        if level >= 1 && told < 1 {
            signal(nix::sys::signal::Signal::SIGTERM);
        }
        if level >= 2 && told < 2 {
            signal(nix::sys::signal::Signal::SIGKILL);
        }
        told = level.min(2);
        tokio::select! {
            status = runner.wait() => break status.ok(),
            changed = cancel.changed(), if open => match changed {
                Ok(()) => level = *cancel.borrow(),
                Err(_) => open = false,
            },
            () = &mut deadline, if !killed => {
                killed = true;
                signal(nix::sys::signal::Signal::SIGKILL);
            }
        }
    };
    let word = word.await.unwrap_or_default();
    if level > 0 {
        return Err("interrupted during its setup".to_owned());
    }
    match status {
        Some(s) if s.success() => Ok(()),
        _ => Err(word
            .lines()
            .next()
            .filter(|l| !l.trim().is_empty())
            .map_or_else(|| "its setup was killed".to_owned(), str::to_owned)),
    }
}

/// The runner: runbook's own binary, in a process group of its own (a Ctrl-C at the terminal
/// is the batch's to pass on), killed by the kernel if the batch dies.
fn spawn(
    job: &Job,
    (dir, root): (&Path, &Path),
    log: &Path,
    tag: &str,
) -> std::io::Result<tokio::process::Child> {
    let mut command = std::process::Command::new(std::env::current_exe()?);
    command
        .arg0("runbook")
        .arg(ARG)
        .arg(log)
        .arg(job.setup_timeout.as_millis().to_string())
        .arg(tag)
        .current_dir(dir)
        .env("RUNBOOK_ROOT_PATH", root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0);
    crate::linux::die_with_parent(&mut command);
    tokio::process::Command::from(command)
        .kill_on_drop(true)
        .spawn()
}

/// When runbook was started as a setup's runner (`runbook __setup LOG TIMEOUT_MS TAG`), runs
/// the setup and says how that ended.
pub(crate) fn invocation() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != ARG {
        return None;
    }
    let log = PathBuf::from(args.next()?);
    let timeout = Duration::from_millis(args.next()?.to_str()?.parse().ok()?);
    let tag = args.next()?.into_string().ok()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    let failed = runtime.block_on(serve(&log, timeout, &tag));
    runtime.shutdown_timeout(Duration::from_millis(100));
    Some(match failed {
        None => ExitCode::SUCCESS,
        Some(why) => {
            let _ = crate::term::out::print(&format!("{}\n", why.replace('\n', " ")));
            ExitCode::FAILURE
        }
    })
}

/// Runs the command read from stdin in the current directory, in a scope of its own, until it
/// and everything it started are gone; why it failed, if it did.
async fn serve(log: &Path, timeout: Duration, tag: &str) -> Option<String> {
    crate::linux::become_subreaper();
    let mut command = String::new();
    if let Err(e) = std::io::stdin()
        .take(COMMAND_LIMIT)
        .read_to_string(&mut command)
    {
        return Some(format!("cannot read its setup: {e}"));
    }
    let stop = match stop_signals() {
        Ok(stop) => stop,
        Err(e) => return Some(format!("cannot install signal handlers: {e}")),
    };
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => return Some(format!("cannot read its working directory: {e}")),
    };
    let tmp = log.with_extension("tmp");
    if let Err(e) = std::fs::DirBuilder::new().mode(0o700).create(&tmp) {
        return Some(format!("cannot make {}: {e}", tmp.display()));
    }
    let scope = Arc::new(Scope::open(tag, true, None, tmp.clone()));
    let check = Check {
        name: "setup".to_owned(),
        command,
        timeout: Some(timeout),
        cwd: None,
    };
    let ran = check::run(&check, &cwd, log, &scope, GRACE, stop).await;
    let left = end_the_rest(Arc::clone(&scope), GRACE, KILL_BOUND).await;
    scope.close();
    let _ = std::fs::remove_dir_all(&tmp);
    why_failed(&ran, timeout, &left)
}

/// Resolves at the first SIGTERM, SIGINT or SIGHUP.
fn stop_signals() -> std::io::Result<impl Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let mut hup = signal(SignalKind::hangup())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
            _ = hup.recv() => {}
        }
    })
}

/// Why the setup failed, in a line: its timeout, its exit and the last line of its output, or
/// processes of it that could not be ended.
fn why_failed(ran: &check::Ran, timeout: Duration, left: &[i32]) -> Option<String> {
    if let Some(error) = &ran.error {
        return Some(format!("cannot run its setup: {error}"));
    }
    if ran.timed_out {
        return Some(format!(
            "its setup did not finish within {} (setup_timeout)",
            crate::format::duration(timeout)
        ));
    }
    if !ran.passed {
        let last = ran
            .tail
            .iter()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map_or("", String::as_str);
        let code = ran
            .exit
            .code
            .map_or_else(|| "a signal".to_owned(), |c| format!("exit {c}"));
        return Some(format!("its setup failed ({code}): {last}"));
    }
    (!left.is_empty()).then(|| {
        format!(
            "{} processes its setup started could not be ended (pids {left:?})",
            left.len()
        )
    })
}
