//! A project check as configured (`--check NAME=CMD`, `[checks]`): its name, command, timeout and
//! working directory. Running one is the supervisor's (`supervisor::check`).

use std::path::PathBuf;
use std::time::Duration;

/// A check as configured.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Check {
    pub name: String,
    /// Run with `sh -c`.
    pub command: String,
    /// Ended with its tree after this long.
    pub timeout: Option<Duration>,
    /// Relative to the agent's working directory.
    pub cwd: Option<PathBuf>,
}

/// Whether `name` can name a check: letters, digits, `-`, `_` and `.`, not starting with `.`
/// (it names the check's log file). The error says so in one line.
pub(crate) fn valid_name(name: &str) -> Result<(), String> {
    let named = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.');
    if named {
        Ok(())
    } else {
        Err(format!(
            "`{name}` is not a check name: use letters, digits, `-`, `_` and `.` (example: test='cargo test')"
        ))
    }
}
