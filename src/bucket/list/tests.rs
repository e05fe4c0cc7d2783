//! Listings against a store in memory that pages as S3 does, or loops, or never ends.

use std::future::Future;
use std::pin::Pin;

use object_store::list::PaginatedListResult;
use object_store::{ListResult, ObjectMeta};

use super::*;

/// How the store in memory answers.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Pages {
    /// As S3 does: in key order, from the token or after the offset, `page` keys at most.
    Honest { page: usize },
    /// Always the first page, with the same token.
    SameToken,
    /// Always one key, with a token never given before.
    Endless,
    /// The first page again whatever is asked.
    IgnoresOffset,
}

struct Store {
    keys: Vec<String>,
    pages: Pages,
}

impl Store {
    fn answer(&self, opts: &PaginatedListOptions) -> object_store::Result<PaginatedListResult> {
        let (start, size, token) = match self.pages {
            Pages::Honest { page } => {
                let start = match (&opts.page_token, &opts.offset) {
                    (Some(token), _) => token.parse().unwrap(),
                    (None, Some(after)) => self.keys.partition_point(|k| k <= after),
                    (None, None) => 0,
                };
                let size = opts.max_keys.unwrap_or(page).min(page);
                let end = (start + size).min(self.keys.len());
                (
                    start,
                    size,
                    (end < self.keys.len()).then(|| end.to_string()),
                )
            }
            Pages::SameToken => (0, 1000, Some("again".to_owned())),
            Pages::Endless => {
                let n = opts.page_token.as_deref().map_or(0, |t| t.parse().unwrap());
                (0, 1, Some((n + 1).to_string()))
            }
            Pages::IgnoresOffset => (0, opts.max_keys.unwrap_or(1000), None),
        };
        let objects = self
            .keys
            .iter()
            .skip(start)
            .take(size)
            .map(|k| {
                Ok(ObjectMeta {
                    location: Key::parse(k)?,
                    last_modified: Default::default(),
                    size: 1,
                    e_tag: None,
                    version: None,
                })
            })
            .collect::<object_store::Result<_>>()?;
        Ok(PaginatedListResult {
            result: ListResult {
                common_prefixes: Vec::new(),
                objects,
            },
            page_token: token,
        })
    }
}

/// The trait is declared with `async_trait`; this is what that makes of `async fn`.
impl PaginatedListStore for Store {
    fn list_paginated<'a, 'b, 'f>(
        &'a self,
        _prefix: Option<&'b str>,
        opts: PaginatedListOptions,
    ) -> Pin<Box<dyn Future<Output = object_store::Result<PaginatedListResult>> + Send + 'f>>
    where
        'a: 'f,
        'b: 'f,
        Self: 'f,
    {
        let answer = self.answer(&opts);
        Box::pin(async move { answer })
    }
}

fn far() -> Bounds {
    Bounds {
        requests: 100_000,
        keys: 10_000_000,
        time: Duration::from_secs(3600),
    }
}

fn list(keys: Vec<String>, pages: Pages, bounds: Bounds) -> Keys {
    let store = Store { keys, pages };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    runtime
        .block_on(super::keys(&store, Some("p/"), bounds))
        .unwrap()
}

fn good(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("p/runs/r{i:05}/result.json"))
        .collect()
}

#[test]
fn keys_no_path_can_name_are_set_aside_and_every_other_key_is_listed_once() {
    let bad = [
        "p/runs/r00000x/result.json".replace('x', "//"),
        "p/runs/r01000/../result.json".to_owned(),
        "p/runs/r01000/./x".to_owned(),
        "p/runs/r02499/\u{1b}[2J".to_owned(),
    ];
    let mut keys = good(2500);
    keys.extend(bad.iter().cloned());
    keys.sort();
    let listed = list(keys, Pages::Honest { page: 1000 }, far());
    let names: Vec<&str> = listed.keys.iter().map(AsRef::as_ref).collect();
    assert_eq!(names, good(2500), "each good key once, in order");
    let mut unusable = listed.unusable.clone();
    unusable.sort();
    let mut expected = bad.to_vec();
    expected.sort();
    assert_eq!(unusable, expected);
    assert!(listed.cut.is_none(), "{:?}", listed.cut);
}

#[test]
fn a_page_token_given_again_ends_the_listing_with_the_reason() {
    let listed = list(good(5), Pages::SameToken, far());
    assert_eq!(listed.keys.len(), 10, "the first page, then the same again");
    assert!(
        listed
            .cut
            .unwrap()
            .contains("page token it had given before")
    );
}

#[test]
fn a_listing_stops_at_its_bounds_of_requests_keys_and_time() {
    let bounds = Bounds {
        requests: 50,
        ..far()
    };
    let listed = list(good(1000), Pages::Endless, bounds);
    assert_eq!(listed.keys.len(), 50);
    assert!(listed.cut.unwrap().contains("50 requests"));

    let bounds = Bounds { keys: 10, ..far() };
    let listed = list(good(1000), Pages::Honest { page: 3 }, bounds);
    assert_eq!(listed.keys.len(), 12, "stopped once it held 10 or more");
    assert!(listed.cut.unwrap().contains("10 keys"));

    let bounds = Bounds {
        time: Duration::ZERO,
        ..far()
    };
    let listed = list(good(10), Pages::Honest { page: 3 }, bounds);
    assert!(listed.keys.is_empty());
    assert!(listed.cut.unwrap().contains("the longest runbook lists"));
}

#[test]
fn a_store_that_lists_a_key_it_was_asked_to_list_past_is_left() {
    let mut keys = vec!["p/a//b".to_owned()];
    keys.extend(good(3));
    let listed = list(keys, Pages::IgnoresOffset, far());
    assert_eq!(listed.unusable, ["p/a//b"]);
    assert!(listed.cut.unwrap().contains("again after it"));
}
