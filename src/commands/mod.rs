//! One module per subcommand, each a free function returning an exit status.

pub(crate) mod batch;
pub(crate) mod completions;
pub(crate) mod config;
pub(crate) mod demo;
pub(crate) mod doctor;
pub(crate) mod fleet;
pub(crate) mod list;
mod remote;
pub(crate) mod replay;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod runs_here;
pub(crate) mod stats;
pub(crate) mod status;
pub(crate) mod trust;
pub(crate) mod upload;
