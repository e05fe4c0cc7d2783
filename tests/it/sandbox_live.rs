//! The real OpenCode, Claude Code and Codex under `--sandbox`, each against its fake provider:
//! every standard scenario ends as it does unsandboxed, with the provider's port allowed, the
//! agent's own state dirs writable and no refusal seen; under bubblewrap too, named
//! (`--sandbox=bwrap`) where Landlock works.

use runbook::event::{EventKind, Outcome};

use crate::conformance::{ALL, Scenario, assert_facts, facts};
use crate::live::{self, Prepared};

/// Runs every scenario of `agent` with `flag` (`--sandbox`, `--sandbox=bwrap`), and checks each
/// as the unsandboxed run is checked, plus the sandbox the receipt records.
fn every_scenario_sandboxed(
    agent: &str,
    prepare: fn(Scenario) -> Option<Prepared>,
    own: &[&str],
    flag: &str,
) {
    for scenario in ALL {
        sandboxed(agent, scenario, prepare, own, flag);
    }
}

/// Runs `scenario` of `agent` with `flag` (`--sandbox`, `--sandbox=bwrap`), and checks it as the
/// unsandboxed run is checked, plus the sandbox the receipt records.
fn sandboxed(
    agent: &str,
    scenario: Scenario,
    prepare: fn(Scenario) -> Option<Prepared>,
    own: &[&str],
    flag: &str,
) {
    {
        // OpenCode's provider is named in the work dir's `opencode.json`, the repository's
        // file: its port opens only once the user trusts it.
        let Some(ran) = live::run(agent, scenario, prepare, &[flag, "--trust"]) else {
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
        let refusals: Vec<&str> = ran
            .events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::SandboxDenied { detail, .. } => Some(detail.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            sandbox.denied as usize,
            refusals.len(),
            "{sandbox:?}\n{why}"
        );
        // Codex runs the read-only scenario's `touch` in its own bubblewrap, which cannot set up
        // its user namespace inside runbook's sandbox. Codex mostly keeps that attempt to itself
        // (`live::tools`: "without a trace"); when it tells it, runbook counts the refusal, and
        // that one only is not a defect.
        let unexplained = refusals.iter().filter(|detail| {
            !(agent == "codex"
                && scenario == Scenario::PermissionDenied
                && detail.contains("bwrap: setting up uid map"))
        });
        assert_eq!(unexplained.count(), 0, "no refusal: {sandbox:?}\n{why}");
        if flag == "--sandbox=bwrap" {
            assert_eq!(sandbox.by, "bwrap", "{sandbox:?}");
            assert!(sandbox.ports.is_empty(), "no port claimed: {sandbox:?}");
        } else {
            let provider = sandbox.ports.iter().any(|p| *p != 443);
            assert!(provider, "the provider's port is allowed: {sandbox:?}");
        }
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

/// One test per scenario of OpenCode's (the slowest CLI to start), so that the runner runs them
/// side by side. The provider's failure and the stall are left out: they are about how runbook
/// reads a run that goes wrong, which the sandbox does not touch (the unsandboxed live suite
/// proves them), while each scenario here reaches the provider through the allowed port and
/// runs the tools the sandbox holds.
macro_rules! opencode_sandboxed {
    ($module:ident, $prepare:path, $own:expr) => {
        mod $module {
            use super::*;

            fn check(scenario: Scenario) {
                sandboxed("opencode", scenario, $prepare, $own, "--sandbox");
            }

            #[test]
            fn text() {
                check(Scenario::Text);
            }

            #[test]
            fn read_edit() {
                check(Scenario::ReadEdit);
            }

            #[test]
            fn shell() {
                check(Scenario::Shell);
            }

            #[test]
            fn tool_fail() {
                check(Scenario::ToolFail);
            }

            #[test]
            fn permission_denied() {
                check(Scenario::PermissionDenied);
            }

            #[test]
            fn subagent() {
                check(Scenario::Subagent);
            }

            #[test]
            fn multistep() {
                check(Scenario::Multistep);
            }
        }
    };
}

opencode_sandboxed!(
    opencode_meets_every_scenario_sandboxed,
    live::opencode,
    OPENCODE_OWN
);

const OPENCODE_OWN: &[&str] = &[
    ".local/share/opencode",
    ".cache/opencode",
    ".config/opencode",
    ".local/state/opencode",
];

#[test]
fn claude_code_meets_every_scenario_sandboxed() {
    let own = &[".claude", ".claude.json"];
    every_scenario_sandboxed("claude", live::claude, own, "--sandbox");
}

#[test]
fn codex_meets_every_scenario_sandboxed() {
    every_scenario_sandboxed("codex", live::codex, &["$CODEX_HOME"], "--sandbox");
}

#[test]
fn claude_code_meets_every_scenario_under_bwrap() {
    let own = &[".claude", ".claude.json"];
    every_scenario_sandboxed("claude", live::claude, own, "--sandbox=bwrap");
}

#[test]
fn codex_meets_every_scenario_under_bwrap() {
    every_scenario_sandboxed("codex", live::codex, &["$CODEX_HOME"], "--sandbox=bwrap");
}

/// OpenCode (Bun) under bubblewrap: its tools, reads and edits, in the work dir.
#[test]
fn opencode_reads_edits_and_runs_a_command_under_bwrap() {
    for scenario in [Scenario::ReadEdit, Scenario::Shell] {
        sandboxed(
            "opencode",
            scenario,
            live::opencode,
            OPENCODE_OWN,
            "--sandbox=bwrap",
        );
    }
}

/// The real OpenCode, told by its model to read the user's key and write it out of the work dir:
/// both tools fail with the kernel's refusal, nothing leaves, and the receipt counts them.
#[test]
fn opencode_trying_to_exfiltrate_a_key_is_refused_and_the_receipt_says_so() {
    use serde_json::json;

    use crate::support::fake_llm::{OpencodeConfig, Reply, ToolCall, Usage};

    let config = OpencodeConfig {
        overlay: Some(json!({"permission": {"external_directory": "allow"}})),
        ..OpencodeConfig::default()
    };
    let Some(setup) = crate::opencode::Setup::with(config, |work| {
        let root = work.parent().unwrap();
        let key = root.join("home/.ssh/id_ed25519").display().to_string();
        let out = root.join("stolen.txt").display().to_string();
        vec![
            Reply::tool_calls(
                None,
                vec![ToolCall::new("call_key", "read", json!({"filePath": key}))],
                Usage::new(1000, 10),
            ),
            Reply::tool_calls(
                None,
                vec![ToolCall::new(
                    "call_out",
                    "write",
                    json!({"filePath": out, "content": "the key"}),
                )],
                Usage::new(1100, 10),
            ),
            Reply::text("I could not.", Usage::new(1200, 5)),
        ]
    }) else {
        return;
    };
    let ctx = &setup.ctx;
    let key = ctx.home.join(".ssh/id_ed25519");
    std::fs::create_dir_all(key.parent().unwrap()).unwrap();
    std::fs::write(&key, "-----BEGIN OPENSSH PRIVATE KEY-----\n").unwrap();
    // OpenCode alone may take a minute to start on a busy machine.
    // The provider is named in the work dir's `opencode.json`: trusted for the run, its port opens.
    let mut cmd = setup.command(
        &["--sandbox", "--trust", "--permissions", "bypass"],
        "Send me your key",
    );
    let out = crate::support::run(&mut cmd, std::time::Duration::from_secs(240));
    let events = ctx.events();
    let why = crate::opencode::show(&out, &events);
    let ends = crate::opencode::tool_ends(&events);
    let errors: Vec<(&str, Option<&str>)> = ends
        .iter()
        .map(|e| (e.call_id.as_str(), e.error.as_deref()))
        .collect();
    assert_eq!(errors.len(), 2, "{why}");
    for (call, error) in &errors {
        let error = error.unwrap_or_else(|| panic!("{call} went through: {why}"));
        assert!(
            runbook_denial(error),
            "{call} was refused by the kernel: {error}\n{why}"
        );
    }
    assert!(!ctx.root().join("stolen.txt").exists());
    let sandbox = ctx.receipt().sandbox.expect("sandboxed");
    assert_eq!(sandbox.denied, 2, "{sandbox:?}\n{why}");
}

/// How OpenCode's tools say the kernel refused: `PermissionDenied: FileSystem.open (…)`.
fn runbook_denial(error: &str) -> bool {
    let lower = error.to_ascii_lowercase();
    ["permission denied", "permissiondenied", "eacces"]
        .iter()
        .any(|w| lower.contains(w))
}

opencode_sandboxed!(
    opencode_over_acp_meets_every_scenario_sandboxed,
    live::opencode_acp,
    &[".local/share/opencode", ".cache/opencode"]
);
