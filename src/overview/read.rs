//! Reading the receipts of one or more runs directories, in parallel, keeping only what the
//! figures need; a receipt that cannot be used is skipped and counted with why, and a run
//! without one counts as running or abandoned.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Deserialize;

use crate::bounds::{self, OutOfBounds};
use crate::bucket::{self, Bucket, FetchError};
use crate::event::{Outcome, RepairStop, RunInfo, SCHEMA_VERSION};
use crate::files::{self, FileError, Links};
use crate::linux::procfs;
use crate::receipt::TokenTotals as Tokens;
use crate::rundir::{EVENTS, RECEIPT};
use crate::stats::ToolTally;

/// What a run's receipt says that the figures use.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunFacts {
    pub run_id: String,
    pub started_at: SystemTime,
    pub agent: String,
    pub model: Option<String>,
    /// The git root of its working directory, else the directory itself; for a batch's task,
    /// the repository the batch was made from.
    pub project: String,
    pub outcome: Outcome,
    /// The first non-empty line of its prompt, trimmed, at most [`PROMPT_CHARS`] characters.
    pub prompt: String,
    /// Why it ended so, in a sentence (the receipt's `message`).
    pub message: String,
    /// `None`: beyond its bound.
    pub duration_ms: Option<u64>,
    /// `None`: unknown (which is not zero), or beyond its bound.
    pub cost_usd: Option<f64>,
    /// What is known of its tokens: none (and `incomplete`) when a count is beyond its bound.
    pub tokens: Tokens,
    /// The figures of its receipt left out for being beyond their bounds.
    pub out_of_bounds: Vec<OutOfBounds>,
    pub tools: BTreeMap<String, ToolTally>,
    /// Provider errors by name (status, when there is one).
    pub provider_errors: Vec<String>,
    /// Denied tools.
    pub denials: Vec<String>,
    /// Whether its first checks failed, and whether they passed in the end.
    pub checks: Option<(bool, bool)>,
    pub repaired: Option<RepairStop>,
}

/// How much of a prompt's first line is kept (and of a run's message).
const PROMPT_CHARS: usize = 500;

/// The runs that pass the filters.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub runs: Vec<RunFacts>,
    /// Runs without a receipt whose runbook still runs them.
    pub running: u32,
    /// Runs without a receipt whose runbook is gone.
    pub abandoned: u32,
    /// Receipts that could not be used, by why.
    pub skipped: BTreeMap<String, u32>,
}

/// Which runs count.
#[derive(Debug, Default, Clone)]
pub(crate) struct Filter {
    pub since: Option<SystemTime>,
    pub until: Option<SystemTime>,
    pub agents: Vec<String>,
    pub models: Vec<String>,
    pub project: Option<PathBuf>,
    pub outcomes: Vec<Outcome>,
}

impl Filter {
    fn wants(&self, r: &RunFacts) -> bool {
        self.since.is_none_or(|t| r.started_at >= t)
            && self.until.is_none_or(|t| r.started_at < t)
            && (self.agents.is_empty() || self.agents.contains(&r.agent))
            && (self.models.is_empty() || r.model.as_ref().is_some_and(|m| self.models.contains(m)))
            && self
                .project
                .as_ref()
                .is_none_or(|p| Path::new(&r.project) == p)
            && (self.outcomes.is_empty() || self.outcomes.contains(&r.outcome))
    }

    /// Whether a run without a receipt, of `outcome`, counts (it has nothing else to filter by).
    fn wants_unfinished(&self, outcome: Outcome) -> bool {
        self.outcomes.is_empty() || self.outcomes.contains(&outcome)
    }
}

/// The part of a receipt the figures need; everything else is skipped unread.
#[derive(Deserialize)]
struct Slim {
    schema_version: u32,
    run_id: String,
    agent: SlimAgent,
    model: Option<String>,
    cwd: String,
    started_at: String,
    duration_ms: u64,
    outcome: Outcome,
    #[serde(default)]
    prompt: String,
    #[serde(default)]
    message: String,
    cost: SlimCost,
    tokens: Tokens,
    tool_calls: SlimTools,
    #[serde(default)]
    provider_errors: Vec<SlimProviderError>,
    #[serde(default)]
    permission_denials: Vec<SlimDenial>,
    #[serde(default)]
    checks: Vec<SlimCheck>,
    #[serde(default)]
    repair: Option<SlimRepair>,
    #[serde(default)]
    git: Option<SlimGit>,
}

#[derive(Deserialize)]
struct SlimAgent {
    name: String,
}

#[derive(Deserialize)]
struct SlimCost {
    usd: Option<f64>,
}

#[derive(Deserialize)]
struct SlimTools {
    by_name: BTreeMap<String, ToolTally>,
}

#[derive(Deserialize)]
struct SlimProviderError {
    name: String,
    status: Option<u16>,
}

#[derive(Deserialize)]
struct SlimDenial {
    tool: String,
}

#[derive(Deserialize)]
struct SlimCheck {
    attempt: u32,
    passed: bool,
}

#[derive(Deserialize)]
struct SlimRepair {
    stopped: Option<RepairStop>,
}

#[derive(Deserialize)]
struct SlimGit {
    root: String,
}

/// Where a run belongs: the repository its batch was made from, for a batch's task; else its
/// git root, else its directory.
fn project(cwd: String, git: Option<SlimGit>) -> String {
    if let Some(run) = crate::batch_run::of(Path::new(&cwd)) {
        return run.project().display().to_string();
    }
    git.map_or(cwd, |g| g.root)
}

/// How one run directory was read.
enum Read {
    Run(Box<RunFacts>),
    Unfinished(Outcome),
    Skipped(String),
    /// Not a run directory at all.
    Nothing,
}

/// Reads every run of `dirs`, on all cores, and keeps those `filter` wants.
pub(crate) fn read_all(dirs: &[PathBuf], filter: &Filter) -> std::io::Result<Found> {
    let mut runs: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                runs.push(entry.path());
            }
        }
    }
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8);
    let chunk = runs.len().div_ceil(threads).max(1);
    let reads: Vec<Vec<Read>> = std::thread::scope(|scope| {
        let handles: Vec<_> = runs
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(|d| read_one(d)).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let mut found = gather(reads.into_iter().flatten(), filter);
    found.runs.sort_by(in_order);
    Ok(found)
}

/// The runs of `reads` that `filter` wants, counted as [`Found`] counts them (unsorted).
fn gather(reads: impl Iterator<Item = Read>, filter: &Filter) -> Found {
    let mut found = Found::default();
    for read in reads {
        match read {
            Read::Run(run) if filter.wants(&run) => found.runs.push(*run),
            Read::Run(_) | Read::Nothing => {}
            Read::Unfinished(outcome) if filter.wants_unfinished(outcome) => match outcome {
                Outcome::Running => found.running += 1,
                _ => found.abandoned += 1,
            },
            Read::Unfinished(_) => {}
            Read::Skipped(why) => *found.skipped.entry(why).or_default() += 1,
        }
    }
    found
}

impl Found {
    /// Adds the runs of `other`, keeping them in the order they started.
    pub(crate) fn merge(&mut self, other: Found) {
        self.runs.extend(other.runs);
        self.runs.sort_by(in_order);
        self.running += other.running;
        self.abandoned += other.abandoned;
        for (why, n) in other.skipped {
            *self.skipped.entry(why).or_default() += n;
        }
    }
}

/// Every run under a bucket's prefix, its receipt fetched (a bounded number at a time) and read
/// as a local one is: held to the same bounds, skipped for the same reasons. A run whose
/// receipt is not there was not uploaded whole, and is skipped as such; one whose key no store
/// path names is skipped unread.
pub(crate) fn read_bucket(bucket: &Bucket, filter: &Filter) -> Result<Found, String> {
    let listed = bucket::list_runs(bucket)?;
    let (whole, partial): (Vec<_>, Vec<_>) = listed.runs.iter().partition(|r| r.receipt);
    let files: Vec<Vec<&str>> = whole.iter().map(|r| r.file(RECEIPT)).collect();
    let fetched = bucket::fetch_all(bucket, &files, files::RECEIPT_LIMIT);
    let reads = fetched.into_iter().map(|got| match got {
        Ok(Some(bytes)) => of_receipt(&bytes),
        Ok(None) => Read::Skipped(NOT_WHOLE.to_owned()),
        Err(FetchError::TooLarge(_)) => Read::Skipped("too large".to_owned()),
        Err(FetchError::Failed(_)) => Read::Skipped("unreadable".to_owned()),
    });
    let partial = partial.iter().map(|_| Read::Skipped(NOT_WHOLE.to_owned()));
    let unusable = (0..listed.unusable).map(|_| Read::Skipped(UNUSABLE_KEY.to_owned()));
    let mut found = gather(reads.chain(partial).chain(unusable), filter);
    found.runs.sort_by(in_order);
    Ok(found)
}

/// Runs in the order they started, those that started together by id: the same order however
/// they were read (a directory's listing, a bucket's), so that sums of money add up alike to the
/// last bit.
fn in_order(a: &RunFacts, b: &RunFacts) -> std::cmp::Ordering {
    a.started_at
        .cmp(&b.started_at)
        .then_with(|| a.run_id.cmp(&b.run_id))
}

/// Why a run in a bucket without its receipt is skipped.
const NOT_WHOLE: &str = "not uploaded whole";

/// Why a run in a bucket whose key no store path names (`//`, `..`) is skipped.
const UNUSABLE_KEY: &str = "of an unusable key";

fn read_one(dir: &Path) -> Read {
    match files::read_optional(&dir.join(RECEIPT), files::RECEIPT_LIMIT, Links::Refuse) {
        Ok(Some(bytes)) => of_receipt(&bytes),
        Ok(None) => unfinished(dir),
        Err(FileError::TooLarge(_)) => Read::Skipped("too large".to_owned()),
        Err(_) => Read::Skipped("unreadable".to_owned()),
    }
}

/// A receipt's bytes, read for the figures.
fn of_receipt(bytes: &[u8]) -> Read {
    let slim = match parse(bytes) {
        Ok(slim) => slim,
        Err(why) => return Read::Skipped(why),
    };
    if slim.schema_version != SCHEMA_VERSION {
        return Read::Skipped(format!("of schema version {}", slim.schema_version));
    }
    let Ok(started_at) = humantime::parse_rfc3339_weak(&slim.started_at) else {
        return Read::Skipped("not a receipt".to_owned());
    };
    let checks = checks(&slim);
    let mut out_of_bounds = Vec::new();
    let cost_usd = slim.cost.usd.and_then(|usd| {
        bounds::cost(usd)
            .map_err(|out| out_of_bounds.push(out))
            .ok()
    });
    let duration_ms = bounds::duration(slim.duration_ms)
        .map_err(|out| out_of_bounds.push(out))
        .ok();
    let mut tools = slim.tool_calls.by_name;
    if let Err(out) = bounds::tool_calls(tools.values()) {
        out_of_bounds.push(out);
        tools.clear();
    }
    let tokens = match bounds::tokens(&slim.tokens) {
        Ok(()) => slim.tokens,
        Err(out) => {
            out_of_bounds.push(out);
            Tokens {
                incomplete: true,
                ..Tokens::default()
            }
        }
    };
    Read::Run(Box::new(RunFacts {
        run_id: slim.run_id,
        started_at,
        agent: slim.agent.name,
        model: slim.model,
        project: project(slim.cwd, slim.git),
        outcome: slim.outcome,
        prompt: kept(first_line(&slim.prompt)),
        message: kept(&slim.message),
        duration_ms,
        cost_usd,
        tokens,
        out_of_bounds,
        tools,
        provider_errors: provider_errors(slim.provider_errors),
        denials: slim
            .permission_denials
            .into_iter()
            .map(|d| d.tool)
            .collect(),
        checks,
        repaired: slim.repair.and_then(|r| r.stopped),
    }))
}

/// A receipt's bytes read for the figures, or why the run is skipped: cut short, of another
/// schema version (said whatever else it holds), or not a receipt.
fn parse(bytes: &[u8]) -> Result<Slim, String> {
    match serde_json::from_slice(bytes) {
        Ok(slim) => Ok(slim),
        Err(e) if e.is_eof() => Err("cut short".to_owned()),
        Err(_) => {
            let version = serde_json::from_slice::<serde_json::Value>(bytes)
                .ok()
                .and_then(|v| v["schema_version"].as_u64());
            Err(match version {
                Some(v) if v != u64::from(SCHEMA_VERSION) => format!("of schema version {v}"),
                _ => "not a receipt".to_owned(),
            })
        }
    }
}

/// Whether the run's checks failed at first, and whether they passed in the end; `None`
/// without checks.
fn checks(slim: &Slim) -> Option<(bool, bool)> {
    let first = slim.checks.iter().map(|c| c.attempt).min();
    let last = slim.checks.iter().map(|c| c.attempt).max();
    let passed = |attempt: Option<u32>| {
        slim.checks
            .iter()
            .filter(|c| Some(c.attempt) == attempt)
            .all(|c| c.passed)
    };
    first.map(|_| (!passed(first), passed(last)))
}

/// Each provider error as `name (status)`.
fn provider_errors(errors: Vec<SlimProviderError>) -> Vec<String> {
    errors
        .into_iter()
        .map(|e| match e.status {
            Some(status) => format!("{} ({status})", e.name),
            None => e.name,
        })
        .collect()
}

/// The first non-empty line of a text, trimmed.
fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// At most [`PROMPT_CHARS`] characters of `text`.
fn kept(text: &str) -> String {
    match text.char_indices().nth(PROMPT_CHARS) {
        Some((cut, _)) => text[..cut].to_owned(),
        None => text.to_owned(),
    }
}

/// A run directory without a receipt: running while its runbook lives, else abandoned; not a
/// run at all without a first event.
fn unfinished(dir: &Path) -> Read {
    let Ok(file) = files::open(&dir.join(EVENTS), Links::Refuse) else {
        return Read::Nothing;
    };
    let mut first = String::new();
    if BufReader::new(file).read_line(&mut first).is_err() {
        return Read::Nothing;
    }
    #[derive(Deserialize)]
    struct Started {
        #[serde(flatten)]
        info: RunInfo,
    }
    match serde_json::from_str::<Started>(&first) {
        Ok(s) if procfs::is_alive(s.info.pid, s.info.pid_start) => {
            Read::Unfinished(Outcome::Running)
        }
        Ok(_) => Read::Unfinished(Outcome::Abandoned),
        Err(_) => Read::Nothing,
    }
}
