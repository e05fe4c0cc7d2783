//! A scripted Anthropic Messages API server for driving the real Claude Code CLI (2.1.x) in
//! integration tests, offline.
//!
//! * Listens on `127.0.0.1`, ephemeral port, on its own thread (see [`super::sse`]); dropping
//!   the [`FakeAnthropic`] stops it, stalled connections included.
//! * `HEAD /` (Claude's connectivity probe, once per run) → `200`. `POST /v1/messages` (Claude
//!   adds `?beta=true`) is a model request; anything else gets an Anthropic-style `404`.
//! * Model requests pick their step by conversation position: step index = the number of
//!   `assistant` messages in the request (its `system` messages and tool results, string or list,
//!   are accepted as they come), so retries of a request get the same step. Past the end of the
//!   script: `Text "done"`.
//! * Subagent requests (Agent tool: the `system` text holds `cc_is_subagent=true`) are answered
//!   from the subagent script (default: empty, i.e. `Text "subagent summary"`), indexed the same
//!   way.
//! * `stream: true` gets SSE with `event:` lines (Claude needs them): `message_start` (usage with
//!   input and cache tokens, `output_tokens` placeholder 1), `ping`, a `content_block_start`/
//!   `_delta`/`_stop` run per block, `message_delta` (stop reason, real `output_tokens`),
//!   `message_stop`. Without `stream` (Claude's fallback after a broken stream) it answers one
//!   JSON message.
#![allow(dead_code)]

use std::path::Path;

use hyper::Response;
use hyper::body::Bytes;
use serde_json::{Value, json};

use super::fake_llm::Prices;
use super::sse::{
    self, Answer, Fake, FakeBody, Protocol, README_LAST_LINE, README_NEW_LINE, Received, Scenario,
    Turn, canon, path_str, split_pieces,
};

/// The `ANTHROPIC_API_KEY` given to Claude (sent as `x-api-key`).
pub const API_KEY: &str = "sk-ant-fake-key";
/// Claude Code's model when none is chosen; echoed when a request names none.
pub const DEFAULT_MODEL: &str = "claude-opus-4-8";
/// `CLAUDE_CODE_MAX_RETRIES` in [`claude_env`]: a failing request is tried twice in all.
pub const MAX_RETRIES: u32 = 1;

/// USD per million tokens Claude Code 2.1.197 charges for [`DEFAULT_MODEL`] in
/// `total_cost_usd` (its own price table; observed).
pub const DEFAULT_MODEL_PRICES: Prices = Prices {
    input: 5.0,
    output: 25.0,
    cache_read: 0.5,
    cache_write: 6.25,
};

/// The model Claude Code 2.1.330 asks for when none is chosen.
pub const NEXT_DEFAULT_MODEL: &str = "claude-opus-5-5";

/// USD per million tokens Claude Code 2.1.330 charges for [`NEXT_DEFAULT_MODEL`] in
/// `total_cost_usd` (its bundled model catalog; observed).
pub const NEXT_DEFAULT_MODEL_PRICES: Prices = Prices {
    input: 4.0,
    output: 20.0,
    cache_read: 0.2,
    cache_write: 5.0,
};

/// Token usage of one model call: input and cache tokens go out in `message_start`, output
/// tokens in `message_delta`. Claude's `result.usage` is the sum over the main thread's calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_creation: u64,
    pub cache_read: u64,
}

impl Usage {
    pub fn new(input: u64, output: u64) -> Usage {
        Usage::cached(input, output, 0, 0)
    }

    pub fn cached(input: u64, output: u64, cache_creation: u64, cache_read: u64) -> Usage {
        Usage {
            input,
            output,
            cache_creation,
            cache_read,
        }
    }

    /// What Claude charges for this usage at `prices`.
    pub fn cost(&self, prices: &Prices) -> f64 {
        (self.input as f64 * prices.input
            + self.output as f64 * prices.output
            + self.cache_creation as f64 * prices.cache_write
            + self.cache_read as f64 * prices.cache_read)
            / 1e6
    }
}

impl std::ops::Add for Usage {
    type Output = Usage;
    fn add(self, o: Usage) -> Usage {
        Usage::cached(
            self.input + o.input,
            self.output + o.output,
            self.cache_creation + o.cache_creation,
            self.cache_read + o.cache_read,
        )
    }
}

/// One content block of a scripted message.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// Streamed as `thinking_delta`s, then a `signature_delta`.
    Thinking(String),
    Text(String),
    /// A tool call; its `input` is streamed as `input_json_delta` pieces.
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
}

impl Block {
    pub fn thinking(text: &str) -> Block {
        Block::Thinking(text.to_owned())
    }
    pub fn text(text: &str) -> Block {
        Block::Text(text.to_owned())
    }
    pub fn tool_use(id: &str, name: &str, input: Value) -> Block {
        Block::ToolUse {
            id: id.to_owned(),
            name: name.to_owned(),
            input,
        }
    }

    /// The block as it appears in a complete message.
    fn json(&self) -> Value {
        match self {
            Block::Thinking(t) => {
                json!({"type": "thinking", "thinking": t, "signature": SIGNATURE})
            }
            Block::Text(t) => json!({"type": "text", "text": t}),
            Block::ToolUse { id, name, input } => {
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            }
        }
    }
}

const SIGNATURE: &str = "fakesig";

/// One scripted answer of the model.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A message of these blocks; `stop_reason` is `tool_use` when a block is a tool call,
    /// else `end_turn`.
    Message { blocks: Vec<Block>, usage: Usage },
    /// An Anthropic-style JSON error with this status and a `request-id` header (429 also gets
    /// `retry-after: 1`). The step is not consumed: Claude's retries get it again.
    HttpError { status: u16, message: String },
    /// Read the request, never answer (until the server is dropped).
    StallBeforeHeaders,
    /// `200` + SSE headers, then nothing.
    StallAfterHeaders,
}

impl Reply {
    pub fn message(blocks: Vec<Block>, usage: Usage) -> Reply {
        Reply::Message { blocks, usage }
    }
    pub fn text(text: &str, usage: Usage) -> Reply {
        Reply::message(vec![Block::text(text)], usage)
    }
    pub fn http_error(status: u16, message: &str) -> Reply {
        let message = message.to_owned();
        Reply::HttpError { status, message }
    }
}

/// The sum of the usage `replies` are served with: what Claude reports in `result.usage` when
/// they are the main thread's calls.
pub fn total_usage(replies: &[Reply]) -> Usage {
    sse::total_usage::<Anthropic>(replies)
}

/// The Messages API, as Claude Code speaks it.
pub struct Anthropic;

/// A running fake Anthropic provider.
pub type FakeAnthropic = Fake<Anthropic>;

impl Fake<Anthropic> {
    /// `http://127.0.0.1:PORT`, Claude's `ANTHROPIC_BASE_URL` (without `/v1`).
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port())
    }
}

impl Protocol for Anthropic {
    type Reply = Reply;
    type Usage = Usage;
    const NAME: &'static str = "fake-anthropic";

    fn turn(req: &Received) -> Option<Turn> {
        if req.method != "POST" || req.path != "/v1/messages" {
            return None;
        }
        let system = match &req.body["system"] {
            Value::String(s) => s.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        };
        let step = req.body["messages"].as_array().map_or(0, |ms| {
            ms.iter().filter(|m| m["role"] == "assistant").count()
        });
        Some(Turn {
            subagent: system.contains("cc_is_subagent=true"),
            step,
        })
    }

    fn text(text: &str, input: u64, output: u64) -> Reply {
        Reply::text(text, Usage::new(input, output))
    }

    fn usage(reply: &Reply) -> Option<Usage> {
        match reply {
            Reply::Message { usage, .. } => Some(*usage),
            _ => None,
        }
    }

    fn answer(req: &Received, reply: Option<Reply>, id: u64) -> Answer {
        let headers = [("request-id", format!("req_fake_{id:04}"))];
        let Some(reply) = reply else {
            return Answer::Respond(if req.path == "/" {
                sse::empty_response(200, &headers)
            } else {
                error_response(
                    id,
                    404,
                    &format!("fake_anthropic: no route for {} {}", req.method, req.path),
                )
            });
        };
        let model = req.body["model"].as_str().unwrap_or(DEFAULT_MODEL);
        let stream = req.body["stream"].as_bool().unwrap_or(false);
        Answer::Respond(match reply {
            Reply::HttpError { status, message } => error_response(id, status, &message),
            Reply::StallBeforeHeaders => return Answer::Stall,
            Reply::StallAfterHeaders if stream => sse::sse_response(&headers, Vec::new(), true),
            Reply::StallAfterHeaders => return Answer::Stall,
            Reply::Message { blocks, usage } if stream => {
                sse::sse_response(&headers, message_events(id, model, &blocks, &usage), false)
            }
            Reply::Message { blocks, usage } => {
                let mut message = message_json(id, model, &blocks, &usage);
                message["stop_reason"] = json!(stop_reason(&blocks));
                sse::json_response(200, &headers, &message)
            }
        })
    }
}

/// An Anthropic error body (`{"type":"error","error":{"type","message"},"request_id"}`) with a
/// `request-id` header.
fn error_response(id: u64, status: u16, message: &str) -> Response<FakeBody> {
    let kind = match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    };
    let request_id = format!("req_fake_{id:04}");
    let body = json!({"type": "error", "error": {"type": kind, "message": message}, "request_id": request_id});
    let mut headers = vec![("request-id", request_id)];
    if status == 429 {
        headers.push(("retry-after", "1".to_owned()));
    }
    sse::json_response(status, &headers, &body)
}

fn stop_reason(blocks: &[Block]) -> &'static str {
    if blocks.iter().any(|b| matches!(b, Block::ToolUse { .. })) {
        "tool_use"
    } else {
        "end_turn"
    }
}

/// The message of request `id`, complete (as the non-streaming answer) but for `stop_reason`.
fn message_json(id: u64, model: &str, blocks: &[Block], usage: &Usage) -> Value {
    json!({
        "id": format!("msg_fake_{id:04}"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks.iter().map(Block::json).collect::<Vec<_>>(),
        "stop_reason": null,
        "stop_sequence": null,
        "usage": {
            "input_tokens": usage.input,
            "output_tokens": usage.output,
            "cache_creation_input_tokens": usage.cache_creation,
            "cache_read_input_tokens": usage.cache_read,
        },
    })
}

fn event(data: Value) -> Bytes {
    let name = data["type"].as_str().unwrap_or_default().to_owned();
    sse::sse_event(Some(&name), &data)
}

/// The SSE events of a message.
fn message_events(id: u64, model: &str, blocks: &[Block], usage: &Usage) -> Vec<Bytes> {
    let mut start = message_json(id, model, &[], usage);
    start["usage"]["output_tokens"] = json!(1);
    let mut ev = vec![
        event(json!({"type": "message_start", "message": start})),
        event(json!({"type": "ping"})),
    ];
    for (index, block) in blocks.iter().enumerate() {
        let delta = |delta: Value| {
            event(json!({"type": "content_block_delta", "index": index, "delta": delta}))
        };
        let (first, deltas) = match block {
            Block::Thinking(t) => {
                let mut deltas: Vec<Bytes> = split_pieces(t, 3)
                    .into_iter()
                    .map(|p| delta(json!({"type": "thinking_delta", "thinking": p})))
                    .collect();
                deltas.push(delta(
                    json!({"type": "signature_delta", "signature": SIGNATURE}),
                ));
                (json!({"type": "thinking", "thinking": ""}), deltas)
            }
            Block::Text(t) => (
                json!({"type": "text", "text": ""}),
                split_pieces(t, 3)
                    .into_iter()
                    .map(|p| delta(json!({"type": "text_delta", "text": p})))
                    .collect(),
            ),
            Block::ToolUse { id, name, input } => (
                json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                split_pieces(&input.to_string(), 3)
                    .into_iter()
                    .map(|p| delta(json!({"type": "input_json_delta", "partial_json": p})))
                    .collect(),
            ),
        };
        ev.push(event(
            json!({"type": "content_block_start", "index": index, "content_block": first}),
        ));
        ev.extend(deltas);
        ev.push(event(json!({"type": "content_block_stop", "index": index})));
    }
    ev.push(event(json!({
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason(blocks), "stop_sequence": null},
        "usage": {"output_tokens": usage.output},
    })));
    ev.push(event(json!({"type": "message_stop"})));
    ev
}

// ---------------------------------------------------------------------------
// Claude Code's environment and command line

/// The environment Claude Code must run with, besides `PATH`: `HOME`, the fake provider and a
/// key for it, `CLAUDE_CODE_MAX_RETRIES` = [`MAX_RETRIES`], the switches that keep it offline,
/// and `IS_SANDBOX=1` (as root, `--dangerously-skip-permissions` is refused without it). Use
/// with `env_clear()`.
pub fn claude_env(home: &Path, base_url: &str) -> Vec<(String, String)> {
    [
        ("HOME", path_str(home)),
        ("TERM", "dumb".to_owned()),
        ("LANG", "C.UTF-8".to_owned()),
        ("ANTHROPIC_BASE_URL", base_url.to_owned()),
        ("ANTHROPIC_API_KEY", API_KEY.to_owned()),
        ("CLAUDE_CODE_MAX_RETRIES", MAX_RETRIES.to_string()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
        ("DISABLE_AUTOUPDATER", "1".to_owned()),
        ("DISABLE_TELEMETRY", "1".to_owned()),
        ("DISABLE_ERROR_REPORTING", "1".to_owned()),
        ("IS_SANDBOX", "1".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// `claude`'s arguments for a headless run of `scenario`:
/// `-p PROMPT --output-format stream-json --verbose FLAGS…` (stdin must be `/dev/null`, or
/// Claude waits 3 s for it).
pub fn claude_args(scenario: &Scenario<Reply>) -> Vec<String> {
    let mut args: Vec<String> = [
        "-p",
        &scenario.prompt,
        "--output-format",
        "stream-json",
        "--verbose",
    ]
    .iter()
    .map(|a| (*a).to_owned())
    .collect();
    args.extend(scenario.flags.iter().cloned());
    args
}

/// `claude ARGS` for `scenario` in `work`, with [`claude_env`] (own `home`) and `PATH` only,
/// stdin `/dev/null`.
pub fn claude_command(
    bin: &Path,
    work: &Path,
    home: &Path,
    fake: &FakeAnthropic,
    scenario: &Scenario<Reply>,
) -> std::process::Command {
    let env = claude_env(home, &fake.base_url());
    super::agent_command(bin, work, &claude_args(scenario), &env)
}

// ---------------------------------------------------------------------------
// Canonical scenarios

/// The canonical scenarios, each made for a work dir holding [`super::sse::README`]; tool inputs
/// use absolute paths inside it. The comments say what Claude Code 2.1.197 then does and prints
/// on stdout (`--output-format stream-json --verbose`); it always starts with `system/init`,
/// and stderr stays empty.
pub mod scenario {
    use super::*;

    const SKIP_PERMISSIONS: &[&str] = &["--dangerously-skip-permissions"];

    fn file(work: &Path, name: &str) -> String {
        path_str(&work.join(name))
    }

    /// One step: a thinking block, then text. Claude prints `system/thinking_tokens` (once per
    /// thinking delta), an `assistant` event per block (thinking, text; their `usage` is the
    /// `message_start` one, output 1), then `result` `success` with `is_error:false`,
    /// `num_turns:1`, `result` = the text and `usage` = the served usage; exit 0.
    pub fn text(_work: &Path) -> Scenario<Reply> {
        Scenario::new(
            canon::TEXT_PROMPT,
            vec![Reply::message(
                vec![
                    Block::thinking(canon::TEXT_THINKING),
                    Block::text(canon::TEXT_ANSWER),
                ],
                Usage::cached(1200, 25, 300, 0),
            )],
            SKIP_PERMISSIONS,
        )
    }

    /// Text + `Read` README.md, `Edit` of its last line, text. Claude prints the text, the
    /// `Read` tool_use and its `user` tool_result (numbered lines, no `is_error`), the `Edit`
    /// tool_use (gaining `replace_all:false`) and its result ("The file … has been updated
    /// successfully. …"), the final text, then `result` `success`, `num_turns:3`; exit 0.
    /// README.md then reads [`super::super::sse::edited_readme`].
    pub fn read_edit(work: &Path) -> Scenario<Reply> {
        let readme = file(work, "README.md");
        Scenario::new(
            canon::READ_EDIT_PROMPT,
            vec![
                Reply::message(
                    vec![
                        Block::text(canon::READ_EDIT_PREAMBLE),
                        Block::tool_use("toolu_read_1", "Read", json!({"file_path": readme})),
                    ],
                    Usage::cached(1500, 40, 1000, 0),
                ),
                Reply::message(
                    vec![Block::tool_use(
                        "toolu_edit_1",
                        "Edit",
                        json!({"file_path": readme, "old_string": README_LAST_LINE, "new_string": README_NEW_LINE}),
                    )],
                    Usage::cached(1700, 60, 200, 1000),
                ),
                Reply::text(canon::READ_EDIT_ANSWER, Usage::cached(1900, 15, 150, 1200)),
            ],
            SKIP_PERMISSIONS,
        )
    }

    /// `Bash` `echo hello-from-bash && uname -s`, then text. Claude prints the tool_use, its
    /// tool_result `hello-from-bash\nLinux` with `is_error:false`, the text, then `result`
    /// `success`, `num_turns:2`; exit 0.
    pub fn shell(_work: &Path) -> Scenario<Reply> {
        Scenario::new(
            canon::SHELL_PROMPT,
            vec![
                Reply::message(
                    vec![Block::tool_use(
                        "toolu_bash_1",
                        "Bash",
                        json!({"command": canon::SHELL_COMMAND, "description": "Print a greeting and the OS name"}),
                    )],
                    Usage::cached(1300, 35, 500, 0),
                ),
                Reply::text(canon::SHELL_ANSWER, Usage::cached(1400, 20, 100, 500)),
            ],
            SKIP_PERMISSIONS,
        )
    }

    /// `Read` of a missing file, `Bash` `ls missing-dir; exit 3`, text. Both tool_results have
    /// `is_error:true`: "File does not exist. Note: your current working directory is WORK."
    /// and "Exit code 3\nls: cannot access 'missing-dir': No such file or directory"; then the
    /// text and `result` `success` with `is_error:false`, `num_turns:3`; exit 0.
    pub fn tool_fail(work: &Path) -> Scenario<Reply> {
        Scenario::new(
            canon::TOOL_FAIL_PROMPT,
            vec![
                Reply::message(
                    vec![Block::tool_use(
                        "toolu_read_missing",
                        "Read",
                        json!({"file_path": file(work, "missing.txt")}),
                    )],
                    Usage::new(1300, 30),
                ),
                Reply::message(
                    vec![Block::tool_use(
                        "toolu_bash_fail",
                        "Bash",
                        json!({"command": canon::FAILING_COMMAND, "description": "List a missing directory"}),
                    )],
                    Usage::new(1400, 35),
                ),
                Reply::text(canon::TOOL_FAIL_ANSWER, Usage::new(1500, 15)),
            ],
            SKIP_PERMISSIONS,
        )
    }

    /// HTTP 500 (`api_error`) to every request. With [`MAX_RETRIES`] (1) Claude sends 2 requests
    /// and prints one `system/api_retry` (`attempt:1`, `error_status:500`,
    /// `error:"server_error"`, ~0.6 s delay), a synthetic `assistant` (`model:"<synthetic>"`,
    /// `error:"server_error"`, text "API Error: 500 Internal server error (scripted). This is a
    /// server-side issue, …"), then `result` `subtype:"success"` with `is_error:true`,
    /// `api_error_status:500`, that text and zero usage; exit 1 after about a second.
    pub fn provider_error(_work: &Path) -> Scenario<Reply> {
        Scenario::new(
            canon::SHORT_PROMPT,
            vec![Reply::http_error(500, canon::PROVIDER_ERROR_MESSAGE)],
            SKIP_PERMISSIONS,
        )
    }

    /// Without the bypass flag (`--permission-mode default`; `system/init` says
    /// `permissionMode:"default"`): `Bash` `touch WORK/created_by_agent.txt`, `Write`
    /// WORK/denied.txt, text. Neither runs (nothing is created, no prompt, nothing on stderr);
    /// their tool_results have `is_error:true`: "touch in '…' was blocked. For security, Claude
    /// Code may only create or modify files in the allowed working directories …" and "Claude
    /// requested permissions to write to …, but you haven't granted it yet."; then the text and
    /// `result` `success` listing both calls in `permission_denials` (`tool_name` `Bash`,
    /// `Write`), `num_turns:3`; exit 0.
    pub fn permission_denied(work: &Path) -> Scenario<Reply> {
        Scenario::new(
            canon::PERMISSION_PROMPT,
            vec![
                Reply::message(
                    vec![Block::tool_use(
                        "toolu_bash_touch",
                        "Bash",
                        json!({"command": format!("touch {}", file(work, "created_by_agent.txt")), "description": "Create a file"}),
                    )],
                    Usage::new(1300, 30),
                ),
                Reply::message(
                    vec![Block::tool_use(
                        "toolu_write_denied",
                        "Write",
                        json!({"file_path": file(work, "denied.txt"), "content": "should not be written\n"}),
                    )],
                    Usage::new(1400, 35),
                ),
                Reply::text(canon::PERMISSION_ANSWER, Usage::new(1500, 15)),
            ],
            &["--permission-mode", "default"],
        )
    }

    /// Text + `Agent` (general-purpose); the subagent runs `Bash` `ls` and answers. Claude
    /// prints the text, the `Agent` tool_use, `system/task_started`, a `user` event with the
    /// subagent's prompt, `system/task_progress`, the subagent's `Bash` tool_use and result
    /// (both with `parent_tool_use_id` = the Agent call), `system/task_updated`,
    /// `system/task_notification`, the Agent call's tool_result (a list: the subagent's final
    /// text, which has no event of its own, and an `agentId: …` block), the final text, then
    /// `result` `success`, `num_turns:2`, whose `usage` counts the main thread's 2 calls only
    /// (`modelUsage` counts all 4); exit 0.
    pub fn subagent(_work: &Path) -> Scenario<Reply> {
        Scenario::new(
            canon::SUBAGENT_PROMPT,
            vec![
                Reply::message(
                    vec![
                        Block::text(canon::SUBAGENT_PREAMBLE),
                        Block::tool_use(
                            "toolu_agent_1",
                            "Agent",
                            json!({"description": "List workspace files", "prompt": canon::SUBAGENT_TASK, "subagent_type": "general-purpose"}),
                        ),
                    ],
                    Usage::cached(3000, 40, 2000, 0),
                ),
                Reply::text(
                    canon::SUBAGENT_ANSWER,
                    Usage::cached(3200, 30, 100, 2000),
                ),
            ],
            SKIP_PERMISSIONS,
        )
        .with_subagent(vec![
            Reply::message(
                vec![Block::tool_use(
                    "toolu_sub_ls",
                    "Bash",
                    json!({"command": "ls", "description": "List files"}),
                )],
                Usage::cached(900, 20, 800, 0),
            ),
            Reply::text(canon::SUBAGENT_REPORT, Usage::cached(1000, 12, 50, 800)),
        ])
    }

    /// Five tool calls, one per step, each served with its own usage (`Bash` `echo step-1`,
    /// `Read` README.md, `Bash` `wc -l README.md`, `Write` notes.txt, `Bash` `cat notes.txt`),
    /// then text. All succeed (notes.txt is created); `result` `success`, `num_turns:6`,
    /// `usage` = [`total_usage`] of the script, `total_cost_usd` = its cost at
    /// [`DEFAULT_MODEL_PRICES`]; exit 0.
    pub fn multistep(work: &Path) -> Scenario<Reply> {
        let steps = [
            (
                "toolu_multi_1",
                "Bash",
                json!({"command": "echo step-1", "description": "Print step 1"}),
            ),
            (
                "toolu_multi_2",
                "Read",
                json!({"file_path": file(work, "README.md")}),
            ),
            (
                "toolu_multi_3",
                "Bash",
                json!({"command": "wc -l README.md", "description": "Count README lines"}),
            ),
            (
                "toolu_multi_4",
                "Write",
                json!({"file_path": file(work, "notes.txt"), "content": canon::MULTISTEP_NOTES}),
            ),
            (
                "toolu_multi_5",
                "Bash",
                json!({"command": "cat notes.txt", "description": "Show the notes"}),
            ),
        ];
        let mut script: Vec<Reply> = steps
            .into_iter()
            .enumerate()
            .map(|(i, (id, name, input))| {
                let i = i as u64;
                Reply::message(
                    vec![Block::tool_use(id, name, input)],
                    Usage::cached(2000 + 100 * i, 31 + i, 100 + 10 * i, 1000 + 200 * i),
                )
            })
            .collect();
        script.push(Reply::text(
            canon::MULTISTEP_ANSWER,
            Usage::cached(2600, 37, 160, 2200),
        ));
        Scenario::new(canon::MULTISTEP_PROMPT, script, SKIP_PERMISSIONS)
    }

    /// The first model request is never answered (no status line). Claude prints `system/init`,
    /// then nothing at all (its request timeout is 10 min) until it is killed: no `result`.
    pub fn stall(_work: &Path) -> Scenario<Reply> {
        Scenario::new(
            canon::SHORT_PROMPT,
            vec![Reply::StallBeforeHeaders],
            SKIP_PERMISSIONS,
        )
    }
}
