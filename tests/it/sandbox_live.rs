//! The real OpenCode, Claude Code and Codex under `--sandbox`, each against its fake provider:
//! every standard scenario ends as it does unsandboxed, with the provider's port allowed, the
//! agent's own state dirs writable and no refusal seen.

use runbook::event::Outcome;

use crate::conformance::{ALL, Scenario, assert_facts, facts};
use crate::live::{self, Prepared};

/// Runs every scenario of `agent` with `--sandbox`, and checks each as the unsandboxed run is
/// checked, plus the sandbox the receipt records.
fn every_scenario_sandboxed(agent: &str, prepare: fn(Scenario) -> Option<Prepared>, own: &[&str]) {
    for scenario in ALL {
        let Some(ran) = live::run(agent, scenario, prepare, &["--sandbox"]) else {
            return;
        };
        let why = &ran.why;
        assert_facts(
            &facts(&ran.events, &ran.receipt),
            ran.expected(),
            scenario == Scenario::ProviderError,
            scenario == Scenario::Subagent,
            why,
        );
        ran.assert_exit(match ran.expected().outcome {
            Outcome::Completed => 0,
            Outcome::Hung => 3,
            _ => 1,
        });
        let sandbox = ran
            .receipt
            .sandbox
            .as_ref()
            .expect("the receipt records it");
        assert_eq!(sandbox.denied, 0, "no refusal: {sandbox:?}\n{why}");
        let provider = sandbox.ports.iter().any(|p| *p != 443);
        assert!(provider, "the provider's port is allowed: {sandbox:?}");
        let home = ran.ctx.home.display().to_string();
        let codex_home = ran.codex_home.as_ref().map(|p| p.display().to_string());
        for dir in own {
            let dir = match (*dir, &codex_home) {
                ("$CODEX_HOME", Some(h)) => h.clone(),
                (dir, _) => format!("{home}/{dir}"),
            };
            assert!(
                sandbox.write.contains(&dir),
                "{dir} is writable: {sandbox:?}"
            );
        }
    }
}

#[test]
fn opencode_meets_every_scenario_sandboxed() {
    every_scenario_sandboxed(
        "opencode",
        live::opencode,
        &[
            ".local/share/opencode",
            ".cache/opencode",
            ".config/opencode",
            ".local/state/opencode",
        ],
    );
}

#[test]
fn claude_code_meets_every_scenario_sandboxed() {
    every_scenario_sandboxed("claude", live::claude, &[".claude", ".claude.json"]);
}

#[test]
fn codex_meets_every_scenario_sandboxed() {
    every_scenario_sandboxed("codex", live::codex, &["$CODEX_HOME"]);
}
