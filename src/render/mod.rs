//! Consumers that show a run to people (`human`) and to programs (`json`).

pub(crate) mod human;
pub(crate) mod json;
mod styles;

pub(crate) use styles::Styles;
