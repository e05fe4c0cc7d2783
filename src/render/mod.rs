//! Consumers that show a run to people (`human`) and to programs (`json`).

pub(crate) mod human;
pub(crate) mod json;
pub(crate) mod report;
mod styles;
pub(crate) mod table;

pub(crate) use styles::Styles;
