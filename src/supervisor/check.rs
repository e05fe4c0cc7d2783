//! One project check after the task (`--check test='cargo test'`): `sh -c` in the agent's working
//! directory, stdin closed, in its own process group and the run's scope, its output written
//! whole to a log in the run directory, secrets masked (it is read from a pipe by runbook, never
//! written to the log by the check itself), so its tail and the repair prompt are masked too. It is ended with its whole tree when it outlives its
//! timeout, and whatever it leaves running is ended once it exits.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::process::Command;

use super::scope::Scope;
use super::tree::Tree;
use super::turn::exit_info;
pub(crate) use crate::config::check::Check;
use crate::event::ExitInfo;
use crate::redact::MaskedWriter;
use crate::redact::pump::Pump;
use std::io::PipeWriter;

/// How many of the last lines of a check's output are kept for the receipt and the repair prompt.
pub(crate) const TAIL_LINES: usize = 80;
/// The most of a check's output's end that is read for its tail.
const TAIL_BYTES: u64 = 16 * 1024;
/// How long ending a check's tree may take before runbook gives up on it.
const KILL_BOUND: Duration = Duration::from_secs(5);
/// How long the check's output is still read once it and its tree are ended (a process that
/// escaped may hold the pipe open).
const DRAIN: Duration = Duration::from_secs(2);

/// How a check went.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ran {
    pub passed: bool,
    pub exit: ExitInfo,
    /// It outlived its timeout and was ended.
    pub timed_out: bool,
    pub duration: Duration,
    /// Bytes of output (stdout and stderr together).
    pub output_bytes: u64,
    /// The last lines of its output.
    pub tail: Vec<String>,
    /// Why it could not be run at all (its log cannot be written, `sh` cannot be started).
    pub error: Option<String>,
}

impl Ran {
    /// A check that could not be run at all, and why.
    fn not_run(error: String, duration: Duration) -> Ran {
        Ran {
            passed: false,
            exit: ExitInfo::default(),
            timed_out: false,
            duration,
            output_bytes: 0,
            tail: Vec::new(),
            error: Some(error),
        }
    }
}

/// Runs `check` in `cwd` with its output in `log`; ends its tree after its timeout, or as soon as
/// `stop` resolves (SIGTERM, then SIGKILL after `grace`), and anything it left behind once it
/// exits.
pub(crate) async fn run(
    check: &Check,
    cwd: &Path,
    log: &Path,
    scope: &Arc<Scope>,
    grace: Duration,
    stop: impl Future<Output = ()>,
) -> Ran {
    let started = Instant::now();
    let failed = |error: String| Ran::not_run(error, started.elapsed());
    let cannot_write = |e: std::io::Error| failed(format!("cannot write {}: {e}", log.display()));
    let (out, err, pump) = match output_to(log) {
        Ok(made) => made,
        Err(e) => return cannot_write(e),
    };
    let dir = check
        .cwd
        .as_ref()
        .map_or_else(|| cwd.to_owned(), |c| cwd.join(c));
    let mut command = sh(&check.command, &dir, out, err);
    let cgroup = scope.enter(command.as_std_mut());
    crate::linux::die_with_parent(command.as_std_mut());
    let spawned = command.spawn();
    // The pipe's writing ends are the check's alone now: its end is the output's end.
    drop(command);
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            let _ = tokio::task::spawn_blocking(move || pump.finish(Duration::ZERO)).await;
            return failed(format!("cannot run `sh -c` in {}: {e}", dir.display()));
        }
    };
    drop(cgroup);
    let pid = child.id();
    if let Some(pid) = pid {
        scope.entered(pid);
    }
    let tree = Tree::new(Arc::clone(scope), pid);
    let limit = check.timeout.unwrap_or(Duration::MAX);
    let waited = tokio::select! {
        status = tokio::time::timeout(limit, child.wait()) => status.ok(),
        () = stop => None,
    };
    let timed_out = waited.is_none() && started.elapsed() >= limit;
    // Timed out: the whole tree goes. Exited: so does whatever it left running.
    tree.end_all(grace, KILL_BOUND, std::future::pending(), |_, _| {})
        .await;
    let status = match waited {
        Some(status) => status.ok(),
        None => child.wait().await.ok(),
    };
    let exit = exit_info(status);
    let pumped = tokio::task::spawn_blocking(move || pump.finish(DRAIN)).await;
    let read = match pumped.map_err(std::io::Error::other).and_then(|read| read) {
        Ok(read) => read,
        Err(e) => {
            return Ran {
                exit,
                ..cannot_write(e)
            };
        }
    };
    let (_, tail) = tail(log);
    Ran {
        passed: !timed_out && exit.code == Some(0),
        exit,
        timed_out,
        duration: started.elapsed(),
        output_bytes: read,
        tail,
        error: None,
    }
}

/// A pipe for the check's stdout and one for its stderr, both read into `log` (masked) by the
/// pump returned.
fn output_to(log: &Path) -> std::io::Result<(PipeWriter, PipeWriter, Pump)> {
    let (out, pump) =
        crate::redact::pump::start(MaskedWriter::create_private(log)?, "check-output")?;
    let err = out.try_clone()?;
    Ok((out, err, pump))
}

/// `sh -c COMMAND` in `dir`, stdin closed, its output to `out` and `err`, in a process group of
/// its own.
fn sh(command: &str, dir: &Path, out: impl Into<Stdio>, err: impl Into<Stdio>) -> Command {
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .kill_on_drop(true);
    sh
}

/// The size of a check's log and its last [`TAIL_LINES`] lines (read from its last
/// [`TAIL_BYTES`] only, whatever its size).
fn tail(log: &Path) -> (u64, Vec<String>) {
    let Ok(mut file) = std::fs::File::open(log) else {
        return (0, Vec::new());
    };
    let size = file.metadata().map_or(0, |m| m.len());
    let from = size.saturating_sub(TAIL_BYTES);
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(from)).is_err() || file.read_to_end(&mut bytes).is_err() {
        return (size, Vec::new());
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    // A cut first line is not a line of the output.
    if from > 0 && !lines.is_empty() {
        lines.remove(0);
    }
    let keep = lines.len().saturating_sub(TAIL_LINES);
    // Masked again once colour codes are gone: a secret they cut in two is whole again.
    let redactor = crate::redact::current();
    let tail = lines[keep..]
        .iter()
        .map(|l| redactor.str(&console::strip_ansi_codes(l)).into_owned())
        .collect();
    (size, tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(command: &str, timeout: Option<Duration>) -> Check {
        Check {
            name: "test".to_owned(),
            command: command.to_owned(),
            timeout,
            cwd: None,
        }
    }

    async fn run_one(command: &str, timeout: Option<Duration>) -> (Ran, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        // Found by its mark and group only: the other tests' children are this process's too.
        let tag = format!("check-test-{}", fastrand::u32(..));
        let scope = Arc::new(Scope::orphaned(&tag, None, None));
        let log = dir.path().join("test.log");
        let ran = run(
            &check(command, timeout),
            dir.path(),
            &log,
            &scope,
            Duration::from_millis(200),
            std::future::pending(),
        )
        .await;
        scope.close();
        (ran, dir)
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_passing_check_keeps_its_output_whole_and_its_tail() {
        let (ran, dir) = run_one("seq 1 200; echo done >&2", None).await;
        assert!(ran.passed, "{ran:?}");
        assert_eq!(ran.exit.code, Some(0));
        let log = std::fs::read_to_string(dir.path().join("test.log")).unwrap();
        assert_eq!(log.lines().count(), 201);
        assert_eq!(ran.tail.len(), TAIL_LINES);
        assert_eq!(ran.tail.last().map(String::as_str), Some("done"));
        assert_eq!(ran.tail[0], "122");
        assert_eq!(ran.output_bytes, log.len() as u64);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_failing_check_says_its_exit_code() {
        let (ran, _dir) = run_one("echo 'error[E0425]: cannot find value'; exit 3", None).await;
        assert!(!ran.passed);
        assert_eq!(ran.exit.code, Some(3));
        assert_eq!(ran.tail, ["error[E0425]: cannot find value"]);
        let (ran, _dir) = run_one("no-such-command-anywhere", None).await;
        assert!(!ran.passed);
        assert_eq!(ran.exit.code, Some(127));
        assert!(ran.tail[0].contains("not found"), "{:?}", ran.tail);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_check_that_hangs_is_ended_with_its_whole_tree() {
        let pids = tempfile::NamedTempFile::new().unwrap();
        let command = format!(
            "sleep 60 & echo $! > {}; setsid sleep 60 & echo $! >> {}; sleep 60",
            pids.path().display(),
            pids.path().display()
        );
        let (ran, _dir) = run_one(&command, Some(Duration::from_millis(300))).await;
        assert!(ran.timed_out && !ran.passed, "{ran:?}");
        for pid in std::fs::read_to_string(pids.path())
            .unwrap()
            .split_whitespace()
        {
            let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| !s.rsplit_once(')').unwrap().1.trim_start().starts_with('Z'));
            assert!(!alive, "process {pid} of the check outlived it");
        }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_secret_the_check_prints_is_masked_in_its_log_and_tail() {
        crate::redact::remember(&crate::redact::Redactor::for_agent(["check-secret-0042"]));
        let (ran, dir) = run_one(
            "printf 'a check-sec'; sleep 0.1; printf 'ret-0042\\n' >&2; \
             printf '\\033[1mcheck-secret\\033[0m-0042\\n'; exit 1",
            None,
        )
        .await;
        let log = std::fs::read_to_string(dir.path().join("test.log")).unwrap();
        assert!(!log.contains("check-secret-0042"), "{log}");
        assert!(log.starts_with("a [REDACTED]\n"), "{log}");
        assert_eq!(ran.tail, ["a [REDACTED]", "[REDACTED]"]);
        assert!(ran.output_bytes > log.len() as u64, "{ran:?}");
    }

    #[test]
    fn the_tail_of_a_large_output_is_read_from_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("big.log");
        let line = "x".repeat(99) + "\n";
        #[allow(clippy::disallowed_methods, reason = "a test's fixture")]
        std::fs::write(&log, line.repeat(100_000) + "last\n").unwrap();
        let (size, tail) = tail(&log);
        assert_eq!(size, 10_000_005);
        assert_eq!(tail.len(), TAIL_LINES);
        assert_eq!(tail.last().unwrap(), "last");
    }
}
