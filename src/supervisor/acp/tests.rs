use tokio::io::{AsyncBufReadExt as _, BufReader, DuplexStream, Lines};

use super::*;
use crate::supervisor::RawFile;

/// A client writing into a pipe the test reads, with its raw log in a temporary directory.
struct Wired {
    client: Client,
    sent: Lines<BufReader<DuplexStream>>,
    _dir: tempfile::TempDir,
}

fn wired(policy: Permissions) -> Wired {
    wired_with(policy, acp::Shared::default())
}

fn wired_with(policy: Permissions, told: acp::Shared) -> Wired {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stdout.log");
    let raw = RawFile::new(
        crate::redact::MaskedWriter::create_private(&path).unwrap(),
        path,
    );
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let client = Client::start(
        ours,
        raw.sink().unwrap(),
        Redactor::default(),
        Path::new("/work/repo"),
        policy,
        told,
    );
    Wired {
        client,
        sent: BufReader::new(theirs).lines(),
        _dir: dir,
    }
}

impl Wired {
    async fn next(&mut self) -> Value {
        let line = self
            .sent
            .next_line()
            .await
            .unwrap()
            .expect("a line was sent");
        serde_json::from_str(&line).unwrap()
    }

    fn receive(&mut self, message: Incoming) -> (Reaction, Vec<EventKind>) {
        let mut out = Vec::new();
        let reaction = self.client.receive(message, &mut out);
        (reaction, out)
    }
}

fn response(id: u64, result: Value) -> Incoming {
    Incoming::Response {
        id: Value::from(id),
        outcome: Ok(result),
        stopped_at_refusal: false,
        provider_failed: false,
    }
}

fn permission(id: u64, kind: &str, path: &str) -> Incoming {
    Incoming::Request {
        id: Value::from(id),
        method: "session/request_permission".to_owned(),
        params: json!({
            "sessionId": "s",
            "toolCall": {"toolCallId": "c1", "title": "edit", "kind": kind, "locations": [{"path": path}]},
            "options": [
                {"optionId": "once", "name": "Allow once", "kind": "allow_once"},
                {"optionId": "always", "name": "Always", "kind": "allow_always"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"},
            ],
        }),
        tool: None,
    }
}

/// Through `initialize` and `session/new` to the prompt: what an agent sees first.
async fn open_session(w: &mut Wired) {
    let init = w.next().await;
    assert_eq!(init["method"], "initialize");
    assert_eq!(
        init["params"]["clientCapabilities"]["fs"]["readTextFile"],
        false
    );
    w.client.prompt("fix it", &mut Vec::new());
    assert!(matches!(
        w.receive(response(1, json!({"protocolVersion": 1}))).0,
        Reaction::None
    ));
    let new = w.next().await;
    assert_eq!(new["method"], "session/new");
    assert_eq!(new["params"]["cwd"], "/work/repo");
    assert!(matches!(
        w.receive(response(2, json!({"sessionId": "s1"}))).0,
        Reaction::None
    ));
    let prompt = w.next().await;
    assert_eq!(prompt["method"], "session/prompt");
    assert_eq!(prompt["params"]["sessionId"], "s1");
    assert_eq!(prompt["params"]["prompt"][0]["text"], "fix it");
}

#[tokio::test]
async fn a_session_is_opened_before_the_prompt_and_its_answer_ends_the_turn() {
    let mut w = wired(Permissions::Agent);
    assert!(!w.client.cancel(), "nothing to cancel before the prompt");
    open_session(&mut w).await;
    assert!(w.client.cancel());
    let cancel = w.next().await;
    assert_eq!(cancel["method"], "session/cancel");
    assert!(cancel.get("id").is_none(), "a notification");
    let (reaction, _) = w.receive(response(3, json!({"stopReason": "cancelled"})));
    assert!(matches!(
        reaction,
        Reaction::Answered(StreamEnd::Truncated(_))
    ));
    // The next turn's prompt goes to the same session at once.
    w.client.prompt("again", &mut Vec::new());
    assert_eq!(w.next().await["params"]["sessionId"], "s1");
    let (reaction, _) = w.receive(response(4, json!({"stopReason": "end_turn"})));
    assert!(matches!(reaction, Reaction::Answered(StreamEnd::Finished)));
    // A turn ended right after a refused call, without a word since, stopped there.
    w.client.prompt("and again", &mut Vec::new());
    let _ = w.next().await;
    let (reaction, _) = w.receive(Incoming::Response {
        id: json!(5),
        outcome: Ok(json!({"stopReason": "end_turn"})),
        stopped_at_refusal: true,
        provider_failed: false,
    });
    assert!(
        matches!(&reaction, Reaction::Answered(StreamEnd::Truncated(m)) if m == acp::STOPPED_AT_REFUSAL)
    );
}

#[tokio::test]
async fn a_request_runbook_does_not_offer_gets_an_error_and_the_session_goes_on() {
    let mut w = wired(Permissions::Agent);
    open_session(&mut w).await;
    let (reaction, events) = w.receive(Incoming::Request {
        id: json!("x-1"),
        method: "fs/read_text_file".to_owned(),
        params: json!({"path": "/etc/passwd"}),
        tool: None,
    });
    assert!(matches!(reaction, Reaction::None));
    assert!(
        matches!(&events[..], [EventKind::AgentWarning { message }] if message.contains("fs/read_text_file"))
    );
    let error = w.next().await;
    assert_eq!(error["id"], "x-1");
    assert_eq!(error["error"]["code"], METHOD_NOT_FOUND);
    // A response to a request never made is told and ignored.
    let (reaction, events) = w.receive(response(99, json!({})));
    assert!(matches!(reaction, Reaction::None));
    assert!(matches!(&events[..], [EventKind::AgentWarning { message }] if message.contains("99")));
    let (reaction, _) = w.receive(response(3, json!({"stopReason": "end_turn"})));
    assert!(matches!(reaction, Reaction::Answered(StreamEnd::Finished)));
}

#[tokio::test]
async fn an_error_to_initialize_fails_the_turn() {
    let mut w = wired(Permissions::Agent);
    let _ = w.next().await;
    let (reaction, events) = w.receive(Incoming::Response {
        id: json!(1),
        outcome: Err(RpcError {
            data: None,
            code: -32000,
            message: "auth required".to_owned(),
        }),
        stopped_at_refusal: false,
        provider_failed: false,
    });
    let Reaction::Answered(StreamEnd::Failed(message)) = reaction else {
        panic!("{reaction:?}");
    };
    assert!(
        message.contains("initialize") && message.contains("auth required"),
        "{message}"
    );
    assert!(matches!(&events[..], [EventKind::AgentError { .. }]));
}

#[tokio::test]
async fn the_policy_answers_permissions_and_refusals_are_denials() {
    let cases = [
        (Permissions::Agent, "read", "/work/repo/a.rs", "no"),
        (Permissions::ReadOnly, "read", "/work/repo/a.rs", "once"),
        (Permissions::ReadOnly, "edit", "/work/repo/a.rs", "no"),
        (Permissions::Workspace, "edit", "/work/repo/a.rs", "once"),
        (Permissions::Workspace, "edit", "/etc/hosts", "no"),
        (Permissions::Workspace, "fetch", "/work/repo/a.rs", "no"),
        (Permissions::Bypass, "fetch", "/etc/hosts", "once"),
    ];
    for (policy, kind, path, chosen) in cases {
        let mut w = wired(policy);
        let _ = w.next().await;
        let (reaction, events) = w.receive(permission(5, kind, path));
        assert!(matches!(reaction, Reaction::None));
        let answer = w.next().await;
        assert_eq!(answer["id"], 5);
        assert_eq!(
            answer["result"]["outcome"]["optionId"], chosen,
            "{policy:?} {kind} {path}"
        );
        let names: Vec<&str> = events.iter().map(EventKind::type_name).collect();
        let mut want = vec!["permission.requested", "permission.answered"];
        if chosen == "no" {
            want.push("permission.denied");
        }
        assert_eq!(names, want, "{policy:?} {kind} {path}");
    }
}

#[tokio::test]
async fn with_a_person_there_the_agents_own_policy_asks_them() {
    let mut w = wired(Permissions::Agent);
    w.client.set_policy(Permissions::Agent, true);
    let _ = w.next().await;
    let (reaction, events) = w.receive(permission(6, "execute", "/work/repo"));
    let Reaction::Ask(ask) = reaction else {
        panic!("{reaction:?}");
    };
    assert_eq!(events.len(), 1, "only the request so far");
    let mut out = Vec::new();
    w.client
        .answer(&ask, Some(1), PermissionAnswerer::Person, &mut out);
    assert_eq!(w.next().await["result"]["outcome"]["optionId"], "always");
    // Nobody answered: refused.
    w.client
        .answer(&ask, None, PermissionAnswerer::Timeout, &mut out);
    assert_eq!(w.next().await["result"]["outcome"]["optionId"], "no");
    assert!(matches!(
        out.last(),
        Some(EventKind::PermissionDenied { .. })
    ));
}

#[tokio::test]
async fn a_read_only_turn_runs_in_the_agents_read_only_mode_and_the_next_in_its_own() {
    let mut w = wired(Permissions::ReadOnly);
    let _ = w.next().await;
    w.client.prompt("plan it", &mut Vec::new());
    w.receive(response(1, json!({"protocolVersion": 1})));
    let _ = w.next().await;
    let modes = json!({"sessionId": "s1", "configOptions": [{"id": "mode", "category": "mode",
        "currentValue": "build", "options": [{"value": "build"}, {"value": "plan"}]}]});
    w.receive(response(2, modes));
    let switch = w.next().await;
    assert_eq!(switch["method"], "session/set_config_option");
    assert_eq!(switch["params"]["value"], "plan");
    w.receive(response(3, json!({})));
    let prompt = w.next().await;
    assert_eq!(
        prompt["method"], "session/prompt",
        "the prompt waits for the switch"
    );
    w.receive(response(4, json!({"stopReason": "end_turn"})));
    // The next turn may edit: back to the mode the session started in.
    w.client.set_policy(Permissions::Agent, false);
    w.client.prompt("do it", &mut Vec::new());
    let back = w.next().await;
    assert_eq!(back["params"]["value"], "build");
    w.receive(response(5, json!({})));
    assert_eq!(w.next().await["params"]["prompt"][0]["text"], "do it");
}

#[tokio::test]
async fn a_read_only_turn_of_an_agent_without_modes_is_warned_about() {
    let mut w = wired(Permissions::ReadOnly);
    let _ = w.next().await;
    w.receive(response(1, json!({"protocolVersion": 1})));
    let _ = w.next().await;
    w.client.prompt("plan it", &mut Vec::new());
    let mut out = Vec::new();
    w.client
        .receive(response(2, json!({"sessionId": "s1"})), &mut out);
    assert!(
        matches!(&out[..], [EventKind::AgentWarning { message }] if message.contains("read-only"))
    );
    assert_eq!(w.next().await["method"], "session/prompt");
}

#[tokio::test]
async fn a_prompt_the_parser_told_as_the_providers_failure_is_not_told_again() {
    for provider_failed in [true, false] {
        let mut w = wired(Permissions::Agent);
        open_session(&mut w).await;
        let (reaction, events) = w.receive(Incoming::Response {
            id: json!(3),
            outcome: Err(RpcError {
                data: None,
                code: -32603,
                message: "Internal error: API Error: 500".to_owned(),
            }),
            stopped_at_refusal: false,
            provider_failed,
        });
        assert!(matches!(reaction, Reaction::Answered(StreamEnd::Failed(_))));
        let agent_errors = events
            .iter()
            .filter(|e| matches!(e, EventKind::AgentError { .. }))
            .count();
        assert_eq!(agent_errors, usize::from(!provider_failed), "{events:?}");
    }
}

#[tokio::test]
async fn the_parser_is_told_the_prompt_before_the_agent_can_answer_it() {
    let told = acp::Shared::default();
    let mut w = wired_with(Permissions::Agent, told.clone());
    open_session(&mut w).await;
    // `open_session` read the prompt (id 3) off the wire: it was written after the parser knew.
    assert!(told.is_prompt(&json!(3)));
    assert!(!told.is_prompt(&json!(2)), "session/new is not the prompt");
    w.client.prompt("again", &mut Vec::new());
    let prompt = w.next().await;
    assert_eq!(prompt["method"], "session/prompt");
    let id = prompt["id"].as_u64().unwrap();
    assert!(told.is_prompt(&json!(id)));
    assert!(!told.is_prompt(&json!(3)), "only the prompt in flight");
}
