//! The runs directory as a collection: which runs exist, which one a name means, and what each
//! left behind (its receipt, or its log folded so far).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::event::{Event, Outcome};
use crate::exit::Error;
use crate::files::{self, Links};
use crate::format::running_for;
use crate::lines::{LineReader, MAX_LINE_BYTES};
use crate::linux::procfs;
use crate::receipt::Receipt;
use crate::rundir::{EVENTS, RECEIPT};
use crate::stats::RunStats;

/// How many ids an error message lists.
const SHOW_IDS: usize = 5;

pub(crate) struct Runs {
    dir: PathBuf,
}

impl Runs {
    pub(crate) fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) fn path(&self, id: &str) -> PathBuf {
        self.dir.join(id)
    }

    /// Run ids, oldest first. A runs directory that does not exist yet holds no runs.
    pub(crate) fn ids(&self) -> io::Result<Vec<String>> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut ids: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|name| looks_like_run_id(name))
            .collect();
        ids.sort_unstable();
        Ok(ids)
    }

    /// The directory of the run a name means: a run directory given as a path, else as
    /// [`Self::resolve`] finds it.
    pub(crate) fn locate(&self, name: Option<&str>) -> anyhow::Result<PathBuf> {
        if let Some(dir) = name.map(Path::new).filter(|p| p.is_dir()) {
            if dir.join(EVENTS).is_file() {
                return Ok(dir.to_owned());
            }
            return Err(Error::Usage(format!(
                "{} is a directory but not a run's (it has no {EVENTS}): give a run id, a prefix of one, or a run directory",
                dir.display()
            ))
            .into());
        }
        Ok(self.path(&self.resolve(name)?))
    }

    /// The latest run that works in `cwd` (a batch's task counts where its batch was made).
    pub(crate) fn latest_in(&self, cwd: &Path) -> anyhow::Result<PathBuf> {
        let ids = self.ids()?;
        let home = |c: PathBuf| {
            crate::batch_run::of(&c)
                .and_then(|run| run.home())
                .unwrap_or(c)
        };
        ids.iter()
            .rev()
            .map(|id| self.path(id))
            .find(|dir| started_in(dir).is_some_and(|c| home(c) == cwd))
            .ok_or_else(|| {
                Error::Usage(format!(
                    "none of the runs in {} worked in {}; start one there with `runbook run`",
                    self.dir.display(),
                    cwd.display()
                ))
                .into()
            })
    }

    /// Whether `name` is the id of a run here or fits one as [`resolve`](Self::resolve) takes
    /// it (a prefix of the id or of its random part).
    pub(crate) fn any_fits(&self, name: &str) -> anyhow::Result<bool> {
        Ok(self.ids()?.iter().any(|id| fits(id, name)))
    }

    /// The run a name means: the latest run when there is no name, else the run whose id is the
    /// name, starts with it, or whose random part starts with it.
    pub(crate) fn resolve(&self, name: Option<&str>) -> anyhow::Result<String> {
        let ids = self.ids()?;
        let Some(name) = name else {
            return ids.last().cloned().ok_or_else(|| {
                Error::Usage(format!(
                    "no runs yet in {}; start one with `runbook run`",
                    self.dir.display()
                ))
                .into()
            });
        };
        if ids.iter().any(|id| id == name) {
            return Ok(name.to_owned());
        }
        let matches: Vec<&String> = ids.iter().filter(|id| fits(id, name)).collect();
        match matches.as_slice() {
            [one] => Ok((*one).clone()),
            [] => {
                let latest: Vec<&str> = ids
                    .iter()
                    .rev()
                    .take(SHOW_IDS)
                    .map(String::as_str)
                    .collect();
                let known = if latest.is_empty() {
                    format!("there are no runs in {}", self.dir.display())
                } else {
                    format!("the latest are {}", latest.join(", "))
                };
                Err(Error::Usage(format!("no run matches `{name}`: {known}")).into())
            }
            many => {
                let shown: Vec<&str> = many
                    .iter()
                    .rev()
                    .take(SHOW_IDS)
                    .map(|s| s.as_str())
                    .collect();
                let more = many.len().saturating_sub(SHOW_IDS);
                let more = if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                };
                Err(Error::Usage(format!(
                    "`{name}` matches {} runs ({}{more}): give more of the id",
                    many.len(),
                    shown.join(", ")
                ))
                .into())
            }
        }
    }
}

/// `20261122-043355-7k3mq`.
pub(crate) fn looks_like_run_id(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() >= 17
        && b[..8].iter().all(u8::is_ascii_digit)
        && b[8] == b'-'
        && b[9..15].iter().all(u8::is_ascii_digit)
}

/// Where a run works, from its first event; `None` while that event is not (yet) logged whole.
pub(crate) fn started_in(run_dir: &Path) -> Option<PathBuf> {
    let file = files::open(&run_dir.join(EVENTS), Links::Refuse).ok()?;
    let line = LineReader::new(file, EVENT_LINE_LIMIT).next_line().ok()??;
    if !line.newline || line.is_overlong() {
        return None;
    }
    match serde_json::from_slice::<Event>(&line.bytes).ok()?.kind {
        crate::event::EventKind::RunStarted(info) => Some(PathBuf::from(info.cwd)),
        _ => None,
    }
}

/// Why a run without a receipt whose supervisor is dead is `abandoned`.
pub(crate) fn abandoned_message(pid: u32) -> String {
    format!("runbook (pid {pid}) is gone and never finished the run")
}

/// What one run left: its receipt (real, or folded from the log so far) and any damage found.
pub(crate) struct RunState {
    pub receipt: Receipt,
    /// Lines of `events.ndjson` that could not be read.
    pub warnings: Vec<String>,
}

/// Reads a run directory. A finished run has its receipt; otherwise the log is folded and the run
/// is `running` while its supervisor lives, `abandoned` once it is gone.
pub(crate) fn load(run_dir: &Path) -> anyhow::Result<RunState> {
    let receipt_path = run_dir.join(RECEIPT);
    if let Some(bytes) = read_receipt(&receipt_path)? {
        return parse_receipt(&bytes, &receipt_path.display().to_string());
    }
    let (stats, warnings) = fold_log(&run_dir.join(EVENTS))?;
    let Some(info) = stats.info.as_ref() else {
        anyhow::bail!(
            "{} has no events yet: the run is starting, or never started",
            run_dir.display()
        );
    };
    let now = SystemTime::now();
    let (outcome, message) = if procfs::is_alive(info.pid, info.pid_start) {
        (Outcome::Running, in_progress(&stats, now))
    } else {
        (Outcome::Abandoned, abandoned_message(info.pid))
    };
    let receipt = Receipt::unfinished(&stats, outcome, message, now)
        .ok_or_else(|| anyhow::anyhow!("{} has no run.started event", run_dir.display()))?;
    Ok(RunState { receipt, warnings })
}

/// A receipt read back (foreign input: its figures held to their bounds); `name` says where it
/// was read from.
pub(crate) fn parse_receipt(bytes: &[u8], name: &str) -> anyhow::Result<RunState> {
    let mut receipt = serde_json::from_slice(bytes).map_err(|e| {
        anyhow::anyhow!("{name} is not a valid receipt ({e}); the run's events are in {EVENTS}")
    })?;
    let warnings = crate::bounds::hold(&mut receipt);
    Ok(RunState { receipt, warnings })
}

/// What a running run is doing, as its live status line tells it: the permission request
/// waiting for an answer, else the tool call or check running, each with how long it has
/// waited or run.
pub(crate) fn in_progress(stats: &RunStats, now: SystemTime) -> String {
    let since = |t: SystemTime| running_for(now.duration_since(t).unwrap_or_default());
    if let Some((asking, at)) = &stats.asking {
        format!(
            "waiting for permission: {asking} (asked {} ago)",
            since(*at)
        )
    } else if let (Some(tool), Some(at)) = (&stats.running_tool, stats.running_since) {
        format!("running {tool} for {}", since(at))
    } else if let Some((check, at)) = &stats.running_check {
        format!("running {check} for {}", since(*at))
    } else {
        "the run is in progress".to_owned()
    }
}

/// The bytes of a run's receipt; `None` when the run has none (yet). A receipt that is not a
/// regular file, is a link, or is far larger than any receipt runbook writes is an error.
pub(crate) fn read_receipt(path: &Path) -> anyhow::Result<Option<Vec<u8>>> {
    files::read_optional(path, files::RECEIPT_LIMIT, Links::Refuse)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))
}

/// Folds every complete, valid line of an event log; reports the lines that are not.
fn fold_log(path: &Path) -> anyhow::Result<(RunStats, Vec<String>)> {
    let file = files::open(path, Links::Refuse)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    fold_lines(file, &path.display().to_string())
}

/// Folds every complete, valid line of an event log read from `log`; `name` says where from.
pub(crate) fn fold_lines(
    log: impl std::io::Read,
    name: &str,
) -> anyhow::Result<(RunStats, Vec<String>)> {
    let mut reader = LineReader::new(log, EVENT_LINE_LIMIT);
    let mut stats = RunStats::default();
    let mut warnings = Vec::new();
    let mut number = 0;
    while let Some(line) = reader.next_line()? {
        number += 1;
        // A last line without its newline is still being written: not damage.
        if !line.newline {
            break;
        }
        if line.is_overlong() {
            warnings.push(too_long(Path::new(name), number, line.total));
            continue;
        }
        match serde_json::from_slice::<Event>(&line.bytes) {
            Ok(ev) => stats.observe(&ev),
            Err(e) => warnings.push(format!(
                "{name} line {number} is not a valid event ({e}); skipped"
            )),
        }
    }
    Ok((stats, warnings))
}

/// The longest line of an event log that is read: far above any event runbook writes (an event
/// comes from one agent line of at most 4 MiB).
pub(crate) const EVENT_LINE_LIMIT: usize = 3 * MAX_LINE_BYTES;

/// The warning for an event log line over [`EVENT_LINE_LIMIT`].
pub(crate) fn too_long(path: &Path, number: u64, bytes: u64) -> String {
    format!(
        "{} line {number} is too long to be an event ({bytes} bytes); skipped",
        path.display()
    )
}

/// Whether the run id `id` is what `name` names: the id itself, a prefix of it, or a prefix of
/// its random part.
pub(crate) fn fits(id: &str, name: &str) -> bool {
    id.starts_with(name)
        || id
            .rsplit('-')
            .next()
            .is_some_and(|tail| tail.starts_with(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(ids: &[&str]) -> (tempfile::TempDir, Runs) {
        let dir = tempfile::tempdir().unwrap();
        for id in ids {
            fs::create_dir(dir.path().join(id)).unwrap();
        }
        fs::create_dir(dir.path().join("not-a-run")).unwrap();
        let runs = Runs::new(dir.path().to_path_buf());
        (dir, runs)
    }

    #[test]
    fn names_resolve_to_the_latest_an_exact_id_or_a_unique_prefix() {
        let (_d, r) = runs(&[
            "20261121-100000-aaaaa",
            "20261122-043355-7k3mq",
            "20261122-050000-7k9zz",
        ]);
        assert_eq!(r.resolve(None).unwrap(), "20261122-050000-7k9zz");
        assert_eq!(
            r.resolve(Some("20261121")).unwrap(),
            "20261121-100000-aaaaa"
        );
        assert_eq!(
            r.resolve(Some("20261122-0433")).unwrap(),
            "20261122-043355-7k3mq"
        );
        assert_eq!(
            r.resolve(Some("7k3")).unwrap(),
            "20261122-043355-7k3mq",
            "the random part works too"
        );
        let err = r.resolve(Some("7k")).unwrap_err().to_string();
        assert!(
            err.contains("`7k` matches 2 runs") && err.contains("give more of the id"),
            "{err}"
        );
        let err = r.resolve(Some("zzz")).unwrap_err().to_string();
        assert!(
            err.contains("no run matches `zzz`") && err.contains("20261122-050000-7k9zz"),
            "{err}"
        );
    }

    #[test]
    fn an_empty_or_missing_runs_dir_says_so() {
        let (_d, r) = runs(&[]);
        assert!(
            r.resolve(None)
                .unwrap_err()
                .to_string()
                .contains("no runs yet")
        );
        let missing = Runs::new(PathBuf::from("/nonexistent/runs"));
        assert!(missing.ids().unwrap().is_empty());
    }
}
