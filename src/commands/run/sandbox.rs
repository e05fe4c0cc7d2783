//! The sandbox a run asks for (`--sandbox`): what the agent may write, read and connect to,
//! from the configuration, the agent's own paths and its provider's address. Checked before
//! anything starts; made into rules once the run's directory, which holds its temp dir, exists.

use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};

use super::provider_ports::provider_ports;
use crate::agent::Adapter;
use crate::config::{Config, Value, keys};
use crate::exit::Error;
use crate::sandbox::{self, By, Policy, Prepared};
use crate::trust::Given;

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
    (cwd, given): (&Path, &Given),
) -> Result<Option<(Policy, By)>, Error> {
    let Some(asked) = config.value(&keys::SANDBOX) else {
        return Ok(None);
    };
    let (policy, own, held) = wanted(config, adapter, env, (cwd, given));
    for (file, port) in held {
        crate::term::print::warn(format_args!(
            "{} names a provider at port {port}, which the sandbox keeps closed: it is the repository's file, not trusted; pass --allow-port {port} (or --trust for this run)",
            crate::foreign::term::escape(&file.display().to_string())
        ));
    }
    if let Some((write, holds)) = sandbox::conflict(&policy) {
        return Err(Error::Usage(conflict(&write, &holds, cwd, &own)));
    }
    let by = sandbox::check(&policy, asked).map_err(Error::Usage)?;
    // The agent could not make them itself: their parents are not its to write in.
    let dirs: Vec<PathBuf> = own
        .into_iter()
        .filter(|p| p.extension().is_none())
        .collect();
    sandbox::make_dirs(&dirs);
    Ok(Some((policy, by)))
}

/// Why the sandbox cannot let the agent write in `write`, which holds `holds`, a path it must
/// not read, and what to do, as true of this run: where `write` came from (the work dir, the
/// agent's own dirs, or `sandbox.write`).
fn conflict(write: &Path, holds: &Path, cwd: &Path, own: &[PathBuf]) -> String {
    let (what, fix) = if write == cwd {
        (
            "the work dir",
            "run in the project's directory, one that does not hold it".to_owned(),
        )
    } else if own.iter().any(|p| p == write) {
        (
            "the agent's own dir",
            "move the agent's state elsewhere, or run without --sandbox".to_owned(),
        )
    } else {
        (
            "a `sandbox.write` path",
            "take it out of `sandbox.write` (`runbook config --sandbox` shows where it is set)"
                .to_owned(),
        )
    };
    format!(
        "--sandbox would let the agent write in {what}, {}, which holds {}, a path it must not read: {fix}",
        crate::foreign::term::escape(&write.display().to_string()),
        crate::foreign::term::escape(&holds.display().to_string()),
    )
}

/// What `--sandbox` would ask for here, whether it is on or not (`runbook doctor` shows it),
/// with the agent's own paths (also in the policy's `write`), and the ports a repository's
/// file not trusted (`given` for this run) would have opened.
pub(crate) fn wanted(
    config: &Config,
    adapter: &dyn Adapter,
    env: &[(String, String)],
    (cwd, given): (&Path, &Given),
) -> (Policy, Vec<PathBuf>, Vec<(PathBuf, u16)>) {
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
    let repository = |file: &Path| {
        (crate::trust::inside(&config.root, file) || file.starts_with(cwd)) && !given.covers(file)
    };
    let found = provider_ports(env, &own.provider_files, &repository);
    ports.extend(found.open);
    let policy = Policy {
        write,
        read_deny,
        ports,
    };
    (policy, own.write, found.held)
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
