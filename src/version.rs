//! What `runbook --version` says: the version and the commit it was built from (build.rs); with
//! `--verbose` too, the versions of the event and receipt schemas it writes and its target.

use std::ffi::OsString;

use crate::event::SCHEMA_VERSION;

/// The commit this binary was built from, empty when unknown (built outside git, from a crate
/// packaged without its commit).
const COMMIT: &str = env!("RUNBOOK_COMMIT");
const TARGET: &str = env!("RUNBOOK_TARGET");

/// The commit this binary was built from, empty when unknown.
pub(crate) fn commit() -> &'static str {
    COMMIT
}

/// `0.6.0 (commit 98c6778abc)`, or `0.6.0 (unknown commit)`.
pub(crate) fn short() -> String {
    let version = env!("CARGO_PKG_VERSION");
    if COMMIT.is_empty() {
        format!("{version} (unknown commit)")
    } else {
        format!("{version} (commit {COMMIT})")
    }
}

/// The version with what a bug report needs besides: the schemas and the build's target.
pub(crate) fn long() -> String {
    format!(
        "runbook {}\nevent schema    {SCHEMA_VERSION} (docs/events.md)\nreceipt schema  {SCHEMA_VERSION} (docs/receipt.schema.json)\ntarget          {TARGET}\n",
        short()
    )
}

/// Whether the command line asks for the long version: `--version` (or `-V`) with `--verbose`
/// (or `-v`), in either order, before any `--`. clap alone would stop at `--version`.
pub(crate) fn verbose_asked(args: impl IntoIterator<Item = OsString>) -> bool {
    let args: Vec<OsString> = args.into_iter().skip(1).take_while(|a| a != "--").collect();
    let has = |long: &str, short: &str| args.iter().any(|a| a == long || a == short);
    has("--version", "-V") && has("--verbose", "-v")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(line: &str) -> bool {
        verbose_asked(line.split(' ').map(OsString::from))
    }

    #[test]
    fn the_long_version_needs_both_flags_before_a_double_dash() {
        assert!(asked("runbook --version --verbose"));
        assert!(asked("runbook -v -V"));
        assert!(!asked("runbook --version"));
        assert!(!asked("runbook run -v fix"));
        assert!(!asked("runbook run -- --version --verbose"));
    }

    #[test]
    fn the_short_version_names_a_commit_or_says_it_is_unknown() {
        let text = short();
        assert!(text.starts_with(env!("CARGO_PKG_VERSION")), "{text}");
        assert!(
            text.ends_with("(unknown commit)") || text.contains("(commit "),
            "{text}"
        );
    }
}
