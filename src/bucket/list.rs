//! A bucket's keys, listed page by page under bounds a server cannot stretch: a page token it
//! gave before ends the listing (it would loop), as do too many requests, too many keys or too
//! long a time, each with the reason. A key no store path can name (an empty segment `//`, a
//! `.` or `..` segment, a control character) fails its whole page in `object_store`: the page is
//! listed again in halves until that key is alone, and listing goes on after it, the key set
//! aside.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use object_store::ObjectStore;
use object_store::list::{PaginatedListOptions, PaginatedListStore};
use object_store::path::{Error as PathError, Path as Key};

use crate::format::thousands;

/// The most requests one listing makes: 10 million keys in S3's pages of 1,000.
const MAX_REQUESTS: usize = 10_000;
/// The most keys one listing holds.
const MAX_KEYS: usize = 2_000_000;
/// The longest one listing takes.
const MAX_TIME: Duration = Duration::from_secs(600);
/// What a page is taken to hold when the store did not say: S3's 1,000 keys.
const PAGE: usize = 1_000;

/// How far a listing may go.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bounds {
    pub requests: usize,
    pub keys: usize,
    pub time: Duration,
}

/// The bounds of every listing.
pub(super) const BOUNDS: Bounds = Bounds {
    requests: MAX_REQUESTS,
    keys: MAX_KEYS,
    time: MAX_TIME,
};

/// What a listing found.
#[derive(Debug, Default)]
pub(super) struct Keys {
    pub keys: Vec<Key>,
    /// The keys set aside: no store path names them.
    pub unusable: Vec<String>,
    /// Why the listing ended before the store said it was done.
    pub cut: Option<String>,
}

/// Where the next request starts.
#[derive(Debug, Default)]
struct Next {
    /// The token of the page the store said comes next.
    token: Option<String>,
    /// Else, the key to list after (without a token, the start).
    after: Option<String>,
    /// The keys to ask for; the store's own page size when `None`.
    size: Option<usize>,
}

/// Every key under `prefix`, page by page, within `bounds`.
pub(super) async fn keys(
    store: &dyn PaginatedListStore,
    prefix: Option<&str>,
    bounds: Bounds,
) -> object_store::Result<Keys> {
    let mut found = Keys::default();
    let mut next = Next::default();
    let mut tokens: HashSet<String> = HashSet::new();
    let mut requests = 0;
    let until = Instant::now() + bounds.time;
    loop {
        if let Some(why) = past(&bounds, until, requests, found.keys.len()) {
            found.cut = Some(why);
            return Ok(found);
        }
        requests += 1;
        let opts = PaginatedListOptions {
            page_token: next.token.clone(),
            offset: next.token.is_none().then(|| next.after.clone()).flatten(),
            max_keys: next.size,
            ..PaginatedListOptions::default()
        };
        let left = until.saturating_duration_since(Instant::now());
        let Ok(page) = tokio::time::timeout(left, store.list_paginated(prefix, opts)).await else {
            found.cut = Some(past_time(&bounds));
            return Ok(found);
        };
        let page = match page {
            Ok(page) => page,
            Err(e) => {
                let bad = unusable(&e).ok_or(e)?;
                if let Some(why) = step_over(&mut next, &mut found, bad) {
                    found.cut = Some(why);
                    return Ok(found);
                }
                continue;
            }
        };
        found
            .keys
            .extend(page.result.objects.into_iter().map(|m| m.location));
        if let Some(last) = found.keys.last() {
            next.after = Some(last.as_ref().to_owned());
        }
        let Some(token) = page.page_token else {
            return Ok(found);
        };
        if !tokens.insert(token.clone()) {
            found.cut = Some(
                "the store gave a page token it had given before (the listing would never end)"
                    .to_owned(),
            );
            return Ok(found);
        }
        next.token = Some(token);
    }
}

/// After a page failed on the key `bad`: the page again in halves from where it started, and
/// once `bad` is alone, on past it. Why to stop when the store does not get past it.
fn step_over(next: &mut Next, found: &mut Keys, bad: String) -> Option<String> {
    next.token = None;
    match next.size {
        Some(1) => {
            if next.after.as_ref().is_some_and(|after| bad <= *after) {
                return Some(format!(
                    "the store lists {} again after it",
                    crate::foreign::term::escape_line(&bad)
                ));
            }
            found.unusable.push(bad.clone());
            next.after = Some(bad);
            next.size = None;
        }
        size => next.size = Some((size.unwrap_or(PAGE) / 2).max(1)),
    }
    None
}

/// Every key under `root` of a store that lists in one go (a local path): those no store path
/// names are set aside.
pub(super) async fn every_key(store: &dyn ObjectStore, root: &Key) -> object_store::Result<Keys> {
    let mut found = Keys::default();
    let mut listing = store.list(Some(root));
    while let Some(item) = listing.next().await {
        match item {
            Ok(meta) => found.keys.push(meta.location),
            Err(e) => found.unusable.push(unusable(&e).ok_or(e)?),
        }
    }
    Ok(found)
}

/// The key a failed page could not name, when that is why it failed.
fn unusable(error: &object_store::Error) -> Option<String> {
    let object_store::Error::InvalidPath { source } = error else {
        return None;
    };
    match source {
        PathError::EmptySegment { path }
        | PathError::BadSegment { path, .. }
        | PathError::NonUnicode { path, .. } => Some(path.clone()),
        _ => None,
    }
}

/// Why a listing due to end by `until`, which made `requests` requests and holds `keys` keys,
/// stops here, if it does.
fn past(bounds: &Bounds, until: Instant, requests: usize, keys: usize) -> Option<String> {
    if requests >= bounds.requests {
        return Some(format!(
            "it took {} requests, the most runbook makes",
            thousands(bounds.requests as u64)
        ));
    }
    if keys >= bounds.keys {
        return Some(format!(
            "it reached {} keys, the most runbook reads",
            thousands(bounds.keys as u64)
        ));
    }
    (Instant::now() >= until).then(|| past_time(bounds))
}

fn past_time(bounds: &Bounds) -> String {
    format!(
        "it took {}, the longest runbook lists",
        crate::format::duration(bounds.time)
    )
}

#[cfg(test)]
mod tests;
