//! What a GitHub Actions leg installs before it runs a task: runbook, pinned to the build that
//! wrote the workflow, and each agent the task file runs, pinned to a version runbook was tested
//! with. An agent of the task file's own (`bin`, `agent_cmd`, `acp_cmd`) cannot be installed
//! from here: it is named, for the user to install.

use crate::agent_kind::AgentKind;
use crate::config::Value;
use crate::config::keys::{self, agent_name};
use crate::config::tasks::{Section, TaskFile};

/// The repository runbook is built from (Cargo.toml's `repository`).
const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

/// The command that installs this very runbook on a runner: built by cargo (on every GitHub
/// runner) from the commit this binary was built from, or, for a build that knows no commit (a
/// packaged crate), from crates.io at this version. No release archive or npm package is used:
/// a version not yet released has neither.
pub(super) fn runbook() -> String {
    let commit = crate::version::commit();
    if commit.is_empty() {
        format!(
            "cargo install --locked runbook-cli --version ={} --bin runbook",
            env!("CARGO_PKG_VERSION")
        )
    } else {
        format!(
            "cargo install --locked --git {REPOSITORY} --rev {commit} runbook-cli --bin runbook"
        )
    }
}

/// The npm package of `agent`'s CLI, at the version `.ci/install-agents` pins (the first tested).
pub(super) fn package(agent: AgentKind) -> String {
    let name = match agent {
        AgentKind::Opencode => "opencode-ai",
        AgentKind::Claude => "@anthropic-ai/claude-code",
        AgentKind::Codex => "@openai/codex",
    };
    let version = crate::agent::versions::tested(agent)
        .first()
        .copied()
        .unwrap_or("latest");
    format!("{name}@{version}")
}

/// The agents a task file runs, and the settings of it that name an agent of its own.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Agents {
    /// Each agent installed from npm, in the order first met.
    pub known: Vec<AgentKind>,
    /// Each setting (`agents.opencode.bin`, `agent_cmd`…) that runs a program of the user's.
    pub own: Vec<String>,
}

/// The agents `file`'s tasks run: their `agents` fan-out, else their `agent` setting, else the
/// default agent. A repository's runbook.toml choosing another agent is not read here.
pub(super) fn agents(file: &TaskFile) -> Agents {
    let mut out = Agents::default();
    let default = keys::AGENT.0.key.default_value().and_then(|v| match v {
        Value::Agent(kind) => Some(kind),
        _ => None,
    });
    let sections = std::iter::once(&file.defaults).chain(file.tasks.iter().map(|t| &t.section));
    for section in sections.clone() {
        for entry in &section.entries {
            let name = entry.slot.key.name;
            if matches!(name, "bin" | "agent_cmd" | "acp_cmd") {
                push(&mut out.own, entry.slot.name());
            }
        }
    }
    for task in &file.tasks {
        let fan = task
            .section
            .agents
            .as_ref()
            .or(file.defaults.agents.as_ref());
        let kinds: Vec<AgentKind> = match fan {
            Some(list) => list.iter().map(|(kind, _)| *kind).collect(),
            None => chosen(&task.section)
                .or_else(|| chosen(&file.defaults))
                .or(default)
                .into_iter()
                .collect(),
        };
        for kind in kinds {
            push(&mut out.known, kind);
        }
    }
    out
}

/// The `agent` a section sets.
fn chosen(section: &Section) -> Option<AgentKind> {
    section.entries.iter().rev().find_map(|e| match e.value {
        Value::Agent(kind) if e.slot.key.name == "agent" => Some(kind),
        _ => None,
    })
}

fn push<T: PartialEq>(list: &mut Vec<T>, item: T) {
    if !list.contains(&item) {
        list.push(item);
    }
}

/// The API keys `agent` may read (OpenCode: whichever provider its model is of).
pub(super) fn keys_of(agent: AgentKind) -> &'static [&'static str] {
    match agent {
        AgentKind::Claude => &["ANTHROPIC_API_KEY"],
        AgentKind::Codex => &["OPENAI_API_KEY"],
        AgentKind::Opencode => &["ANTHROPIC_API_KEY", "OPENAI_API_KEY"],
    }
}

/// `agent`'s name, for messages.
pub(super) fn name(agent: AgentKind) -> &'static str {
    agent_name(agent)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each package is the one the agent's own "not found" error tells to install.
    #[test]
    fn each_package_is_the_one_the_agent_is_installed_from() {
        for agent in keys::agents() {
            let package = package(agent);
            let (name, version) = package.rsplit_once('@').unwrap();
            let hint = agent.adapter().install_hint();
            assert!(hint.contains(&format!("npm install -g {name}`")), "{hint}");
            assert!(crate::agent::versions::is_tested(agent, version));
        }
    }

    #[test]
    fn the_agents_of_a_task_file_and_its_own_binaries_are_found() {
        let text = "[defaults]\nagent = \"claude\"\n[defaults.agents.codex]\nbin = \"/x/codex\"\n\
                    [[task]]\nid = \"a\"\nprompt = \"x\"\n\
                    [[task]]\nid = \"b\"\nprompt = \"y\"\nagents = [\"codex\", \"claude:2\"]\n";
        let file =
            crate::config::tasks::parse_tasks(std::path::Path::new("/t.toml"), text).unwrap();
        let found = agents(&file);
        assert_eq!(found.known, [AgentKind::Claude, AgentKind::Codex]);
        assert_eq!(found.own, ["agents.codex.bin"]);
        let plain = crate::config::tasks::parse_tasks(
            std::path::Path::new("/t.toml"),
            "[[task]]\nid = \"a\"\nprompt = \"x\"\n",
        )
        .unwrap();
        assert_eq!(agents(&plain).known, [AgentKind::Opencode]);
    }
}
