//! Plan before spending (`runbook run --plan`): what the agent is asked in each phase, the check
//! that planning changed nothing, and the question put to the person at the terminal.

mod ask;
mod file;
mod snapshot;

pub(crate) use ask::{Answer, TermState, ask};
pub(crate) use file::PlanFile;
pub(crate) use snapshot::Snapshot;

/// The planning turn's prompt: look, change nothing, answer with a plan.
pub(crate) fn plan_prompt(task: &str) -> String {
    format!(
        "You are planning, not doing. Read the code and the repository as much as you need, but \
         change nothing: do not edit, create or delete files, and run no command that changes \
         anything.\n\n\
         Answer with a plan in Markdown and nothing else, with these sections:\n\
         ## Files: each file to create or change, and the change in each\n\
         ## Testing: how to test the change\n\
         ## Risks: risks and edge cases\n\n\
         The task:\n{task}"
    )
}

/// The prompt of a revision: the person's feedback on the last plan.
pub(crate) fn revise_prompt(feedback: &str) -> String {
    format!(
        "Revise your plan with this feedback. Still change nothing, and answer with the whole \
         revised plan in Markdown, in the same form.\n\nFeedback:\n{feedback}"
    )
}

/// The execution turn's prompt, in the same session as the approved plan.
pub(crate) fn execute_prompt(task: &str) -> String {
    format!(
        "The plan is approved. Carry it out now: make the changes, then test them as the plan \
         says.\n\nThe task was:\n{task}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prompt_carries_what_the_agent_needs() {
        let plan = plan_prompt("fix the flaky test");
        assert!(plan.ends_with("fix the flaky test"));
        for section in ["## Files", "## Testing", "## Risks", "change nothing"] {
            assert!(plan.contains(section), "{section}");
        }
        assert!(revise_prompt("smaller please").ends_with("smaller please"));
        assert!(execute_prompt("fix it").contains("approved"));
    }
}
