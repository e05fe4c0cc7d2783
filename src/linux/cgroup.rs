//! A cgroup v2 of a run's own: where the cgroup2 hierarchy is mounted (read from
//! `/proc/self/mountinfo`, never assumed), making the run's cgroup under runbook's own, and
//! listing, freezing, killing and removing what is in it.
//!
//! The kernel keeps every process started in a cgroup in it, whatever it does (forks, `setsid`,
//! re-parenting), so a cgroup is the one complete answer to "which processes are the run's".
//! `cgroup.kill` (Linux 5.14) ends them all at once; `cgroup.freeze` (5.2) holds them still
//! while they are signalled one by one.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A cgroup directory in the cgroup2 hierarchy.
#[derive(Debug, Clone)]
pub(crate) struct Cgroup {
    dir: PathBuf,
}

impl Cgroup {
    /// Makes the cgroup `name` beside nothing else: a child of runbook's own cgroup. Fails when
    /// there is no cgroup2 hierarchy, or runbook may not make or fill cgroups in it.
    pub(crate) fn create(name: &str) -> io::Result<Self> {
        let dir = own_dir()?.join(name);
        fs::create_dir(&dir)?;
        let cgroup = Self { dir };
        // A cgroup runbook cannot move processes into is of no use.
        if let Err(e) = cgroup.procs_writer() {
            let _ = fs::remove_dir(&cgroup.dir);
            return Err(e);
        }
        Ok(cgroup)
    }

    /// A cgroup made earlier (by the runbook a guardian watches).
    pub(crate) fn at(dir: PathBuf) -> Self {
        Self { dir }
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// `cgroup.procs`, open for writing: a process that writes `0` to it moves itself in.
    #[allow(
        clippy::disallowed_methods,
        reason = "a kernel interface file; only `0` is written to it"
    )]
    pub(crate) fn procs_writer(&self) -> io::Result<File> {
        OpenOptions::new()
            .write(true)
            .open(self.dir.join("cgroup.procs"))
    }

    /// Whether `pid` is in this cgroup (or one below it).
    pub(crate) fn holds(&self, pid: u32) -> bool {
        let Ok(text) = fs::read_to_string(format!("/proc/{pid}/cgroup")) else {
            return false;
        };
        let Some(name) = self.dir.file_name().and_then(|n| n.to_str()) else {
            return false;
        };
        let needle = format!("/{name}");
        text.lines()
            .filter_map(|l| l.strip_prefix("0::"))
            .any(|path| path.ends_with(&needle) || path.contains(&format!("{needle}/")))
    }

    /// The processes in this cgroup and the cgroups below it.
    pub(crate) fn pids(&self) -> Vec<i32> {
        let mut out = Vec::new();
        let mut dirs = vec![self.dir.clone()];
        while let Some(dir) = dirs.pop() {
            if let Ok(text) = fs::read_to_string(dir.join("cgroup.procs")) {
                out.extend(text.lines().filter_map(|l| l.trim().parse::<i32>().ok()));
            }
            dirs.extend(children(&dir));
        }
        out
    }

    /// Whether any process is left in it (or below it).
    pub(crate) fn populated(&self) -> bool {
        self.event("populated") != Some(false)
    }

    /// Kills every process in it and below it, at once; false where the kernel cannot.
    pub(crate) fn kill(&self) -> bool {
        control(&self.dir.join("cgroup.kill"), "1").is_ok()
    }

    /// Freezes it (nothing in it runs, so nothing forks) and waits up to `wait` for that to
    /// happen; false where the kernel cannot freeze.
    pub(crate) fn freeze(&self, wait: Duration) -> bool {
        if control(&self.dir.join("cgroup.freeze"), "1").is_err() {
            return false;
        }
        let until = std::time::Instant::now() + wait;
        while self.event("frozen") == Some(false) && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_micros(200));
        }
        true
    }

    /// Lets it run again.
    pub(crate) fn thaw(&self) {
        let _ = control(&self.dir.join("cgroup.freeze"), "0");
    }

    /// CPU time used by everything that ever ran in it (`cpu.stat`, kept by the kernel whether or
    /// not the cpu controller is enabled).
    pub(crate) fn cpu_time(&self) -> Option<Duration> {
        let text = fs::read_to_string(self.dir.join("cpu.stat")).ok()?;
        let usec = text
            .lines()
            .find_map(|l| l.strip_prefix("usage_usec "))?
            .trim()
            .parse()
            .ok()?;
        Some(Duration::from_micros(usec))
    }

    /// Removes it, and the cgroups below it (an agent that ran runbook makes some). Only empty
    /// cgroups can be removed.
    pub(crate) fn remove(&self) -> io::Result<()> {
        for child in children(&self.dir) {
            let _ = Self::at(child).remove();
        }
        match fs::remove_dir(&self.dir) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    /// A key of `cgroup.events` (`populated`, `frozen`), if it can be read.
    fn event(&self, key: &str) -> Option<bool> {
        let text = fs::read_to_string(self.dir.join("cgroup.events")).ok()?;
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
            .map(|v| v.trim() == "1")
    }
}

/// The cgroups right below `dir`.
fn children(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect()
}

/// The directory of runbook's own cgroup in the cgroup2 hierarchy.
fn own_dir() -> io::Result<PathBuf> {
    let none = |what: &str| io::Error::new(io::ErrorKind::NotFound, what.to_owned());
    let mountinfo = fs::read_to_string("/proc/self/mountinfo")?;
    let (root, mount) = cgroup2_mount(&mountinfo).ok_or_else(|| none("no cgroup2 mount"))?;
    let cgroups = fs::read_to_string("/proc/self/cgroup")?;
    let own = cgroups
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .ok_or_else(|| none("runbook is in no cgroup2 cgroup"))?;
    dir_in_mount(&root, &mount, own).ok_or_else(|| none("runbook's cgroup is not under the mount"))
}

/// The first cgroup2 mount in `/proc/self/mountinfo`: the hierarchy's path it shows, and where.
fn cgroup2_mount(mountinfo: &str) -> Option<(String, PathBuf)> {
    mountinfo.lines().find_map(|line| {
        let (mount, fs) = line.split_once(" - ")?;
        if fs.split(' ').next()? != "cgroup2" {
            return None;
        }
        let mut fields = mount.split(' ');
        let root = unescape(fields.nth(3)?);
        let point = unescape(fields.next()?);
        Some((root, PathBuf::from(point)))
    })
}

/// Where the cgroup `own` (a path in the hierarchy) is, given a mount of the hierarchy's `root`
/// at `mount`; none when the mount does not show it.
fn dir_in_mount(root: &str, mount: &Path, own: &str) -> Option<PathBuf> {
    let rest = if root == "/" {
        own
    } else {
        let rest = own.strip_prefix(root)?;
        if !(rest.is_empty() || rest.starts_with('/')) {
            return None;
        }
        rest
    };
    let rest = rest.trim_start_matches('/');
    if rest.split('/').any(|part| part == "..") {
        return None;
    }
    Some(if rest.is_empty() {
        mount.to_path_buf()
    } else {
        mount.join(rest)
    })
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match (bytes[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Writes runbook's own `value` to one of a cgroup's control files.
#[allow(
    clippy::disallowed_methods,
    reason = "a kernel interface file; runbook's own constant values are written to it"
)]
fn control(file: &Path, value: &str) -> io::Result<()> {
    fs::write(file, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn the_cgroup2_mount_is_found_among_v1_ones() {
        let (root, mount) = cgroup2_mount(HYBRID).unwrap();
        assert_eq!(
            (root.as_str(), mount),
            ("/", PathBuf::from("/sys/fs/cgroup/unified"))
        );
        let unified = "29 23 0:26 / /sys/fs/cgroup rw shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
        assert_eq!(
            cgroup2_mount(unified).unwrap().1,
            PathBuf::from("/sys/fs/cgroup")
        );
        assert!(cgroup2_mount("31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n").is_none());
    }

    #[test]
    fn a_mount_point_with_a_space_is_unescaped() {
        let line = "41 31 0:38 / /mnt/my\\040cgroups rw - cgroup2 none rw\n";
        assert_eq!(
            cgroup2_mount(line).unwrap().1,
            PathBuf::from("/mnt/my cgroups")
        );
    }

    #[test]
    fn runbooks_cgroup_is_placed_under_the_mount() {
        let mount = Path::new("/sys/fs/cgroup");
        assert_eq!(dir_in_mount("/", mount, "/").unwrap(), mount);
        assert_eq!(
            dir_in_mount("/", mount, "/user.slice/app.scope").unwrap(),
            mount.join("user.slice/app.scope")
        );
        // A mount of part of the hierarchy shows only what is below its root.
        assert_eq!(
            dir_in_mount("/ci", mount, "/ci/job-1").unwrap(),
            mount.join("job-1")
        );
        assert!(dir_in_mount("/ci", mount, "/other").is_none());
        assert!(dir_in_mount("/ci", mount, "/circus").is_none());
        assert!(dir_in_mount("/", mount, "/../escape").is_none());
    }
}
