//! `--plan`: read-only planning turns until the plan is approved (by the person at the terminal,
//! or automatically), then the execution turn in the same session.

use std::path::{Path, PathBuf};

use super::session::Session;
use crate::agent::Permissions;
use crate::event::{DecidedBy, Decision, EventKind, Outcome, PlanDecision};
use crate::lifecycle::Ending;
use crate::plan;

/// How `--plan` goes.
pub(super) struct PlanMode {
    /// Stop once the plan is made.
    pub plan_only: bool,
    /// Ask the person at the terminal (else execute without asking).
    pub ask: bool,
    pub max_revisions: u32,
}

/// Plans, asks, revises as asked, and executes the approved plan.
pub(super) async fn planned(
    session: &mut Session<'_>,
    task: &str,
    permissions: Permissions,
    mode: &PlanMode,
) -> Ending {
    let before = plan::Snapshot::take(&session.setup.cwd);
    let mut prompt = plan::plan_prompt(task);
    let mut revision = 0;
    loop {
        let ending = session.planning_turn(&prompt).await;
        if !ending.is_completed() {
            return ending;
        }
        let text = match proposal(session, &before, &ending) {
            Ok(text) => text,
            Err(refused) => return refused,
        };
        session.emit(EventKind::PlanProposed { revision, text });
        let (decision, feedback) = decide(session, mode, revision).await;
        match decision {
            Decision::Stop => {
                let message = "the plan is ready (--plan-only)";
                return Ending::new(Outcome::Completed, message, ending.exit);
            }
            Decision::Abort => {
                let message = "the plan was not approved; nothing was executed";
                return Ending::new(Outcome::Aborted, message, ending.exit);
            }
            Decision::Execute => break,
            Decision::Revise => {
                revision += 1;
                prompt = plan::revise_prompt(feedback.as_deref().unwrap_or_default());
            }
        }
    }
    session.turn(&plan::execute_prompt(task), permissions).await
}

/// The changed paths (relative to the agent's working directory) that are not runbook's own
/// doing: its run directory, `--events-to`, and the files its observers hold open.
fn not_runbooks(session: &Session<'_>, changed: Vec<PathBuf>) -> Vec<PathBuf> {
    if changed.is_empty() {
        return changed;
    }
    let setup = session.setup;
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let cwd = canonical(&setup.cwd);
    let runs = canonical(&setup.runs_dir);
    let mut own: Vec<PathBuf> = session.supervisor.scope.helpers_files();
    own.extend(setup.events_to.as_deref().map(canonical));
    changed
        .into_iter()
        .filter(|rel| {
            let path = cwd.join(rel);
            !path.starts_with(&runs) && !own.contains(&path)
        })
        .collect()
}

/// The plan a planning turn ended with; refused when the turn changed files or gave no plan.
fn proposal(
    session: &Session<'_>,
    before: &plan::Snapshot,
    ending: &Ending,
) -> Result<String, Ending> {
    let changed = before.changes(&plan::Snapshot::take(&session.setup.cwd));
    let changed = not_runbooks(session, changed);
    if !changed.is_empty() {
        let list: Vec<String> = changed.iter().map(|p| p.display().to_string()).collect();
        let message = format!(
            "the agent changed files while planning ({}); nothing was executed",
            list.join(", ")
        );
        return Err(Ending::new(Outcome::AgentError, message, ending.exit));
    }
    let text = session.final_text();
    let text = text.trim();
    if text.is_empty() {
        let message = "the planning turn ended without a plan (no final text)";
        return Err(Ending::new(Outcome::AgentError, message, ending.exit));
    }
    Ok(text.to_owned())
}

/// What is done with the plan: decided by `--plan-only`, by the person at the terminal, or
/// automatically; said in a `plan.decided` event.
async fn decide(
    session: &mut Session<'_>,
    mode: &PlanMode,
    revision: u32,
) -> (Decision, Option<String>) {
    let (answer, by) = if mode.plan_only {
        (None, DecidedBy::Auto)
    } else if mode.ask {
        let left = mode.max_revisions.saturating_sub(revision);
        (Some(ask(session, left).await), DecidedBy::Person)
    } else {
        (Some(plan::Answer::Execute), DecidedBy::Auto)
    };
    let (decision, feedback) = match answer {
        None => (Decision::Stop, None),
        Some(plan::Answer::Execute) => (Decision::Execute, None),
        Some(plan::Answer::Abort) => (Decision::Abort, None),
        Some(plan::Answer::Revise(text)) => (Decision::Revise, Some(text)),
    };
    session.emit(EventKind::PlanDecided(PlanDecision {
        decision,
        by,
        feedback: feedback.clone(),
    }));
    (decision, feedback)
}

/// Asks at the terminal, with the live view paused. Ctrl-C (a key in raw mode, or a signal) and
/// a terminal that cannot be read both mean abort.
async fn ask(session: &mut Session<'_>, revisions_left: u32) -> plan::Answer {
    let supervisor = &mut session.supervisor;
    supervisor.dispatch.pause(true);
    let saved = plan::TermState::save();
    let question =
        tokio::task::spawn_blocking(move || plan::ask(&crate::term::out::keys(), revisions_left));
    let answer = tokio::select! {
        answer = question => answer.ok().and_then(Result::ok).unwrap_or(plan::Answer::Abort),
        _ = supervisor.signals.recv() => plan::Answer::Abort,
    };
    saved.restore();
    supervisor.dispatch.pause(false);
    answer
}

/// Whether a person can be asked: stdin and stderr are a terminal, and this is not CI.
pub(super) fn prompt_possible() -> bool {
    use std::io::IsTerminal as _;
    std::io::stdin().is_terminal()
        && crate::term::out::are_terminals().0
        && std::env::var_os("CI").is_none_or(|v| v.is_empty())
}
