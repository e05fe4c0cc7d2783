//! `RUNBOOK_*` variables that misspell a key's (`RUNBOOK_INACTIVTY_TIMEOUT`): runbook reads only
//! the variables it knows, so such a one would be ignored without a word.

use super::keys::{self, agent_name, agents};
use super::suggest;

/// A warning for each variable among `names` that is not one of runbook's but is close to the
/// variable of a key, naming that one. Other `RUNBOOK_*` variables are left alone: runbook
/// sets some for the programs it starts, and other tools may have theirs.
pub(crate) fn misspelt(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let known: Vec<String> = keys::all()
        .filter(|k| k.env)
        .flat_map(|k| {
            if k.per_agent {
                agents()
                    .filter_map(|a| k.env_var(Some(agent_name(a))))
                    .collect()
            } else {
                k.env_var(None).into_iter().collect::<Vec<_>>()
            }
        })
        .collect();
    let suffixes: Vec<&str> = known.iter().map(|v| &v["RUNBOOK_".len()..]).collect();
    names
        .into_iter()
        .filter(|name| !known.contains(name))
        .filter_map(|name| {
            let suffix = name.strip_prefix("RUNBOOK_")?;
            let meant = suggest::near(suffix, suffixes.iter().copied())?;
            Some(format!(
                "{name} is not a runbook variable, so it is ignored; did you mean RUNBOOK_{meant}?"
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_variable_names_the_one_meant_and_runbooks_others_are_left_alone() {
        let warned = misspelt(
            [
                "RUNBOOK_INACTIVTY_TIMEOUT",
                "RUNBOOK_CLAUD_BIN",
                "RUNBOOK_MAXCOST",
                "RUNBOOK_MAX_COST",
                "RUNBOOK_RUN",
                "RUNBOOK_TRUST",
                "RUNBOOK_NO_CGROUP",
                "RUNBOOK_RESUME_SESSION",
                "RUNBOOK_BLESS",
                "RUNBOOK_RECORD_DIR",
                "RUNBOOK_RECORD_CLAUDE",
                "RUNBOOK_RECORD_ONLY",
                "RUNBOOK_CHROMIUM",
                "RUNBOOK_DRIFT_REPORT",
                "RUNBOOK_SKIP_REAL_AGENTS",
                "RUNBOOK_TEST_CLAUDE",
                "RUNBOOK_TEST_CODEX",
                "RUNBOOK_TEST_OPENCODE",
                "RUNBOOK_MEASURE_STREAM",
                "PATH",
            ]
            .map(String::from),
        );
        assert_eq!(
            warned,
            [
                "RUNBOOK_INACTIVTY_TIMEOUT is not a runbook variable, so it is ignored; did you mean RUNBOOK_INACTIVITY_TIMEOUT?",
                "RUNBOOK_CLAUD_BIN is not a runbook variable, so it is ignored; did you mean RUNBOOK_CLAUDE_BIN?",
                "RUNBOOK_MAXCOST is not a runbook variable, so it is ignored; did you mean RUNBOOK_MAX_COST?",
            ]
        );
    }
}
