//! The HTTP side shared by the scripted fake providers: a server on `127.0.0.1` with its own
//! thread and tokio runtime, and JSON and SSE response bodies.
//!
//! [`Server`] listens on an ephemeral port, reads each request whole and hands it to a
//! synchronous handler; dropping it stops the server and closes every connection, stalled ones
//! included, without hanging.
#![allow(dead_code)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
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
