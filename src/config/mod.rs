//! Configuration layers: built-in defaults, the global file, the repository's `runbook.toml` and
//! `runbook.local.toml`, `RUNBOOK_*` variables and flags, merged key by key with the layer that
//! set each value remembered. Keys are declared once, in `keys`.

pub(crate) mod check;
mod discover;
pub(crate) mod duration;
mod error;
mod file;
mod flags;
pub(crate) mod keys;
mod listing;
mod resolve;
mod starter;
pub(crate) mod suggest;
pub(crate) mod tasks;
mod value;
mod variables;

pub(crate) use discover::{LOCAL_FILE, REPO_FILE, repository_root};
pub(crate) use error::{ConfigError, line_column};
#[cfg(test)]
pub(crate) use file::parse as parse_file;
pub(crate) use file::{Entry, EnvDefault, is_var_name};
pub(crate) use flags::{FlagValue, Flags, Global, Run, Runs, color_flag};
#[cfg(test)]
pub(crate) use listing::file_name;
pub(crate) use listing::listing;
pub(crate) use resolve::{Config, Setting, load, load_for_task, load_here};
pub(crate) use starter::starter;
pub(crate) use value::{ObserverSpec, Value};
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use {
    file::read as read_file,
    resolve::{ConfigFile, resolve},
};
