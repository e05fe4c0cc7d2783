//! The agent's environment: the variables runbook sets for it, from the configuration's `[env]`,
//! `.env` files, the shell and `--env-file`, and where each came from.

mod dotenv;
mod resolve;

pub(crate) use dotenv::is_var_name;
pub(crate) use resolve::{AgentEnv, load};
