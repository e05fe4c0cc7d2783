//! A turn that stalled because the agent's tools were refused permission (a headless agent
//! cannot ask): runbook says what was refused and, with `--retry-denied`, gives the session one
//! more pass that names it and asks the agent to reach the goal without it. One pass a run, out
//! of the repair budget.

use super::session::Session;
use crate::agent::Permissions;
use crate::event::{Denial, EventKind, Outcome};
use crate::lifecycle::Ending;

/// How many refused operations the pass's prompt names.
const PROMPT_DENIALS: usize = 20;

/// Whether the run's one pass is still to be had.
pub(super) struct Stalls {
    pass_left: bool,
}

impl Stalls {
    pub(super) fn new(retry_denied: bool) -> Self {
        Self {
            pass_left: retry_denied,
        }
    }

    /// How the turn that ended with `ending` leaves the run: as it ended, unless it stalled on
    /// refused permissions and the pass is left, when the pass's ending.
    pub(super) async fn after(
        &mut self,
        session: &mut Session<'_>,
        ending: Ending,
        permissions: Permissions,
    ) -> Ending {
        // A turn that failed or was stopped did not stall: it ended for its own reasons.
        if !matches!(ending.outcome, Outcome::Completed | Outcome::Truncated) {
            return ending;
        }
        let denied = session.denied_in_last_turn();
        if denied.is_empty() {
            return ending;
        }
        let retry = std::mem::take(&mut self.pass_left);
        let budget = session.setup.repair.budget_usd;
        session.emit(EventKind::PermissionStalled {
            denied: denied.clone(),
            retry,
            budget_usd: budget.filter(|_| retry),
        });
        if !retry {
            return ending;
        }
        let totals = |s: &Session<'_>| s.supervisor.dispatch.totals().known_cost();
        let before = totals(session);
        let limits = session.supervisor.limits;
        if let Some(budget) = budget {
            session.supervisor.limits.max_cost_usd = Some(before + budget);
            session.supervisor.budget_name = "the repair budget, ending at";
        }
        let pass = session.turn(&prompt(&denied), permissions).await;
        session.supervisor.limits = limits;
        session.supervisor.budget_name = "--max-cost";
        session.stall_spent_usd += totals(session) - before;
        pass
    }
}

/// The pass's prompt: what was refused, and what to do without it.
fn prompt(denied: &[Denial]) -> String {
    let mut out = String::from(
        "Your last turn stopped short because these operations were refused permission. You run \
         unattended, so nobody can grant them now:\n",
    );
    for d in denied.iter().take(PROMPT_DENIALS) {
        out.push_str(&format!("- {}: {}\n", d.tool, d.detail));
    }
    if denied.len() > PROMPT_DENIALS {
        out.push_str(&format!("- and {} more\n", denied.len() - PROMPT_DENIALS));
    }
    out.push_str(
        "\nReach the goal of your task without them, using only what you are allowed to do. If \
         it cannot be reached without them, stop and say exactly what you need (which tool, on \
         what, and why). If the goal is already reached, say so in one sentence.",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_names_every_refused_operation_up_to_a_limit() {
        let denied: Vec<Denial> = (0..25)
            .map(|i| Denial {
                tool: "bash".into(),
                detail: format!("touch f{i}"),
            })
            .collect();
        let p = prompt(&denied[..2]);
        assert!(p.contains("- bash: touch f0\n- bash: touch f1\n"), "{p}");
        assert!(p.contains("say exactly what you need"), "{p}");
        let p = prompt(&denied);
        assert!(p.contains("touch f19") && !p.contains("touch f20"), "{p}");
        assert!(p.contains("- and 5 more"), "{p}");
    }
}
