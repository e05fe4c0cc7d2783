//! `runbook trust`: trust a repository's files at their current content, list the trusted
//! files (`--show`), or forget them (`--forget`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::agent_env;
use crate::cli::TrustArgs;
use crate::config::tasks::TaskFile;
use crate::config::{self, LOCAL_FILE, REPO_FILE};
use crate::digest::Digest;
use crate::exit::{Error, ExitStatus};
use crate::files::{self, Links};
use crate::render::table::{Column, Fit, Table};
use crate::term::out;
use crate::trust::{self, RepoFile, escape, store};

/// The files runbook reads from a repository's root.
const NAMES: [&str; 4] = [REPO_FILE, LOCAL_FILE, ".env", ".env.local"];

pub(crate) fn trust(args: &TrustArgs) -> anyhow::Result<ExitStatus> {
    if args.show {
        return show(crate::term::table_width(args.wide));
    }
    let task_file = args.path.as_deref().and_then(task_file);
    let (root, only) = match &task_file {
        Some((path, _)) => {
            let absolute = std::path::absolute(path)?;
            (
                absolute.parent().unwrap_or(Path::new("/")).to_path_buf(),
                Some(absolute),
            )
        }
        None => targets(args.path.as_deref())?,
    };
    if args.forget {
        return forget(&root, only.as_deref());
    }
    let files = match (&task_file, &only) {
        (Some((_, tasks)), Some(path)) => vec![task_file_needs(path, tasks)?],
        _ => {
            let config = config::load(&root, [])?;
            let env = agent_env::load(&config, &[])?;
            trust::repository_files(&config, &env)
                .into_iter()
                .filter(|f| only.as_ref().is_none_or(|only| same(&f.path, only)))
                .collect()
        }
    };
    if files.is_empty() {
        let what = match &only {
            Some(file) => format!("{} is not a file runbook reads here", file.display()),
            None => format!(
                "{} has no runbook.toml, runbook.local.toml, .env or .env.local",
                root.display()
            ),
        };
        return Err(Error::Usage(format!("{}: nothing to trust", escape(&what))).into());
    }
    trust::record(&files)?;
    let mut out = String::new();
    for file in &files {
        let path = escape(&file.path.display().to_string());
        if file.needs.is_empty() {
            writeln!(out, "trusted {path} (it sets nothing that needs trust)")?;
            continue;
        }
        writeln!(out, "trusted {path}, which sets:")?;
        for need in &file.needs {
            match &need.value {
                Some(value) => writeln!(out, "    {} = {}", need.key, escape(value))?,
                None => writeln!(out, "    {} (a variable for the agent)", need.key)?,
            }
        }
    }
    out::print(&out)?;
    Ok(ExitStatus::Completed)
}

/// The repository root to look in, and the one file asked for, if one was: a file must be one
/// that runbook reads from a repository.
fn targets(path: Option<&Path>) -> anyhow::Result<(PathBuf, Option<PathBuf>)> {
    let Some(path) = path else {
        let cwd = std::env::current_dir()?;
        return Ok((config::repository_root(&cwd), None));
    };
    if path.is_dir() {
        return Ok((config::repository_root(&std::path::absolute(path)?), None));
    }
    let shown = escape(&path.display().to_string());
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if !NAMES.contains(&name) {
        return Err(Error::Usage(format!(
            "{shown}: runbook reads only runbook.toml, runbook.local.toml, .env and .env.local from a repository, and a batch's task files; give one of them or its directory"
        ))
        .into());
    }
    let absolute = std::path::absolute(path)?;
    let dir = absolute.parent().unwrap_or(Path::new("/")).to_path_buf();
    Ok((dir, Some(absolute)))
}

/// `path` and its tasks, when it is a batch's task file (a file of another name that reads as
/// one): trusted as a repository's files are, since what it sets runs when a batch runs it.
fn task_file(path: &Path) -> Option<(&Path, TaskFile)> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if !path.is_file() || NAMES.contains(&name) {
        return None;
    }
    config::tasks::read_tasks(path)
        .ok()
        .map(|tasks| (path, tasks))
}

/// The task file at `path` (`tasks`) as the trust record takes it: its content's digest, and
/// what any of its tasks sets that needs trust.
fn task_file_needs(path: &Path, tasks: &TaskFile) -> anyhow::Result<RepoFile> {
    let dir = path.parent().unwrap_or(Path::new("/"));
    let mut needs: Vec<trust::Need> = Vec::new();
    for task in &tasks.tasks {
        let entries = tasks.entries_of(&task.id).unwrap_or_default();
        let config = config::load_for_task(dir, (path, tasks.digest, entries), [])?;
        let env = agent_env::load(&config, &[])?;
        let found = trust::repository_files(&config, &env).into_iter();
        for need in found.filter(|f| same(&f.path, path)).flat_map(|f| f.needs) {
            if !needs.contains(&need) {
                needs.push(need);
            }
        }
    }
    Ok(RepoFile {
        path: path.to_path_buf(),
        digest: tasks.digest,
        needs,
    })
}

/// Whether two paths name the same file, as the trust record keys it.
fn same(a: &Path, b: &Path) -> bool {
    matches!((store::key(a), store::key(b)), (Ok(a), Ok(b)) if a == b)
}

/// Forgets the files asked for, or every file of the repository root.
fn forget(root: &Path, only: Option<&Path>) -> anyhow::Result<ExitStatus> {
    let paths: Vec<PathBuf> = match only {
        Some(file) => vec![file.to_path_buf()],
        None => NAMES.iter().map(|n| root.join(n)).collect(),
    };
    let keys: Vec<String> = paths.iter().filter_map(|p| store::key(p).ok()).collect();
    let mut forgotten = Vec::new();
    store::Store::update(|records| {
        for key in &keys {
            if records.remove(key).is_some() {
                forgotten.push(key.clone());
            }
        }
    })?;
    let mut out = String::new();
    if forgotten.is_empty() {
        let what = only.map_or_else(|| root.display().to_string(), |f| f.display().to_string());
        writeln!(out, "{}: nothing was trusted", escape(&what))?;
    }
    for key in forgotten {
        writeln!(out, "forgot {}", escape(&key))?;
    }
    out::print(&out)?;
    Ok(ExitStatus::Completed)
}

/// Every trusted file, and whether it still has the content that was trusted (`matches`), has
/// changed since (and so is not trusted), or is gone.
fn show(width: Option<usize>) -> anyhow::Result<ExitStatus> {
    let store = store::Store::load()?;
    let mut out = String::new();
    if store.records().is_empty() {
        writeln!(
            out,
            "No file is trusted (the record: {}).",
            escape(&store.path().display().to_string())
        )?;
        out::print(&out)?;
        return Ok(ExitStatus::Completed);
    }
    let mut table = Table::new(&[
        Column::new("STATUS"),
        Column::new("TRUSTED AT").rank(1),
        Column::new("FILE").fit(Fit::Path { min: 24 }),
    ]);
    for (key, record) in store.records() {
        let status = match files::read(Path::new(key), files::CONFIG_LIMIT, Links::Follow) {
            Ok(bytes) if Some(Digest::of(&bytes)) == Digest::from_hex(&record.sha256) => "matches",
            Ok(_) => "changed (not trusted until trusted again)",
            Err(e) if e.is_not_found() => "missing",
            Err(_) => "unreadable",
        };
        table.row([status.to_owned(), escape(&record.trusted_at), escape(key)]);
    }
    out.push_str(&table.fit(width).text());
    out::print(&out)?;
    Ok(ExitStatus::Completed)
}
