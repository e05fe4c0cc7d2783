//! What makes a process part of a run, beyond being below runbook: the mark every process runbook
//! starts for the run inherits (`RUNBOOK_RUN=<run id>.<runbook's pid>` in its environment), the
//! run's cgroup where the kernel lets runbook make one, and the guardian that ends them all if
//! runbook itself is killed.
//!
//! Observers (`--on-event`) are the run's too, apart from the agent's: they carry a mark of their
//! own (`RUNBOOK_RUN=<tag>.observers`) and have a cgroup of their own beside the run's, so that
//! ending a turn's agent leaves them be, and the end of the run (or the guardian) ends them and
//! everything they started.
//!
//! `RUNBOOK_NO_CGROUP=1` leaves the cgroup out (the mark, the process group and runbook's
//! subreaper still find every process): a troubleshooting knob, and how the tests try both ways.

use std::collections::HashMap;
use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::guardian::Guardian;
use crate::linux::cgroup::Cgroup;
use crate::term::print;

/// The variable that marks the run's processes.
pub(crate) const MARK_VAR: &str = "RUNBOOK_RUN";
/// Set to `1`, runbook makes no cgroup for its runs.
pub(crate) const NO_CGROUP_VAR: &str = "RUNBOOK_NO_CGROUP";

/// The processes of one run, as the kernel and `/proc` can tell them apart.
#[derive(Debug)]
pub(crate) struct Scope {
    /// `<run id>.<runbook's pid>`: unique on the machine while runbook lives.
    tag: String,
    /// `RUNBOOK_RUN=<tag>`, as it appears in `/proc/PID/environ`.
    mark: Vec<u8>,
    /// `RUNBOOK_RUN=<tag>.observers`: the observers' processes.
    observers_mark: Vec<u8>,
    cgroup: Option<Cgroup>,
    /// The observers' cgroup, beside the run's.
    observers_cgroup: Option<Cgroup>,
    /// Whether an observer was started.
    has_observers: AtomicBool,
    /// The processes runbook last said were the run's (pid, start time), as its guardian knows
    /// them.
    tracked: Mutex<HashMap<i32, u64>>,
    /// Cleared when the kernel would not put the agent in the cgroup after all.
    cgroup_in_use: Arc<AtomicBool>,
    /// runbook, whose descendants are the run's (none in the guardian: runbook is gone).
    root: Option<i32>,
    guardian: Mutex<Option<Guardian>>,
    guardian_pid: Option<i32>,
    /// The processes runbook started itself (each turn's agent, its version probe): tokio waits
    /// for them, so they are never reaped as orphans.
    started: Mutex<Vec<u32>>,
    /// The process groups of runbook's own helpers (observers): never the run's, whatever their
    /// parent.
    apart: Mutex<Vec<i32>>,
    /// The sandbox every process of the run but the observers starts in (`--sandbox`).
    sandbox: Option<crate::sandbox::Prepared>,
    /// The run's temp dir, `TMPDIR` for every process of the run but the observers (none in
    /// the guardian, which starts nothing).
    tmp: Option<std::path::PathBuf>,
}

impl Scope {
    /// The scope of a new run: its mark, its cgroup when the hierarchy lets runbook make one
    /// (and `RUNBOOK_NO_CGROUP` is not `1`), its guardian, and its temp dir `tmp`.
    ///
    /// `whole_process`: runbook is the whole process (the `runbook` command), so that every child
    /// of it is the run's; in a program using the library, its other children are not.
    pub(crate) fn open(
        run_id: &str,
        whole_process: bool,
        sandbox: Option<crate::sandbox::Prepared>,
        tmp: std::path::PathBuf,
    ) -> Self {
        let tag = format!("{run_id}.{}", std::process::id());
        let cgroup = if std::env::var_os(NO_CGROUP_VAR).is_some_and(|v| v == "1") {
            None
        } else {
            Cgroup::create(&format!("runbook-{tag}")).ok()
        };
        let observers_cgroup = cgroup
            .as_ref()
            .and_then(|_| Cgroup::create(&format!("runbook-{tag}-observers")).ok());
        let cgroup_in_use = Arc::new(AtomicBool::new(cgroup.is_some()));
        // The guardian is runbook's own binary run again: a program using the library is not.
        let guardian = if whole_process {
            let cgroups = [cgroup.as_ref(), observers_cgroup.as_ref()];
            // While both cgroups hold the run's processes, the guardian needs no word of them.
            let contained = observers_cgroup
                .is_some()
                .then(|| Arc::clone(&cgroup_in_use));
            match Guardian::start(&tag, &cgroups, contained) {
                Ok(g) => Some(g),
                Err(e) => {
                    print::warn(format_args!(
                        "cannot start the process that ends the agent's processes if runbook is killed ({e}); they may outlive a killed runbook"
                    ));
                    None
                }
            }
        } else {
            None
        };
        Self {
            mark: mark(&tag),
            observers_mark: mark(&observers_tag(&tag)),
            tag,
            cgroup_in_use,
            cgroup,
            observers_cgroup,
            has_observers: AtomicBool::new(false),
            tracked: Mutex::new(HashMap::new()),
            root: whole_process.then(|| std::process::id() as i32),
            guardian_pid: guardian.as_ref().map(Guardian::pid),
            guardian: Mutex::new(guardian),
            started: Mutex::new(Vec::new()),
            apart: Mutex::new(Vec::new()),
            sandbox,
            tmp: Some(tmp),
        }
    }

    /// The scope of a run whose runbook is gone, as its guardian sees it: the run's cgroup and
    /// the observers'.
    pub(crate) fn orphaned(tag: &str, cgroup: Option<Cgroup>, observers: Option<Cgroup>) -> Self {
        Self {
            mark: mark(tag),
            observers_mark: mark(&observers_tag(tag)),
            tag: tag.to_owned(),
            cgroup_in_use: Arc::new(AtomicBool::new(cgroup.is_some())),
            cgroup,
            observers_cgroup: observers,
            has_observers: AtomicBool::new(true),
            tracked: Mutex::new(HashMap::new()),
            root: None,
            guardian: Mutex::new(None),
            guardian_pid: None,
            started: Mutex::new(Vec::new()),
            apart: Mutex::new(Vec::new()),
            sandbox: None,
            tmp: None,
        }
    }

    /// Marks a process runbook is about to start as the run's, gives it the run's temp dir, and
    /// has it join the run's cgroup before it runs anything, then restrict itself to the run's
    /// sandbox, if there is one (a process that cannot is never started). The file returned
    /// must stay open until the process has started.
    pub(crate) fn enter(&self, command: &mut std::process::Command) -> Option<File> {
        command.env(MARK_VAR, &self.tag);
        if let Some(tmp) = &self.tmp {
            command.env("TMPDIR", tmp);
        }
        let procs = self
            .cgroup()
            .and_then(|c| c.procs_writer().ok())
            .inspect(|procs| crate::linux::join_cgroup(command, procs));
        // After the cgroup: the sandbox would refuse the write to `cgroup.procs`.
        if let Some(sandbox) = &self.sandbox {
            sandbox.apply(command);
        }
        procs
    }

    /// Marks an observer runbook is about to start as the run's (not the agent's), and has it
    /// join the observers' cgroup. The file returned must stay open until it has started.
    pub(crate) fn enter_observer(&self, command: &mut std::process::Command) -> Option<File> {
        self.has_observers.store(true, Ordering::Relaxed);
        command.env(MARK_VAR, observers_tag(&self.tag));
        let procs = self.observers_cgroup.as_ref()?.procs_writer().ok()?;
        crate::linux::join_cgroup(command, &procs);
        Some(procs)
    }

    /// Whether `pid` is an observer's (by its cgroup or its mark), not the agent's.
    pub(crate) fn is_observers(&self, pid: i32, buf: &mut Vec<u8>) -> bool {
        if !self.has_observers.load(Ordering::Relaxed) {
            return false;
        }
        let in_cgroup = u32::try_from(pid)
            .is_ok_and(|p| self.observers_cgroup.as_ref().is_some_and(|c| c.holds(p)));
        in_cgroup || crate::linux::procfs::environ_has(pid, &self.observers_mark, buf)
    }

    /// The observers' cgroup, if they have one.
    pub(crate) fn observers_cgroup(&self) -> Option<&Cgroup> {
        self.observers_cgroup.as_ref()
    }

    /// `RUNBOOK_RUN=<tag>.observers`.
    pub(crate) fn observers_mark(&self) -> &[u8] {
        &self.observers_mark
    }

    /// runbook says process `pid`, started at `start`, is the run's (`true`) or no longer is.
    pub(crate) fn track(&self, pid: i32, start: u64, is: bool) {
        let mut tracked = self.tracked.lock().unwrap_or_else(|e| e.into_inner());
        if is {
            tracked.insert(pid, start);
        } else if tracked.get(&pid) == Some(&start) {
            tracked.remove(&pid);
        }
    }

    /// Whether runbook last said that the process `pid` that started at `start` is the run's: a
    /// process that got the pid of one since gone never is.
    pub(crate) fn tracks(&self, pid: i32, start: u64) -> bool {
        self.tracked
            .lock()
            .is_ok_and(|t| t.get(&pid) == Some(&start))
    }

    /// A process runbook started for the run is `pid`; its owner waits for it. If the kernel did
    /// not put it in the cgroup after all, the run goes on without the cgroup.
    pub(crate) fn entered(&self, pid: u32) {
        if let Ok(mut started) = self.started.lock() {
            started.push(pid);
        }
        if let Some(cgroup) = self.cgroup()
            && !cgroup.holds(pid)
        {
            self.cgroup_in_use.store(false, Ordering::Relaxed);
        }
    }

    /// `pid` leads a process group of runbook's own that runbook waits for itself: never the
    /// run's, never reaped as an orphan.
    pub(crate) fn apart(&self, pid: u32) {
        if let Ok(mut apart) = self.apart.lock() {
            apart.push(pid as i32);
        }
        if let Ok(mut started) = self.started.lock() {
            started.push(pid);
        }
    }

    /// The files runbook's own helpers (observers, and what they started) have open now: what
    /// they write is not the agent's doing.
    pub(crate) fn helpers_files(&self) -> Vec<std::path::PathBuf> {
        let apart = self.apart.lock().map(|a| a.clone()).unwrap_or_default();
        if apart.is_empty() {
            return Vec::new();
        }
        let in_cgroup = self
            .observers_cgroup
            .as_ref()
            .map(Cgroup::pids)
            .unwrap_or_default();
        let mut buf = Vec::new();
        crate::linux::procfs::pids()
            .into_iter()
            .filter(|&pid| {
                in_cgroup.contains(&pid)
                    || crate::linux::procfs::stat(pid).is_some_and(|p| apart.contains(&p.pgrp))
                    || crate::linux::procfs::environ_has(pid, &self.observers_mark, &mut buf)
            })
            .flat_map(crate::linux::procfs::open_files)
            .collect()
    }

    /// Whether the process group `pgrp` is one of runbook's own helpers'.
    pub(crate) fn is_apart(&self, pgrp: i32) -> bool {
        self.apart.lock().is_ok_and(|a| a.contains(&pgrp))
    }

    /// The run's cgroup, while it is in use.
    pub(crate) fn cgroup(&self) -> Option<&Cgroup> {
        self.cgroup
            .as_ref()
            .filter(|_| self.cgroup_in_use.load(Ordering::Relaxed))
    }

    /// `RUNBOOK_RUN=<tag>`.
    pub(crate) fn mark(&self) -> &[u8] {
        &self.mark
    }

    /// runbook, when it is the one looking.
    pub(crate) fn root(&self) -> Option<i32> {
        self.root
    }

    /// Whether `pid` is one runbook started itself, whose owner waits for it.
    pub(crate) fn is_waited_for(&self, pid: i32) -> bool {
        self.started
            .lock()
            .is_ok_and(|s| s.iter().any(|&p| p as i32 == pid))
    }

    /// Whether `pid` is runbook's own (runbook itself, its guardian), never the run's.
    pub(crate) fn is_own(&self, pid: i32) -> bool {
        pid == std::process::id() as i32 || Some(pid) == self.guardian_pid
    }

    /// The run is over and its processes ended: lets the guardian go and removes the cgroup.
    pub(crate) fn close(&self) {
        if let Some(guardian) = self.guardian.lock().ok().and_then(|mut g| g.take()) {
            guardian.dismiss();
        }
        for cgroup in [&self.cgroup, &self.observers_cgroup].into_iter().flatten() {
            let Err(e) = cgroup.remove() else { continue };
            print::warn(format_args!(
                "cannot remove the run's cgroup {}: {e}",
                cgroup.dir().display()
            ));
        }
    }
}

fn observers_tag(tag: &str) -> String {
    format!("{tag}.observers")
}

fn mark(tag: &str) -> Vec<u8> {
    format!("{MARK_VAR}={tag}").into_bytes()
}
