//! Reading a bucket: the runs it holds, listed page by page, and their files fetched
//! concurrently (a bounded number at a time), each refused past its size cap unread.

use std::collections::{BTreeMap, BTreeSet};

use futures_util::{StreamExt as _, stream};
use object_store::GetOptions;
use object_store::path::Path as Key;

use super::{Bucket, CONCURRENCY, block_on, list, said};
use crate::rundir::{EVENTS, RECEIPT};

/// A run found in a bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RemoteRun {
    pub id: String,
    /// Where its files are, under the bucket's prefix: the group, then its id.
    pub parts: Vec<String>,
    /// Whether its receipt is there: it is uploaded last, so only a whole upload has it.
    pub receipt: bool,
    /// Whether its event log is there.
    pub events: bool,
}

impl RemoteRun {
    /// The key parts of one of its files.
    pub(crate) fn file<'a>(&'a self, name: &'a str) -> Vec<&'a str> {
        let mut parts: Vec<&str> = self.parts.iter().map(String::as_str).collect();
        parts.push(name);
        parts
    }
}

/// The runs of a bucket, oldest first.
pub(crate) struct Listed {
    pub runs: Vec<RemoteRun>,
    /// How many runs' files have keys no store path names (an empty segment `//`, a `.` or
    /// `..` segment, a control character): set aside, unread.
    pub unusable: u64,
}

impl Listed {
    /// What to say of the runs set aside for their keys, if any were.
    pub(crate) fn unusable_note(&self) -> Option<String> {
        (self.unusable > 0).then(|| {
            format!(
                "skipping {}: {} no store path names (an empty segment `//`, a `.` or `..` segment, a control character)",
                crate::format::plural(self.unusable, "run"),
                if self.unusable == 1 { "its key is one" } else { "their keys are ones" }
            )
        })
    }
}

/// Why a file could not be fetched.
#[derive(Debug)]
pub(crate) enum FetchError {
    /// Larger than its cap: not read.
    TooLarge(u64),
    Failed(String),
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::TooLarge(size) => write!(f, "too large ({size} bytes)"),
            FetchError::Failed(why) => f.write_str(why),
        }
    }
}

/// Every run under the bucket's prefix, at any depth (`<prefix>/<group>/<run id>/…`), found by
/// its receipt or event log. The store lists a page at a time (1,000 keys on S3), within bounds
/// (see `list`); a listing cut short is told once, on stderr.
pub(crate) fn list_runs(bucket: &Bucket) -> Result<Listed, String> {
    let prefix = (!bucket.root.as_ref().is_empty()).then(|| format!("{}/", bucket.root));
    let walked = block_on(async {
        match &bucket.pages {
            Some(pages) => list::keys(pages.as_ref(), prefix.as_deref(), list::BOUNDS).await,
            None => list::every_key(bucket.store.as_ref(), &bucket.root).await,
        }
    })
    .map_err(|e| e.to_string())?
    .map_err(|e| format!("cannot list {}: {}", bucket.shown(), said(e)))?;
    if let Some(why) = &walked.cut {
        crate::term::print::warn(format!(
            "the listing of {} ends early: {why}; what it listed so far is read",
            bucket.shown()
        ));
    }
    let listed = &walked.keys;
    let mut runs: BTreeMap<String, RemoteRun> = BTreeMap::new();
    let root_name = bucket.root.filename().map(str::to_owned);
    for key in listed {
        let Some(parts) = key.prefix_match(&bucket.root) else {
            continue;
        };
        let mut parts: Vec<String> = parts.map(|p| p.as_ref().to_owned()).collect();
        let Some(file) = parts.pop() else { continue };
        if file != RECEIPT && file != EVENTS {
            continue;
        }
        // The prefix given may be the run itself.
        let id = match parts.last() {
            Some(id) => id.clone(),
            None => match &root_name {
                Some(id) => id.clone(),
                None => continue,
            },
        };
        if !crate::runs::looks_like_run_id(&id) {
            continue;
        }
        let run = runs.entry(parts.join("/")).or_insert_with(|| RemoteRun {
            id,
            parts,
            receipt: false,
            events: false,
        });
        run.receipt |= file == RECEIPT;
        run.events |= file == EVENTS;
    }
    let mut runs: Vec<RemoteRun> = runs.into_values().collect();
    runs.sort_by(|a, b| a.id.cmp(&b.id).then_with(|| a.parts.cmp(&b.parts)));
    Ok(Listed {
        runs,
        unusable: runs_of(&walked.unusable),
    })
}

/// How many runs the files among `keys` are of: a receipt or an event log counts its run, once.
fn runs_of(keys: &[String]) -> u64 {
    let places: BTreeSet<&str> = keys
        .iter()
        .filter_map(|key| {
            let (place, file) = key.rsplit_once('/').unwrap_or(("", key));
            (file == RECEIPT || file == EVENTS).then_some(place)
        })
        .collect();
    places.len() as u64
}

/// One file, `None` when it is not there; refused unread past `limit` bytes.
pub(crate) fn fetch(
    bucket: &Bucket,
    parts: &[&str],
    limit: u64,
) -> Result<Option<Vec<u8>>, FetchError> {
    let key = bucket.key(parts);
    block_on(get(bucket, key, limit)).map_err(|e| FetchError::Failed(e.to_string()))?
}

/// Many files, fetched [`CONCURRENCY`] at a time; the answers in the order asked.
pub(crate) fn fetch_all(
    bucket: &Bucket,
    files: &[Vec<&str>],
    limit: u64,
) -> Vec<Result<Option<Vec<u8>>, FetchError>> {
    let keys: Vec<Key> = files.iter().map(|parts| bucket.key(parts)).collect();
    let fetched = block_on(async {
        stream::iter(keys)
            .map(|key| get(bucket, key, limit))
            .buffered(CONCURRENCY)
            .collect::<Vec<_>>()
            .await
    });
    match fetched {
        Ok(fetched) => fetched,
        Err(e) => files
            .iter()
            .map(|_| Err(FetchError::Failed(e.to_string())))
            .collect(),
    }
}

async fn get(bucket: &Bucket, key: Key, limit: u64) -> Result<Option<Vec<u8>>, FetchError> {
    let failed = |e: object_store::Error| {
        FetchError::Failed(format!(
            "cannot read {}: {}",
            bucket.shown_at(&[key.as_ref()]),
            said(e)
        ))
    };
    let got = match bucket.store.get_opts(&key, GetOptions::default()).await {
        Ok(got) => got,
        Err(object_store::Error::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(failed(e)),
    };
    if got.meta.size > limit {
        return Err(FetchError::TooLarge(got.meta.size));
    }
    let bytes = got.bytes().await.map_err(failed)?;
    if bytes.len() as u64 > limit {
        return Err(FetchError::TooLarge(bytes.len() as u64));
    }
    Ok(Some(bytes.to_vec()))
}
