//! `runbook fleet`: what a scheduler needs to run a task file's tasks one per index (a
//! Kubernetes Indexed Job, a GitHub Actions matrix, a Slurm array), printed, never submitted.

mod gha;
mod input;
mod install;
mod k8s;
mod needs;
mod policy;
mod root;
mod slurm;

use std::path::Path;

use crate::cli::{FleetArgs, FleetEngine};
use crate::exit::{Error, ExitStatus};

/// The most legs a GitHub Actions matrix may have.
const GHA_MAX_LEGS: usize = 256;

/// What every generator is given.
pub(super) struct Plan<'a> {
    pub args: &'a FleetArgs,
    /// The task file as given on the command line.
    pub file: &'a Path,
    /// The task file's path from the top of its repository (Kubernetes, which holds the file
    /// itself: as given when it is in none).
    pub path: String,
    /// The bucket's URL.
    pub upload: &'a str,
    /// The agents its tasks run.
    pub agents: install::Agents,
    /// Its text.
    pub text: &'a str,
    /// How many tasks it makes: the indexes are 0 to this less one.
    pub tasks: usize,
}

/// `runbook fleet`.
pub(crate) fn fleet(args: &FleetArgs) -> anyhow::Result<ExitStatus> {
    let name_ok = !args.name.is_empty()
        && args.name.len() <= 52
        && args
            .name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !args.name.starts_with('-')
        && !args.name.ends_with('-');
    if !name_ok {
        return Err(Error::Usage(format!(
            "--name `{}`: use at most 52 lowercase letters, digits and inner `-`",
            crate::trust::escape(&args.name)
        ))
        .into());
    }
    input::check(
        &args.file,
        args.upload.as_deref(),
        args.image.as_deref().unwrap_or_default(),
    )?;
    if let Some(id) = &args.batch_id {
        crate::commands::batch::check_batch_id(id)?;
    }
    let file = crate::config::tasks::read_tasks(&args.file).map_err(Error::from)?;
    let tasks = crate::commands::batch::task_count(&file);
    if tasks == 0 {
        let shown = crate::trust::escape(&args.file.display().to_string());
        return Err(Error::Usage(format!("{shown}: no [[task]] in it")).into());
    }
    needs::given(args)?;
    let path = match (root::relative(&args.file), args.engine) {
        (Ok(path), _) => path,
        (Err(_), FleetEngine::K8s) => args.file.display().to_string(),
        (Err(e), _) => return Err(e.into()),
    };
    let text = std::fs::read_to_string(&args.file)
        .map_err(|e| Error::Usage(format!("cannot read {}: {e}", args.file.display())))?;
    let plan = Plan {
        args,
        file: &args.file,
        path,
        upload: args.upload.as_deref().unwrap_or_default(),
        agents: install::agents(&file),
        text: &text,
        tasks,
    };
    let out = render(&plan, args.engine)?;
    for line in notes(&plan, args.engine) {
        crate::term::print::warn(line);
    }
    crate::term::out::print_document(&out)?;
    Ok(ExitStatus::Completed)
}

/// What the user must still do for the output to run, one line each for stderr (the output's
/// comments say it too).
fn notes(plan: &Plan<'_>, engine: FleetEngine) -> Vec<String> {
    if engine != FleetEngine::Gha {
        return Vec::new();
    }
    plan.agents
        .own
        .iter()
        .map(|setting| gha::own_agent_note(setting))
        .collect()
}

/// The text for `engine`.
pub(super) fn render(plan: &Plan<'_>, engine: FleetEngine) -> anyhow::Result<String> {
    Ok(match engine {
        FleetEngine::K8s => k8s::render(plan),
        FleetEngine::Gha => {
            if plan.tasks > GHA_MAX_LEGS {
                return Err(Error::Usage(format!(
                    "{} makes {} tasks, more than the {GHA_MAX_LEGS} legs a GitHub Actions matrix may have: split the task file",
                    plan.file.display(),
                    plan.tasks
                ))
                .into());
            }
            gha::render(plan)
        }
        FleetEngine::Slurm => slurm::render(plan),
    })
}

/// The task file's name as a command line in a shell script gives it.
pub(super) fn quoted(text: &str) -> String {
    shell_words::quote(text).into_owned()
}

/// Where `runbook stats` reads one submission's runs: the bucket, then `--batch-id` or what
/// the engine's id makes (`engine_id`).
pub(super) fn url_of(args: &FleetArgs, engine_id: &str) -> String {
    format!(
        "{}/{}",
        args.upload
            .as_deref()
            .unwrap_or_default()
            .trim_end_matches('/'),
        args.batch_id.as_deref().unwrap_or(engine_id)
    )
}

/// [`url_of`] as a comment tells it, to be copied into a shell: the URL given shell-quoted, so
/// that a `$(…)` in it is not run (the id, or the placeholder for it, is plain).
pub(super) fn stats_url(args: &FleetArgs, engine_id: &str) -> String {
    format!(
        "{}/{}",
        quoted(
            args.upload
                .as_deref()
                .unwrap_or_default()
                .trim_end_matches('/')
        ),
        args.batch_id.as_deref().unwrap_or(engine_id)
    )
}

/// `value` as YAML: JSON is YAML (1.2), so serde writes it with no YAML library.
pub(super) fn yaml(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

#[cfg(test)]
mod tests;
