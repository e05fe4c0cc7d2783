//! The sandbox of `--sandbox`: Linux Landlock rules that the agent's processes (and checks, and
//! repair turns) are started under. Writes only where the policy allows, reads everywhere but
//! its deny list, TCP connections only to its ports, no signals to processes outside, no
//! abstract unix sockets outside. The rules are made once per run, here, in runbook; each child
//! restricts itself with them between fork and exec ([`Prepared::apply`]), so runbook itself,
//! and its observers, are never restricted. Where Landlock is missing or too old, bubblewrap
//! ([`bwrap`]) keeps the writes and reads, and the record says what it does not keep.

pub(crate) mod bwrap;
mod denial;
mod links;
mod walk;

use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::os::unix::fs::DirBuilderExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use landlock::{
    ABI, Access as _, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible as _, NetPort,
    PathBeneath, PathFd, Ruleset, RulesetAttr as _, RulesetCreatedAttr as _, Scope,
};

pub(crate) use denial::is_denial;

/// The oldest Landlock ABI `--sandbox` runs with: 6 (Linux 6.12) is the first that can refuse
/// signals to processes outside the sandbox; 4 (Linux 6.7) brought TCP ports.
pub(crate) const MIN_ABI: u32 = 6;
/// The Landlock ABI whose rights runbook asks for: nothing newer is needed.
const TARGET: ABI = ABI::V6;

/// Device files every program expects to write: the bit bucket, terminals, random sources and
/// shared memory. What else is in `/dev` is not writable (nor was it to a user, in the main).
const DEVICES: [&str; 9] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
];

/// What the agent's processes may do, before it is made into rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Policy {
    /// Directories (or files) written in, with all below them.
    pub write: Vec<PathBuf>,
    /// Paths never read, nor written, nor listed, with all below them.
    pub read_deny: Vec<PathBuf>,
    /// TCP ports connections may go to.
    pub ports: Vec<u16>,
}

/// The kernel's Landlock ABI: `None` when Landlock is not built in or not enabled at boot.
pub(crate) fn abi() -> Option<u32> {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) only returns
    // the ABI version (or -1); it reads no memory.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    u32::try_from(v).ok().filter(|v| *v > 0)
}

/// Why `--sandbox` cannot run on this kernel, in a line; `None` when it can.
pub(crate) fn unavailable(abi: Option<u32>) -> Option<String> {
    match abi {
        None => Some(
            "--sandbox needs Linux Landlock, which this kernel does not have (not built in, or not in the `lsm=` boot list); run without --sandbox, or on Linux 6.12 or newer with Landlock enabled".to_owned(),
        ),
        Some(v) if v < MIN_ABI => Some(format!(
            "--sandbox needs Landlock ABI {MIN_ABI} (Linux 6.12) or newer to keep signals and ports in; this kernel has ABI {v}: run without --sandbox, or on a newer kernel"
        )),
        Some(_) => None,
    }
}

/// What keeps the rules: Landlock's ruleset, or bubblewrap with its options.
#[derive(Debug, Clone)]
enum Enforcer {
    Landlock(Arc<OwnedFd>),
    Bwrap {
        program: PathBuf,
        options: Vec<OsString>,
    },
}

/// The rules of a run, made once, for each of its processes to restrict itself with.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    enforcer: Enforcer,
    /// The kernel's Landlock ABI; `None` under bubblewrap.
    pub abi: Option<u32>,
    /// The policy as enforced: paths made absolute and resolved, the ports sorted.
    pub policy: Policy,
}

impl Prepared {
    /// Has `command`'s process restrict itself, and so all it starts, just before it runs its
    /// program. Register it last: what runs after it in the child is restricted too.
    pub(crate) fn apply(&self, command: &mut std::process::Command) {
        let ruleset = match &self.enforcer {
            Enforcer::Landlock(ruleset) => Arc::clone(ruleset),
            Enforcer::Bwrap { program, options } => {
                return through_bwrap(command, program, options);
            }
        };
        // SAFETY: between fork and exec only prctl(2) and landlock_restrict_self(2), both
        // async-signal-safe, are called, on a descriptor `ruleset` keeps open.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let fd = ruleset.as_raw_fd();
                if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

/// Has `command`'s process become `bwrap` running its program, just before it would run it
/// (its directory and descriptors already set), with the environment `command` would have
/// given it: the child sets that only when it runs the program itself, after this. Nothing of
/// `command` may change after.
fn through_bwrap(command: &mut std::process::Command, program: &Path, options: &[OsString]) {
    let args = command.get_args().map(ToOwned::to_owned);
    let argv = bwrap::argv(program, options, command.get_program(), args);
    let argv = argv.zip(environment(command)).map(|(strings, env)| {
        let pointers = Argv::pointers(&strings);
        let env_pointers = Argv::pointers(&env);
        Argv {
            strings,
            pointers,
            _env: env,
            env_pointers,
        }
    });
    // SAFETY: between fork and exec only prctl(2) and execv(2), async-signal-safe, are called,
    // on strings and pointers made before the fork and kept alive by the closure.
    unsafe {
        command.pre_exec(move || {
            let Some(argv) = &argv else {
                return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
            };
            // What runbook would have the child do after this (it never returns here): die
            // with runbook.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::execve(
                argv.strings[0].as_ptr(),
                argv.pointers.as_ptr(),
                argv.env_pointers.as_ptr(),
            );
            Err(std::io::Error::last_os_error())
        });
    }
}

/// A command line and environment made for execve(2): the strings and the pointers to them.
struct Argv {
    strings: Vec<CString>,
    pointers: Vec<*const libc::c_char>,
    /// `NAME=value`, each: kept for `env_pointers`, which point into it.
    _env: Vec<CString>,
    env_pointers: Vec<*const libc::c_char>,
}

impl Argv {
    /// Pointers to `strings`, then a null one.
    fn pointers(strings: &[CString]) -> Vec<*const libc::c_char> {
        let mut pointers: Vec<*const libc::c_char> = strings.iter().map(|s| s.as_ptr()).collect();
        pointers.push(std::ptr::null());
        pointers
    }
}

/// The environment `command` gives its program: runbook's own, with what `command` sets and
/// removes; `None` when a part holds a NUL byte.
fn environment(command: &std::process::Command) -> Option<Vec<CString>> {
    use std::os::unix::ffi::OsStrExt as _;
    let mut vars: std::collections::BTreeMap<OsString, OsString> = std::env::vars_os().collect();
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => vars.insert(name.to_owned(), value.to_owned()),
            None => vars.remove(name),
        };
    }
    vars.iter()
        .map(|(name, value)| {
            let mut pair = name.as_bytes().to_vec();
            pair.push(b'=');
            pair.extend_from_slice(value.as_bytes());
            CString::new(pair).ok()
        })
        .collect()
}

// SAFETY: the pointers point into `strings` and `env`, owned alongside and never changed; they
// are only read, in the child.
unsafe impl Send for Argv {}
// SAFETY: as above.
unsafe impl Sync for Argv {}

/// Which enforcer `--sandbox` asks for (`--sandbox=auto|landlock|bwrap`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum By {
    /// Landlock where it can keep the whole promise, else bubblewrap if installed.
    Auto,
    Landlock,
    Bwrap,
}

impl By {
    /// Every choice, in the order `--help` and `runbook doctor` name them.
    pub(crate) const ALL: [By; 3] = [By::Auto, By::Landlock, By::Bwrap];

    /// How the command line and the configuration name it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            By::Auto => "auto",
            By::Landlock => "landlock",
            By::Bwrap => "bwrap",
        }
    }

    /// How much of the promise it keeps, least first: bubblewrap keeps no ports nor signals,
    /// `auto` may come to bubblewrap, Landlock keeps it all (or refuses to start).
    pub(crate) fn strength(self) -> u8 {
        match self {
            By::Bwrap => 1,
            By::Auto => 2,
            By::Landlock => 3,
        }
    }
}

/// The enforcer `by` comes to on this machine, or why none can run, in a line.
pub(crate) fn choose(by: By) -> Result<By, String> {
    decide(by, abi(), bwrap::find().is_some())
}

/// The enforcer `by` comes to with the kernel's Landlock ABI `abi` and bubblewrap installed or
/// not. An enforcer named is the one used, or refused: never another in its place.
fn decide(by: By, abi: Option<u32>, bwrap: bool) -> Result<By, String> {
    let landlock = unavailable(abi);
    match by {
        By::Landlock => match landlock {
            None => Ok(By::Landlock),
            Some(_) => Err(format!(
                "--sandbox=landlock needs Landlock ABI {MIN_ABI} (Linux 6.12) or newer, and this kernel has {}: use --sandbox=bwrap (bubblewrap: writes and reads only), or run without --sandbox",
                abi.map_or("no Landlock (not built in, or not in the `lsm=` boot list)".to_owned(), |v| format!("ABI {v}"))
            )),
        },
        By::Bwrap if bwrap => Ok(By::Bwrap),
        By::Bwrap => Err(
            "--sandbox=bwrap needs bubblewrap (`bwrap`), which is not on PATH: install it (apt-get install bubblewrap) or use --sandbox=landlock".to_owned(),
        ),
        By::Auto => match (landlock, bwrap) {
            (None, _) => Ok(By::Landlock),
            (Some(_), true) => Ok(By::Bwrap),
            (Some(why), false) => Err(format!(
                "{why}; or install bubblewrap (`bwrap`) for --sandbox=bwrap"
            )),
        },
    }
}

/// Makes `policy` into bubblewrap's options. An error says, in a line, what could not be done.
pub(crate) fn prepare_bwrap(policy: &Policy) -> Result<Prepared, String> {
    let program = bwrap::find().ok_or("--sandbox=bwrap needs bubblewrap (`bwrap`), which is not on PATH: install it (apt-get install bubblewrap)")?;
    let policy = resolved(policy)?;
    Ok(Prepared {
        enforcer: Enforcer::Bwrap {
            program,
            options: bwrap::options(&policy),
        },
        abi: None,
        policy: Policy {
            ports: Vec::new(),
            ..policy
        },
    })
}

impl Prepared {
    /// What enforces the rules: `landlock` or `bwrap`.
    pub(crate) fn by(&self) -> &'static str {
        match self.enforcer {
            Enforcer::Landlock(_) => "landlock",
            Enforcer::Bwrap { .. } => "bwrap",
        }
    }

    /// What the promise holds that this enforcer does not keep.
    pub(crate) fn not_enforced(&self) -> Vec<String> {
        match self.enforcer {
            Enforcer::Landlock(_) => Vec::new(),
            Enforcer::Bwrap { .. } => bwrap::NOT_ENFORCED
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
        }
    }
}

/// Makes `policy` into Landlock rules. An error says, in a line, what could not be done; the
/// run must not start then.
pub(crate) fn prepare(policy: &Policy) -> Result<Prepared, String> {
    let abi = abi();
    if let Some(why) = unavailable(abi) {
        return Err(why);
    }
    let abi = abi.unwrap_or_default();
    let policy = resolved(policy)?;
    let ruleset = rules(&policy)
        .map_err(|e| format!("cannot set up the sandbox: {e}"))?
        .ok_or("cannot set up the sandbox: Landlock made no ruleset")?;
    Ok(Prepared {
        enforcer: Enforcer::Landlock(Arc::new(ruleset)),
        abi: Some(abi),
        policy,
    })
}

/// The enforcer `by` comes to here, once `policy` is found able to be made into its rules and,
/// for bubblewrap, `bwrap` is found able to start (a probe through it): an error says why not,
/// in a line. Nothing is made yet.
pub(crate) fn check(policy: &Policy, by: By) -> Result<By, String> {
    let by = choose(by)?;
    let policy = resolved(policy)?;
    if by == By::Bwrap {
        let program = bwrap::find().ok_or("--sandbox=bwrap needs bubblewrap (`bwrap`), which is not on PATH: install it (apt-get install bubblewrap)")?;
        bwrap::probe(&program, &bwrap::options(&policy))?;
    }
    Ok(by)
}

/// The policy with every path absolute and its links resolved (the kernel's rules are on what
/// a path leads to), its lists sorted and without repeats. A path to write in that holds a path
/// to keep unread (one that exists: there is nothing to read in one that does not) would open
/// that one to writing: refused.
pub(crate) fn resolved(policy: &Policy) -> Result<Policy, String> {
    // What a denied path's links lead to is denied too: a key kept as a link to a dotfiles
    // repository is read where it lies.
    let deny = denied(policy);
    let write = sorted(policy.write.iter().map(|p| real(p)));
    if let Some((w, d)) = conflict(policy) {
        return Err(format!(
            "the sandbox would let the agent write in {}, which holds {}, a path it must not read: run where it does not, or write less",
            w.display(),
            d.display()
        ));
    }
    for w in &write {
        if let Some(d) = deny.iter().find(|d| w.starts_with(d)) {
            return Err(format!(
                "the sandbox would keep the agent from reading {}, which holds {}, where it works (a link in a denied path leads there): take the link out, or run elsewhere",
                d.display(),
                w.display()
            ));
        }
    }
    let mut ports = policy.ports.clone();
    ports.sort_unstable();
    ports.dedup();
    Ok(Policy {
        write,
        read_deny: deny,
        ports,
    })
}

/// The paths never read, links resolved, with what their links lead to.
fn denied(policy: &Policy) -> Vec<PathBuf> {
    let linked = links::targets(&policy.read_deny);
    sorted(policy.read_deny.iter().map(|p| real(p)).chain(linked))
}

/// The first path of `policy.write` (as given) that holds a denied path which exists, with
/// that path (links resolved).
pub(crate) fn conflict(policy: &Policy) -> Option<(PathBuf, PathBuf)> {
    let deny = denied(policy);
    policy.write.iter().find_map(|given| {
        let w = real(given);
        let d = deny
            .iter()
            .find(|d| d.starts_with(&w) && std::fs::symlink_metadata(d).is_ok())?;
        Some((given.clone(), d.clone()))
    })
}

fn sorted(paths: impl Iterator<Item = PathBuf>) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = paths.collect();
    paths.sort();
    paths.dedup();
    paths
}

/// `path` with its links resolved, as far as it exists.
fn real(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut at = path.to_path_buf();
    loop {
        if let Ok(real) = at.canonicalize() {
            return rest.iter().rev().fold(real, |p, part| p.join(part));
        }
        match (at.file_name().map(ToOwned::to_owned), at.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                at = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// The ruleset: reads beside every denied path, writes in the write paths and devices, TCP
/// connections to the ports, and both scopes.
fn rules(policy: &Policy) -> Result<Option<OwnedFd>, landlock::RulesetError> {
    let read = AccessFs::ReadFile | AccessFs::ReadDir;
    let write = AccessFs::from_write(TARGET);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(read | write)?
        .handle_access(AccessNet::ConnectTcp)?
        .scope(Scope::from_all(TARGET))?
        .create()?;
    for path in walk::readable(&policy.read_deny) {
        ruleset = add(ruleset, &path, read)?;
    }
    let devices = DEVICES.iter().map(PathBuf::from);
    for path in policy.write.iter().cloned().chain(devices) {
        let rights = if policy.read_deny.iter().any(|d| path.starts_with(d)) {
            write
        } else {
            read | write
        };
        ruleset = add(ruleset, &path, rights)?;
    }
    for port in &policy.ports {
        ruleset = ruleset.add_rule(NetPort::new(*port, AccessNet::ConnectTcp))?;
    }
    Ok(ruleset.into())
}

/// A rule for `path` (skipped when it does not exist): a file gets only the rights a file can
/// have.
fn add(
    ruleset: landlock::RulesetCreated,
    path: &Path,
    rights: BitFlags<AccessFs>,
) -> Result<landlock::RulesetCreated, landlock::RulesetError> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(ruleset);
    };
    let Ok(fd) = PathFd::new(path) else {
        return Ok(ruleset);
    };
    let rights = if meta.is_dir() {
        rights
    } else {
        rights & AccessFs::from_file(TARGET)
    };
    ruleset.add_rule(PathBeneath::new(fd, rights))
}

/// Makes each of `dirs` that is missing (0700), so that an agent can keep its state there; an
/// agent could not make it itself inside the sandbox.
pub(crate) fn make_dirs(dirs: &[PathBuf]) {
    for dir in dirs {
        let _ = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_old_or_missing_landlock_is_refused_in_a_line() {
        let missing = unavailable(None).unwrap();
        assert!(
            missing.contains("does not have") && !missing.contains('\n'),
            "{missing}"
        );
        let old = unavailable(Some(4)).unwrap();
        assert!(old.contains("ABI 6") && old.contains("ABI 4"), "{old}");
        assert_eq!(unavailable(Some(MIN_ABI)), None);
        assert_eq!(unavailable(Some(7)), None);
    }

    #[test]
    fn an_enforcer_named_is_the_one_used_or_refused_never_another() {
        let ok = |by, abi, bwrap| decide(by, abi, bwrap);
        assert_eq!(ok(By::Auto, Some(7), true), Ok(By::Landlock));
        assert_eq!(ok(By::Auto, Some(4), true), Ok(By::Bwrap));
        assert_eq!(ok(By::Auto, None, true), Ok(By::Bwrap));
        assert_eq!(ok(By::Bwrap, Some(7), true), Ok(By::Bwrap));
        assert_eq!(ok(By::Landlock, Some(6), false), Ok(By::Landlock));
        for (by, abi, bwrap) in [
            (By::Landlock, Some(4), true),
            (By::Landlock, None, true),
            (By::Bwrap, Some(7), false),
            (By::Auto, Some(5), false),
            (By::Auto, None, false),
        ] {
            let why = ok(by, abi, bwrap).unwrap_err();
            assert!(!why.contains('\n'), "{why}");
            assert!(why.contains("--sandbox"), "says what to do: {why}");
        }
        let old = ok(By::Landlock, Some(4), true).unwrap_err();
        assert!(
            old.contains("ABI 4") && old.contains("--sandbox=bwrap"),
            "{old}"
        );
        assert!(By::Bwrap.strength() < By::Auto.strength());
        assert!(By::Auto.strength() < By::Landlock.strength());
    }

    #[test]
    fn a_write_path_holding_a_denied_path_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(home.join("work")).unwrap();
        let policy = |write: &str| Policy {
            write: vec![home.join(write)],
            read_deny: vec![home.join(".ssh")],
            ports: vec![443, 443, 80],
        };
        let why = resolved(&policy(".")).unwrap_err();
        assert!(why.contains(".ssh") && !why.contains('\n'), "{why}");
        let fine = resolved(&policy("work")).unwrap();
        assert_eq!(fine.ports, [80, 443]);
        assert_eq!(fine.write, [home.join("work")]);
    }
}
