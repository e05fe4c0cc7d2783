//! The commented `runbook.toml` that `runbook config --init` writes, made from the key table.

use super::keys::{self, Flag, Key, agent_names};
use super::value::Kind;

/// How wide the comments are.
const WIDTH: usize = 100;

const HEADER: &str = "\
# runbook.toml: this repository's defaults for `runbook run`. Commit it.
#
# Personal overrides go in runbook.local.toml beside it (keep that out of git), and secrets in
# .env.local. `runbook config` shows the configuration in effect and where each value comes from.
# Every key is optional: uncomment a line to set it. Values shown are the defaults, or examples.
";

/// The starter file's text.
pub(crate) fn starter() -> String {
    let mut out = HEADER.to_owned();
    let sandbox = &keys::SANDBOX.0.key;
    let top = keys::all().filter(|k| !k.per_agent && !k.kind.is_table() && *k != sandbox);
    for key in top {
        out.push('\n');
        out.push_str(&describe(key));
        out.push_str(&format!("#{} = {}\n", key.name, sample(key)));
    }

    out.push_str(&format!(
        "\n# Settings for one agent ({}).\n#[agents.opencode]\n",
        agent_names()
    ));
    for key in keys::all().filter(|k| k.per_agent) {
        out.push_str(&describe(key));
        out.push_str(&format!("#{} = {}\n", key.name, sample(key)));
    }

    out.push('\n');
    out.push_str(&describe(sandbox));
    out.push_str("#[sandbox]\n#enabled = false\n");
    for key in keys::all().filter(|k| k.kind.is_list()) {
        out.push_str(&describe(key));
        let field = key.name.trim_start_matches("sandbox.");
        out.push_str(&format!("#{field} = {}\n", sample(key)));
    }

    for key in keys::all().filter(|k| k.kind.is_table() && !k.kind.is_list()) {
        out.push('\n');
        out.push_str(&describe(key));
        let entry = match key.kind {
            Kind::Check => "test",
            _ => "\"my-model\"",
        };
        out.push_str(&format!("#[{}]\n#{entry} = {}\n", key.name, sample(key)));
    }

    out.push_str(
        "\n# Variables for the agent. `${VAR}` is VAR from your shell. Secrets belong in .env.local,\n\
         # not here: this file is committed.\n#[env]\n#RUST_BACKTRACE = \"1\"\n",
    );
    out
}

/// The key's help, its variable and its flag, as comment lines.
fn describe(key: &Key) -> String {
    let mut also = Vec::new();
    also.extend(key.env_help());
    if !matches!(key.flag, Flag::None | Flag::Trailing) {
        also.push(format!("--{}", key.long()));
    }
    let also = if also.is_empty() {
        String::new()
    } else {
        format!(" ({})", also.join(", "))
    };
    comment(&format!("{}{also}.", key.help))
}

/// `text` as `# ` lines of at most [`WIDTH`] characters.
fn comment(text: &str) -> String {
    let mut out = String::new();
    let mut line = String::from("#");
    for word in text.split(' ') {
        if line.len() + 1 + word.len() > WIDTH && line.len() > 1 {
            out.push_str(&line);
            out.push('\n');
            line = String::from("#");
        }
        line.push(' ');
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

fn sample(key: &Key) -> String {
    match key.default_value() {
        Some(value) => value.to_toml().to_string(),
        None => key.example.unwrap_or("\"\"").to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::file;
    use crate::provenance::Layer;

    #[test]
    fn the_starter_is_valid_once_uncommented() {
        let text = starter();
        assert!(
            file::parse(Layer::Repo, Path::new("/r/runbook.toml"), &text)
                .unwrap()
                .entries
                .is_empty()
        );
        let uncommented: String = text
            .lines()
            .map(|l| match l.strip_prefix('#') {
                Some(rest) if !rest.starts_with(' ') && !rest.is_empty() => rest,
                _ => l,
            })
            .map(|l| format!("{l}\n"))
            .collect();
        let layer = file::parse(Layer::Repo, Path::new("/r/runbook.toml"), &uncommented).unwrap();
        // One entry per key: the per-agent keys for one agent, and one price.
        assert_eq!(layer.entries.len(), keys::all().count(), "{uncommented}");
        assert!(text.lines().all(|l| l.len() <= WIDTH), "{text}");
        assert_eq!(layer.env.len(), 1);
    }
}
