//! How long one of runbook's own git commands may take. git can be made to wait for ever by what
//! an agent leaves in a repository (its `.git/config`, or a file it includes, replaced by a FIFO
//! that nobody writes: git blocks opening it), and the run's end, a batch task's commit or
//! `batch clean` would wait with it. A command still running at its limit is killed and counts
//! as failed: what it would have said is not reported.

use std::io;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The variable that sets the limit (`RUNBOOK_GIT_TIMEOUT=5m`; a duration as `--timeout` takes).
pub(crate) const VAR: &str = "RUNBOOK_GIT_TIMEOUT";
/// The limit when the variable does not set one: long enough for `git status` in the largest
/// repositories on a cold disk.
const DEFAULT: Duration = Duration::from_secs(120);

/// The limit in force: [`VAR`], else [`DEFAULT`].
pub(crate) fn limit() -> Duration {
    std::env::var(VAR)
        .ok()
        .and_then(|v| humantime::parse_duration(v.trim()).ok())
        .filter(|d| !d.is_zero())
        .unwrap_or(DEFAULT)
}

/// `cmd`'s output, as [`Command::output`] gives it, unless it runs past `limit`: then it is
/// killed and waited for, and the error says so.
pub(crate) fn output(cmd: &mut Command, limit: Duration) -> io::Result<Output> {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn()?;
    let stdout = child.stdout.take().map(drain);
    let stderr = child.stderr.take().map(drain);
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if start.elapsed() >= limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "did not finish within {} ({VAR}) and was ended",
                    crate::format::duration(limit)
                ),
            ));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    };
    let join = |h: Option<std::thread::JoinHandle<Vec<u8>>>| {
        h.and_then(|h| h.join().ok()).unwrap_or_default()
    };
    Ok(Output {
        status,
        stdout: join(stdout),
        stderr: join(stderr),
    })
}

/// Reads a pipe to its end on a thread of its own, so that neither pipe fills while the other
/// is read.
fn drain(mut pipe: impl io::Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut all = Vec::new();
        let _ = pipe.read_to_end(&mut all);
        all
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_past_its_limit_is_ended_and_one_within_it_gives_its_output() {
        let out = output(
            Command::new("sh").args(["-c", "echo hi; echo err >&2"]),
            DEFAULT,
        )
        .unwrap();
        assert_eq!(
            (out.stdout.as_slice(), out.stderr.as_slice()),
            (&b"hi\n"[..], &b"err\n"[..])
        );
        let err = output(
            Command::new("sh").args(["-c", "exec sleep 30"]),
            Duration::from_millis(100),
        )
        .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(err.to_string().contains(VAR), "{err}");
    }
}
