//! `runbook doctor`'s word on the sandbox: the kernel's Landlock ABI, whether `--sandbox` can
//! run here, and what it would enforce for the default agent in this directory.

use serde::Serialize;

use crate::agent::AgentKind;
use crate::config::{Config, keys};
use crate::render::Styles;
use crate::sandbox::{self, By};

/// What `--sandbox` would be here.
#[derive(Debug, Serialize)]
pub(super) struct Report {
    /// The kernel's Landlock ABI; absent: no Landlock.
    pub abi: Option<u32>,
    /// Whether the configuration turns it on (`sandbox`, `--sandbox`).
    pub on: bool,
    /// The enforcer the configuration asks for: `auto`, `landlock` or `bwrap` (`auto` when it
    /// is off: what `--sandbox` would ask for).
    pub asked: String,
    /// Where bubblewrap (`bwrap`) is, the sandbox where Landlock is missing or too old; absent:
    /// not installed.
    pub bwrap: Option<String>,
    /// What would enforce it: `landlock` or `bwrap`; absent when nothing can.
    pub by: Option<String>,
    /// Why it cannot run here; absent when it can.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// What each choice (`--sandbox=auto`, `=landlock`, `=bwrap`) would come to here.
    pub choices: Vec<Choice>,
    /// Where the agent could write, links resolved.
    pub write: Vec<String>,
    /// What it could not read.
    pub read_deny: Vec<String>,
    /// The TCP ports it could connect to.
    pub ports: Vec<u16>,
}

/// What one choice of enforcer would come to here.
#[derive(Debug, Serialize)]
pub(super) struct Choice {
    /// `auto`, `landlock` or `bwrap`.
    pub asked: &'static str,
    /// What would enforce it: `landlock` or `bwrap`; absent when it cannot run here.
    pub by: Option<&'static str>,
    /// Why it cannot run here (bubblewrap tried, as a run would); absent when it can.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// What of the promise it would not keep.
    pub not_enforced: Vec<&'static str>,
}

/// The sandbox `--sandbox` would make for `agent` with `config` and the agent's variables `env`.
pub(super) fn examine(config: &Config, agent: AgentKind, env: &[(String, String)]) -> Report {
    let abi = sandbox::abi();
    let cwd = std::env::current_dir().unwrap_or_default();
    let given = crate::trust::Given::from_env(false);
    let (policy, ..) =
        crate::commands::run::sandbox::wanted(config, agent.adapter(), env, (&cwd, &given));
    let configured = config.value(&keys::SANDBOX);
    let asked = configured.unwrap_or(By::Auto);
    let choices: Vec<Choice> = By::ALL
        .iter()
        .map(|by| {
            let came = sandbox::check(&policy, *by);
            let by_name = came.as_ref().ok().map(|b| b.name());
            Choice {
                asked: by.name(),
                by: by_name,
                not_enforced: match by_name {
                    Some("bwrap") => sandbox::bwrap::NOT_ENFORCED.to_vec(),
                    _ => Vec::new(),
                },
                problem: came.err(),
            }
        })
        .collect();
    let mine = choices
        .iter()
        .find(|c| c.asked == asked.name())
        .expect("every choice is examined");
    let (by, problem) = (mine.by.map(str::to_owned), mine.problem.clone());
    let policy = sandbox::resolved(&policy).unwrap_or(policy);
    let shown = |paths: &[std::path::PathBuf]| -> Vec<String> {
        paths.iter().map(|p| p.display().to_string()).collect()
    };
    Report {
        abi,
        on: configured.is_some(),
        asked: asked.name().to_owned(),
        bwrap: sandbox::bwrap::find().map(|p| p.display().to_string()),
        by,
        problem,
        choices,
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
    let state = if r.on {
        format!("on ({})", r.asked)
    } else {
        "off (--sandbox)".to_owned()
    };
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
    // A reason several choices share (the policy's, not the enforcer's) is said once.
    let mut said: Vec<&str> = Vec::new();
    for choice in &r.choices {
        let line = match choice.problem.as_deref() {
            Some(why) if said.contains(&why) => s
                .warn
                .apply_to(format!(
                    "--sandbox={}: cannot run here, as above",
                    choice.asked
                ))
                .to_string(),
            why => {
                said.extend(why);
                choice_line(choice, r.abi, s)
            }
        };
        out.push_str(&format!("    {line}\n"));
    }
    // Why the choice asked for cannot run is on its line above.
    if r.problem.is_some() {
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

/// What one choice would come to, on a line: `--sandbox=bwrap: bubblewrap; not enforced: …`.
fn choice_line(c: &Choice, abi: Option<u32>, s: &Styles) -> String {
    let flag = format!("--sandbox={}", c.asked);
    let said = match (c.by, &c.problem) {
        (Some("landlock"), _) => format!(
            "Landlock{}: writes, reads, TCP ports, signals",
            abi.map(|v| format!(" ABI {v}")).unwrap_or_default()
        ),
        (Some(_), _) => format!(
            "bubblewrap: writes, reads; not enforced: {}",
            c.not_enforced.join(", ")
        ),
        (None, Some(why)) => return s.warn.apply_to(format!("{flag}: {why}")).to_string(),
        (None, None) => "unknown".to_owned(),
    };
    s.dim.apply_to(format!("{flag}: {said}")).to_string()
}
