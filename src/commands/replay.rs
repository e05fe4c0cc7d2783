//! `runbook replay`: a recorded agent transcript, or a runbook event log, shown through the same
//! adapters and renderer as a live run, with its recorded timing.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use tokio::time::Instant;

use crate::agent::{Adapter, AgentKind, ParseContext};
use crate::agent::{StderrFeed, StdoutFeed};
use crate::cli::ReplayArgs;
use crate::config::{self, Flags};
use crate::consumer::Dispatcher;
use crate::event::{Event, EventKind, ExitInfo, Limits, RunInfo, SCHEMA_VERSION, Stream, Turn};
use crate::exit::{Error, ExitStatus};
use crate::lifecycle::Ending;
use crate::lines::Piece;
use crate::prices::PriceTable;
use crate::redact::Redactor;
use crate::render;
use crate::term::print::warn;

pub(crate) async fn replay(
    args: ReplayArgs,
    global: &Flags<config::Global>,
) -> anyhow::Result<ExitStatus> {
    let config = config::load_here(global.values())?;
    let color = config.value(&config::keys::COLOR);
    let bytes =
        fs::read(&args.file).with_context(|| format!("cannot read {}", args.file.display()))?;
    let format = match args.agent {
        Some(agent) => Format::Native(agent),
        None => detect(&bytes, &args.file)?,
    };
    let consumers = render::views(color, args.json, args.verbosity);
    let mut dispatch = Dispatcher::new(consumers);
    let pace = Pace {
        start: Instant::now(),
        speed: (!args.instant).then_some(args.speed),
    };
    match format {
        Format::Events => events(&bytes, &mut dispatch, &pace).await,
        Format::Native(agent) => {
            let model = args.model.as_deref();
            native(
                &args.file,
                &bytes,
                agent.adapter(),
                model,
                config.prices(),
                &mut dispatch,
                &pace,
            )
            .await?
        }
    }
    for failure in dispatch.close().failures {
        warn(&failure);
    }
    Ok(ExitStatus::Completed)
}

/// What a file given to `replay` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// A runbook `events.ndjson`.
    Events,
    /// An agent's own output.
    Native(AgentKind),
}

/// Tells a runbook event log from an agent's native output by its first line.
fn detect(bytes: &[u8], path: &Path) -> anyhow::Result<Format> {
    let first = bytes
        .split(|&b| b == b'\n')
        .find(|l| !l.iter().all(u8::is_ascii_whitespace))
        .unwrap_or_default();
    let unknown = || {
        Error::Usage(format!(
            "cannot tell what {} holds; pass --agent opencode|claude|codex to say whose output it is",
            path.display()
        ))
    };
    let value: serde_json::Value = serde_json::from_slice(first).map_err(|_| unknown())?;
    let kind = value
        .get("type")
        .and_then(|t| t.as_str())
        .unwrap_or_default();
    if value.get("seq").is_some() && value.get("turn").is_some() {
        return Ok(Format::Events);
    }
    if value.get("sessionID").is_some()
        && [
            "step_start",
            "step_finish",
            "text",
            "reasoning",
            "tool_use",
            "error",
        ]
        .contains(&kind)
    {
        return Ok(Format::Native(AgentKind::Opencode));
    }
    if value.get("session_id").is_some()
        || ["system", "assistant", "user", "result", "stream_event"].contains(&kind)
    {
        return Ok(Format::Native(AgentKind::Claude));
    }
    if kind.starts_with("thread.") || kind.starts_with("turn.") || kind.starts_with("item.") {
        return Ok(Format::Native(AgentKind::Codex));
    }
    Err(unknown().into())
}

/// Waits for a recorded moment, scaled by the replay speed.
struct Pace {
    start: Instant,
    /// `None` replays without waiting.
    speed: Option<f64>,
}

impl Pace {
    async fn at(&self, offset: Duration) {
        if let Some(speed) = self.speed {
            tokio::time::sleep_until(self.start + offset.div_f64(speed)).await;
        }
    }
}

/// A runbook `events.ndjson`: the events as they were, at their recorded pace.
async fn events(bytes: &[u8], dispatch: &mut Dispatcher, pace: &Pace) {
    let mut first_ts = None;
    for (i, line) in bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
    {
        let ev: Event = match serde_json::from_slice(line) {
            Ok(ev) => ev,
            Err(e) => {
                warn(format_args!(
                    "line {} is not a valid event ({e}); skipped",
                    i + 1
                ));
                continue;
            }
        };
        let first = *first_ts.get_or_insert(ev.ts);
        pace.at(ev.ts.duration_since(first).unwrap_or_default())
            .await;
        dispatch.forward(&ev);
        dispatch.flush();
    }
}

/// An agent's recorded stdout, with its stderr, exit status and line timing when they were
/// recorded beside it (`X.stdout.ndjson`, `X.stderr.txt`, `X.exit`, `X.timing.ndjson`), played
/// through the adapter as a run of one turn.
async fn native(
    path: &Path,
    bytes: &[u8],
    adapter: &dyn Adapter,
    model: Option<&str>,
    prices: PriceTable,
    dispatch: &mut Dispatcher,
    pace: &Pace,
) -> anyhow::Result<()> {
    let recording = Recording::read(path, bytes);
    let cwd = path
        .parent()
        .and_then(|p| p.canonicalize().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    let base = SystemTime::now();
    let info = replay_info(path, adapter, model, &cwd);
    dispatch.emit(base, EventKind::RunStarted(info));
    dispatch.set_turn(Turn::FIRST);
    let argv = vec![adapter.program().to_owned()];
    dispatch.emit(base, EventKind::TurnStarted { argv, pid: 0 });
    dispatch.flush();

    // Masks what this machine holds secret, as a live run would.
    let redactor = Redactor::for_agent([]);
    let parse = ParseContext {
        model: model.map(str::to_owned),
        prices: Arc::new(prices),
        ..ParseContext::new(cwd)
    };
    let mut stdout = StdoutFeed::new(adapter.stdout_parser(parse), redactor.clone());
    let mut stderr = StderrFeed::new(adapter.stderr_parser(), redactor);
    let mut events = Vec::new();
    let mut last = Duration::ZERO;
    for &(offset, stream, index) in &recording.schedule {
        pace.at(offset).await;
        last = offset;
        match stream {
            Stream::Stdout => stdout.piece(Piece::of(recording.stdout[index]), &mut events),
            Stream::Stderr => {
                stderr.piece(Piece::of(recording.stderr[index].as_bytes()), &mut events)
            }
        }
        for kind in events.drain(..) {
            dispatch.emit(base + offset, kind);
        }
        dispatch.flush();
    }
    let end = base + last;
    let stream_end = stdout.end(&mut events);
    for kind in events.drain(..) {
        dispatch.emit(end, kind);
    }
    let ending = Ending::of_agent(stream_end, recording.exit);
    dispatch.emit(end, ending.turn_event());
    dispatch.emit(end, ending.run_event(last));
    dispatch.flush();
    Ok(())
}

/// A recorded transcript and what was recorded beside it.
struct Recording<'a> {
    stdout: Vec<&'a [u8]>,
    stderr: Vec<String>,
    exit: ExitInfo,
    /// When each line arrived: (offset, stream, index into that stream's lines).
    schedule: Vec<(Duration, Stream, usize)>,
}

impl<'a> Recording<'a> {
    fn read(path: &Path, bytes: &'a [u8]) -> Self {
        let sidecar = |ext: &str| -> Option<PathBuf> {
            let name = path.file_name()?.to_str()?.strip_suffix(".stdout.ndjson")?;
            Some(path.with_file_name(format!("{name}.{ext}")))
        };
        let read = |ext: &str| sidecar(ext).and_then(|p| fs::read_to_string(p).ok());
        let stdout: Vec<&[u8]> = bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        let stderr_text = read("stderr.txt").unwrap_or_default();
        let stderr: Vec<String> = stderr_text.lines().map(str::to_owned).collect();
        let exit = read("exit")
            .and_then(|s| s.trim().parse::<i32>().ok())
            .map_or(
                ExitInfo {
                    code: Some(0),
                    signal: None,
                },
                exit_from_code,
            );
        let schedule = schedule(&stdout, stderr.len(), read("timing.ndjson").as_deref());
        Self {
            stdout,
            stderr,
            exit,
            schedule,
        }
    }
}

/// A recorded exit code; above 128 it is death by signal (code - 128), as shells report it.
fn exit_from_code(code: i32) -> ExitInfo {
    if code > 128 {
        ExitInfo {
            code: None,
            signal: Some(code - 128),
        }
    } else {
        ExitInfo {
            code: Some(code),
            signal: None,
        }
    }
}

/// The replay's `run.started`: no run directory, no limits.
fn replay_info(path: &Path, adapter: &dyn Adapter, model: Option<&str>, cwd: &Path) -> RunInfo {
    RunInfo {
        schema_version: SCHEMA_VERSION,
        run_id: "replay".to_owned(),
        runbook_version: env!("CARGO_PKG_VERSION").to_owned(),
        agent: adapter.name().to_owned(),
        model: model.map(str::to_owned),
        prompt: format!("replay of {}", path.display()),
        cwd: cwd.display().to_string(),
        run_dir: String::new(),
        pid: std::process::id(),
        pid_start: None,
        limits: Limits::default(),
        settings: Vec::new(),
        env: Vec::new(),
    }
}

/// When each recorded line arrived: from the timing file when there is one, else from the
/// `timestamp` (ms) OpenCode puts on each line; stderr lines without timing come last.
fn schedule(
    stdout: &[&[u8]],
    stderr_lines: usize,
    timing: Option<&str>,
) -> Vec<(Duration, Stream, usize)> {
    let mut out = Vec::with_capacity(stdout.len() + stderr_lines);
    let (mut next_out, mut next_err) = (0, 0);
    #[derive(serde::Deserialize)]
    struct Arrival {
        t: f64,
        stream: Stream,
    }
    for arrival in timing
        .into_iter()
        .flat_map(str::lines)
        .filter_map(|l| serde_json::from_str::<Arrival>(l).ok())
    {
        let at = Duration::try_from_secs_f64(arrival.t).unwrap_or_default();
        match arrival.stream {
            Stream::Stdout if next_out < stdout.len() => {
                out.push((at, Stream::Stdout, next_out));
                next_out += 1;
            }
            Stream::Stderr if next_err < stderr_lines => {
                out.push((at, Stream::Stderr, next_err));
                next_err += 1;
            }
            _ => {}
        }
    }
    let stamp = |line: &[u8]| {
        serde_json::from_slice::<serde_json::Value>(line)
            .ok()
            .and_then(|v| v.get("timestamp")?.as_u64())
    };
    let first = stdout.get(next_out).and_then(|l| stamp(l));
    let mut at = out.last().map_or(Duration::ZERO, |(t, ..)| *t);
    for (i, line) in stdout.iter().enumerate().skip(next_out) {
        if let (Some(first), Some(ts)) = (first, stamp(line)) {
            at = at.max(Duration::from_millis(ts.saturating_sub(first)));
        }
        out.push((at, Stream::Stdout, i));
    }
    out.extend((next_err..stderr_lines).map(|i| (at, Stream::Stderr, i)));
    out
}
