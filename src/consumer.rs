//! The fan-out from the supervisor to consumers (terminal view, event log, `--json`, receipt).
//!
//! The dispatcher stamps each [`EventKind`] with its sequence number, time and turn, folds it into
//! the run's one [`RunStats`], and hands every consumer the finished [`Event`] with a shared view of
//! those totals. Consumers know nothing of each other, of the agent, or of the supervisor, and keep
//! no counts of their own.
//!
//! The supervisor owns the [`Dispatcher`]; the stdout reader holds a [`Lane`] to the same core, and
//! delivers a small batch itself when the supervisor has nothing of the agent's in hand, so that a
//! lone line reaches the consumers without waking a second thread first.

use std::io;
use std::ops::Deref;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use crate::event::{Event, EventKind, Outcome, Turn};
use crate::redact::Masked;
use crate::stats::{RunStats, Spent};
use crate::stuck::{self, Detector, Verdict};

/// One event as a consumer receives it.
pub(crate) struct Delivery<'a> {
    pub event: &'a Event,
    /// The run's totals with this event folded in.
    pub totals: &'a RunStats,
    /// The event's NDJSON line (with the newline), masked, when some consumer
    /// [`Consumer::wants_json`].
    pub json: Option<Masked<'a>>,
    /// The agent's own line the event came from (masked), when some consumer
    /// [`Consumer::wants_raw`] and the event came from one.
    pub raw: Option<&'a str>,
}

/// Something that receives every event of a run.
pub(crate) trait Consumer: Send {
    /// One event.
    fn event(&mut self, delivery: &Delivery<'_>) -> io::Result<()>;
    /// Whether this consumer writes events as JSON: the dispatcher then encodes each event once
    /// for all such consumers. Asked when the dispatcher is made: the answer must not change.
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
    /// Whether someone watches this output as it is written (the terminal view, `--json`): such
    /// outputs are written out before the run directory's files, so that a line is shown
    /// without waiting for the file system.
    fn watched(&self) -> bool {
        false
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
    /// An event this consumer has to tell of itself since it was last asked (an observer that
    /// stopped taking events), emitted by the dispatcher after each batch and heartbeat.
    fn news(&mut self) -> Option<EventKind> {
        None
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

/// The fan-out, owned by the supervisor (or by `status --live` and `replay`).
///
/// Every method that takes the lock, but [`Dispatcher::totals`], takes `&mut self`, so that the
/// totals cannot be held across another such call on the same thread (the lock is not
/// reentrant). Two `totals` at once would wait for each other: take them one at a time.
pub(crate) struct Dispatcher {
    core: Arc<Mutex<Core>>,
    /// The run's own clock, once started: it ticks the consumers whatever the run is doing.
    heartbeat: Option<Heartbeat>,
}

/// How often the heartbeat ticks.
const HEARTBEAT: Duration = Duration::from_secs(1);

/// A thread of its own that ticks the consumers about once a second for as long as the run
/// goes on: in a turn, while a check runs, while a person is asked, between turns. Nothing the
/// run waits for can stop the status line's clock, because nothing the run does runs on it.
struct Heartbeat {
    /// Dropped to stop it.
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Heartbeat {
    fn start(core: Arc<Mutex<Core>>) -> io::Result<Self> {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("heartbeat".to_owned())
            .spawn(move || {
                let mut next = Instant::now() + HEARTBEAT;
                loop {
                    let wait = next.saturating_duration_since(Instant::now());
                    if stopped.recv_timeout(wait) != Err(RecvTimeoutError::Timeout) {
                        return;
                    }
                    // A tick late (a busy machine) is not made up for: the next is a beat on.
                    next = (next + HEARTBEAT).max(Instant::now());
                    let mut core = lock(&core);
                    let quiet_for = core.quiet_since.map_or(Duration::ZERO, |t| t.elapsed());
                    core.tick(SystemTime::now(), quiet_for);
                }
            })?;
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Heartbeat {
    /// Stops the thread and waits for a tick under way to end.
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The agent's lines that made a batch's events, each with the index of its first event.
pub(crate) type RawLines = Vec<(u32, Box<str>)>;

/// What a delivered batch told: whether it held the agent's final result, and what the run has
/// spent with it counted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Delivered {
    pub final_word: bool,
    pub spent: Spent,
}

/// The run's totals, borrowed from the dispatcher.
pub(crate) struct Totals<'a>(MutexGuard<'a, Core>);

impl Deref for Totals<'_> {
    type Target = RunStats;

    fn deref(&self) -> &RunStats {
        &self.0.stats
    }
}

/// A reader's way to the consumers, for one spawned agent: it may deliver a batch of that agent's
/// events itself while the lane is open (the supervisor is at its loop, taking the agent's
/// output) and every batch it sent before has been handled, its consequences included. The order
/// of events is then exactly what the supervisor would have made of the same batches.
#[derive(Clone)]
pub(crate) struct Lane {
    core: Arc<Mutex<Core>>,
    gate: Arc<Gate>,
}

#[derive(Default)]
struct Gate {
    open: AtomicBool,
    /// Batches sent to the supervisor that it has not finished with.
    pending: AtomicU64,
}

impl Lane {
    /// Delivers `events` (made from `raw`, when kept) and writes them out, if the supervisor
    /// holds nothing of this agent's; `None` leaves them to be sent to it.
    pub(crate) fn try_deliver(
        &self,
        ts: SystemTime,
        events: &mut [EventKind],
        raw: &RawLines,
    ) -> Option<Delivered> {
        if !self.gate.open.load(Ordering::Acquire) || self.gate.pending.load(Ordering::Acquire) != 0
        {
            return None;
        }
        let mut core = lock(&self.core);
        // Looked at again under the lock: the supervisor closes the lane holding it.
        if !self.gate.open.load(Ordering::Acquire) || self.gate.pending.load(Ordering::Acquire) != 0
        {
            return None;
        }
        let delivered = core.deliver(ts, events, raw);
        core.flush();
        Some(delivered)
    }

    /// A batch is on its way to the supervisor: none is delivered here until it has handled it.
    pub(crate) fn sending(&self) {
        self.gate.pending.fetch_add(1, Ordering::AcqRel);
    }

    /// The supervisor has handled one batch, and all that followed from it.
    pub(crate) fn handled(&self) {
        let before = self
            .gate
            .pending
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
        debug_assert!(before.is_ok(), "a batch handled that was never counted");
    }

    /// Opens or closes the lane. Closing waits for a delivery under way to end: once closed, the
    /// supervisor has the consumers to itself.
    pub(crate) fn set_open(&self, open: bool) {
        if open {
            self.gate.open.store(true, Ordering::Release);
        } else {
            let _core = lock(&self.core);
            self.gate.open.store(false, Ordering::Release);
        }
    }
}

/// The dispatcher's state, shared by the supervisor and the lane.
struct Core {
    seq: u64,
    turn: Turn,
    stats: RunStats,
    consumers: Vec<Box<dyn Consumer>>,
    /// Whether some consumer [`Consumer::wants_json`]; looked at again when one is dropped.
    any_json: bool,
    /// The current event as a JSON line, encoded once for every consumer that writes JSON.
    line: Vec<u8>,
    faults: Faults,
    /// A reason to stop the run that the supervisor has not taken yet.
    halt: Option<Halt>,
    /// Whether the closing of an output has been turned into a halt already.
    closed_seen: bool,
    /// The durations of tool calls the agent does not time itself.
    clock: crate::tool_clock::ToolClock,
    /// Since when the agent of the turn under way has shown no activity; `None` between turns.
    quiet_since: Option<Instant>,
    /// Watches the agent's events for it going round in circles; `None`: `--stuck off`.
    stuck: Option<Detector>,
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

fn lock(core: &Mutex<Core>) -> MutexGuard<'_, Core> {
    // A consumer that panicked leaves the totals as they were: they are still the best known.
    core.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Dispatcher {
    pub(crate) fn new(consumers: Vec<Box<dyn Consumer>>) -> Self {
        let core = Core {
            seq: 0,
            turn: Turn::FIRST,
            stats: RunStats::default(),
            any_json: consumers.iter().any(|c| c.wants_json()),
            consumers,
            line: Vec::with_capacity(4096),
            faults: Faults::default(),
            halt: None,
            closed_seen: false,
            clock: crate::tool_clock::ToolClock::default(),
            quiet_since: None,
            stuck: None,
        };
        Self {
            core: Arc::new(Mutex::new(core)),
            heartbeat: None,
        }
    }

    /// Starts the run's heartbeat: from now until [`Dispatcher::close`], the consumers are
    /// ticked about once a second whatever the run is doing. A heartbeat that cannot be started
    /// leaves the run without a ticking status line, and is told.
    pub(crate) fn start_heartbeat(&mut self) -> io::Result<()> {
        if self.heartbeat.is_none() {
            self.heartbeat = Some(Heartbeat::start(Arc::clone(&self.core))?);
        }
        Ok(())
    }

    /// Since when the agent has been quiet (`None`: no agent at work), for the heartbeat's
    /// ticks.
    pub(crate) fn quiet_since(&mut self, since: Option<Instant>) {
        self.core().quiet_since = since;
    }

    fn core(&mut self) -> MutexGuard<'_, Core> {
        lock(&self.core)
    }

    /// A new lane to the consumers, closed, for one spawned agent's stdout reader.
    pub(crate) fn lane(&self) -> Lane {
        Lane {
            core: Arc::clone(&self.core),
            gate: Arc::default(),
        }
    }

    /// Whether the agent's tool calls are timed here, from the stamps of their start and end:
    /// for an agent that does not tell how long a call took.
    pub(crate) fn time_tools(&mut self, on: bool) {
        self.core().clock.set(on);
    }

    /// Watches the agent's events from now on for it going round in circles (`--stuck`).
    pub(crate) fn watch_for_loops(&mut self, detector: Option<Detector>) {
        self.core().stuck = detector;
    }

    /// Events from now on belong to `turn`.
    pub(crate) fn set_turn(&mut self, turn: Turn) {
        self.core().turn = turn;
    }

    /// Whether some consumer wants the agent's lines with the events.
    pub(crate) fn wants_raw(&mut self) -> bool {
        self.core().consumers.iter().any(|c| c.wants_raw())
    }

    /// The run's totals so far. Hold them for no longer than a statement or two: the stdout
    /// reader waits for them to deliver its events.
    pub(crate) fn totals(&self) -> Totals<'_> {
        Totals(lock(&self.core))
    }

    /// Stamps an event with the next sequence number and the current turn, and hands it on.
    pub(crate) fn emit(&mut self, ts: SystemTime, kind: EventKind) {
        self.core().emit(ts, kind);
    }

    /// Delivers a batch of the agent's events, all stamped `ts`, each with the agent's line it
    /// came from when they were kept.
    pub(crate) fn deliver(
        &mut self,
        ts: SystemTime,
        events: &mut [EventKind],
        raw: &RawLines,
    ) -> Delivered {
        self.core().deliver(ts, events, raw)
    }

    /// Hands on an event that already has its sequence number, time and turn (read back from a
    /// log, or replayed).
    pub(crate) fn forward(&mut self, ev: &Event) {
        self.core().forward_raw(ev, None, false);
    }

    /// Has every consumer write out what it buffered.
    pub(crate) fn flush(&mut self) {
        self.core().flush();
    }

    /// A file of the run directory that no consumer writes (the agent's raw output) could not be
    /// written.
    pub(crate) fn storage_failed(&mut self, path: &Path, error: &io::Error) {
        self.core().storage_failed(path, error);
    }

    /// Why the run has to stop, once: a write to the run directory failed, or the reader of
    /// runbook's output went away.
    pub(crate) fn take_halt(&mut self) -> Option<Halt> {
        self.core().halt.take()
    }

    /// Emits one event and writes it out at once.
    pub(crate) fn emit_now(&mut self, ts: SystemTime, kind: EventKind) {
        let mut core = self.core();
        core.emit(ts, kind);
        core.flush();
    }

    /// The heartbeat, at `now`, with the agent quiet for `quiet_for`.
    pub(crate) fn tick(&mut self, now: SystemTime, quiet_for: Duration) {
        self.core().tick(now, quiet_for);
    }

    pub(crate) fn pause(&mut self, paused: bool) {
        let mut core = self.core();
        core.flush();
        for c in &mut core.consumers {
            c.pause(paused);
        }
    }

    /// Closes every consumer, in order: a file that cannot be written as the run closes (the
    /// receipt) is still announced to the consumers after it.
    pub(crate) fn close(mut self) -> Closed {
        // No tick after the consumers are closed.
        drop(self.heartbeat.take());
        let mut core = self.core();
        let core = &mut *core;
        core.flush();
        let mut consumers = std::mem::take(&mut core.consumers);
        let mut i = 0;
        while i < consumers.len() {
            let result = consumers[i].close();
            if keep(result, &*consumers[i], &mut core.faults) {
                i += 1;
                continue;
            }
            consumers.remove(i);
            // Only the consumers after this one hear of it: they have not closed yet.
            let rest = consumers.split_off(i);
            core.consumers = rest;
            core.raise();
            core.flush();
            consumers.append(&mut core.consumers);
        }
        Closed {
            failures: std::mem::take(&mut core.faults.failures),
            storage_errors: std::mem::take(&mut core.faults.storage),
        }
    }
}

impl Core {
    fn emit(&mut self, ts: SystemTime, mut kind: EventKind) {
        // A permission's question and answer come from the supervisor, not the agent's lines.
        self.clock.time(ts, &mut kind);
        let ev = Event {
            seq: self.seq,
            ts,
            turn: self.turn,
            kind,
        };
        self.forward_raw(&ev, None, false);
    }

    /// See [`Dispatcher::deliver`].
    fn deliver(&mut self, ts: SystemTime, events: &mut [EventKind], raw: &RawLines) -> Delivered {
        let mut final_word = false;
        let mut lines = raw.iter().peekable();
        let mut line: Option<&str> = None;
        for (i, kind) in events.iter_mut().enumerate() {
            while let Some((_, next)) = lines.next_if(|(first, _)| *first as usize <= i) {
                line = Some(next);
            }
            final_word |= matches!(kind, EventKind::AgentResult(_));
            self.emit_borrowed(ts, kind, line);
        }
        Delivered {
            final_word,
            spent: self.stats.spent(),
        }
    }

    /// Like [`Core::emit`], but leaves the event's contents with the caller.
    fn emit_borrowed(&mut self, ts: SystemTime, kind: &mut EventKind, raw: Option<&str>) {
        self.clock.time(ts, kind);
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
        self.forward_raw(&ev, raw, true);
        *kind = ev.kind;
    }

    /// Says that the agent goes round in circles and, at a stop, has the supervisor stop it.
    fn stuck(&mut self, ts: SystemTime, verdict: Verdict) {
        match verdict {
            Verdict::Warning(s) => self.emit(ts, EventKind::StuckWarning(Box::new(s))),
            Verdict::Stop(s) => {
                let message = format!(
                    "the agent went round in circles{}: {} ({})",
                    if s.nudged { " again after a nudge" } else { "" },
                    stuck::describe(&s),
                    s.rule.as_str()
                );
                self.emit(ts, EventKind::StuckDetected(Box::new(s)));
                self.halt.get_or_insert(Halt {
                    outcome: Outcome::Stuck,
                    message,
                });
            }
        }
    }

    /// Hands on a stamped event, with the agent's line it came from. Its JSON line is masked:
    /// an event of the agent's (`from_agent`) was made of lines the line feed masked already
    /// (masking it again would scan every event twice); runbook's own events, which may hold
    /// foreign text (a check's output, an error), are masked here.
    fn forward_raw(&mut self, ev: &Event, raw: Option<&str>, from_agent: bool) {
        self.stats.observe(ev);
        self.seq = ev.seq + 1;
        self.turn = ev.turn;
        let json = if self.any_json {
            self.line.clear();
            crate::encode::event(&mut self.line, ev).expect("events always serialize");
            self.line.push(b'\n');
            Some(if from_agent {
                Masked::made_of_masked(&self.line)
            } else {
                crate::redact::current().mask(&self.line)
            })
        } else {
            None
        };
        let delivery = Delivery {
            event: ev,
            totals: &self.stats,
            json,
            raw,
        };
        let (faults, before) = (&mut self.faults, self.consumers.len());
        self.consumers.retain_mut(|c| {
            let result = c.event(&delivery);
            keep(result, &**c, faults)
        });
        if self.consumers.len() != before {
            self.any_json = self.consumers.iter().any(|c| c.wants_json());
        }
        self.raise();
        if let Some(verdict) = self.stuck.as_mut().and_then(|d| d.observe(ev)) {
            self.stuck(ev.ts, verdict);
        }
        let sandboxed = self
            .stats
            .info
            .as_ref()
            .is_some_and(|i| i.sandbox.is_some());
        if let Some(denied) = sandboxed.then(|| sandbox_denial(&ev.kind)).flatten() {
            self.emit(ev.ts, denied);
        }
    }

    fn flush(&mut self) {
        self.write_out();
        self.raise();
    }

    /// Has every consumer write out what it holds, those someone watches first.
    fn write_out(&mut self) {
        let faults = &mut self.faults;
        for watched in [true, false] {
            self.consumers.retain_mut(|c| {
                if c.watched() != watched {
                    return true;
                }
                let result = c.flush();
                keep(result, &**c, faults)
            });
        }
    }

    fn storage_failed(&mut self, path: &Path, error: &io::Error) {
        self.faults
            .broken
            .push((path.display().to_string(), error.to_string()));
        self.raise();
    }

    /// Announces each file that could not be written, and turns what went wrong into a halt;
    /// emits what consumers have to tell of themselves.
    fn raise(&mut self) {
        // Once the run has finished, nothing is news: the receipt tells what each observer missed.
        let news: Vec<EventKind> = match self.stats.finish {
            Some(_) => Vec::new(),
            None => self.consumers.iter_mut().filter_map(|c| c.news()).collect(),
        };
        if !news.is_empty() {
            for kind in news {
                self.emit(SystemTime::now(), kind);
            }
            self.write_out();
        }
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

    fn tick(&mut self, now: SystemTime, quiet_for: Duration) {
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
/// The refusal of the sandbox an event of the agent's tells of, as far as its text can say: a
/// tool's error, or a line of the agent's stderr.
fn sandbox_denial(kind: &EventKind) -> Option<EventKind> {
    let (call_id, source, text) = match kind {
        EventKind::ToolCompleted(end) => (
            Some(end.call_id.clone()),
            end.name.clone(),
            end.error.as_deref()?,
        ),
        EventKind::Stderr { line } => (None, "stderr".to_owned(), line.as_str()),
        _ => return None,
    };
    // The line that tells of it: an error may hold a whole output.
    let line = text.lines().find(|l| crate::sandbox::is_denial(l))?;
    Some(EventKind::SandboxDenied {
        call_id,
        source,
        detail: line.trim().chars().take(300).collect(),
    })
}

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

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// Records each event's sequence number and text, and each flush.
    struct Seen(Arc<Mutex<Vec<String>>>);

    impl Consumer for Seen {
        fn event(&mut self, d: &Delivery<'_>) -> io::Result<()> {
            let text = match &d.event.kind {
                EventKind::Text { text } => text.clone(),
                other => format!("{other:?}"),
            };
            self.0
                .lock()
                .unwrap()
                .push(format!("{} {text}", d.event.seq));
            Ok(())
        }
        fn flush(&mut self) -> io::Result<()> {
            self.0.lock().unwrap().push("flush".to_owned());
            Ok(())
        }
        fn name(&self) -> &'static str {
            "seen"
        }
    }

    /// Records its flushes under its name; watched or not.
    struct Flushes {
        name: &'static str,
        watched: bool,
        log: Arc<Mutex<Vec<&'static str>>>,
    }

    impl Consumer for Flushes {
        fn event(&mut self, _: &Delivery<'_>) -> io::Result<()> {
            Ok(())
        }
        fn flush(&mut self) -> io::Result<()> {
            self.log.lock().unwrap().push(self.name);
            Ok(())
        }
        fn watched(&self) -> bool {
            self.watched
        }
        fn name(&self) -> &'static str {
            self.name
        }
    }

    #[test]
    fn what_someone_watches_is_written_out_before_the_run_directory_files() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let consumer = |name, watched| {
            Box::new(Flushes {
                name,
                watched,
                log: Arc::clone(&log),
            }) as Box<dyn Consumer>
        };
        // The order the run builds them in: its files first, then the views.
        let mut dispatch = Dispatcher::new(vec![
            consumer("event log", false),
            consumer("receipt", false),
            consumer("--json", true),
            consumer("observer", false),
        ]);
        dispatch.emit_now(SystemTime::now(), text("a"));
        dispatch.flush();
        assert_eq!(
            *log.lock().unwrap(),
            ["--json", "event log", "receipt", "observer"].repeat(2)
        );
    }

    fn text(t: &str) -> EventKind {
        EventKind::Text { text: t.to_owned() }
    }

    #[test]
    fn a_lane_delivers_only_while_open_and_with_nothing_left_to_the_supervisor() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut dispatch = Dispatcher::new(vec![Box::new(Seen(Arc::clone(&seen)))]);
        let lane = dispatch.lane();
        let now = SystemTime::now();
        assert!(
            lane.try_deliver(now, &mut [text("early")], &Vec::new())
                .is_none(),
            "a new lane is closed"
        );
        lane.set_open(true);
        dispatch.emit(now, text("supervisor's"));
        let delivered = lane
            .try_deliver(now, &mut [text("a"), text("b")], &Vec::new())
            .expect("open, nothing pending");
        assert!(!delivered.final_word);
        // A batch sent to the supervisor holds the lane until it has handled it.
        lane.sending();
        assert!(
            lane.try_deliver(now, &mut [text("c")], &Vec::new())
                .is_none()
        );
        dispatch.deliver(now, &mut [text("sent")], &Vec::new());
        lane.handled();
        assert!(
            lane.try_deliver(now, &mut [text("d")], &Vec::new())
                .is_some()
        );
        lane.set_open(false);
        assert!(
            lane.try_deliver(now, &mut [text("e")], &Vec::new())
                .is_none()
        );
        lane.set_open(true);
        assert!(
            lane.try_deliver(now, &mut [text("f")], &Vec::new())
                .is_some()
        );
        assert_eq!(
            *seen.lock().unwrap(),
            [
                "0 supervisor's",
                "1 a",
                "2 b",
                "flush",
                "3 sent",
                "4 d",
                "flush",
                "5 f",
                "flush"
            ]
        );
    }
}
