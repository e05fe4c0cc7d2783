//! `plan.md` in the run directory: the latest plan proposed, written when it is proposed.

use std::io;
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
            let text = format!("{}\n", text.trim_end());
            let masked = crate::redact::current().mask(text.as_bytes());
            crate::redact::write::atomically(&self.path, "md.tmp", &masked)?;
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
