//! The fan-out from the supervisor to consumers (terminal view, event log, `--json`, receipt).
//!
//! The dispatcher stamps each [`EventKind`] with its sequence number, time and turn, folds it into
//! the run's one [`RunStats`], and hands every consumer the finished [`Event`] with a shared view of
//! those totals. Consumers know nothing of each other, of the agent, or of the supervisor, and keep
//! no counts of their own.

use std::io;
use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::event::{Event, EventKind, Outcome, Turn};
use crate::stats::RunStats;

/// One event as a consumer receives it.
pub(crate) struct Delivery<'a> {
    pub event: &'a Event,
    /// The run's totals with this event folded in.
    pub totals: &'a RunStats,
    /// The event's NDJSON line (with the newline), when some consumer [`Consumer::wants_json`].
    pub json: Option<&'a [u8]>,
    /// The agent's own line the event came from (masked), when some consumer
    /// [`Consumer::wants_raw`] and the event came from one.
    pub raw: Option<&'a str>,
}

/// Something that receives every event of a run.
pub(crate) trait Consumer: Send {
    /// One event.
    fn event(&mut self, delivery: &Delivery<'_>) -> io::Result<()>;
    /// Whether this consumer writes events as JSON: the dispatcher then encodes each event once
    /// for all such consumers.
    fn wants_json(&self) -> bool {
        false
    }
    /// Whether this consumer wants the agent's own line with each event it came from: the
    /// readers then keep them.
    fn wants_raw(&self) -> bool {
        false
    }
    /// Write out whatever was buffered: called after each batch of events, so output is never
    /// held back past the moment its line arrived.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// A periodic heartbeat (about once a second) for consumers that show elapsed time, and for
    /// noticing that the reader of an output went away while nothing was written to it.
    fn tick(&mut self, _tick: &Tick<'_>) -> io::Result<()> {
        Ok(())
    }
    /// Someone else needs the terminal for a while (a question for the person at it): stop
    /// drawing until `paused` is false again.
    fn pause(&mut self, _paused: bool) {}
    /// The run is over and no more events will come.
    fn close(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// What this consumer is, for the warning when it fails.
    fn name(&self) -> &'static str;
    /// The file of the run directory this consumer keeps, if it keeps one. Failing to write it
    /// loses part of the run's record: the run is stopped, as `storage_error`.
    fn record(&self) -> Option<&Path> {
        None
    }
}

/// Why the run has to stop now, raised by the dispatcher for the supervisor.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Halt {
    pub outcome: Outcome,
    pub message: String,
}

/// The heartbeat.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tick<'a> {
    pub now: SystemTime,
    /// How long the agent has shown no activity at all.
    pub quiet_for: Duration,
    pub totals: &'a RunStats,
}

pub(crate) struct Dispatcher {
    seq: u64,
    turn: Turn,
    stats: RunStats,
    consumers: Vec<Box<dyn Consumer>>,
    /// The current event as a JSON line, encoded once for every consumer that writes JSON.
    line: Vec<u8>,
    faults: Faults,
    /// A reason to stop the run that the supervisor has not taken yet.
    halt: Option<Halt>,
    /// Whether the closing of an output has been turned into a halt already.
    closed_seen: bool,
}

/// What went wrong with consumers, as it was seen.
#[derive(Default)]
struct Faults {
    /// Failures of views that were dropped, reported once at the end.
    failures: Vec<String>,
    /// Files of the run directory that could not be written (path, error), still to be announced.
    broken: Vec<(String, String)>,
    /// The reader of an output closed it (`| head`).
    closed: bool,
    /// Every file of the run directory that could not be written, one line each.
    storage: Vec<String>,
}

impl Dispatcher {
    pub(crate) fn new(consumers: Vec<Box<dyn Consumer>>) -> Self {
        Self {
            seq: 0,
            turn: Turn::FIRST,
            stats: RunStats::default(),
            consumers,
            line: Vec::with_capacity(4096),
            faults: Faults::default(),
            halt: None,
            closed_seen: false,
        }
    }

    /// Events from now on belong to `turn`.
    pub(crate) fn set_turn(&mut self, turn: Turn) {
        self.turn = turn;
    }

    /// Whether some consumer wants the agent's lines with the events.
    pub(crate) fn wants_raw(&self) -> bool {
        self.consumers.iter().any(|c| c.wants_raw())
    }

    /// The run's totals so far.
    pub(crate) fn totals(&self) -> &RunStats {
        &self.stats
    }

    /// Stamps an event with the next sequence number and the current turn, and hands it on.
    pub(crate) fn emit(&mut self, ts: SystemTime, kind: EventKind) {
        let ev = Event {
            seq: self.seq,
            ts,
            turn: self.turn,
            kind,
        };
        self.forward(&ev);
    }

    /// Like [`Dispatcher::emit`], but leaves the event's contents with the caller.
    pub(crate) fn emit_borrowed(
        &mut self,
        ts: SystemTime,
        kind: &mut EventKind,
        raw: Option<&str>,
    ) {
        // Moved in and out again: an empty `Text` holds nothing on the heap.
        let placeholder = EventKind::Text {
            text: String::new(),
        };
        let ev = Event {
            seq: self.seq,
            ts,
            turn: self.turn,
            kind: std::mem::replace(kind, placeholder),
        };
        self.forward_raw(&ev, raw);
        *kind = ev.kind;
    }

    /// Hands on an event that already has its sequence number, time and turn (read back from a
    /// log, or replayed).
    pub(crate) fn forward(&mut self, ev: &Event) {
        self.forward_raw(ev, None);
    }

    /// [`Dispatcher::forward`], with the agent's line the event came from.
    fn forward_raw(&mut self, ev: &Event, raw: Option<&str>) {
        self.stats.observe(ev);
        self.seq = ev.seq + 1;
        self.turn = ev.turn;
        let json = if self.consumers.iter().any(|c| c.wants_json()) {
            self.line.clear();
            crate::encode::event(&mut self.line, ev).expect("events always serialize");
            self.line.push(b'\n');
            Some(&self.line[..])
        } else {
            None
        };
        let delivery = Delivery {
            event: ev,
            totals: &self.stats,
            json,
            raw,
        };
        let faults = &mut self.faults;
        self.consumers.retain_mut(|c| {
            let result = c.event(&delivery);
            keep(result, &**c, faults)
        });
        self.raise();
    }

    /// Has every consumer write out what it buffered.
    pub(crate) fn flush(&mut self) {
        let faults = &mut self.faults;
        self.consumers.retain_mut(|c| {
            let result = c.flush();
            keep(result, &**c, faults)
        });
        self.raise();
    }

    /// A file of the run directory that no consumer writes (the agent's raw output) could not be
    /// written.
    pub(crate) fn storage_failed(&mut self, path: &Path, error: &io::Error) {
        self.faults
            .broken
            .push((path.display().to_string(), error.to_string()));
        self.raise();
    }

    /// Why the run has to stop, once: a write to the run directory failed, or the reader of
    /// runbook's output went away.
    pub(crate) fn take_halt(&mut self) -> Option<Halt> {
        self.halt.take()
    }

    /// Announces each file that could not be written, and turns what went wrong into a halt.
    fn raise(&mut self) {
        if !self.faults.broken.is_empty() {
            for (path, error) in std::mem::take(&mut self.faults.broken) {
                self.faults
                    .storage
                    .push(format!("cannot write {path}: {error}"));
                self.emit(SystemTime::now(), EventKind::StorageFailed { path, error });
            }
            if let Some(message) = &self.stats.storage_error {
                self.halt = Some(Halt {
                    outcome: Outcome::StorageError,
                    message: message.clone(),
                });
            }
        }
        if self.faults.closed && !self.closed_seen {
            self.closed_seen = true;
            self.halt.get_or_insert(Halt {
                outcome: Outcome::Interrupted,
                message: "the reader of runbook's output closed it".to_owned(),
            });
        }
    }

    /// Emits one event and writes it out at once.
    pub(crate) fn emit_now(&mut self, ts: SystemTime, kind: EventKind) {
        self.emit(ts, kind);
        self.flush();
    }

    /// The heartbeat, at `now`, with the agent quiet for `quiet_for`.
    pub(crate) fn tick(&mut self, now: SystemTime, quiet_for: Duration) {
        let tick = Tick {
            now,
            quiet_for,
            totals: &self.stats,
        };
        let faults = &mut self.faults;
        self.consumers.retain_mut(|c| {
            let result = c.tick(&tick);
            keep(result, &**c, faults)
        });
        self.raise();
    }

    pub(crate) fn pause(&mut self, paused: bool) {
        self.flush();
        for c in &mut self.consumers {
            c.pause(paused);
        }
    }

    /// Closes every consumer, in order: a file that cannot be written as the run closes (the
    /// receipt) is still announced to the consumers after it.
    pub(crate) fn close(mut self) -> Closed {
        self.flush();
        let mut consumers = std::mem::take(&mut self.consumers);
        let mut i = 0;
        while i < consumers.len() {
            let result = consumers[i].close();
            if keep(result, &*consumers[i], &mut self.faults) {
                i += 1;
                continue;
            }
            consumers.remove(i);
            // Only the consumers after this one hear of it: they have not closed yet.
            let rest = consumers.split_off(i);
            self.consumers = rest;
            self.raise();
            self.flush();
            consumers.append(&mut self.consumers);
        }
        Closed {
            failures: self.faults.failures,
            storage_errors: self.faults.storage,
        }
    }
}

/// What a closed dispatcher leaves to say.
pub(crate) struct Closed {
    /// Views that stopped working, one line each.
    pub failures: Vec<String>,
    /// Each file of the run directory that could not be written, with why: the first is the
    /// run's ending.
    pub storage_errors: Vec<String>,
}

/// A consumer that cannot write is dropped and the others go on, so nothing already received is
/// lost from the places that still work. A file of the run directory that fails is a fault that
/// stops the run; a closed pipe is the reader's choice (`| head`), which ends it quietly.
fn keep(result: io::Result<()>, consumer: &dyn Consumer, faults: &mut Faults) -> bool {
    let Err(e) = result else {
        return true;
    };
    match consumer.record() {
        Some(path) => faults
            .broken
            .push((path.display().to_string(), e.to_string())),
        None if e.kind() == io::ErrorKind::BrokenPipe => faults.closed = true,
        None => faults
            .failures
            .push(format!("{} stopped: {e}", consumer.name())),
    }
    false
}
