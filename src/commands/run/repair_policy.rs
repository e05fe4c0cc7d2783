//! How a run's checks may be repaired, as setup decides it from the configuration: how many
//! attempts, what they may spend, and the user's prompt for them. The repair loop
//! (`super::repair`) carries it out.

/// How the checks may be repaired.
#[derive(Debug, Clone)]
pub(super) struct Repair {
    /// At most this many attempts (0: none).
    pub attempts: u32,
    /// What all attempts together may spend; `None`: no cap.
    pub budget_usd: Option<f64>,
    /// The user's repair prompt; `None`: runbook's own.
    pub template: Option<Template>,
}

impl Repair {
    /// With `--max-cost B`, repair may spend `--repair-budget`, or the larger of 0.2 × B and $1.
    pub(super) fn new(
        attempts: u32,
        max_cost: Option<f64>,
        budget: Option<f64>,
        template: Option<Template>,
    ) -> Self {
        Self {
            attempts,
            budget_usd: budget.or_else(|| max_cost.map(|b| (0.2 * b).max(1.0))),
            template,
        }
    }
}

/// A repair prompt of the user's: `{failures}` is where the failing checks go; `{attempt}` and
/// `{attempts}` are the attempt's number and how many there may be.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Template(String);

impl Template {
    const FAILURES: &'static str = "{failures}";

    /// runbook's own repair prompt.
    pub(super) fn runbooks() -> Self {
        Self(DEFAULT_PROMPT.to_owned())
    }

    /// The template, unless it has no place for the failures (then the agent would not know
    /// what to fix).
    pub(super) fn new(text: String) -> Result<Self, String> {
        if text.contains(Self::FAILURES) {
            Ok(Self(text))
        } else {
            Err(format!(
                "the repair prompt has no {} for the failing checks; add it where they should go",
                Self::FAILURES
            ))
        }
    }

    pub(super) fn fill(&self, failures: &str, attempt: u32, attempts: u32) -> String {
        self.0
            .replace("{attempts}", &attempts.to_string())
            .replace("{attempt}", &attempt.to_string())
            .replace(Self::FAILURES, failures)
    }
}

/// runbook's own repair prompt.
const DEFAULT_PROMPT: &str = "The project's checks fail after your change. Fix the code so that \
     they pass, without weakening, skipping or deleting the checks. When you are done, say so in \
     one sentence.\n{failures}";
