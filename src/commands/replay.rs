//! `runbook replay`: a recorded agent transcript, or a runbook event log, shown through the same
//! adapters and renderer as a live run, with its recorded timing. Every file is read a line at a
//! time, and a line longer than 4 MiB is never held whole.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use tokio::time::Instant;

use crate::agent::{Adapter, AgentKind, FinisherSlot, ParseContext};
use crate::agent::{StderrFeed, StdoutFeed};
use crate::cli::ReplayArgs;
use crate::config::{self, Config, Flags};
use crate::consumer::Dispatcher;
use crate::event::{
    Event, EventKind, ExitInfo, Limits, Outcome, RunInfo, SCHEMA_VERSION, Stream, Turn,
};
use crate::exit::{Error, ExitStatus};
use crate::files::{self, FileError, Links};
use crate::lifecycle::Ending;
use crate::lines::{LineReader, MAX_LINE_BYTES, OwnedLine};
use crate::prices::PriceTable;
use crate::redact::Redactor;
use crate::render;
use crate::rundir::{self, EVENTS};
use crate::runs::{self, Runs};
use crate::supervisor::unless_stopped;
use crate::term::print::warn;

pub(crate) async fn replay(
    args: ReplayArgs,
    global: &Flags<config::Global>,
) -> anyhow::Result<ExitStatus> {
    let config = config::load_here(global.values().iter().chain(args.runs_dir.values()))?;
    let color = config.value(&config::keys::COLOR);
    let file = what_to_replay(&args.file, &config)?;
    let cannot_read = || format!("cannot read {}", file.display());
    let mut lines = open_lines(&file)?.with_context(cannot_read)?;
    // The first line that says something tells what the file holds.
    let mut first = None;
    while let Some(line) = lines.next_line().with_context(cannot_read)? {
        if !line.bytes.iter().all(u8::is_ascii_whitespace) {
            first = Some(line);
            break;
        }
    }
    let format = match args.agent {
        Some(agent) => Format::Native(agent),
        None => detect(first.as_ref(), &file)?,
    };
    let adapter = adapter_of(format, args.agent_version.as_deref(), &file)?;
    let consumers = render::views(color, args.json, args.verbosity.into(), false);
    let mut dispatch = Dispatcher::new(consumers);
    // An agent's own output is judged as a live run would judge it; an event log already holds
    // what was judged live.
    if !matches!(format, Format::Events) {
        dispatch.watch_for_loops(crate::stuck::Detector::new(
            config.value(&config::keys::STUCK),
            crate::commands::run::setup::stuck_thresholds(&config),
        ));
    }
    let pace = Pace {
        start: Instant::now(),
        speed: (!args.instant).then_some(args.speed),
    };
    // Masks what this machine holds secret, as a live run would.
    let redactor = Redactor::clone(&crate::redact::current());
    let stdout = Stdout { first, rest: lines };
    // Stopped mid-way (Ctrl-C), the view is closed all the same: no status line is left behind.
    let played = unless_stopped(async {
        match adapter {
            None => events(stdout, &file, &redactor, &mut dispatch, &pace).await,
            Some(adapter) => {
                let source = Source {
                    path: &file,
                    adapter,
                    model: args.model.as_deref(),
                    version: args.agent_version.as_deref(),
                    prices: config.prices(),
                    redactor,
                };
                native(source, stdout, &mut dispatch, &pace).await
            }
        }
    })
    .await?;
    for failure in dispatch.close().failures {
        warn(&failure);
    }
    match played {
        Some(result) => result.map(|()| ExitStatus::Completed),
        None => Ok(ExitStatus::Interrupted),
    }
}

type Lines = LineReader<File>;

/// The file a replay reads: the one given, or the event log of the run named by its id, a
/// prefix of it, or its directory.
fn what_to_replay(given: &Path, config: &Config) -> anyhow::Result<PathBuf> {
    if given.exists() && !given.is_dir() {
        return Ok(given.to_owned());
    }
    let runs = Runs::new(rundir::runs_dir(config)?);
    let name = given.to_string_lossy();
    if given.is_dir() {
        return Ok(runs.locate(Some(&name))?.join(EVENTS));
    }
    match runs.resolve(Some(&name)) {
        Ok(id) => Ok(runs.path(&id).join(EVENTS)),
        Err(e) => Err(Error::Usage(format!(
            "cannot replay {name}: there is no such file, and {e}; give a run id, a run directory, a recorded transcript or an events.ndjson"
        ))
        .into()),
    }
}

/// The lines of a file given to `replay` (or recorded beside it). The inner error is the
/// file's own (it may be missing); a file that is not a regular file is a usage error.
fn open_lines(path: &Path) -> anyhow::Result<io::Result<Lines>> {
    match files::open(path, Links::Follow) {
        Ok(file) => Ok(Ok(LineReader::new(file, MAX_LINE_BYTES))),
        Err(FileError::Io(e)) => Ok(Err(e)),
        Err(e) => Err(Error::Usage(format!(
            "cannot replay {}: {e}; give a recorded transcript or an events.ndjson",
            path.display()
        ))
        .into()),
    }
}

/// A file recorded beside a transcript; `None` when there is none.
fn open_sidecar(path: &Path) -> anyhow::Result<Option<Lines>> {
    match open_lines(path)? {
        Ok(lines) => Ok(Some(lines)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow::anyhow!("cannot read {}: {e}", path.display())),
    }
}

/// The replayed file's lines: the first one that said something (already read to tell the
/// format), then the rest.
struct Stdout {
    first: Option<OwnedLine>,
    rest: Lines,
}

impl Stdout {
    fn next_line(&mut self) -> io::Result<Option<OwnedLine>> {
        match self.first.take() {
            Some(line) => Ok(Some(line)),
            None => self.rest.next_line(),
        }
    }
}

/// What a file given to `replay` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// A runbook `events.ndjson`.
    Events,
    /// An agent's own output.
    Native(AgentKind),
    /// An ACP session's `stdout.log`: the agent's messages, and runbook's marked with `> `.
    Acp,
}

/// Tells a runbook event log from an agent's native output by its first line.
fn detect(first: Option<&OwnedLine>, path: &Path) -> anyhow::Result<Format> {
    let unknown = || {
        Error::Usage(format!(
            "cannot tell what {} holds; pass --agent opencode|claude|codex to say whose output it is",
            path.display()
        ))
    };
    let first = first.filter(|l| !l.is_overlong()).ok_or_else(unknown)?;
    if first
        .bytes
        .starts_with(crate::agent::acp::SENT_MARK.as_bytes())
    {
        return Ok(Format::Acp);
    }
    let value: serde_json::Value = serde_json::from_slice(&first.bytes).map_err(|_| unknown())?;
    let kind = value
        .get("type")
        .and_then(|t| t.as_str())
        .unwrap_or_default();
    if value.get("seq").is_some() && value.get("turn").is_some() {
        return Ok(Format::Events);
    }
    if value.get("jsonrpc").is_some() {
        return Ok(Format::Acp);
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

/// The adapter that reads `file`, as `format` and the agent version given say: `None` for a
/// runbook event log (which a version does not apply to).
fn adapter_of(
    format: Format,
    version: Option<&str>,
    file: &Path,
) -> anyhow::Result<Option<&'static dyn Adapter>> {
    let adapter = match format {
        Format::Events => None,
        Format::Native(agent) => Some(generation(agent.adapter(), version, file)?),
        Format::Acp => Some(&crate::agent::acp::CUSTOM as &'static dyn Adapter),
    };
    if version.is_some() && !matches!(format, Format::Native(_)) {
        let what = match format {
            Format::Events => "a runbook event log",
            _ => "an ACP session",
        };
        return Err(Error::Usage(format!(
            "cannot replay {} with --agent-version: it is not an agent's own output but {what}; leave --agent-version out",
            file.display(),
        ))
        .into());
    }
    Ok(adapter)
}

/// How much of a recording is read, at most, to tell which generation of its agent printed it:
/// a line that tells is among the first few, and a huge line is not read to its end twice.
const GENERATION_LINES: usize = 1000;
const GENERATION_BYTES: u64 = 16 << 20;

/// The generation of the agent `adapter` drives that made the recording at `path`: the one of
/// the version given, else the one its first telling line shows, else `adapter`'s own.
fn generation(
    adapter: &'static dyn Adapter,
    version: Option<&str>,
    path: &Path,
) -> anyhow::Result<&'static dyn Adapter> {
    if let Some(version) = version {
        if crate::agent::versions::version_number(version).is_none() {
            return Err(Error::Usage(format!(
                "--agent-version {version:?} holds no version number; give the version the agent printed, e.g. 2.1.2"
            ))
            .into());
        }
        let asked = adapter.generation(Path::new(""), Some(version));
        return Ok(asked.unwrap_or(adapter));
    }
    if !adapter.has_generations() {
        return Ok(adapter);
    }
    let cannot_read = || format!("cannot read {}", path.display());
    let file = match files::open(path, Links::Follow) {
        Ok(file) => file,
        Err(FileError::Io(e)) => return Err(anyhow::Error::new(e).context(cannot_read())),
        Err(e) => anyhow::bail!("{}: {e}", cannot_read()),
    };
    let mut lines = LineReader::new(io::Read::take(file, GENERATION_BYTES), MAX_LINE_BYTES);
    for _ in 0..GENERATION_LINES {
        let Some(line) = lines.next_line().with_context(cannot_read)? else {
            break;
        };
        if line.is_overlong() {
            continue;
        }
        if let Some(told) = adapter.generation_of_line(&line.bytes) {
            return Ok(told);
        }
    }
    Ok(adapter)
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
            // Whatever the recording says, a wait is a moment the clock can hold: an offset
            // beyond any real recording waits about as long as forever would.
            let wait = Duration::try_from_secs_f64(offset.as_secs_f64() / speed)
                .unwrap_or(FOREVER)
                .min(FOREVER);
            let until = self
                .start
                .checked_add(wait)
                .unwrap_or_else(|| Instant::now() + FOREVER);
            tokio::time::sleep_until(until).await;
        }
    }
}

/// A wait no replay outlives.
const FOREVER: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// A runbook `events.ndjson`: the events as they were, at their recorded pace.
async fn events(
    mut lines: Stdout,
    path: &Path,
    redactor: &Redactor,
    dispatch: &mut Dispatcher,
    pace: &Pace,
) -> anyhow::Result<()> {
    let mut first_ts = None;
    let mut number = 0;
    while let Some(line) = lines
        .next_line()
        .with_context(|| format!("cannot read {}", path.display()))?
    {
        number += 1;
        if line.bytes.is_empty() {
            continue;
        }
        if line.is_overlong() {
            warn(runs::too_long(path, number, line.total));
            continue;
        }
        let ev: Event = match serde_json::from_slice(&redactor.bytes(&line.bytes)) {
            Ok(ev) => ev,
            Err(e) => {
                warn(format_args!(
                    "{} line {number} is not a valid event ({e}); skipped",
                    path.display()
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
    Ok(())
}

/// What a native transcript is replayed as.
struct Source<'a> {
    path: &'a Path,
    adapter: &'static dyn Adapter,
    model: Option<&'a str>,
    /// The agent version that made the recording, when given.
    version: Option<&'a str>,
    prices: PriceTable,
    redactor: Redactor,
}

/// How a recorded line arrived.
#[derive(serde::Deserialize)]
struct Arrival {
    t: f64,
    stream: Stream,
}

/// An agent's recorded stdout, with its stderr, exit status and line timing when they were
/// recorded beside it (`X.stdout.ndjson`, `X.stderr.txt`, `X.exit`, `X.timing.ndjson`), played
/// through the adapter as a run of one turn.
///
/// Lines arrive as the timing file says when there is one; the rest of stdout by the
/// `timestamp` (ms) OpenCode puts on each line; stderr lines without timing come last.
async fn native(
    source: Source<'_>,
    stdout: Stdout,
    dispatch: &mut Dispatcher,
    pace: &Pace,
) -> anyhow::Result<()> {
    let Source {
        path,
        adapter,
        model,
        version,
        prices,
        redactor,
    } = source;
    let sidecars = Sidecars::beside(path)?;
    let cwd = path
        .parent()
        .and_then(|p| p.canonicalize().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    let base = SystemTime::now();
    start_turn(
        dispatch,
        base,
        replay_info(path, adapter, model, &cwd),
        adapter,
    );
    if let Some(version) = version {
        dispatch.emit(base, agent_version(adapter, version));
    }

    let finishing = FinisherSlot::default();
    let parse = ParseContext {
        model: model.map(str::to_owned),
        prices: Arc::new(prices),
        finishing: Some(Arc::clone(&finishing)),
        ..ParseContext::new(cwd)
    };
    let mut play = Player {
        stdout: StdoutFeed::new(adapter.stdout_parser(parse), redactor.clone()),
        stderr: StderrFeed::new(adapter.stderr_parser(), redactor),
        stdout_lines: stdout,
        stderr_lines: sidecars.stderr,
        path,
        events: Vec::new(),
        base,
        last: Duration::ZERO,
        finishing,
        export: sidecars.export,
    };
    if let Some(timing) = sidecars.timing {
        play.timed(timing, dispatch, pace).await?;
    }
    play.stamped(dispatch, pace).await?;
    play.end(sidecars.exit, dispatch);
    Ok(())
}

/// What was recorded beside an agent's stdout: its exit status, line timing and stderr, and
/// where the answer to what its adapter asks after the run would be.
struct Sidecars {
    exit: Recorded,
    timing: Option<(PathBuf, Lines)>,
    stderr: Option<(PathBuf, Lines)>,
    export: Option<PathBuf>,
}

impl Sidecars {
    /// The sidecars of `path` (`X.stdout.ndjson`): `X.exit`, `X.timing.ndjson`, `X.stderr.txt`,
    /// `X.export.json`.
    fn beside(path: &Path) -> anyhow::Result<Sidecars> {
        let sidecar = |ext: &str| -> Option<PathBuf> {
            let name = path.file_name()?.to_str()?.strip_suffix(".stdout.ndjson")?;
            Some(path.with_file_name(format!("{name}.{ext}")))
        };
        let open = |ext: &str| -> anyhow::Result<Option<(PathBuf, Lines)>> {
            let Some(p) = sidecar(ext) else {
                return Ok(None);
            };
            Ok(open_sidecar(&p)?.map(|lines| (p, lines)))
        };
        let exit = match sidecar("exit") {
            Some(p) => recorded_exit(&p)?,
            None => Recorded::Clean,
        };
        Ok(Sidecars {
            exit,
            timing: open("timing.ndjson")?,
            stderr: open("stderr.txt")?,
            export: sidecar("export.json"),
        })
    }
}

/// `run.started` and the one turn's `turn.started` of a replayed recording.
fn start_turn(dispatch: &mut Dispatcher, base: SystemTime, info: RunInfo, adapter: &dyn Adapter) {
    dispatch.emit(base, EventKind::RunStarted(Box::new(info)));
    dispatch.set_turn(Turn::FIRST);
    let turn = EventKind::TurnStarted {
        argv: vec![adapter.program().to_owned()],
        pid: 0,
        planning: false,
        steps_unreported: !adapter.reports_steps(),
        prompt: None,
    };
    dispatch.emit(base, turn);
    dispatch.flush();
}

/// Plays recorded lines through the adapter as they arrive.
struct Player<'a> {
    stdout: StdoutFeed,
    stderr: StderrFeed,
    stdout_lines: Stdout,
    stderr_lines: Option<(PathBuf, Lines)>,
    path: &'a Path,
    events: Vec<EventKind>,
    base: SystemTime,
    /// When the last line arrived.
    last: Duration,
    /// What the adapter asks of the agent once it has exited (see [`crate::agent::Finisher`]).
    finishing: FinisherSlot,
    /// Where its answer was recorded (`X.export.json`).
    export: Option<PathBuf>,
}

impl Player<'_> {
    /// Plays the lines as the timing file says they arrived, each from its stream.
    async fn timed(
        &mut self,
        (timing_path, mut lines): (PathBuf, Lines),
        dispatch: &mut Dispatcher,
        pace: &Pace,
    ) -> anyhow::Result<()> {
        while let Some(line) = lines
            .next_line()
            .with_context(|| format!("cannot read {}", timing_path.display()))?
        {
            let arrival = (!line.is_overlong())
                .then(|| serde_json::from_slice::<Arrival>(&line.bytes).ok())
                .flatten();
            if let Some(arrival) = arrival {
                let at = Duration::try_from_secs_f64(arrival.t).unwrap_or_default();
                self.next(arrival.stream, at, dispatch, pace).await?;
            }
        }
        Ok(())
    }

    /// Plays the rest of stdout by the `timestamp` (ms) OpenCode puts on each line, then the
    /// rest of stderr.
    async fn stamped(&mut self, dispatch: &mut Dispatcher, pace: &Pace) -> anyhow::Result<()> {
        let stamp = |line: &OwnedLine| {
            (!line.is_overlong())
                .then(|| serde_json::from_slice::<serde_json::Value>(&line.bytes).ok())
                .flatten()
                .and_then(|v| v.get("timestamp")?.as_u64())
        };
        let mut at = self.last;
        let mut first = None;
        while let Some(line) = self.next_stdout()? {
            let ts = stamp(&line);
            if let (Some(first), Some(ts)) = (*first.get_or_insert(ts), ts) {
                at = at.max(Duration::from_millis(ts.saturating_sub(first)));
            }
            self.line(Stream::Stdout, &line, at, dispatch, pace).await;
        }
        while self.next(Stream::Stderr, at, dispatch, pace).await? {}
        Ok(())
    }

    /// Ends the turn and the run as the adapter read the stream's end and `exit` says.
    fn end(&mut self, exit: Recorded, dispatch: &mut Dispatcher) {
        let end = self.base + self.last;
        let mut stream_end = self.stdout.end(&mut self.events);
        let finisher = self.finishing.lock().ok().and_then(|mut s| s.take());
        if let Some(finisher) = finisher {
            let printed = recorded_answer(self.export.as_deref());
            stream_end = finisher.finish(printed, stream_end, &mut self.events);
        }
        for kind in self.events.drain(..) {
            dispatch.emit(end, kind);
        }
        let exit = match exit {
            Recorded::Clean => ExitInfo {
                code: Some(0),
                signal: None,
            },
            Recorded::Exit(exit) => exit,
            // Neither a code nor a signal: never a clean exit.
            Recorded::Unreadable => ExitInfo::default(),
        };
        // Stopped for going round in circles, as the live run was.
        let ending = match dispatch.take_halt() {
            Some(halt) if halt.outcome == Outcome::Stuck => {
                Ending::new(halt.outcome, halt.message, exit)
            }
            _ => Ending::of_agent(stream_end, exit),
        };
        dispatch.emit(end, ending.turn_event());
        dispatch.emit(end, ending.run_event(self.last));
        dispatch.flush();
    }

    /// The next line the agent printed on stdout (empty lines of a transcript are not).
    fn next_stdout(&mut self) -> anyhow::Result<Option<OwnedLine>> {
        loop {
            let line = self
                .stdout_lines
                .next_line()
                .with_context(|| format!("cannot read {}", self.path.display()))?;
            if !line.as_ref().is_some_and(|l| l.bytes.is_empty()) {
                return Ok(line);
            }
        }
    }

    /// Plays the next line of `stream` at `at`; false when that stream has no line left.
    async fn next(
        &mut self,
        stream: Stream,
        at: Duration,
        dispatch: &mut Dispatcher,
        pace: &Pace,
    ) -> anyhow::Result<bool> {
        let line = match stream {
            Stream::Stdout => self.next_stdout()?,
            Stream::Stderr => match &mut self.stderr_lines {
                Some((path, lines)) => lines
                    .next_line()
                    .with_context(|| format!("cannot read {}", path.display()))?,
                None => None,
            },
        };
        let Some(line) = line else {
            return Ok(false);
        };
        self.line(stream, &line, at, dispatch, pace).await;
        Ok(true)
    }

    async fn line(
        &mut self,
        stream: Stream,
        line: &OwnedLine,
        at: Duration,
        dispatch: &mut Dispatcher,
        pace: &Pace,
    ) {
        pace.at(at).await;
        self.last = at;
        match stream {
            Stream::Stdout => self.stdout.piece(line.piece(), &mut self.events),
            Stream::Stderr => self.stderr.piece(line.piece(), &mut self.events),
        }
        for kind in self.events.drain(..) {
            dispatch.emit(self.base + at, kind);
        }
        dispatch.flush();
    }
}

/// The most of a recorded answer read, as much as a live run reads of it.
const ANSWER_LIMIT: u64 = 64 << 20;

/// What the agent answered after the run, as recorded beside the transcript (`X.export.json`),
/// or why it cannot be had: the adapter reads it as it reads the live answer.
fn recorded_answer(path: Option<&Path>) -> Result<Vec<u8>, String> {
    let Some(path) = path else {
        return Err("none was recorded beside the transcript".to_owned());
    };
    match files::read_optional(path, ANSWER_LIMIT, Links::Follow) {
        Ok(Some(bytes)) => Ok(bytes),
        Ok(None) => Err(format!("{} was not recorded", path.display())),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// The exit status recorded beside a transcript.
enum Recorded {
    /// No exit status was recorded: a clean exit is assumed.
    Clean,
    Exit(ExitInfo),
    /// There is an exit file, but it does not hold an exit status.
    Unreadable,
}

/// Reads `NAME.exit`: an exit code from 0 to 255, as a shell reports it.
fn recorded_exit(path: &Path) -> anyhow::Result<Recorded> {
    let bytes = match files::read_optional(path, files::EXIT_LIMIT, Links::Follow) {
        Ok(None) => return Ok(Recorded::Clean),
        Ok(Some(bytes)) => Some(bytes),
        Err(FileError::TooLarge(_)) => None,
        Err(e) => anyhow::bail!("cannot read {}: {e}", path.display()),
    };
    let code = bytes
        .as_deref()
        .and_then(|b| std::str::from_utf8(b).ok())
        .and_then(|s| s.trim().parse::<u8>().ok());
    Ok(match code {
        Some(code) => Recorded::Exit(exit_from_code(i32::from(code))),
        None => {
            warn(format_args!(
                "{} does not hold an exit status (a number from 0 to 255); the run is not shown as completed",
                path.display()
            ));
            Recorded::Unreadable
        }
    })
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

/// The `agent.version` of a recording made by `version` of the agent `adapter` drives.
fn agent_version(adapter: &dyn Adapter, version: &str) -> EventKind {
    use crate::supervisor::version;
    EventKind::AgentVersion {
        version: version.to_owned(),
        tested_with: version::untested(adapter, version),
        fidelity: Some(version::fidelity(adapter, version)),
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
        model_file: None,
        prompt: format!("replay of {}", path.display()),
        cwd: cwd.display().to_string(),
        run_dir: String::new(),
        name: None,
        git: None,
        pid: std::process::id(),
        pid_start: None,
        limits: Limits::default(),
        settings: Vec::new(),
        env: Vec::new(),
        sandbox: None,
    }
}
