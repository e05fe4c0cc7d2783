//! The agent CLI versions runbook was tested with: the one place that says which releases the
//! conformance and live suites run against, read by anything that warns about an untested version.
// `runbook doctor` and the run's untested-version warning read this table; until they land only the
// tests do.
#![allow(dead_code)]

use super::AgentKind;
use crate::event::Fidelity;

/// Each agent and the versions of its CLI that runbook's conformance suite (recordings under
/// `fixtures/`) and live suite (the real CLI against a fake provider) run against. The first
/// version of each list is the one `.ci/install-agents` pins as the default install.
// One agent a line: `.ci/drift-check` reads each agent's row as one line.
#[rustfmt::skip]
pub(crate) const TESTED: &[(AgentKind, &[&str])] = &[
    (AgentKind::Opencode, &["1.18.33", "2.1.2", "2.2.5"]),
    (AgentKind::Claude, &["2.1.197", "2.1.330", "2.1.332", "2.1.337"]),
    (AgentKind::Codex, &["0.169.0", "0.171.0"]),
];

/// The versions of `agent` runbook was tested with, oldest first.
pub(crate) fn tested(agent: AgentKind) -> &'static [&'static str] {
    TESTED
        .iter()
        .find(|(kind, _)| *kind == agent)
        .map_or(&[], |(_, versions)| versions)
}

/// Whether `version` of `agent` is one runbook was tested with. `version` may be the agent's whole
/// `--version` output (`2.1.197 (Claude Code)`, `codex-cli 0.169.0`): the first word that looks
/// like a version number is the one compared.
pub(crate) fn is_tested(agent: AgentKind, version: &str) -> bool {
    version_number(version).is_some_and(|v| tested(agent).contains(&v))
}

/// Whether `version` of `agent` is newer than every version of its major version runbook was
/// tested with (of a major version none was tested with: newer than every tested one): this
/// runbook cannot know it (a newer runbook may). Compared number by number (`2.1.332` is newer
/// than `2.1.330`, `0.171.0` than `0.169.0`; `1.19.0` of OpenCode, whose 1.x and 2.x are tested,
/// than `1.18.33`); `None` when `version` holds no version number.
pub(crate) fn is_newer_than_tested(agent: AgentKind, version: &str) -> Option<bool> {
    let given = numbers(version_number(version)?)?;
    let newest = numbers(newest_tested_like(agent, version)?)?;
    Some(given > newest)
}

/// Whether runbook was tested with any release of `version`'s major version (`2.x` for
/// `2.2.5`); `None` when `version` holds no version number.
pub(crate) fn is_tested_major(agent: AgentKind, version: &str) -> Option<bool> {
    let line = major_line(version_number(version)?)?;
    Some(tested(agent).iter().any(|v| major_line(v) == Some(line)))
}

/// The newest tested version of `version`'s major version, or when there is none the newest
/// tested version of all.
pub(crate) fn newest_tested_like(agent: AgentKind, version: &str) -> Option<&'static str> {
    let line = version_number(version).and_then(major_line);
    tested(agent)
        .iter()
        .copied()
        .filter(|v| line.is_some() && major_line(v) == line)
        .max_by_key(|v| numbers(v))
        .or_else(|| newest_tested(agent))
}

/// The newest version of `agent` runbook was tested with.
pub(crate) fn newest_tested(agent: AgentKind) -> Option<&'static str> {
    tested(agent).iter().copied().max_by_key(|v| numbers(v))
}

/// A version's major number: `2` of `2.1.3` (as `.ci/drift-check` reads it, `0.x` releases
/// are one line).
fn major_line(version: &str) -> Option<u64> {
    numbers(version)?.first().copied()
}

/// The major version in `version` (an agent's `--version` output): `2` of `opencode v2.1.2`.
pub(crate) fn major(version: &str) -> Option<u64> {
    version_number(version)?.split('.').next()?.parse().ok()
}

/// How runbook stands to `version` of `agent`: the versions it was tested with when `version` is
/// not one of them (else none), and whether it was tested with it.
pub(crate) fn judge(agent: AgentKind, version: &str) -> (Vec<String>, Fidelity) {
    if version_number(version).is_none() {
        return (Vec::new(), Fidelity::Unknown);
    }
    if is_tested(agent, version) {
        return (Vec::new(), Fidelity::Tested);
    }
    let tested_with = tested(agent).iter().map(|v| (*v).to_owned()).collect();
    (tested_with, Fidelity::Untested)
}

/// `2.1.332` as `[2, 1, 332]`; `None` when a part is not a number.
fn numbers(version: &str) -> Option<Vec<u64>> {
    version.split('.').map(|n| n.parse().ok()).collect()
}

/// The version number in an agent's `--version` output: its first word made of digits and dots
/// (with at least one dot), a leading `v` dropped.
pub(crate) fn version_number(output: &str) -> Option<&str> {
    output
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',')
        .map(|w| w.strip_prefix('v').unwrap_or(w))
        .find(|w| {
            w.contains('.')
                && w.starts_with(|c: char| c.is_ascii_digit())
                && w.chars().all(|c| c.is_ascii_digit() || c == '.')
        })
}

#[cfg(test)]
mod tests {
    use clap::ValueEnum as _;

    use super::*;

    #[test]
    fn every_agent_has_a_tested_version() {
        for agent in AgentKind::value_variants() {
            assert!(!tested(*agent).is_empty(), "{agent:?}");
        }
    }

    #[test]
    fn a_version_is_read_from_each_agents_version_output() {
        assert!(is_tested(AgentKind::Claude, "2.1.197 (Claude Code)"));
        assert!(is_tested(AgentKind::Claude, "2.1.330 (Claude Code)\n"));
        assert!(is_tested(AgentKind::Codex, "codex-cli 0.169.0"));
        assert!(is_tested(AgentKind::Opencode, "1.18.33"));
        assert!(is_tested(AgentKind::Opencode, "v1.18.33"));
        assert!(is_tested(AgentKind::Claude, "2.1.332 (Claude Code)"));
        assert!(is_tested(AgentKind::Codex, "codex-cli 0.171.0"));
        assert!(!is_tested(AgentKind::Claude, "2.1.331 (Claude Code)"));
        assert!(!is_tested(AgentKind::Codex, "1.18.33"));
        assert!(!is_tested(AgentKind::Claude, "Claude Code"));
        assert_eq!(version_number("codex-cli 0.169.0"), Some("0.169.0"));
        assert_eq!(version_number("none here"), None);
    }

    #[test]
    fn a_version_after_the_newest_tested_is_told_apart_from_one_in_between() {
        let newer = |agent, v| is_newer_than_tested(agent, v);
        assert_eq!(
            newer(AgentKind::Claude, "2.1.338 (Claude Code)"),
            Some(true)
        );
        assert_eq!(newer(AgentKind::Claude, "2.2.0 (Claude Code)"), Some(true));
        assert_eq!(
            newer(AgentKind::Claude, "2.1.1000 (Claude Code)"),
            Some(true)
        );
        // Between two tested releases, or before them: not newer.
        assert_eq!(
            newer(AgentKind::Claude, "2.1.331 (Claude Code)"),
            Some(false)
        );
        assert_eq!(
            newer(AgentKind::Claude, "2.1.99 (Claude Code)"),
            Some(false)
        );
        assert_eq!(newer(AgentKind::Codex, "codex-cli 0.170.0"), Some(false));
        assert_eq!(newer(AgentKind::Codex, "codex-cli 0.172.0"), Some(true));
        assert_eq!(newer(AgentKind::Claude, "Claude Code"), None);
        assert_eq!(newest_tested(AgentKind::Claude), Some("2.1.337"));
        // Each of OpenCode's two tested generations is judged against its own newest.
        assert_eq!(newer(AgentKind::Opencode, "1.19.0"), Some(true));
        assert_eq!(newer(AgentKind::Opencode, "1.17.0"), Some(false));
        assert_eq!(newer(AgentKind::Opencode, "opencode v2.2.5"), Some(false));
        assert_eq!(newer(AgentKind::Opencode, "opencode v2.2.6"), Some(true));
        assert_eq!(newer(AgentKind::Opencode, "opencode v3.0.0"), Some(true));
        assert_eq!(newest_tested(AgentKind::Codex), Some("0.171.0"));
    }

    #[test]
    fn a_major_version_none_of_whose_releases_was_tested_is_told() {
        assert_eq!(is_tested_major(AgentKind::Opencode, "1.19.0"), Some(true));
        assert_eq!(
            is_tested_major(AgentKind::Opencode, "opencode v2.2.5"),
            Some(true)
        );
        assert_eq!(
            is_tested_major(AgentKind::Opencode, "opencode v3.0.0"),
            Some(false)
        );
        assert_eq!(
            is_tested_major(AgentKind::Claude, "3.0.0 (Claude Code)"),
            Some(false)
        );
        assert_eq!(
            is_tested_major(AgentKind::Codex, "codex-cli 0.172.0"),
            Some(true)
        );
        assert_eq!(
            is_tested_major(AgentKind::Codex, "codex-cli 1.0.0"),
            Some(false)
        );
        assert_eq!(is_tested_major(AgentKind::Codex, "codex-cli"), None);
        assert_eq!(
            newest_tested_like(AgentKind::Opencode, "1.2.0"),
            Some("1.18.33")
        );
        assert_eq!(
            newest_tested_like(AgentKind::Opencode, "3.0.0"),
            Some("2.2.5")
        );
    }
}
