//! `runbook completions SHELL`, and the completion scripts and man pages kept in the repository
//! (`completions/`, `docs/man/`), all generated from the one clap definition.

use clap::CommandFactory as _;
use clap_complete::Shell;

use crate::cli::Cli;
use crate::exit::ExitStatus;

pub(crate) const BIN: &str = "runbook";
/// The shells with a completion script in `completions/`.
#[cfg(test)]
pub(crate) const SHELLS: [Shell; 5] = [
    Shell::Bash,
    Shell::Zsh,
    Shell::Fish,
    Shell::Elvish,
    Shell::PowerShell,
];

pub(crate) fn completions(shell: Shell) -> anyhow::Result<ExitStatus> {
    crate::term::out::print_document(&String::from_utf8_lossy(&script(shell)))?;
    Ok(ExitStatus::Completed)
}

pub(crate) fn script(shell: Shell) -> Vec<u8> {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), BIN, &mut buf);
    buf
}

#[cfg(test)]
pub(crate) fn man(cmd: clap::Command) -> Vec<u8> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut buf)
        .expect("rendering into memory cannot fail");
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shell_gets_a_script_naming_the_subcommands() {
        for shell in SHELLS {
            let text = String::from_utf8(script(shell)).unwrap();
            for sub in ["run", "status", "list", "replay", "trust", "completions"] {
                assert!(text.contains(sub), "{shell}: {sub} missing");
            }
        }
    }
}
