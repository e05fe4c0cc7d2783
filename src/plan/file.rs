//! `plan.md` in the run directory: the latest plan proposed, written when it is proposed.

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use crate::consumer::{Consumer, Delivery};
use crate::event::EventKind;

pub(crate) struct PlanFile {
    path: PathBuf,
}

impl PlanFile {
    pub(crate) fn new(run_dir: &Path) -> Self {
        Self {
            path: run_dir.join(crate::rundir::PLAN),
        }
    }
}

impl Consumer for PlanFile {
    fn event(&mut self, d: &Delivery<'_>) -> io::Result<()> {
        if let EventKind::PlanProposed { text, .. } = &d.event.kind {
            // Written whole to a temporary file and renamed, like the receipt.
            let tmp = self.path.with_extension("md.tmp");
            let written = crate::rundir::create_private(&tmp).and_then(|mut file| {
                writeln!(file, "{}", text.trim_end())?;
                std::fs::rename(&tmp, &self.path)
            });
            if written.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            written?;
        }
        Ok(())
    }

    fn name(&self) -> &'static str {
        "plan.md"
    }

    fn record(&self) -> Option<&Path> {
        Some(&self.path)
    }
}
