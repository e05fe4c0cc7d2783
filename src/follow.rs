//! Following a run's event log as it grows, from another process: the history first, then each
//! line as soon as it lands (file-change notification, no busy polling), until the run finishes
//! or its supervisor is found dead.
//!
//! The follower waits for the notification, reads the log and shows what it read on one thread,
//! so that a line appended wakes that thread alone.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use inotify::{Inotify, WatchMask};

use crate::consumer::Dispatcher;
use crate::event::{Event, EventKind, ExitInfo, Outcome};
use crate::files::{self, FileError, Links};
use crate::lines::{LineSplitter, Piece};
use crate::linux::procfs;
use crate::rundir::EVENTS;
use crate::runs::{EVENT_LINE_LIMIT, too_long};

/// How often, without file changes, the supervisor's liveness is checked and the view ticks.
const CHECK_EVERY: Duration = Duration::from_secs(1);
/// A run directory with no first event after this long was abandoned before it began.
const NEVER_STARTED: Duration = Duration::from_secs(30);

/// Reads the complete lines appended to a file since the last read.
pub(crate) struct Tail {
    path: PathBuf,
    /// Kept open: reopening would itself be a file event and wake the follower again.
    file: Option<File>,
    /// Holds a half-written last line, and only the head of a line too long to be an event.
    splitter: LineSplitter,
    buf: Vec<u8>,
    line: u64,
}

/// How much of the log one call of [`Tail::read_new`] reads, so that the events waiting to be
/// shown stay few however long the log already is.
const READ_AT_ONCE: usize = 1024 * 1024;

impl Tail {
    pub(crate) fn new(path: PathBuf) -> Self {
        Self {
            path,
            file: None,
            splitter: LineSplitter::new(EVENT_LINE_LIMIT),
            buf: Vec::new(),
            line: 0,
        }
    }

    /// Appends the new complete events to `out`; a line that is not an event becomes a warning.
    /// A half-written last line is held until its newline arrives. Reads at most about 1 MiB;
    /// returns whether there may be more to read at once.
    pub(crate) fn read_new(
        &mut self,
        out: &mut Vec<Event>,
        warnings: &mut Vec<String>,
    ) -> io::Result<bool> {
        if self.file.is_none() {
            match files::open(&self.path, Links::Refuse) {
                Ok(f) => self.file = Some(f),
                Err(e) if e.is_not_found() => return Ok(false),
                Err(FileError::Io(e)) => return Err(e),
                Err(e) => {
                    return Err(io::Error::other(format!(
                        "cannot read {}: {e}",
                        self.path.display()
                    )));
                }
            }
        }
        let file = self.file.as_mut().expect("opened above");
        self.buf.resize(READ_AT_ONCE, 0);
        let n = file.read(&mut self.buf)?;
        let (path, line) = (&self.path, &mut self.line);
        self.splitter.feed(&self.buf[..n], |piece| {
            *line += 1;
            match piece {
                Piece::Line(bytes) => match serde_json::from_slice::<Event>(bytes) {
                    Ok(ev) => out.push(ev),
                    Err(e) => warnings.push(format!(
                        "{} line {line} is not a valid event ({e}); skipped",
                        path.display()
                    )),
                },
                Piece::Overlong { total, .. } => warnings.push(too_long(path, *line, total)),
            }
        });
        Ok(n == self.buf.len())
    }
}

/// How following ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    Finished(Outcome),
    /// The supervisor is gone and the log never finished.
    Abandoned,
    /// Told to stop before the run ended.
    Stopped,
}

/// Feeds every event of the run in `run_dir` to `dispatch` as it is logged, until the run ends
/// or `stop` (Ctrl-C) comes. Warnings about damaged lines go to `warn`.
///
/// It waits, reads and shows on the calling thread, which it blocks (`block_in_place`): call it
/// from `block_on` or a worker of a multi-threaded runtime, whose other workers wait for `stop`.
pub(crate) fn follow(
    run_dir: &Path,
    dispatch: &mut Dispatcher,
    warn: &mut dyn FnMut(String),
    stop: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<Ending> {
    let mut watch = Watch::new(run_dir)?;
    let stopped = Arc::clone(&watch.stop);
    let listener = tokio::spawn(async move {
        stop.await;
        crate::linux::raise(&*stopped);
    });
    let ending = tokio::task::block_in_place(|| follow_here(run_dir, dispatch, warn, &mut watch));
    listener.abort();
    ending
}

fn follow_here(
    run_dir: &Path,
    dispatch: &mut Dispatcher,
    warn: &mut dyn FnMut(String),
    watch: &mut Watch,
) -> anyhow::Result<Ending> {
    let mut seen = Seen::new(run_dir.join(EVENTS));
    let began = SystemTime::now();
    // A steady clock for liveness checks and the status line, whatever the file does.
    let mut next_check = Instant::now() + CHECK_EVERY;
    loop {
        if let Some(outcome) = seen.drain(dispatch, warn)? {
            return Ok(Ending::Finished(outcome));
        }
        match watch.wait(next_check.saturating_duration_since(Instant::now()))? {
            Woke::Stopped => return Ok(Ending::Stopped),
            // A log that changes all the time still gets its steady tick and liveness check.
            Woke::Changed if Instant::now() < next_check => continue,
            Woke::Changed | Woke::TimedOut => next_check = Instant::now() + CHECK_EVERY,
        }
        dispatch.tick(SystemTime::now(), seen.last_event.elapsed());
        let gone = match &dispatch.totals().info {
            Some(i) => !procfs::is_alive(i.pid, i.pid_start),
            None => {
                began.elapsed().unwrap_or_default() > NEVER_STARTED
                    && dir_age(run_dir) > NEVER_STARTED
            }
        };
        if gone {
            // The supervisor may have finished the log just before it died: read it all first.
            if let Some(outcome) = seen.drain(dispatch, warn)? {
                return Ok(Ending::Finished(outcome));
            }
            abandoned(dispatch, began);
            return Ok(Ending::Abandoned);
        }
    }
}

/// The run directory's changes (the log created, written, the receipt put in place), and the
/// word to stop.
struct Watch {
    inotify: Inotify,
    /// Readable once following is to stop.
    stop: Arc<OwnedFd>,
    buf: Vec<u8>,
}

/// Why [`Watch::wait`] returned.
#[derive(Debug, PartialEq, Eq)]
enum Woke {
    Changed,
    TimedOut,
    Stopped,
}

impl Watch {
    fn new(dir: &Path) -> anyhow::Result<Self> {
        let inotify = Inotify::init()?;
        // Reading the log is an event too; only writes (and the log's creation) matter.
        let changes = WatchMask::MODIFY
            | WatchMask::CREATE
            | WatchMask::CLOSE_WRITE
            | WatchMask::MOVED_TO
            | WatchMask::DELETE
            | WatchMask::ATTRIB;
        inotify.watches().add(dir, changes)?;
        let stop = crate::linux::eventfd()
            .ok_or_else(|| io::Error::other("no file descriptor left to wait on"))?;
        Ok(Self {
            inotify,
            stop: Arc::new(stop),
            buf: vec![0; 4096],
        })
    }

    /// Waits at most `timeout` for a change or the word to stop (which wins). Changes that
    /// arrived together are one.
    fn wait(&mut self, timeout: Duration) -> io::Result<Woke> {
        let mut fds = [
            libc::pollfd {
                fd: self.stop.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: self.inotify.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let ms = libc::c_int::try_from(timeout.as_millis().max(1)).unwrap_or(libc::c_int::MAX);
        // SAFETY: poll(2) on an array of two pollfds that lives across the call.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), 2, ms) };
        if ready < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::Interrupted => Ok(Woke::Changed),
                _ => Err(e),
            };
        }
        if fds[0].revents != 0 {
            return Ok(Woke::Stopped);
        }
        if fds[1].revents == 0 {
            return Ok(Woke::TimedOut);
        }
        // Everything queued is read: the log is read whole after it anyway.
        loop {
            match self.inotify.read_events(&mut self.buf) {
                Ok(mut events) => {
                    if events.next().is_none() {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        Ok(Woke::Changed)
    }
}

/// Ends the view of a run whose supervisor died before it finished its log. The event is shown,
/// never logged: the log stays what the supervisor wrote.
fn abandoned(dispatch: &mut Dispatcher, began: SystemTime) {
    let (started, pid) = {
        let totals = dispatch.totals();
        let started = totals.started_at.unwrap_or(began);
        (started, totals.info.as_ref().map_or(0, |i| i.pid))
    };
    let kind = EventKind::RunFinished {
        outcome: Outcome::Abandoned,
        message: crate::runs::abandoned_message(pid),
        duration_ms: started.elapsed().map_or(0, crate::event::millis),
        exit: ExitInfo::default(),
    };
    dispatch.emit_now(SystemTime::now(), kind);
}

/// Where the follower is in the log.
struct Seen {
    tail: Tail,
    last_event: Instant,
    batch: Vec<Event>,
    warnings: Vec<String>,
}

impl Seen {
    fn new(path: PathBuf) -> Self {
        Self {
            tail: Tail::new(path),
            last_event: Instant::now(),
            batch: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Hands every newly logged event to `dispatch`; the run's outcome once `run.finished` is read.
    fn drain(
        &mut self,
        dispatch: &mut Dispatcher,
        warn: &mut dyn FnMut(String),
    ) -> io::Result<Option<Outcome>> {
        loop {
            let more = self.tail.read_new(&mut self.batch, &mut self.warnings)?;
            for w in self.warnings.drain(..) {
                warn(w);
            }
            let mut finished = None;
            for ev in self.batch.drain(..) {
                self.last_event = Instant::now();
                dispatch.forward(&ev);
                finished = dispatch.totals().finish.as_ref().map(|f| f.outcome);
                if finished.is_some() {
                    break;
                }
            }
            dispatch.flush();
            if finished.is_some() || !more {
                return Ok(finished);
            }
        }
    }
}

fn dir_age(dir: &Path) -> Duration {
    std::fs::metadata(dir)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, reason = "tests write their own fixtures")]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::event::Turn;

    #[test]
    fn the_watch_wakes_for_a_write_not_a_read_and_the_word_to_stop_wins() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.ndjson");
        std::fs::write(&path, "").unwrap();
        let mut watch = Watch::new(dir.path()).unwrap();
        let short = Duration::from_millis(20);
        assert_eq!(watch.wait(short).unwrap(), Woke::TimedOut);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"{}\n").unwrap();
        assert_eq!(watch.wait(short).unwrap(), Woke::Changed);
        // Every notification of that write was taken at once.
        assert_eq!(watch.wait(short).unwrap(), Woke::TimedOut);
        let _ = std::fs::read(&path).unwrap();
        assert_eq!(
            watch.wait(short).unwrap(),
            Woke::TimedOut,
            "reading is no change"
        );
        f.write_all(b"{}\n").unwrap();
        crate::linux::raise(&*watch.stop);
        assert_eq!(watch.wait(short).unwrap(), Woke::Stopped);
    }

    fn line(seq: u64) -> String {
        let ev = Event {
            seq,
            ts: SystemTime::UNIX_EPOCH,
            turn: Turn::FIRST,
            kind: EventKind::Text {
                text: format!("t{seq}"),
            },
        };
        serde_json::to_string(&ev).unwrap() + "\n"
    }

    #[test]
    fn a_half_written_line_is_held_until_complete_and_damage_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.ndjson");
        let mut tail = Tail::new(path.clone());
        let (mut out, mut warn) = (Vec::new(), Vec::new());
        tail.read_new(&mut out, &mut warn).unwrap();
        assert!(out.is_empty(), "a missing log is just not there yet");

        let mut f = File::create(&path).unwrap();
        let second = line(1);
        write!(f, "{}{}", line(0), &second[..10]).unwrap();
        tail.read_new(&mut out, &mut warn).unwrap();
        assert_eq!(out.iter().map(|e| e.seq).collect::<Vec<_>>(), [0]);

        write!(f, "{}garbage\n{}", &second[10..], line(2)).unwrap();
        tail.read_new(&mut out, &mut warn).unwrap();
        assert_eq!(out.iter().map(|e| e.seq).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(warn.len(), 1);
        assert!(warn[0].contains("line 3 is not a valid event"), "{warn:?}");
    }
}
