//! One task from start to end: its worktree, its `setup` command, its run, then its changes
//! committed and its worktree removed or kept. What happens is told to the batch as messages.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::watch;

use super::child::{self, Said};
use super::plan::Job;
use super::worktree::{Ending, Repo};
use crate::cli::Keep;
use crate::event::Outcome;

/// What a task tells the batch.
#[derive(Debug)]
pub(super) enum Msg {
    /// It is running its `setup` command.
    Setup(usize),
    /// Its worktree could not be made or its `setup` failed: why.
    SetupFailed(usize, String),
    /// Its run said something.
    Child(usize, Said),
    /// Its run could not be started: why.
    NotSpawned(usize, String),
    /// Its worktree is settled: it is done.
    Finished(usize, Ending),
}

/// What every task's driver shares.
pub(super) struct Ctx {
    pub repo: Repo,
    pub batch_id: String,
    pub batch_dir: PathBuf,
    pub keep: Keep,
    /// The path of the batch's directory inside the repository, where its runs start.
    pub subdir: PathBuf,
    /// Its one task runs in the checkout itself, not in a worktree (`--in-place`).
    pub in_place: bool,
    /// Where each run is uploaded (`--upload`), over where its settings say (`Job::upload`).
    pub upload: Option<crate::bucket::Bucket>,
    /// The id runs are uploaded under: `--batch-id`, else the batch's own.
    pub group: String,
    /// Whether an upload is told on the terminal.
    pub tell_upload: bool,
}

/// Drives the task `idx`: `argv` is its run's command line. `cancel` holds how many times the
/// batch was interrupted.
pub(super) async fn drive(
    idx: usize,
    job: Job,
    argv: Vec<OsString>,
    ctx: Arc<Ctx>,
    tx: UnboundedSender<Msg>,
    cancel: watch::Receiver<u8>,
) {
    if ctx.in_place {
        return in_place(idx, job, argv, ctx, tx, cancel).await;
    }
    let dir = super::plan::worktree_dir(&ctx.batch_dir, &job);
    let branch = format!("runbook/{}/{}", ctx.batch_id, job.name);
    let made = {
        let (repo, dir, branch, include) = (
            ctx.repo.clone(),
            dir.clone(),
            branch.clone(),
            job.include.clone(),
        );
        tokio::task::spawn_blocking(move || repo.add(&dir, &branch, &include)).await
    };
    let (worktree, made) = match made {
        Ok((worktree, made)) => (worktree, made.map_err(|e| format!("{e:#}"))),
        Err(e) => (None, Err(e.to_string())),
    };
    let outcome: Arc<Mutex<Option<Outcome>>> = Arc::default();
    let ready = match made {
        Ok(()) => setup(idx, &job, &ctx, &dir, &tx, cancel.clone()).await,
        Err(e) => Err(format!("cannot make its worktree: {e}")),
    };
    let interrupted = *cancel.borrow() > 0;
    match ready {
        Err(why) => {
            let _ = tx.send(Msg::SetupFailed(idx, why));
        }
        Ok(()) if interrupted => {}
        Ok(()) => {
            let env = trust_env(&ctx.repo, &dir);
            let bucket = ctx.upload.clone().or(job.upload.clone());
            *outcome.lock().unwrap_or_else(|e| e.into_inner()) =
                run(idx, argv, &ctx, (&dir, env), bucket, &tx).await;
        }
    }
    let outcome = *outcome.lock().unwrap_or_else(|e| e.into_inner());
    let keep = match ctx.keep {
        Keep::All => true,
        Keep::None => false,
        Keep::Failed => outcome != Some(Outcome::Completed),
    };
    let message = format!(
        "runbook batch {}: {} ({})",
        ctx.batch_id,
        job.name,
        outcome.map_or("not run", Outcome::as_str)
    );
    let repo = ctx.repo.clone();
    let ending = tokio::task::spawn_blocking(move || match worktree {
        Some(worktree) => repo.finish(&worktree, &message, keep),
        None => repo.abandon(&dir, &branch),
    })
    .await
    .unwrap_or_default();
    let _ = tx.send(Msg::Finished(idx, ending));
}

/// Drives the task `idx` in the checkout itself (`--in-place`): its `setup`, then its run;
/// nothing is committed or removed.
async fn in_place(
    idx: usize,
    job: Job,
    argv: Vec<OsString>,
    ctx: Arc<Ctx>,
    tx: UnboundedSender<Msg>,
    cancel: watch::Receiver<u8>,
) {
    let dir = ctx.repo.root.clone();
    match setup(idx, &job, &ctx, &dir, &tx, cancel.clone()).await {
        Err(why) => {
            let _ = tx.send(Msg::SetupFailed(idx, why));
        }
        Ok(()) if *cancel.borrow() > 0 => {}
        Ok(()) => {
            let bucket = ctx.upload.clone().or(job.upload.clone());
            run(idx, argv, &ctx, (&dir, Vec::new()), bucket, &tx).await;
        }
    }
    let _ = tx.send(Msg::Finished(idx, Ending::default()));
}

/// Runs the task's run in `dir` (at the place the batch was started from) with `env`, then
/// uploads it to `bucket`, if it has one; the run's outcome, once it told one.
async fn run(
    idx: usize,
    mut args: Vec<OsString>,
    ctx: &Ctx,
    (dir, env): (&std::path::Path, Vec<(String, OsString)>),
    bucket: Option<crate::bucket::Bucket>,
    tx: &UnboundedSender<Msg>,
) -> Option<Outcome> {
    let cwd = dir.join(&ctx.subdir);
    if let Some(i) = args.iter().position(|a| a == "--cwd") {
        args[i + 1] = cwd.clone().into();
    }
    let seen: Arc<Mutex<Option<(Outcome, String)>>> = Arc::default();
    let (keep, send) = (seen.clone(), tx.clone());
    let said = move |said: Said| {
        if let Said::Receipt(r, _) = &said {
            *keep.lock().unwrap_or_else(|e| e.into_inner()) = Some((r.outcome, r.run_dir.clone()));
        }
        let _ = send.send(Msg::Child(idx, said));
    };
    if let Err(e) = child::run(args, &cwd, env, said).await {
        let _ = tx.send(Msg::NotSpawned(idx, format!("cannot start its run: {e:#}")));
    }
    let seen = seen.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let (outcome, run_dir) = seen?;
    if let Some(bucket) = bucket {
        let (group, tell) = (ctx.group.clone(), ctx.tell_upload);
        let _ = tokio::task::spawn_blocking(move || {
            crate::commands::upload::push(&bucket, &group, std::path::Path::new(&run_dir), tell)
        })
        .await;
    }
    Some(outcome)
}

/// Runs the task's `setup` command in its worktree (`sh -c`, `RUNBOOK_ROOT_PATH` set to the main
/// checkout) in a scope of its own, as a check runs (`super::setup`): it and everything it
/// started are ended once it exits, when the batch is interrupted, or when it outlasts its
/// `setup_timeout`.
async fn setup(
    idx: usize,
    job: &Job,
    ctx: &Ctx,
    dir: &std::path::Path,
    tx: &UnboundedSender<Msg>,
    cancel: watch::Receiver<u8>,
) -> Result<(), String> {
    let Some(command) = &job.setup else {
        return Ok(());
    };
    let _ = tx.send(Msg::Setup(idx));
    let logs = ctx.batch_dir.join("setup");
    crate::rundir::ensure_runs_dir(&logs)
        .map_err(|e| format!("cannot make {}: {e:#}", logs.display()))?;
    let log = logs.join(format!("{}.log", job.name));
    let tag = format!("{}.setup.{}", ctx.batch_id, job.name);
    super::setup::run(job, command, (dir, &ctx.repo.root), &log, &tag, cancel).await
}

/// `RUNBOOK_TRUST` for the run in `worktree`: its copies of the repository's files whose
/// content is the main checkout's (whose trust the batch checked before it started).
fn trust_env(repo: &Repo, worktree: &std::path::Path) -> Vec<(String, OsString)> {
    // What the user trusts for this batch (the task file among them) stays trusted.
    let mut same: Vec<PathBuf> = std::env::var_os(crate::trust::VAR)
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    for name in [
        crate::config::REPO_FILE,
        crate::config::LOCAL_FILE,
        ".env",
        ".env.local",
    ] {
        let (main, copy) = (repo.root.join(name), worktree.join(name));
        let read = |p: &std::path::Path| {
            crate::files::read_optional(p, crate::files::CONFIG_LIMIT, crate::files::Links::Refuse)
                .ok()
                .flatten()
        };
        if let (Some(a), Some(b)) = (read(&main), read(&copy))
            && a == b
        {
            same.push(copy);
        }
    }
    match std::env::join_paths(same) {
        Ok(paths) if !paths.is_empty() => vec![(crate::trust::VAR.to_owned(), paths)],
        _ => Vec::new(),
    }
}
