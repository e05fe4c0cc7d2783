//! The reference tables of docs/configuration.md, made from the code: every option of
//! `runbook run` from its clap definition, every configuration key from the typed keys, so that
//! none can be missing, twice, or out of date.

use clap::CommandFactory as _;

use crate::cli::Cli;
use crate::config::keys::{self, Flag};

/// The options of `runbook run`, one table per heading of its `--help`, in that order.
pub(super) fn run_options() -> String {
    let cli = Cli::command();
    let run = cli
        .get_subcommands()
        .find(|c| c.get_name() == "run")
        .expect("runbook run");
    let mut headings: Vec<Option<&str>> = Vec::new();
    for arg in run.get_arguments() {
        if !headings.contains(&arg.get_help_heading()) {
            headings.push(arg.get_help_heading());
        }
    }
    let mut text = String::new();
    for heading in headings {
        let rows: Vec<String> = run
            .get_arguments()
            .filter(|a| a.get_help_heading() == heading && !a.is_positional() && !a.is_hide_set())
            .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
            .map(option_row)
            .collect();
        if rows.is_empty() {
            continue;
        }
        text.push_str(&format!(
            "\n**{}**\n\n| option | default | variable | |\n| --- | --- | --- | --- |\n",
            heading.unwrap_or("Options")
        ));
        for row in rows {
            text.push_str(&row);
        }
    }
    text
}

/// `| `-m, --model MODEL` | … |`: one option's flags, default, variable and one-line help.
fn option_row(arg: &clap::Arg) -> String {
    let mut flags = Vec::new();
    if let Some(short) = arg.get_short() {
        flags.push(format!("-{short}"));
    }
    if let Some(long) = arg.get_long() {
        flags.push(format!("--{long}"));
    }
    let mut flags = flags.join(", ");
    if arg.get_action().takes_values()
        && let Some(names) = arg.get_value_names()
    {
        let names: Vec<&str> = names.iter().map(|n| n.as_str()).collect();
        let names = names.join(" ");
        // `--sandbox[=BY]`: a value that may be left out.
        if arg.get_num_args().is_some_and(|n| n.min_values() == 0) {
            flags.push_str(&format!("[={names}]"));
        } else {
            flags.push_str(&format!(" {names}"));
        }
    }
    // A key's flag: runbook resolves its default and variable itself, not clap.
    let key = keys::all().find(|k| {
        !matches!(k.flag, Flag::None | Flag::Trailing) && Some(k.long().as_str()) == arg.get_long()
    });
    let mut default: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    default.extend(key.and_then(|k| k.default).map(str::to_owned));
    let default = if default.is_empty() {
        "–".to_owned()
    } else {
        format!("`{}`", default.join(", "))
    };
    let env = key
        .and_then(|k| k.env_help())
        .or_else(|| arg.get_env().map(|e| e.to_string_lossy().into_owned()))
        .map_or_else(|| "–".to_owned(), |e| format!("`{e}`"));
    let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
    format!(
        "| `{flags}` | {default} | {env} | {} |\n",
        cell(first_paragraph(&help))
    )
}

/// Every key a configuration file can set: its name there, default, variable, flag and help.
pub(super) fn config_keys() -> String {
    let mut text =
        String::from("| key | default | variable | flag | |\n| --- | --- | --- | --- | --- |\n");
    for key in keys::all() {
        let default = key
            .default
            .map_or_else(|| "–".to_owned(), |d| format!("`{d}`"));
        let env = key
            .env_help()
            .map_or_else(|| "–".to_owned(), |e| format!("`{e}`"));
        let flag = match key.flag {
            Flag::None => "–".to_owned(),
            Flag::Trailing => "after `--`".to_owned(),
            Flag::Short(c) => format!("`-{c}`, `--{}`", key.long()),
            Flag::Run | Flag::Runs | Flag::Global => format!("`--{}`", key.long()),
        };
        text.push_str(&format!(
            "| `{}` | {default} | {env} | {flag} | {} |\n",
            crate::config::file_name(key),
            cell(first_paragraph(key.help))
        ));
    }
    text.push_str(
        "| `env.NAME` | – | – | – | A default for one of the agent's variables (.env and the shell override it) |\n",
    );
    text
}

/// The help's first paragraph, on one line.
fn first_paragraph(help: &str) -> String {
    help.split("\n\n")
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Text fit for a Markdown table cell.
fn cell(text: String) -> String {
    text.replace('|', "\\|")
}
