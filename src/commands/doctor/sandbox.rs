//! `runbook doctor`'s word on the sandbox: the kernel's Landlock ABI, whether `--sandbox` can
//! run here, and what it would enforce for the default agent in this directory.

use serde::Serialize;

use crate::agent::AgentKind;
use crate::config::{Config, keys};
use crate::render::Styles;
use crate::sandbox;

/// What `--sandbox` would be here.
#[derive(Debug, Serialize)]
pub(super) struct Report {
    /// The kernel's Landlock ABI; absent: no Landlock.
    pub abi: Option<u32>,
    /// Whether the configuration turns it on (`sandbox`, `--sandbox`).
    pub on: bool,
    /// Where bubblewrap (`bwrap`) is, the sandbox where Landlock is missing or too old; absent:
    /// not installed.
    pub bwrap: Option<String>,
    /// What would enforce it: `landlock` or `bwrap`; absent when nothing can.
    pub by: Option<String>,
    /// Why it cannot run here; absent when it can.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Where the agent could write, links resolved.
    pub write: Vec<String>,
    /// What it could not read.
    pub read_deny: Vec<String>,
    /// The TCP ports it could connect to.
    pub ports: Vec<u16>,
}

/// The sandbox `--sandbox` would make for `agent` with `config` and the agent's variables `env`.
pub(super) fn examine(config: &Config, agent: AgentKind, env: &[(String, String)]) -> Report {
    let abi = sandbox::abi();
    let cwd = std::env::current_dir().unwrap_or_default();
    let (policy, _) = crate::commands::run::sandbox::wanted(config, agent.adapter(), env, &cwd);
    let (policy, conflict) = match sandbox::resolved(&policy) {
        Ok(p) => (p, None),
        Err(why) => (policy, Some(why)),
    };
    let shown = |paths: &[std::path::PathBuf]| -> Vec<String> {
        paths.iter().map(|p| p.display().to_string()).collect()
    };
    let by = sandbox::choose(sandbox::By::Auto);
    Report {
        abi,
        on: config.value(&keys::SANDBOX),
        bwrap: sandbox::bwrap::find().map(|p| p.display().to_string()),
        by: by.as_ref().ok().map(|b| {
            if *b == sandbox::By::Bwrap {
                "bwrap"
            } else {
                "landlock"
            }
            .to_owned()
        }),
        problem: by.err().or(conflict),
        write: shown(&policy.write),
        read_deny: shown(&policy.read_deny),
        ports: policy.ports,
    }
}

/// The report as people read it.
pub(super) fn human(r: &Report, s: &Styles) -> String {
    let abi = r
        .abi
        .map_or("no Landlock".to_owned(), |v| format!("Landlock ABI {v}"));
    let state = if r.on { "on" } else { "off (--sandbox)" };
    let mark = match (&r.problem, r.on) {
        (Some(_), true) => s.warn.apply_to("!").to_string(),
        (Some(_), false) => s.dim.apply_to("-").to_string(),
        (None, _) => s.ok.apply_to("✓").to_string(),
    };
    let bwrap = r
        .bwrap
        .as_ref()
        .map_or("no bwrap".to_owned(), |p| format!("bwrap at {p}"));
    let mut out = format!(
        "{mark} {}: {abi} · {bwrap} · {state}\n",
        s.bold.apply_to("sandbox")
    );
    if let Some(problem) = &r.problem {
        out.push_str(&format!("    {}\n", s.warn.apply_to(problem)));
        return out;
    }
    if r.by.as_deref() == Some("bwrap") {
        out.push_str(&format!(
            "    {}\n",
            s.dim.apply_to(format!(
                "by bwrap: writes in {}; no reads of {}; not enforced: {}",
                r.write.join(", "),
                r.read_deny.join(", "),
                sandbox::bwrap::NOT_ENFORCED.join(", ")
            ))
        ));
        return out;
    }
    let ports: Vec<String> = r.ports.iter().map(u16::to_string).collect();
    for (what, list) in [
        ("writes in", r.write.join(", ")),
        ("no reads of", r.read_deny.join(", ")),
        ("TCP to ports", ports.join(", ")),
    ] {
        out.push_str(&format!(
            "    {}\n",
            s.dim.apply_to(format!("{what}: {list}"))
        ));
    }
    out.push_str(&format!(
        "    {}\n",
        s.dim
            .apply_to("no signals to processes outside the run; no abstract sockets outside it")
    ));
    out
}
