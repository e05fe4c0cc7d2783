//! The two pipe readers: stdout through the adapter's parser, stderr through its stderr parser.
//! Each runs on its own task, writes the raw bytes to the run's log, and sends batches of events
//! to the supervisor, so neither stream can hold up the other.

use std::fs::File;
use std::io::Write;
use std::time::SystemTime;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::agent::{StderrParser, StdoutParser, StreamEnd, unparsed};
use crate::event::{EventKind, Stream, UnparsedReason};
use crate::lines::{LineSplitter, MAX_LINE_BYTES, Piece};
use crate::redact::Redactor;

const READ_BUF: usize = 64 * 1024;

/// What one read produced: any bytes at all count as activity, even without a complete line.
pub(crate) struct Batch {
    pub stream: Stream,
    pub ts: SystemTime,
    pub at: Instant,
    pub events: Vec<EventKind>,
}

/// Reads stdout to EOF; returns the parser's verdict on how the stream ended.
pub(crate) async fn stdout(
    pipe: impl AsyncRead + Unpin,
    raw: File,
    mut parser: Box<dyn StdoutParser>,
    redactor: Redactor,
    tx: mpsc::Sender<Batch>,
) -> StreamEnd {
    let mut on_line = |piece: Piece<'_>, events: &mut Vec<EventKind>| match piece {
        Piece::Line(line) => parser.line(&redactor.bytes(line), events),
        Piece::Overlong { head, total } => {
            events.push(unparsed(
                Stream::Stdout,
                UnparsedReason::TooLong,
                &redactor.bytes(head),
                total,
            ));
        }
    };
    pump(pipe, raw, &redactor, Stream::Stdout, &tx, &mut on_line).await;
    parser.end()
}

/// Reads stderr to EOF. Colour codes are removed from the events but kept in the raw log.
pub(crate) async fn stderr(
    pipe: impl AsyncRead + Unpin,
    raw: File,
    mut parser: Box<dyn StderrParser>,
    redactor: Redactor,
    tx: mpsc::Sender<Batch>,
) {
    let mut on_line = |piece: Piece<'_>, events: &mut Vec<EventKind>| {
        let line = match piece {
            Piece::Line(line) => String::from_utf8_lossy(line).into_owned(),
            Piece::Overlong { head, total } => {
                format!(
                    "{}… ({total} bytes)",
                    String::from_utf8_lossy(&head[..head.len().min(1024)])
                )
            }
        };
        let plain = console::strip_ansi_codes(&line);
        let plain = plain.trim_end_matches('\r');
        parser.line(&redactor.str(plain), events);
    };
    pump(pipe, raw, &redactor, Stream::Stderr, &tx, &mut on_line).await;
}

async fn pump(
    mut pipe: impl AsyncRead + Unpin,
    raw: File,
    redactor: &Redactor,
    stream: Stream,
    tx: &mpsc::Sender<Batch>,
    on_line: &mut (dyn FnMut(Piece<'_>, &mut Vec<EventKind>) + Send),
) {
    let mut buf = vec![0u8; READ_BUF];
    let mut splitter = LineSplitter::new(MAX_LINE_BYTES);
    let mut raw = RawLog::new(raw, redactor.clone());
    loop {
        let n = match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let (ts, at) = (SystemTime::now(), Instant::now());
        raw.write(&buf[..n]);
        let mut events = Vec::new();
        splitter.feed(&buf[..n], |piece| on_line(piece, &mut events));
        if tx
            .send(Batch {
                stream,
                ts,
                at,
                events,
            })
            .await
            .is_err()
        {
            break;
        }
    }
    raw.finish();
    let mut events = Vec::new();
    splitter.finish(|piece| on_line(piece, &mut events));
    if !events.is_empty() {
        let _ = tx
            .send(Batch {
                stream,
                ts: SystemTime::now(),
                at: Instant::now(),
                events,
            })
            .await;
    }
}

/// The agent's raw output, appended verbatim except for masked secrets.
///
/// With secrets to mask, bytes are held back until a newline (or, within a very long line, until
/// no secret can straddle the cut) so that a secret split across two reads is still masked.
struct RawLog {
    file: File,
    redactor: Redactor,
    carry: Vec<u8>,
    failed: bool,
}

/// Within a line longer than this, held-back bytes are written anyway.
const CARRY_LIMIT: usize = 1024 * 1024;

impl RawLog {
    fn new(file: File, redactor: Redactor) -> Self {
        Self {
            file,
            redactor,
            carry: Vec::new(),
            failed: false,
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        if !self.redactor.is_active() {
            self.put(bytes);
            return;
        }
        self.carry.extend_from_slice(bytes);
        let cut = match memchr::memrchr(b'\n', &self.carry) {
            Some(nl) => nl + 1,
            None if self.carry.len() > CARRY_LIMIT => self.redactor.safe_cut(&self.carry),
            None => return,
        };
        let done: Vec<u8> = self.carry.drain(..cut).collect();
        let masked = self.redactor.bytes(&done).into_owned();
        self.put(&masked);
    }

    fn finish(&mut self) {
        let rest = std::mem::take(&mut self.carry);
        let masked = self.redactor.bytes(&rest).into_owned();
        self.put(&masked);
    }

    fn put(&mut self, bytes: &[u8]) {
        // A log that cannot be written must not stop the agent's output from being read.
        if !self.failed && self.file.write_all(bytes).is_err() {
            self.failed = true;
        }
    }
}
