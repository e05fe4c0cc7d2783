//! The command-line flags of configuration keys, made from the key table. clap only parses them:
//! it applies no default and reads no environment variable, so that the layering can tell which
//! layer set each value. `--help` still shows each default and variable.

use std::fmt;
use std::marker::PhantomData;

use clap::builder::{EnumValueParser, PossibleValue, TypedValueParser, ValueParser};
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};

use super::keys::{self, Flag, Key};
use super::value::{Kind, Value};
use crate::agent_kind::{AgentKind, Permissions};
use crate::term::ColorChoice;

/// A value given on the command line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FlagValue {
    pub key: &'static Key,
    pub value: Value,
    /// How it was given: `--model`, or `--` for the arguments after it.
    pub flag: String,
}

/// Which keys' flags a command has.
pub(crate) trait Scope {
    fn has(flag: Flag) -> bool;
}

/// Flags every command has.
#[derive(Debug)]
pub(crate) struct Global;
/// Flags of the commands that read run directories.
#[derive(Debug)]
pub(crate) struct Runs;
/// Flags of `runbook run` (and `runbook config`, which shows what a run would use), but for
/// those of [`Runs`], which the commands flatten after their own so that `--help` keeps its
/// headings in order.
#[derive(Debug)]
pub(crate) struct Run;

impl Scope for Global {
    fn has(flag: Flag) -> bool {
        flag == Flag::Global
    }
}

impl Scope for Runs {
    fn has(flag: Flag) -> bool {
        flag == Flag::Runs
    }
}

impl Scope for Run {
    fn has(flag: Flag) -> bool {
        matches!(flag, Flag::Run | Flag::Short(_) | Flag::Trailing)
    }
}

/// The configuration values given as flags of one command.
pub(crate) struct Flags<S> {
    values: Vec<FlagValue>,
    scope: PhantomData<S>,
}

impl<S> Flags<S> {
    pub(crate) fn values(&self) -> &[FlagValue] {
        &self.values
    }
}

impl<S> fmt::Debug for Flags<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.values).finish()
    }
}

/// The keys of the scope, by their heading in `--help`: a heading is shown where its first
/// flag is, so the flags come in the order of the headings.
fn keys<S: Scope>() -> impl Iterator<Item = &'static Key> {
    let mut keys: Vec<_> = keys::all().filter(|k| S::has(k.flag)).collect();
    keys.sort_by_key(|k| k.heading);
    keys.into_iter()
}

impl<S: Scope> Args for Flags<S> {
    fn augment_args(cmd: Command) -> Command {
        keys::<S>().fold(cmd, |cmd, key| cmd.arg(arg(key)))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl<S: Scope> FromArgMatches for Flags<S> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut values = Vec::new();
        for key in keys::<S>() {
            let id = key.long();
            let value = match (key.flag, key.kind) {
                (Flag::Trailing, _) => matches
                    .get_many::<String>(&id)
                    .map(|args| Value::Args(args.cloned().collect())),
                (_, Kind::Bool) => matches.get_flag(&id).then_some(Value::Bool(true)),
                (_, kind) if kind.is_list() => {
                    let flag = format!("--{id}");
                    let given = matches.get_many::<Value>(&id).into_iter().flatten();
                    values.extend(given.map(|value| FlagValue {
                        key,
                        value: value.clone(),
                        flag: flag.clone(),
                    }));
                    None
                }
                _ => matches.get_one::<Value>(&id).cloned(),
            };
            let flag = if key.flag == Flag::Trailing {
                "--".to_owned()
            } else {
                format!("--{id}")
            };
            values.extend(value.map(|value| FlagValue { key, value, flag }));
        }
        Ok(Self {
            values,
            scope: PhantomData,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

/// The colour the global `--color` flag asks for (`auto` without it).
pub(crate) fn color_flag(global: &Flags<Global>) -> ColorChoice {
    global
        .values()
        .iter()
        .find_map(|f| match f.value {
            Value::Color(color) => Some(color),
            _ => None,
        })
        .unwrap_or_default()
}

/// How long a brief may be to fit one line of `-h` on an 80-column terminal.
const BRIEF: usize = 45;

/// The key's flag: its brief in `-h`, under its heading; its whole help, default, environment
/// variable and values in `--help`.
fn arg(key: &'static Key) -> Arg {
    let values: Vec<String> = match key.kind {
        Kind::Agent | Kind::Color | Kind::Permissions | Kind::Stuck | Kind::Sandbox => {
            parser(key.kind)
                .possible_values()
                .map(|values| values.map(|v| v.get_name().to_owned()).collect())
                .unwrap_or_default()
        }
        _ => Vec::new(),
    };
    let mut help = key.help.to_owned();
    if let Some(default) = key.default {
        help.push_str(&format!(" [default: {default}]"));
    }
    if let Some(var) = key.env_help() {
        help.push_str(&format!(" [env: {var}]"));
    }
    let mut brief = key.brief.unwrap_or(key.help).to_owned();
    if !values.is_empty() {
        // Said here rather than by clap, whose list would not fit `-h`'s one line: there the
        // values are named only when they fit.
        help.push_str(&format!(" [possible values: {}]", values.join(", ")));
        let listed = format!("{brief}: {}", values.join(", "));
        if listed.chars().count() <= BRIEF {
            brief = listed;
        }
    }
    let mut arg = Arg::new(key.long())
        .help(brief)
        .long_help(help)
        .hide_possible_values(!values.is_empty())
        .hide_short_help(key.advanced);
    if let Some((heading, place)) = key.heading {
        arg = arg.help_heading(heading.title()).display_order(place);
    }
    if let Some(other) = key.conflicts_with {
        arg = arg.conflicts_with(other);
    }
    if key.kind == Kind::Sandbox {
        // `--sandbox` alone is `--sandbox=auto`; a value follows only after `=`, so that the
        // prompt after a bare `--sandbox` stays the prompt.
        arg = arg
            .num_args(0..=1)
            .require_equals(true)
            .default_missing_value("auto");
    }
    let arg = match key.flag {
        Flag::Trailing => {
            return arg
                .num_args(1..)
                .last(true)
                .value_name("AGENT_ARGS")
                .action(ArgAction::Append);
        }
        Flag::Short(c) => arg.short(c),
        Flag::Global => arg.global(true),
        Flag::Run | Flag::Runs | Flag::None => arg,
    };
    arg.long(key.long())
        // `--max-cost -1` is a bad amount, not an unknown flag: the value's parser says why.
        .allow_hyphen_values(matches!(
            key.kind,
            Kind::Duration | Kind::Watchdog | Kind::Usd | Kind::Count
        ))
        .value_name(match key.kind {
            Kind::Text => key.name.to_ascii_uppercase(),
            kind => kind.value_name().to_owned(),
        })
        .action(if key.kind == Kind::Bool {
            ArgAction::SetTrue
        } else if key.kind.is_list() {
            ArgAction::Append
        } else {
            ArgAction::Set
        })
        .value_parser(parser(key.kind))
}

fn parser(kind: Kind) -> ValueParser {
    match kind {
        // Enumerations keep their possible values, for `--help` and completions.
        Kind::Agent => EnumValueParser::<AgentKind>::new().map(Value::Agent).into(),
        Kind::Color => EnumValueParser::<ColorChoice>::new()
            .map(Value::Color)
            .into(),
        Kind::Permissions => EnumValueParser::<Permissions>::new()
            .map(Value::Permissions)
            .into(),
        Kind::Stuck => EnumValueParser::<crate::stuck::Mode>::new()
            .map(Value::Stuck)
            .into(),
        Kind::Bool => ValueParser::bool(),
        Kind::Sandbox => ValueParser::new(SandboxValues),
        kind => ValueParser::new(move |text: &str| kind.parse(text)),
    }
}

/// `--sandbox`'s values, read as a file or a variable reads them (`true`, `off`…), and listed
/// for completions as the enforcers and `off`.
#[derive(Clone)]
struct SandboxValues;

impl TypedValueParser for SandboxValues {
    type Value = Value;

    fn parse_ref(
        &self,
        cmd: &Command,
        arg: Option<&Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Value, clap::Error> {
        let read = |text: &str| Kind::Sandbox.parse(text);
        read.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        let names = ["auto", "landlock", "bwrap", "off"];
        Some(Box::new(names.into_iter().map(PossibleValue::new)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_has_a_heading_and_a_brief_that_fits_a_line() {
        for key in keys::all().filter(|k| !matches!(k.flag, Flag::None | Flag::Trailing)) {
            assert!(key.heading.is_some(), "{} has no heading", key.name);
            let brief = key.brief.unwrap_or(key.help);
            assert!(
                brief.chars().count() <= BRIEF,
                "{}: {brief:?} is longer than {BRIEF}",
                key.name
            );
        }
        let titles: Vec<_> = keys::Heading::ALL.iter().map(|h| h.title()).collect();
        assert_eq!(titles.len(), 7);
    }
}
