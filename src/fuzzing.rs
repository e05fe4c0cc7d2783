//! Entry points for the fuzz targets in `fuzz/` and the property tests: each takes arbitrary bytes,
//! reads them the way runbook reads that input, and panics only when an invariant breaks.
//!
//! The invariants: nothing panics; every event an adapter makes encodes (through `encode.rs`) to
//! exactly what serde_json writes, decodes back, and encodes again the same; a line gives a bounded
//! number of events; an overlong line gives one `unparsed` event that counts its bytes; folded
//! events make a receipt that encodes, decodes back and renders. No secrets are set: the masking
//! path is the plain one.
#![allow(
    clippy::disallowed_methods,
    reason = "fuzz targets write their own scratch files"
)]

#[cfg(test)]
mod masking;
#[cfg(test)]
mod prop;
#[cfg(test)]
mod regressions;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::agent::{
    Adapter, Claude, Codex, Generic, OpenCode, ParseContext, StderrFeed, StdoutFeed,
    claude_fast_path_agrees, codex_fast_path_agrees, generic_fast_path_agrees,
};
use crate::config::ConfigFile;
use crate::event::{
    Event, EventKind, ExitInfo, Limits, Outcome, RunInfo, SCHEMA_VERSION, Stream, Turn,
    UnparsedReason,
};
use crate::lifecycle::Ending;
use crate::lines::{LineSplitter, MAX_LINE_BYTES, Piece};
use crate::provenance::Layer;
use crate::receipt::Receipt;
use crate::redact::Redactor;
use crate::render::{Styles, list, report, settings};
use crate::rundir::{EVENTS, RECEIPT};
use crate::stats::RunStats;

/// Longest line handed to a parser here; longer ones take the overlong path. Small, so that
/// inputs of a few KiB reach it.
const LINE_LIMIT: usize = 2048;

/// OpenCode's stdout and stderr.
pub fn opencode(data: &[u8]) {
    agent_output(&OpenCode, None, data);
}

/// Claude Code's stdout and stderr; and its fast path: whatever it reads, serde_json reads the
/// same.
pub fn claude(data: &[u8]) {
    for line in data.split(|&b| b == b'\n') {
        if let Ok(text) = std::str::from_utf8(line) {
            claude_fast_path_agrees(text);
        }
    }
    agent_output(&Claude, Some("claude-sonnet-4-5"), data);
}

/// Codex's stdout and stderr; and its fast path: whatever it reads, serde_json reads the same.
pub fn codex(data: &[u8]) {
    for line in data.split(|&b| b == b'\n') {
        if let Ok(text) = std::str::from_utf8(line) {
            codex_fast_path_agrees(text);
        }
    }
    // A model given here keeps the parser from reading Codex's own configuration file.
    agent_output(&Codex, Some("gpt-5-codex"), data);
}

/// The generic adapter (`--agent-cmd`): universal events printed by any program; and its fast
/// path: whatever it reads, serde_json reads the same.
pub fn generic(data: &[u8]) {
    for line in data.split(|&b| b == b'\n') {
        if let Ok(text) = std::str::from_utf8(line) {
            generic_fast_path_agrees(text);
        }
    }
    agent_output(&Generic, None, data);
}

/// An `events.ndjson` as `status`, `list`, `replay` and `follow` read it back.
pub fn event_log(data: &[u8]) {
    // Line by line, as `replay` reads it.
    let mut stats = RunStats::default();
    for line in data.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        if let Ok(ev) = serde_json::from_slice::<Event>(line) {
            check_event(&ev);
            stats.observe(&ev);
        }
    }
    receipts_of(&stats);

    // From the file, as `status` and `list` (a run without a receipt) and `follow` read it.
    let dir = Scratch::new("events");
    let path = dir.join(EVENTS);
    fs::write(&path, data).expect("write the scratch event log");
    if let Ok(state) = crate::runs::load(&dir) {
        check_receipt(&state.receipt);
    }
    let mut tail = crate::follow::Tail::new(path);
    let (mut events, mut warnings) = (Vec::new(), Vec::new());
    tail.read_new(&mut events, &mut warnings)
        .expect("read the scratch event log");
    let complete_lines = data.iter().filter(|&&b| b == b'\n').count();
    assert_eq!(
        events.len() + warnings.len(),
        complete_lines,
        "every complete line is an event or a warning"
    );
    events.iter().for_each(check_event);
}

/// A `result.json` as `list` and `status` read it.
pub fn receipt(data: &[u8]) {
    if let Ok(receipt) = serde_json::from_slice::<Receipt>(data) {
        check_receipt(&receipt);
    }
    let dir = Scratch::new("receipt");
    fs::write(dir.join(RECEIPT), data).expect("write the scratch receipt");
    if let Ok((row, _cwd)) = crate::commands::list::summary(&dir) {
        list::table(&[row], &Styles::plain(), SystemTime::UNIX_EPOCH, Some(100));
    }
    if let Ok(state) = crate::runs::load(&dir) {
        check_receipt(&state.receipt);
    }
}

/// A configuration file (`runbook.toml` and the other layers) and the variables beside it: a
/// line `#NAME=value` in the file stands for the variable `NAME` set to `value`.
pub fn config(data: &[u8]) {
    let dir = Scratch::new("config");
    let path = dir.join(crate::config::REPO_FILE);
    fs::write(&path, data).expect("write the scratch configuration");
    let content = match crate::config::read_file(Layer::Repo, &path) {
        Ok(content) => content,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let text = String::from_utf8_lossy(data);
    let var = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix('#')?.strip_prefix(name)?.strip_prefix('='))
            .map(str::to_owned)
    };
    let files = vec![ConfigFile {
        layer: Layer::Repo,
        path,
        content,
    }];
    let config = match crate::config::resolve(dir.to_path_buf(), files, &var, []) {
        Ok(config) => config,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let _ = config.prices();
    let records = config.records();
    serde_json::to_vec(&records).expect("setting records serialize");
    settings::human(&config, &[], &[], &Styles::plain(), Some(80));
    serde_json::to_vec(&settings::Report::new(&config, Vec::new(), Vec::new()))
        .expect("the report serializes");
    match crate::agent_env::load(&config, &[]) {
        Ok(env) => {
            env.pairs();
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

/// A `.env` file, with `${VAR}` references to a made-up environment.
pub fn dotenv(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Some names are set, to values that themselves look like references.
    let lookup = |name: &str| match name.len() % 3 {
        0 => None,
        1 => Some(format!("value of {name}")),
        _ => Some("${NOT_EXPANDED} $also".to_owned()),
    };
    let lines = text.split('\n').count();
    match crate::agent_env::parse_dotenv(text, &lookup) {
        Ok(assignments) => {
            for a in assignments {
                assert!(crate::config::is_var_name(&a.name), "{:?}", a.name);
                assert!(a.line >= 1 && a.line as usize <= lines, "line {}", a.line);
            }
        }
        Err(e) => {
            assert!(text.is_char_boundary(e.offset), "error offset {}", e.offset);
            crate::config::line_column(text, e.offset);
        }
    }
    if let Err(e) = crate::agent_env::expand_dotenv(text, &lookup) {
        assert!(text.is_char_boundary(e.offset), "error offset {}", e.offset);
        crate::config::line_column(text, e.offset);
    }
}

/// An agent's stdout (cut into lines as a live run cuts them, in chunks of a size picked from
/// the input) and stderr, through the adapter's line feed, then folded and ended as a replay
/// ends it.
fn agent_output(adapter: &dyn Adapter, model: Option<&str>, data: &[u8]) {
    let ctx = ParseContext {
        model: model.map(str::to_owned),
        ..ParseContext::new(PathBuf::from("/work/repo"))
    };
    let mut run = Run::new(adapter.name(), false);
    let mut stdout = StdoutFeed::new(adapter.stdout_parser(ctx), Redactor::default());
    let mut splitter = LineSplitter::new(LINE_LIMIT);
    let mut events = Vec::new();
    let mut piece = |piece: Piece<'_>| {
        let (len, overlong) = match piece {
            Piece::Line(line) => (line.len(), false),
            Piece::Overlong { total, .. } => (total as usize, true),
        };
        stdout.piece(piece, &mut events);
        if overlong {
            assert!(
                matches!(
                    events.as_slice(),
                    [EventKind::Unparsed(u)]
                        if u.reason == UnparsedReason::TooLong
                            && u.stream == Stream::Stdout
                            && u.bytes == len as u64
                ),
                "an overlong line is one unparsed event counting its bytes: {events:?}"
            );
        } else {
            assert!(
                events.len() <= max_events(len),
                "{} events from a line of {len} bytes",
                events.len()
            );
        }
        run.push(events.drain(..));
    };
    let chunk = match data.len() % 3 {
        0 => data.len().max(1),
        _ => data.len() % 61 + 1,
    };
    for part in data.chunks(chunk) {
        splitter.feed(part, &mut piece);
    }
    splitter.finish(&mut piece);
    let mut events = Vec::new();
    let end = stdout.end(&mut events);
    run.push(events.drain(..));

    let mut stderr = StderrFeed::new(adapter.stderr_parser(), Redactor::default());
    for line in data.split(|&b| b == b'\n') {
        let piece = match line.get(..MAX_LINE_BYTES) {
            Some(head) if head.len() < line.len() => Piece::Overlong {
                head,
                total: line.len() as u64,
            },
            _ => Piece::Line(line),
        };
        stderr.piece(piece, &mut events);
        assert!(
            events.len() <= MAX_STDERR_EVENTS,
            "{} events from a stderr line",
            events.len()
        );
        run.push(events.drain(..));
    }

    let ending = Ending::of_agent(end, ExitInfo::default());
    run.push([
        ending.turn_event(),
        ending.run_event(Duration::from_secs(1)),
    ]);
    let receipt = Receipt::of(&run.stats).expect("a finished run has a receipt");
    check_receipt(&receipt);
}

/// Most events one stderr line may give: the line itself, or a tool call that failed as told
/// there (started, ended, and the agent's error).
const MAX_STDERR_EVENTS: usize = 4;

/// Most events one line may give: an agent's line can hold several tool calls, each as long as
/// its JSON.
fn max_events(line_len: usize) -> usize {
    4 + line_len / 8
}

/// The events of a made-up run, stamped and folded as the dispatcher stamps and folds them.
struct Run {
    stats: RunStats,
    seq: u64,
    /// The events as log lines, when asked for.
    log: Option<Vec<String>>,
}

impl Run {
    fn new(agent: &str, keep_log: bool) -> Self {
        let mut run = Self {
            stats: RunStats::default(),
            seq: 0,
            log: keep_log.then(Vec::new),
        };
        let info = RunInfo {
            schema_version: SCHEMA_VERSION,
            run_id: "fuzz".to_owned(),
            runbook_version: env!("CARGO_PKG_VERSION").to_owned(),
            agent: agent.to_owned(),
            model: None,
            model_file: None,
            prompt: "fuzz".to_owned(),
            cwd: "/work/repo".to_owned(),
            run_dir: String::new(),
            name: None,
            git: None,
            pid: 1,
            pid_start: None,
            limits: Limits::default(),
            settings: Vec::new(),
            env: Vec::new(),
            sandbox: None,
        };
        run.push([
            EventKind::RunStarted(Box::new(info)),
            EventKind::TurnStarted {
                argv: vec![agent.to_owned()],
                pid: 2,
                planning: false,
                steps_unreported: false,
                prompt: None,
            },
        ]);
        run
    }

    fn push(&mut self, kinds: impl IntoIterator<Item = EventKind>) {
        for kind in kinds {
            let ev = Event {
                seq: self.seq,
                ts: SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_000 + self.seq),
                turn: Turn::FIRST,
                kind,
            };
            self.seq += 1;
            check_event(&ev);
            self.stats.observe(&ev);
            if let Some(log) = &mut self.log {
                log.push(serde_json::to_string(&ev).expect("events serialize"));
            }
        }
    }
}

/// The receipts a fold gives, finished or not, checked.
fn receipts_of(stats: &RunStats) {
    if let Some(r) = Receipt::of(stats) {
        check_receipt(&r);
    }
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    for outcome in [Outcome::Running, Outcome::Abandoned] {
        if let Some(r) = Receipt::unfinished(stats, outcome, "fuzz".to_owned(), now) {
            check_receipt(&r);
        }
    }
}

fn check_event(ev: &Event) {
    round_trip(ev);
    let mut ours = Vec::new();
    crate::encode::event(&mut ours, ev).expect("it encodes");
    let theirs = serde_json::to_vec(ev).expect("serde_json encodes it");
    let theirs = crate::encode::escape_c1(&theirs).into_owned();
    assert!(
        ours == theirs,
        "the event's encoding and serde_json differ:\n{}\n{}",
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&theirs)
    );
}

/// A receipt encodes, decodes back, and renders as `status` shows it.
fn check_receipt(r: &Receipt) {
    round_trip(r);
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    report::status(r, &Styles::plain(), now, Some(60));
    // However the receipt was made, what `status` shows of it acts on no terminal.
    let shown = report::status(r, &Styles::new(true), now, None);
    let shown = crate::term::out::clean(&shown);
    let plain = console::strip_ansi_codes(&shown);
    assert!(
        !plain.chars().any(crate::foreign::term::is_control),
        "a control character reaches the terminal: {plain:?}"
    );
}

/// `value` encodes through `encode.rs` exactly as serde_json encodes it (but for DEL and the C1
/// controls, which `encode.rs` writes as `\u` escapes), decodes back, and the
/// decoded value encodes to the same JSON (numbers within float parsing precision).
fn round_trip<T: Serialize + DeserializeOwned>(value: &T) {
    let mut ours = Vec::new();
    crate::encode::write(&mut ours, value).expect("it encodes");
    let theirs = serde_json::to_vec(value).expect("serde_json encodes it");
    let theirs = crate::encode::escape_c1(&theirs).into_owned();
    assert!(
        ours == theirs,
        "encode.rs and serde_json differ:\n{}\n{}",
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&theirs)
    );
    let back: T = serde_json::from_slice(&ours).unwrap_or_else(|e| {
        panic!(
            "the encoded value does not decode ({e}): {}",
            String::from_utf8_lossy(&ours)
        )
    });
    let mut again = Vec::new();
    crate::encode::write(&mut again, &back).expect("it encodes again");
    let first: serde_json::Value = serde_json::from_slice(&ours).expect("valid JSON");
    let second: serde_json::Value = serde_json::from_slice(&again).expect("valid JSON");
    assert!(
        same_json(&first, &second),
        "the decoded value encodes differently:\n{first}\n{second}"
    );
}

/// Equal JSON, numbers compared as what serde_json's default (not exactly round-tripping) float
/// parsing can give back.
fn same_json(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value::{Array, Number, Object};
    match (a, b) {
        (Number(x), Number(y)) => match (x.as_f64(), y.as_f64()) {
            _ if x == y => true,
            (Some(x), Some(y)) => (x - y).abs() <= x.abs().max(y.abs()) * 1e-15,
            _ => false,
        },
        (Array(x), Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y)),
        (Object(x), Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((kx, vx), (ky, vy))| kx == ky && same_json(vx, vy))
        }
        _ => a == b,
    }
}

/// A directory of this process's and thread's own for the inputs read from files; removed again
/// when dropped, with its parent once that is empty.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        static BASE: OnceLock<PathBuf> = OnceLock::new();
        let base = BASE.get_or_init(|| {
            let shm = Path::new("/dev/shm");
            if shm.is_dir() {
                shm.to_path_buf()
            } else {
                std::env::temp_dir()
            }
        });
        // Each thread its own, for the property tests running side by side; no directory is
        // shared, so that one thread's cleaning up never removes another's parent.
        let dir = base.join(format!(
            "runbook-fuzz-{}-{name}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        fs::create_dir_all(&dir).expect("create the scratch directory");
        Self(dir)
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}
