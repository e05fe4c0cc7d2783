//! The fan-out from the supervisor to consumers (terminal view, event log, `--json`, receipt).
//!
//! The dispatcher stamps each [`EventKind`] with its sequence number, time and turn, folds it into
//! the run's one [`RunStats`], and hands every consumer the finished [`Event`] with a shared view of
//! those totals. Consumers know nothing of each other, of the agent, or of the supervisor, and keep
//! no counts of their own.

use std::io;
use std::time::{Duration, SystemTime};

use crate::event::{Event, EventKind, Turn};
use crate::stats::RunStats;

/// One event as a consumer receives it.
pub(crate) struct Delivery<'a> {
    pub event: &'a Event,
    /// The run's totals with this event folded in.
    pub totals: &'a RunStats,
    /// The event's NDJSON line (with the newline), when some consumer [`Consumer::wants_json`].
    pub json: Option<&'a [u8]>,
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
    /// Write out whatever was buffered: called after each batch of events, so output is never
    /// held back past the moment its line arrived.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// A periodic heartbeat (about once a second) for consumers that show elapsed time.
    fn tick(&mut self, _tick: &Tick<'_>) {}
    /// Someone else needs the terminal for a while (a question for the person at it): stop
    /// drawing until `paused` is false again.
    fn pause(&mut self, _paused: bool) {}
    /// The run is over and no more events will come.
    fn close(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// What this consumer is, for the warning when it fails.
    fn name(&self) -> &'static str;
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
    /// Failures of consumers that were dropped, reported once at the end.
    failures: Vec<String>,
}

impl Dispatcher {
    pub(crate) fn new(consumers: Vec<Box<dyn Consumer>>) -> Self {
        Self {
            seq: 0,
            turn: Turn::FIRST,
            stats: RunStats::default(),
            consumers,
            line: Vec::with_capacity(4096),
            failures: Vec::new(),
        }
    }

    /// Events from now on belong to `turn`.
    pub(crate) fn set_turn(&mut self, turn: Turn) {
        self.turn = turn;
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
    pub(crate) fn emit_borrowed(&mut self, ts: SystemTime, kind: &mut EventKind) {
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
        self.forward(&ev);
        *kind = ev.kind;
    }

    /// Hands on an event that already has its sequence number, time and turn (read back from a
    /// log, or replayed).
    pub(crate) fn forward(&mut self, ev: &Event) {
        self.stats.observe(ev);
        self.seq = ev.seq + 1;
        self.turn = ev.turn;
        let json = if self.consumers.iter().any(|c| c.wants_json()) {
            self.line.clear();
            crate::encode::write(&mut self.line, ev).expect("events always serialize");
            self.line.push(b'\n');
            Some(&self.line[..])
        } else {
            None
        };
        let delivery = Delivery {
            event: ev,
            totals: &self.stats,
            json,
        };
        let failures = &mut self.failures;
        self.consumers
            .retain_mut(|c| keep(c.event(&delivery), c.name(), failures));
    }

    /// Has every consumer write out what it buffered.
    pub(crate) fn flush(&mut self) {
        let failures = &mut self.failures;
        self.consumers
            .retain_mut(|c| keep(c.flush(), c.name(), failures));
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
        for c in &mut self.consumers {
            c.tick(&tick);
        }
    }

    pub(crate) fn pause(&mut self, paused: bool) {
        self.flush();
        for c in &mut self.consumers {
            c.pause(paused);
        }
    }

    /// Closes every consumer; returns the failures seen during the run.
    pub(crate) fn close(mut self) -> Vec<String> {
        self.flush();
        for c in &mut self.consumers {
            keep(c.close(), c.name(), &mut self.failures);
        }
        self.failures
    }
}

/// A consumer that cannot write (full disk, closed pipe) is dropped and the others go on, so
/// nothing already received is lost from the places that still work. A closed pipe is the
/// reader's choice (`| head`), not a failure worth reporting.
fn keep(result: io::Result<()>, name: &str, failures: &mut Vec<String>) -> bool {
    match result {
        Ok(()) => true,
        Err(e) => {
            if e.kind() != io::ErrorKind::BrokenPipe {
                failures.push(format!("{name} stopped: {e}"));
            }
            false
        }
    }
}
