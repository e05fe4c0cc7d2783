//! The sandbox where Landlock cannot be had, or where it is asked for (`--sandbox=bwrap`):
//! bubblewrap (`bwrap`), if installed. The agent's process becomes `bwrap` between fork and
//! exec, which runs the program in a mount namespace where `/` is read-only, the write paths are
//! writable and each denied directory an empty, read-only `tmpfs` no one may enter (a denied
//! file: an empty file). Not kept in: the network (bwrap cannot filter ports), signals to
//! processes outside the run, abstract unix sockets. Whether `bwrap` can start at all (user
//! namespaces may be off) is found before the run by a probe ([`probe`]). The program keeps no
//! capability, even when runbook runs as root.

use std::ffi::{CString, OsStr, OsString};
use std::io::Read as _;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

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
    // Run as root, bwrap would leave the program every capability: enough to unmount what hides
    // a denied path, or to make `/` writable again.
    push(&[
        "--die-with-parent".as_ref(),
        "--cap-drop".as_ref(),
        "ALL".as_ref(),
        "--ro-bind".as_ref(),
        "/".as_ref(),
        "/".as_ref(),
    ]);
    push(&["--dev-bind".as_ref(), "/dev".as_ref(), "/dev".as_ref()]);
    for deny in &policy.read_deny {
        match std::fs::metadata(deny) {
            // Mode 0000 and read-only: neither entered nor made writable again (chmod).
            Ok(m) if m.is_dir() => push(&[
                "--perms".as_ref(),
                "0000".as_ref(),
                "--tmpfs".as_ref(),
                deny.as_os_str(),
                "--remount-ro".as_ref(),
                deny.as_os_str(),
            ]),
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

/// How long the probe may take: `bwrap` runs `true` in a few milliseconds.
const PROBE_LIMIT: Duration = Duration::from_secs(10);

/// Whether `bwrap` (at `program`) can start with `options` here: it runs `true` under them.
/// An error says in a line what failed (bwrap's own words, made safe to show) and what to do.
/// A probe that does not end in [`PROBE_LIMIT`] is killed and waited for.
pub(crate) fn probe(program: &Path, options: &[OsString]) -> Result<(), String> {
    probe_within(program, options, PROBE_LIMIT)
}

/// [`probe`], given `limit`.
fn probe_within(program: &Path, options: &[OsString], limit: Duration) -> Result<(), String> {
    let cannot = |what: String| {
        format!(
            "bubblewrap ({}) cannot start a sandbox here: {what}; use --sandbox=landlock (Linux 6.12 or newer), enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu kernel.apparmor_restrict_unprivileged_userns=0), or run without --sandbox",
            crate::foreign::term::escape_line(&program.display().to_string())
        )
    };
    let mut child = std::process::Command::new(program)
        .args(options)
        .args(["--", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| cannot(format!("it did not run: {e}")))?;
    let stderr = child.stderr.take();
    // Read on a thread, so that a full pipe never holds bwrap and a held-open one never holds
    // runbook past the limit.
    let said = std::thread::spawn(move || {
        let mut text = Vec::new();
        if let Some(stderr) = stderr {
            let _ = stderr.take(64 * 1024).read_to_end(&mut text);
        }
        text
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < limit => {
                std::thread::sleep(Duration::from_millis(5));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let Some(status) = status else {
        return Err(cannot(format!(
            "it did not finish within {}",
            humantime::format_duration(limit)
        )));
    };
    if status.success() {
        return Ok(());
    }
    // What it said is read to its end unless something it started holds the pipe open.
    let read_by = Instant::now() + Duration::from_secs(1);
    while !said.is_finished() && Instant::now() < read_by {
        std::thread::sleep(Duration::from_millis(5));
    }
    let text = if said.is_finished() {
        said.join().unwrap_or_default()
    } else {
        Vec::new()
    };
    let words = shown(&String::from_utf8_lossy(&text));
    Err(cannot(if words.is_empty() {
        format!("it ended with {status}")
    } else {
        words
    }))
}

/// Longest part of bwrap's words shown, in characters.
const MAX_SAID: usize = 300;

/// bwrap's words as one line that is safe to show: its lines joined, control characters made
/// visible, cut at [`MAX_SAID`] characters.
fn shown(text: &str) -> String {
    let joined = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let line = crate::foreign::term::escape_line(joined.trim_end_matches('.'));
    match line.char_indices().nth(MAX_SAID) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.into_owned(),
    }
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
            "--cap-drop",
            "ALL",
            "--ro-bind",
            "/",
            "/",
            "--dev-bind",
            "/dev",
            "/dev",
            "--perms",
            "0000",
            "--tmpfs",
            &format!("{r}/.ssh"),
            "--remount-ro",
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

    #[test]
    fn bwraps_words_are_shown_on_one_line_without_controls() {
        assert_eq!(
            shown("bwrap: No permissions to create new namespace\n\n  more\n"),
            "bwrap: No permissions to create new namespace more"
        );
        let hostile = shown("bwrap: \x1b[31mred\x1b]0;title\x07 \u{202e}x");
        assert!(
            !hostile.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{hostile}"
        );
        let long = shown(&"a".repeat(1000));
        assert_eq!(long.chars().count(), MAX_SAID + 1, "cut, with an ellipsis");
    }

    #[test]
    fn the_probe_passes_a_bwrap_that_starts_and_tells_of_one_that_does_not() {
        let real = find().expect("bubblewrap is installed: .ci/install-agents installs it");
        let policy = Policy {
            write: vec![std::env::temp_dir().canonicalize().unwrap()],
            ..Policy::default()
        };
        assert_eq!(probe(&real, &options(&policy)), Ok(()));
        let why = probe(Path::new("/bin/false"), &[]).unwrap_err();
        assert!(why.contains("exit status: 1"), "{why}");
        assert!(
            why.contains("--sandbox=landlock") && !why.contains('\n'),
            "{why}"
        );
        let missing = probe(Path::new("/nonexistent/bwrap"), &[]).unwrap_err();
        assert!(missing.contains("did not run"), "{missing}");
        // A bwrap that never ends (here: `sh -c 'exec sleep 30' sh -- true`) is killed.
        let hangs: Vec<OsString> = ["-c", "exec sleep 30", "sh"].map(OsString::from).to_vec();
        let why =
            probe_within(Path::new("/bin/sh"), &hangs, Duration::from_millis(300)).unwrap_err();
        assert!(why.contains("did not finish within 300ms"), "{why}");
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
