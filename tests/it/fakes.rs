//! The fake Anthropic and Responses providers (support/fake_anthropic.rs,
//! support/fake_responses.rs) against the real Claude Code and Codex CLIs, run directly: what the
//! CLIs print must follow from what the fakes served. These guard the test infrastructure.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::fake_anthropic::{self, Block, DEFAULT_MODEL_PRICES, FakeAnthropic};
use crate::support::fake_responses::{self, CodexConfig, CodexHome, FakeResponses};
use crate::support::sse::{self, Fake, Protocol, Scenario, Turn, canon};
use crate::support::{self, Outcome, TestContext};

/// Each CLI run's time limit; past it the CLI's process group is killed and the test fails.
const LIMIT: Duration = Duration::from_secs(30);

/// A finished run of a real CLI against a fake provider.
struct Run<P: Protocol> {
    ctx: TestContext,
    fake: Fake<P>,
    scenario: Scenario<P::Reply>,
    out: Outcome,
    /// stdout, one JSON value a line.
    events: Vec<Value>,
}

impl<P: Protocol> Run<P> {
    fn why(&self) -> String {
        format!(
            "exit {:?} after {:?}\n--- stdout ---\n{}--- stderr ---\n{}",
            self.out.code(),
            self.out.took,
            self.out.stdout,
            self.out.stderr
        )
    }

    fn last(&self) -> &Value {
        self.events.last().expect("the CLI printed something")
    }

    /// Asserts that the scenario's multistep write (Claude `Write`, Codex `apply_patch`) ran.
    fn assert_notes_written(&self) {
        assert_eq!(
            std::fs::read_to_string(self.ctx.work.join("notes.txt"))
                .ok()
                .as_deref(),
            Some(canon::MULTISTEP_NOTES),
            "the write step ran: {}",
            self.why()
        );
    }

    /// The conversation and step of each model request, in arrival order.
    fn turns(&self) -> Vec<Turn> {
        self.fake
            .model_requests()
            .iter()
            .filter_map(|r| r.turn)
            .collect()
    }
}

impl Run<fake_anthropic::Anthropic> {
    /// Asserts that Claude exited 0 after `turns` model calls, its last line a successful
    /// `result` with the usage and cost of the whole script; returns that line.
    fn claude_success(&self, turns: u64) -> &Value {
        let why = self.why();
        assert_eq!(self.out.code(), Some(0), "{why}");
        let result = self.last();
        assert_eq!(result["type"], "result", "{why}");
        assert_eq!(result["is_error"], false, "{why}");
        assert_eq!(result["num_turns"], turns, "{why}");
        let served = fake_anthropic::total_usage(&self.scenario.script);
        assert_claude_usage(result, served, &why);
        result
    }
}

impl Run<fake_responses::Responses> {
    /// Asserts that Codex exited 0, its last line a `turn.completed` with the usage of the whole
    /// script.
    fn assert_codex_success(&self) {
        let why = self.why();
        assert_eq!(self.out.code(), Some(0), "{why}");
        let served = fake_responses::total_usage(&self.scenario.script);
        assert_codex_usage(self.last(), served, &why);
    }
}

/// A work dir holding the README, and the scenario `make` builds for it.
fn work<R>(make: fn(&Path) -> Scenario<R>) -> (TestContext, Scenario<R>) {
    let ctx = TestContext::new();
    sse::write_readme(&ctx.work).expect("write README.md");
    let scenario = make(&ctx.work);
    (ctx, scenario)
}

fn parse_stdout(out: &Outcome) -> Vec<Value> {
    out.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// `claude -p …` for the scenario `make` builds, against a fake playing it.
fn run_claude(
    make: fn(&Path) -> Scenario<fake_anthropic::Reply>,
) -> Option<Run<fake_anthropic::Anthropic>> {
    let bin = support::claude_bin()?;
    let (ctx, scenario) = work(make);
    let fake = FakeAnthropic::for_scenario(&scenario);
    let mut cmd = fake_anthropic::claude_command(&bin, &ctx.work, &ctx.home, &fake, &scenario);
    let out = support::run_agent(&mut cmd, LIMIT);
    let events = parse_stdout(&out);
    Some(Run {
        ctx,
        fake,
        scenario,
        out,
        events,
    })
}

/// `codex exec --json …` for the scenario `make` builds, against a fake playing it, with its
/// own `CODEX_HOME` (returned: it is removed when dropped).
fn run_codex(
    make: fn(&Path) -> Scenario<fake_responses::Reply>,
) -> Option<(Run<fake_responses::Responses>, CodexHome)> {
    let bin = support::codex_bin()?;
    let (ctx, scenario) = work(make);
    let fake = FakeResponses::for_scenario(&scenario);
    let home = CodexHome::new(&fake.base_url(), &CodexConfig::default()).expect("CODEX_HOME");
    let mut cmd = fake_responses::codex_command(&bin, &ctx.work, &ctx.home, &home, &scenario);
    let out = support::run_agent(&mut cmd, LIMIT);
    let events = parse_stdout(&out);
    let run = Run {
        ctx,
        fake,
        scenario,
        out,
        events,
    };
    Some((run, home))
}

fn main_steps(n: usize) -> Vec<Turn> {
    (0..n)
        .map(|step| Turn {
            subagent: false,
            step,
        })
        .collect()
}

/// The usage a CLI printed, field by field, against the tokens the fake served.
fn assert_usage_fields(usage: &Value, served: &[(&str, u64)], why: &str) {
    let printed: Vec<(&str, Value)> = served
        .iter()
        .map(|&(field, _)| (field, usage[field].clone()))
        .collect();
    let served: Vec<(&str, Value)> = served.iter().map(|&(field, n)| (field, json!(n))).collect();
    assert_eq!(printed, served, "{why}");
}

/// Claude's `result.usage` against the sum of the served usage.
fn assert_claude_usage(result: &Value, served: fake_anthropic::Usage, why: &str) {
    let fields = [
        ("input_tokens", served.input),
        ("output_tokens", served.output),
        ("cache_creation_input_tokens", served.cache_creation),
        ("cache_read_input_tokens", served.cache_read),
    ];
    assert_usage_fields(&result["usage"], &fields, why);
    let cost = result["total_cost_usd"].as_f64().expect("total_cost_usd");
    let expected = served.cost(&DEFAULT_MODEL_PRICES);
    assert!(
        (cost - expected).abs() < 1e-9,
        "cost {cost} != {expected}: {why}"
    );
}

#[test]
fn claude_answers_with_the_served_text_and_usage() {
    let Some(run) = run_claude(fake_anthropic::scenario::text) else {
        return;
    };
    let why = run.why();
    let result = run.claude_success(1);
    assert_eq!(result["result"], canon::TEXT_ANSWER, "{why}");

    let blocks: Vec<&Value> = run
        .events
        .iter()
        .filter(|e| e["type"] == "assistant")
        .map(|e| &e["message"]["content"][0]["type"])
        .collect();
    assert_eq!(blocks, ["thinking", "text"], "{why}");

    let requests = run.fake.requests();
    assert_eq!(
        requests
            .iter()
            .map(|r| (r.method.as_str(), r.path.as_str()))
            .collect::<Vec<_>>(),
        [("HEAD", "/"), ("POST", "/v1/messages")],
        "{why}"
    );
    let model = &requests[1];
    assert_eq!(model.turn, Some(main_steps(1)[0]));
    assert_eq!(model.header("x-api-key"), Some(fake_anthropic::API_KEY));
    assert_eq!(model.body["stream"], true);
    assert_eq!(
        model.header("x-claude-code-session-id"),
        result["session_id"].as_str(),
        "the session header is the printed session id"
    );
    assert!(
        model.body["messages"][0]["content"]
            .to_string()
            .contains(&run.scenario.prompt),
        "the prompt went to the provider"
    );
}

#[test]
fn claude_sums_the_usage_of_every_call_of_a_multistep_run() {
    let Some(run) = run_claude(fake_anthropic::scenario::multistep) else {
        return;
    };
    let why = run.why();
    assert_eq!(run.scenario.script.len(), 6);
    run.claude_success(6);

    let tool_results: Vec<&Value> = run
        .events
        .iter()
        .filter(|e| e["type"] == "user")
        .map(|e| &e["message"]["content"][0])
        .collect();
    assert_eq!(tool_results.len(), 5, "{why}");
    assert!(
        tool_results.iter().all(|r| r["is_error"] != true),
        "every tool succeeded: {why}"
    );
    run.assert_notes_written();
    assert_eq!(run.turns(), main_steps(6), "{why}");
}

#[test]
fn codex_answers_with_the_served_text_and_usage() {
    let Some((run, _home)) = run_codex(fake_responses::scenario::text) else {
        return;
    };
    let why = run.why();
    run.assert_codex_success();
    let items: Vec<(&Value, &Value)> = run
        .events
        .iter()
        .filter(|e| e["type"] == "item.completed")
        .map(|e| (&e["item"]["type"], &e["item"]["text"]))
        .collect();
    assert_eq!(
        items,
        [
            (&json!("reasoning"), &json!(canon::TEXT_THINKING)),
            (&json!("agent_message"), &json!(canon::TEXT_ANSWER)),
        ],
        "{why}"
    );

    let requests = run.fake.requests();
    assert_eq!(requests.len(), 1, "{why}");
    let model = &requests[0];
    assert_eq!(model.path, "/v1/responses");
    assert_eq!(model.turn, Some(main_steps(1)[0]));
    assert_eq!(model.body["model"], fake_responses::MODEL);
    assert_eq!(
        model.header("authorization"),
        Some(format!("Bearer {}", fake_responses::API_KEY).as_str())
    );
    assert_eq!(
        model.header("session-id"),
        run.events[0]["thread_id"].as_str(),
        "the session header is the printed thread id: {why}"
    );
    assert!(
        model.body["input"]
            .to_string()
            .contains(&run.scenario.prompt),
        "the prompt went to the provider"
    );
}

/// Codex's final `turn.completed` against the sum of the served usage.
fn assert_codex_usage(last: &Value, served: fake_responses::Usage, why: &str) {
    assert_eq!(last["type"], "turn.completed", "{why}");
    let fields = [
        ("input_tokens", served.input),
        ("cached_input_tokens", served.cached),
        ("output_tokens", served.output),
        ("reasoning_output_tokens", served.reasoning),
    ];
    assert_usage_fields(&last["usage"], &fields, why);
}

#[test]
fn codex_sums_the_usage_of_every_call_of_a_multistep_run() {
    let Some((run, home)) = run_codex(fake_responses::scenario::multistep) else {
        return;
    };
    let why = run.why();
    assert_eq!(run.scenario.script.len(), 6);
    run.assert_codex_success();
    let tools: Vec<Value> = run
        .events
        .iter()
        .filter(|e| e["type"] == "item.completed" && e["item"]["type"] != "agent_message")
        .map(|e| json!([e["item"]["type"], e["item"]["status"]]))
        .collect();
    let ok = |kind: &str| json!([kind, "completed"]);
    assert_eq!(
        tools,
        [
            ok("command_execution"),
            ok("command_execution"),
            ok("command_execution"),
            ok("file_change"),
            ok("command_execution"),
        ],
        "{why}"
    );
    run.assert_notes_written();
    assert_eq!(run.turns(), main_steps(6), "{why}");
    assert!(
        !run.out.stderr.contains("WARNING"),
        "CODEX_HOME is not under /tmp: {why}"
    );

    let codex_home = home.path().to_owned();
    assert!(codex_home.join("config.toml").is_file());
    drop(home);
    assert!(!codex_home.exists(), "CODEX_HOME is removed afterwards");
}

/// One HTTP/1.1 request to `port`; the status, the lower-case headers and the body.
fn http(port: u16, method: &str, path: &str, body: &Value) -> (u16, String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to the fake");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let body = body.to_string();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).expect("read the answer");
    let (head, body) = answer.split_once("\r\n\r\n").expect("a header block");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_lowercase(), body.to_owned())
}

/// Claude re-sends a request without `stream` after a broken stream and expects one JSON
/// message; errors carry Anthropic's body and a `request-id`. Requests carry `system` messages
/// and list tool results.
#[test]
fn the_anthropic_fake_answers_errors_and_requests_without_stream() {
    let call = Block::tool_use("toolu_x", "Bash", json!({"command": "true"}));
    let fake = FakeAnthropic::start(vec![
        fake_anthropic::Reply::http_error(529, "Overloaded (scripted)"),
        fake_anthropic::Reply::message(
            vec![Block::text("Checking."), call.clone()],
            fake_anthropic::Usage::cached(10, 2, 3, 4),
        ),
    ]);
    let user = json!({"role": "user", "content": "go"});
    let (status, head, body) = http(
        fake.port(),
        "POST",
        "/v1/messages?beta=true",
        &json!({"model": "m", "messages": [user]}),
    );
    assert_eq!(status, 529);
    assert!(head.contains("request-id: req_fake_0001"), "{head}");
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        error["error"],
        json!({"type": "overloaded_error", "message": "Overloaded (scripted)"})
    );

    let history = json!([
        user,
        {"role": "system", "content": "a reminder"},
        {"role": "assistant", "content": [{"type": "text", "text": "earlier"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_0", "content": [{"type": "text", "text": "ok"}]}]},
    ]);
    let (status, _, body) = http(
        fake.port(),
        "POST",
        "/v1/messages?beta=true",
        &json!({"model": "m", "stream": false, "messages": history}),
    );
    assert_eq!(status, 200, "{body}");
    let message: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(message["stop_reason"], "tool_use");
    assert_eq!(message["model"], "m");
    assert_eq!(
        message["content"][1],
        json!({"type": "tool_use", "id": "toolu_x", "name": "Bash", "input": {"command": "true"}})
    );
    assert_eq!(
        message["usage"],
        json!({"input_tokens": 10, "output_tokens": 2, "cache_creation_input_tokens": 3, "cache_read_input_tokens": 4})
    );
    assert_eq!(
        fake.model_requests()
            .iter()
            .map(|r| r.turn)
            .collect::<Vec<_>>(),
        main_steps(2).into_iter().map(Some).collect::<Vec<_>>()
    );
}
