//! `runbook upload`, and the upload that ends `runbook run --upload`: a run directory pushed to
//! object storage. A failure is told on the terminal, appended to the run's event log
//! (`upload.failed`) and recorded in its receipt; nothing local is deleted.

use std::collections::BTreeSet;
use std::path::Path;

use crate::bucket::{self, Bucket, RUNS_GROUP, Uploaded};
use crate::cli::UploadArgs;
use crate::config::{self, Flags};
use crate::event::{EventKind, UploadFailure};
use crate::exit::{Error, ExitStatus};
use crate::format::thousands;
use crate::rundir::{self, EVENTS, RECEIPT};
use crate::runs::Runs;
use crate::term::print::{note, warn};

/// Uploads one run directory to `<bucket>/<group>/<run id>/`; with `tell`, says how it went on
/// the terminal. A receipt uploaded never carries the failure of an earlier try.
pub(crate) fn push(
    bucket: &Bucket,
    group: &str,
    run_dir: &Path,
    tell: bool,
) -> Result<Uploaded, UploadFailure> {
    let receipt = run_dir.join(RECEIPT);
    if receipt.is_file()
        && let Err(e) = crate::receipt::record_upload(&receipt, None)
    {
        warn(format!("cannot update {}: {e}", receipt.display()));
    }
    match bucket::upload_run(bucket, group, run_dir) {
        Ok(up) => {
            if tell {
                note(format_args!(
                    "uploaded to {} ({} files, {} bytes)",
                    up.url,
                    up.files,
                    thousands(up.bytes)
                ));
            }
            Ok(up)
        }
        Err(failed) => {
            let failure = UploadFailure {
                url: failed.url,
                error: failed.error,
            };
            if tell {
                warn(format!(
                    "cannot upload the run to {}: {}; the run is kept in {} (`runbook upload` tries again)",
                    failure.url,
                    failure.error,
                    run_dir.display()
                ));
            }
            let kind = EventKind::UploadFailed(failure.clone());
            if let Err(e) = crate::store::append_after_end(&run_dir.join(EVENTS), kind) {
                warn(format!("cannot add the failed upload to {EVENTS}: {e}"));
            }
            if receipt.is_file()
                && let Err(e) = crate::receipt::record_upload(&receipt, Some(failure.clone()))
            {
                warn(format!("cannot record the failed upload in {RECEIPT}: {e}"));
            }
            Err(failure)
        }
    }
}

/// `runbook upload`.
pub(crate) fn upload(
    args: &UploadArgs,
    global: &Flags<config::Global>,
) -> anyhow::Result<ExitStatus> {
    let config = config::load_here(global.values().iter().chain(args.runs_dir.values()))?;
    let Some(url) = args
        .to
        .clone()
        .or_else(|| config.get(&config::keys::UPLOAD))
        .filter(|url| !url.is_empty())
    else {
        return Err(Error::Usage(
            "nowhere to upload to: give --to URL, or set `upload` (RUNBOOK_UPLOAD, runbook.toml)"
                .to_owned(),
        )
        .into());
    };
    let bucket = bucket::open(&url)?;
    let runs = Runs::new(rundir::runs_dir(&config)?);
    if !args.all {
        let dir = runs.locate(args.run.as_deref())?;
        let id = dir.file_name().unwrap_or_default().to_string_lossy();
        if !dir.join(RECEIPT).is_file() {
            return Err(Error::Usage(format!(
                "run {id} has no receipt (it is running, or was abandoned): nothing uploaded"
            ))
            .into());
        }
        if bucket::uploaded(&bucket, RUNS_GROUP, &id).map_err(anyhow::Error::msg)? {
            note(format_args!(
                "run {id} is already in {}",
                bucket.shown_at(&[RUNS_GROUP, &id])
            ));
            return Ok(ExitStatus::Completed);
        }
        return Ok(match push(&bucket, RUNS_GROUP, &dir, true) {
            Ok(_) => ExitStatus::Completed,
            Err(_) => ExitStatus::Internal,
        });
    }
    all(&bucket, &runs)
}

/// `runbook upload --all`: every finished run whose receipt is not in the bucket yet.
fn all(bucket: &Bucket, runs: &Runs) -> anyhow::Result<ExitStatus> {
    let listed = bucket::list_runs(bucket).map_err(anyhow::Error::msg)?;
    let there: BTreeSet<String> = listed
        .runs
        .into_iter()
        .filter(|r| r.receipt && r.parts.len() == 2 && r.parts[0] == RUNS_GROUP)
        .map(|r| r.id)
        .collect();
    let (mut sent, mut skipped, mut unfinished, mut failed) = (0u64, 0u64, 0u64, 0u64);
    for id in runs.ids()? {
        let dir = runs.path(&id);
        if !dir.join(RECEIPT).is_file() {
            unfinished += 1;
        } else if there.contains(&id) {
            skipped += 1;
        } else {
            match push(bucket, RUNS_GROUP, &dir, false) {
                Ok(up) => {
                    sent += 1;
                    note(format_args!("uploaded {id} to {}", up.url));
                }
                Err(f) => {
                    failed += 1;
                    warn(format!("cannot upload {id} to {}: {}", f.url, f.error));
                }
            }
        }
    }
    note(format_args!(
        "{} uploaded, {} already in {}, {} without a receipt left out, {} failed",
        thousands(sent),
        thousands(skipped),
        bucket.shown(),
        thousands(unfinished),
        thousands(failed)
    ));
    Ok(if failed > 0 {
        ExitStatus::Internal
    } else {
        ExitStatus::Completed
    })
}
