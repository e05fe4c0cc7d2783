//! A scripted OpenAI Responses API server for driving the real Codex CLI (0.169.x) in
//! integration tests, offline.
//!
//! * Listens on `127.0.0.1`, ephemeral port, on its own thread (see [`super::sse`]); dropping
//!   the [`FakeResponses`] stops it, stalled connections included.
//! * `POST …/responses` is a model request; anything else gets an OpenAI-style `404`.
//! * Model requests pick their step by conversation position: step index = the number of call
//!   items (`function_call`, `custom_tool_call`, …) in `input` (Codex resends the whole history)
//!   plus the number of answers a later prompt follows (the turns before, in a resumed session),
//!   so retries of a request get the same step. Past the end of the script: `Text "done"`.
//! * Subagent requests (`thread-id` ≠ `session-id`, or `thread_source: "subagent"` in
//!   `x-codex-turn-metadata`) are answered from the subagent script (default: empty, i.e.
//!   `Text "subagent summary"`), indexed the same way.
//! * Answers stream `response.created`, `response.in_progress`, each output item (added,
//!   deltas, done) and `response.completed` with usage (Codex treats a stream without it as
//!   broken), all with `event:` lines and `sequence_number`s.
#![allow(dead_code)]

use std::path::Path;

use hyper::body::Bytes;
use serde_json::{Value, json};

use super::fake_llm;
use super::sse::{
    self, Answer, Fake, Protocol, README_LAST_LINE, README_NEW_LINE, Received, Scenario, Turn,
    canon, path_str, split_pieces,
};

/// The API key Codex reads from [`API_KEY_VAR`] (sent as `Authorization: Bearer …`).
pub const API_KEY: &str = "sk-fake-openai-key";
pub const API_KEY_VAR: &str = "FAKE_OPENAI_API_KEY";
/// The model of [`CodexConfig::default`]: a slug Codex knows, with `apply_patch`.
pub const MODEL: &str = "gpt-5.5";
/// The model whose tools include the `multi_agent_v1` namespace (`spawn_agent`, `wait_agent`).
pub const SUBAGENT_MODEL: &str = "gpt-5.4";
/// The namespace of Codex's subagent tools.
pub const MULTI_AGENT: &str = "multi_agent_v1";
/// In a function call's arguments, replaced by the id of the agent the conversation's last
/// `spawn_agent` call started (read from that call's output in the request).
pub const SPAWNED_AGENT: &str = "{spawned_agent}";

/// Token usage of one model call, sent in `response.completed`. Codex's `turn.completed`
/// reports the sum over the main conversation's calls: `input_tokens` (cached included),
/// `cached_input_tokens`, `output_tokens`, `reasoning_output_tokens`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub input: u64,
    pub cached: u64,
    pub output: u64,
    pub reasoning: u64,
}

impl Usage {
    pub fn new(input: u64, output: u64) -> Usage {
        Usage {
            input,
            output,
            ..Usage::default()
        }
    }

    pub fn cached(input: u64, cached: u64, output: u64) -> Usage {
        Usage {
            input,
            cached,
            output,
            reasoning: 0,
        }
    }

    fn json(&self) -> Value {
        json!({
            "input_tokens": self.input,
            "input_tokens_details": {"cached_tokens": self.cached},
            "output_tokens": self.output,
            "output_tokens_details": {"reasoning_tokens": self.reasoning},
            "total_tokens": self.input + self.output,
        })
    }
}

impl std::ops::Add for Usage {
    type Output = Usage;
    fn add(self, o: Usage) -> Usage {
        Usage {
            input: self.input + o.input,
            cached: self.cached + o.cached,
            output: self.output + o.output,
            reasoning: self.reasoning + o.reasoning,
        }
    }
}

/// One output item of a scripted response.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// An assistant message (`output_text` deltas).
    Message(String),
    /// A reasoning item with this summary text.
    Reasoning(String),
    /// A function tool call; `arguments` is a JSON string, streamed in pieces.
    FunctionCall {
        call_id: String,
        name: String,
        arguments: String,
        namespace: Option<String>,
    },
    /// A freeform tool call (`apply_patch`): raw `input` text, streamed in pieces.
    CustomToolCall {
        call_id: String,
        name: String,
        input: String,
    },
}

impl Item {
    pub fn message(text: &str) -> Item {
        Item::Message(text.to_owned())
    }
    pub fn reasoning(summary: &str) -> Item {
        Item::Reasoning(summary.to_owned())
    }
    pub fn function_call(call_id: &str, name: &str, arguments: Value) -> Item {
        Item::FunctionCall {
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            arguments: arguments.to_string(),
            namespace: None,
        }
    }
    /// `exec_command` with `{"cmd": cmd}`.
    pub fn exec(call_id: &str, cmd: &str) -> Item {
        Item::function_call(call_id, "exec_command", json!({ "cmd": cmd }))
    }
    /// A call of tool `name` in [`MULTI_AGENT`] (`spawn_agent`, `wait_agent`, …).
    pub fn multi_agent(call_id: &str, name: &str, arguments: Value) -> Item {
        Item::FunctionCall {
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            arguments: arguments.to_string(),
            namespace: Some(MULTI_AGENT.to_owned()),
        }
    }
    /// `apply_patch` with this raw patch text.
    pub fn apply_patch(call_id: &str, patch: &str) -> Item {
        Item::CustomToolCall {
            call_id: call_id.to_owned(),
            name: "apply_patch".to_owned(),
            input: patch.to_owned(),
        }
    }
}

/// One scripted answer of the model.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A completed response with these output items.
    Output { items: Vec<Item>, usage: Usage },
    /// `200`, `response.created`, `response.in_progress`, then `response.failed` with this
    /// error code and message.
    Failed { code: String, message: String },
    /// An OpenAI-style JSON error with this status and an `x-request-id` header (see
    /// [`fake_llm::error_response`]). The step is not consumed: Codex's retries get it again.
    HttpError { status: u16, message: String },
    /// Read the request, never answer (until the server is dropped).
    StallBeforeHeaders,
    /// `200` + SSE headers, then nothing.
    StallAfterHeaders,
}

impl Reply {
    pub fn output(items: Vec<Item>, usage: Usage) -> Reply {
        Reply::Output { items, usage }
    }
    pub fn text(text: &str, usage: Usage) -> Reply {
        Reply::output(vec![Item::message(text)], usage)
    }
    pub fn http_error(status: u16, message: &str) -> Reply {
        let message = message.to_owned();
        Reply::HttpError { status, message }
    }
    pub fn failed(code: &str, message: &str) -> Reply {
        Reply::Failed {
            code: code.to_owned(),
            message: message.to_owned(),
        }
    }
}

/// The sum of the usage `replies` are served with: what Codex reports in `turn.completed` when
/// they are the main conversation's calls.
pub fn total_usage(replies: &[Reply]) -> Usage {
    sse::total_usage::<Responses>(replies)
}

/// The Responses API, as Codex speaks it.
pub struct Responses;

/// A running fake Responses provider.
pub type FakeResponses = Fake<Responses>;

impl Fake<Responses> {
    /// `http://127.0.0.1:PORT/v1`, the provider's `base_url` (Codex posts to `…/responses`).
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port())
    }
}

impl Protocol for Responses {
    type Reply = Reply;
    type Usage = Usage;
    const NAME: &'static str = "fake-responses";

    fn turn(req: &Received) -> Option<Turn> {
        if req.method != "POST" || !req.path.ends_with("/responses") {
            return None;
        }
        let items = input(req);
        let calls = items
            .iter()
            .filter(|i| i["type"].as_str().is_some_and(|t| t.ends_with("_call")))
            .count();
        // A resumed session's history holds the turns before: each ended on an answer of the
        // model's that the next prompt follows, a step of its own.
        let answered = items
            .windows(2)
            .filter(|w| w[0]["role"] == "assistant" && w[1]["role"] == "user")
            .count();
        let step = calls + answered;
        let from_subagent = req
            .header("x-codex-turn-metadata")
            .and_then(|m| serde_json::from_str::<Value>(m).ok())
            .is_some_and(|m| m["thread_source"] == "subagent");
        let other_thread = matches!(
            (req.header("thread-id"), req.header("session-id")),
            (Some(thread), Some(session)) if thread != session
        );
        Some(Turn {
            subagent: from_subagent || other_thread,
            step,
        })
    }

    fn text(text: &str, input: u64, output: u64) -> Reply {
        Reply::output(vec![Item::message(text)], Usage::new(input, output))
    }

    fn usage(reply: &Reply) -> Option<Usage> {
        match reply {
            Reply::Output { usage, .. } => Some(*usage),
            _ => None,
        }
    }

    fn answer(req: &Received, reply: Option<Reply>, id: u64) -> Answer {
        let Some(reply) = reply else {
            return Answer::Respond(fake_llm::error_response(
                id,
                404,
                &format!("fake_responses: no route for {} {}", req.method, req.path),
            ));
        };
        let headers = [("x-request-id", format!("req_fake_{id:04}"))];
        let model = req.body["model"].as_str().unwrap_or(MODEL);
        let mut stream = Stream::new(id, model);
        Answer::Respond(match reply {
            Reply::HttpError { status, message } => fake_llm::error_response(id, status, &message),
            Reply::StallBeforeHeaders => return Answer::Stall,
            Reply::StallAfterHeaders => sse::sse_response(&headers, Vec::new(), true),
            Reply::Failed { code, message } => {
                stream.fail(&code, &message);
                sse::sse_response(&headers, stream.events, false)
            }
            Reply::Output { items, usage } => {
                let spawned = spawned_agent(req);
                for item in &items {
                    stream.item(item, spawned.as_deref());
                }
                stream.complete(&usage);
                sse::sse_response(&headers, stream.events, false)
            }
        })
    }
}

/// The request's `input` items.
fn input(req: &Received) -> &[Value] {
    req.body["input"].as_array().map_or(&[], Vec::as_slice)
}

/// The id of the agent started by the last `spawn_agent` call in the request's history.
fn spawned_agent(req: &Received) -> Option<String> {
    let items = input(req);
    let call_id = items
        .iter()
        .rev()
        .find(|i| i["type"] == "function_call" && i["name"] == "spawn_agent")?["call_id"]
        .as_str()?;
    let output = items
        .iter()
        .find(|i| i["type"] == "function_call_output" && i["call_id"] == call_id)?;
    let text = output["output"].as_str()?;
    let v: Value = serde_json::from_str(text).ok()?;
    v["agent_id"].as_str().map(str::to_owned)
}

/// The SSE events of one response, numbered as they are added.
struct Stream {
    /// The number of the request answered.
    id: u64,
    model: String,
    events: Vec<Bytes>,
    done_items: Vec<Value>,
}

impl Stream {
    fn new(id: u64, model: &str) -> Stream {
        let mut s = Stream {
            id,
            model: model.to_owned(),
            events: Vec::new(),
            done_items: Vec::new(),
        };
        let created = s.response("in_progress");
        s.push(json!({"type": "response.created", "response": created}));
        s.push(json!({"type": "response.in_progress", "response": created}));
        s
    }

    fn response(&self, status: &str) -> Value {
        json!({
            "id": format!("resp_fake_{:04}", self.id),
            "object": "response",
            "created_at": 1_700_000_000u64,
            "model": self.model,
            "status": status,
            "output": [],
            "usage": null,
        })
    }

    fn push(&mut self, mut data: Value) {
        data["sequence_number"] = json!(self.events.len());
        let name = data["type"].as_str().unwrap_or_default().to_owned();
        self.events.push(sse::sse_event(Some(&name), &data));
    }

    /// `response.output_item.added` for `started`, the `events` (each gets `item_id` and
    /// `output_index`), then `response.output_item.done` for `done`.
    fn emit(&mut self, started: Value, events: Vec<Value>, done: Value) {
        let index = self.done_items.len();
        let item_id = started["id"].clone();
        self.push(
            json!({"type": "response.output_item.added", "output_index": index, "item": started}),
        );
        for mut e in events {
            e["item_id"] = item_id.clone();
            e["output_index"] = json!(index);
            self.push(e);
        }
        self.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": done}),
        );
        self.done_items.push(done);
    }

    fn item(&mut self, item: &Item, spawned: Option<&str>) {
        let n = self.done_items.len();
        let id = |prefix: &str| format!("{prefix}_fake_{:04}_{n}", self.id);
        match item {
            Item::Message(text) => {
                let part = json!({"type": "output_text", "text": text, "annotations": []});
                let mut events = vec![
                    json!({"type": "response.content_part.added", "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}),
                ];
                events.extend(split_pieces(text, 3).into_iter().map(|p| {
                    json!({"type": "response.output_text.delta", "content_index": 0, "delta": p, "logprobs": []})
                }));
                events.push(json!({"type": "response.output_text.done", "content_index": 0, "text": text, "logprobs": []}));
                events.push(
                    json!({"type": "response.content_part.done", "content_index": 0, "part": part}),
                );
                let started = json!({"id": id("msg"), "type": "message", "status": "in_progress", "role": "assistant", "content": []});
                let mut done = started.clone();
                done["status"] = json!("completed");
                done["content"] = json!([part]);
                self.emit(started, events, done);
            }
            Item::Reasoning(summary) => {
                let part = json!({"type": "summary_text", "text": summary});
                let mut events = vec![
                    json!({"type": "response.reasoning_summary_part.added", "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
                ];
                events.extend(split_pieces(summary, 3).into_iter().map(|p| {
                    json!({"type": "response.reasoning_summary_text.delta", "summary_index": 0, "delta": p})
                }));
                events.push(json!({"type": "response.reasoning_summary_text.done", "summary_index": 0, "text": summary}));
                events.push(json!({"type": "response.reasoning_summary_part.done", "summary_index": 0, "part": part}));
                let started = json!({"id": id("rs"), "type": "reasoning", "summary": []});
                let mut done = started.clone();
                done["summary"] = json!([part]);
                self.emit(started, events, done);
            }
            Item::FunctionCall {
                call_id,
                name,
                arguments,
                namespace,
            } => {
                let arguments = match spawned {
                    Some(agent) => arguments.replace(SPAWNED_AGENT, agent),
                    None => arguments.clone(),
                };
                let mut started = json!({"id": id("fc"), "type": "function_call", "status": "in_progress", "call_id": call_id, "name": name, "arguments": ""});
                if let Some(ns) = namespace {
                    started["namespace"] = json!(ns);
                }
                let mut events: Vec<Value> = split_pieces(&arguments, 3)
                    .into_iter()
                    .map(|p| json!({"type": "response.function_call_arguments.delta", "delta": p}))
                    .collect();
                events.push(json!({"type": "response.function_call_arguments.done", "arguments": arguments}));
                let mut done = started.clone();
                done["status"] = json!("completed");
                done["arguments"] = json!(arguments);
                self.emit(started, events, done);
            }
            Item::CustomToolCall {
                call_id,
                name,
                input,
            } => {
                let started = json!({"id": id("ctc"), "type": "custom_tool_call", "status": "in_progress", "call_id": call_id, "name": name, "input": ""});
                let mut events: Vec<Value> = split_pieces(input, 3)
                    .into_iter()
                    .map(|p| json!({"type": "response.custom_tool_call_input.delta", "delta": p}))
                    .collect();
                events
                    .push(json!({"type": "response.custom_tool_call_input.done", "input": input}));
                let mut done = started.clone();
                done["status"] = json!("completed");
                done["input"] = json!(input);
                self.emit(started, events, done);
            }
        }
    }

    fn complete(&mut self, usage: &Usage) {
        let mut response = self.response("completed");
        response["output"] = json!(self.done_items);
        response["usage"] = usage.json();
        self.push(json!({"type": "response.completed", "response": response}));
    }

    fn fail(&mut self, code: &str, message: &str) {
        let mut response = self.response("failed");
        response["error"] = json!({"code": code, "message": message});
        self.push(json!({"type": "response.failed", "response": response}));
    }
}

// ---------------------------------------------------------------------------
// Codex's configuration, environment and command line

/// Options for the `config.toml` a [`CodexHome`] holds.
#[derive(Debug, Clone)]
pub struct CodexConfig {
    /// The default model ([`MODEL`]); `-m` overrides it.
    pub model: String,
    /// Retries of a failed request (Codex's default is 4).
    pub request_max_retries: u32,
    /// Reconnects of a broken stream, each announced as `Reconnecting... n/N` (default 5).
    pub stream_max_retries: u32,
    /// Silence allowed once response headers are in (Codex waits for headers forever).
    pub stream_idle_timeout_ms: u64,
}

impl Default for CodexConfig {
    /// [`MODEL`], one request retry and one stream reconnect (a failing request is sent 4
    /// times in all), the default idle timeout (5 min).
    fn default() -> Self {
        CodexConfig {
            model: MODEL.to_owned(),
            request_max_retries: 1,
            stream_max_retries: 1,
            stream_idle_timeout_ms: 300_000,
        }
    }
}

/// The `config.toml` for provider `fake` at `base_url`.
pub fn codex_config_toml(base_url: &str, config: &CodexConfig) -> String {
    format!(
        r#"model = "{model}"
model_provider = "fake"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.fake]
name = "Fake OpenAI (127.0.0.1)"
base_url = "{base_url}"
env_key = "{API_KEY_VAR}"
wire_api = "responses"
request_max_retries = {request}
stream_max_retries = {stream}
stream_idle_timeout_ms = {idle}
"#,
        model = config.model,
        request = config.request_max_retries,
        stream = config.stream_max_retries,
        idle = config.stream_idle_timeout_ms,
    )
}

/// A `CODEX_HOME` with a `config.toml`, in `/var/tmp` (under `/tmp`, Codex warns on stderr that
/// it will not create its helper binaries there), removed on drop.
pub struct CodexHome {
    dir: tempfile::TempDir,
}

impl CodexHome {
    pub fn new(base_url: &str, config: &CodexConfig) -> std::io::Result<CodexHome> {
        let parent = Path::new("/var/tmp");
        let parent = if parent.is_dir() {
            parent.to_owned()
        } else {
            std::env::temp_dir()
        };
        let dir = tempfile::Builder::new()
            .prefix("runbook-codex-home-")
            .tempdir_in(parent)?;
        std::fs::write(
            dir.path().join("config.toml"),
            codex_config_toml(base_url, config),
        )?;
        Ok(CodexHome { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// The environment Codex must run with, besides `PATH`: `HOME`, `CODEX_HOME` and the API key.
/// Use with `env_clear()`.
pub fn codex_env(home: &Path, codex_home: &CodexHome) -> Vec<(String, String)> {
    [
        ("HOME", path_str(home)),
        ("CODEX_HOME", path_str(codex_home.path())),
        ("TERM", "dumb".to_owned()),
        ("LANG", "C.UTF-8".to_owned()),
        (API_KEY_VAR, API_KEY.to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// `codex`'s arguments for a headless run of `scenario`:
/// `exec --json --skip-git-repo-check FLAGS… PROMPT` (stdin must be `/dev/null`: Codex reads
/// it to its end first).
pub fn codex_args(scenario: &Scenario<Reply>) -> Vec<String> {
    let mut args: Vec<String> = ["exec", "--json", "--skip-git-repo-check"]
        .iter()
        .map(|a| (*a).to_owned())
        .collect();
    args.extend(scenario.flags.iter().cloned());
    args.push(scenario.prompt.clone());
    args
}

/// `codex ARGS` for `scenario` in `work`, with [`codex_env`] (own `home`) and `PATH` only,
/// stdin `/dev/null`.
pub fn codex_command(
    bin: &Path,
    work: &Path,
    home: &Path,
    codex_home: &CodexHome,
    scenario: &Scenario<Reply>,
) -> std::process::Command {
    let env = codex_env(home, codex_home);
    super::agent_command(bin, work, &codex_args(scenario), &env)
}

// ---------------------------------------------------------------------------
// Canonical scenarios

/// The canonical scenarios, each made for a work dir holding [`super::sse::README`]; tool inputs
/// use absolute paths inside it. The comments say what Codex 0.169.0 then does and prints on
/// stdout (`exec --json`); it always starts with `thread.started` and `turn.started`, and
/// stderr always says `Reading additional input from stdin...`.
pub mod scenario {
    use super::*;

    const BYPASS: &[&str] = &["--dangerously-bypass-approvals-and-sandbox"];

    fn file(work: &Path, name: &str) -> String {
        path_str(&work.join(name))
    }

    /// `apply_patch` input replacing README.md's last line.
    fn readme_patch(work: &Path) -> String {
        format!(
            "*** Begin Patch\n*** Update File: {}\n@@\n-{README_LAST_LINE}\n+{README_NEW_LINE}\n*** End Patch\n",
            file(work, "README.md")
        )
    }

    /// One step: a reasoning summary, then a message. Codex prints `item.completed` `reasoning`
    /// (text = the summary) and `agent_message`, then `turn.completed` whose usage is the
    /// served one (`input_tokens` 1200, `cached_input_tokens` 300, `output_tokens` 25,
    /// `reasoning_output_tokens` 8); exit 0.
    pub fn text(_work: &Path) -> Scenario<Reply> {
        Scenario::new(
            canon::TEXT_PROMPT,
            vec![Reply::output(
                vec![
                    Item::reasoning(canon::TEXT_THINKING),
                    Item::message(canon::TEXT_ANSWER),
                ],
                Usage {
                    input: 1200,
                    cached: 300,
                    output: 25,
                    reasoning: 8,
                },
            )],
            BYPASS,
        )
    }

    /// Message + `exec_command` `cat WORK/README.md`, `apply_patch` of its last line, message.
    /// Codex prints the `agent_message`, `command_execution` `/bin/bash -lc 'cat …'` (started,
    /// then completed with `exit_code:0` and the file as `aggregated_output`), `file_change`
    /// (started, completed; `changes:[{path: WORK/README.md, kind:"update"}]`), the final
    /// `agent_message`, then `turn.completed` with the summed usage; exit 0. README.md then
    /// reads [`super::super::sse::edited_readme`].
    pub fn read_edit(work: &Path) -> Scenario<Reply> {
        Scenario::new(
            canon::READ_EDIT_PROMPT,
            vec![
                Reply::output(
                    vec![
                        Item::message(canon::READ_EDIT_PREAMBLE),
                        Item::exec("call_read_1", &format!("cat {}", file(work, "README.md"))),
                    ],
                    Usage::cached(1500, 1000, 40),
                ),
                Reply::output(
                    vec![Item::apply_patch("call_edit_1", &readme_patch(work))],
                    Usage::cached(1700, 1200, 60),
                ),
                Reply::text(canon::READ_EDIT_ANSWER, Usage::cached(1900, 1500, 15)),
            ],
            BYPASS,
        )
    }

    /// `exec_command` `echo hello-from-bash && uname -s`, then a message. Codex prints the
    /// `command_execution` (completed, `exit_code:0`, output `hello-from-bash\nLinux\n`), the
    /// `agent_message`, then `turn.completed`; exit 0.
    pub fn shell(_work: &Path) -> Scenario<Reply> {
        Scenario::new(
            canon::SHELL_PROMPT,
            vec![
                Reply::output(
                    vec![Item::exec("call_shell_1", canon::SHELL_COMMAND)],
                    Usage::cached(1300, 500, 35),
                ),
                Reply::text(canon::SHELL_ANSWER, Usage::cached(1400, 1000, 20)),
            ],
            BYPASS,
        )
    }

    /// `exec_command` `cat WORK/missing.txt`, then `ls missing-dir; exit 3`, then a message. Both
    /// `command_execution` items complete with `status:"failed"` (`exit_code` 1, then 3, the
    /// error text in `aggregated_output`); then the `agent_message` and `turn.completed`;
    /// exit 0.
    pub fn tool_fail(work: &Path) -> Scenario<Reply> {
        Scenario::new(
            canon::TOOL_FAIL_PROMPT,
            vec![
                Reply::output(
                    vec![Item::exec(
                        "call_cat_missing",
                        &format!("cat {}", file(work, "missing.txt")),
                    )],
                    Usage::new(1300, 30),
                ),
                Reply::output(
                    vec![Item::exec("call_exit_3", canon::FAILING_COMMAND)],
                    Usage::new(1400, 35),
                ),
                Reply::text(canon::TOOL_FAIL_ANSWER, Usage::new(1500, 15)),
            ],
            BYPASS,
        )
    }

    /// HTTP 500 to every request. With [`CodexConfig::default`] (1 retry, 1 reconnect) Codex
    /// sends 4 requests and prints `error` "Reconnecting... 1/1 (We’re currently experiencing
    /// high demand, which may cause temporary errors.)", `error` with that message, and
    /// `turn.failed` `{"error":{"message":…}}` (the server's own message is dropped); exit 1
    /// after about a second.
    pub fn provider_error(_work: &Path) -> Scenario<Reply> {
        Scenario::new(
            canon::SHORT_PROMPT,
            vec![Reply::http_error(500, canon::PROVIDER_ERROR_MESSAGE)],
            BYPASS,
        )
    }

    /// With `-s read-only` instead of the bypass flag: `exec_command` `touch
    /// WORK/created_by_agent.txt`, `apply_patch` adding WORK/denied.txt, message. Nothing is
    /// created, and neither call prints an item: the touch fails in the sandbox ("Read-only
    /// file system", exit 1, only in the output sent back), the patch is rejected with stderr
    /// `… ERROR codex_core::tools::router: error=patch rejected: writing is blocked by
    /// read-only sandbox; rejected by user approval settings`. stdout: the `agent_message` and
    /// `turn.completed`; exit 0.
    pub fn permission_denied(work: &Path) -> Scenario<Reply> {
        Scenario::new(
            canon::PERMISSION_PROMPT,
            vec![
                Reply::output(
                    vec![Item::exec(
                        "call_touch",
                        &format!("touch {}", file(work, "created_by_agent.txt")),
                    )],
                    Usage::new(1300, 30),
                ),
                Reply::output(
                    vec![Item::apply_patch(
                        "call_patch_denied",
                        &format!(
                            "*** Begin Patch\n*** Add File: {}\n+should not be written\n*** End Patch\n",
                            file(work, "denied.txt")
                        ),
                    )],
                    Usage::new(1400, 35),
                ),
                Reply::text(canon::PERMISSION_ANSWER, Usage::new(1500, 15)),
            ],
            &["-s", "read-only"],
        )
    }

    /// With `-m gpt-5.4` (the model with [`MULTI_AGENT`] tools): message + `spawn_agent`, then
    /// `wait_agent` on the spawned agent, then a message; the subagent runs `exec_command`
    /// `ls` and answers. Codex prints an `item.completed` `error` item ("Model metadata for
    /// `gpt-5.4` not found. …") before `turn.started`, the `agent_message`, `collab_tool_call`
    /// `spawn_agent` (started without receivers, completed with the child's thread id,
    /// `pending_init`), `collab_tool_call` `wait` (completed: the child `completed` with its
    /// final text), the final `agent_message`, then `turn.completed` with the usage of the
    /// main conversation's 3 calls only; exit 0. The child's command prints nothing.
    pub fn subagent(_work: &Path) -> Scenario<Reply> {
        let mut flags = BYPASS.to_vec();
        flags.extend(["-m", SUBAGENT_MODEL]);
        Scenario::new(
            canon::SUBAGENT_PROMPT,
            vec![
                Reply::output(
                    vec![
                        Item::message(canon::SUBAGENT_PREAMBLE),
                        Item::multi_agent(
                            "call_spawn_1",
                            "spawn_agent",
                            json!({"message": canon::SUBAGENT_TASK}),
                        ),
                    ],
                    Usage::cached(3000, 2000, 40),
                ),
                Reply::output(
                    vec![Item::multi_agent(
                        "call_wait_1",
                        "wait_agent",
                        json!({"targets": [SPAWNED_AGENT], "timeout_ms": 30000}),
                    )],
                    Usage::cached(3100, 2500, 20),
                ),
                Reply::text(canon::SUBAGENT_ANSWER, Usage::cached(3200, 3000, 30)),
            ],
            &flags,
        )
        .with_subagent(vec![
            Reply::output(
                vec![Item::exec("call_sub_ls", "ls")],
                Usage::cached(900, 0, 20),
            ),
            Reply::text(canon::SUBAGENT_REPORT, Usage::cached(1000, 800, 12)),
        ])
    }

    /// Five tool calls, one per step, each served with its own usage (`exec_command` `echo
    /// step-1`, `cat WORK/README.md`, `wc -l README.md`, `apply_patch` adding notes.txt,
    /// `exec_command` `cat notes.txt`), then a message. Codex prints 4 `command_execution` and
    /// 1 `file_change` (`kind:"add"`) item, all completed, the `agent_message`, then
    /// `turn.completed` whose usage is [`total_usage`] of the script; exit 0.
    pub fn multistep(work: &Path) -> Scenario<Reply> {
        let calls = [
            Item::exec("call_multi_1", "echo step-1"),
            Item::exec("call_multi_2", &format!("cat {}", file(work, "README.md"))),
            Item::exec("call_multi_3", "wc -l README.md"),
            Item::apply_patch(
                "call_multi_4",
                &format!(
                    "*** Begin Patch\n*** Add File: {}\n+{}*** End Patch\n",
                    file(work, "notes.txt"),
                    canon::MULTISTEP_NOTES
                ),
            ),
            Item::exec("call_multi_5", "cat notes.txt"),
        ];
        let mut script: Vec<Reply> = calls
            .into_iter()
            .enumerate()
            .map(|(i, call)| {
                let i = i as u64;
                Reply::output(
                    vec![call],
                    Usage {
                        input: 2000 + 100 * i,
                        cached: 1000 + 200 * i,
                        output: 31 + i,
                        reasoning: i,
                    },
                )
            })
            .collect();
        script.push(Reply::text(
            canon::MULTISTEP_ANSWER,
            Usage::cached(2600, 2200, 37),
        ));
        Scenario::new(canon::MULTISTEP_PROMPT, script, BYPASS)
    }

    /// The first model request is never answered (no status line). Codex prints
    /// `thread.started` and `turn.started`, then nothing (its idle timeout only starts once
    /// headers are in) until it is killed: no final event.
    pub fn stall(_work: &Path) -> Scenario<Reply> {
        Scenario::new(canon::SHORT_PROMPT, vec![Reply::StallBeforeHeaders], BYPASS)
    }
}
