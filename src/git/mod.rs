//! git, as runbook runs it: one runner that lets no repository, and no configuration the agent
//! could write, name a program for git to run ([`run`]); what a run changed in its repository
//! ([`changes`]); a work tree's content committed onto a branch without touching its HEAD
//! ([`commit`]); how long one git command may take ([`limit`]).

mod changes;
pub(crate) mod commit;
mod limit;
pub(crate) mod run;

pub(crate) use changes::{Start, changed_paths, changes, start};
pub(crate) use run::Git;
