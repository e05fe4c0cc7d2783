//! Doctor's look at one agent's ACP adapter (what `runbook run --via acp` starts): found as a
//! run finds it, then started and asked `initialize` (see [`super::handshake`]).

use std::path::PathBuf;
use std::time::Duration;

use super::handshake::{self, Handshake};
use super::{Context, Finding, Problem};
use crate::agent::{Adapter, AgentKind, acp};
use crate::commands::run::setup::{resolve_agent, resolve_program};
use crate::config::{Config, keys};
use crate::exit::Error;

/// How long an adapter may take to start and answer `initialize`: OpenCode loads its whole
/// server first, which takes seconds on a busy machine.
pub(super) const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(30);

/// The ACP adapter of `agent`.
pub(super) fn adapter(agent: AgentKind) -> &'static acp::Acp {
    match agent {
        AgentKind::Opencode => &acp::OPENCODE,
        AgentKind::Claude => &acp::CLAUDE,
        AgentKind::Codex => &acp::CODEX,
    }
}

/// The adapter of `agent`: found (the agent's `bin` setting names it when runs go over ACP, or
/// when the adapter is the agent's own binary), started and asked `initialize`. `default`: a
/// run here would start it.
pub(super) fn examine(
    agent: AgentKind,
    default: bool,
    context: Context<'_>,
) -> impl std::future::Future<Output = Finding> + Send + 'static {
    let acp = adapter(agent);
    let own_binary = acp.program() == agent.adapter().program();
    let via_acp = context.via_acp;
    let mut bin = context.config.agent_setting(agent, &keys::BIN).clone();
    let bin_applies = via_acp || own_binary;
    if !bin_applies {
        bin.value = None;
    }
    let untrusted = context.untrusted.filter(|_| bin.value.is_some());
    let found = resolve_program(acp, &bin);
    let args: Vec<String> = acp.mode_args().iter().map(|&a| a.to_owned()).collect();
    let mut f = Finding {
        args: args.clone(),
        ..Finding::new(acp.name(), "acp", default)
    };
    async move {
        match found {
            Err(Error::AgentNotFound { program, hint }) => {
                // Outside ACP runs, the agent's `bin` setting names its own CLI, not this.
                let hint = if bin_applies {
                    hint
                } else {
                    format!("{hint}, with --via acp")
                };
                f.problems
                    .push(Problem::new(format!("not found: {program}"), hint.clone()));
                f.hint = Some(hint);
            }
            Err(other) => f.problems.push(Problem::new(other.to_string(), None)),
            Ok(binary) => {
                f.binary = Some(binary.display().to_string());
                match untrusted {
                    Some(file) => {
                        let file = crate::trust::escape(&file);
                        f.problems.push(Problem::new(
                            format!(
                                "it is named by {file}, which is not trusted: doctor did not run it"
                            ),
                            format!("read {file}, then `runbook trust {file}`"),
                        ));
                    }
                    None => try_it(&mut f, binary, &args).await,
                }
            }
        }
        f
    }
}

/// The agent `acp_cmd` names, which a run here starts instead of any other: found as a run
/// finds it, then asked `initialize` (unless an untrusted file names it).
pub(super) fn custom(
    config: &Config,
    untrusted: Option<String>,
) -> impl std::future::Future<Output = Finding> + Send + 'static {
    let resolved = resolve_agent(config);
    let mut f = Finding::new("acp_cmd", "acp", true);
    async move {
        match resolved {
            Err(Error::AgentNotFound { program, hint }) => f
                .problems
                .push(Problem::new(format!("not found: {program}"), hint)),
            Err(other) => f.problems.push(Problem::new(other.to_string(), None)),
            Ok(agent) => {
                f.binary = Some(agent.program.display().to_string());
                f.args.clone_from(&agent.extra_args);
                match untrusted {
                    Some(file) => {
                        let file = crate::trust::escape(&file);
                        f.problems.push(Problem::new(
                            format!(
                                "it is named by {file}, which is not trusted: doctor did not run it"
                            ),
                            format!("read {file}, then `runbook trust {file}`"),
                        ));
                    }
                    None => try_it(&mut f, agent.program, &agent.extra_args).await,
                }
            }
        }
        f
    }
}

/// Starts the adapter and records what its answer to `initialize` says, or why there is none.
async fn try_it(f: &mut Finding, binary: PathBuf, args: &[String]) {
    let command = std::iter::once(binary.display().to_string())
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    let timeout = INITIALIZE_TIMEOUT;
    let check = "check that it runs: start it by hand, and see what it says on stderr".to_owned();
    match handshake::initialize(&binary, args, timeout).await {
        Handshake::Answered {
            protocol_version,
            agent,
        } => {
            f.protocol_version = protocol_version;
            f.version = agent.as_ref().and_then(|a| a.version.clone());
            f.agent_info = agent;
            let speaks = crate::supervisor::ACP_PROTOCOL_VERSION;
            if protocol_version != Some(speaks) {
                let named = protocol_version.map_or("no protocol version".to_owned(), |v| {
                    format!("ACP protocol version {v}")
                });
                f.problems.push(Problem::new(
                    format!("`{command}` answered initialize with {named}; runbook speaks version {speaks}"),
                    format!("install a version of it that speaks ACP version {speaks}"),
                ));
            }
        }
        Handshake::Refused(why) => f.problems.push(Problem::new(
            format!("`{command}` refused ACP initialize: {why}"),
            check,
        )),
        Handshake::NotStarted(why) => f.problems.push(Problem::new(
            format!("`{command}` could not be started: {why}"),
            check,
        )),
        Handshake::Ended(code) => {
            let exit = code.map_or(String::new(), |c| format!(" (exit code {c})"));
            f.problems.push(Problem::new(
                format!("`{command}` ended without answering ACP initialize{exit}"),
                check,
            ));
        }
        Handshake::Silent => f.problems.push(Problem::new(
            format!(
                "`{command}` gave no answer to ACP initialize within {}s",
                timeout.as_secs()
            ),
            check,
        )),
    }
}
