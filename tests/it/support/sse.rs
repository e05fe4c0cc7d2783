//! The HTTP side shared by the scripted fake providers: a server on `127.0.0.1` with its own
//! thread and tokio runtime, request recording, script selection per conversation, and JSON and
//! SSE response bodies.
//!
//! * [`Server`] listens on an ephemeral port, reads each request whole and hands it to a
//!   synchronous handler; dropping it stops the server and closes every connection, stalled ones
//!   included, without hanging.
//! * [`Fake`] builds a scripted provider on it from a [`Protocol`]: the protocol says which
//!   requests are model requests, of which conversation (main or subagent) and at which step, and
//!   how to answer; `Fake` plays the main or subagent script at that step and records everything.
//! * [`Scenario`], [`README`] and [`canon`]: what the canonical scenarios of the agent CLIs
//!   share.
#![allow(dead_code)]

use std::convert::Infallible;
use std::marker::PhantomData;
use std::net::SocketAddr;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use http_body_util::BodyExt;
use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};
use hyper::{Request, Response, StatusCode};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// A request a fake server received, read whole.
#[derive(Debug, Clone)]
pub struct Received {
    /// `GET`, `HEAD`, `POST`, …
    pub method: String,
    /// The path without the query, e.g. `/v1/messages`.
    pub path: String,
    /// The query string without `?`, e.g. `beta=true`.
    pub query: Option<String>,
    /// Lower-case names, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The JSON body (`Value::Null` when empty or not JSON).
    pub body: Value,
    /// For model requests: which script answered it, at which step.
    pub turn: Option<Turn>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }

    /// Whether this is a model request answered from the subagent script.
    pub fn is_subagent(&self) -> bool {
        self.turn.is_some_and(|t| t.subagent)
    }
}

/// The value of header `name` (case-insensitive) in `headers`.
pub fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Where a model request stands: which script answers it, and the index into that script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Turn {
    pub subagent: bool,
    pub step: usize,
}

/// What a handler does with a request.
pub enum Answer {
    Respond(Response<FakeBody>),
    /// Never answer: no status line, no headers (until the server is dropped).
    Stall,
}

/// A running HTTP/1.1 server on `127.0.0.1`, port 0. Dropping it stops it.
pub struct Server {
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

type Handler = Arc<dyn Fn(Received) -> Answer + Send + Sync>;

impl Server {
    /// Starts serving on a thread named `name`; `handler` answers each request (concurrently
    /// received requests are handled concurrently; the handler itself must not block).
    pub fn start(
        name: &str,
        handler: impl Fn(Received) -> Answer + Send + Sync + 'static,
    ) -> Server {
        let listener =
            std::net::TcpListener::bind(("127.0.0.1", 0)).expect("fake server: bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("fake server: set_nonblocking");
        let addr = listener.local_addr().expect("fake server: local_addr");
        let handler: Handler = Arc::new(handler);
        let (tx, rx) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("fake server: tokio runtime");
                rt.block_on(serve(listener, handler, rx));
                // Drops every connection task, stalled ones included.
                rt.shutdown_timeout(Duration::from_secs(2));
            })
            .expect("fake server: spawn thread");
        Server {
            addr,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn serve(
    listener: std::net::TcpListener,
    handler: Handler,
    mut shutdown: oneshot::Receiver<()>,
) {
    let listener =
        tokio::net::TcpListener::from_std(listener).expect("fake server: tokio listener");
    loop {
        tokio::select! {
            _ = &mut shutdown => return,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                let handler = handler.clone();
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req| handle(handler.clone(), req));
                    // Errors (client went away, …) only end this connection.
                    let _ = hyper::server::conn::http1::Builder::new()
                        .keep_alive(true)
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                        .await;
                });
            }
        }
    }
}

async fn handle(
    handler: Handler,
    req: Request<Incoming>,
) -> Result<Response<FakeBody>, Infallible> {
    let method = req.method().as_str().to_owned();
    let path = req.uri().path().to_owned();
    let query = req.uri().query().map(str::to_owned);
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let bytes = match req.into_body().collect().await {
        Ok(c) => c.to_bytes(),
        Err(_) => Bytes::new(), // client went away
    };
    let received = Received {
        method,
        path,
        query,
        headers,
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        turn: None,
    };
    match handler(received) {
        Answer::Respond(r) => Ok(r),
        Answer::Stall => std::future::pending().await,
    }
}

/// Polls `done` every 20 ms until it holds (true) or `timeout` passes (false).
pub fn wait_until(timeout: Duration, done: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

// ---------------------------------------------------------------------------
// Responses

/// A response builder with `status` and the `extra` headers.
fn builder(status: u16, extra: &[(&str, String)]) -> hyper::http::response::Builder {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    extra
        .iter()
        .fold(Response::builder().status(status), |b, (k, v)| {
            b.header(*k, v.as_str())
        })
}

/// A JSON response.
pub fn json_response(status: u16, extra: &[(&str, String)], body: &Value) -> Response<FakeBody> {
    builder(status, extra)
        .header("content-type", "application/json")
        .body(FakeBody::full(body.to_string()))
        .expect("fake server: response")
}

/// A response without a body.
pub fn empty_response(status: u16, extra: &[(&str, String)]) -> Response<FakeBody> {
    builder(status, extra)
        .body(FakeBody::Full(None))
        .expect("fake server: response")
}

/// A `200` event stream sending `events` (one HTTP chunk each, flushed at once); then it ends,
/// or with `hold` stays open and silent until the server is dropped.
pub fn sse_response(
    extra: &[(&str, String)],
    events: Vec<Bytes>,
    hold: bool,
) -> Response<FakeBody> {
    let (tx, rx) = mpsc::unbounded_channel();
    for e in events {
        let _ = tx.send(e);
    }
    if hold {
        // Keep the sender alive (the stream stays open, silent) until the runtime is shut down.
        tokio::spawn(async move {
            let _tx = tx;
            std::future::pending::<()>().await
        });
    } else {
        drop(tx);
    }
    builder(200, extra)
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(FakeBody::Chan(rx))
        .expect("fake server: response")
}

/// One SSE event: `event: NAME` (when given) and `data: JSON`.
pub fn sse_event(name: Option<&str>, data: &Value) -> Bytes {
    match name {
        Some(name) => Bytes::from(format!("event: {name}\ndata: {data}\n\n")),
        None => Bytes::from(format!("data: {data}\n\n")),
    }
}

/// Splits `s` into at most `n` non-empty pieces on char boundaries.
pub fn split_pieces(s: &str, n: usize) -> Vec<&str> {
    let chars: Vec<(usize, char)> = s.char_indices().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let per = chars.len().div_ceil(n.max(1));
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let start = chars[i].0;
        let end = chars.get(i + per).map_or(s.len(), |c| c.0);
        out.push(&s[start..end]);
        i += per;
    }
    out
}

/// Response body: a complete buffer (sent with `content-length`) or a channel of SSE events
/// (sent chunked, one event per chunk, flushed as it comes).
pub enum FakeBody {
    Full(Option<Bytes>),
    Chan(mpsc::UnboundedReceiver<Bytes>),
}

impl FakeBody {
    pub fn full(s: String) -> FakeBody {
        FakeBody::Full(Some(Bytes::from(s)))
    }
}

impl Body for FakeBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            FakeBody::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            FakeBody::Chan(rx) => rx.poll_recv(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, FakeBody::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            FakeBody::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            FakeBody::Full(None) => SizeHint::with_exact(0),
            FakeBody::Chan(_) => SizeHint::default(),
        }
    }
}

// ---------------------------------------------------------------------------
// Scripted fakes

/// Text of the answer to main requests beyond the script.
pub const DONE_TEXT: &str = "done";
/// Text of the answer to subagent requests beyond the subagent script.
pub const SUBAGENT_TEXT: &str = "subagent summary";

/// A wire protocol of a scripted fake provider.
pub trait Protocol: 'static {
    /// One scripted answer of the model.
    type Reply: Clone + Send + 'static;
    /// The token usage a reply is served with.
    type Usage: Copy + Default + std::ops::Add<Output = Self::Usage>;
    /// The server thread's name.
    const NAME: &'static str;
    /// For a model request: its conversation and step. `None` for any other request.
    fn turn(req: &Received) -> Option<Turn>;
    /// A text answer served with `input` and `output` tokens.
    fn text(text: &str, input: u64, output: u64) -> Self::Reply;
    /// The usage `reply` is served with (`None` for errors and stalls).
    fn usage(reply: &Self::Reply) -> Option<Self::Usage>;
    /// The reply to model requests past the end of their script: [`DONE_TEXT`], or
    /// [`SUBAGENT_TEXT`] for subagents.
    fn beyond_script(turn: Turn) -> Self::Reply {
        if turn.subagent {
            Self::text(SUBAGENT_TEXT, 100, 3)
        } else {
            Self::text(DONE_TEXT, 100, 1)
        }
    }
    /// The answer to request number `id` (from 1): `reply` is the scripted reply of a model
    /// request, `None` for other requests.
    fn answer(req: &Received, reply: Option<Self::Reply>, id: u64) -> Answer;
}

struct Scripts<R> {
    main: Vec<R>,
    subagent: Vec<R>,
    requests: Vec<Received>,
    next_id: u64,
}

/// A running scripted fake provider speaking protocol `P`. Model requests pick their step from
/// the conversation they carry (see [`Protocol::turn`]), so retries of a request get the same
/// reply; subagent conversations play the subagent script, each from its start. Dropping it
/// stops the server.
pub struct Fake<P: Protocol> {
    state: Arc<Mutex<Scripts<P::Reply>>>,
    server: Server,
    protocol: PhantomData<P>,
}

impl<P: Protocol> Fake<P> {
    /// Starts a server answering main-conversation requests from `script`.
    pub fn start(script: Vec<P::Reply>) -> Self {
        Fake::start_scripts(script, Vec::new())
    }

    /// Starts a server playing `scenario`'s scripts.
    pub fn for_scenario(scenario: &Scenario<P::Reply>) -> Self {
        Fake::start_scripts(scenario.script.clone(), scenario.subagent_script.clone())
    }

    /// Starts a server answering main-conversation requests from `script` and subagent requests
    /// from `subagent_script`.
    pub fn start_scripts(script: Vec<P::Reply>, subagent_script: Vec<P::Reply>) -> Self {
        let state = Arc::new(Mutex::new(Scripts {
            main: script,
            subagent: subagent_script,
            requests: Vec::new(),
            next_id: 1,
        }));
        let st = state.clone();
        let server = Server::start(P::NAME, move |mut req| {
            let turn = P::turn(&req);
            req.turn = turn;
            let (reply, id) = {
                let mut st = st.lock().unwrap_or_else(|e| e.into_inner());
                let id = st.next_id;
                st.next_id += 1;
                let reply = turn.map(|t| {
                    let script = if t.subagent { &st.subagent } else { &st.main };
                    script
                        .get(t.step)
                        .cloned()
                        .unwrap_or_else(|| P::beyond_script(t))
                });
                st.requests.push(req.clone());
                (reply, id)
            };
            P::answer(&req, reply, id)
        });
        Fake {
            state,
            server,
            protocol: PhantomData,
        }
    }

    pub fn port(&self) -> u16 {
        self.server.port()
    }

    /// Every request received so far, in arrival order (recorded as soon as its body has been
    /// read, before it is answered).
    pub fn requests(&self) -> Vec<Received> {
        self.lock().requests.clone()
    }

    /// The model requests (main and subagent), in arrival order.
    pub fn model_requests(&self) -> Vec<Received> {
        self.filtered(|r| r.turn.is_some())
    }

    /// The model requests of the main conversation.
    pub fn main_requests(&self) -> Vec<Received> {
        self.filtered(|r| r.turn.is_some_and(|t| !t.subagent))
    }

    /// The model requests of subagents.
    pub fn subagent_requests(&self) -> Vec<Received> {
        self.filtered(|r| r.is_subagent())
    }

    /// The usage served to each model request so far, in arrival order: the scripted reply of
    /// its step (or the answer past the end of its script); `None` for errors and stalls.
    pub fn served(&self) -> Vec<(Turn, Option<P::Usage>)> {
        let st = self.lock();
        st.requests
            .iter()
            .filter_map(|r| r.turn)
            .map(|t| {
                let script = if t.subagent { &st.subagent } else { &st.main };
                let reply = script
                    .get(t.step)
                    .cloned()
                    .unwrap_or_else(|| P::beyond_script(t));
                (t, P::usage(&reply))
            })
            .collect()
    }

    /// Waits until at least `n` model requests arrived; false on timeout.
    pub fn wait_for_model_requests(&self, n: usize, timeout: Duration) -> bool {
        wait_until(timeout, || self.model_requests().len() >= n)
    }

    fn filtered(&self, keep: impl Fn(&Received) -> bool) -> Vec<Received> {
        self.lock()
            .requests
            .iter()
            .filter(|r| keep(r))
            .cloned()
            .collect()
    }

    fn lock(&self) -> MutexGuard<'_, Scripts<P::Reply>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What a canonical scenario needs: the prompt, the scripts, and the agent CLI's flags.
#[derive(Debug, Clone)]
pub struct Scenario<R> {
    pub prompt: String,
    pub script: Vec<R>,
    pub subagent_script: Vec<R>,
    /// Flags for the agent CLI besides the prompt and its output format, e.g. the permission mode.
    pub flags: Vec<String>,
}

impl<R> Scenario<R> {
    pub fn new(prompt: &str, script: Vec<R>, flags: &[&str]) -> Self {
        Scenario {
            prompt: prompt.to_owned(),
            script,
            subagent_script: Vec::new(),
            flags: flags.iter().map(|f| (*f).to_owned()).collect(),
        }
    }

    pub fn with_subagent(mut self, subagent_script: Vec<R>) -> Self {
        self.subagent_script = subagent_script;
        self
    }
}

/// The `README.md` the canonical scenarios expect in the work dir: they read it, and edit it by
/// replacing [`README_LAST_LINE`] with [`README_NEW_LINE`].
pub const README: &str = "# Demo project\n\nThis is a demo repository used by runbook's tests.\nIt has a few lines, and nothing else.\n";
pub const README_LAST_LINE: &str = "It has a few lines, and nothing else.";
pub const README_NEW_LINE: &str = "It has a few lines, and one the agent added.";

/// [`README`] after the scenarios' edit.
pub fn edited_readme() -> String {
    README.replace(README_LAST_LINE, README_NEW_LINE)
}

/// Writes [`README`] into `work`.
pub fn write_readme(work: &Path) -> std::io::Result<()> {
    std::fs::write(work.join("README.md"), README)
}

/// `path` as a string (the scenarios' tool inputs hold absolute paths).
pub fn path_str(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// The prompts, commands and texts of the canonical scenarios, the same for every agent CLI.
pub mod canon {
    /// The prompt of the text scenario.
    pub const TEXT_PROMPT: &str = "Summarize README.md in one sentence.";
    /// Its thinking (Claude) or reasoning summary (Codex).
    pub const TEXT_THINKING: &str = "The user wants a one-sentence summary.";
    /// Its answer.
    pub const TEXT_ANSWER: &str = "The README describes a demo project.";
    pub const READ_EDIT_PROMPT: &str = "Change the last line of README.md.";
    /// The text before the read.
    pub const READ_EDIT_PREAMBLE: &str = "I'll read the README first.";
    pub const READ_EDIT_ANSWER: &str = "Done: I changed the last line of README.md.";
    pub const SHELL_PROMPT: &str = "Run 'echo hello-from-bash && uname -s' and tell me the output.";
    pub const SHELL_COMMAND: &str = "echo hello-from-bash && uname -s";
    pub const SHELL_ANSWER: &str = "The command printed hello-from-bash and the OS name Linux.";
    pub const TOOL_FAIL_PROMPT: &str = "Read missing.txt, then run a command that fails.";
    /// The command that fails (exit 3) after reading the missing `missing.txt`.
    pub const FAILING_COMMAND: &str = "ls missing-dir; exit 3";
    pub const TOOL_FAIL_ANSWER: &str = "Both the read and the command failed, as expected.";
    /// The prompt of the provider error and stall scenarios.
    pub const SHORT_PROMPT: &str = "Summarize README.md.";
    /// The message of the provider error scenario's HTTP 500.
    pub const PROVIDER_ERROR_MESSAGE: &str = "Internal server error (scripted)";
    pub const PERMISSION_PROMPT: &str = "Create a file called created_by_agent.txt.";
    pub const PERMISSION_ANSWER: &str = "I was not allowed to run the tools.";
    pub const SUBAGENT_PROMPT: &str = "Use a subagent to list the files in the workspace.";
    pub const SUBAGENT_PREAMBLE: &str = "I'll delegate this to a subagent.";
    /// The prompt the main agent gives its subagent.
    pub const SUBAGENT_TASK: &str = "List the files in the workspace.";
    /// The subagent's final answer.
    pub const SUBAGENT_REPORT: &str = "Files: README.md (from the subagent).";
    pub const SUBAGENT_ANSWER: &str = "The subagent listed the workspace files.";
    pub const MULTISTEP_PROMPT: &str = "Run the five-step check.";
    /// What the multistep scenario's fourth step writes to `notes.txt`.
    pub const MULTISTEP_NOTES: &str = "written by step 4\n";
    pub const MULTISTEP_ANSWER: &str = "Ran the five steps.";
}

/// The sum of the usage `replies` are served with.
pub fn total_usage<P: Protocol>(replies: &[P::Reply]) -> P::Usage {
    replies
        .iter()
        .filter_map(P::usage)
        .fold(P::Usage::default(), |sum, u| sum + u)
}
