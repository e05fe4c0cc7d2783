//! `runbook stats`: the numbers over many runs, read from their receipts (the receipts stay the
//! truth; nothing else is kept). Reading is in `read`, the figures in `figures`;
//! the bounds a receipt's figures must keep are in `crate::bounds`.

mod figures;
mod read;

pub(crate) use figures::{Figures, Group, StuckFigures};
pub(crate) use read::{Filter, RunFacts, read_all, read_bucket};
