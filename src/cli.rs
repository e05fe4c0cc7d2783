//! The command line, declared once with clap; nothing here does any work.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::agent::{AgentKind, Permissions};
use crate::event::Outcome;
use crate::exit::EXIT_CODES_HELP;
use crate::term::ColorChoice;

/// Supervise a coding agent's headless run: live view, watchdog, budget, event log and receipt.
#[derive(Debug, Parser)]
#[command(name = "runbook", version, propagate_version = true, args_override_self = true, after_help = EXIT_CODES_HELP)]
pub struct Cli {
    /// When to use colour on stderr.
    #[arg(long, value_enum, global = true, default_value_t, value_name = "WHEN")]
    pub color: ColorChoice,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run an agent on a task and supervise it to the end.
    #[command(after_help = EXIT_CODES_HELP)]
    Run(RunArgs),
    /// Show how a run went (the latest by default), or follow it live from another terminal.
    Status(StatusArgs),
    /// List runs, newest first.
    List(ListArgs),
    /// Show a recorded agent transcript or runbook event log as `runbook run` showed it.
    Replay(ReplayArgs),
    /// Print a shell completion script (e.g. `runbook completions bash > ~/.local/share/bash-completion/completions/runbook`).
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// How much the human view shows.
#[derive(Debug, Clone, Copy, Args)]
pub struct Verbosity {
    /// Show only what needs attention: failures, denials, warnings and the summary.
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Show everything: all of the agent's text, reasoning, steps and the command line.
    #[arg(short, long)]
    pub verbose: bool,
}

/// Where run directories are.
#[derive(Debug, Clone, Args)]
pub struct RunsDir {
    /// Where run directories go [default: $XDG_STATE_HOME/runbook/runs].
    #[arg(long = "runs-dir", value_name = "DIR", env = "RUNBOOK_RUNS_DIR")]
    pub path: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// A run id, a unique prefix of one (or of its random part) [default: the latest run].
    pub run: Option<String>,

    /// Follow the run as it happens, then exit with its exit code.
    #[arg(long)]
    pub live: bool,

    /// Print the receipt as JSON (with --live: every event as a JSON line, then the receipt).
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub verbosity: Verbosity,

    #[command(flatten)]
    pub runs_dir: RunsDir,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Show at most this many runs.
    #[arg(short = 'n', long, value_name = "N", default_value_t = 20)]
    pub limit: usize,

    /// Show every run.
    #[arg(long, conflicts_with = "limit")]
    pub all: bool,

    /// Only runs that ended so (repeatable): completed, truncated, agent_error, killed, hung,
    /// budget_exceeded, timed_out, interrupted, running, abandoned.
    #[arg(long, value_name = "OUTCOME", value_parser = parse_outcome)]
    pub outcome: Vec<Outcome>,

    /// Only runs of this agent.
    #[arg(long, value_name = "AGENT")]
    pub agent: Option<String>,

    /// Only runs started in the current directory.
    #[arg(long)]
    pub here: bool,

    /// One receipt per line, as JSON.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub runs_dir: RunsDir,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// An agent's recorded NDJSON stdout, or a runbook events.ndjson.
    pub file: PathBuf,

    /// Read the file as this agent's native output [default: detected from its content; a
    /// runbook events.ndjson is always recognised].
    #[arg(long, value_enum)]
    pub agent: Option<AgentKind>,

    /// The model the recording used, for estimating costs the agent did not report (Codex).
    #[arg(short, long)]
    pub model: Option<String>,

    /// Play the recording this many times faster.
    #[arg(long, value_name = "N", default_value_t = 1.0, value_parser = parse_speed)]
    pub speed: f64,

    /// Don't wait between events.
    #[arg(long)]
    pub instant: bool,

    /// Print the universal events as JSON lines instead.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub verbosity: Verbosity,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// What the agent should do.
    pub prompt: String,

    /// Extra arguments for the agent, after `--` (e.g. `-- --agent plan`).
    #[arg(last = true, value_name = "AGENT_ARGS")]
    pub agent_args: Vec<String>,

    /// Which agent to run.
    #[arg(long, value_enum, default_value_t = AgentKind::Opencode, env = "RUNBOOK_AGENT")]
    pub agent: AgentKind,

    /// Run this command instead, an agent that prints runbook's universal events as NDJSON
    /// (docs/events.md); the prompt is its last argument. E.g. `--agent-cmd 'uvx my-agent --fast'`.
    #[arg(long, value_name = "CMD", conflicts_with = "agent_bin")]
    pub agent_cmd: Option<String>,

    /// The agent's binary [default: from PATH; or RUNBOOK_OPENCODE_BIN, RUNBOOK_CLAUDE_BIN,
    /// RUNBOOK_CODEX_BIN].
    #[arg(long, value_name = "PATH")]
    pub agent_bin: Option<PathBuf>,

    /// The model, as the agent names it (OpenCode: provider/model).
    #[arg(short, long, env = "RUNBOOK_MODEL")]
    pub model: Option<String>,

    /// What the agent may do without asking: agent (its own settings), read-only, workspace
    /// (edit files and run commands in the work dir) or bypass (everything; throwaway machines only).
    #[arg(
        long,
        value_enum,
        value_name = "MODE",
        default_value_t,
        env = "RUNBOOK_PERMISSIONS"
    )]
    pub permissions: Permissions,

    /// Once the agent has finished, continue its session with this prompt, as a new turn of the
    /// same run (repeatable; stops at the first turn that does not complete).
    #[arg(long, value_name = "PROMPT")]
    pub then: Vec<String>,

    /// Plan first: a read-only turn that writes a plan, your decision (execute, revise, abort),
    /// then execution in the same agent session.
    #[arg(long)]
    pub plan: bool,

    /// Stop after the plan (implies --plan): the plan goes to stdout.
    #[arg(long)]
    pub plan_only: bool,

    /// Execute the plan without asking (what happens anyway without a terminal).
    #[arg(short, long)]
    pub yes: bool,

    /// How many times a plan may be revised before only execute or abort is offered.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub max_revisions: u32,

    /// The directory the agent works in [default: the current one].
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Stop the agent after this long without any activity (output, or CPU use of its processes).
    #[arg(long, value_name = "DURATION", default_value = "3m", value_parser = parse_duration, env = "RUNBOOK_INACTIVITY_TIMEOUT")]
    pub inactivity_timeout: Duration,

    /// How long the agent gets to exit after SIGTERM before SIGKILL.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub kill_grace: Duration,

    /// How long an agent that printed its final result may take to exit before it is ended
    /// (its turn still counts as completed).
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_duration)]
    pub finish_grace: Duration,

    /// Stop the agent when the whole run has taken this long.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, env = "RUNBOOK_TIMEOUT")]
    pub timeout: Option<Duration>,

    /// Stop the agent once its reported cost crosses this many US dollars.
    #[arg(long, value_name = "USD", value_parser = parse_usd, env = "RUNBOOK_MAX_COST")]
    pub max_cost: Option<f64>,

    #[command(flatten)]
    pub runs_dir: RunsDir,

    /// Print every event as a JSON line on stdout, then the receipt; nothing else on stdout.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub verbosity: Verbosity,
}

/// `90s`, `3m`, `1h 30m`, or plain seconds.
fn parse_duration(s: &str) -> Result<Duration, String> {
    let d = match s.trim().parse::<u64>() {
        Ok(secs) => Duration::from_secs(secs),
        Err(_) => {
            humantime::parse_duration(s).map_err(|e| format!("{e} (examples: 90s, 3m, 1h30m)"))?
        }
    };
    if d.is_zero() {
        return Err("must be longer than zero".to_owned());
    }
    Ok(d)
}

fn parse_outcome(s: &str) -> Result<Outcome, String> {
    serde_json::from_value(serde_json::Value::String(s.replace('-', "_")))
        .map_err(|_| format!("`{s}` is not an outcome (completed, truncated, agent_error, killed, hung, budget_exceeded, timed_out, interrupted, running, abandoned)"))
}

fn parse_speed(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("`{s}` is not a positive number (example: 10)")),
    }
}

fn parse_usd(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .trim_start_matches('$')
        .parse()
        .map_err(|_| format!("`{s}` is not an amount of dollars (example: 2.50)"))?;
    if !v.is_finite() || v <= 0.0 {
        return Err("must be a positive amount of dollars".to_owned());
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_amounts_parse_like_people_write_them() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("3m"), Ok(Duration::from_secs(180)));
        assert_eq!(parse_duration("45"), Ok(Duration::from_secs(45)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("soon").unwrap_err().contains("examples"));
        assert_eq!(parse_usd("$2.5"), Ok(2.5));
        assert!(parse_usd("-1").is_err());
        assert!(parse_usd("lots").is_err());
    }

    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
