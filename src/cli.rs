//! The command line, declared once with clap; nothing here does any work.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::agent_kind::AgentKind;
use crate::config::check::Check;
use crate::config::keys::Heading;
use crate::config::{self, Flags};
use crate::event::Outcome;
use crate::exit::EXIT_CODES_HELP;

/// Supervise a coding agent's headless run: live view, watchdog, budget, event log and receipt.
#[derive(Debug, Parser)]
#[command(name = "runbook", version = crate::version::short(), propagate_version = true, args_override_self = true, after_long_help = EXIT_CODES_HELP)]
pub struct Cli {
    #[command(flatten)]
    pub global: Flags<config::Global>,

    /// Lay the view out for this many columns.
    ///
    /// Default: $COLUMNS, else the terminal's width.
    #[arg(long, global = true, value_name = "COLUMNS", allow_hyphen_values = true, value_parser = parse_width,
        help_heading = Heading::Output.title(), display_order = 6, hide_short_help = true)]
    pub width: Option<u16>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run an agent on a task and supervise it to the end.
    Run(RunArgs),
    /// Show how a run went (the latest by default), or follow it live from another terminal.
    Status(StatusArgs),
    /// Run many tasks at once, each in a git worktree of its own, within one budget.
    ///
    /// Run the tasks of a task file at once, each as a run of its own in a git worktree of its
    /// own (branch `runbook/<batch>/<task>`), within one budget, with one live view.
    #[command(after_long_help = crate::exit::BATCH_EXIT_CODES)]
    Batch(BatchArgs),
    /// List runs, newest first.
    List(ListArgs),
    /// The numbers over all runs: outcomes, cost, tokens, durations, failing tools.
    ///
    /// The numbers over all runs (or those of the filters): outcomes, cost, tokens, durations,
    /// the tools that fail, per day, agent, model and project.
    Stats(StatsArgs),
    /// Tell one run for a pull request, as Markdown or JSON.
    ///
    /// Tell one run for a pull request: its summary, changes, checks and cost, as Markdown or
    /// JSON.
    Report(ReportArgs),
    /// Print what a scheduler needs to run a task file's tasks, one per index.
    ///
    /// Print a Kubernetes Indexed Job, a GitHub Actions workflow or a Slurm array script that
    /// runs each task of a task file as `runbook batch FILE --task-index-from-env`, uploading
    /// to one bucket. It never talks to the engine.
    Fleet(FleetArgs),
    /// Upload runs made earlier or offline to object storage.
    ///
    /// Upload a run made earlier or offline (or with --all every finished run not yet there) to
    /// object storage, as `run --upload` does: under URL/runs/<run id>/, the receipt last.
    Upload(UploadArgs),
    /// Show a recorded agent transcript or runbook event log as `runbook run` showed it.
    Replay(ReplayArgs),
    /// See runbook supervise a recorded agent session: no agent or API key needed.
    ///
    /// See runbook supervise a real recorded OpenCode session, bundled in runbook: the live view
    /// at the session's own pace, then its status and receipt. Nothing is installed or asked
    /// for; the run goes into a new directory under the system's temporary directory.
    Demo(DemoArgs),
    /// Show the configuration in effect and where each value comes from.
    ///
    /// Or list the keys a configuration file, variable or flag can set; or write a starter
    /// runbook.toml.
    Config(ConfigArgs),
    /// Check each agent: its binary, version, model and price.
    ///
    /// Check each agent: its binary (found as `run` finds it), its version and whether runbook
    /// was tested with it, its model and whether runbook can price it, and what to do.
    #[command(after_long_help = DOCTOR_EXIT_CODES)]
    Doctor(DoctorArgs),
    /// Trust a repository's configuration files, so that the commands they set may run.
    ///
    /// Trust a repository's runbook.toml, runbook.local.toml, .env and .env.local at their
    /// current content, so that the commands they set may run (a changed file needs trusting
    /// again); or list or forget trusted files.
    Trust(TrustArgs),
    /// Print a shell completion script.
    ///
    /// E.g. `runbook completions bash > ~/.local/share/bash-completion/completions/runbook`.
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// How much the human view shows.
#[derive(Debug, Clone, Copy, Args)]
pub struct Verbosity {
    /// Show only what needs attention.
    ///
    /// Failures, denials, warnings and the summary.
    #[arg(short, long, conflicts_with = "verbose", help_heading = Heading::Output.title(), display_order = 2)]
    pub quiet: bool,

    /// Show everything, the agent's reasoning too.
    ///
    /// Show everything: all of the agent's text, reasoning, steps and the command line.
    #[arg(short, long, help_heading = Heading::Output.title(), display_order = 3)]
    pub verbose: bool,
}

impl From<Verbosity> for crate::render::Verbosity {
    fn from(v: Verbosity) -> Self {
        crate::render::Verbosity {
            quiet: v.quiet,
            verbose: v.verbose,
        }
    }
}

/// Where the agent works, and more variables for it.
#[derive(Debug, Args)]
pub struct Workspace {
    /// The directory the agent works in.
    ///
    /// runbook.toml is looked for there too [default: the current one].
    #[arg(long, value_name = "DIR", help_heading = Heading::Agent.title(), display_order = 8)]
    pub cwd: Option<PathBuf>,

    /// Read agent variables from FILE (repeatable).
    ///
    /// Set the agent's variables from FILE, over .env, .env.local and the shell (repeatable: the
    /// last one wins).
    #[arg(long = "env-file", value_name = "FILE", help_heading = Heading::Agent.title(), display_order = 9)]
    pub env_files: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// A run id or a prefix of one, a run directory, or a batch's id [default: the latest].
    ///
    /// A run id, a unique prefix of one (or of its random part), or a run directory [default:
    /// the latest run]; or a batch's whole id, for the batch.
    pub run: Option<String>,

    /// Follow the run as it happens, then exit with its exit code.
    #[arg(long)]
    pub live: bool,

    /// Wait for the next run to start, then follow it live (implies --live).
    #[arg(long, conflicts_with = "run")]
    pub next: bool,

    /// Only runs started in the current directory.
    ///
    /// The latest of them, or with --next the next one.
    #[arg(long, conflicts_with = "run")]
    pub here: bool,

    /// Print the receipt, or a batch's record, as JSON.
    ///
    /// Print the run's receipt as JSON (with --live: every event as a JSON line, then the
    /// receipt). For a batch (`status BATCH --json`): its record, batch.json (with --live, once
    /// the batch has ended).
    #[arg(long, help_heading = Heading::Output.title(), display_order = 1)]
    pub json: bool,

    #[command(flatten)]
    pub verbosity: Verbosity,

    #[command(flatten)]
    pub runs_dir: Flags<config::Runs>,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Runs directories to read [default: the configured one].
    ///
    /// Runs directories to read, such as receipts copied from CI [default: the configured one].
    #[arg(value_name = "DIR")]
    pub dirs: Vec<PathBuf>,

    /// Only runs started since then: `7d`, `12h`, `2026-11-01`.
    ///
    /// Only runs started since then: a time ago (`7d`, `12h`) or a date (`2026-11-01`).
    #[arg(long, value_name = "WHEN", value_parser = parse_when)]
    pub since: Option<std::time::SystemTime>,

    /// Only runs started before then: a time ago or a date.
    #[arg(long, value_name = "WHEN", value_parser = parse_when)]
    pub until: Option<std::time::SystemTime>,

    /// Only runs of this agent (repeatable).
    #[arg(long, value_name = "AGENT")]
    pub agent: Vec<String>,

    /// Only runs of this model, as the agent names it (repeatable).
    #[arg(long, value_name = "MODEL")]
    pub model: Vec<String>,

    /// Only runs of this project (its git root).
    ///
    /// Only runs of this project: the git root of the directory they ran in.
    #[arg(long, value_name = "PATH")]
    pub project: Option<PathBuf>,

    /// Only runs that ended so (repeatable).
    #[arg(long, value_name = "OUTCOME", value_parser = parse_outcome)]
    pub outcome: Vec<Outcome>,

    /// Print the numbers as JSON (docs/stats.schema.json).
    #[arg(long, conflicts_with = "html", help_heading = Heading::Output.title(), display_order = 1)]
    pub json: bool,

    /// Write the numbers as one HTML page of charts and tables to this file.
    ///
    /// Write the numbers as one self-contained HTML page of charts and tables to this file.
    #[arg(long, value_name = "FILE", help_heading = Heading::Output.title(), display_order = 2)]
    pub html: Option<PathBuf>,

    /// Show every column whole, however wide [default: fit the terminal, or 80 columns].
    #[arg(long, help_heading = Heading::Output.title(), display_order = 3)]
    pub wide: bool,

    #[command(flatten)]
    pub runs_dir: Flags<config::Runs>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A run id or a prefix of one, or a run directory [default: the latest].
    ///
    /// A run id, a unique prefix of one (or of its random part), or a run directory [default:
    /// the latest run].
    pub run: Option<String>,

    /// How to tell it.
    #[arg(long, value_enum, default_value_t = ReportFormat::Markdown, help_heading = Heading::Output.title(), display_order = 1)]
    pub format: ReportFormat,

    #[command(flatten)]
    pub runs_dir: Flags<config::Runs>,
}

#[derive(Debug, Args)]
pub struct UploadArgs {
    /// A run id or a prefix of one, or a run directory [default: the latest].
    #[arg(conflicts_with = "all")]
    pub run: Option<String>,

    /// Upload every finished run whose receipt is not in the bucket yet.
    #[arg(long)]
    pub all: bool,

    /// Where to: s3://bucket/prefix, gs://…, az://…, file:///path [default: the `upload` setting].
    #[arg(long, value_name = "URL")]
    pub to: Option<String>,

    #[command(flatten)]
    pub runs_dir: Flags<config::Runs>,
}

/// The forms of `runbook report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// Paste-ready Markdown, without links.
    Markdown,
    /// The same facts as JSON.
    Json,
}

/// The exit codes of `runbook doctor`.
const DOCTOR_EXIT_CODES: &str = "\
Exit codes:
  0  nothing needs attention
  1  something does: the default agent is not found, an installed agent's version is not one
     runbook was tested with (or cannot be read), or a model has no price
  2  the configuration is wrong";

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The options of `runbook run` (`--agent`, `--agent-bin`, `--model`, …): doctor answers
    /// for the run they would make.
    #[command(flatten)]
    pub options: Flags<config::Run>,

    /// Print the findings as one JSON object.
    ///
    /// `ok`, and per agent `agent`, `default`, `binary`, `version`, `tested`, `tested_versions`,
    /// `model`, `model_from`, `price`, `problems`.
    #[arg(long, help_heading = Heading::Output.title(), display_order = 1)]
    pub json: bool,

    #[command(flatten)]
    pub runs_dir: Flags<config::Runs>,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// A bucket to list instead of the runs directory: s3://bucket/prefix, gs://…, az://…, file:///path.
    #[arg(value_name = "BUCKET")]
    pub bucket: Option<String>,

    /// Show at most this many runs.
    #[arg(short = 'n', long, value_name = "N", default_value_t = 20, allow_hyphen_values = true, value_parser = parse_limit)]
    pub limit: usize,

    /// Show every run.
    #[arg(long, conflicts_with = "limit")]
    pub all: bool,

    /// Only runs that ended so (repeatable).
    ///
    /// One of: completed, truncated, agent_error, killed, hung, budget_exceeded, timed_out,
    /// interrupted, aborted, checks_failed, storage_error, running, abandoned.
    #[arg(long, value_name = "OUTCOME", value_parser = parse_outcome)]
    pub outcome: Vec<Outcome>,

    /// Only runs of this agent.
    #[arg(long, value_name = "AGENT")]
    pub agent: Option<String>,

    /// Only runs started in the current directory.
    #[arg(long)]
    pub here: bool,

    /// One receipt per line, as JSON.
    ///
    /// When `-n` (20 by default) left runs out, a last line
    /// `{"type":"list.limited","shown":20,"total":33}` says so.
    #[arg(long, help_heading = Heading::Output.title(), display_order = 1)]
    pub json: bool,

    /// Show every column whole, however wide [default: fit the terminal, or 80 columns].
    #[arg(long, help_heading = Heading::Output.title(), display_order = 3)]
    pub wide: bool,

    #[command(flatten)]
    pub runs_dir: Flags<config::Runs>,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// A run, an agent's recorded NDJSON stdout, or an events.ndjson.
    ///
    /// A run (its id, a unique prefix of one, or its directory), an agent's recorded NDJSON
    /// stdout, or a runbook events.ndjson.
    #[arg(value_name = "RUN|FILE")]
    pub file: PathBuf,

    /// Read the file as this agent's output [default: detected].
    ///
    /// Read the file as this agent's native output [default: detected from its content; a
    /// runbook events.ndjson is always recognised].
    #[arg(long, value_enum)]
    pub agent: Option<AgentKind>,

    /// The agent version that made the recording, e.g. 2.1.2 [default: told from the file].
    ///
    /// The version the agent that made the recording printed (e.g. 2.1.2): OpenCode 1 and 2 print
    /// differently, and the file is read as that generation's output [default: told from the
    /// file's lines, as OpenCode 2 spells them otherwise].
    #[arg(long, value_name = "VERSION")]
    pub agent_version: Option<String>,

    /// The model the recording used, to price it.
    ///
    /// The model the recording used, for estimating costs the agent did not report (Codex).
    #[arg(short, long)]
    pub model: Option<String>,

    /// Play the recording this many times faster (0.001 to 1000000).
    #[arg(long, value_name = "N", default_value_t = 1.0, allow_hyphen_values = true, value_parser = parse_speed)]
    pub speed: f64,

    /// Don't wait between events.
    #[arg(long)]
    pub instant: bool,

    /// Print the universal events as JSON lines instead.
    #[arg(long, help_heading = Heading::Output.title(), display_order = 1)]
    pub json: bool,

    #[command(flatten)]
    pub verbosity: Verbosity,

    #[command(flatten)]
    pub runs_dir: Flags<config::Runs>,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Play the session this many times faster (0.001 to 1000000) [default: its recorded pace,
    /// at most 15 s].
    #[arg(long, value_name = "N", default_value_t = 1.0, allow_hyphen_values = true, value_parser = parse_speed, hide_default_value = true)]
    pub speed: f64,

    /// Don't wait between events.
    #[arg(long, conflicts_with = "speed")]
    pub fast: bool,

    /// Print the run's events and then its receipt as JSON lines, as `runbook run --json` does.
    #[arg(long, help_heading = Heading::Output.title(), display_order = 1)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// What the agent should do.
    pub prompt: String,

    #[command(flatten)]
    pub options: Flags<config::Run>,

    /// Then continue with this prompt (repeatable).
    ///
    /// Once the agent has finished, continue its session with this prompt, as a new turn of the
    /// same run (repeatable; stops at the first turn that does not complete).
    #[arg(long, value_name = "PROMPT", help_heading = Heading::Agent.title(), display_order = 11)]
    pub then: Vec<String>,

    /// Pipe every event to this command (repeatable).
    ///
    /// Start this command once for the run and write every event to its stdin as a JSON line,
    /// with `meta` (run id and name, agent, turn index and kind); best-effort: an observer that
    /// falls behind misses events, it never slows the run (repeatable; after those of
    /// `[[observers]]` in runbook.toml). E.g.
    /// `--on-event 'jq -c "select(.type==\"tool.completed\")" >> tools.log'`.
    #[arg(long = "on-event", value_name = "CMD", help_heading = Heading::Observers.title(), display_order = 1)]
    pub on_event: Vec<String>,

    /// Ask for a summary of the work (one more turn).
    ///
    /// Once the work is done, ask the same session for a 2–4 sentence summary of it, as one
    /// more turn (its cost counts); without it the summary is the task's answer, trimmed, then
    /// what each repair changed.
    #[arg(long, help_heading = Heading::Output.title(), display_order = 4)]
    pub summary: bool,

    /// A name for the run [default: the run id].
    ///
    /// A name for the run, in its record and in every observer line's `meta` [default: the run
    /// id].
    #[arg(long, value_name = "NAME", help_heading = Heading::RunDir.title(), display_order = 2)]
    pub name: Option<String>,

    /// Run this check when done (repeatable).
    ///
    /// Once the task completed, run this project check in the agent's working directory
    /// (`sh -c`, repeatable, in the order given, after those of `[checks]` in runbook.toml; one
    /// of the same name replaces it): the run completes only if every check passes, else it ends
    /// `checks_failed`. E.g. `--check test='cargo test'`.
    #[arg(long = "check", value_name = "NAME=CMD", value_parser = parse_check,
        help_heading = Heading::Checks.title(), display_order = 1)]
    pub checks: Vec<Check>,

    /// Run no checks.
    ///
    /// Neither `--check` nor `[checks]` in runbook.toml.
    #[arg(long, conflicts_with = "checks", help_heading = Heading::Checks.title(), display_order = 2)]
    pub no_checks: bool,

    /// Print the plan and stop (implies --plan).
    ///
    /// Stop after the plan (implies --plan): the plan goes to stdout.
    #[arg(long, help_heading = Heading::Plan.title(), display_order = 2)]
    pub plan_only: bool,

    /// Execute the plan without asking.
    ///
    /// That is what happens anyway without a terminal.
    #[arg(short, long, help_heading = Heading::Plan.title(), display_order = 3)]
    pub yes: bool,

    /// How many times a plan may be revised.
    ///
    /// After that, only execute or abort is offered.
    #[arg(long, value_name = "N", default_value_t = 5, allow_hyphen_values = true, value_parser = parse_revisions,
        help_heading = Heading::Plan.title(), display_order = 4, hide_short_help = true)]
    pub max_revisions: u32,

    #[command(flatten)]
    pub workspace: Workspace,

    /// The task file of the batch this run is a task of (set by `runbook batch`).
    #[arg(long, value_name = "FILE", hide = true, requires = "task_id")]
    pub task_file: Option<PathBuf>,

    /// The task of `--task-file` this run is.
    #[arg(long, value_name = "ID", hide = true, requires = "task_file")]
    pub task_id: Option<String>,

    /// Trust the repository's config, for this run.
    ///
    /// Trust this repository's runbook.toml, runbook.local.toml, .env and .env.local as they
    /// are, for this run only, without asking (for CI; `runbook trust` records trust). Or set
    /// RUNBOOK_TRUST to the files (or directories) to trust, separated by `:`.
    #[arg(long, help_heading = Heading::Agent.title(), display_order = 10)]
    pub trust: bool,

    /// Print events as JSON lines, then the receipt.
    ///
    /// Print every event as a JSON line on stdout, then the receipt; nothing else on stdout.
    #[arg(long, help_heading = Heading::Output.title(), display_order = 1)]
    pub json: bool,

    #[command(flatten)]
    pub verbosity: Verbosity,

    #[command(flatten)]
    pub runs_dir: Flags<config::Runs>,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BatchArgs {
    /// The task file: TOML with [defaults] and [[task]] tables (or JSON lines: .jsonl).
    #[arg(value_name = "FILE", required_unless_present = "tasks")]
    pub file: Option<PathBuf>,

    /// Read the tasks from this file instead; `-` reads JSON lines from stdin.
    #[arg(long, value_name = "FILE|-", conflicts_with = "file")]
    pub tasks: Option<PathBuf>,

    /// Run at most this many tasks at once [default: min(4, cores)].
    #[arg(short = 'j', long, value_name = "N", value_parser = parse_jobs)]
    pub jobs: Option<usize>,

    /// Start no more tasks once this many have not completed.
    #[arg(long, value_name = "N", value_parser = parse_jobs)]
    pub max_fail: Option<usize>,

    /// Start no more tasks once one has not completed (--max-fail 1).
    #[arg(long, conflicts_with = "max_fail")]
    pub fail_fast: bool,

    /// The whole batch's budget in US dollars.
    ///
    /// No task starts once what was spent plus the caps (max_cost) of the tasks running could cross
    /// it; a task without a cap of its own starts only when nothing else runs.
    #[arg(long, value_name = "USD", value_parser = parse_budget)]
    pub max_cost: Option<f64>,

    /// Which worktrees to keep at the end (branches with changes are always kept).
    #[arg(long, value_enum, default_value_t = Keep::Failed)]
    pub keep: Keep,

    /// Write a JUnit XML report of the tasks to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Trust the repository's config and the task file, for this batch.
    #[arg(long)]
    pub trust: bool,

    /// Print every task's events as JSON lines, tagged with `task`, then the batch record.
    #[arg(long, help_heading = Heading::Output.title(), display_order = 1)]
    pub json: bool,

    /// Run only task N of the file (from 0, after `repeat` and `agents` make their copies).
    ///
    /// Run only task N of the file, counted from 0 in the file's order after `repeat` and
    /// `agents` make their copies (as `runbook fleet` counts them); the exit code is that run's.
    #[arg(
        long,
        value_name = "N",
        conflicts_with = "task_index_from_env",
        value_parser = parse_task_index,
        allow_negative_numbers = true
    )]
    pub task_index: Option<usize>,

    /// Run only the task whose index a scheduler gives in VAR.
    ///
    /// Run only the task whose index a scheduler gives: VAR, else the first set of
    /// JOB_COMPLETION_INDEX (Kubernetes), SLURM_ARRAY_TASK_ID, AWS_BATCH_JOB_ARRAY_INDEX.
    #[arg(long, value_name = "VAR", num_args = 0..=1, default_missing_value = "")]
    pub task_index_from_env: Option<String>,

    /// With a task index: run in this checkout instead of a worktree of its own.
    #[arg(long)]
    pub in_place: bool,

    /// Upload each task's run to s3://bucket/prefix, gs://…, az://… or file:///path, under the
    /// batch's id [default: the `upload` setting].
    #[arg(long, value_name = "URL")]
    pub upload: Option<String>,

    /// The id the runs are uploaded under, URL/ID/<run id>/ [default: the batch's own].
    ///
    /// The id the runs are uploaded under, URL/ID/<run id>/, instead of the batch's own: the
    /// tasks of one job that a scheduler runs one per process meet under one id (`runbook
    /// fleet` passes the engine's job id). Up to 64 letters, digits, `-`, `_` and `.`.
    #[arg(long, value_name = "ID")]
    pub batch_id: Option<String>,

    #[command(flatten)]
    pub runs_dir: Flags<config::Runs>,

    #[command(subcommand)]
    pub command: Option<BatchCommand>,
}

/// `runbook fleet`.
#[derive(Debug, Args)]
pub struct FleetArgs {
    /// The engine to write for.
    #[arg(value_enum)]
    pub engine: FleetEngine,

    /// The task file (TOML or JSON lines).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Where each task uploads its run, and `stats` reads them (required).
    #[arg(long, value_name = "URL")]
    pub upload: Option<String>,

    /// The name of the job (letters, digits, `-`).
    #[arg(long, default_value = "runbook-batch")]
    pub name: String,

    /// The container image (Kubernetes, required): runbook, the agent and the repository at /work.
    #[arg(long)]
    pub image: Option<String>,

    /// How long the job may take, in seconds (Kubernetes, Slurm, GitHub Actions).
    ///
    /// How long the job may take, in seconds: Kubernetes, the Job's activeDeadlineSeconds (all
    /// its pods); Slurm, each array task's --time; GitHub Actions, each matrix leg's
    /// timeout-minutes (rounded up to a minute).
    #[arg(long, value_name = "SECONDS", default_value_t = 21600)]
    pub deadline: u64,

    /// How many times one task is tried again after a failure worth retrying.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub retries: u32,

    /// The id every task uploads its run under, URL/ID/ [default: the engine's job id].
    ///
    /// The id every task uploads its run under, URL/ID/<run id>/ [default: the engine's id of
    /// one submission: slurm-<SLURM_ARRAY_JOB_ID>, gha-<the workflow run's id>, k8s-<the Job's
    /// uid>]. Up to 64 letters, digits, `-`, `_` and `.`.
    #[arg(long, value_name = "ID")]
    pub batch_id: Option<String>,
}

/// The engines `runbook fleet` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FleetEngine {
    /// A Kubernetes Indexed Job and a ConfigMap holding the task file.
    K8s,
    /// A GitHub Actions workflow, one matrix leg per task.
    Gha,
    /// A Slurm `sbatch --array` script.
    Slurm,
}

#[derive(Debug, Subcommand)]
pub enum BatchCommand {
    /// Remove the worktrees and unchanged branches a batch left (every batch by default).
    Clean {
        /// The batch id, or a prefix of one.
        batch: Option<String>,
        /// Remove worktrees that hold changes not committed to their branch too (they are kept
        /// otherwise).
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        runs_dir: Flags<config::Runs>,
    },
}

/// Which worktrees a batch keeps once its tasks have ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Keep {
    /// None: every worktree is removed (the branches with changes stay).
    None,
    /// Those of the tasks that did not complete.
    Failed,
    /// Every one.
    All,
}

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The file or repository to trust [default: the current one].
    ///
    /// The file to trust, or a directory whose repository's files to trust [default: the
    /// repository of the current directory].
    #[arg(value_name = "PATH")]
    pub path: Option<PathBuf>,

    /// List the trusted files and whether they changed.
    ///
    /// List the trusted files and whether each still has the content that was trusted.
    #[arg(long, conflicts_with_all = ["forget", "path"])]
    pub show: bool,

    /// Forget the trust in PATH (or in the repository's files).
    #[arg(long)]
    pub forget: bool,

    /// With --show: every column whole, however wide [default: fit the terminal, or 80 columns].
    #[arg(long, requires = "show")]
    pub wide: bool,
}

#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// Write a starter runbook.toml in the repository root.
    ///
    /// Write a commented runbook.toml in the repository root (never over an existing one).
    #[arg(long, conflicts_with_all = ["json", "keys"])]
    pub init: bool,

    /// List the keys a configuration file can set.
    ///
    /// Each with its default, variable and flag (it reads no file, so it answers even when one
    /// is wrong).
    #[arg(long, conflicts_with = "json")]
    pub keys: bool,

    /// Show every value whole, however wide [default: fit the terminal, or 80 columns].
    #[arg(long, conflicts_with = "json", help_heading = Heading::Output.title(), display_order = 2)]
    pub wide: bool,

    /// The options of `runbook run`: shown as the layer they are.
    #[command(flatten)]
    pub options: Flags<config::Run>,

    #[command(flatten)]
    pub workspace: Workspace,

    /// Print the configuration as JSON.
    #[arg(long, help_heading = Heading::Output.title(), display_order = 1)]
    pub json: bool,

    #[command(flatten)]
    pub runs_dir: Flags<config::Runs>,
}

/// `7d` or `12h` ago, or a date (`2026-11-01`, midnight UTC) or RFC 3339 time.
fn parse_when(s: &str) -> Result<std::time::SystemTime, String> {
    let s = s.trim();
    if let Ok(ago) = humantime::parse_duration(s) {
        return std::time::SystemTime::now()
            .checked_sub(ago)
            .ok_or_else(|| format!("`{s}` ago is before any run"));
    }
    let stamp = if s.len() == 10 {
        format!("{s}T00:00:00Z")
    } else {
        s.to_owned()
    };
    humantime::parse_rfc3339_weak(&stamp)
        .map_err(|_| format!("`{s}` is neither a time ago (`7d`, `12h`) nor a date (`2026-11-01`)"))
}

/// The outcomes `--outcome` takes, as runs record them.
const OUTCOMES: [&str; 13] = [
    "completed",
    "truncated",
    "agent_error",
    "killed",
    "hung",
    "budget_exceeded",
    "timed_out",
    "interrupted",
    "aborted",
    "checks_failed",
    "storage_error",
    "running",
    "abandoned",
];

fn parse_outcome(s: &str) -> Result<Outcome, String> {
    serde_json::from_value(serde_json::Value::String(s.replace('-', "_"))).map_err(|_| {
        match config::suggest::did_you_mean(s, OUTCOMES) {
            Some(meant) => format!("`{s}` is not an outcome; {meant}"),
            None => format!("`{s}` is not an outcome ({})", OUTCOMES.join(", ")),
        }
    })
}

/// The slowest and fastest replay: beyond them a recording's waits are either longer than any
/// clock can hold or all zero (`--instant` says that).
const SPEEDS: std::ops::RangeInclusive<f64> = 0.001..=1_000_000.0;

fn parse_speed(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if SPEEDS.contains(&v) => Ok(v),
        _ => Err(format!(
            "`{s}` is not a speed from {} to {} (example: 10)",
            SPEEDS.start(),
            SPEEDS.end()
        )),
    }
}

/// A whole number in `range`, or a one-line error naming what `what` counts.
fn whole<T: TryFrom<u64>>(
    s: &str,
    what: &str,
    range: std::ops::RangeInclusive<u64>,
) -> Result<T, String> {
    s.trim()
        .parse::<u64>()
        .ok()
        .filter(|n| range.contains(n))
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| {
            format!(
                "`{s}` is not {what}: give a whole number from {} to {}",
                range.start(),
                range.end()
            )
        })
}

/// `NAME=CMD`: a check's name (letters, digits, `-`, `_`, `.`) and its command.
fn parse_check(s: &str) -> Result<Check, String> {
    let (name, command) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}` is not NAME=CMD (example: test='cargo test')"))?;
    let name = name.trim();
    crate::config::check::valid_name(name)?;
    if command.trim().is_empty() {
        return Err(format!(
            "the check `{name}` has no command (example: {name}='cargo test')"
        ));
    }
    Ok(Check {
        name: name.to_owned(),
        command: command.to_owned(),
        timeout: None,
        cwd: None,
    })
}

fn parse_width(s: &str) -> Result<u16, String> {
    whole(s, "a width in columns", 20..=1000)
}

fn parse_limit(s: &str) -> Result<usize, String> {
    whole(s, "a number of runs", 1..=u64::from(u32::MAX))
}

fn parse_jobs(s: &str) -> Result<usize, String> {
    whole(s, "a number of tasks", 1..=1000)
}

/// A task's index in a task file: a whole number from 0.
fn parse_task_index(s: &str) -> Result<usize, String> {
    s.trim().parse::<usize>().map_err(|_| {
        format!(
            "`{}` is not a task index: give a whole number from 0 (the file's first task)",
            s.escape_debug()
        )
    })
}

fn parse_budget(s: &str) -> Result<f64, String> {
    match s.trim().trim_start_matches('$').parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!(
            "`{s}` is not a positive amount of US dollars (example: 20)"
        )),
    }
}

fn parse_revisions(s: &str) -> Result<u32, String> {
    whole(s, "a number of revisions", 0..=1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every option and command, with its whole help: no option's `--help` says its one-line
    /// help twice (the long help goes on from it, never starts it again).
    #[test]
    fn no_long_help_repeats_its_brief() {
        fn check(cmd: &clap::Command, path: &str, bad: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let (Some(brief), Some(long)) = (arg.get_help(), arg.get_long_help()) else {
                    continue;
                };
                let brief = brief.to_string();
                let brief = brief.trim_end_matches('.');
                let repeated = long
                    .to_string()
                    .split("\n\n")
                    .skip(1)
                    .any(|p| p.trim_start().starts_with(brief));
                if repeated {
                    bad.push(format!("{path} --{}", arg.get_id()));
                }
            }
            for sub in cmd.get_subcommands() {
                check(sub, &format!("{path} {}", sub.get_name()), bad);
            }
        }
        use clap::CommandFactory as _;
        let mut bad = Vec::new();
        check(&Cli::command(), "runbook", &mut bad);
        assert!(bad.is_empty(), "the long help repeats the brief: {bad:?}");
    }

    #[test]
    fn negative_and_malformed_numbers_get_their_own_error() {
        use clap::Parser as _;
        for (args, said) in [
            (
                &["runbook", "run", "--max-cost", "-1", "x"][..],
                "positive amount of US dollars",
            ),
            (&["runbook", "run", "--timeout", "-5s", "x"], "-5s"),
            (
                &["runbook", "run", "--max-revisions", "-1", "x"],
                "not a number of revisions",
            ),
            (&["runbook", "list", "-n", "-3"], "not a number of runs"),
            (&["runbook", "replay", "--speed", "-2", "f"], "not a speed"),
            (
                &["runbook", "--width", "-80", "list"],
                "not a width in columns",
            ),
        ] {
            let err = Cli::try_parse_from(args).unwrap_err().to_string();
            assert!(err.contains(said), "{args:?}: {err}");
            assert!(
                !err.contains("-- -"),
                "{args:?} suggests passing the value on: {err}"
            );
        }
    }

    #[test]
    fn every_outcome_named_is_one_and_a_misspelt_one_is_told_the_one_meant() {
        for name in OUTCOMES {
            assert!(parse_outcome(name).is_ok(), "{name}");
        }
        let err = Cli::try_parse_from(["runbook", "list", "--outcome", "complted"])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`complted` is not an outcome; did you mean `completed`?"),
            "{err}"
        );
        let err = Cli::try_parse_from(["runbook", "stats", "--outcome", "x"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("(completed, truncated,"), "{err}");
    }

    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
