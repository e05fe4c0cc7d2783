//! Asking the person at the terminal whether to trust a repository's files: what each would
//! run, escaped (a file's text is foreign), then one y/N question.

use std::io::{self, BufRead as _};

use super::{RepoFile, Status};

/// Foreign text as one terminal line may show it (`foreign::term::escape_line`).
pub(crate) fn escape(text: &str) -> String {
    crate::foreign::term::escape_line(text).into_owned()
}

/// The question as it is shown.
fn question(untrusted: &[(RepoFile, Status)]) -> String {
    let mut out = String::new();
    for (file, status) in untrusted {
        let why = match status {
            Status::Changed => "has changed since you trusted it",
            _ => "is not trusted",
        };
        out.push_str(&format!(
            "{} {why}. It would have runbook run or write:\n",
            escape(&file.path.display().to_string())
        ));
        for need in &file.needs {
            match &need.value {
                Some(value) => out.push_str(&format!("    {} = {}\n", need.key, escape(value))),
                None => out.push_str(&format!(
                    "    {} (the agent's variable; its value is not shown: read it in the file)\n",
                    need.key
                )),
            }
        }
    }
    let it = if untrusted.len() == 1 { "it" } else { "them" };
    out.push_str(&format!(
        "Trust {it} as {} now, and run? [y/N] ",
        if untrusted.len() == 1 {
            "it is"
        } else {
            "they are"
        }
    ));
    out
}

/// Shows what the files would run on stderr and reads one answer from stdin: only `y` or `yes`
/// is a yes; anything else, or the end of input, is a no.
pub(super) fn ask(untrusted: &[(RepoFile, Status)]) -> io::Result<bool> {
    crate::term::out::say(&question(untrusted), false)?;
    let mut answer = String::new();
    io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::digest::Digest;
    use crate::trust::needs::Need;

    #[test]
    fn foreign_text_cannot_act_on_the_terminal() {
        assert_eq!(escape("cargo test"), "cargo test");
        assert_eq!(escape("a\u{1b}[2Jb\nc\r\td"), "a\\e[2Jb\\nc\\r\\td");
        assert_eq!(escape("x\u{202e}y\u{9b}z"), "x\\u{202e}y\\u{9b}z");
    }

    #[test]
    fn the_question_shows_every_setting_and_hides_variable_values() {
        let file = RepoFile {
            path: PathBuf::from("/r/runbook.toml"),
            digest: Digest::of(b""),
            needs: vec![
                Need {
                    key: "checks.\"test\"".into(),
                    value: Some("\"make\u{1b}]0;x\u{7}\"".into()),
                },
                Need {
                    key: "env.LD_PRELOAD".into(),
                    value: None,
                },
            ],
        };
        let q = question(&[(file, Status::Untrusted)]);
        assert!(q.starts_with("/r/runbook.toml is not trusted."), "{q}");
        assert!(q.contains("checks.\"test\" = \"make\\e]0;x\\a\""), "{q}");
        assert!(q.contains("env.LD_PRELOAD (the agent's variable"), "{q}");
        assert!(q.ends_with("[y/N] "), "{q}");
        assert!(!q.contains('\u{1b}'), "{q}");
    }
}
