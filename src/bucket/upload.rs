//! A run directory pushed to a bucket: each of its files under `<prefix>/<group>/<run id>/`,
//! the receipt last, so that a run whose receipt is in the bucket is there whole. Nothing local
//! is changed or deleted.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::{StreamExt as _, stream};
use object_store::buffered::BufWriter;
use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt as _};
use tokio::io::AsyncWriteExt as _;

use super::{Bucket, CONCURRENCY, block_on, said};
use crate::files::{self, Links};
use crate::rundir::RECEIPT;

/// A run uploaded whole.
#[derive(Debug)]
pub(crate) struct Uploaded {
    /// Where, as it may be shown.
    pub url: String,
    pub files: usize,
    pub bytes: u64,
}

/// An upload that failed once each request had had its retries; what was sent stays sent, the
/// receipt was not.
#[derive(Debug)]
pub(crate) struct UploadFailed {
    pub url: String,
    /// Why, in a sentence (no credential in it: the URL is shown masked, and the store's own
    /// messages go through the masker wherever they are written).
    pub error: String,
}

/// Uploads `run_dir` to `<bucket>/<group>/<run id>/`: its files, then its receipt last.
pub(crate) fn upload_run(
    bucket: &Bucket,
    group: &str,
    run_dir: &Path,
) -> Result<Uploaded, UploadFailed> {
    let id = run_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let url = format!("{}/", bucket.shown_at(&[group, &id]));
    let failed = |error: String| UploadFailed {
        url: url.clone(),
        error,
    };
    let mut paths = Vec::new();
    walk(run_dir, &mut paths)
        .map_err(|e| failed(format!("cannot read {}: {e}", run_dir.display())))?;
    let receipt = run_dir.join(RECEIPT);
    let (last, first): (Vec<PathBuf>, Vec<PathBuf>) =
        paths.into_iter().partition(|p| *p == receipt);
    let key_of = |path: &Path| {
        let rel = path.strip_prefix(run_dir).unwrap_or(path);
        rel.components()
            .fold(bucket.key(&[group, &id]), |key, part| {
                key.join(part.as_os_str().to_string_lossy().as_ref())
            })
    };
    let (firsts, lasts): (Vec<_>, Vec<_>) = (
        first.iter().map(|p| (key_of(p), p.clone())).collect(),
        last.iter().map(|p| (key_of(p), p.clone())).collect(),
    );
    let files = firsts.len() + lasts.len();
    let store = Arc::clone(&bucket.store);
    let sent = block_on(async move {
        let mut bytes = 0;
        let sent: Vec<_> = stream::iter(firsts)
            .map(|(key, path)| {
                let store = Arc::clone(&store);
                async move { put_file(&store, key, &path).await }
            })
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
        for one in sent {
            bytes += one?;
        }
        for (key, path) in lasts {
            bytes += put_file(&store, key, &path).await?;
        }
        Ok::<u64, String>(bytes)
    })
    .map_err(|e| failed(e.to_string()))?
    .map_err(failed)?;
    Ok(Uploaded {
        url,
        files,
        bytes: sent,
    })
}

/// Whether the run `id` of `group` is in the bucket whole (its receipt is there).
pub(crate) fn uploaded(bucket: &Bucket, group: &str, id: &str) -> Result<bool, String> {
    let key = bucket.key(&[group, id, RECEIPT]);
    let store = &bucket.store;
    match block_on(async { store.head(&key).await }).map_err(|e| e.to_string())? {
        Ok(_) => Ok(true),
        Err(object_store::Error::NotFound { .. }) => Ok(false),
        Err(e) => Err(format!(
            "cannot read {}: {}",
            bucket.shown_at(&[group, id, RECEIPT]),
            said(e)
        )),
    }
}

/// The regular files under `dir`, at any depth; links, and names starting with a dot (runbook's
/// reserve and temporary files), are left out.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(&entry.path(), out)?;
        } else if kind.is_file() {
            out.push(entry.path());
        }
    }
    Ok(())
}

/// One file streamed to `key` (in parts when it is large); its size.
async fn put_file(store: &Arc<dyn ObjectStore>, key: Key, path: &Path) -> Result<u64, String> {
    let file = files::open(path, Links::Refuse)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut file = tokio::fs::File::from_std(file);
    let mut writer = BufWriter::new(Arc::clone(store), key);
    let failed = |e: std::io::Error| format!("cannot upload {}: {}", path.display(), said(e));
    match tokio::io::copy(&mut file, &mut writer).await {
        // A failed shutdown has ended the upload itself (a multipart one aborted).
        Ok(n) => writer.shutdown().await.map(|()| n).map_err(failed),
        Err(e) => {
            let _ = writer.abort().await;
            Err(failed(e))
        }
    }
}
