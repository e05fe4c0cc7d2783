//! Object storage: run directories pushed to a bucket, and receipts and event logs read back from
//! one, through `object_store` (S3 and S3-compatible, Google Cloud Storage, Azure, a local path).
//! Everything asynchronous stays in this room: each call runs on a current-thread runtime of its
//! own, on a thread of its own, so callers in or out of an async context just call.

mod credentials;
mod list;
mod open;
mod read;
mod said;
mod upload;

use std::sync::Arc;

use object_store::ObjectStore;
use object_store::list::PaginatedListStore;
use object_store::path::Path as Key;

pub(crate) use open::{hide_credentials, is_url, open};
pub(crate) use read::{FetchError, fetch, fetch_all, list_runs};
use said::said;
pub(crate) use upload::{Uploaded, upload_run, uploaded};

/// The group runs of `runbook run` are uploaded under: `<prefix>/runs/<run id>/…`.
pub(crate) const RUNS_GROUP: &str = "runs";

/// How many requests run at once.
const CONCURRENCY: usize = 16;

/// A place in object storage: a store, the prefix under it, and the URL as it may be shown.
#[derive(Clone)]
pub(crate) struct Bucket {
    store: Arc<dyn ObjectStore>,
    /// The same store listing a page at a time, where it can (not a local path).
    pages: Option<Arc<dyn PaginatedListStore>>,
    root: Key,
    /// The URL without what could be a credential (user information, the query).
    shown: String,
}

/// Only the URL as it may be shown: no credential.
impl std::fmt::Debug for Bucket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Bucket").field(&self.shown).finish()
    }
}

impl Bucket {
    /// The URL, as it may be shown or written.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// The key of `parts` under this bucket's prefix.
    fn key(&self, parts: &[&str]) -> Key {
        parts
            .iter()
            .fold(self.root.clone(), |key, part| key.join(*part))
    }

    /// The URL of `parts` under this bucket's prefix, as it may be shown.
    pub(crate) fn shown_at(&self, parts: &[&str]) -> String {
        let mut out = self.shown.trim_end_matches('/').to_owned();
        for part in parts {
            out.push('/');
            out.push_str(part);
        }
        out
    }
}

/// Runs `future` to its end on a current-thread runtime, on a thread of its own (so that a
/// caller already inside a runtime is not refused one).
fn block_on<T: Send>(future: impl Future<Output = T> + Send) -> std::io::Result<T> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                Ok(runtime.block_on(future))
            })
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the storage thread panicked")))
    })
}
