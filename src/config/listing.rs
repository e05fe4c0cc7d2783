//! `runbook config --keys`: every name a configuration file can set, with the variable and the
//! flag that set it too. It reads no file, so it answers even when a file has a mistake.

use super::keys::{self, Flag, Key};
use super::value::Kind;

/// One line per name: the name in files, what it is, and its default, variable and flag.
pub(crate) fn listing() -> String {
    let rows: Vec<(String, String)> = keys::all()
        .map(|key| (file_name(key), describe(key)))
        .chain(std::iter::once((
            "env.NAME".to_owned(),
            "A default for one of the agent's variables (.env and the shell override it)"
                .to_owned(),
        )))
        .collect();
    let width = rows.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    rows.iter()
        .map(|(name, text)| format!("{name:<width$}  {text}\n"))
        .collect()
}

/// How a file names the key: `model`, `agents.NAME.bin`, `checks.NAME`, `prices."MODEL"`.
pub(crate) fn file_name(key: &Key) -> String {
    match key.kind {
        _ if key.per_agent => format!("agents.NAME.{}", key.name),
        Kind::Check => format!("{}.NAME", key.name),
        Kind::Price => format!("{}.\"MODEL\"", key.name),
        _ => key.name.to_owned(),
    }
}

fn describe(key: &Key) -> String {
    let mut text = key.brief.unwrap_or(key.help).to_owned();
    let mut also = Vec::new();
    if let Some(default) = key.default {
        also.push(format!("default: {default}"));
    }
    if let Some(var) = key.env_help() {
        also.push(var);
    }
    match key.flag {
        Flag::None => {}
        // The brief says so.
        Flag::Trailing => {}
        Flag::Short(c) => also.push(format!("-{c}, --{}", key.long())),
        Flag::Run | Flag::Runs | Flag::Global => also.push(format!("--{}", key.long())),
    }
    if !also.is_empty() {
        text.push_str(&format!(" ({})", also.join("; ")));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_listed_once_with_its_variable_and_flag() {
        let text = listing();
        for key in keys::all() {
            let name = file_name(key);
            assert_eq!(
                text.lines()
                    .filter(|l| l.starts_with(&format!("{name} ")))
                    .count(),
                1,
                "{name}: {text}"
            );
        }
        let line = text
            .lines()
            .find(|l| l.starts_with("inactivity_timeout "))
            .unwrap();
        assert!(line.contains("RUNBOOK_INACTIVITY_TIMEOUT"), "{line}");
        assert!(line.contains("--inactivity-timeout"), "{line}");
        assert!(line.contains("default: 3m"), "{line}");
    }
}
