//! What `list` and `status` both start from: the runs directory, the colour setting, and `--here`.

use std::path::PathBuf;

use crate::config::{self, Flags};
use crate::rundir;
use crate::runs::Runs;
use crate::term::ColorChoice;

/// The runs a reading command looks at, as the configuration and its flags name them.
pub(crate) struct RunsHere {
    pub(crate) runs: Runs,
    pub(crate) color: ColorChoice,
    /// With `--here`: the current directory, canonical, that a run must have run in.
    pub(crate) here: Option<PathBuf>,
}

impl RunsHere {
    /// Loads the configuration (with the command's own `--runs-dir`) and, when `here` is set,
    /// the current directory.
    pub(crate) fn open(
        global: &Flags<config::Global>,
        runs_dir: &Flags<config::Runs>,
        here: bool,
    ) -> anyhow::Result<RunsHere> {
        let config = config::load_here(global.values().iter().chain(runs_dir.values()))?;
        let runs = Runs::new(rundir::runs_dir(&config)?);
        let color = config.value(&config::keys::COLOR);
        let here = if here {
            Some(std::env::current_dir()?.canonicalize()?)
        } else {
            None
        };
        Ok(RunsHere { runs, color, here })
    }
}
