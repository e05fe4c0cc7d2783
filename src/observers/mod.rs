//! Observers: other programs that get every event of a run while it runs, as the JSON lines
//! `--json` prints, each with the run's and its turn's `meta`. Best-effort: each has a bounded
//! queue, events it cannot take in time are dropped and counted, and nothing an observer does
//! can slow, block or fail the run.

mod callback;
mod command;
mod log;
mod sink;

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub(crate) use callback::{Callback, Pending};
pub(crate) use command::CommandObserver;
pub(crate) use sink::EventsTo;

use crate::event::{EventKind, ObserverLog, ObserverReport, Turn, TurnKind};
use crate::redact::Masked;
use crate::term::print;

/// How many lines an observer's queue holds before events are dropped.
pub(crate) const QUEUE: usize = 4096;
/// How long, at the end of the run, an observer that kept up gets to take what is queued.
pub(crate) const DRAIN: std::time::Duration = std::time::Duration::from_secs(2);

/// Where an event comes from, given with it to every observer: the run, and the turn of the run
/// it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Meta {
    /// The run's id, the name of its directory under the runs directory.
    pub run_id: String,
    /// The run's name: `--name` (`Run::name`), else its id.
    pub run_name: String,
    /// The agent: `opencode`, `claude`, `codex`, or `custom` for `--agent-cmd`.
    pub agent: String,
    /// The turn the event belongs to: 0 for the first, then one more for each turn that resumed
    /// the session (`--then`, the execution after `--plan`, repair, the pass after a stall).
    pub turn_index: u32,
    /// Whether that turn started the agent's session or resumed it.
    pub turn_kind: TurnKind,
}

/// The run-wide part of every line's `meta`, ready to be added to events' JSON lines.
#[derive(Debug, Clone)]
pub(crate) struct MetaLine {
    run: Meta,
    /// `,"meta":{"run_id":…,"run_name":…,"agent":…,`
    head: String,
}

impl MetaLine {
    pub(crate) fn new(run: Meta) -> Self {
        let s = |v: &str| serde_json::Value::String(v.to_owned()).to_string();
        let head = format!(
            ",\"meta\":{{\"run_id\":{},\"run_name\":{},\"agent\":{},",
            s(&run.run_id),
            s(&run.run_name),
            s(&run.agent)
        );
        Self { run, head }
    }

    /// The meta of an event of `turn`.
    pub(crate) fn of(&self, turn: Turn) -> Meta {
        Meta {
            turn_index: turn.index,
            turn_kind: turn.kind,
            ..self.run.clone()
        }
    }

    /// `json`, an event's line (`{…}\n`), with `raw`, the agent's line it came from, if given
    /// (masked again here, in every spelling), and the meta of its `turn` added at its end.
    pub(crate) fn line(&self, json: &Masked<'_>, turn: Turn, raw: Option<&str>) -> Masked<'static> {
        let json = json.as_bytes();
        let body = json.strip_suffix(b"\n").unwrap_or(json);
        let body = body.strip_suffix(b"}").unwrap_or(body);
        let kind = match turn.kind {
            TurnKind::Start => "start",
            TurnKind::Resume => "resume",
        };
        let mut line = Vec::with_capacity(json.len() + self.head.len() + 48);
        line.extend_from_slice(body);
        if let Some(raw) = raw {
            line.extend_from_slice(b",\"raw\":");
            let mut quoted = Vec::with_capacity(raw.len() + 2);
            // A string always serializes.
            let _ = serde_json::to_writer(&mut quoted, raw);
            line.extend_from_slice(crate::redact::current().mask(&quoted).as_bytes());
        }
        line.extend_from_slice(self.head.as_bytes());
        line.extend_from_slice(
            format!(
                "\"turn_index\":{},\"turn_kind\":\"{kind}\"}}}}\n",
                turn.index
            )
            .as_bytes(),
        );
        // The event's line was masked, its raw line too, and the meta is runbook's own (the
        // run's name masked).
        Masked::made_of_masked(&line).into_owned()
    }
}

/// What one observer was given and missed, shared between it and the run that reports it.
#[derive(Debug)]
pub(crate) struct Tally {
    /// 1-based, in the order they were given.
    pub index: u32,
    /// What it is: the command, or the path events go to.
    pub target: String,
    queued: AtomicU64,
    written: AtomicU64,
    dropped: AtomicU64,
    panics: AtomicU64,
    warned_drop: AtomicBool,
    /// The run is over: it is being ended, which is no news.
    closing: AtomicBool,
    problem: Mutex<Option<String>>,
    /// The problem, until the dispatcher has been told of it.
    news: Mutex<Option<String>>,
    /// A problem seen, not told yet while its cause may still show (a command that closed its
    /// input has often just exited, and its exit says why): since when, and what.
    pending: Mutex<Option<(std::time::Instant, String)>>,
    /// A command's: the bytes its logs left out (each log is capped at [`log::LOG_CAP`]).
    log_cut: Mutex<Option<log::Cut>>,
}

impl Tally {
    pub(crate) fn new(index: u32, target: String) -> Self {
        Self {
            index,
            target,
            queued: AtomicU64::new(0),
            written: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            panics: AtomicU64::new(0),
            warned_drop: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            problem: Mutex::new(None),
            news: Mutex::new(None),
            pending: Mutex::new(None),
            log_cut: Mutex::new(None),
        }
    }

    /// What a command observer's logs add the bytes they leave out to.
    fn log_cut(&self) -> log::Cut {
        let mut slot = self.log_cut.lock().unwrap_or_else(|e| e.into_inner());
        std::sync::Arc::clone(slot.get_or_insert_with(log::Cut::default))
    }

    fn queued(&self) {
        self.queued.fetch_add(1, Ordering::Relaxed);
    }

    fn written(&self, lines: u64) {
        self.written.fetch_add(lines, Ordering::Relaxed);
    }

    /// A callback took an event; whether it returned rather than panicked. The first panic is
    /// told, once.
    fn called(&self, returned: bool) {
        self.written(1);
        if !returned && self.panics.fetch_add(1, Ordering::Relaxed) == 0 {
            print::warn(format_args!(
                "{} panicked; it still gets the next events, and the run goes on",
                self.label()
            ));
        }
    }

    /// An event it could not take; the first is told, once.
    fn dropped(&self, what: &str) {
        self.dropped.fetch_add(1, Ordering::Relaxed);
        if !self.warned_drop.swap(true, Ordering::Relaxed) {
            print::warn(format_args!(
                "{} {what}: events are dropped (the receipt counts them); the run goes on",
                self.label()
            ));
        }
    }

    /// It stopped taking events for good: told once; later problems are not news.
    fn failed(&self, problem: String) {
        if self.closing.load(Ordering::Relaxed) {
            return;
        }
        let mut slot = self.problem.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *self.news.lock().unwrap_or_else(|e| e.into_inner()) = Some(problem.clone());
            *slot = Some(problem);
        }
    }

    /// `observer.failed`, once, when it has stopped taking events since last asked.
    pub(crate) fn news(&self) -> Option<EventKind> {
        let problem = self.news.lock().unwrap_or_else(|e| e.into_inner()).take()?;
        Some(EventKind::ObserverFailed {
            index: self.index,
            target: self.target.clone(),
            problem,
        })
    }

    /// A problem to tell once its cause is known, or after a moment if none shows.
    fn pend(&self, problem: String) {
        let mut slot = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert((std::time::Instant::now(), problem));
    }

    /// The problem held back for longer than `grace`, taken.
    fn overdue(&self, grace: std::time::Duration) -> Option<String> {
        let mut slot = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if slot
            .as_ref()
            .is_some_and(|(since, _)| since.elapsed() >= grace)
        {
            return slot.take().map(|(_, problem)| problem);
        }
        None
    }

    fn closing(&self) {
        self.closing.store(true, Ordering::Relaxed);
    }

    fn is_failed(&self) -> bool {
        self.problem
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// `observer 1 (jq -c …)`.
    fn label(&self) -> String {
        format!("observer {} ({})", self.index, self.target)
    }

    /// What the receipt says of it.
    pub(crate) fn report(&self) -> ObserverReport {
        // Told here if not before: its failure is said once.
        self.news.lock().unwrap_or_else(|e| e.into_inner()).take();
        ObserverReport {
            index: self.index,
            target: self.target.clone(),
            queued: self.queued.load(Ordering::Relaxed),
            written: self.written.load(Ordering::Relaxed),
            dropped: self.dropped.load(Ordering::Relaxed),
            panics: self.panics.load(Ordering::Relaxed),
            problem: self
                .problem
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            log: self
                .log_cut
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
                .map(|cut| ObserverLog {
                    cap_bytes: log::LOG_CAP,
                    cut_bytes: cut.load(Ordering::Relaxed),
                }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_gets_the_meta_of_its_run_and_turn() {
        let meta = MetaLine::new(Meta {
            run_id: "20261124-1-abcde".into(),
            run_name: "nightly \"fix\"".into(),
            agent: "opencode".into(),
            turn_index: 0,
            turn_kind: TurnKind::Start,
        });
        let line = meta.line(
            &Masked::own(b"{\"seq\":3,\"type\":\"text\",\"text\":\"hi\"}\n"),
            Turn {
                index: 1,
                kind: TurnKind::Resume,
            },
            Some("{\"part\":\"hi\"}"),
        );
        let line = line.as_bytes();
        let value: serde_json::Value = serde_json::from_slice(line).unwrap();
        assert_eq!(value["text"], "hi");
        assert_eq!(value["meta"]["run_name"], "nightly \"fix\"");
        assert_eq!(value["meta"]["turn_index"], 1);
        assert_eq!(value["meta"]["turn_kind"], "resume");
        assert_eq!(value["meta"]["agent"], "opencode");
        assert_eq!(value["raw"], "{\"part\":\"hi\"}");
        assert!(line.ends_with(b"}\n") && line.iter().filter(|b| **b == b'\n').count() == 1);
    }
}
