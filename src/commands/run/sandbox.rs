//! The sandbox a run asks for (`--sandbox`): what the agent may write, read and connect to,
//! from the configuration, the agent's own paths and its provider's address. Checked before
//! anything starts; made into rules once the run's directory, which holds its temp dir, exists.

use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};

use crate::agent::Adapter;
use crate::config::{Config, Value, keys};
use crate::exit::Error;
use crate::sandbox::{self, By, Policy, Prepared};

/// Secrets under the home directory no sandboxed agent reads.
const HOME_SECRETS: [&str; 5] = [".ssh", ".aws", ".config/gcloud", ".gnupg", ".netrc"];
/// The port every sandboxed agent may connect to: HTTPS.
const HTTPS: u16 = 443;

/// The policy the configuration asks for, with the enforcer it comes to here (checked against
/// the kernel; bubblewrap found able to start); `None`: no sandbox.
pub(super) fn policy(
    config: &Config,
    adapter: &dyn Adapter,
    env: &[(String, String)],
    cwd: &Path,
) -> Result<Option<(Policy, By)>, Error> {
    let Some(asked) = config.value(&keys::SANDBOX) else {
        return Ok(None);
    };
    let (policy, own) = wanted(config, adapter, env, cwd);
    let by = sandbox::check(&policy, asked).map_err(Error::Usage)?;
    // The agent could not make them itself: their parents are not its to write in.
    let dirs: Vec<PathBuf> = own
        .into_iter()
        .filter(|p| p.extension().is_none())
        .collect();
    sandbox::make_dirs(&dirs);
    Ok(Some((policy, by)))
}

/// What `--sandbox` would ask for here, whether it is on or not (`runbook doctor` shows it),
/// with the agent's own paths (also in the policy's `write`).
pub(crate) fn wanted(
    config: &Config,
    adapter: &dyn Adapter,
    env: &[(String, String)],
    cwd: &Path,
) -> (Policy, Vec<PathBuf>) {
    let var = |name: &str| -> Option<PathBuf> {
        env.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| PathBuf::from(v))
            .or_else(|| std::env::var_os(name).map(PathBuf::from))
            .filter(|v| !v.as_os_str().is_empty())
    };
    let own = adapter.own_paths(&var, cwd);
    let listed = |key: &keys::Typed<PathBuf>| -> Vec<PathBuf> {
        config
            .list(&key.key)
            .filter_map(|s| match &s.value {
                Some(Value::Path(p)) => Some(p.clone()),
                _ => None,
            })
            .collect()
    };
    let mut write = vec![cwd.to_path_buf()];
    write.extend(own.write.iter().cloned());
    write.extend(listed(&keys::SANDBOX_WRITE));
    let mut read_deny = default_deny(var("HOME").as_deref());
    read_deny.extend(listed(&keys::SANDBOX_READ_DENY));
    let mut ports = vec![HTTPS];
    ports.extend(
        config
            .list(&keys::SANDBOX_PORTS.key)
            .filter_map(|s| match s.value {
                Some(Value::Port(p)) => Some(p),
                _ => None,
            }),
    );
    ports.extend(provider_ports(env, &own.provider_files));
    let policy = Policy {
        write,
        read_deny,
        ports,
    };
    (policy, own.write)
}

/// OpenCode over ACP serves itself on a loopback port it picks at random, which the sandbox
/// would refuse: runbook picks a free one instead (`--port N`, unless one is given) and allows it.
pub(super) fn own_server(adapter: &dyn Adapter, args: &mut Vec<String>, policy: &mut Policy) {
    if !(adapter.speaks_acp() && adapter.name() == "opencode") {
        return;
    }
    let given = args
        .iter()
        .position(|a| a == "--port")
        .and_then(|i| args.get(i + 1)?.parse::<u16>().ok())
        .or_else(|| {
            args.iter()
                .find_map(|a| a.strip_prefix("--port=")?.parse().ok())
        });
    let port = given.or_else(|| {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).ok()?;
        let port = listener.local_addr().ok()?.port();
        args.extend(["--port".to_owned(), port.to_string()]);
        Some(port)
    });
    policy.ports.extend(port);
}

/// The run's temp dir, `RUN_DIR/tmp`, made here: `TMPDIR` for every process of the run,
/// sandboxed or not, and removed when the run ends. What an agent leaves in its temp dir is not
/// the run's record (OpenCode leaves a 5.5 MB library there at every start).
pub(super) fn make_tmp(run_dir: &Path) -> Result<PathBuf, Error> {
    let tmp = run_dir.join("tmp");
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&tmp)
        .map_err(|e| Error::Usage(format!("cannot make {}: {e}", tmp.display())))?;
    Ok(tmp)
}

/// Makes `policy` into the rules of `by` (Landlock or bubblewrap, as [`policy`] chose), with
/// the run's temp dir `tmp` ([`make_tmp`]) to write in.
pub(super) fn prepare(policy: &Policy, by: By, tmp: &Path) -> Result<Prepared, Error> {
    let mut policy = policy.clone();
    policy.write.push(tmp.to_path_buf());
    let prepared = match by {
        By::Bwrap => sandbox::prepare_bwrap(&policy),
        By::Landlock | By::Auto => sandbox::prepare(&policy),
    };
    prepared.map_err(Error::Usage)
}

/// The record of a prepared sandbox, for `run.started` and the receipt.
pub(super) fn record(prepared: &Prepared) -> crate::event::Sandbox {
    let shown = |paths: &[PathBuf]| paths.iter().map(|p| p.display().to_string()).collect();
    crate::event::Sandbox {
        by: prepared.by().to_owned(),
        abi: prepared.abi,
        not_enforced: prepared.not_enforced(),
        write: shown(&prepared.policy.write),
        read_deny: shown(&prepared.policy.read_deny),
        ports: prepared.policy.ports.clone(),
        denied: 0,
    }
}

/// The secrets under `home` (and under the user's home as the system knows it, when that is
/// another), other users' homes in `/home`, and `/root` for anyone but root.
fn default_deny(home: Option<&Path>) -> Vec<PathBuf> {
    let uid = nix::unistd::getuid();
    let system_home = nix::unistd::User::from_uid(uid)
        .ok()
        .flatten()
        .map(|u| u.dir);
    let homes: Vec<PathBuf> = home
        .map(Path::to_path_buf)
        .into_iter()
        .chain(system_home)
        .collect();
    let mut deny: Vec<PathBuf> = homes
        .iter()
        .flat_map(|h| HOME_SECRETS.iter().map(move |s| h.join(s)))
        .collect();
    let own = |p: &Path| homes.iter().any(|h| h.starts_with(p) || p.starts_with(h));
    if let Ok(entries) = std::fs::read_dir("/home") {
        deny.extend(entries.flatten().map(|e| e.path()).filter(|p| !own(p)));
    }
    if !uid.is_root() && !own(Path::new("/root")) {
        deny.push(PathBuf::from("/root"));
    }
    deny
}

/// The ports of the http(s) addresses the agent's variables and its configuration files name:
/// its provider's among them. Of the variables runbook sets for the agent (`[env]`, `.env`),
/// only those that say where requests go (`*_BASE_URL`, `*_PROXY`…) count: a repository sets
/// those only once trusted, while any other (`DOCS=http://host:22`) would open a port untrusted.
fn provider_ports(env: &[(String, String)], files: &[PathBuf]) -> Vec<u16> {
    let mut texts: Vec<String> = std::env::vars_os()
        .filter_map(|(_, v)| v.into_string().ok())
        .chain(
            env.iter()
                .filter(|(name, _)| crate::trust::variable_needs_trust(name))
                .map(|(_, v)| v.clone()),
        )
        .collect();
    for file in files {
        let read = crate::files::read(
            file,
            crate::files::CONFIG_LIMIT,
            crate::files::Links::Follow,
        );
        texts.extend(read.ok().and_then(|b| String::from_utf8(b).ok()));
    }
    texts.iter().flat_map(|t| url_ports(t)).collect()
}

/// The port of each `http://` or `https://` address in `text` (80 and 443 when none is written).
fn url_ports(text: &str) -> Vec<u16> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("://") {
        let scheme_start = text[..i]
            .rfind(|c: char| !c.is_ascii_alphanumeric())
            .map_or(0, |j| j + 1);
        let default = match text[scheme_start..i].to_ascii_lowercase().as_str() {
            "http" => 80,
            "https" => 443,
            _ => continue,
        };
        let rest = &text[i + 3..];
        let end = rest
            .find(|c: char| matches!(c, '/' | '"' | '\'' | '?' | '#') || c.is_whitespace())
            .unwrap_or(rest.len());
        let host = &rest[..end];
        let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
        let port = match host.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(':') && !p.contains(']') => p.parse().ok(),
            _ => Some(default),
        };
        out.extend(port.filter(|p| *p > 0));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_providers_port_is_read_from_its_address() {
        assert_eq!(url_ports("http://127.0.0.1:41234/v1"), [41234]);
        assert_eq!(
            url_ports(r#"{"baseURL": "https://api.example.com/v1", "x": "http://h"}"#),
            [443, 80]
        );
        assert_eq!(url_ports("http://user:pw@[::1]:8080/"), [8080]);
        assert!(url_ports("postgres://db:5432/app").is_empty());
    }
}
