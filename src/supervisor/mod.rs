//! The supervisor: owns the agent's process tree, its pipes, the watchdog and the limits.

mod readers;
mod signals;
mod tree;
mod turn;

pub(crate) use signals::Signals;
pub(crate) use tree::become_subreaper;
pub(crate) use turn::{Limits, RawLogs, TurnSpec, agent_outcome, millis, run_turn};
