//! What the whole run did, for its end, `status`, `report` and the receipt: the task's answer
//! trimmed to a few sentences, then what each repair changed; with `--summary` the agent's
//! answer to one more turn that asks for one; and for a run that did not complete, how it ended
//! in runbook's words instead of the agent's.

use super::session::{Answers, Role, Session};
use crate::agent::Permissions;
use crate::event::{EventKind, Outcome};
use crate::format::plural;
use crate::lifecycle::Ending;
use crate::stats::RunStats;

/// The most sentences of the final message a summary keeps.
const SENTENCES: usize = 4;
/// The most characters a summary keeps.
const MAX_CHARS: usize = 600;

/// What `--summary` asks.
const PROMPT: &str = "Summarize what you did in this session in 2 to 4 plain sentences for a \
     pull request description: what changed, why, and anything left undone. No headings, no \
     lists, no code.";

/// With `ask`, asks the session for a summary (when the work was done, or done but not checked
/// clean) and keeps its answer. How the run ends: as `ending`, unless it was stopped while the
/// agent was asked.
pub(super) async fn summarized(
    session: &mut Session<'_>,
    ask: bool,
    permissions: Permissions,
    ending: Ending,
) -> Ending {
    let worth_asking = matches!(ending.outcome, Outcome::Completed | Outcome::ChecksFailed);
    if ask && worth_asking {
        let asked = session.turn_as(Role::Summary, PROMPT, permissions).await;
        if asked.is_completed() {
            session.answers.asked = Some(session.final_text());
        } else if matches!(asked.outcome, Outcome::Interrupted | Outcome::TimedOut) {
            return asked;
        }
        // Else the work stands: the summary is made of the turns' answers.
    }
    ending
}

/// The run's `summary` event, once it is known how the run ended: `None` when there is nothing
/// to say (a completed run whose agent said nothing).
pub(super) fn told(
    answers: &Answers,
    ending: &Ending,
    totals: &RunStats,
    plan_only: bool,
) -> Option<EventKind> {
    let trimmed = |t: &Option<String>| t.as_deref().map(trim).filter(|t| !t.is_empty());
    let task = trimmed(&answers.task);
    let repairs: Vec<String> = answers.repairs.iter().map(|r| trim(r)).collect();
    let asked = trimmed(&answers.asked);
    let verdict = if ending.is_completed() && !plan_only {
        None
    } else {
        Some(verdict(ending, totals, plan_only))
    };
    let text = match (&verdict, &asked) {
        (Some(v), Some(a)) => {
            let stop = if v.ends_with('.') { "" } else { "." };
            format!("{v}{stop} The agent's summary: {a}")
        }
        (Some(v), None) => v.clone(),
        (None, Some(a)) => a.clone(),
        (None, None) => work(task.as_deref(), &repairs),
    };
    if text.is_empty() {
        return None;
    }
    Some(EventKind::Summary {
        text,
        asked: asked.is_some(),
        task,
        repairs: if repairs.iter().all(String::is_empty) {
            Vec::new()
        } else {
            repairs
        },
        verdict,
    })
}

/// The task's answer, then each repair's, labelled: `Repair: …`, or `Repair 1: …` and on when
/// there were several.
fn work(task: Option<&str>, repairs: &[String]) -> String {
    let mut parts: Vec<String> = task.map(str::to_owned).into_iter().collect();
    for (n, answer) in (1..).zip(repairs) {
        if answer.is_empty() {
            continue;
        }
        parts.push(match repairs.len() {
            1 => format!("Repair: {answer}"),
            _ => format!("Repair {n}: {answer}"),
        });
    }
    parts.join(" ")
}

/// How a run that did not complete ended, in runbook's words: `The plan was not approved;
/// nothing was run.`, `Stopped: budget reached after 3 steps.`, `Checks failed after 2 repair
/// attempts: test`.
fn verdict(ending: &Ending, totals: &RunStats, plan_only: bool) -> String {
    let message = ending.message.trim_end_matches('.');
    match ending.outcome {
        Outcome::Completed if plan_only => {
            "The plan is ready (--plan-only); nothing was run.".to_owned()
        }
        Outcome::Aborted => "The plan was not approved; nothing was run.".to_owned(),
        Outcome::BudgetExceeded => match totals.steps() {
            Some(n) => format!(
                "Stopped: budget reached after {}.",
                plural(u64::from(n), "step")
            ),
            None => "Stopped: budget reached (steps unknown).".to_owned(),
        },
        Outcome::ChecksFailed => checks_failed(totals, message),
        Outcome::Stuck => format!("Stopped, going round in circles: {message}."),
        Outcome::Hung
        | Outcome::TimedOut
        | Outcome::Interrupted
        | Outcome::StorageError
        | Outcome::Completed => format!("Stopped: {message}."),
        Outcome::AgentError
        | Outcome::Truncated
        | Outcome::Killed
        | Outcome::Running
        | Outcome::Abandoned => format!("Failed: {message}."),
    }
}

/// `Checks failed after 2 repair attempts: test`, `Checks failed: lint, test`, or the check
/// that could not run.
fn checks_failed(totals: &RunStats, message: &str) -> String {
    let last = totals.checks.iter().map(|c| c.attempt).max();
    let failed: Vec<_> = totals
        .checks
        .iter()
        .filter(|c| Some(c.attempt) == last && !c.passed)
        .collect();
    if let Some((c, why)) = failed
        .iter()
        .find_map(|c| c.could_not_run().map(|why| (c, why)))
    {
        return format!("Checks failed: {} could not run ({why}).", c.name);
    }
    let names: Vec<&str> = failed.iter().map(|c| c.name.as_str()).collect();
    if names.is_empty() {
        return format!("Checks failed: {message}.");
    }
    let attempts = totals.repair.as_ref().map_or(0, |r| r.attempts.len());
    match attempts {
        0 => format!("Checks failed: {}", names.join(", ")),
        n => format!(
            "Checks failed after {}: {}",
            plural(n as u64, "repair attempt"),
            names.join(", ")
        ),
    }
}

/// The first few sentences of `text`, on one line, at most [`MAX_CHARS`].
pub(crate) fn trim(text: &str) -> String {
    // Headings and code fences are layout, not sentences; list markers go too.
    let words: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#') && !l.starts_with("```"))
        .flat_map(str::split_whitespace)
        .filter(|w| !w.chars().all(|c| matches!(c, '-' | '*' | '>' | '`')))
        .collect();
    let mut out = String::new();
    let mut sentences = 0;
    for word in words {
        if out.len() + word.len() + 1 > MAX_CHARS {
            out.push('…');
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
        if word.ends_with(['.', '!', '?']) {
            sentences += 1;
            if sentences == SENTENCES {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{CheckResult, ExitInfo};
    use crate::stats::Repair;

    fn answers(task: &str, repairs: &[&str]) -> Answers {
        Answers {
            task: Some(task.to_owned()),
            repairs: repairs.iter().map(|r| (*r).to_owned()).collect(),
            asked: None,
        }
    }

    fn text(told: Option<EventKind>) -> (String, Option<String>) {
        match told {
            Some(EventKind::Summary { text, verdict, .. }) => (text, verdict),
            other => panic!("{other:?}"),
        }
    }

    fn ended(outcome: Outcome, message: &str) -> Ending {
        Ending::new(outcome, message, ExitInfo::default())
    }

    /// Totals whose checks `test` and `lint` ran after the task and after each of `attempts`
    /// repairs, `test` failing every time.
    fn checked(attempts: u32) -> RunStats {
        let mut totals = RunStats::default();
        for attempt in 0..=attempts {
            for (name, passed) in [("test", false), ("lint", true)] {
                totals.checks.push(CheckResult {
                    attempt,
                    name: name.to_owned(),
                    command: name.to_owned(),
                    passed,
                    exit: ExitInfo {
                        code: Some(u8::from(!passed).into()),
                        signal: None,
                    },
                    timed_out: false,
                    duration_ms: 1,
                    output_bytes: 1,
                    tail: Vec::new(),
                    log: String::new(),
                    error: None,
                });
            }
        }
        if attempts > 0 {
            totals.repair = Some(Repair {
                attempts: (1..=attempts).map(|a| (a, a)).collect(),
                ..Repair::default()
            });
        }
        totals
    }

    #[test]
    fn a_completed_run_tells_the_tasks_answer_then_each_repair_labelled() {
        let done = ended(Outcome::Completed, "");
        let totals = RunStats::default();
        let one = told(
            &answers("## Done\n\nAdded add.", &["Fixed it."]),
            &done,
            &totals,
            false,
        );
        assert_eq!(text(one), ("Added add. Repair: Fixed it.".to_owned(), None));
        let two = answers("Added add.", &["Tried.", "", "Fixed it."]);
        assert_eq!(
            text(told(&two, &done, &totals, false)).0,
            "Added add. Repair 1: Tried. Repair 3: Fixed it."
        );
        let mut asked = answers("Added add.", &["Fixed it."]);
        asked.asked = Some("I added add and fixed it.".to_owned());
        assert_eq!(
            text(told(&asked, &done, &totals, false)).0,
            "I added add and fixed it."
        );
        let silent = Answers::default();
        assert!(told(&silent, &done, &totals, false).is_none());
    }

    #[test]
    fn a_run_that_did_not_complete_says_how_it_ended_not_what_the_agent_said() {
        let gave_up = answers(
            "Added add.",
            &["Nothing more to do.", "Nothing more to do."],
        );
        let failed = ended(
            Outcome::ChecksFailed,
            "the task completed, but the check `test` failed",
        );
        let (said, verdict) = text(told(&gave_up, &failed, &checked(2), false));
        assert_eq!(said, "Checks failed after 2 repair attempts: test");
        assert_eq!(verdict.as_deref(), Some(said.as_str()));
        assert_eq!(
            text(told(&gave_up, &failed, &checked(0), false)).0,
            "Checks failed: test"
        );
        let mut asked = gave_up;
        asked.asked = Some("I could not fix it.".to_owned());
        assert_eq!(
            text(told(&asked, &failed, &checked(1), false)).0,
            "Checks failed after 1 repair attempt: test. The agent's summary: I could not fix it."
        );

        let plan = Answers::default();
        let aborted = ended(
            Outcome::Aborted,
            "the plan was not approved; nothing was executed",
        );
        let totals = RunStats::default();
        assert_eq!(
            text(told(&plan, &aborted, &totals, false)).0,
            "The plan was not approved; nothing was run."
        );
        let ready = ended(Outcome::Completed, "the plan is ready (--plan-only)");
        assert_eq!(
            text(told(&plan, &ready, &totals, true)).0,
            "The plan is ready (--plan-only); nothing was run."
        );
        let spent = answers("Everything works now.", &[]);
        let budget = ended(
            Outcome::BudgetExceeded,
            "the run's cost crossed --max-cost $1.00",
        );
        let mut three = RunStats::default();
        three.steps_finished = 3;
        assert_eq!(
            text(told(&spent, &budget, &three, false)).0,
            "Stopped: budget reached after 3 steps."
        );
        let hung = ended(Outcome::Hung, "no output and no activity for 5m");
        assert_eq!(
            text(told(&spent, &hung, &three, false)).0,
            "Stopped: no output and no activity for 5m."
        );
        let error = ended(Outcome::AgentError, "the agent failed with exit 1");
        assert_eq!(
            text(told(&spent, &error, &three, false)).0,
            "Failed: the agent failed with exit 1."
        );
    }

    #[test]
    fn a_summary_is_a_few_sentences_on_one_line() {
        assert_eq!(
            trim("## Done\n\n- Fixed the race.\n- Added a test.\nIt passes. Then more. And more."),
            "Fixed the race. Added a test. It passes. Then more."
        );
        let long = "word ".repeat(500);
        let t = trim(&long);
        assert!(
            t.len() <= MAX_CHARS + '…'.len_utf8() && t.ends_with('…'),
            "{t}"
        );
        assert_eq!(trim("  \n "), "");
    }
}
