//! A scripted, OpenAI-compatible Chat Completions server for driving the real
//! OpenCode CLI (1.18.x) in integration tests, offline.
//!
//! * Listens on `127.0.0.1`, ephemeral port; never contacts anything else.
//! * Runs on its own thread with its own tokio runtime, so plain synchronous
//!   `#[test]` functions can use it; dropping the [`FakeLlm`] stops it (stalled
//!   connections included) without hanging.
//! * `POST …/chat/completions` only; anything else gets a JSON 404.
//! * Title requests (no `tools`, or model `fake-small`) get an immediate short
//!   answer and do not consume script steps.
//! * Main requests pick their step by conversation position: step index = the
//!   number of `assistant` messages in the request. Retries of the same request
//!   therefore get the same step. Past the end of the script: `Text "done"`.
//! * Subagent requests (OpenCode's `task` tool: another `x-session-id` than
//!   the first main request's, and no `task` tool offered; OpenCode 2's `subagent` tool: `shell`
//!   offered without `subagent`) are answered from
//!   the subagent script (default: empty, i.e. `Text "subagent summary"`),
//!   indexed the same way.
#![allow(dead_code)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::Response;
use hyper::body::Bytes;
use serde_json::{Value, json};

use super::sse::{self, Answer, FakeBody, Received, Server, split_pieces};

/// Model ids used in the generated `opencode.json`.
pub const FAKE_MODEL: &str = "fake-model";
pub const FAKE_SMALL_MODEL: &str = "fake-small";
/// Text of the answer to title requests.
pub const TITLE_TEXT: &str = "Fake session title";
/// Texts of the answers beyond the main and the subagent script.
pub use super::sse::{DONE_TEXT, SUBAGENT_TEXT};
/// The message of a 400 that OpenCode takes as final, as a provider refusing a request says it.
/// OpenCode (1.18) retries any error whose message or body looks transient, whatever its status:
/// a 5xx code in it, "internal server error", "rate limit", "overloaded", "timed out"… A 400
/// saying "Internal server error" was retried five times, 2 to 30 s apart: over a minute.
pub const FINAL_ERROR_MESSAGE: &str =
    "Invalid request: the fake provider refuses this request (scripted)";

/// USD per million tokens, as in `opencode.json`'s model `cost`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prices {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

/// Prices of `fake/fake-model` in the config written by [`write_opencode_config`].
pub const FAKE_MODEL_PRICES: Prices = Prices {
    input: 3.0,
    output: 15.0,
    cache_read: 0.3,
    cache_write: 3.75,
};

impl Prices {
    /// The cost OpenCode reports in `step_finish.part.cost` for a step served
    /// with `usage` (OpenAI usage has no cache-write count, so that is 0):
    /// `((prompt-cached)*input + completion*output + cached*cache_read) / 1e6`.
    pub fn cost_of(&self, usage: &Usage) -> f64 {
        let input = usage.prompt.saturating_sub(usage.cached) as f64;
        (input * self.input
            + usage.completion as f64 * self.output
            + usage.cached as f64 * self.cache_read)
            / 1e6
    }
}

/// Token usage sent in the final usage chunk of a stream.
/// OpenCode reports: input = prompt − cached, cache.read = cached,
/// output = completion − reasoning, reasoning, total = prompt + completion.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt: u64,
    pub completion: u64,
    pub cached: u64,
    pub reasoning: u64,
}

impl Usage {
    pub fn new(prompt: u64, completion: u64) -> Usage {
        Usage::cached(prompt, completion, 0)
    }

    /// `cached` of the `prompt` tokens were read from the cache.
    pub fn cached(prompt: u64, completion: u64, cached: u64) -> Usage {
        Usage {
            prompt,
            completion,
            cached,
            reasoning: 0,
        }
    }
}

/// One tool call of a [`Reply::ToolCalls`] step.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as a JSON string, e.g. `{"filePath":"/abs/README.md"}`.
    pub arguments: String,
}

impl ToolCall {
    pub fn new(id: &str, name: &str, arguments: Value) -> ToolCall {
        ToolCall {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments: arguments.to_string(),
        }
    }
}

/// One scripted answer of the model.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Text, `finish_reason: "stop"`.
    Text { text: String, usage: Usage },
    /// Optional text first, then one or more tool calls, `finish_reason: "tool_calls"`.
    ToolCalls {
        text: Option<String>,
        calls: Vec<ToolCall>,
        usage: Usage,
    },
    /// Text, `finish_reason: "length"` (OpenCode ends the run, exit 0).
    Length { text: String, usage: Usage },
    /// An OpenAI-style JSON error with this status and an `x-request-id` header.
    /// The step is not consumed: OpenCode's retries (408/409/429/5xx) get it again.
    /// 400/401 fail the run at once; retryable statuses carry `retry-after-ms: 100`
    /// so that OpenCode's 5 retries take about a second instead of ~70 s.
    HttpError { status: u16, message: String },
    /// Read the request, never answer (until the server is dropped).
    StallBeforeHeaders,
    /// `200` + SSE headers, then nothing.
    StallAfterHeaders,
    /// `200` + SSE headers, the role chunk and `text` as content chunks, then nothing.
    StallMidStream { text: String },
}

impl Reply {
    pub fn text(text: &str, usage: Usage) -> Reply {
        Reply::Text {
            text: text.to_owned(),
            usage,
        }
    }
    pub fn tool_calls(text: Option<&str>, calls: Vec<ToolCall>, usage: Usage) -> Reply {
        Reply::ToolCalls {
            text: text.map(str::to_owned),
            calls,
            usage,
        }
    }
    pub fn http_error(status: u16, message: &str) -> Reply {
        Reply::HttpError {
            status,
            message: message.to_owned(),
        }
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    /// Lower-case names, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The JSON body (`Value::Null` when empty or not JSON).
    pub body: Value,
    pub is_title: bool,
    /// The `x-session-id` header.
    pub session_id: Option<String>,
    /// When it arrived.
    pub at: std::time::SystemTime,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        sse::header(&self.headers, name)
    }
    /// `body.messages`, or an empty slice.
    pub fn messages(&self) -> &[Value] {
        self.body["messages"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }
    /// Roles of `body.messages`, e.g. `["system","user","assistant","tool"]`.
    pub fn roles(&self) -> Vec<String> {
        self.messages()
            .iter()
            .map(|m| m["role"].as_str().unwrap_or("").to_owned())
            .collect()
    }
    /// Names of the tools offered in `body.tools`.
    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .map(|ts| {
                ts.iter()
                    .map(|t| t["function"]["name"].as_str().unwrap_or("").to_owned())
                    .collect()
            })
            .unwrap_or_default()
    }
    fn is_chat(&self) -> bool {
        self.path.ends_with("/chat/completions")
    }
}

struct State {
    script: Vec<Reply>,
    subagent_script: Vec<Reply>,
    requests: Vec<Recorded>,
    /// `x-session-id` of the first main request: the top-level session.
    primary_session: Option<String>,
    next_id: u64,
    /// Main requests still to be failed with this status before the script is played.
    fail_first: (u32, u16),
}

/// A running fake provider. Dropping it stops the server and closes every
/// connection, stalled ones included.
pub struct FakeLlm {
    state: Arc<Mutex<State>>,
    server: Server,
}

impl FakeLlm {
    /// Starts a server answering main-conversation requests from `script`, in order.
    pub fn start(script: Vec<Reply>) -> FakeLlm {
        FakeLlm::start_with_subagent(script, Vec::new())
    }

    /// Like [`FakeLlm::start`], with a script for subagent sessions too (each
    /// subagent session plays it from its start; beyond it: `Text "subagent summary"`).
    pub fn start_with_subagent(script: Vec<Reply>, subagent_script: Vec<Reply>) -> FakeLlm {
        let state = Arc::new(Mutex::new(State {
            script,
            subagent_script,
            requests: Vec::new(),
            primary_session: None,
            next_id: 1,
            fail_first: (0, 0),
        }));
        let st = state.clone();
        let server = Server::start("fake-llm", move |req| handle(&st, req));
        FakeLlm { state, server }
    }

    /// Fails the first `times` main requests with `status` (a retry of a request gets the
    /// next answer, unlike a scripted [`Reply::HttpError`]), then plays the script.
    pub fn failing_first(self, times: u32, status: u16) -> FakeLlm {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .fail_first = (times, status);
        self
    }

    pub fn port(&self) -> u16 {
        self.server.port()
    }

    /// `http://127.0.0.1:PORT/v1`, the provider's `baseURL`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.server.port())
    }

    /// Every request received so far, in arrival order (recorded as soon as its
    /// body has been read, before it is answered).
    pub fn requests(&self) -> Vec<Recorded> {
        self.lock().requests.clone()
    }

    /// Only the chat requests that are not title requests (main and subagent).
    pub fn main_requests(&self) -> Vec<Recorded> {
        self.lock()
            .requests
            .iter()
            .filter(|r| r.is_chat() && !r.is_title)
            .cloned()
            .collect()
    }

    /// Waits until at least `n` main requests arrived; false on timeout.
    pub fn wait_for_main_requests(&self, n: usize, timeout: Duration) -> bool {
        sse::wait_until(timeout, || self.main_requests().len() >= n)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What to do for one request, decided under the lock.
enum Plan {
    Title { stream: bool },
    Reply(Reply),
    NotFound,
}

fn handle(state: &Mutex<State>, req: Received) -> Answer {
    let Received {
        method,
        path,
        headers,
        body,
        ..
    } = req;
    let is_post = method == "POST";
    let session_id = sse::header(&headers, "x-session-id").map(str::to_owned);
    let is_chat = is_post && path.ends_with("/chat/completions");
    let model = body["model"].as_str().unwrap_or("").to_owned();
    let has_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    let offers = |name: &str| {
        body["tools"]
            .as_array()
            .is_some_and(|ts| ts.iter().any(|t| t["function"]["name"] == name))
    };
    let offers_task = offers("task");
    // OpenCode 2 sends its subagents' requests with the top-level session's `x-session-id`;
    // they are told apart by their tools: its `shell`, without its `subagent`.
    let v2_subagent = offers("shell") && !offers("subagent");
    let is_title = is_chat && (!has_tools || model == FAKE_SMALL_MODEL);
    let stream = body["stream"].as_bool().unwrap_or(false);
    let assistants = body["messages"]
        .as_array()
        .map(|ms| ms.iter().filter(|m| m["role"] == "assistant").count())
        .unwrap_or(0);

    let (plan, id) = {
        let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
        let id = st.next_id;
        st.next_id += 1;
        let plan = if !is_chat {
            Plan::NotFound
        } else if is_title {
            Plan::Title { stream }
        } else {
            if st.primary_session.is_none() {
                st.primary_session = session_id.clone().or_else(|| Some(String::new()));
            }
            // A subagent: another session than the first main request's, and
            // no `task` tool offered (OpenCode's subagents get 8 tools, no
            // `task`/`todowrite`). Another top-level run against the same
            // server (new session, with `task`) plays the main script again.
            let primary = !v2_subagent
                && (session_id.is_none()
                    || st.primary_session.as_deref() == session_id.as_deref()
                    || offers_task);
            let reply = if primary && st.fail_first.0 > 0 {
                st.fail_first.0 -= 1;
                Reply::http_error(st.fail_first.1, "the fake provider failed this request")
            } else if primary {
                st.script
                    .get(assistants)
                    .cloned()
                    .unwrap_or_else(|| Reply::text(DONE_TEXT, Usage::new(100, 1)))
            } else {
                st.subagent_script
                    .get(assistants)
                    .cloned()
                    .unwrap_or_else(|| Reply::text(SUBAGENT_TEXT, Usage::new(100, 3)))
            };
            Plan::Reply(reply)
        };
        st.requests.push(Recorded {
            path: path.clone(),
            headers,
            body,
            is_title,
            session_id,
            at: std::time::SystemTime::now(),
        });
        (plan, id)
    };

    let model = if model.is_empty() {
        FAKE_MODEL.to_owned()
    } else {
        model
    };
    let resp = match plan {
        Plan::NotFound => json_response(
            404,
            id,
            &json!({"error": {"message": format!("fake_llm: no route for {path}"), "type": "invalid_request_error", "code": "not_found"}}),
        ),
        Plan::Title { stream: true } => {
            sse_response(id, &model, &Reply::text(TITLE_TEXT, Usage::new(50, 4)))
        }
        Plan::Title { stream: false } => {
            completion_response(id, &model, &Reply::text(TITLE_TEXT, Usage::new(50, 4)))
        }
        Plan::Reply(Reply::HttpError { status, message }) => error_response(id, status, &message),
        Plan::Reply(Reply::StallBeforeHeaders) => return Answer::Stall,
        Plan::Reply(r) if stream => sse_response(id, &model, &r),
        Plan::Reply(r) => match r {
            Reply::StallAfterHeaders | Reply::StallMidStream { .. } => {
                // Non-streaming request: nothing sensible to send half of.
                return Answer::Stall;
            }
            r => completion_response(id, &model, &r),
        },
    };
    Answer::Respond(resp)
}

// ---------------------------------------------------------------------------
// Responses

/// The headers of every answer to request number `id`.
fn ids(id: u64) -> [(&'static str, String); 2] {
    [
        ("x-request-id", format!("req_fake_{id:04}")),
        ("server", "fake-llm".to_owned()),
    ]
}

fn json_response(status: u16, id: u64, v: &Value) -> Response<FakeBody> {
    sse::json_response(status, &ids(id), v)
}

/// An OpenAI-style JSON error answering request number `id`, with an `x-request-id` header;
/// retryable statuses (408, 409, 429, 5xx) carry `retry-after-ms: 100`.
pub fn error_response(id: u64, status: u16, message: &str) -> Response<FakeBody> {
    let (kind, code) = match status {
        401 => ("authentication_error", "invalid_api_key"),
        429 => ("rate_limit_error", "rate_limit_exceeded"),
        s if s >= 500 => ("server_error", "internal_error"),
        _ => ("invalid_request_error", "bad_request"),
    };
    let body = json!({"error": {"message": message, "type": kind, "code": code}});
    let mut headers = ids(id).to_vec();
    if matches!(status, 408 | 409 | 429) || status >= 500 {
        headers.push(("retry-after-ms", "100".to_owned()));
    }
    sse::json_response(status, &headers, &body)
}

fn chunk_json(id: u64, model: &str, choices: Value, usage: Option<Value>) -> Bytes {
    let mut v = json!({
        "id": format!("chatcmpl-fake-{id:03}"),
        "object": "chat.completion.chunk",
        "created": 1_700_000_000u64,
        "model": model,
        "choices": choices,
    });
    if let Some(u) = usage {
        v["usage"] = u;
    }
    sse::sse_event(None, &v)
}

fn delta(id: u64, model: &str, delta: Value, finish: Option<&str>) -> Bytes {
    chunk_json(
        id,
        model,
        json!([{"index": 0, "delta": delta, "finish_reason": finish}]),
        None,
    )
}

fn usage_json(u: &Usage) -> Value {
    json!({
        "prompt_tokens": u.prompt,
        "completion_tokens": u.completion,
        "total_tokens": u.prompt + u.completion,
        "prompt_tokens_details": {"cached_tokens": u.cached},
        "completion_tokens_details": {"reasoning_tokens": u.reasoning},
    })
}

/// The SSE events of a reply. `None` at the end means: then hold the stream open.
fn sse_events(id: u64, model: &str, reply: &Reply) -> (Vec<Bytes>, bool) {
    let mut ev = vec![delta(
        id,
        model,
        json!({"role": "assistant", "content": ""}),
        None,
    )];
    let text_chunks = |ev: &mut Vec<Bytes>, text: &str| {
        for piece in split_pieces(text, 3) {
            ev.push(delta(id, model, json!({"content": piece}), None));
        }
    };
    let (finish, usage) = match reply {
        Reply::Text { text, usage } => {
            text_chunks(&mut ev, text);
            ("stop", usage)
        }
        Reply::Length { text, usage } => {
            text_chunks(&mut ev, text);
            ("length", usage)
        }
        Reply::ToolCalls { text, calls, usage } => {
            if let Some(t) = text {
                text_chunks(&mut ev, t);
            }
            for (i, c) in calls.iter().enumerate() {
                ev.push(delta(
                    id,
                    model,
                    json!({"tool_calls": [{"index": i, "id": c.id, "type": "function",
                        "function": {"name": c.name, "arguments": ""}}]}),
                    None,
                ));
                for piece in split_pieces(&c.arguments, 2) {
                    ev.push(delta(
                        id,
                        model,
                        json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                        None,
                    ));
                }
            }
            ("tool_calls", usage)
        }
        Reply::StallAfterHeaders => return (Vec::new(), true),
        Reply::StallMidStream { text } => {
            text_chunks(&mut ev, text);
            return (ev, true);
        }
        Reply::HttpError { .. } | Reply::StallBeforeHeaders => {
            unreachable!("handled before streaming")
        }
    };
    ev.push(delta(id, model, json!({}), Some(finish)));
    ev.push(chunk_json(id, model, json!([]), Some(usage_json(usage))));
    ev.push(Bytes::from_static(b"data: [DONE]\n\n"));
    (ev, false)
}

fn sse_response(id: u64, model: &str, reply: &Reply) -> Response<FakeBody> {
    let (events, hold) = sse_events(id, model, reply);
    sse::sse_response(&ids(id), events, hold)
}

/// Non-streaming answer (`stream` not true); OpenCode does not use it, but
/// other clients might.
fn completion_response(id: u64, model: &str, reply: &Reply) -> Response<FakeBody> {
    let (message, finish, usage) = match reply {
        Reply::Text { text, usage } => {
            (json!({"role": "assistant", "content": text}), "stop", usage)
        }
        Reply::Length { text, usage } => (
            json!({"role": "assistant", "content": text}),
            "length",
            usage,
        ),
        Reply::ToolCalls { text, calls, usage } => {
            let calls: Vec<Value> = calls
                .iter()
                .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                .collect();
            (
                json!({"role": "assistant", "content": text, "tool_calls": calls}),
                "tool_calls",
                usage,
            )
        }
        _ => unreachable!("handled before"),
    };
    json_response(
        200,
        id,
        &json!({
            "id": format!("chatcmpl-fake-{id:03}"),
            "object": "chat.completion",
            "created": 1_700_000_000u64,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage_json(usage),
        }),
    )
}

// ---------------------------------------------------------------------------
// OpenCode configuration and environment

/// Options for [`write_opencode_config`].
#[derive(Debug, Clone, Default)]
pub struct OpencodeConfig {
    /// `provider.fake.options.headerTimeout` (ms; OpenCode's default is 300000).
    pub header_timeout_ms: Option<u64>,
    /// `provider.fake.options.chunkTimeout` (ms; OpenCode's default is 300000).
    pub chunk_timeout_ms: Option<u64>,
    /// Deep-merged into the config last (objects merge, anything else replaces),
    /// e.g. `{"permission":{"bash":"ask"}}`.
    pub overlay: Option<Value>,
    /// OpenCode's own undo snapshots, on by its default: at every step it adds the work dir to
    /// a git repository under its data dir, and puts the tree's hash on its `step_start` and
    /// `step_finish` lines. Off unless asked (`"snapshot": false`): that spares about 2 of the
    /// 8 CPU-seconds a run of a few steps costs on a two-core machine, and runbook reads
    /// nothing of them. The drift check and the runs the README shows keep them, as users have.
    pub snapshot: bool,
}

/// The `opencode.json` value [`write_opencode_config`] writes.
pub fn opencode_config(base_url: &str, opts: &OpencodeConfig) -> Value {
    let p = FAKE_MODEL_PRICES;
    let mut options = json!({"baseURL": base_url, "apiKey": "sk-fake-key"});
    if let Some(ms) = opts.header_timeout_ms {
        options["headerTimeout"] = json!(ms);
    }
    if let Some(ms) = opts.chunk_timeout_ms {
        options["chunkTimeout"] = json!(ms);
    }
    let mut config = json!({
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": false,
        "share": "disabled",
        "snapshot": opts.snapshot,
        "model": format!("fake/{FAKE_MODEL}"),
        "small_model": format!("fake/{FAKE_SMALL_MODEL}"),
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Fake LLM",
            "options": options,
            "models": {
                FAKE_MODEL: {
                    "name": "Fake Model", "tool_call": true, "reasoning": false, "temperature": true,
                    "cost": {"input": p.input, "output": p.output, "cache_read": p.cache_read, "cache_write": p.cache_write},
                    "limit": {"context": 200000, "output": 32000}
                },
                FAKE_SMALL_MODEL: {
                    "name": "Fake Small", "tool_call": false,
                    "cost": {"input": 0.1, "output": 0.2},
                    "limit": {"context": 32000, "output": 4096}
                }
            }
        }}
    });
    if let Some(overlay) = &opts.overlay {
        deep_merge(&mut config, overlay.clone());
    }
    config
}

/// Writes `dir/opencode.json` pointing provider `fake` at `base_url`
/// (models `fake/fake-model`, priced as [`FAKE_MODEL_PRICES`], and
/// `fake/fake-small` for titles). OpenCode reads it from its working directory.
pub fn write_opencode_config(
    dir: &Path,
    base_url: &str,
    opts: &OpencodeConfig,
) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(&opencode_config(base_url, opts))
        .map_err(std::io::Error::other)?;
    std::fs::write(dir.join("opencode.json"), text + "\n")
}

fn deep_merge(base: &mut Value, overlay: Value) {
    match (base, overlay) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot) => deep_merge(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

/// The environment OpenCode must run with, besides `PATH` (which must hold
/// `git` and `rg`): `HOME` and the XDG dirs under `home`, `LANG`, and the
/// `OPENCODE_DISABLE_*` switches that keep it offline. Use with `env_clear()`.
pub fn opencode_env(home: &Path) -> Vec<(String, String)> {
    let h = |sub: &str| home.join(sub).to_string_lossy().into_owned();
    let mut env = vec![
        ("HOME".to_owned(), home.to_string_lossy().into_owned()),
        ("XDG_CONFIG_HOME".to_owned(), h(".config")),
        ("XDG_DATA_HOME".to_owned(), h(".local/share")),
        ("XDG_CACHE_HOME".to_owned(), h(".cache")),
        ("XDG_STATE_HOME".to_owned(), h(".local/state")),
        ("LANG".to_owned(), "C.UTF-8".to_owned()),
    ];
    for var in [
        "OPENCODE_DISABLE_MODELS_FETCH",
        "OPENCODE_DISABLE_AUTOUPDATE",
        "OPENCODE_DISABLE_SHARE",
        "OPENCODE_DISABLE_LSP_DOWNLOAD",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS",
        "OPENCODE_DISABLE_CLAUDE_CODE",
    ] {
        env.push((var.to_owned(), "1".to_owned()));
    }
    env
}

/// The canonical scenarios (see [`super::sse::canon`]) as OpenCode's provider serves them.
/// OpenCode's flags (model, permissions) are the test's, so the scenarios carry none.
pub mod scenario {
    use super::*;
    use crate::support::sse::{README_LAST_LINE, README_NEW_LINE, Scenario, canon, path_str};

    fn file(work: &Path, name: &str) -> String {
        path_str(&work.join(name))
    }

    fn call(id: &str, name: &str, args: Value) -> ToolCall {
        ToolCall::new(id, name, args)
    }

    fn bash(id: &str, command: &str) -> ToolCall {
        call(
            id,
            "bash",
            json!({"command": command, "description": "Run it"}),
        )
    }

    /// A step of one tool call, with the usage it is served with.
    fn step(call: ToolCall, usage: Usage) -> Reply {
        Reply::tool_calls(None, vec![call], usage)
    }

    /// The answer, in one step.
    pub fn text(_work: &Path) -> Scenario<Reply> {
        let script = vec![Reply::text(canon::TEXT_ANSWER, Usage::new(1200, 18))];
        Scenario::new(canon::TEXT_PROMPT, script, &[])
    }

    /// A `read` of README.md after a preamble, an `edit` of its last line, the answer.
    pub fn read_edit(work: &Path) -> Scenario<Reply> {
        let readme = file(work, "README.md");
        let edit = json!({"filePath": readme, "oldString": README_LAST_LINE, "newString": README_NEW_LINE});
        let script = vec![
            Reply::tool_calls(
                Some(canon::READ_EDIT_PREAMBLE),
                vec![call("call_read", "read", json!({"filePath": readme}))],
                Usage::new(1500, 40),
            ),
            step(call("call_edit", "edit", edit), Usage::new(1700, 60)),
            Reply::text(canon::READ_EDIT_ANSWER, Usage::new(1900, 20)),
        ];
        Scenario::new(canon::READ_EDIT_PROMPT, script, &[])
    }

    /// `bash` [`canon::SHELL_COMMAND`], the answer.
    pub fn shell(_work: &Path) -> Scenario<Reply> {
        let script = vec![
            step(bash("call_sh", canon::SHELL_COMMAND), Usage::new(1400, 30)),
            Reply::text(canon::SHELL_ANSWER, Usage::new(1600, 25)),
        ];
        Scenario::new(canon::SHELL_PROMPT, script, &[])
    }

    /// A `read` of a missing file, a failing `bash`, the answer.
    pub fn tool_fail(work: &Path) -> Scenario<Reply> {
        let missing = json!({"filePath": file(work, "missing.txt")});
        let script = vec![
            step(call("call_missing", "read", missing), Usage::new(1400, 30)),
            step(
                bash("call_fail", canon::FAILING_COMMAND),
                Usage::new(1500, 30),
            ),
            Reply::text(canon::TOOL_FAIL_ANSWER, Usage::new(1600, 20)),
        ];
        Scenario::new(canon::TOOL_FAIL_PROMPT, script, &[])
    }

    /// A 400, which is not retried: the run fails at once. Its message is
    /// [`FINAL_ERROR_MESSAGE`], not the other fakes' `canon::PROVIDER_ERROR_MESSAGE` (a 500's).
    pub fn provider_error(_work: &Path) -> Scenario<Reply> {
        let script = vec![Reply::http_error(400, super::FINAL_ERROR_MESSAGE)];
        Scenario::new(canon::SHORT_PROMPT, script, &[])
    }

    /// A `bash` call that needs a permission (the test's config asks for it).
    pub fn permission_denied(_work: &Path) -> Scenario<Reply> {
        let touch = bash("call_touch", "touch created_by_agent.txt");
        let script = vec![step(touch, Usage::new(1300, 30))];
        Scenario::new(canon::PERMISSION_PROMPT, script, &[])
    }

    /// A `task` for a subagent after a preamble, the answer; the subagent reports in one step.
    pub fn subagent(_work: &Path) -> Scenario<Reply> {
        let task = json!({"description": "List workspace files", "prompt": canon::SUBAGENT_TASK, "subagent_type": "general"});
        let script = vec![
            Reply::tool_calls(
                Some(canon::SUBAGENT_PREAMBLE),
                vec![call("call_task", "task", task)],
                Usage::new(1700, 50),
            ),
            Reply::text(canon::SUBAGENT_ANSWER, Usage::new(1900, 30)),
        ];
        let report = vec![Reply::text(canon::SUBAGENT_REPORT, Usage::new(900, 12))];
        Scenario::new(canon::SUBAGENT_PROMPT, script, &[]).with_subagent(report)
    }

    /// Five tool calls, one per step, each served with its own usage, then the answer.
    pub fn multistep(work: &Path) -> Scenario<Reply> {
        let notes = json!({"filePath": file(work, "notes.txt"), "content": canon::MULTISTEP_NOTES});
        let calls = [
            bash("call_m1", "echo step-1"),
            call(
                "call_m2",
                "read",
                json!({"filePath": file(work, "README.md")}),
            ),
            bash("call_m3", "wc -l README.md"),
            call("call_m4", "write", notes),
            bash("call_m5", "cat notes.txt"),
        ];
        let mut script: Vec<Reply> = (0..)
            .zip(calls)
            .map(|(i, c)| step(c, Usage::cached(2000 + 100 * i, 31 + i, 1000 + 200 * i)))
            .collect();
        script.push(Reply::text(
            canon::MULTISTEP_ANSWER,
            Usage::cached(2600, 37, 2200),
        ));
        Scenario::new(canon::MULTISTEP_PROMPT, script, &[])
    }

    /// The first model request is never answered.
    pub fn stall(_work: &Path) -> Scenario<Reply> {
        Scenario::new(canon::SHORT_PROMPT, vec![Reply::StallBeforeHeaders], &[])
    }
}

/// The real OpenCode set up in `ctx` to use the fake provider at `base_url`: its environment
/// ([`opencode_env`]) and `opencode.json` in the work dir.
pub fn opencode_against(ctx: &mut super::TestContext, base_url: &str, config: &OpencodeConfig) {
    for (k, v) in opencode_env(&ctx.home) {
        ctx.env(&k, v);
    }
    opencode_config_dir(&ctx.home).expect("OpenCode's config dir");
    write_opencode_config(&ctx.work, base_url, config).expect("write opencode.json");
}

/// OpenCode's config dir under `home` as a user's second run finds it: with the
/// `@opencode-ai/plugin` dependency OpenCode installs there at its first start, linked from the
/// one `.ci/install-agents` put in `.agents/opencode-config`. Without it, every run in a fresh
/// home starts that install again in the background (64 MB from the npm registry), which keeps
/// a core busy for as long as the run lasts and reaches the network. Missing is a failure.
fn opencode_config_dir(home: &Path) -> std::io::Result<()> {
    let installed = Path::new(env!("CARGO_MANIFEST_DIR")).join(".agents/opencode-config");
    assert!(
        installed.join("package-lock.json").is_file(),
        "{} is missing: run .ci/install-agents",
        installed.display()
    );
    let dir = home.join(".config/opencode");
    std::fs::create_dir_all(&dir)?;
    for file in ["package.json", "package-lock.json"] {
        std::fs::copy(installed.join(file), dir.join(file))?;
    }
    std::os::unix::fs::symlink(installed.join("node_modules"), dir.join("node_modules"))
}

/// The real OpenCode's environment in `ctx`, the demo README.md in its work dir, and the fake
/// provider playing the replies `script` makes from the call that edits README.md's last line.
pub fn opencode_editing_readme(
    ctx: &mut super::TestContext,
    script: impl FnOnce(ToolCall) -> Vec<Reply>,
) -> FakeLlm {
    sse::write_readme(&ctx.work).expect("README.md");
    let readme = sse::path_str(&ctx.work.join("README.md"));
    let edit = ToolCall::new(
        "call_edit",
        "edit",
        json!({"filePath": readme, "oldString": sse::README_LAST_LINE, "newString": sse::README_NEW_LINE}),
    );
    let llm = FakeLlm::start(script(edit));
    opencode_against(ctx, &llm.base_url(), &OpencodeConfig::default());
    llm
}

/// What the agent says once it has edited README.md.
pub const DONE_EDITING: &str = "Done: README.md has its new last line.";

/// `runbook run` of the real OpenCode `bin` on the fake model, with `flags`, asked to change
/// README.md's last line.
pub fn opencode_run_args<'a>(bin: &'a Path, flags: &[&'a str]) -> Vec<&'a str> {
    let bin = bin.to_str().expect("a UTF-8 path");
    let mut args = vec!["run", "--agent-bin", bin, "-m", "fake/fake-model"];
    args.extend_from_slice(flags);
    args.push("Change the last line of README.md.");
    args
}
