//! `runbook completions SHELL`, and the completion scripts and man pages kept in the repository
//! (`completions/`, `docs/man/`), all generated from the one clap definition.

use std::io::Write as _;

use clap::CommandFactory as _;
use clap_complete::Shell;

use crate::cli::Cli;
use crate::exit::ExitStatus;

const BIN: &str = "runbook";
/// The shells with a completion script in `completions/`.
#[cfg(test)]
const SHELLS: [Shell; 5] = [
    Shell::Bash,
    Shell::Zsh,
    Shell::Fish,
    Shell::Elvish,
    Shell::PowerShell,
];

pub(crate) fn completions(shell: Shell) -> anyhow::Result<ExitStatus> {
    let mut out = std::io::stdout().lock();
    out.write_all(&script(shell))?;
    out.flush()?;
    Ok(ExitStatus::Completed)
}

fn script(shell: Shell) -> Vec<u8> {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), BIN, &mut buf);
    buf
}

/// Every generated file, by its path in the repository (checked, and refreshed, by a test).
#[cfg(test)]
fn generated_files() -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for shell in SHELLS {
        files.push((
            format!(
                "completions/{}",
                clap_complete::Generator::file_name(&shell, BIN)
            ),
            script(shell),
        ));
    }
    let cmd = Cli::command();
    files.push((format!("docs/man/{BIN}.1"), man(cmd.clone())));
    for sub in cmd.get_subcommands() {
        let name = format!("{BIN}-{}", sub.get_name());
        files.push((format!("docs/man/{name}.1"), man(sub.clone().name(name))));
    }
    files
}

#[cfg(test)]
fn man(cmd: clap::Command) -> Vec<u8> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut buf)
        .expect("rendering into memory cannot fail");
    buf
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// The committed completion scripts and man pages match the command line. To refresh them
    /// after changing it: `RUNBOOK_BLESS=1 cargo test generated_files`.
    #[test]
    fn generated_files_are_current() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let bless = std::env::var_os("RUNBOOK_BLESS").is_some();
        let mut stale = Vec::new();
        for (path, content) in generated_files() {
            let file = root.join(&path);
            if bless {
                std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                std::fs::write(&file, &content).unwrap();
            } else if std::fs::read(&file).ok().as_deref() != Some(&content[..]) {
                stale.push(path);
            }
        }
        assert!(
            stale.is_empty(),
            "stale generated files {stale:?}: run `RUNBOOK_BLESS=1 cargo test generated_files`"
        );
    }

    #[test]
    fn every_shell_gets_a_script_naming_the_subcommands() {
        for shell in SHELLS {
            let text = String::from_utf8(script(shell)).unwrap();
            for sub in ["run", "status", "list", "replay", "completions"] {
                assert!(text.contains(sub), "{shell}: {sub} missing");
            }
        }
    }
}
