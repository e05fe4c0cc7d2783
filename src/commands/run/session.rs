//! The turns of one run: each is the same agent, the first starting its session and every other
//! continuing it.

use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::setup::Setup;
use crate::agent::{Invocation, ParseContext, Permissions};
use crate::event::{CheckResult, Denial, EventKind, ExitInfo, Outcome, Stuck, Turn, TurnKind};
use crate::lifecycle::Ending;
use crate::supervisor::check::{self, Check};
use crate::supervisor::{Supervisor, TurnSpec};
use crate::term::print;

/// What a turn is for, which says whose answer it gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// The task: its prompt, a `--then` prompt, the execution of a plan, the pass after a
    /// permission stall.
    Task,
    /// A read-only planning turn: its answer is a plan, not work done.
    Plan,
    /// A repair attempt of failed checks.
    Repair,
    /// The question of `--summary`.
    Summary,
}

/// The answers of the run's turns, untrimmed.
#[derive(Debug, Default)]
pub(super) struct Answers {
    /// The last answer of a turn of the task.
    pub task: Option<String>,
    /// Each repair attempt's answer, in order.
    pub repairs: Vec<String>,
    /// The agent's answer to `--summary`, when it gave one.
    pub asked: Option<String>,
}

pub(super) struct Session<'a> {
    pub setup: &'a Setup,
    pub supervisor: Supervisor<'a>,
    /// The configured variables for the agent.
    env: Vec<(String, String)>,
    /// What the adapter's parser is told, the same for every turn.
    parse: ParseContext,
    turns: u32,
    /// How many denials the run had when the last turn started.
    denials_before_turn: usize,
    /// What the pass after a permission stall spent, out of the repair budget.
    pub stall_spent_usd: f64,
    /// What the turns answered, for the run's summary.
    pub answers: Answers,
    /// Whether a person at the terminal answers an ACP agent's permission requests.
    pub ask_person: bool,
    /// Whether the run's one nudge (`--stuck nudge`) was given, or found impossible.
    nudged: bool,
    /// The adapter of the agent's binary: the configured agent's, or its other generation's
    /// once its version was asked before the first turn.
    adapter: &'a dyn crate::agent::Adapter,
}

impl<'a> Session<'a> {
    pub(super) fn new(setup: &'a Setup, supervisor: Supervisor<'a>) -> Self {
        Self {
            env: setup.agent_env.pairs(),
            parse: setup.parse_context(),
            setup,
            supervisor,
            turns: 0,
            denials_before_turn: 0,
            stall_spent_usd: 0.0,
            answers: Answers::default(),
            ask_person: false,
            nudged: false,
            adapter: setup.agent.adapter,
        }
    }

    /// Runs the next turn of the task: the first starts the agent's session, the others resume
    /// it. Its answer is the task's, unless a later turn of the task answers.
    pub(super) async fn turn(&mut self, prompt: &str, permissions: Permissions) -> Ending {
        self.turn_as(Role::Task, prompt, permissions).await
    }

    /// A read-only planning turn of `--plan`.
    pub(super) async fn planning_turn(&mut self, prompt: &str) -> Ending {
        self.turn_as(Role::Plan, prompt, Permissions::ReadOnly)
            .await
    }

    /// Runs the next turn as `role`, and keeps its answer as that role's.
    pub(super) async fn turn_as(
        &mut self,
        role: Role,
        prompt: &str,
        permissions: Permissions,
    ) -> Ending {
        let mut ending = self.run_turn(prompt, permissions, role == Role::Plan).await;
        if let Some(nudge) = self.nudge(&ending) {
            ending = self.run_turn(&nudge, permissions, role == Role::Plan).await;
        }
        let answer = self.final_text();
        match role {
            Role::Task => self.answers.task = Some(answer),
            Role::Repair => self.answers.repairs.push(answer),
            Role::Plan | Role::Summary => {}
        }
        ending
    }

    /// The prompt that nudges the agent after a turn stopped for going round in circles
    /// (`--stuck nudge`), once a run, told as `stuck.nudged`; `None` when there is none to give.
    /// A session that cannot go on is stopped as with `--stuck stop`, and that is said.
    fn nudge(&mut self, ending: &Ending) -> Option<String> {
        let wanted = self.setup.stuck == crate::stuck::Mode::Nudge;
        if ending.outcome != Outcome::Stuck || !wanted || self.nudged {
            return None;
        }
        self.nudged = true;
        let stuck = self.supervisor.dispatch.totals().stuck.clone()?;
        if let Some(why) = self.cannot_go_on() {
            print::warn(format_args!(
                "cannot nudge the agent: {why}; it was stopped as with --stuck stop"
            ));
            return None;
        }
        let prompt = crate::stuck::nudge::prompt(&stuck);
        self.emit(EventKind::StuckNudged(Box::new(Stuck {
            nudged: true,
            ..stuck
        })));
        Some(prompt)
    }

    /// Why the agent's session cannot go on with another prompt, if it cannot.
    fn cannot_go_on(&self) -> Option<&'static str> {
        if self.setup.agent.adapter.speaks_acp() {
            let gone = self.supervisor.live.is_none();
            gone.then_some("its process ended with the stopped turn, and its session with it")
        } else {
            let none = self.supervisor.dispatch.totals().session_id.is_none();
            none.then_some("it announced no session to continue")
        }
    }

    async fn run_turn(&mut self, prompt: &str, permissions: Permissions, planning: bool) -> Ending {
        let index = self.turns;
        self.turns += 1;
        self.denials_before_turn = self.supervisor.dispatch.totals().permission_denials.len();
        let resume = match index {
            0 => None,
            _ => match self.supervisor.dispatch.totals().session_id.clone() {
                Some(id) => Some(id),
                None => {
                    return Ending::new(
                        Outcome::AgentError,
                        "the agent announced no session, so there is none to continue",
                        ExitInfo::default(),
                    );
                }
            },
        };
        // An agent whose generations print differently is asked its version first.
        let mut version = None;
        if index == 0 && self.adapter.has_generations() {
            let program = &self.setup.agent.program;
            let asked = self.supervisor.ask_version(program, self.adapter).await;
            if let Some(other) = self.adapter.generation(program, asked.as_deref()) {
                self.adapter = other;
            }
            version = Some(asked);
        }
        let agent = &self.setup.agent;
        let adapter = self.adapter;
        let inv = Invocation {
            prompt,
            model: self.setup.model.as_deref(),
            extra_args: &agent.extra_args,
            resume_session: resume.as_deref(),
            permissions,
        };
        let kind = if index == 0 {
            TurnKind::Start
        } else {
            TurnKind::Resume
        };
        let spec = TurnSpec {
            program: &agent.program,
            args: adapter.args(&inv),
            cwd: &self.setup.cwd,
            adapter,
            parse: self.parse.clone(),
            // The configured variables, then what the invocation itself needs.
            env: self.env.iter().cloned().chain(adapter.env(&inv)).collect(),
            turn: Turn { index, kind },
            probe_version: index == 0 && version.is_none() && !adapter.version_args().is_empty(),
            version: version.flatten(),
            planning,
            prompt,
            permissions,
            ask_person: self.ask_person,
        };
        self.supervisor.run_turn(spec).await
    }

    /// Ends the agent kept between turns (ACP), once there are no more: its exit, if it had
    /// one to end.
    pub(super) async fn close(&mut self) -> Option<ExitInfo> {
        self.supervisor.close().await
    }

    /// The operations refused permission in the last turn (the first hundred of the run).
    pub(super) fn denied_in_last_turn(&self) -> Vec<Denial> {
        // A refusal that was a person's own answer is their choice, not a stall.
        let totals = self.supervisor.dispatch.totals();
        totals
            .permission_denials
            .iter()
            .zip(&totals.denied_by_person)
            .skip(self.denials_before_turn)
            .filter(|(_, by_person)| !**by_person)
            .map(|(denial, _)| denial.clone())
            .collect()
    }

    /// The final text of the last turn: its answer.
    pub(super) fn final_text(&self) -> String {
        self.supervisor.dispatch.totals().final_text.clone()
    }

    pub(super) fn emit(&mut self, kind: EventKind) {
        self.supervisor.dispatch.emit_now(SystemTime::now(), kind);
    }

    /// Runs the project's checks one after another in the agent's working directory, each
    /// output whole in `checks/<attempt>/<name>.log`. How the run ends: as `ending` when they
    /// all pass, `checks_failed` when one does not, `interrupted` on Ctrl-C (the check running
    /// is ended with its tree).
    /// Why the check `name` of `attempt`, just ended, could not run at all, if it could not.
    fn could_not_run(&self, attempt: u32, name: &str) -> Option<String> {
        let totals = self.supervisor.dispatch.totals();
        let result = totals
            .checks
            .iter()
            .rev()
            .find(|c| c.attempt == attempt && c.name == name)?;
        result.could_not_run()
    }

    pub(super) async fn checks(
        &mut self,
        checks: &[Check],
        attempt: u32,
        ending: Ending,
    ) -> Ending {
        let dir = match self.checks_dir(attempt) {
            Ok(Some(dir)) => dir,
            Ok(None) => return ending,
            Err(message) => return Ending::new(Outcome::StorageError, message, ending.exit),
        };
        let mut failed = Vec::new();
        let mut unrunnable: Option<(&str, String)> = None;
        for check in checks {
            if self
                .supervisor
                .deadline
                .is_some_and(|d| tokio::time::Instant::now() >= d)
            {
                return Ending::new(Outcome::TimedOut, timed_out(&check.name), ending.exit);
            }
            let passed = match self.one_check(check, attempt, &dir, ending.exit).await {
                Ok(passed) => passed,
                Err(stopped) => return stopped,
            };
            if let Some(why) = self.could_not_run(attempt, &check.name) {
                unrunnable.get_or_insert((check.name.as_str(), why));
            } else if !passed {
                failed.push(check.name.as_str());
            }
        }
        verdict(ending, unrunnable, &failed)
    }

    /// The directory of this attempt's check logs (`checks/<attempt>/`, only the user's); `None`
    /// without a run directory.
    fn checks_dir(&self, attempt: u32) -> Result<Option<PathBuf>, String> {
        let totals = self.supervisor.dispatch.totals();
        let Some(run_dir) = totals.info.as_ref().map(|i| PathBuf::from(&i.run_dir)) else {
            return Ok(None);
        };
        let dir = run_dir.join("checks").join(attempt.to_string());
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(Some(dir))
    }

    /// Runs one check with its log in `dir`, and tells how it went; `Err` with the run's ending
    /// when Ctrl-C or the run's --timeout ended it (with its tree).
    async fn one_check(
        &mut self,
        check: &Check,
        attempt: u32,
        dir: &Path,
        exit: ExitInfo,
    ) -> Result<bool, Ending> {
        // A check's command may spell out a secret: what is told of it is masked.
        let redactor = crate::redact::current();
        let command = redactor.str(&check.command).into_owned();
        self.emit(EventKind::CheckStarted {
            attempt,
            name: check.name.clone(),
            command: command.clone(),
        });
        let log = dir.join(format!("{}.log", check.name));
        let deadline = self.supervisor.deadline;
        let mut stopped = None;
        let ran = {
            let signals = &mut *self.supervisor.signals;
            let stop = async {
                let until = async {
                    match deadline {
                        Some(d) => tokio::time::sleep_until(d).await,
                        None => std::future::pending().await,
                    }
                };
                stopped = Some(tokio::select! {
                    signal = signals.recv() => Some(signal),
                    () = until => None,
                });
            };
            let (cwd, grace) = (&self.setup.cwd, self.setup.limits.kill_grace);
            check::run(check, cwd, &log, &self.supervisor.scope, grace, stop).await
        };
        self.emit(EventKind::CheckFinished(CheckResult {
            attempt,
            name: check.name.clone(),
            command,
            passed: ran.passed,
            exit: ran.exit,
            timed_out: ran.timed_out,
            duration_ms: crate::event::millis(ran.duration),
            output_bytes: ran.output_bytes,
            tail: ran.tail,
            log: log.display().to_string(),
            error: ran.error.map(|e| redactor.str(&e).into_owned()),
        }));
        match stopped {
            Some(Some(signal)) => Err(Ending::new(Outcome::Interrupted, signal.message(), exit)),
            Some(None) => Err(Ending::new(Outcome::TimedOut, timed_out(&check.name), exit)),
            None => Ok(ran.passed),
        }
    }
}

/// Why the run ends when the run's --timeout came during (or before) a check.
fn timed_out(name: &str) -> String {
    format!("the run reached its --timeout during the check `{name}`")
}

/// How the run ends after its checks: a check that could not run is the thing to fix first, said
/// before any failure; else the checks that failed; else as the task did.
fn verdict(ending: Ending, unrunnable: Option<(&str, String)>, failed: &[&str]) -> Ending {
    if let Some((name, why)) = unrunnable {
        let mut message = format!("the check `{name}` could not run ({why}): fix the check");
        if !failed.is_empty() {
            message.push_str(&format!("; also failed: {}", failed.join(", ")));
        }
        return Ending::new(Outcome::ChecksFailed, message, ending.exit);
    }
    match failed {
        [] => ending,
        [one] => Ending::new(
            Outcome::ChecksFailed,
            format!("the task completed, but the check `{one}` failed"),
            ending.exit,
        ),
        many => Ending::new(
            Outcome::ChecksFailed,
            format!(
                "the task completed, but {} checks failed: {}",
                many.len(),
                many.join(", ")
            ),
            ending.exit,
        ),
    }
}
