//! The batch's loop: starts queued tasks as the scheduler allows, reads what each says, shows
//! it, passes Ctrl-C on (the first stops each run, which writes its receipt; a second kills),
//! and keeps `batch.json` up to date.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::{mpsc, watch};

use super::child::Said;
use super::drive::{self, Ctx, Msg};
use super::plan::{self, Common, Job};
use super::record::{self, BatchRecord, TaskOutcome, TaskRecord};
use super::schedule::{self, Candidate, Hold, Next, Scheduler, Stopped};
use super::view::{self, View};
use super::worktree::{DiffStat, Ending};
use crate::event::{EventKind, millis};
use crate::exit::ExitStatus;
use crate::stats::RunStats;

/// How the batch runs.
pub(super) struct Settings {
    pub jobs: usize,
    pub max_fail: Option<usize>,
    pub budget: Option<f64>,
    pub json: bool,
    pub color: bool,
    pub junit: Option<PathBuf>,
    pub tasks_label: String,
    /// It runs one task a scheduler named by its index: the exit code is that run's.
    pub one_index: bool,
}

/// One task as the loop follows it.
struct Task {
    job: Job,
    record: TaskRecord,
    started: Option<Instant>,
    stats: RunStats,
    /// The tool it runs now, since when.
    tool: Option<(String, Instant)>,
    doing: &'static str,
    /// What the budget holds for it while it runs.
    cap: f64,
    pid: Option<u32>,
    /// Its run is over: its place among the `-j` and what the budget held for it are free.
    released: bool,
    /// Its worktree is settled: nothing more will happen to it.
    settled: bool,
}

struct Batch<'a> {
    ctx: Arc<Ctx>,
    common: &'a Common<'a>,
    settings: Settings,
    tasks: Vec<Task>,
    queue: Vec<usize>,
    sched: Scheduler,
    /// Which task, its agent's first, holds the agent's other tasks until it speaks.
    starting_by: std::collections::HashMap<String, usize>,
    /// The agents a task of which has spoken.
    warmed: std::collections::HashSet<String>,
    /// Which task's 429 holds each agent.
    limited_by: std::collections::HashMap<String, usize>,
    level: u8,
    cancel: watch::Sender<u8>,
    tx: mpsc::UnboundedSender<Msg>,
    view: View,
    /// The hold last told, so that it is told once.
    told: Option<Hold>,
    held: Option<String>,
    started_at: SystemTime,
    t0: Instant,
}

/// Runs the batch to its end; its exit status.
pub(super) async fn run(
    ctx: Drive,
    jobs: Vec<Job>,
    common: &Common<'_>,
    settings: Settings,
) -> anyhow::Result<ExitStatus> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (cancel, _) = watch::channel(0u8);
    let live = !settings.json
        && crate::term::TermEnv::detect().display(false, false) == crate::term::Display::Live;
    let view = View::new(live, settings.color);
    let tasks = jobs.into_iter().map(new_task).collect::<Vec<_>>();
    let mut b = Batch {
        queue: (0..tasks.len()).collect(),
        sched: Scheduler {
            jobs: settings.jobs,
            max_fail: settings.max_fail,
            budget: settings.budget,
            ..Scheduler::default()
        },
        ctx: Arc::new(ctx),
        common,
        settings,
        tasks,
        limited_by: std::collections::HashMap::new(),
        level: 0,
        cancel,
        tx,
        view,
        told: None,
        held: None,
        starting_by: std::collections::HashMap::new(),
        warmed: std::collections::HashSet::new(),
        started_at: SystemTime::now(),
        t0: Instant::now(),
    };
    b.begin()?;
    let mut signals = [
        signal(SignalKind::interrupt())?,
        signal(SignalKind::terminate())?,
        signal(SignalKind::hangup())?,
    ];
    let mut tick = tokio::time::interval(Duration::from_millis(if live { 500 } else { 2000 }));
    loop {
        if b.level == 0 {
            b.launch();
        }
        if b.tasks.iter().all(|t| t.settled) {
            break;
        }
        let [int, term, hup] = &mut signals;
        tokio::select! {
            msg = rx.recv() => match msg {
                Some(msg) => b.handle(msg),
                None => break,
            },
            _ = tick.tick() => b.redraw(),
            _ = int.recv() => b.interrupt(),
            _ = term.recv() => b.interrupt(),
            _ = hup.recv() => b.interrupt(),
        }
    }
    b.end()
}

/// The context the drivers share.
pub(super) type Drive = Ctx;

fn new_task(job: Job) -> Task {
    Task {
        record: TaskRecord {
            task: job.name.clone(),
            task_id: job.task.clone(),
            agent: job.agent_name.clone(),
            run_id: None,
            run_dir: None,
            outcome: TaskOutcome::Queued,
            message: String::new(),
            duration_ms: 0,
            cost_usd: None,
            known_cost_usd: 0.0,
            branch: None,
            commit: None,
            worktree: None,
            diff: DiffStat::default(),
        },
        job,
        started: None,
        stats: RunStats::default(),
        tool: None,
        doing: "starting",
        cap: 0.0,
        pid: None,
        released: false,
        settled: false,
    }
}

impl Batch<'_> {
    /// Writes the first record and says what starts.
    fn begin(&mut self) -> anyhow::Result<()> {
        self.write_record(None)?;
        let n = self.tasks.len();
        if self.settings.json {
            self.json(&serde_json::json!({
                "type": "batch.started",
                "batch_id": self.ctx.batch_id,
                "tasks": n,
                "base_commit": self.ctx.repo.base,
                "record": self.ctx.batch_dir.join(record::RECORD),
            }));
        } else {
            let budget = self
                .settings
                .budget
                .map(|b| format!(", budget {}", crate::format::money(b)))
                .unwrap_or_default();
            let base = &self.ctx.repo.base[..self.ctx.repo.base.len().min(12)];
            self.view.line(&format!(
                "batch {}: {} from {}, {} at once{budget} (base {base})",
                self.ctx.batch_id,
                crate::format::plural(n as u64, "task"),
                self.settings.tasks_label,
                self.settings.jobs,
            ));
        }
        Ok(())
    }

    /// Starts every queued task the scheduler allows now.
    fn launch(&mut self) {
        loop {
            let candidates: Vec<Candidate<'_>> = self
                .queue
                .iter()
                .map(|&i| Candidate {
                    agent: &self.tasks[i].job.agent_name,
                    max_cost: self.tasks[i].job.max_cost,
                })
                .collect();
            match self.sched.next(&candidates, Instant::now()) {
                Next::Start(at, cap) => {
                    let i = self.queue.remove(at);
                    self.start(i, cap);
                    self.told = None;
                }
                Next::Wait(hold) => {
                    self.tell_hold(hold);
                    return;
                }
                Next::Stop(why) => {
                    self.stop_queue(why);
                    return;
                }
            }
        }
    }

    fn start(&mut self, i: usize, cap: Option<f64>) {
        // The batch uploads each run (`Job::upload`), so the run itself never does.
        let mut extra = vec!["--upload=".to_owned()];
        if let Some(c) = cap {
            extra.extend(["--max-cost".to_owned(), format!("{c:.9}")]);
        }
        let task = &mut self.tasks[i];
        let argv = plan::argv(&task.job, self.common, &self.ctx.repo.root, &extra);
        task.cap = task.job.max_cost.or(cap).unwrap_or(0.0);
        task.started = Some(Instant::now());
        task.record.outcome = TaskOutcome::Running;
        self.sched.running.push(task.cap);
        if !self.warmed.contains(&task.job.agent_name) {
            let agent = task.job.agent_name.clone();
            let until = Instant::now() + schedule::START_HOLD;
            self.sched.starting.insert(agent.clone(), until);
            self.starting_by.insert(agent, i);
        }
        if !self.view.is_live() && !self.settings.json {
            let line = format!(
                "{} {} ({})",
                self.view.styles.accent.apply_to("START"),
                task.job.name,
                task.job.agent_name
            );
            self.view.line(&line);
        }
        let (job, ctx, tx, cancel) = (
            task.job.clone(),
            self.ctx.clone(),
            self.tx.clone(),
            self.cancel.subscribe(),
        );
        tokio::spawn(drive::drive(i, job, argv, ctx, tx, cancel));
        // Recorded as running, so that `status BATCH` from another terminal shows it.
        if let Err(e) = self.write_record(None) {
            crate::term::print::warn(format_args!("cannot update the batch record: {e:#}"));
        }
    }

    /// Says once why the queue waits.
    fn tell_hold(&mut self, hold: Hold) {
        if hold == Hold::Full || self.told.as_ref() == Some(&hold) {
            return;
        }
        let queued = self.queue.len();
        let text = match &hold {
            Hold::Budget {
                spent,
                reserved,
                next,
            } => format!(
                "budget: {} spent and {} held by the running tasks; the next task ({}) could cross {}: holding {}",
                crate::format::money(*spent),
                crate::format::money(*reserved),
                next.map_or(
                    "no cap of its own: it waits to run alone".to_owned(),
                    |c| format!("cap {}", crate::format::money(c))
                ),
                crate::format::money(self.settings.budget.unwrap_or(0.0)),
                crate::format::plural(queued as u64, "queued task"),
            ),
            Hold::RateLimited(agent) => {
                format!("{agent} is being rate-limited: its queued tasks wait")
            }
            Hold::Full => String::new(),
        };
        self.say_held(&text, "held");
        self.told = Some(hold);
    }

    /// No queued task will ever start: each ends `not_started`, and the batch says why.
    fn stop_queue(&mut self, why: Stopped) {
        if self.queue.is_empty() {
            return;
        }
        let text = match why {
            Stopped::Budget => {
                let (known, incomplete) = self.spent();
                let unknown = if incomplete {
                    " (a task whose cost is not known counts as its whole cap)"
                } else {
                    ""
                };
                format!(
                    "budget: {} spent of {}{unknown}; no queued task fits what is left: {} not started",
                    crate::format::money(known),
                    crate::format::money(self.settings.budget.unwrap_or(0.0)),
                    crate::format::plural(self.queue.len() as u64, "task"),
                )
            }
            Stopped::MaxFail => format!(
                "{} did not complete (--max-fail {}): {} not started",
                crate::format::plural(self.sched.failed as u64, "task"),
                self.sched.max_fail.unwrap_or(0),
                crate::format::plural(self.queue.len() as u64, "task"),
            ),
        };
        self.say_held(&text, "stopped");
        let message = text.split(':').next().unwrap_or_default().to_owned();
        self.skip_queue(&format!("not started: {message}"));
        self.held = Some(text);
    }

    fn say_held(&mut self, text: &str, kind: &str) {
        if self.settings.json {
            self.json(&serde_json::json!({"type": format!("batch.{kind}"), "message": text}));
        } else {
            let line = format!("{} {text}", self.view.styles.warn.apply_to(" HOLD"));
            self.view.line(&line);
        }
    }

    /// Every queued task ends `not_started` with `message`, recorded in one write of the
    /// record whatever their number.
    fn skip_queue(&mut self, message: &str) {
        let skipped = std::mem::take(&mut self.queue);
        for &i in &skipped {
            let task = &mut self.tasks[i];
            task.record.outcome = TaskOutcome::NotStarted;
            task.record.message = message.to_owned();
            // It never ran: it cost nothing, and that is known.
            task.record.cost_usd = Some(0.0);
            task.settled = true;
        }
        self.finished(&skipped);
    }

    fn handle(&mut self, msg: Msg) {
        match msg {
            Msg::Setup(i) => self.tasks[i].doing = "setup",
            Msg::SetupFailed(i, why) => {
                self.tasks[i].record.outcome = TaskOutcome::SetupFailed;
                self.tasks[i].record.message = why;
            }
            Msg::NotSpawned(i, why) => {
                self.tasks[i].record.outcome = TaskOutcome::Error;
                self.tasks[i].record.message = why;
            }
            Msg::Child(i, said) => self.said(i, said),
            Msg::Finished(i, ending) => self.settle(i, ending),
        }
    }

    fn said(&mut self, i: usize, said: Said) {
        match said {
            Said::Spawned(pid) => {
                self.tasks[i].pid = Some(pid);
                self.tasks[i].doing = "starting";
                for _ in 0..self.level.min(2) {
                    signal_run(pid, nix::sys::signal::Signal::SIGINT);
                }
            }
            Said::Event(event, line) => {
                self.event(i, &event);
                if self.settings.json {
                    self.tagged(i, &line);
                }
            }
            Said::Receipt(receipt, line) => {
                let r = &mut self.tasks[i].record;
                r.outcome = receipt.outcome.into();
                r.message = if receipt.outcome == crate::event::Outcome::Completed {
                    String::new()
                } else {
                    receipt.message.clone()
                };
                r.duration_ms = receipt.duration_ms;
                r.cost_usd = receipt.cost.usd;
                r.known_cost_usd = receipt.cost.known_usd;
                r.run_id = Some(receipt.run_id.clone());
                r.run_dir = Some(receipt.run_dir.clone());
                if self.settings.json {
                    self.tagged(i, &line);
                }
                // Its run is over: what is left of its process is the last sweep for anything
                // it started.
                self.release(i);
            }
            Said::Exited(code, tail) => {
                let r = &mut self.tasks[i].record;
                if !r.outcome.ended() {
                    r.outcome = TaskOutcome::Error;
                    let last = tail.lines().rev().find(|l| !l.trim().is_empty());
                    r.message = match (last, code) {
                        (Some(line), _) => line.trim().to_owned(),
                        (None, Some(c)) => format!("its run exited {c} without a receipt"),
                        (None, None) => "its run was killed before it wrote a receipt".into(),
                    };
                }
                self.tasks[i].pid = None;
                self.release(i);
            }
        }
    }

    /// What an event of task `i` changes: its run, its tool, its cost, a rate limit.
    fn event(&mut self, i: usize, event: &crate::event::Event) {
        let now = Instant::now();
        let task = &mut self.tasks[i];
        task.stats.observe(event);
        task.doing = "working";
        let agent = task.job.agent_name.clone();
        if self.starting_by.get(&agent) == Some(&i) && spoke(&event.kind) {
            self.starting_by.remove(&agent);
            self.sched.starting.remove(&agent);
            self.warmed.insert(agent.clone());
        }
        match &event.kind {
            EventKind::RunStarted(info) => {
                task.record.run_id = Some(info.run_id.clone());
                task.record.run_dir = Some(info.run_dir.clone());
            }
            EventKind::ToolStarted(tool) => task.tool = Some((tool.name.clone(), now)),
            EventKind::ToolCompleted(_) => task.tool = None,
            EventKind::ProviderRetry(retry) if is_rate_limit(retry.status, &retry.message) => {
                let hold = retry
                    .delay_ms
                    .map_or(schedule::RATE_LIMIT_HOLD, Duration::from_millis);
                self.sched
                    .limited
                    .insert(agent.clone(), now + hold.max(Duration::from_secs(1)));
                self.limited_by.insert(agent, i);
            }
            EventKind::ProviderError(error) if is_rate_limit(error.status, &error.message) => {
                self.sched
                    .limited
                    .insert(agent.clone(), now + schedule::RATE_LIMIT_HOLD);
                self.limited_by.insert(agent, i);
            }
            EventKind::Text { .. } | EventKind::StepFinished(_) | EventKind::AgentResult(_)
                if self.limited_by.get(&agent) == Some(&i) =>
            {
                self.limited_by.remove(&agent);
                self.sched.limited.remove(&agent);
            }
            _ => {}
        }
    }

    /// Task `i`'s worktree is settled: it is done.
    fn settle(&mut self, i: usize, ending: Ending) {
        let task = &mut self.tasks[i];
        task.settled = true;
        let r = &mut task.record;
        if !r.outcome.ended() {
            r.outcome = TaskOutcome::Interrupted;
            r.message = "interrupted before its run started".to_owned();
        }
        if r.duration_ms == 0 {
            r.duration_ms = task.started.map_or(0, |s| millis(s.elapsed()));
        }
        if r.run_id.is_none() {
            // Its run never started (its worktree or setup failed, or the batch was
            // interrupted first): it cost nothing, and that is known.
            r.cost_usd = Some(0.0);
        }
        r.branch = ending.branch;
        r.commit = ending.commit;
        r.diff = ending.diff;
        r.worktree = ending.worktree.map(|w| w.display().to_string());
        if let Some(problem) = ending.problem {
            if r.message.is_empty() {
                r.message = problem;
            } else {
                r.message = format!("{}; {problem}", r.message);
            }
        }
        self.release(i);
        self.finished(&[i]);
    }

    /// Task `i`'s run is over (or never started): its place among the `-j`, what the budget
    /// held for it and any hold it had on its agent go back to the scheduler, once. A queued
    /// task starts at once, while the ended one's worktree is still being committed and removed.
    fn release(&mut self, i: usize) {
        let task = &mut self.tasks[i];
        if task.released {
            return;
        }
        task.released = true;
        let r = &task.record;
        if let Some(at) = self.sched.running.iter().position(|c| *c == task.cap) {
            self.sched.running.remove(at);
        }
        // A run that never started cost nothing; a cost not known counts as all the task could
        // spend.
        self.sched.spent += match r.run_id {
            None => 0.0,
            Some(_) => r.cost_usd.unwrap_or(r.known_cost_usd.max(task.cap)),
        };
        if r.outcome != TaskOutcome::Completed {
            self.sched.failed += 1;
        }
        let agent = task.job.agent_name.clone();
        if self.limited_by.get(&agent) == Some(&i) {
            self.limited_by.remove(&agent);
            self.sched.limited.remove(&agent);
        }
        if self.starting_by.get(&agent) == Some(&i) {
            self.starting_by.remove(&agent);
            self.sched.starting.remove(&agent);
        }
    }

    /// Shows and records that the tasks `ended` ended: a line each, and one write of the record.
    fn finished(&mut self, ended: &[usize]) {
        let mut lines = Vec::new();
        for &i in ended {
            let agent = &self.tasks[i].job.agent_name;
            if self.starting_by.get(agent) == Some(&i) {
                self.sched.starting.remove(agent);
                self.starting_by.remove(agent);
            }
            let record = &self.tasks[i].record;
            if self.settings.json {
                let mut value = serde_json::to_value(record).unwrap_or_default();
                value["type"] = "batch.task.finished".into();
                self.json(&value);
            } else {
                lines.push(view::finished_line(record, &self.view.styles));
            }
        }
        if let Err(e) = self.write_record(None) {
            crate::term::print::warn(format_args!("cannot update the batch record: {e:#}"));
        }
        // The tasks' lines, and the rows without them, in one write.
        self.redraw_under(&lines);
    }

    /// Redraws the running tasks' rows (at a terminal).
    fn redraw(&mut self) {
        self.redraw_under(&[]);
    }

    /// Shows `lines` for good, and redraws the running tasks' rows below them (at a terminal).
    fn redraw_under(&mut self, lines: &[String]) {
        if !self.view.is_live() {
            for text in lines {
                self.view.line(text);
            }
            return;
        }
        let now = Instant::now();
        let rows: Vec<String> = self
            .tasks
            .iter()
            .filter(|t| t.record.outcome == TaskOutcome::Running && !t.settled)
            .map(|t| {
                let doing = match &t.tool {
                    Some((tool, since)) => format!(
                        "{tool} {}",
                        crate::format::running_for(now.saturating_duration_since(*since))
                    ),
                    None => t.doing.to_owned(),
                };
                view::row(
                    &view::Row {
                        name: &t.job.name,
                        agent: &t.job.agent_name,
                        doing,
                        elapsed: t.started.map_or(Duration::ZERO, |s| now - s),
                        cost: t.stats.cost(),
                        known_cost: t.stats.known_cost(),
                    },
                    &self.view.styles,
                )
            })
            .collect();
        let footer = view::footer(&self.footer());
        self.view.rows(lines, rows, footer);
    }

    fn footer(&self) -> view::Footer {
        let running = self
            .tasks
            .iter()
            .filter(|t| t.started.is_some() && !t.settled);
        let live: f64 = running.clone().map(|t| t.stats.known_cost()).sum();
        let (spent, incomplete) = self.spent();
        view::Footer {
            running: running.count(),
            queued: self.queue.len(),
            done: self.tasks.iter().filter(|t| t.settled).count(),
            spent: spent + live,
            spent_incomplete: incomplete
                || self
                    .tasks
                    .iter()
                    .any(|t| !t.settled && t.stats.cost_incomplete()),
            budget: self.settings.budget,
        }
    }

    /// What the ended tasks cost: the known part, and whether some of it is not known.
    fn spent(&self) -> (f64, bool) {
        let ended = self
            .tasks
            .iter()
            .filter(|t| t.settled && t.started.is_some());
        let known = ended.clone().map(|t| t.record.known_cost_usd).sum();
        (known, ended.clone().any(|t| t.record.cost_usd.is_none()))
    }

    /// Ctrl-C, SIGTERM or SIGHUP: the first stops every run (each writes its receipt) and
    /// starts nothing more; a second has each run kill its agent; a third kills the runs.
    fn interrupt(&mut self) {
        self.level = self.level.saturating_add(1);
        let _ = self.cancel.send(self.level);
        self.skip_queue("not started: the batch was interrupted");
        let sig = if self.level <= 2 {
            nix::sys::signal::Signal::SIGINT
        } else {
            nix::sys::signal::Signal::SIGKILL
        };
        let running = self.tasks.iter().filter_map(|t| t.pid).collect::<Vec<_>>();
        for pid in &running {
            signal_run(*pid, sig);
        }
        let text = match self.level {
            1 => format!(
                "interrupted: stopping {} (each writes its receipt); again to kill",
                crate::format::plural(running.len() as u64, "running task")
            ),
            2 => "interrupted again: the runs kill their agents".to_owned(),
            _ => "interrupted again: killing the runs".to_owned(),
        };
        self.say_held(&text, "interrupted");
    }

    /// Writes the last record, the JUnit report and the summary; the exit status.
    fn end(mut self) -> anyhow::Result<ExitStatus> {
        self.view.done();
        // Gone when no worktree was kept.
        let _ = std::fs::remove_dir(self.ctx.batch_dir.join("worktrees"));
        let record = self.record(Some(SystemTime::now()));
        let written = record.write(&self.ctx.batch_dir);
        if let Some(path) = &self.settings.junit {
            let xml = record::junit(&record);
            let masked = crate::redact::current();
            crate::redact::write::atomically(path, "xml.tmp", &masked.mask(xml.as_bytes()))
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        }
        if self.settings.json {
            self.json(&record);
        } else {
            self.summary(&record);
        }
        written.map_err(|e| anyhow::anyhow!("cannot write the batch record: {e}"))?;
        if self.settings.one_index
            && let [task] = record.tasks.as_slice()
        {
            return Ok(super::index::exit_status(task.outcome));
        }
        Ok(match record.outcome.as_str() {
            "completed" => ExitStatus::Completed,
            "interrupted" => ExitStatus::Interrupted,
            _ => ExitStatus::AgentFailed,
        })
    }

    fn summary(&mut self, record: &BatchRecord) {
        let line = view::summary_line(record, &self.view.styles);
        self.view.line(&line);
        let kept = record.tasks.iter().filter(|t| t.branch.is_some()).count();
        let branches = if kept == 1 { "branch" } else { "branches" };
        self.view.line(&format!(
            "record: {} · {kept} {branches} kept (runbook/{}/…)",
            self.ctx.batch_dir.join(record::RECORD).display(),
            record.batch_id
        ));
    }

    fn record(&self, ended_at: Option<SystemTime>) -> BatchRecord {
        let known: f64 = self.tasks.iter().map(|t| t.record.known_cost_usd).sum();
        let started = self.tasks.iter().filter(|t| t.started.is_some());
        let all_known = started.clone().all(|t| t.record.cost_usd.is_some());
        let outcome = if ended_at.is_none() {
            "running"
        } else if self.level > 0 {
            "interrupted"
        } else if self
            .tasks
            .iter()
            .all(|t| t.record.outcome == TaskOutcome::Completed)
        {
            "completed"
        } else {
            "failed"
        };
        BatchRecord {
            kind: "batch".into(),
            schema_version: record::BATCH_SCHEMA_VERSION,
            batch_id: self.ctx.batch_id.clone(),
            tasks_file: self.common.tasks_path.display().to_string(),
            repo: self.ctx.repo.root.display().to_string(),
            base_commit: self.ctx.repo.base.clone(),
            started_at: self.started_at,
            ended_at,
            duration_ms: millis(self.t0.elapsed()),
            outcome: outcome.into(),
            budget_usd: self.settings.budget,
            cost_usd: all_known.then_some(known),
            known_cost_usd: known,
            pid: ended_at.is_none().then(std::process::id),
            held: self.held.clone(),
            tasks: self.tasks.iter().map(|t| t.record.clone()).collect(),
        }
    }

    fn write_record(&self, ended_at: Option<SystemTime>) -> anyhow::Result<()> {
        self.record(ended_at)
            .write(&self.ctx.batch_dir)
            .map_err(|e| anyhow::anyhow!("cannot write the batch record: {e}"))
    }

    /// A line of task `i`'s run, tagged with the task and its run.
    fn tagged(&self, i: usize, line: &str) {
        let r = &self.tasks[i].record;
        let Some(rest) = line.strip_prefix('{') else {
            return;
        };
        let task = serde_json::to_string(&r.task).unwrap_or_default();
        let run = serde_json::to_string(&r.run_id).unwrap_or_default();
        let sep = if rest.trim_start().starts_with('}') {
            ""
        } else {
            ","
        };
        self.json_line(&format!("{{\"task\":{task},\"run_id\":{run}{sep}{rest}"));
    }

    fn json(&self, value: &impl serde::Serialize) {
        if let Ok(line) = serde_json::to_string(value) {
            self.json_line(&line);
        }
    }

    fn json_line(&self, line: &str) {
        use std::io::Write as _;
        let mut out = crate::term::out::json_stdout();
        let _ = out.write_all(line.as_bytes());
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }
}

/// Whether a provider's failure is a rate limit: HTTP 429, or its words say so.
/// Whether the agent itself said this (its state is set up by then), not runbook about it.
fn spoke(kind: &EventKind) -> bool {
    !matches!(
        kind,
        EventKind::RunStarted(_)
            | EventKind::TurnStarted { .. }
            | EventKind::AgentVersion { .. }
            | EventKind::AgentSandbox { .. }
    )
}

fn is_rate_limit(status: Option<u16>, message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    status == Some(429) || lower.contains("rate limit") || lower.contains("rate_limit")
}

fn signal_run(pid: u32, sig: nix::sys::signal::Signal) {
    if let Ok(pid) = i32::try_from(pid) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig);
    }
}
