//! The batch's jobs: each task of the file times its copies (`repeat`, `agents`), each checked
//! as the run it will be before anything starts, and the command line of that run.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Parser as _;

use crate::agent_kind::AgentKind;
use crate::cli::{Cli, Command};
use crate::config::keys::agent_name;
use crate::config::tasks::TaskFile;
use crate::config::{self, Flags};
use crate::exit::Error;

/// One run of the batch.
#[derive(Debug, Clone)]
pub(super) struct Job {
    /// Unique in the batch: the task's id, with the agent and copy when there are several.
    pub name: String,
    /// The `[[task]]` it is a copy of.
    pub task: String,
    /// The agent it runs, when the task fans out (`agents`).
    pub agent: Option<AgentKind>,
    /// The agent it runs, by name (the one `agents` or the settings choose).
    pub agent_name: String,
    /// Its own budget (`max_cost`), if it has one.
    pub max_cost: Option<f64>,
    /// A command run in its worktree first (one copy, however many jobs run it).
    pub setup: Option<Arc<str>>,
    /// How long `setup` may run ([`DEFAULT_SETUP_TIMEOUT`] unless the file says).
    pub setup_timeout: std::time::Duration,
    /// Ignored files copied into its worktree (one list, however many jobs copy it).
    pub include: Arc<[String]>,
    /// Where its run is uploaded as its settings say (`upload`): the batch uploads it, the run
    /// itself never does.
    pub upload: Option<crate::bucket::Bucket>,
}

/// How long a task's `setup` may run when its file does not say (`setup_timeout`).
pub(super) const DEFAULT_SETUP_TIMEOUT: std::time::Duration =
    std::time::Duration::from_secs(15 * 60);

/// What every job's run shares.
pub(super) struct Common<'a> {
    /// The task file, read once.
    pub tasks: &'a TaskFile,
    pub tasks_path: &'a Path,
    pub runs_dir: &'a Path,
    pub trust: bool,
    pub global: &'a Flags<config::Global>,
}

/// Every job of `file`, in its order: a task once, or once per copy. Their number was bounded
/// as the file was read (`tasks::MAX_TASKS`); what the copies share is held once.
pub(super) fn jobs(file: &TaskFile) -> Vec<Job> {
    let mut out = Vec::new();
    let shared_setup: Option<Arc<str>> = file.defaults.setup.as_deref().map(Arc::from);
    let shared_include: Arc<[String]> = file.defaults.include.clone().unwrap_or_default().into();
    for task in &file.tasks {
        let section = &task.section;
        let setup = section
            .setup
            .as_deref()
            .map(Arc::from)
            .or_else(|| shared_setup.clone());
        let include = section
            .include
            .clone()
            .map_or_else(|| shared_include.clone(), Arc::from);
        let setup_timeout = section
            .setup_timeout
            .or(file.defaults.setup_timeout)
            .unwrap_or(DEFAULT_SETUP_TIMEOUT);
        let repeat = section.repeat.or(file.defaults.repeat).unwrap_or(1);
        let fan = section.agents.clone().or(file.defaults.agents.clone());
        let copies: Vec<(Option<AgentKind>, u32)> = match fan {
            Some(list) => list
                .into_iter()
                .map(|(a, n)| (Some(a), n * repeat))
                .collect(),
            None => vec![(None, repeat)],
        };
        let several_agents = copies.len() > 1;
        for (agent, count) in copies {
            for n in 1..=count {
                let mut name = task.id.clone();
                if let Some(agent) = agent.filter(|_| several_agents) {
                    name = format!("{name}-{}", agent_name(agent));
                }
                if count > 1 {
                    name = format!("{name}-{n}");
                }
                out.push(Job {
                    name,
                    task: task.id.clone(),
                    agent,
                    agent_name: String::new(),
                    max_cost: None,
                    setup: setup.clone(),
                    setup_timeout,
                    include: include.clone(),
                    upload: None,
                });
            }
        }
    }
    out
}

/// The command line of the job's run (after the program's name): `runbook run --json` in
/// `cwd`, the task's settings read from the task file, then `extra` flags.
pub(super) fn argv(job: &Job, common: &Common<'_>, cwd: &Path, extra: &[String]) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![
        "--color".into(),
        "never".into(),
        "run".into(),
        "--json".into(),
    ];
    let mut flag = |name: &str, value: OsString| {
        args.push(name.into());
        args.push(value);
    };
    flag("--cwd", cwd.into());
    flag("--task-file", common.tasks_path.into());
    flag("--task-id", job.task.clone().into());
    flag("--runs-dir", common.runs_dir.into());
    if let Some(agent) = job.agent {
        flag("--agent", agent_name(agent).into());
    }
    if common.trust {
        args.push("--trust".into());
    }
    args.extend(extra.iter().map(OsString::from));
    // The prompt is the task's own (`--task-id`); this stands in for it.
    args.push("task".into());
    args
}

/// What a job's run was found to be before anything started: its agent, budget and upload.
type Checked = (&'static str, Option<f64>, Option<crate::bucket::Bucket>);

/// Checks each job as the run it will be (the configuration, trust, the agent's binary), in
/// the main checkout, and fills in its agent, budget and upload: once per task and agent, the
/// copies of a task being the same run. The first mistake is a usage error: nothing has started.
pub(super) fn preflight(jobs: &mut [Job], common: &Common<'_>, root: &Path) -> anyhow::Result<()> {
    let mut checked: HashMap<(String, Option<&'static str>), Checked> = HashMap::new();
    for job in jobs.iter_mut() {
        let key = (job.task.clone(), job.agent.map(agent_name));
        let (agent, max_cost, upload) = match checked.get(&key) {
            Some(found) => found.clone(),
            None => {
                let found = check(job, common, root)?;
                checked.insert(key, found.clone());
                found
            }
        };
        job.agent_name = agent.to_owned();
        job.max_cost = max_cost;
        job.upload = upload;
    }
    Ok(())
}

/// The job's run as `runbook run` would resolve it, its task file as read once.
fn check(job: &Job, common: &Common<'_>, root: &Path) -> anyhow::Result<Checked> {
    let mut line = vec![OsString::from("runbook")];
    line.extend(argv(job, common, root, &[]));
    let cli = Cli::try_parse_from(line)
        .map_err(|e| Error::Usage(format!("task `{}`: {}", job.name, e.kind())))?;
    let Command::Run(mut args) = cli.command else {
        unreachable!("the command line above is a run's");
    };
    crate::commands::run::setup::take_task_prompt(&mut args, Some(common.tasks))?;
    crate::commands::run::setup::preflight(&args, common.global, common.tasks)
        .map_err(|e| Error::Usage(format!("task `{}`: {e:#}", job.name)).into())
}

/// Where the job's worktree goes.
pub(super) fn worktree_dir(batch_dir: &Path, job: &Job) -> PathBuf {
    batch_dir.join("worktrees").join(&job.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeat_and_agents_make_named_copies() {
        let file = crate::config::tasks::parse_tasks(
            Path::new("/b/t.toml"),
            "[[task]]\nid = \"a\"\nprompt = \"x\"\n\
             [[task]]\nid = \"b\"\nprompt = \"y\"\nrepeat = 2\n\
             [[task]]\nid = \"c\"\nprompt = \"z\"\nagents = [\"claude:2\", \"codex\"]\n\
             [[task]]\nid = \"d\"\nprompt = \"w\"\nagents = [\"codex\"]\n",
        )
        .unwrap();
        let names: Vec<String> = jobs(&file).into_iter().map(|j| j.name).collect();
        assert_eq!(
            names,
            [
                "a",
                "b-1",
                "b-2",
                "c-claude-1",
                "c-claude-2",
                "c-codex",
                "d"
            ]
        );
    }
}
