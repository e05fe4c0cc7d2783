//! The sandbox where Landlock cannot be had: bubblewrap (`bwrap`), if installed. The agent's
//! process becomes `bwrap` between fork and exec, which runs the program in a mount namespace
//! where `/` is read-only, the write paths are writable and each denied path is an empty
//! `tmpfs` (a denied file: an empty file). Not kept in: the network (bwrap cannot filter
//! ports), signals to processes outside the run, abstract unix sockets.

use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use super::Policy;

/// What bubblewrap does not hold in, for the receipt and `runbook doctor`.
pub(crate) const NOT_ENFORCED: [&str; 3] = [
    "tcp ports",
    "signals outside the run",
    "abstract unix sockets",
];

/// The `bwrap` program on `PATH`, if installed.
pub(crate) fn find() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("bwrap"))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| {
                use std::os::unix::fs::PermissionsExt as _;
                m.is_file() && m.permissions().mode() & 0o111 != 0
            })
        })
}

/// bwrap's options for `policy` (paths absolute, links resolved), before `--`.
pub(crate) fn options(policy: &Policy) -> Vec<OsString> {
    let mut out: Vec<OsString> = Vec::new();
    let mut push = |parts: &[&OsStr]| out.extend(parts.iter().map(|p| p.to_os_string()));
    push(&[
        "--die-with-parent".as_ref(),
        "--ro-bind".as_ref(),
        "/".as_ref(),
        "/".as_ref(),
    ]);
    push(&["--dev-bind".as_ref(), "/dev".as_ref(), "/dev".as_ref()]);
    for deny in &policy.read_deny {
        match std::fs::metadata(deny) {
            Ok(m) if m.is_dir() => push(&["--tmpfs".as_ref(), deny.as_os_str()]),
            Ok(_) => push(&["--ro-bind".as_ref(), "/dev/null".as_ref(), deny.as_os_str()]),
            Err(_) => {}
        }
    }
    for write in &policy.write {
        if std::fs::metadata(write).is_ok() {
            push(&["--bind".as_ref(), write.as_os_str(), write.as_os_str()]);
        }
    }
    out
}

/// The whole command line `bwrap` runs `program` with `args` under, made before the fork (a
/// child may not allocate): `None` when a part holds a NUL byte.
pub(crate) fn argv(
    bwrap: &Path,
    options: &[OsString],
    program: &OsStr,
    args: impl Iterator<Item = OsString>,
) -> Option<Vec<CString>> {
    let c = |s: &OsStr| CString::new(s.as_bytes()).ok();
    let mut out = vec![c(bwrap.as_os_str())?];
    for part in options {
        out.push(c(part)?);
    }
    out.push(c("--".as_ref())?);
    out.push(c(program)?);
    for arg in args {
        out.push(c(&arg)?);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::disallowed_methods, reason = "a test's fixture")]
    fn denied_paths_are_hidden_and_write_paths_bound_writable() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".ssh")).unwrap();
        std::fs::create_dir_all(root.join("work")).unwrap();
        std::fs::File::create(root.join(".netrc")).unwrap();
        let policy = Policy {
            write: vec![root.join("work"), root.join("gone")],
            read_deny: vec![root.join(".ssh"), root.join(".netrc"), root.join(".aws")],
            ports: vec![443],
        };
        let got: Vec<String> = options(&policy)
            .iter()
            .map(|o| o.to_string_lossy().into_owned())
            .collect();
        let r = root.display();
        let want: Vec<String> = [
            "--die-with-parent",
            "--ro-bind",
            "/",
            "/",
            "--dev-bind",
            "/dev",
            "/dev",
            "--tmpfs",
            &format!("{r}/.ssh"),
            "--ro-bind",
            "/dev/null",
            &format!("{r}/.netrc"),
            "--bind",
            &format!("{r}/work"),
            &format!("{r}/work"),
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        assert_eq!(got, want, "what does not exist is skipped");
        let argv = argv(
            Path::new("/usr/bin/bwrap"),
            &options(&policy),
            "sh".as_ref(),
            ["-c".into(), "true".into()].into_iter(),
        )
        .unwrap();
        let tail: Vec<_> = argv[argv.len() - 4..].iter().collect();
        assert_eq!(tail, [c"--", c"sh", c"-c", c"true"]);
    }

    /// Through the real bubblewrap (the suite's machines have it: `.ci/install-agents`): a
    /// write outside the work dir is refused, one inside goes through, a key is not there to
    /// read, and the refusal is told as a denial.
    #[test]
    #[allow(clippy::disallowed_methods, reason = "a test's fixture")]
    fn a_process_started_under_bwrap_writes_only_in_the_work_dir_and_reads_no_key() {
        assert!(
            find().is_some(),
            "bubblewrap (`bwrap`) is not installed: .ci/install-agents installs it"
        );
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (home, work) = (root.join("home"), root.join("work"));
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(&work).unwrap();
        std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE").unwrap();
        let prepared = super::super::prepare_bwrap(&Policy {
            write: vec![work.clone()],
            read_deny: vec![home.join(".ssh")],
            ports: vec![443],
        })
        .unwrap();
        assert_eq!((prepared.by(), prepared.abi), ("bwrap", None));
        assert!(prepared.policy.ports.is_empty(), "ports are not claimed");
        let script = format!(
            "echo in > {w}/in.txt; echo out > {r}/out.txt; cat {h}/.ssh/id_ed25519; true",
            w = work.display(),
            r = root.display(),
            h = home.display()
        );
        let mut command = std::process::Command::new("sh");
        command.args(["-c", &script]).current_dir(&work);
        prepared.apply(&mut command);
        let out = command.output().unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(out.status.success(), "{stderr}");
        assert_eq!(
            std::fs::read_to_string(work.join("in.txt")).unwrap(),
            "in\n"
        );
        assert!(!root.join("out.txt").exists(), "{stderr}");
        assert!(!stdout.contains("PRIVATE"), "{stdout}");
        let refusal = stderr
            .lines()
            .find(|l| l.contains("out.txt"))
            .unwrap_or_default();
        assert!(super::super::is_denial(refusal), "{stderr}");
        assert_eq!(
            std::fs::read_to_string(home.join(".ssh/id_ed25519")).unwrap(),
            "PRIVATE"
        );
    }
}
