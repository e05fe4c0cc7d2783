//! `runbook batch`: the tasks of a task file, each an ordinary run (`runbook run --json`, a child
//! process of this same binary) in a git worktree of its own, at most `-j` at once, within one
//! budget, with one view; `batches/<id>/batch.json` records them.

mod child;
mod clean;
mod drive;
pub(crate) mod follow;
mod index;
mod plan;
mod queue;
pub(crate) mod record;
pub(crate) mod report;
mod schedule;
pub(crate) mod setup;
mod view;
pub(crate) mod worktree;

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::cli::{BatchArgs, BatchCommand};
use crate::config::tasks::TaskFile;
use crate::config::{self, Flags};
use crate::exit::{Error, ExitStatus};
use crate::rundir;
use worktree::Repo;

/// The most a task list read from stdin may hold.
const STDIN_LIMIT: u64 = 16 * 1024 * 1024;

/// `runbook batch`.
pub(crate) async fn batch(
    args: BatchArgs,
    global: &Flags<config::Global>,
) -> anyhow::Result<ExitStatus> {
    if let Some(BatchCommand::Clean {
        batch,
        force,
        runs_dir,
    }) = &args.command
    {
        return clean::clean(batch.as_deref(), *force, global, runs_dir);
    }
    let cwd = std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .map_err(|e| Error::Usage(format!("cannot read the current directory: {e}")))?;
    let asked = checked(&args)?;
    let upload = args
        .upload
        .as_deref()
        .map(crate::bucket::open)
        .transpose()?;
    let repo = Repo::find(&cwd)?;
    let config = config::load(&cwd, global.values().iter().chain(args.runs_dir.values()))?;
    let runs_dir = rundir::runs_dir(&config)?;
    let batch_id = rundir::new_id(SystemTime::now());
    let batch_dir = record::batches_dir(&runs_dir).join(&batch_id);
    let (tasks, label) = read_tasks(&args, &batch_dir)?;
    let mut jobs = plan::jobs(&tasks);
    if jobs.is_empty() {
        return Err(Error::Usage(format!("{label}: no [[task]] in it")).into());
    }
    if let Some(n) = asked {
        jobs = index::pick(jobs, n, &label).inspect_err(|_| {
            let _ = std::fs::remove_dir_all(&batch_dir);
        })?;
    }
    let common = plan::Common {
        tasks: &tasks,
        tasks_path: &tasks.path,
        runs_dir: &runs_dir,
        trust: args.trust,
        global,
    };
    let prepared = plan::preflight(&mut jobs, &common, &cwd)
        .and_then(|()| setup_trusted(&tasks, &jobs, &repo.root, args.trust))
        .and_then(|()| somewhere_to_upload(&args, upload.is_some(), &jobs))
        .and_then(|()| includes_inside(&jobs, &repo.root));
    if let Err(e) = prepared {
        let _ = std::fs::remove_dir_all(&batch_dir);
        return Err(e);
    }
    crate::rundir::ensure_runs_dir(&batch_dir)?;
    let subdir = cwd
        .strip_prefix(&repo.root)
        .unwrap_or(Path::new(""))
        .to_path_buf();
    let color = crate::term::TermEnv::detect().color(config.value(&config::keys::COLOR));
    let settings = queue::Settings {
        jobs: args.jobs.unwrap_or_else(default_jobs),
        max_fail: args.fail_fast.then_some(1).or(args.max_fail),
        budget: args.max_cost,
        json: args.json,
        color,
        junit: args.junit.clone(),
        tasks_label: label,
        one_index: asked.is_some(),
    };
    let ctx = drive::Ctx {
        repo,
        group: args.batch_id.clone().unwrap_or_else(|| batch_id.clone()),
        batch_id,
        batch_dir,
        keep: args.keep,
        subdir,
        in_place: args.in_place,
        upload,
        tell_upload: asked.is_some() && !args.json,
    };
    queue::run(ctx, jobs, &common, settings).await
}

/// The task index the command line asks for, once the flags that go with one are checked.
fn checked(args: &BatchArgs) -> anyhow::Result<Option<usize>> {
    let asked = index::asked(args)?;
    if args.in_place && asked.is_none() {
        return Err(Error::Usage(
            "--in-place runs one task in this checkout: give --task-index N or --task-index-from-env"
                .into(),
        )
        .into());
    }
    if let Some(id) = &args.batch_id {
        check_batch_id(id)?;
    }
    Ok(asked)
}

/// `--batch-id` names where runs go in a bucket: it needs one (`--upload`, or the `upload`
/// setting of some task).
fn somewhere_to_upload(args: &BatchArgs, flag: bool, jobs: &[plan::Job]) -> anyhow::Result<()> {
    if args.batch_id.is_none() || flag || jobs.iter().any(|j| j.upload.is_some()) {
        return Ok(());
    }
    Err(Error::Usage(
        "--batch-id names the batch in a bucket: give --upload URL too (or set `upload`)".into(),
    )
    .into())
}

/// A batch id given to upload under (`--batch-id`): a name as a task's id is, and not `runs`,
/// where `runbook run` uploads.
pub(crate) fn check_batch_id(id: &str) -> Result<(), Error> {
    if config::tasks::valid_id(id).is_ok() && id != crate::bucket::RUNS_GROUP {
        return Ok(());
    }
    Err(Error::Usage(format!(
        "--batch-id `{}`: use up to 64 letters, digits, `-`, `_` and `.`, other than `runs` (example: slurm-4242)",
        crate::trust::escape(id)
    )))
}

/// What `list` and `doctor` say of the worktrees batches left, if they left any.
pub(crate) fn leftover_note(runs_dir: &Path) -> Option<String> {
    let left = clean::leftovers(runs_dir);
    let worktrees: usize = left.iter().map(|(_, n)| n).sum();
    (worktrees > 0).then(|| {
        format!(
            "{} left by {} in {}: look at them, then `runbook batch clean` removes them",
            crate::format::plural(worktrees as u64, "worktree"),
            crate::format::plural(left.len() as u64, "batch"),
            record::batches_dir(runs_dir).display()
        )
    })
}

/// How many tasks `file` makes once `repeat` and `agents` made their copies: the indexes of
/// `--task-index` are 0 to this less one.
pub(crate) fn task_count(file: &TaskFile) -> usize {
    plan::jobs(file).len()
}

/// min(4, cores).
fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

/// The task file, and how messages name it. Tasks read from stdin are kept in the batch's
/// directory, where its runs read them.
fn read_tasks(args: &BatchArgs, batch_dir: &Path) -> anyhow::Result<(TaskFile, String)> {
    let given = args.tasks.as_ref().or(args.file.as_ref());
    let Some(path) = given else {
        return Err(Error::Usage("give a task file: runbook batch tasks.toml".into()).into());
    };
    if path.as_os_str() != "-" {
        let path = path.canonicalize().unwrap_or(std::path::absolute(path)?);
        let tasks = config::tasks::read_tasks(&path).map_err(Error::from)?;
        return Ok((tasks, path.display().to_string()));
    }
    let mut text = String::new();
    std::io::stdin()
        .take(STDIN_LIMIT)
        .read_to_string(&mut text)
        .map_err(|e| Error::Usage(format!("cannot read the tasks on stdin: {e}")))?;
    config::tasks::parse_json_lines(Path::new("<stdin>"), &text).map_err(Error::from)?;
    crate::rundir::ensure_runs_dir(batch_dir)?;
    let kept = batch_dir.join("tasks.jsonl");
    let masked = crate::redact::current();
    crate::redact::write::atomically(&kept, "tmp", &masked.mask(text.as_bytes()))?;
    let tasks = config::tasks::read_tasks(&kept).map_err(Error::from)?;
    Ok((tasks, "<stdin>".to_owned()))
}

/// A `setup` command in a task file inside a repository (this one, or a clone named from
/// elsewhere) runs only once the file is trusted, as the commands of the repository's own
/// configuration do.
fn setup_trusted(
    tasks: &TaskFile,
    jobs: &[plan::Job],
    root: &Path,
    given: bool,
) -> anyhow::Result<()> {
    if given || !jobs.iter().any(|j| j.setup.is_some()) {
        return Ok(());
    }
    if !crate::trust::task_file_foreign(root, &tasks.path) {
        return Ok(());
    }
    if crate::trust::file_trusted(&tasks.path, tasks.digest)? {
        return Ok(());
    }
    let path = crate::trust::escape(&shell_words::quote(&tasks.path.display().to_string()));
    Err(Error::Usage(format!(
        "not trusted: {path} sets setup; nothing was started. Read it, then run `runbook trust {path}` (or, for one batch, pass --trust)"
    ))
    .into())
}

/// Every `include` names a file of the repository, without a link out on the way (checked
/// again as it is copied): a usage error naming the task otherwise, before anything starts.
/// A list the copies of tasks share is checked once.
fn includes_inside(jobs: &[plan::Job], root: &Path) -> anyhow::Result<()> {
    let mut seen = std::collections::HashSet::new();
    for job in jobs {
        if !seen.insert(std::sync::Arc::as_ptr(&job.include).cast::<()>()) {
            continue;
        }
        for name in job.include.iter() {
            worktree::included(root, name)
                .map_err(|e| Error::Usage(format!("task `{}`: {e:#}", job.name)))?;
        }
    }
    Ok(())
}

/// The directory of the batch `id` (or of a unique prefix of one, or of its random part) under
/// `runs_dir`'s batches.
pub(crate) fn find_batch(runs_dir: &Path, id: &str) -> anyhow::Result<Option<PathBuf>> {
    let dir = record::batches_dir(runs_dir);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(None);
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| crate::runs::fits(&e.file_name().to_string_lossy(), id))
        .map(|e| e.path())
        .collect();
    found.sort();
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.pop()),
        n => Err(Error::Usage(format!("`{id}` names {n} batches: give more of the id")).into()),
    }
}

/// The batch whose whole id is `id`, if there is one (run ids and batch ids look alike: a whole
/// batch id names the batch).
pub(crate) fn named(runs_dir: &Path, id: Option<&str>) -> Option<PathBuf> {
    let id = id?;
    let dir = record::batches_dir(runs_dir).join(id);
    let plain = config::tasks::valid_id(id).is_ok();
    (plain && dir.join(record::RECORD).is_file()).then_some(dir)
}

/// The batch a command that takes a run or a batch (`status`, `report`) is given: its whole id,
/// or a prefix of its id or of its random part that fits no run. `None`: `name` is for a run
/// (a run's id, a directory, a bucket's URL, or nothing: the latest run).
pub(crate) fn resolve(
    runs: &crate::runs::Runs,
    name: Option<&str>,
) -> anyhow::Result<Option<PathBuf>> {
    if let Some(dir) = named(runs.dir(), name) {
        return Ok(Some(dir));
    }
    let Some(name) = name.filter(|n| !crate::bucket::is_url(n) && !Path::new(n).is_dir()) else {
        return Ok(None);
    };
    let run = runs.any_fits(name)?;
    match find_batch(runs.dir(), name) {
        // A batch's tasks start in the second the batch does, so their ids and its share a
        // prefix: one that fits a run and a batch alike is not taken as either.
        Ok(Some(_)) | Err(_) if run => Err(Error::Usage(format!(
            "`{name}` names a run and a batch: give more of the id"
        ))
        .into()),
        Ok(Some(dir)) => Ok(Some(dir)),
        Err(e) => Err(e),
        Ok(None) if run => Ok(None),
        Ok(None) => nothing_named(runs, name),
    }
}

/// When `name` fits neither a run nor a batch: with batches about, an error that names both
/// (the latest of each); without any, `None`, and the run's own error says it.
fn nothing_named(runs: &crate::runs::Runs, name: &str) -> anyhow::Result<Option<PathBuf>> {
    let mut batches: Vec<String> = std::fs::read_dir(record::batches_dir(runs.dir()))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| crate::runs::looks_like_run_id(n))
                .collect()
        })
        .unwrap_or_default();
    if batches.is_empty() {
        return Ok(None);
    }
    batches.sort();
    let latest = |ids: &[String]| {
        let shown: Vec<&str> = ids.iter().rev().take(3).map(String::as_str).collect();
        shown.join(", ")
    };
    let run_ids = runs.ids()?;
    let runs_part = if run_ids.is_empty() {
        "there are no runs".to_owned()
    } else {
        format!("the latest runs are {}", latest(&run_ids))
    };
    Err(Error::Usage(format!(
        "no run or batch matches `{name}`: {runs_part}; the latest batches are {}",
        latest(&batches)
    ))
    .into())
}
