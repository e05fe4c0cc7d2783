//! The agent's environment: the variables runbook sets for it, from the configuration's `[env]`,
//! `.env` files, the shell and `--env-file`, and where each came from.

mod dotenv;
mod resolve;

#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use dotenv::{expand as expand_dotenv, parse as parse_dotenv};
pub(crate) use resolve::{AgentEnv, load};
