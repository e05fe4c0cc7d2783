//! The guardian: a small process runbook starts (itself, run as `runbook __guardian TAG
//! [CGROUP]`, which is not a command for people and is read before the command line is) before
//! the agent, that ends every process of the run if runbook dies without doing so (SIGKILL, a
//! crash). The kernel ends the agent with runbook (`PR_SET_PDEATHSIG`), but not what the agent
//! started.
//!
//! runbook holds the write end of a pipe whose read end is the guardian's stdin. While the run
//! goes without cgroups to hold it, a thread of runbook's tells the guardian, every
//! [`FEED_EVERY`], which processes below runbook came and went since it last looked (`+ PID START` and `- PID START`, the start time
//! from `/proc/PID/stat`): only changes, so a quiet run costs a few reads a second. When the run
//! ends normally runbook writes `done` and closes it, and the guardian exits at once; when
//! runbook dies the kernel closes it, the guardian reads the end of the pipe and ends the run's
//! processes until none is left, then exits: the run's cgroups, what carries the run's marks,
//! every process runbook last told of that is still the same process (same pid, same start
//! time: a pid reused since is never hit), and what is below any of them. So a process that
//! shed the mark (`env -i`) and left the agent's group (`setsid`) outside a cgroup is still ended,
//! once runbook has told of it.
//!
//! This file is runbook's side (starting the guardian, telling it of processes, dismissing it);
//! the guardian's own, which ends the run, is [`serve`].

mod serve;

pub(crate) use serve::invocation;

use std::collections::HashMap;
use std::ffi::CStr;
use std::io::Write as _;
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::linux::cgroup::Cgroup;

/// The first argument that makes runbook a guardian.
pub(super) const ARG: &str = "__guardian";
/// What runbook writes when the run has ended normally.
pub(super) const DONE: &str = "done";
/// How long the guardian keeps killing before it gives up on what it cannot end.
pub(super) const SWEEP_BOUND: Duration = Duration::from_secs(10);
/// How long runbook waits for a dismissed guardian to exit.
const EXIT_WAIT: Duration = Duration::from_secs(2);
/// How often runbook tells the guardian of the processes below it.
const FEED_EVERY: Duration = Duration::from_millis(500);
/// How the guardian shows in `ps`.
pub(super) const NAME: &CStr = c"runbook-guard";

/// The guardian, seen from runbook.
#[derive(Debug)]
pub(crate) struct Guardian {
    child: Child,
    pipe: Arc<Mutex<std::io::PipeWriter>>,
    /// Ends the thread that tells the guardian of runbook's processes, when dropped.
    stop: Option<Sender<()>>,
    feed: Option<JoinHandle<()>>,
}

impl Guardian {
    /// Starts the guardian of the run `tag` (and its cgroup): runbook's own binary, in a process
    /// group of its own so that a Ctrl-C at the terminal does not reach it.
    ///
    /// `contained`, while set, says the run's cgroups hold all its processes: the guardian then
    /// needs no word of them.
    pub(crate) fn start(
        tag: &str,
        cgroups: &[Option<&Cgroup>; 2],
        contained: Option<Arc<AtomicBool>>,
    ) -> std::io::Result<Self> {
        // Both ends are close-on-exec: the agent never holds the write end, so runbook's death
        // is the end of the pipe.
        let (read, pipe) = std::io::pipe()?;
        let mut command = Command::new("/proc/self/exe");
        command
            .arg0("runbook")
            .args([ARG, tag])
            .current_dir("/")
            .stdin(read)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        // The run's cgroup, then the observers' (only with the run's).
        for cgroup in cgroups.iter().map_while(|c| *c) {
            command.arg(cgroup.dir());
        }
        let child = command.spawn()?;
        let pipe = Arc::new(Mutex::new(pipe));
        let (stop, stopped) = std::sync::mpsc::channel();
        let (fed, guardian) = (Arc::clone(&pipe), child.id() as i32);
        let feed = std::thread::Builder::new()
            .name("guardian-feed".to_owned())
            .spawn(move || feed(&fed, &stopped, guardian, contained.as_deref()))?;
        Ok(Self {
            child,
            pipe,
            stop: Some(stop),
            feed: Some(feed),
        })
    }

    pub(crate) fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// The run ended normally: the guardian exits without sweeping; runbook waits for it.
    pub(crate) fn dismiss(mut self) {
        drop(self.stop.take());
        if let Some(feed) = self.feed.take() {
            let _ = feed.join();
        }
        if let Ok(mut pipe) = self.pipe.lock() {
            let _ = writeln!(pipe, "{DONE}");
        }
        drop(self.pipe);
        let until = Instant::now() + EXIT_WAIT;
        while Instant::now() < until {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every [`FEED_EVERY`] until `stop` says so (or is dropped), tells the guardian through `pipe`
/// which processes below runbook (the guardian `guardian` aside) came and went. Nothing is read
/// while the cgroups hold the run (`contained`), nor when no pid was handed out on the machine
/// since the last look (nothing can have come then; what went is no danger: a pid reused is
/// never hit).
fn feed(
    pipe: &Mutex<std::io::PipeWriter>,
    stop: &Receiver<()>,
    guardian: i32,
    contained: Option<&AtomicBool>,
) {
    let me = std::process::id() as i32;
    let mut told: HashMap<i32, u64> = HashMap::new();
    let mut lines = String::new();
    let mut last_pid = None;
    while let Err(RecvTimeoutError::Timeout) = stop.recv_timeout(FEED_EVERY) {
        if contained.is_some_and(|c| c.load(Ordering::Relaxed)) {
            continue;
        }
        let newest = crate::linux::procfs::last_pid();
        if newest.is_some() && newest == last_pid {
            continue;
        }
        last_pid = newest;
        let now: HashMap<i32, u64> = crate::linux::procfs::descendants_but(me, guardian)
            .into_iter()
            .filter(|p| !p.zombie)
            .map(|p| (p.pid, p.start))
            .collect();
        changes(&told, &now, &mut lines);
        if lines.is_empty() {
            continue;
        }
        let written = pipe.lock().map(|mut p| p.write_all(lines.as_bytes()));
        if !matches!(written, Ok(Ok(()))) {
            return;
        }
        told = now;
    }
}

/// The lines that tell the guardian what changed from `told` to `now` (pid to start time).
fn changes(told: &HashMap<i32, u64>, now: &HashMap<i32, u64>, lines: &mut String) {
    use std::fmt::Write as _;
    lines.clear();
    for (pid, start) in told {
        if now.get(pid) != Some(start) {
            let _ = writeln!(lines, "- {pid} {start}");
        }
    }
    for (pid, start) in now {
        if told.get(pid) != Some(start) {
            let _ = writeln!(lines, "+ {pid} {start}");
        }
    }
}

/// A line from runbook about one process: `+ PID START` (it is the run's) or `- PID START`.
pub(super) fn parse_change(line: &str) -> Option<(i32, u64, bool)> {
    let mut parts = line.split_ascii_whitespace();
    let is = match parts.next()? {
        "+" => true,
        "-" => false,
        _ => return None,
    };
    let pid = parts.next()?.parse().ok()?;
    let start = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some((pid, start, is))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_changes_are_told_and_read_back_as_they_were() {
        let told = HashMap::from([(10, 100), (11, 110), (12, 120)]);
        // 11 is gone; 12 is another process now (a pid reused); 13 is new.
        let now = HashMap::from([(10, 100), (12, 999), (13, 130)]);
        let mut lines = String::new();
        changes(&told, &now, &mut lines);
        let mut read: Vec<_> = lines.lines().map(|l| parse_change(l).unwrap()).collect();
        read.sort_unstable();
        assert_eq!(
            read,
            [
                (11, 110, false),
                (12, 120, false),
                (12, 999, true),
                (13, 130, true)
            ]
        );
        changes(&now, &now, &mut lines);
        assert!(lines.is_empty(), "nothing changed: {lines}");
        assert_eq!(parse_change("+ 1 2 3"), None);
        assert_eq!(parse_change("done"), None);
    }
}
