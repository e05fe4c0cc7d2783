//! The run's warnings: what in the agent's output a reader of its totals must know without it
//! stopping the run (a cost that could not be used, a token count that could not be read, work
//! after the agent's final word), each said in one sentence, the same in the receipt and on the
//! terminal.

use crate::event::{CostIssue, EventKind, Late, PriceBasis};
use crate::format::money;

/// The warnings an event calls for, in order. `step` is the number of the step a
/// `step.finished` ends (1 for the first).
pub(crate) fn of(kind: &EventKind, step: u32, mut warn: impl FnMut(String)) {
    match kind {
        EventKind::StepFinished(usage) => {
            let what = format!("step {step}");
            if let Some(issue) = usage.rejected() {
                warn(rejected(&what, issue, usage.usable_cost()));
            }
            if usage.tokens_unreadable {
                warn(unreadable_tokens(&what));
            }
        }
        EventKind::AgentResult(result) => {
            let what = "the agent's result";
            if let Some(issue) = result.rejected() {
                warn(rejected(what, issue, result.usable_cost()));
            }
            if result.tokens_unreadable {
                warn(unreadable_tokens(what));
            }
        }
        EventKind::AfterFinalWord { what, detail } => warn(after_final_word(*what, detail)),
        EventKind::AgentVersion {
            version,
            tested_with,
            ..
        } if !tested_with.is_empty() => warn(untested(version, tested_with)),
        EventKind::ModelAnnounced { model, price } => match price {
            PriceBasis::Conservative => {
                let provider = crate::prices::provider_of(model).unwrap_or("its provider");
                warn(format!(
                    "{model} is not in runbook's price table: unless the agent reports its own \
                     cost, it is priced at the highest price runbook knows for a {provider} model"
                ));
            }
            PriceBasis::Unknown => warn(format!(
                "{model} is not in runbook's price table and its provider is unknown: its cost \
                 stays unknown unless the agent reports it (add it under [prices] in the \
                 configuration)"
            )),
            PriceBasis::Table | PriceBasis::User => {}
        },
        _ => {}
    }
}

/// `step 2: the agent reported a negative cost; runbook estimated $0.0031 from its tokens`.
fn rejected(what: &str, issue: CostIssue, estimate: Option<f64>) -> String {
    let reported = issue.describe();
    match estimate {
        Some(cost) => format!(
            "{what}: the agent reported {reported}; runbook counted {} instead, estimated from the tokens",
            money(cost)
        ),
        None => format!(
            "{what}: the agent reported {reported}, and the model has no price to estimate it from: the run's total cost is incomplete"
        ),
    }
}

/// `runbook was not tested with this agent version (codex-cli 0.170.0; tested: 0.169.0): …`;
/// a major version none of the tested ones has is said to be one.
fn untested(version: &str, tested_with: &[String]) -> String {
    let new_major = major(version)
        .is_some_and(|m| tested_with.iter().all(|t| major(t).is_some_and(|t| t != m)));
    format!(
        "runbook was not tested with this agent version ({}; tested: {}){}: some of its output may be misread; `runbook doctor` says more",
        version.trim(),
        tested_with.join(", "),
        if new_major {
            ", a major version it has never run"
        } else {
            ""
        }
    )
}

/// The major version in a version's text (`2` of `opencode v2.1.2`): the first number of its
/// first word made of digits and dots.
fn major(text: &str) -> Option<&str> {
    text.split(|c: char| c.is_whitespace() || "(),".contains(c))
        .map(|w| w.strip_prefix('v').unwrap_or(w))
        .find(|w| {
            w.contains('.')
                && w.starts_with(|c: char| c.is_ascii_digit())
                && w.chars().all(|c| c.is_ascii_digit() || c == '.')
        })
        .and_then(|w| w.split('.').next())
}

fn unreadable_tokens(what: &str) -> String {
    format!("{what}: a token count the agent reported is not a whole number; it was counted as 0")
}

/// `after its final word the agent went on: a tool call (bash rm -rf build)`.
fn after_final_word(what: Late, detail: &str) -> String {
    if detail.is_empty() {
        format!("after its final word the agent went on: {}", what.as_str())
    } else {
        format!(
            "after its final word the agent went on: {} ({detail})",
            what.as_str()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{StepUsage, Tokens};

    fn warnings(kind: &EventKind) -> Vec<String> {
        let mut out = Vec::new();
        of(kind, 2, |w| out.push(w));
        out
    }

    #[test]
    fn a_rejected_cost_says_what_was_counted_instead() {
        let step = |cost_usd, cost_rejected, tokens_unreadable| {
            EventKind::StepFinished(StepUsage {
                id: None,
                reason: "stop".into(),
                tokens: Tokens::default(),
                cost_usd,
                cost_source: None,
                cost_rejected,
                tokens_unreadable,
            })
        };
        assert_eq!(
            warnings(&step(Some(0.0031), Some(CostIssue::Negative), false)),
            [
                "step 2: the agent reported a negative cost; runbook counted $0.0031 instead, estimated from the tokens"
            ]
        );
        let blind = warnings(&step(None, Some(CostIssue::Infinite), true));
        assert_eq!(blind.len(), 2);
        assert!(
            blind[0].ends_with("the run's total cost is incomplete"),
            "{blind:?}"
        );
        // A cost given as unusable by an agent runbook does not price itself.
        assert_eq!(
            warnings(&step(Some(-1.0), None, false)),
            [
                "step 2: the agent reported a negative cost, and the model has no price to estimate it from: the run's total cost is incomplete"
            ]
        );
        assert!(warnings(&step(Some(0.5), None, false)).is_empty());
    }
}
