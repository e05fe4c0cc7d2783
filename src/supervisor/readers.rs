//! The two pipe readers: stdout through the adapter's parser, stderr through its stderr parser.
//! Each runs on a thread of its own with blocking reads, writes the raw bytes to the run's log,
//! and sends batches of events to the supervisor, so neither stream can hold up the other.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Arc, Mutex, Weak};
use std::time::SystemTime;

use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use super::raw::RawSink;
use crate::agent::acp::Incoming;
use crate::agent::{StderrFeed, StderrParser, StdoutFeed, StdoutParser, StreamEnd};
pub(crate) use crate::consumer::RawLines;
use crate::consumer::{Delivered, Lane};
use crate::event::{EventKind, Stream};
use crate::lines::{LineSplitter, MAX_LINE_BYTES, Piece};
use crate::redact::{Masked, MaskedStream, Redactor};

/// How much one read of stdout may take. A fast agent's output then costs few system calls. What
/// a run holds grows with it: a read's events are all made before the next read, so a 1 MiB read
/// kept about 1.3 MiB more at the peak on the Claude Code stream than this, for 0 to 3% less
/// time; 256 KiB kept 0.5 MiB less again, for up to 10% more (BENCHMARKS.md, "Peak memory").
const STDOUT_READ: usize = 512 * 1024;
/// stderr carries little; its reads stay small.
const STDERR_READ: usize = 64 * 1024;
/// The stdout pipe's capacity asked for, so that a fast agent is not stopped every 64 KiB (the
/// default) to wait for runbook. Kernel memory, not runbook's.
const STDOUT_PIPE: libc::c_int = 1024 * 1024;
/// Events go to the supervisor in batches made from at most this much input, so that the bounded
/// queue between them (`QUEUE` batches) holds little memory however much one read returned. Large
/// enough that a fast agent's output does not wake the supervisor for every few hundred events.
const BATCH_INPUT: usize = 256 * 1024;
/// A batch also ends after this many lines: each line is at least one event, and an event is far
/// larger than a short line, so a stream of tiny lines (`x\n` repeated) would otherwise make
/// batches of a hundred thousand events and fill the queue with hundreds of MiB. Each batch
/// wakes the supervisor and writes the event log once: 512 lines cost a stream of tiny events
/// 9% more CPU than 2,048 (docs/benchmarks-history.md, "Eighth pass").
const BATCH_LINES: usize = 2048;
/// How many batches may wait for the supervisor: with [`BATCH_LINES`], at most ~16,000 tiny
/// events held (peak RSS 15.3 MiB on 5,000,000 `x` lines).
pub(crate) const QUEUE: usize = 8;

/// What one read produced (a long read is cut into several batches): any bytes at all count as
/// activity, even without a complete line.
pub(crate) struct Batch {
    pub stream: Stream,
    pub ts: SystemTime,
    pub at: Instant,
    pub events: Vec<EventKind>,
    /// The agent's lines that made the events, each with the index of its first event, when an
    /// observer asked for them; else empty.
    pub raw: RawLines,
    /// What an ACP agent wrote that its client must answer, from the lines of this batch.
    pub rpc: Vec<Incoming>,
    /// The reader delivered the batch's events itself (`events` is then empty): what they told.
    pub delivered: Option<Delivered>,
    /// Where the events go once dispatched: back to the reader that made them.
    home: Option<std::sync::mpsc::Sender<Vec<EventKind>>>,
}

impl Batch {
    fn now(stream: Stream, events: Vec<EventKind>) -> Self {
        Self {
            stream,
            ts: SystemTime::now(),
            at: Instant::now(),
            events,
            raw: Vec::new(),
            rpc: Vec::new(),
            delivered: None,
            home: None,
        }
    }

    /// Hands the dispatched events back to the reader, which frees them on its own thread and
    /// reuses the vector. Memory freed on the thread that allocated it goes straight back to
    /// that thread's free lists for its next events; freed on the supervisor's thread, every
    /// string would take the allocator's cross-thread path, and the reader would later collect
    /// it again (measured: no faster, more CPU; docs/benchmarks-history.md, "Seventh pass").
    pub(crate) fn recycle(self) {
        if let Some(home) = self.home {
            let _ = home.send(self.events);
        }
    }
}

/// Event vectors that came back from the supervisor.
struct Recycler {
    home: std::sync::mpsc::Sender<Vec<EventKind>>,
    returned: std::sync::mpsc::Receiver<Vec<EventKind>>,
}

impl Recycler {
    fn new() -> Self {
        let (home, returned) = std::sync::mpsc::channel();
        Self { home, returned }
    }

    /// An empty vector with room for `capacity` events: a returned one (its events freed here)
    /// when there is one.
    fn vec(&self, capacity: usize) -> Vec<EventKind> {
        let mut spare: Option<Vec<EventKind>> = None;
        while let Ok(mut events) = self.returned.try_recv() {
            events.clear();
            if spare
                .as_ref()
                .is_none_or(|s| s.capacity() < events.capacity())
            {
                spare = Some(events);
            }
        }
        match spare {
            Some(mut events) => {
                events.reserve(capacity);
                events
            }
            None => Vec::with_capacity(capacity),
        }
    }
}

/// How the stdout reader treats the stream beyond parsing it.
#[derive(Default)]
pub(crate) struct StdoutMode {
    /// Keep each event's line for the observers that asked for raw lines.
    pub keep_raw: bool,
    /// An ACP agent's messages for its client, as its parser hands them on. The raw log is then
    /// written a whole line at a time, as runbook's own messages are written to it too.
    pub inbox: Option<mpsc::UnboundedReceiver<Incoming>>,
    /// The way to deliver a small read's events here, when the supervisor holds nothing of the
    /// agent's (see [`Lane`]).
    pub lane: Option<Lane>,
}

/// Reads stdout to EOF (or until `stop` says so); returns the parser's verdict on how the stream
/// ended.
pub(crate) async fn stdout(
    pipe: OwnedFd,
    raw: RawSink,
    parser: Box<dyn StdoutParser>,
    redactor: Redactor,
    tx: mpsc::Sender<Batch>,
    stop: watch::Receiver<bool>,
    mode: StdoutMode,
) -> StreamEnd {
    let StdoutMode {
        keep_raw,
        inbox,
        lane,
    } = mode;
    crate::linux::grow_pipe(&pipe, STDOUT_PIPE);
    let mut feed = StdoutFeed::new(parser, redactor.clone());
    let mut on_line = |piece: Piece<'_>, events: &mut Vec<EventKind>, raw: &mut Vec<_>| {
        if keep_raw {
            feed.piece_kept(piece, events, raw);
        } else {
            feed.piece(piece, events);
        }
    };
    pump(
        Stoppable::new(pipe, stop),
        raw,
        &redactor,
        (Stream::Stdout, STDOUT_READ),
        Sender {
            tx: &tx,
            lane: lane.as_ref(),
            delivers: true,
        },
        &mut on_line,
        inbox,
    )
    .await;
    let mut events = Vec::new();
    let end = feed.end(&mut events);
    if !events.is_empty() {
        Sender {
            tx: &tx,
            lane: lane.as_ref(),
            delivers: true,
        }
        .send(Batch::now(Stream::Stdout, events))
        .await;
    }
    end
}

/// Reads stderr to EOF (or until `stop` says so). Colour codes are removed from the events but
/// kept in the raw log. Its batches are counted on `lane` (the stdout reader's), so that no
/// stdout line is delivered past a stderr batch still waiting for the supervisor.
pub(crate) async fn stderr(
    pipe: OwnedFd,
    raw: RawSink,
    parser: Box<dyn StderrParser>,
    redactor: Redactor,
    tx: mpsc::Sender<Batch>,
    (stop, lane): (watch::Receiver<bool>, Option<Lane>),
) {
    let mut feed = StderrFeed::new(parser, redactor.clone());
    let mut on_line =
        |piece: Piece<'_>, events: &mut Vec<EventKind>, _: &mut Vec<_>| feed.piece(piece, events);
    pump(
        Stoppable::new(pipe, stop),
        raw,
        &redactor,
        (Stream::Stderr, STDERR_READ),
        Sender {
            tx: &tx,
            lane: lane.as_ref(),
            delivers: false,
        },
        &mut on_line,
        None,
    )
    .await;
}

/// Where a reader's batches go: to the supervisor, each counted on the lane, which holds the
/// stdout reader's deliveries until the supervisor has handled them all.
#[derive(Clone, Copy)]
struct Sender<'a> {
    tx: &'a mpsc::Sender<Batch>,
    lane: Option<&'a Lane>,
    /// Whether this reader delivers a small read's events itself (stdout's does).
    delivers: bool,
}

impl Sender<'_> {
    /// A small read's events go out from the reader's thread (`here`) when nothing of the
    /// agent's is waiting for the supervisor: a lone line then wakes one thread, not two. The
    /// batch then keeps only what delivering them told.
    fn deliver_here(&self, batch: &mut Batch, here: bool) {
        let Some(lane) = self.lane else { return };
        if self.delivers && here && !batch.events.is_empty() {
            batch.delivered = lane.try_deliver(batch.ts, &mut batch.events, &batch.raw);
            if batch.delivered.is_some() {
                batch.events.clear();
                batch.raw.clear();
            }
        }
    }

    /// Sends a batch; `false` once the supervisor is gone.
    async fn send(self, batch: Batch) -> bool {
        if let Some(lane) = self.lane {
            lane.sending();
        }
        self.tx.send(batch).await.is_ok()
    }
}

async fn pump(
    mut pipe: Stoppable,
    raw: RawSink,
    redactor: &Redactor,
    (stream, read_size): (Stream, usize),
    tx: Sender<'_>,
    on_line: &mut (dyn FnMut(Piece<'_>, &mut Vec<EventKind>, &mut RawLines) + Send),
    mut inbox: Option<mpsc::UnboundedReceiver<Incoming>>,
) {
    let mut splitter = LineSplitter::new(MAX_LINE_BYTES);
    let mut log = RawLog::new(raw, redactor.clone());
    log.whole_lines(inbox.is_some());
    let mut raw = RawWriter::start(log);
    let mut take_rpc = move || drain(&mut inbox);
    let mut buf = vec![0u8; read_size];
    let recycler = Recycler::new();
    'read: loop {
        let n = match pipe.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let (ts, at) = (SystemTime::now(), Instant::now());
        // The raw log is written on its own thread while this one parses the same bytes; a
        // small read, once its events are sent, here.
        let chunk = Arc::new(Chunk { buf, len: n });
        let here = raw.can_write_here(&chunk);
        if !here {
            raw.write(Arc::clone(&chunk)).await;
        }
        // Cut into batches of at most `BATCH_INPUT` bytes and `BATCH_LINES` lines.
        let mut rest = chunk.bytes();
        while !rest.is_empty() {
            // Room for a typical mix of lines (about one event per 400 bytes) without regrowing.
            let mut events = recycler.vec(rest.len().min(BATCH_INPUT) / 400 + 8);
            let mut lines = Vec::new();
            let took = splitter.feed_some(rest, BATCH_LINES, BATCH_INPUT, |piece| {
                on_line(piece, &mut events, &mut lines);
            });
            rest = &rest[took..];
            let rpc = take_rpc();
            let mut batch = Batch {
                stream,
                ts,
                at,
                events,
                raw: lines,
                rpc,
                delivered: None,
                home: Some(recycler.home.clone()),
            };
            tx.deliver_here(&mut batch, here);
            if !tx.send(batch).await {
                break 'read;
            }
        }
        if here {
            raw.write_here(&chunk);
        }
        buf = raw.reuse(chunk, read_size);
    }
    raw.finish().await;
    let (mut events, mut lines) = (Vec::new(), Vec::new());
    splitter.finish(|piece| on_line(piece, &mut events, &mut lines));
    let rpc = take_rpc();
    if !events.is_empty() || !rpc.is_empty() {
        let mut batch = Batch::now(stream, events);
        batch.raw = lines;
        batch.rpc = rpc;
        tx.send(batch).await;
    }
}

/// The JSON-RPC messages the parser has handed over so far, if it hands any.
fn drain(inbox: &mut Option<mpsc::UnboundedReceiver<Incoming>>) -> Vec<Incoming> {
    let mut rpc = Vec::new();
    if let Some(inbox) = inbox {
        while let Ok(message) = inbox.try_recv() {
            rpc.push(message);
        }
    }
    rpc
}

/// A pipe read with blocking `read(2)` on the reader's own thread, which reads as ended once the
/// supervisor says to stop reading it (runbook's end is closed when the pipe is dropped, whoever
/// holds the other end).
///
/// The read does not go through the runtime's I/O driver: an agent's line then wakes the reader
/// alone, not a runtime worker that wakes the reader (see docs/benchmarks-history.md, latency). The reader
/// waits in `poll(2)` on the pipe and on an eventfd that a small task sets when the supervisor
/// says to stop, so a pipe a leftover process holds open cannot keep the read waiting.
struct Stoppable {
    pipe: OwnedFd,
    /// Readable once the supervisor said to stop; without one (no descriptor left to make it),
    /// `stop` is looked at every [`STOP_POLL`] instead.
    stopped: Option<Arc<OwnedFd>>,
    stop: watch::Receiver<bool>,
    watcher: Option<tokio::task::AbortHandle>,
}

/// How often the word to stop is looked for when there is no eventfd to wait on.
const STOP_POLL: libc::c_int = 50;

impl Stoppable {
    /// Must be called within the runtime, which runs the task that watches `stop`.
    fn new(pipe: OwnedFd, stop: watch::Receiver<bool>) -> Self {
        // A read never blocks: a readiness that turns out stale goes back to `poll`.
        // SAFETY: fcntl on a descriptor `pipe` owns.
        unsafe {
            let flags = libc::fcntl(pipe.as_raw_fd(), libc::F_GETFL);
            if flags >= 0 {
                libc::fcntl(pipe.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
            }
        }
        let stopped = crate::linux::eventfd().map(Arc::new);
        let watcher = stopped.as_ref().map(|stopped| {
            let (set, mut stop) = (Arc::clone(stopped), stop.clone());
            tokio::spawn(async move {
                // The supervisor gone without a word is no reason to stop.
                if stop.wait_for(|stop| *stop).await.is_ok() {
                    crate::linux::raise(&set);
                }
            })
            .abort_handle()
        });
        Self {
            pipe,
            stopped,
            stop,
            watcher,
        }
    }

    /// Waits for bytes, the end of the pipe or the word to stop (which wins over bytes waiting).
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if *self.stop.borrow() {
                return Ok(0);
            }
            let (stopped, timeout) = match &self.stopped {
                Some(fd) => (fd.as_raw_fd(), -1),
                // poll(2) leaves a negative descriptor out.
                None => (-1, STOP_POLL),
            };
            let mut fds = [
                libc::pollfd {
                    fd: stopped,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: self.pipe.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: poll(2) on an array of two pollfds that lives across the call.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout) };
            if ready < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if fds[0].revents != 0 || *self.stop.borrow() {
                return Ok(0);
            }
            if fds[1].revents == 0 {
                continue;
            }
            // SAFETY: read(2) into `buf`, which is valid for `buf.len()` bytes.
            let n =
                unsafe { libc::read(self.pipe.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n >= 0 {
                return Ok(n.unsigned_abs());
            }
            let e = std::io::Error::last_os_error();
            if !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
            ) {
                return Err(e);
            }
        }
    }
}

impl Drop for Stoppable {
    fn drop(&mut self) {
        if let Some(watcher) = &self.watcher {
            watcher.abort();
        }
    }
}

/// One read's bytes, shared by the parser and the raw log writer.
struct Chunk {
    buf: Vec<u8>,
    len: usize,
}

impl Chunk {
    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// The raw log, written on a blocking thread of its own: writing a read's bytes to the page cache
/// costs about as much as reading them from the pipe, and need not hold up the parser. Read
/// buffers come back to the reader once both are done with them, so a run uses a few at most.
///
/// A small read (an agent printing an event at a time) is written by the reader itself, after
/// its events are on their way, when the writer thread has nothing left to write: waking a
/// thread for a few hundred bytes costs more than writing them, and on a busy machine every
/// thread woken per event is one more wait for a core (see docs/benchmarks-history.md, latency).
struct RawWriter {
    chunks: Option<mpsc::Sender<Arc<Chunk>>>,
    done: tokio::task::JoinHandle<()>,
    spare: std::sync::mpsc::Receiver<Vec<u8>>,
    log: Arc<Mutex<RawLog>>,
    /// The last chunk handed to the writer thread: while it lives there, the log is not ours
    /// to write.
    last: Weak<Chunk>,
}

/// Reads up to this size may be logged by the reader itself.
const WRITE_HERE: usize = 16 * 1024;

impl RawWriter {
    fn start(log: RawLog) -> Self {
        let log = Arc::new(Mutex::new(log));
        // One chunk queued while another is written: the reader never waits unless the disk is
        // slower than the parser.
        let (chunks, mut rx) = mpsc::channel::<Arc<Chunk>>(1);
        let (give_back, spare) = std::sync::mpsc::channel();
        let shared = Arc::clone(&log);
        let done = tokio::task::spawn_blocking(move || {
            while let Some(chunk) = rx.blocking_recv() {
                lock(&shared).write(chunk.bytes());
                if let Ok(chunk) = Arc::try_unwrap(chunk) {
                    let _ = give_back.send(chunk.buf);
                }
            }
            lock(&shared).finish();
        });
        Self {
            chunks: Some(chunks),
            done,
            spare,
            log,
            last: Weak::new(),
        }
    }

    /// Whether this chunk is small and every chunk before it is written: the reader may write it.
    fn can_write_here(&self, chunk: &Chunk) -> bool {
        chunk.len <= WRITE_HERE && self.last.strong_count() == 0
    }

    /// Writes a chunk on the calling thread; only after [`RawWriter::can_write_here`] said so.
    fn write_here(&self, chunk: &Chunk) {
        lock(&self.log).write(chunk.bytes());
    }

    async fn write(&mut self, chunk: Arc<Chunk>) {
        self.last = Arc::downgrade(&chunk);
        if let Some(chunks) = &self.chunks {
            let _ = chunks.send(chunk).await;
        }
    }

    /// A buffer for the next read: this chunk's, if the log is done with it, else a spare one.
    fn reuse(&self, chunk: Arc<Chunk>, size: usize) -> Vec<u8> {
        match Arc::try_unwrap(chunk) {
            Ok(chunk) => chunk.buf,
            Err(_) => self.spare.try_recv().unwrap_or_else(|_| vec![0u8; size]),
        }
    }

    /// Writes out what is left; the log is complete when this returns.
    async fn finish(mut self) {
        self.chunks = None;
        let _ = self.done.await;
    }
}

/// The raw log; a panic while it was held leaves it as usable as before.
fn lock(log: &Mutex<RawLog>) -> std::sync::MutexGuard<'_, RawLog> {
    log.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The agent's raw output, appended verbatim except for masked secrets.
///
/// With secrets to mask, bytes are held back until a newline (or, within a very long line, until
/// no secret can straddle the cut) so that a secret split across two reads is still masked.
struct RawLog {
    sink: RawSink,
    stream: MaskedStream,
    failed: bool,
}

impl RawLog {
    fn new(sink: RawSink, redactor: Redactor) -> Self {
        Self {
            sink,
            stream: MaskedStream::new(Arc::new(redactor)),
            failed: false,
        }
    }

    /// Write only whole lines (within a bound), so that lines written to the same log by
    /// runbook fall between the agent's.
    fn whole_lines(&mut self, whole: bool) {
        self.stream.whole_lines = whole;
    }

    fn write(&mut self, bytes: &[u8]) {
        let masked = self.stream.push(bytes);
        self.put(&masked);
    }

    fn finish(&mut self) {
        let masked = self.stream.finish();
        self.put(&masked);
    }

    fn put(&mut self, bytes: &Masked<'_>) {
        // A log that cannot be written must not stop the agent's output from being read: the
        // supervisor hears of it and stops the run.
        if !self.failed
            && !bytes.is_empty()
            && let Err(e) = self.sink.file.write_all(bytes)
        {
            self.failed = true;
            self.sink.failed(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::{Read as _, Write as _};
    use std::os::fd::FromRawFd as _;

    use super::*;
    use crate::agent::{Adapter, OpenCode, ParseContext};
    use crate::redact::MaskedWriter;

    /// A pipe whose other end stays open (a leftover process holding it) ends being read when
    /// the supervisor says so, with what was read before delivered and logged.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_pipe_held_open_stops_being_read_when_told() {
        let mut fds = [0; 2];
        // SAFETY: a valid array for pipe(2) to fill.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: pipe(2) just returned these descriptors; each is owned once.
        let (read_end, mut write_end) = unsafe {
            (
                OwnedFd::from_raw_fd(fds[0]),
                File::from(OwnedFd::from_raw_fd(fds[1])),
            )
        };
        let dir = tempfile::tempdir().unwrap();
        let raw_path = dir.path().join("stdout.log");
        let raw = super::super::raw::RawFile::new(
            MaskedWriter::create_private(&raw_path).unwrap(),
            raw_path.clone(),
        );
        let raw = raw.sink().unwrap();
        let parser = OpenCode.stdout_parser(ParseContext::new(dir.path().to_path_buf()));
        let (tx, mut rx) = mpsc::channel(QUEUE);
        let (stop_tx, stop) = watch::channel(false);
        let reader = tokio::task::spawn_blocking(move || {
            let runtime = tokio::runtime::Handle::current();
            runtime.block_on(stdout(
                read_end,
                raw,
                parser,
                Redactor::default(),
                tx,
                stop,
                StdoutMode::default(),
            ))
        });
        let line = "{\"type\":\"text\",\"part\":{\"text\":\"before the stop\"}}\n";
        write_end.write_all(line.as_bytes()).unwrap();
        let batch = rx.recv().await.expect("the line's batch");
        assert!(
            batch
                .events
                .iter()
                .any(|e| matches!(e, EventKind::Text { text } if text == "before the stop"))
        );
        // Long enough for the reader to be waiting on the pipe again, not about to look at `stop`.
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert!(!reader.is_finished());

        stop_tx.send_replace(true);
        tokio::time::timeout(std::time::Duration::from_secs(10), reader)
            .await
            .expect("the reader ends although the pipe is still open")
            .unwrap();
        // Nothing more arrives, and the write end is still open.
        while rx.recv().await.is_some() {}
        drop(write_end);
        let mut logged = String::new();
        File::open(&raw_path)
            .unwrap()
            .read_to_string(&mut logged)
            .unwrap();
        assert_eq!(logged, line);
    }

    /// A pipe whose write end a thread fills with `input`, then closes.
    fn pipe_writing(input: String) -> (OwnedFd, std::thread::JoinHandle<()>) {
        let mut fds = [0; 2];
        // SAFETY: a valid array for pipe(2) to fill.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: pipe(2) just returned these descriptors; each is owned once.
        let (read_end, write_end) = unsafe {
            (
                OwnedFd::from_raw_fd(fds[0]),
                std::fs::File::from(OwnedFd::from_raw_fd(fds[1])),
            )
        };
        let writer = std::thread::spawn(move || {
            let mut w = write_end;
            w.write_all(input.as_bytes()).unwrap();
        });
        (read_end, writer)
    }

    /// More than one read and many batches: every line arrives once, in order, and the raw log
    /// holds exactly what was written.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_fast_stream_arrives_whole_and_in_order() {
        let lines: Vec<String> = (0..60_000)
            .map(|i| format!(r#"{{"type":"text","part":{{"text":"line {i}"}}}}"#))
            .collect();
        let input = lines.join("\n") + "\n";
        assert!(input.len() > 2 * STDOUT_READ);

        let (read_end, writer) = pipe_writing(input.clone());
        let dir = tempfile::tempdir().unwrap();
        let raw_path = dir.path().join("stdout.log");
        let raw = super::super::raw::RawFile::new(
            MaskedWriter::create_private(&raw_path).unwrap(),
            raw_path.clone(),
        );
        let raw = raw.sink().unwrap();
        let parser = OpenCode.stdout_parser(ParseContext::new(dir.path().to_path_buf()));
        let (tx, mut rx) = mpsc::channel(QUEUE);
        let (_keep, stop) = watch::channel(false);
        let reader = tokio::task::spawn_blocking(move || {
            let runtime = tokio::runtime::Handle::current();
            runtime.block_on(stdout(
                read_end,
                raw,
                parser,
                Redactor::default(),
                tx,
                stop,
                StdoutMode {
                    keep_raw: true,
                    ..StdoutMode::default()
                },
            ))
        });

        let mut texts = Vec::new();
        let mut batches = 0;
        while let Some(batch) = rx.recv().await {
            batches += 1;
            // A batch comes from at most BATCH_LINES lines of input (one event each here).
            assert!(batch.events.len() <= BATCH_LINES + 1);
            // Each event with the line it came from.
            assert_eq!(batch.raw.len(), batch.events.len());
            for ((first, line), (i, ev)) in batch.raw.iter().zip(batch.events.iter().enumerate()) {
                assert_eq!(*first as usize, i);
                if let EventKind::Text { text } = ev {
                    assert!(line.contains(text.as_str()), "{line} for {text}");
                }
            }
            for ev in batch.events {
                match ev {
                    EventKind::Text { text } => texts.push(text),
                    EventKind::SessionStarted { .. } => {}
                    other => panic!("unexpected {other:?}"),
                }
            }
        }
        writer.join().unwrap();
        reader.await.unwrap();
        assert!(batches >= 60_000 / BATCH_LINES);
        let expected: Vec<String> = (0..60_000).map(|i| format!("line {i}")).collect();
        assert_eq!(texts, expected);
        let mut logged = String::new();
        File::open(&raw_path)
            .unwrap()
            .read_to_string(&mut logged)
            .unwrap();
        assert!(logged == input, "the raw log differs from the input");
    }
}
