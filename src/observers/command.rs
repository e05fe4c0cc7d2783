//! `--on-event CMD`: a program started once per run (`sh -c`, in its own process group) that
//! reads every event on its stdin. A thread of its own writes the lines, so a slow or stuck
//! observer only ever fills its own queue; its output goes to `observers/<n>.std{out,err}.log`,
//! read from pipes and written there through the masking writer, as its stdin is written, each
//! capped (see [`super::log`]).
//!
//! It is the run's: it carries the observers' mark and joins their cgroup (both given by the
//! run), so that whatever it starts is ended at the end of the run, or by the guardian.

use std::io;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use super::{DRAIN, MetaLine, QUEUE, Tally};
use crate::consumer::{Consumer, Delivery, Tick};
use crate::redact::capped::Cap;
use crate::redact::pump::{self, Pump};
use crate::redact::{Masked, MaskedBuf, MaskedWriter};

/// How long it gets after SIGTERM before SIGKILL.
const TERM_GRACE: Duration = Duration::from_millis(500);
/// How long a closed input waits to be told, for the observer's exit to say why.
const CAUSE_GRACE: Duration = Duration::from_millis(300);

pub(crate) struct CommandObserver {
    tally: Arc<Tally>,
    meta: MetaLine,
    /// Each line also holds the agent's own line the event came from.
    raw: bool,
    child: Child,
    queue: Option<SyncSender<Masked<'static>>>,
    writer: Option<JoinHandle<()>>,
    /// Its stdout and stderr, read into their logs until every holder of their pipes is gone.
    logs: Vec<Pump>,
    /// Its stderr's log, whose last line says why it exited.
    stderr_log: std::path::PathBuf,
}

/// Prepares an observer's command to join the run's processes; what it returns stays open until
/// the command has started.
pub(crate) type Enter<'a> = &'a dyn Fn(&mut Command) -> Option<std::fs::File>;

impl CommandObserver {
    /// Starts `command` in `cwd`, its output in `logs` (the run's `observers/`), made one of
    /// the run's processes by `enter`.
    pub(crate) fn start(
        tally: Arc<Tally>,
        command: &str,
        (cwd, logs): (&Path, &Path),
        meta: MetaLine,
        raw: bool,
        enter: Enter<'_>,
    ) -> io::Result<Self> {
        crate::rundir::create_private_dir(logs)?;
        let log = |kind: &str| {
            let path = logs.join(format!("{}.{kind}.log", tally.index));
            let cap = Cap {
                bytes: super::log::LOG_CAP,
                cut: tally.log_cut(),
            };
            let name = format!("observer-{}-{kind}", tally.index);
            pump::start_capped(MaskedWriter::create_private(&path)?, &name, Some(cap))
        };
        let (stdout, out_pump) = log("stdout")?;
        let (stderr, err_pump) = log("stderr")?;
        let tally_index = tally.index;
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(command)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(stdout)
            .stderr(stderr);
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        crate::linux::die_with_parent(&mut cmd);
        let joined = enter(&mut cmd);
        let spawned = cmd.spawn();
        drop(joined);
        // The pipes' writing ends are the observer's alone now.
        drop(cmd);
        let mut child = spawned?;
        let stdin = MaskedWriter::pipe(child.stdin.take().expect("stdin is piped"));
        let (queue, lines) = sync_channel(QUEUE);
        let writer_tally = Arc::clone(&tally);
        let writer = std::thread::Builder::new()
            .name(format!("observer-{}", tally.index))
            .spawn(move || write_lines(stdin, &lines, &writer_tally))?;
        Ok(Self {
            tally,
            meta,
            raw,
            child,
            queue: Some(queue),
            writer: Some(writer),
            logs: vec![out_pump, err_pump],
            stderr_log: logs.join(format!("{}.stderr.log", tally_index)),
        })
    }

    /// What reads its output into its logs, for the run to wait for once every process of the
    /// run is ended.
    pub(crate) fn take_logs(&mut self) -> Vec<Pump> {
        std::mem::take(&mut self.logs)
    }

    /// Its process, the leader of its process group.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Notices an observer that exited on its own, and tells why from the last line it wrote
    /// to stderr (`sh: 1: jqq: not found`); or that it closed its input a while ago and lives.
    fn check_alive(&mut self) {
        if self.tally.is_failed() {
            return;
        }
        if let Ok(Some(status)) = self.child.try_wait() {
            self.queue = None;
            let cause = last_line(&self.stderr_log).map_or_else(String::new, |l| format!(": {l}"));
            self.tally
                .failed(format!("exited ({}){cause}", describe(status)));
        } else if let Some(problem) = self.tally.overdue(CAUSE_GRACE) {
            self.queue = None;
            self.tally.failed(problem);
        }
    }

    fn end(&mut self) {
        let pgid = Pid::from_raw(self.child.id() as i32);
        let _ = killpg(pgid, Signal::SIGTERM);
        let until = Instant::now() + TERM_GRACE;
        while Instant::now() < until {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        // Whatever is left of its group goes too.
        let _ = killpg(pgid, Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

/// Writes the queued lines to the observer until the queue closes or the observer stops reading.
fn write_lines(
    mut stdin: MaskedWriter<impl io::Write>,
    lines: &Receiver<Masked<'static>>,
    tally: &Tally,
) {
    let mut batch = MaskedBuf::default();
    while let Ok(line) = lines.recv() {
        batch.clear();
        batch.push(&line);
        let mut count = 1;
        // Whatever else is queued goes in the same write.
        while let Ok(more) = lines.try_recv() {
            batch.push(&more);
            count += 1;
            if batch.len() > 64 * 1024 {
                break;
            }
        }
        let written = stdin
            .write_all(&batch.as_masked())
            .and_then(|()| stdin.flush());
        if let Err(e) = written {
            if e.kind() == io::ErrorKind::BrokenPipe {
                // Told once its exit shows why, or after a moment (`check_alive`).
                tally.pend("closed its input".to_owned());
            } else {
                tally.failed(format!("cannot be written to: {e}"));
            }
            return;
        }
        tally.written(count);
    }
}

/// The last line a log holds (its last 4 KiB read), waiting a little for a line that may still
/// be on its way from the pipe; `None` for an empty log.
fn last_line(path: &Path) -> Option<String> {
    let until = Instant::now() + Duration::from_millis(200);
    loop {
        let tail = tail(path, 4096).unwrap_or_default();
        let line = String::from_utf8_lossy(&tail)
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|l| crate::term::fit(l, 200).into_owned());
        if line.is_some() || Instant::now() >= until {
            return line;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The last `n` bytes of a file.
fn tail(path: &Path, n: u64) -> io::Result<Vec<u8>> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(n)))?;
    let mut out = Vec::new();
    file.take(n).read_to_end(&mut out)?;
    Ok(out)
}

fn describe(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit {code}"),
        (None, Some(sig)) => Signal::try_from(sig).map_or_else(
            |_| format!("signal {sig}"),
            |s| format!("killed by {}", s.as_str()),
        ),
        _ => "exited".to_owned(),
    }
}

impl Consumer for CommandObserver {
    fn event(&mut self, delivery: &Delivery<'_>) -> io::Result<()> {
        let (Some(queue), Some(json)) = (&self.queue, &delivery.json) else {
            return Ok(());
        };
        let raw = delivery.raw.filter(|_| self.raw);
        let line = self.meta.line(json, delivery.event.turn, raw);
        match queue.try_send(line) {
            Ok(()) => self.tally.queued(),
            Err(TrySendError::Full(_)) => self.tally.dropped("fell behind"),
            // The writer stopped: the observer closed its input, or exited.
            Err(TrySendError::Disconnected(_)) => {
                self.queue = None;
                self.check_alive();
            }
        }
        if self.tally.is_failed() {
            self.queue = None;
        }
        Ok(())
    }

    fn wants_json(&self) -> bool {
        true
    }

    fn wants_raw(&self) -> bool {
        self.raw
    }

    fn tick(&mut self, _tick: &Tick<'_>) -> io::Result<()> {
        self.check_alive();
        Ok(())
    }

    fn close(&mut self) -> io::Result<()> {
        // Its stdin closes once the queue is written out: the end of the events.
        let behind = self.tally.report().dropped > 0;
        self.queue = None;
        self.tally.closing();
        let until = Instant::now() + if behind { Duration::ZERO } else { DRAIN };
        let writer = self.writer.take();
        let mut exited = false;
        while Instant::now() < until {
            if writer.as_ref().is_none_or(JoinHandle::is_finished)
                && matches!(self.child.try_wait(), Ok(Some(_)))
            {
                exited = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        if !exited {
            self.end();
        }
        // Ended, it no longer blocks its writer.
        if let Some(writer) = writer {
            let _ = writer.join();
        }
        for log in self.logs.drain(..) {
            let _ = log.finish(DRAIN);
        }
        Ok(())
    }

    fn news(&mut self) -> Option<crate::event::EventKind> {
        self.tally.news()
    }

    fn name(&self) -> &'static str {
        "observer"
    }
}

impl Drop for CommandObserver {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.queue = None;
            self.end();
        }
    }
}
