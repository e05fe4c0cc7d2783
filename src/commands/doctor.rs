//! `runbook doctor`: each agent's binary (found as `runbook run` finds it), its version and
//! whether runbook was tested with it, the model it would run and whether runbook can price it;
//! each agent's ACP adapter (`--via acp`), found the same way and tried with the protocol's
//! `initialize`; and what to do about anything that is not right.

mod acp_check;
mod generations;
mod handshake;
mod sandbox;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use clap::ValueEnum as _;
use serde::Serialize;
use tokio::io::AsyncReadExt as _;

use super::run::setup::resolve_program;
use crate::agent::{Adapter as _, AgentKind, versions};
use crate::agent_env::{self, AgentEnv};
use crate::cli::DoctorArgs;
use crate::config::{self, Config, Flags, keys};
use crate::exit::{Error, ExitStatus};
use crate::prices::PriceTable;
use crate::render::Styles;
use crate::term::TermEnv;
use crate::term::out;
use crate::trust;

/// How long an agent's `--version` may take; a hung binary is a finding, not a hang of doctor.
const VERSION_TIMEOUT: Duration = Duration::from_secs(5);
/// The most of a `--version` answer read.
const VERSION_OUTPUT: u64 = 4096;

/// What doctor found about one agent, or one agent's ACP adapter.
#[derive(Debug, Serialize)]
struct Finding {
    agent: &'static str,
    /// How runbook starts it: `native` (the agent's own CLI) or `acp` (`--via acp`).
    via: &'static str,
    /// The arguments that put the binary in ACP mode (`acp` for `opencode acp`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    args: Vec<String>,
    /// The ACP protocol version its answer to `initialize` named.
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol_version: Option<u64>,
    /// Who the ACP adapter said it is in that answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_info: Option<handshake::AgentInfo>,
    /// How to install it, when it is not found.
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
    /// Whether `runbook run` runs this agent by default here (the `agent` setting).
    default: bool,
    /// The binary `runbook run` would start; absent when none is found.
    binary: Option<String>,
    /// What its `--version` printed (first line); absent when not installed or no answer.
    version: Option<String>,
    /// The npm package the binary was installed from (`opencode-ai`, `@opencode/cli`), when its
    /// path says so.
    #[serde(skip_serializing_if = "Option::is_none")]
    package: Option<String>,
    /// Whether runbook was tested with any release of that version's major version; absent when
    /// that version is tested or not known.
    #[serde(skip_serializing_if = "Option::is_none")]
    major_tested: Option<bool>,
    /// The newest tested release of that version's major version, when that version is newer.
    #[serde(skip_serializing_if = "Option::is_none")]
    newest_tested: Option<&'static str>,
    /// Whether runbook was tested with that version; absent when it is not known.
    tested: Option<bool>,
    /// The versions runbook was tested with.
    tested_versions: Vec<&'static str>,
    /// Whether that version is newer than every version runbook was tested with (a newer
    /// runbook may know it); absent when it is tested or not known.
    #[serde(skip_serializing_if = "Option::is_none")]
    newer: Option<bool>,
    /// The model it would run: the one asked for (`model` setting) for the default agent, else
    /// the one its own configuration names; absent: the agent chooses at run time.
    model: Option<String>,
    /// Where `model` comes from: `runbook` (the `model` setting) or the agent's file.
    model_from: Option<String>,
    /// `known` (runbook's price table), `user` (a `prices` setting), `unknown`; absent with no
    /// model.
    price: Option<&'static str>,
    /// What needs attention, in order; empty when nothing does.
    problems: Vec<Problem>,
}

impl Finding {
    /// Nothing found yet of `agent`, reached `via` the native CLI or ACP.
    fn new(agent: &'static str, via: &'static str, default: bool) -> Self {
        Finding {
            agent,
            via,
            args: Vec::new(),
            protocol_version: None,
            agent_info: None,
            hint: None,
            default,
            binary: None,
            version: None,
            package: None,
            major_tested: None,
            newest_tested: None,
            tested: None,
            tested_versions: Vec::new(),
            newer: None,
            model: None,
            model_from: None,
            price: None,
            problems: Vec::new(),
        }
    }
}

/// Something that needs attention, and what to do about it.
#[derive(Debug, Serialize)]
struct Problem {
    what: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    todo: Option<String>,
}

impl Problem {
    fn new(what: String, todo: impl Into<Option<String>>) -> Self {
        Self {
            what,
            todo: todo.into(),
        }
    }
}

/// The whole answer of `--json`.
#[derive(Debug, Serialize)]
struct Report<'a> {
    /// True when nothing needs attention (exit 0).
    ok: bool,
    agents: &'a [Finding],
    /// What `--sandbox` would be here, for the default agent.
    sandbox: &'a sandbox::Report,
}

pub(crate) async fn doctor(
    args: &DoctorArgs,
    global: &Flags<config::Global>,
) -> anyhow::Result<ExitStatus> {
    let config = config::load_here(
        global
            .values()
            .iter()
            .chain(args.options.values())
            .chain(args.runs_dir.values()),
    )?;
    let agent_env = agent_env::load(&config, &[])?;
    let untrusted = untrusted_files(&config, &agent_env)?;
    let env = agent_env.pairs();
    let default = config.value(&keys::AGENT);
    let custom = config.get(&keys::AGENT_CMD).is_some() || config.get(&keys::ACP_CMD).is_some();
    let via_acp = config.value(&keys::VIA) == "acp";
    let prices = config.prices();
    let untrusted_bin = |agent| {
        let bin = config.agent_setting(agent, &keys::BIN);
        bin.origin
            .file
            .as_ref()
            .filter(|f| untrusted.contains(f))
            .cloned()
    };
    let checks = AgentKind::value_variants().iter().map(|&agent| {
        let context = Context {
            config: &config,
            env: &env,
            prices: &prices,
            untrusted: untrusted_bin(agent),
            via_acp,
        };
        examine(agent, !custom && !via_acp && agent == default, context)
    });
    // The probes take seconds: a person at a terminal sees what is being looked at meanwhile.
    let progress = !args.json && crate::term::out::are_terminals().0;
    checking(
        progress,
        Some("checking the agents and their ACP adapters…"),
    );
    let mut findings = futures_join(checks).await;
    let adapters = AgentKind::value_variants().iter().map(|&agent| {
        let context = Context {
            config: &config,
            env: &env,
            prices: &prices,
            untrusted: untrusted_bin(agent),
            via_acp,
        };
        acp_check::examine(agent, !custom && via_acp && agent == default, context)
    });
    findings.extend(futures_join(adapters).await);
    if config.get(&keys::ACP_CMD).is_some() {
        let named_by = config.setting(&keys::ACP_CMD).origin.file.as_ref();
        let untrusted = named_by.filter(|f| untrusted.contains(f)).cloned();
        findings.push(acp_check::custom(&config, untrusted).await);
    }
    checking(progress, None);
    generations::shared_home(&mut findings, &env);
    // Only the agent `runbook run` would start here must be installed.
    for f in &mut findings {
        if f.binary.is_none() && !f.default {
            f.problems.clear();
        }
    }
    let sandbox = sandbox::examine(&config, default, &env);
    let status = tell(&findings, &sandbox, args.json, custom, &config)?;
    if !args.json
        && let Ok(runs_dir) = crate::rundir::runs_dir(&config)
        && let Some(left) = crate::commands::batch::leftover_note(&runs_dir)
    {
        crate::term::print::note(left);
    }
    Ok(status)
}

/// On a terminal (`progress`), what doctor is looking at, on stderr's row until it is done
/// (`None`: erased).
fn checking(progress: bool, what: Option<&str>) {
    if !progress {
        return;
    }
    let mut err = crate::term::out::stderr();
    err.control(crate::term::out::Control::Erase);
    if let Some(what) = what {
        err.text(what);
    }
    let _ = err.flush();
}

/// The repository files not trusted: an agent's binary one of them names is not run, not even
/// for `--version`.
fn untrusted_files(config: &Config, agent_env: &AgentEnv) -> anyhow::Result<Vec<String>> {
    Ok(
        trust::examine(config, agent_env, &trust::Given::from_env(false))?
            .into_iter()
            .filter(|(_, status)| !status.allows())
            .map(|(f, _)| f.path.display().to_string())
            .collect(),
    )
}

/// Prints the findings (as JSON with `json`); exits 0 only when nothing needs attention.
fn tell(
    findings: &[Finding],
    sandbox: &sandbox::Report,
    json: bool,
    custom: bool,
    config: &Config,
) -> anyhow::Result<ExitStatus> {
    // A sandbox that cannot run is a problem only when it is asked for.
    let sandbox_ok = !(sandbox.on && sandbox.problem.is_some());
    let ok = findings.iter().all(|f| f.problems.is_empty()) && sandbox_ok;
    if json {
        let report = Report {
            ok,
            agents: findings,
            sandbox,
        };
        out::print_json(&report, false)?;
    } else {
        let styles = Styles::new(TermEnv::detect().color_stdout(config.value(&keys::COLOR)));
        let mut text = human(findings, custom, &styles);
        text.push_str(&sandbox::human(sandbox, &styles));
        out::print(&text)?;
    }
    Ok(if ok {
        ExitStatus::Completed
    } else {
        ExitStatus::AgentFailed
    })
}

/// Runs the checks side by side: each may wait up to [`VERSION_TIMEOUT`] for its binary.
async fn futures_join<F: std::future::Future<Output = Finding> + Send + 'static>(
    checks: impl Iterator<Item = F>,
) -> Vec<Finding> {
    let handles: Vec<_> = checks.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for handle in handles {
        if let Ok(finding) = handle.await {
            out.push(finding);
        }
    }
    out
}

/// What doctor examines each agent with.
struct Context<'a> {
    config: &'a Config,
    env: &'a [(String, String)],
    prices: &'a PriceTable,
    /// The untrusted repository file that names the agent's binary, if one does.
    untrusted: Option<String>,
    /// Whether runs go over ACP (`--via acp`): the agent's `bin` setting then names its ACP
    /// adapter.
    via_acp: bool,
}

/// One agent: its binary, version, model and price.
fn examine(
    agent: AgentKind,
    default: bool,
    context: Context<'_>,
) -> impl std::future::Future<Output = Finding> + Send + 'static {
    let Context {
        config,
        env,
        prices,
        untrusted,
        via_acp,
    } = context;
    let adapter = agent.adapter();
    let name = adapter.name();
    // Runs over ACP start the adapter the `bin` setting names, not this CLI (unless they are one).
    let mut bin = config.agent_setting(agent, &keys::BIN).clone();
    if via_acp && acp_check::adapter(agent).program() != adapter.program() {
        bin.value = None;
    }
    let untrusted = untrusted.filter(|_| bin.value.is_some());
    let found = resolve_program(adapter, &bin);
    let asked = if default {
        config.get(&keys::MODEL)
    } else {
        None
    };
    let (model, model_from) = match asked {
        Some(model) => (Some(model), Some("runbook".to_owned())),
        None => match adapter.configured_model(env) {
            Some((model, file)) => (Some(model), Some(file.display().to_string())),
            None => (None, None),
        },
    };
    let price = model.as_deref().map(|m| price_status(prices, m));
    let tested_versions = versions::tested(agent).to_vec();
    let version_args = adapter.version_args();
    async move {
        let mut f = Finding {
            tested_versions,
            model,
            model_from,
            price,
            ..Finding::new(name, "native", default)
        };
        match found {
            Err(Error::AgentNotFound { program, hint }) => {
                f.problems
                    .push(Problem::new(format!("not found: {program}"), hint));
            }
            Err(other) => {
                f.problems.push(Problem::new(other.to_string(), None));
            }
            Ok(binary) if untrusted.is_some() => {
                let file = trust::escape(untrusted.as_deref().unwrap_or_default());
                f.problems.push(Problem::new(
                    format!(
                        "{} is named by {file}, which is not trusted: doctor did not run it",
                        trust::escape(&binary.display().to_string())
                    ),
                    format!("read {file}, then `runbook trust {file}`"),
                ));
                f.binary = Some(binary.display().to_string());
            }
            Ok(binary) => probed(&mut f, agent, &binary, version_args).await,
        }
        unpriced(&mut f);
        f
    }
}

/// Asks the agent's binary its version, and says when it gives none or one runbook was not
/// tested with.
async fn probed(f: &mut Finding, agent: AgentKind, binary: &Path, version_args: &[&str]) {
    f.version = probe(binary, version_args).await;
    f.binary = Some(binary.display().to_string());
    let Some(version) = &f.version else {
        f.problems.push(Problem::new(
            format!(
                "`{} --version` gave no answer within {}s",
                binary.display(),
                VERSION_TIMEOUT.as_secs()
            ),
            "check that the binary runs; runbook cannot tell which version it is".to_owned(),
        ));
        return;
    };
    f.package = npm_package(binary);
    let tested = versions::is_tested(agent, version);
    f.tested = Some(tested);
    if !tested {
        untested(f, agent, version.clone());
    }
}

/// The problem of a version runbook was not tested with: of a major version none of whose
/// releases was, newer than the newest tested of its major, or in between.
fn untested(f: &mut Finding, agent: AgentKind, version: String) {
    let versions = f.tested_versions.join(", ");
    let compare = "compare this one with the recordings (the drift check in runbook's \
                   docs/agents-release.md)";
    f.newer = versions::is_newer_than_tested(agent, &version);
    if versions::is_tested_major(agent, &version) == Some(false) {
        f.major_tested = Some(false);
        f.problems.push(Problem::new(
            "a major version runbook was not tested with: it may be the agent rebuilt, printing \
             what runbook misreads (each run's receipt says `fidelity: untested`)"
                .to_owned(),
            format!("install a tested version ({versions}), or {compare}"),
        ));
        return;
    }
    if f.newer == Some(true) {
        let newest = versions::newest_tested_like(agent, &version).unwrap_or_default();
        f.newest_tested = Some(newest);
        f.problems.push(Problem::new(
            format!("newer than runbook knows (tested up to {newest})"),
            format!(
                "a newer runbook may know this release (this lookup is offline: only the \
                 versions built into this runbook are known): update runbook, install a \
                 tested version ({versions}), or {compare}"
            ),
        ));
        return;
    }
    f.problems.push(Problem::new(
        format!("runbook was not tested with this version (tested: {versions})"),
        format!(
            "its output may have changed in ways runbook misreads (each run warns): install a \
             tested version ({versions}), or {compare}"
        ),
    ));
}

/// The npm package a binary was installed from: the `node_modules/<package>/` (or
/// `node_modules/@scope/<package>/`) its path, links resolved, runs through.
fn npm_package(binary: &Path) -> Option<String> {
    let real = std::fs::canonicalize(binary).ok()?;
    let parts: Vec<&str> = real
        .components()
        .filter_map(|c| c.as_os_str().to_str())
        .collect();
    let at = parts.iter().rposition(|p| *p == "node_modules")?;
    let name = parts.get(at + 1)?;
    let package = if name.starts_with('@') {
        format!("{name}/{}", parts.get(at + 2)?)
    } else {
        (*name).to_owned()
    };
    (at + 2 < parts.len()).then_some(package)
}

/// A model without a price is a problem: its runs' cost would be unknown.
fn unpriced(f: &mut Finding) {
    if let (Some(model), Some("unknown")) = (&f.model, f.price) {
        f.problems.push(Problem::new(
            format!("model {model} has no price: its cost will be unknown"),
            format!(
                "add its price to your configuration: [prices.\"{model}\"] input = …, \
                 cached_input = …, output = … (USD per million tokens; see docs/prices.md)"
            ),
        ));
    }
}

/// `known` (shipped), `user` (the user's `prices`) or `unknown`.
fn price_status(prices: &PriceTable, model: &str) -> &'static str {
    let shipped = PriceTable::new(BTreeMap::new()).lookup(model);
    match prices.lookup(model) {
        None => "unknown",
        Some(price) if shipped == Some(price) => "known",
        Some(_) => "user",
    }
}

/// `BIN --version`'s first line, within [`VERSION_TIMEOUT`]; `None` when it fails, says
/// nothing, or does not answer in time (it is then killed with its process group).
async fn probe(binary: &Path, args: &[&str]) -> Option<String> {
    if args.is_empty() {
        return None;
    }
    let mut child = tokio::process::Command::new(binary)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .ok()?;
    let group = child.id();
    let stdout = child.stdout.take()?;
    let answer = tokio::time::timeout(VERSION_TIMEOUT, async {
        let mut out = Vec::new();
        stdout
            .take(VERSION_OUTPUT)
            .read_to_end(&mut out)
            .await
            .ok()?;
        let status = child.wait().await.ok()?;
        status.success().then_some(out)
    })
    .await
    .ok()
    .flatten();
    if answer.is_none()
        && let Some(group) = group.and_then(|g| i32::try_from(g).ok())
    {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(group),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let text = String::from_utf8_lossy(&answer?).into_owned();
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(crate::format::truncate(line, 200))
}

/// ` (@opencode/cli)`: the package the binary came from, when known.
fn from(f: &Finding) -> String {
    f.package
        .as_deref()
        .map(|p| format!(" ({p})"))
        .unwrap_or_default()
}

/// `protocol 1 · Claude Agent 0.23.1 · /path/claude-agent-acp`: an ACP adapter's answer to
/// `initialize`, and the command that was asked.
fn acp_line(f: &Finding, bin: &str) -> String {
    let mut parts = Vec::new();
    if let Some(v) = f.protocol_version {
        parts.push(format!("protocol {v}"));
    }
    if let Some(who) = f.agent_info.as_ref().and_then(handshake::AgentInfo::line) {
        parts.push(who);
    }
    parts.push(
        std::iter::once(bin)
            .chain(f.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
    );
    parts.join(" · ")
}

/// The findings as people read them: one block per agent, then what to do.
fn human(findings: &[Finding], custom: bool, s: &Styles) -> String {
    let mut out = String::new();
    // Each hint and each thing to do is said once, under the first row it is for.
    let mut said: Vec<&str> = Vec::new();
    for f in findings {
        let mark = if !f.problems.is_empty() {
            s.warn.apply_to("!").to_string()
        } else if f.binary.is_some() {
            s.ok.apply_to("✓").to_string()
        } else {
            s.dim.apply_to("-").to_string()
        };
        let default = if f.default { " (default)" } else { "" };
        let over = if f.via == "acp" { " over ACP" } else { "" };
        let what = match (&f.binary, &f.version, f.tested) {
            (None, _, _) => "not installed".to_owned(),
            (Some(bin), _, _) if f.via == "acp" => acp_line(f, bin),
            (Some(bin), None, _) => format!("version unknown · {bin}"),
            (Some(bin), Some(v), Some(true)) => format!("{v}{} · tested · {bin}", from(f)),
            (Some(bin), Some(v), _) if f.major_tested == Some(false) => format!(
                "{v}{} · a major version runbook was not tested with (tested: {}) · {bin}",
                from(f),
                f.tested_versions.join(", ")
            ),
            (Some(bin), Some(v), _) if f.newer == Some(true) => format!(
                "{v}{} · newer than runbook knows (tested up to {}) · {bin}",
                from(f),
                f.newest_tested.unwrap_or_default()
            ),
            (Some(bin), Some(v), _) => format!(
                "{v}{} · not tested (tested: {}) · {bin}",
                from(f),
                f.tested_versions.join(", ")
            ),
        };
        out.push_str(&format!(
            "{mark} {}{over}{default}: {what}\n",
            s.bold.apply_to(f.agent)
        ));
        let model = match (&f.model, &f.model_from, f.price) {
            (Some(m), Some(from), Some(price)) => {
                let from = if from == "runbook" {
                    "the model setting".to_owned()
                } else {
                    from.clone()
                };
                let price = match price {
                    "known" => "priced by runbook's table",
                    "user" => "priced by your prices setting",
                    _ => "no price: cost unknown",
                };
                format!("model {m} (from {from}) · {price}")
            }
            _ => "model chosen by the agent at run time".to_owned(),
        };
        if f.via == "native" && (f.binary.is_some() || f.default) {
            out.push_str(&format!("    {}\n", s.dim.apply_to(model)));
        }
        if let (Some(hint), true) = (&f.hint, f.problems.is_empty())
            && once(&mut said, hint)
        {
            out.push_str(&format!("    {}\n", s.dim.apply_to(format!("→ {hint}"))));
        }
        for problem in &f.problems {
            out.push_str(&format!("    {}\n", s.warn.apply_to(&problem.what)));
            if let Some(todo) = problem.todo.as_deref().filter(|t| once(&mut said, t)) {
                out.push_str(&format!("    → {todo}\n"));
            }
        }
    }
    if custom {
        out.push_str("(`agent_cmd` or `acp_cmd` is set: `runbook run` starts that command, not these agents)\n");
    }
    out
}

/// Whether `text` is new to `said`, which then holds it.
fn once<'a>(said: &mut Vec<&'a str>, text: &'a str) -> bool {
    if said.contains(&text) {
        return false;
    }
    said.push(text);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_price_is_known_from_the_table_the_users_or_not_at_all() {
        let shipped = PriceTable::new(BTreeMap::new());
        assert_eq!(price_status(&shipped, "gpt-5.5"), "known");
        assert_eq!(price_status(&shipped, "no-such-model"), "unknown");
        let mut user = BTreeMap::new();
        user.insert(
            "my-model".to_owned(),
            crate::prices::Price {
                input: 1.0,
                cached_input: 0.1,
                output: 2.0,
                cache_write: None,
            },
        );
        assert_eq!(price_status(&PriceTable::new(user), "my-model"), "user");
    }
}
