//! One run read from a bucket, for `status` and `report`: its receipt, or, when the receipt is
//! not there (an upload that is not whole), its event log folded. Both are foreign input, read
//! as a local run's are.

use std::time::SystemTime;

use crate::bucket::{self, Bucket};
use crate::event::Outcome;
use crate::exit::Error;
use crate::files::RECEIPT_LIMIT;
use crate::receipt::Receipt;
use crate::rundir::{EVENTS, RECEIPT};
use crate::runs::{self, RunState};

/// The largest event log read from a bucket.
const EVENTS_LIMIT: u64 = 256 * 1024 * 1024;

/// The run at `url` (`s3://bucket/prefix/runs/<run id>`), or the latest run under it.
pub(crate) fn load(url: &str) -> anyhow::Result<RunState> {
    let bucket = bucket::open(url)?;
    if let Some(state) = load_at(&bucket, &[])? {
        return Ok(state);
    }
    let listed = bucket::list_runs(&bucket).map_err(anyhow::Error::msg)?;
    if let Some(note) = listed.unusable_note() {
        crate::term::print::warn(note);
    }
    let latest = listed.runs.iter().max_by(|a, b| a.id.cmp(&b.id));
    let Some(run) = latest else {
        return Err(Error::Usage(format!(
            "no run at {}: it holds no {RECEIPT} or {EVENTS}; give the URL of a run (…/runs/<run id>) or of a prefix runs were uploaded to",
            bucket.shown()
        ))
        .into());
    };
    let parts: Vec<&str> = run.parts.iter().map(String::as_str).collect();
    load_at(&bucket, &parts)?.ok_or_else(|| anyhow::anyhow!("{} is gone", bucket.shown_at(&parts)))
}

/// The run whose files are at `parts` under the bucket's prefix; `None` when none are.
fn load_at(bucket: &Bucket, parts: &[&str]) -> anyhow::Result<Option<RunState>> {
    let at = |file: &'static str| {
        let mut key = parts.to_vec();
        key.push(file);
        key
    };
    let name = bucket.shown_at(&at(RECEIPT));
    match bucket::fetch(bucket, &at(RECEIPT), RECEIPT_LIMIT) {
        Ok(Some(bytes)) => return runs::parse_receipt(&bytes, &name).map(Some),
        Ok(None) => {}
        Err(e) => anyhow::bail!("cannot read {name}: {e}"),
    }
    let log = bucket.shown_at(&at(EVENTS));
    let bytes = match bucket::fetch(bucket, &at(EVENTS), EVENTS_LIMIT) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Ok(None),
        Err(e) => anyhow::bail!("cannot read {log}: {e}"),
    };
    let (stats, warnings) = runs::fold_lines(&bytes[..], &log)?;
    let message = format!(
        "its upload is not whole: {RECEIPT} is not in {}",
        bucket.shown_at(parts)
    );
    // A log that reaches `run.finished` gives the run's real receipt.
    let receipt = Receipt::unfinished(&stats, Outcome::Abandoned, message, SystemTime::now())
        .ok_or_else(|| anyhow::anyhow!("{log} has no run.started event"))?;
    Ok(Some(RunState { receipt, warnings }))
}
