//! Following a run's event log as it grows, from another process: the history first, then each
//! line as soon as it lands (file-change notification, no busy polling), until the run finishes
//! or its supervisor is found dead.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use notify::{RecursiveMode, Watcher as _};
use tokio::sync::mpsc;
use tokio::time::Instant;

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
}

/// Feeds every event of the run in `run_dir` to `dispatch` as it is logged, until the run ends.
/// Warnings about damaged lines go to `warn`.
pub(crate) async fn follow(
    run_dir: &Path,
    dispatch: &mut Dispatcher,
    warn: &mut dyn FnMut(String),
) -> anyhow::Result<Ending> {
    let (tx, mut changed) = mpsc::channel::<()>(1);
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        // Reading the log is an event too; only writes (and the log's creation) matter. A full
        // channel already holds a wake-up: changes coalesce.
        if res.is_ok_and(|ev| !matches!(ev.kind, notify::EventKind::Access(_))) {
            let _ = tx.try_send(());
        }
    })?;
    watcher.watch(run_dir, RecursiveMode::NonRecursive)?;

    let mut seen = Seen::new(run_dir.join(EVENTS));
    let began = SystemTime::now();
    // A steady clock for liveness checks and the status line, whatever the file does.
    let mut checks = tokio::time::interval(CHECK_EVERY);
    checks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    checks.tick().await;
    loop {
        if let Some(outcome) = seen.drain(dispatch, warn)? {
            return Ok(Ending::Finished(outcome));
        }
        tokio::select! {
            _ = changed.recv() => continue,
            _ = checks.tick() => {}
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
mod tests {
    use std::io::Write;

    use super::*;
    use crate::event::Turn;

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
