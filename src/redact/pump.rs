//! A child process's output (a check's, an observer's) read from a pipe on a thread of its own
//! and written to its log through the masking writer, so that a secret it prints, even split
//! across writes, is masked in the log and in whatever is read from it.

use std::fs::File;
use std::io::{self, PipeReader, PipeWriter, Read as _};
use std::os::fd::AsRawFd as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::capped::{Cap, Capped, MaskedOut};
use super::{MaskedStream, MaskedWriter};

/// How often the reading thread looks whether it was told to stop.
const POLL_MS: i32 = 50;

/// A pipe being read into a log.
pub(crate) struct Pump {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<io::Result<u64>>,
}

/// A pipe whose writing end goes to the child (as its stdout and stderr both), its reading end
/// pumped into `log`.
pub(crate) fn start(log: MaskedWriter<File>, name: &str) -> io::Result<(PipeWriter, Pump)> {
    start_capped(log, name, None)
}

/// [`start`], the log holding at most `cap` bytes (its first and last, see [`super::capped`])
/// when one is given.
pub(crate) fn start_capped(
    log: MaskedWriter<File>,
    name: &str,
    cap: Option<Cap>,
) -> io::Result<(PipeWriter, Pump)> {
    let (read, write) = io::pipe()?;
    let stop = Arc::new(AtomicBool::new(false));
    let told = Arc::clone(&stop);
    let log = match cap {
        None => Log::Whole(log),
        Some(cap) => Log::Capped(Capped::new(MaskedOut(log), &cap)),
    };
    let thread = std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || pump(read, log, &told))?;
    Ok((write, Pump { stop, thread }))
}

/// Where a pump writes.
enum Log {
    Whole(MaskedWriter<File>),
    Capped(Capped<MaskedOut<File>>),
}

impl Log {
    fn take(&mut self, masked: &super::Masked<'_>) -> io::Result<()> {
        match self {
            Log::Whole(log) => log.write_all(masked),
            Log::Capped(log) => log.take(masked.as_bytes()),
        }
    }

    fn finish(self) -> io::Result<()> {
        match self {
            Log::Whole(mut log) => log.flush(),
            Log::Capped(log) => log.finish(),
        }
    }
}

impl Pump {
    /// Whether it has read the pipe to its end and written its log out.
    pub(crate) fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }

    /// Waits for every writer of the pipe to close it, or `grace` at most (a process the child
    /// left running may hold it open), then for the log to be written out: how many bytes were
    /// read, or why the log could not be written.
    pub(crate) fn finish(self, grace: Duration) -> io::Result<u64> {
        let until = Instant::now() + grace;
        while !self.thread.is_finished() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the log's writer panicked")))
    }
}

fn pump(mut read: PipeReader, mut log: Log, stop: &AtomicBool) -> io::Result<u64> {
    let mut stream = MaskedStream::new(super::current());
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    let mut failed = None;
    while !stop.load(Ordering::Relaxed) {
        let mut fd = libc::pollfd {
            fd: read.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, for the length of the call.
        let ready = unsafe { libc::poll(&raw mut fd, 1, POLL_MS) };
        // Nothing yet, or a signal: look again.
        if ready <= 0 {
            continue;
        }
        let n = match read.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        total += n as u64;
        // The pipe is read to its end even when the log cannot be written, so the child never
        // blocks on it.
        if failed.is_none()
            && let Err(e) = log.take(&stream.push(&buf[..n]))
        {
            failed = Some(e);
        }
    }
    if failed.is_none()
        && let Err(e) = log.take(&stream.finish())
    {
        failed = Some(e);
    }
    if failed.is_none()
        && let Err(e) = log.finish()
    {
        failed = Some(e);
    }
    failed.map_or(Ok(total), Err)
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;
    use crate::redact::Redactor;

    #[test]
    fn a_secret_split_across_writes_is_masked_in_the_log() {
        let secret = "pump-secret-4711";
        super::super::remember(&Redactor::for_agent([secret]));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.log");
        let (mut write, pump) = start(MaskedWriter::create_private(&path).unwrap(), "t").unwrap();
        for piece in [
            "before pump-sec",
            "ret-",
            "4711 after\n",
            "pump-secret-4711",
        ] {
            write.write_all(piece.as_bytes()).unwrap();
            write.flush().unwrap();
            std::thread::sleep(Duration::from_millis(20));
        }
        drop(write);
        let read = pump.finish(Duration::from_secs(5)).unwrap();
        let log = std::fs::read_to_string(&path).unwrap();
        assert_eq!(read, 46);
        assert_eq!(log, "before [REDACTED] after\n[REDACTED]");
    }
}
