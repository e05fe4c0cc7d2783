//! The supervisor: owns the agent's process tree, its pipes, the watchdog and the limits.
//!
//! Read it top-down: `turn` runs one invocation of the agent. It starts the agent (`spawn`), whose
//! pipes are read into batches of events (`readers`), and feeds everything that happens into the
//! turn's state machine (`phase`): `Starting`, `Running`, `Finishing` after the agent's final
//! word, `Stopping` when runbook ends it, `Draining` once it exited with its pipes still open, and
//! `Ended`. The machine decides; the loop signals the tree (`tree`), emits the events, and asks
//! `lifecycle` how the turn ended.
//!
//! What makes a process the run's (`scope`: the run's mark, its cgroup) is settled once per run,
//! before the first turn, together with the `guardian` that ends the run's processes if runbook
//! is killed.

mod acp;
pub(crate) mod check;
mod finishing;
mod guardian;
mod handed;
mod permission_prompt;
mod phase;
mod raw;
mod readers;
mod scope;
mod signals;
pub(crate) use signals::unless_stopped;
mod spawn;
mod tree;
mod turn;
pub(crate) mod version;

pub(crate) use acp::PROTOCOL_VERSION as ACP_PROTOCOL_VERSION;
pub(crate) use guardian::invocation as guardian_invocation;
pub(crate) use raw::{RawFile, RawLogs};
pub(crate) use scope::Scope;
pub(crate) use signals::Signals;
pub(crate) use spawn::TurnSpec;
pub(crate) use tree::end_the_rest;
pub(crate) use turn::Supervisor;
