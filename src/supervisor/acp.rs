//! runbook's side of the Agent Client Protocol: the client of one ACP agent process, which lives
//! for the whole run. It writes runbook's requests to the agent's stdin (`initialize`,
//! `session/new`, then one `session/prompt` per turn, `session/cancel` to stop one) and answers
//! the agent's requests: a permission by the `--permissions` policy (or by a person at the
//! terminal), anything else with a JSON-RPC error. What the agent writes reaches it from the
//! adapter's parser (`agent::acp`), after the events of the lines before it.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Value, json};
use tokio::io::AsyncWrite;
use tokio::sync::mpsc;

use super::raw::RawSink;
use crate::agent::acp::{self, Incoming, RpcError, SENT_MARK};
use crate::agent::{Permissions, StreamEnd};
use crate::event::{EventKind, PermissionAnswerer, ToolKind, ToolStart};
use crate::redact::{Masked, MaskedWriter, Redactor};

/// The protocol version runbook speaks.
pub(crate) const PROTOCOL_VERSION: u64 = 1;
/// JSON-RPC's "method not found".
const METHOD_NOT_FOUND: i64 = -32601;

/// What runbook asked the agent, by request id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Asked {
    Initialize,
    NewSession,
    Prompt,
    /// A switch to the mode of this index in [`Modes::available`].
    SetMode(usize),
    /// The choice of `--model`.
    SetModel,
}

/// How the agent's mode is chosen, as its answer to `session/new` said: `modes` (switched with
/// `session/set_mode`), or a configuration option of category `mode` (switched with
/// `session/set_config_option`, as OpenCode does).
#[derive(Debug, Clone)]
struct Modes {
    /// The option's id, when the mode is a configuration option.
    option: Option<String>,
    available: Vec<String>,
    /// The mode the session started in: the one for a turn that is not read-only.
    initial: String,
    current: String,
}

impl Modes {
    fn of(result: &Value) -> Option<Self> {
        let ids = |list: Option<&Vec<Value>>, key: &str| -> Vec<String> {
            list.into_iter()
                .flatten()
                .filter_map(|m| m.get(key).and_then(Value::as_str).map(str::to_owned))
                .collect()
        };
        if let Some(modes) = result.get("modes") {
            let current = modes.get("currentModeId")?.as_str()?.to_owned();
            return Some(Self {
                option: None,
                available: ids(modes.get("availableModes").and_then(Value::as_array), "id"),
                initial: current.clone(),
                current,
            });
        }
        let option = result
            .get("configOptions")?
            .as_array()?
            .iter()
            .find(|o| o.get("category").and_then(Value::as_str) == Some("mode"))?;
        let current = option.get("currentValue")?.as_str()?.to_owned();
        Some(Self {
            option: Some(option.get("id")?.as_str()?.to_owned()),
            available: ids(option.get("options").and_then(Value::as_array), "value"),
            initial: current.clone(),
            current,
        })
    }

    /// The mode a turn under `policy` wants, by its index; `None` when it cannot have one.
    fn wanted(&self, policy: Permissions) -> Option<usize> {
        let names: &[&str] = match policy {
            Permissions::ReadOnly => &["plan", "read-only", "read_only", "readonly"],
            _ => &[],
        };
        match names {
            [] => self.available.iter().position(|m| *m == self.initial),
            names => names
                .iter()
                .find_map(|n| self.available.iter().position(|m| m == n)),
        }
    }
}

/// A permission request waiting for a person's answer.
#[derive(Debug, Clone)]
pub(crate) struct Ask {
    pub id: Value,
    pub call_id: String,
    pub tool: String,
    pub input: String,
    /// The options offered: their id, name and ACP kind (`allow_once`, `reject_always`, …).
    pub options: Vec<(String, String, String)>,
}

/// What a message from the agent means for the turn.
#[derive(Debug)]
pub(crate) enum Reaction {
    /// Nothing more than its events.
    None,
    /// The prompt was answered (or refused): the turn is over, the process lives on.
    Answered(StreamEnd),
    /// A permission request a person is to answer.
    Ask(Ask),
}

/// The client of one ACP agent.
pub(crate) struct Client {
    wire: Option<mpsc::UnboundedSender<String>>,
    next_id: u64,
    asked: HashMap<u64, Asked>,
    session: Option<String>,
    /// The prompt to send once the session exists.
    queued: Option<String>,
    cwd: String,
    /// The id of the prompt in flight.
    prompt: Option<u64>,
    policy: Permissions,
    /// Whether a person at the terminal answers what the policy leaves to the agent's settings.
    ask_person: bool,
    /// The agent's modes, when it offers any.
    modes: Option<Modes>,
    /// `--model`, until it is chosen (or found not to be choosable).
    model: Option<String>,
    /// The session's answer to `session/new`, for its options.
    options: Value,
    /// What it tells the parser: the calls it refused, the prompt in flight.
    told: acp::Shared,
}

impl Client {
    /// A client writing to `stdin` (each line also to the raw log, marked as runbook's), which
    /// starts the protocol at once with `initialize`.
    pub(super) fn start(
        stdin: impl AsyncWrite + Unpin + Send + 'static,
        raw: RawSink,
        redactor: Redactor,
        cwd: &Path,
        policy: Permissions,
        told: acp::Shared,
    ) -> Self {
        let mut client = Self {
            wire: Some(writer(stdin, raw, redactor)),
            next_id: 0,
            asked: HashMap::new(),
            session: None,
            queued: None,
            cwd: cwd.display().to_string(),
            prompt: None,
            policy,
            ask_person: false,
            modes: None,
            model: None,
            options: Value::Null,
            told,
        };
        client.request(
            Asked::Initialize,
            "initialize",
            json!({
                "protocolVersion": PROTOCOL_VERSION,
                // runbook reads no files and runs no terminals for the agent.
                "clientCapabilities": {
                    "fs": {"readTextFile": false, "writeTextFile": false},
                    "terminal": false,
                },
                "clientInfo": {"name": "runbook", "version": env!("CARGO_PKG_VERSION")},
            }),
        );
        client
    }

    /// Chooses `model` for the session, when the agent offers a choice of model that has it.
    pub(crate) fn choose_model(&mut self, model: Option<String>) {
        self.model = model;
    }

    /// How permission requests are answered this turn: by `policy`, or, where it leaves them
    /// to the agent's settings and `ask_person` says a person is there, by that person.
    pub(crate) fn set_policy(&mut self, policy: Permissions, ask_person: bool) {
        self.policy = policy;
        self.ask_person = ask_person;
    }

    /// Sends the turn's prompt, as soon as the session exists (and is in the mode the turn's
    /// policy wants); what there is to say about it goes to `out`.
    pub(crate) fn prompt(&mut self, text: &str, out: &mut Vec<EventKind>) {
        self.queued = Some(text.to_owned());
        if self.session.is_some() {
            self.begin(out);
        }
    }

    /// Sends the queued prompt, after a switch of mode when the turn's policy wants one: a
    /// read-only turn runs in the agent's read-only mode (OpenCode's `plan`, Codex's
    /// `read-only`), any other in the mode the session started in.
    fn begin(&mut self, out: &mut Vec<EventKind>) {
        if let Some(model) = self.model.take() {
            // OpenCode offers its models as a configuration option of category `model`.
            let option = self
                .options
                .get("configOptions")
                .and_then(Value::as_array)
                .and_then(|o| {
                    o.iter()
                        .find(|o| o.get("category").and_then(Value::as_str) == Some("model"))
                });
            let offered = option.is_some_and(|o| {
                o.get("options").and_then(Value::as_array).is_some_and(|v| {
                    v.iter()
                        .any(|v| v.get("value").and_then(Value::as_str) == Some(model.as_str()))
                })
            });
            match option.and_then(|o| o.get("id")).and_then(Value::as_str) {
                Some(id) if offered => {
                    let current = option
                        .and_then(|o| o.get("currentValue"))
                        .and_then(Value::as_str);
                    if current != Some(model.as_str()) {
                        let session = self.session.clone().unwrap_or_default();
                        let params = json!({"sessionId": session, "configId": id, "value": model});
                        self.request(Asked::SetModel, "session/set_config_option", params);
                        return;
                    }
                }
                _ => out.push(EventKind::AgentWarning {
                    message: format!(
                        "the agent offers no model `{model}` to choose over ACP: its own configuration chooses"
                    ),
                }),
            }
        }
        if let Some(modes) = &self.modes {
            match modes.wanted(self.policy) {
                Some(i) if modes.available[i] != modes.current => {
                    let session = self.session.clone().unwrap_or_default();
                    let mode = modes.available[i].clone();
                    let (method, params) = match &modes.option {
                        Some(option) => (
                            "session/set_config_option",
                            json!({"sessionId": session, "configId": option, "value": mode}),
                        ),
                        None => (
                            "session/set_mode",
                            json!({"sessionId": session, "modeId": mode}),
                        ),
                    };
                    self.request(Asked::SetMode(i), method, params);
                    return;
                }
                Some(_) => {}
                None => out.push(read_only_unheld()),
            }
        } else if self.policy == Permissions::ReadOnly {
            out.push(read_only_unheld());
        }
        if let Some(prompt) = self.queued.take() {
            self.send_prompt(prompt);
        }
    }

    /// Asks the agent to cancel the prompt in flight; false when there is none to cancel (the
    /// agent never started its session), and only signals are left.
    pub(crate) fn cancel(&mut self) -> bool {
        match (&self.session, self.prompt) {
            (Some(session), Some(_)) => {
                let session = session.clone();
                self.told.cancel_sent();
                self.send(json!({
                    "jsonrpc": "2.0",
                    "method": "session/cancel",
                    "params": {"sessionId": session},
                }));
                true
            }
            _ => false,
        }
    }

    /// Acts on one message from the agent: emits what it says into `out`, answers it if it is a
    /// request, and says what it means for the turn.
    pub(crate) fn receive(&mut self, message: Incoming, out: &mut Vec<EventKind>) -> Reaction {
        match message {
            Incoming::Response {
                id,
                outcome,
                stopped_at_refusal,
                provider_failed,
            } => match self.response(&id, outcome, provider_failed, out) {
                Reaction::Answered(StreamEnd::Finished) if stopped_at_refusal => {
                    Reaction::Answered(StreamEnd::Truncated(acp::STOPPED_AT_REFUSAL.to_owned()))
                }
                reaction => reaction,
            },
            Incoming::Request {
                id,
                method,
                params,
                tool,
            } => match method.as_str() {
                "session/request_permission" => self.permission(id, &params, tool, out),
                _ => {
                    out.push(EventKind::AgentWarning {
                        message: format!(
                            "the agent asked for `{method}`, which runbook does not offer; answered with an error"
                        ),
                    });
                    self.send(json!({
                        "jsonrpc": "2.0",
                        "id": id,
                        "error": {"code": METHOD_NOT_FOUND, "message": format!("runbook does not implement {method}")},
                    }));
                    Reaction::None
                }
            },
        }
    }

    /// Answers a permission request a person decided on (`None`: nobody answered in time).
    pub(crate) fn answer(
        &mut self,
        ask: &Ask,
        option: Option<usize>,
        by: PermissionAnswerer,
        out: &mut Vec<EventKind>,
    ) {
        let chosen = option
            .and_then(|i| ask.options.get(i))
            .or_else(|| pick(&ask.options, false));
        self.reply(ask, chosen.cloned(), by, out);
    }

    /// Answers a permission request as cancelled: the prompt it belongs to is being cancelled.
    pub(crate) fn cancel_ask(
        &mut self,
        ask: &Ask,
        by: PermissionAnswerer,
        out: &mut Vec<EventKind>,
    ) {
        self.reply(ask, None, by, out);
    }

    fn reply(
        &mut self,
        ask: &Ask,
        chosen: Option<(String, String, String)>,
        by: PermissionAnswerer,
        out: &mut Vec<EventKind>,
    ) {
        let outcome = match &chosen {
            Some((id, _, _)) => json!({"outcome": "selected", "optionId": id}),
            None => json!({"outcome": "cancelled"}),
        };
        let option = chosen.map(|(_, _, kind)| kind);
        let allowed = option.as_deref().is_some_and(|k| k.starts_with("allow"));
        if !allowed {
            // Told before the agent can hear the answer and end the call.
            self.told.refused(&ask.call_id);
        }
        self.send(json!({"jsonrpc": "2.0", "id": ask.id, "result": {"outcome": outcome}}));
        out.push(EventKind::PermissionAnswered {
            call_id: ask.call_id.clone(),
            tool: ask.tool.clone(),
            input: ask.input.clone(),
            allowed,
            option,
            by,
        });
        if !allowed {
            out.push(EventKind::PermissionDenied {
                tool: ask.tool.clone(),
                detail: ask.input.clone(),
                call_id: Some(ask.call_id.clone()),
            });
        }
    }

    /// Closes the agent's stdin once everything sent is written: the agent's cue to exit.
    pub(crate) fn close(&mut self) {
        self.wire = None;
    }

    fn permission(
        &mut self,
        id: Value,
        params: &Value,
        shown: Option<ToolStart>,
        out: &mut Vec<EventKind>,
    ) -> Reaction {
        let call = params.get("toolCall").cloned().unwrap_or(Value::Null);
        let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        let input_map = call
            .get("rawInput")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let locations = acp::locations(&call);
        let title = text(&call, "title");
        let acp_kind = text(&call, "kind");
        let options = options(params);
        let mut input = acp::input_summary(
            &input_map,
            &locations,
            title.as_deref(),
            Path::new(&self.cwd),
        );
        let mut tool = acp::tool_name(title.as_deref(), acp_kind.as_deref());
        // The call as it was shown, when it was: the same name and input in both places.
        let mut acp_kind = acp_kind;
        if let Some(shown) = shown {
            tool = shown.name;
            acp_kind = acp_kind.or_else(|| acp_kind_of(shown.kind).map(str::to_owned));
            if input_map.is_empty() || input.is_empty() {
                input = shown.input;
            }
        }
        let ask = Ask {
            id,
            call_id: text(&call, "toolCallId").unwrap_or_default(),
            tool,
            input,
            options,
        };
        out.push(EventKind::PermissionRequested {
            call_id: ask.call_id.clone(),
            tool: ask.tool.clone(),
            input: ask.input.clone(),
            options: ask
                .options
                .iter()
                .map(|(_, _, kind)| kind.clone())
                .collect(),
        });
        if self.policy == Permissions::Agent && self.ask_person {
            return Reaction::Ask(ask);
        }
        let allow = allows(
            self.policy,
            acp_kind.as_deref(),
            &locations,
            Path::new(&self.cwd),
        );
        let chosen = pick(&ask.options, allow).cloned();
        self.reply(&ask, chosen, PermissionAnswerer::Policy, out);
        Reaction::None
    }

    /// The agent answered a request with an error: the turn ends failed, said once
    /// (`provider_failed`: the parser told the failed prompt as the provider's failure already).
    fn refused(
        &mut self,
        asked: Asked,
        error: &RpcError,
        provider_failed: bool,
        out: &mut Vec<EventKind>,
    ) -> Reaction {
        let what = match asked {
            Asked::Initialize => "initialize",
            Asked::NewSession => "session/new",
            Asked::Prompt => "the prompt",
            Asked::SetMode(_) => "to switch its mode",
            Asked::SetModel => "the model",
        };
        if asked == Asked::Prompt {
            self.prompt = None;
        }
        if !provider_failed {
            out.push(EventKind::AgentError {
                name: format!("JSON-RPC error {}", error.code),
                message: error.message.clone(),
            });
        }
        Reaction::Answered(StreamEnd::Failed(format!(
            "the agent refused {what}: {} (JSON-RPC error {})",
            error.message, error.code
        )))
    }

    /// `provider_failed`: the parser told the failed prompt as the provider's failure already.
    fn response(
        &mut self,
        id: &Value,
        outcome: Result<Value, RpcError>,
        provider_failed: bool,
        out: &mut Vec<EventKind>,
    ) -> Reaction {
        let Some(asked) = id.as_u64().and_then(|n| self.asked.remove(&n)) else {
            out.push(EventKind::AgentWarning {
                message: format!(
                    "the agent answered a request runbook never made (id {id}); ignored"
                ),
            });
            return Reaction::None;
        };
        let result = match outcome {
            Ok(result) => result,
            Err(error) => return self.refused(asked, &error, provider_failed, out),
        };
        match asked {
            Asked::Initialize => {
                let cwd = self.cwd.clone();
                self.request(
                    Asked::NewSession,
                    "session/new",
                    json!({"cwd": cwd, "mcpServers": []}),
                );
                Reaction::None
            }
            Asked::NewSession => {
                let Some(session) = result.get("sessionId").and_then(Value::as_str) else {
                    return Reaction::Answered(StreamEnd::Failed(
                        "the agent's answer to session/new names no sessionId".to_owned(),
                    ));
                };
                self.session = Some(session.to_owned());
                self.modes = Modes::of(&result);
                self.options = result;
                self.begin(out);
                Reaction::None
            }
            Asked::SetModel => {
                self.begin(out);
                Reaction::None
            }
            Asked::SetMode(i) => {
                if let Some(modes) = &mut self.modes {
                    modes.current = modes.available[i].clone();
                }
                self.begin(out);
                Reaction::None
            }
            Asked::Prompt => {
                self.prompt = None;
                let end = match result.get("stopReason").and_then(Value::as_str) {
                    Some(reason) => acp::stop_reason_end(reason),
                    None => StreamEnd::Truncated(
                        "the agent answered the prompt without a stopReason".to_owned(),
                    ),
                };
                Reaction::Answered(end)
            }
        }
    }

    fn send_prompt(&mut self, text: String) {
        let session = self.session.clone().unwrap_or_default();
        // Told before the agent can answer it.
        self.told.prompt_sent(self.next_id + 1);
        let id = self.request(
            Asked::Prompt,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        );
        self.prompt = Some(id);
    }

    fn request(&mut self, asked: Asked, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.asked.insert(id, asked);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    fn send(&mut self, message: Value) {
        if let Some(wire) = &self.wire {
            let _ = wire.send(message.to_string());
        }
    }
}

/// The warning for a read-only turn of an agent that has no read-only mode.
fn read_only_unheld() -> EventKind {
    EventKind::AgentWarning {
        message: "the agent offers no read-only mode: --permissions read-only holds only for what it asks permission for".to_owned(),
    }
}

/// The ACP kind of a tool of universal kind `kind`.
fn acp_kind_of(kind: ToolKind) -> Option<&'static str> {
    match kind {
        ToolKind::Read => Some("read"),
        ToolKind::Edit | ToolKind::Write => Some("edit"),
        ToolKind::Shell => Some("execute"),
        ToolKind::Search => Some("search"),
        ToolKind::Fetch => Some("fetch"),
        _ => None,
    }
}

/// Whether `policy` lets a tool of ACP kind `kind`, on `locations`, run without asking.
fn allows(policy: Permissions, kind: Option<&str>, locations: &[String], cwd: &Path) -> bool {
    let inside = locations.iter().all(|l| Path::new(l).starts_with(cwd));
    match policy {
        Permissions::Agent => false,
        Permissions::Bypass => true,
        Permissions::ReadOnly => matches!(kind, Some("read" | "search" | "think")) && inside,
        Permissions::Workspace => {
            matches!(
                kind,
                Some("read" | "search" | "think" | "edit" | "delete" | "move" | "execute")
            ) && inside
        }
    }
}

/// The option that allows once (else always), or that rejects once (else always).
fn pick(options: &[(String, String, String)], allow: bool) -> Option<&(String, String, String)> {
    let kinds: [&str; 2] = if allow {
        ["allow_once", "allow_always"]
    } else {
        ["reject_once", "reject_always"]
    };
    kinds
        .iter()
        .find_map(|k| options.iter().find(|(_, _, kind)| kind == k))
}

/// The task that writes runbook's messages, one a line, to the agent's stdin and to the raw log
/// (marked), both through the masking writer; the agent's stdin is closed when the client is
/// done with it.
fn writer(
    stdin: impl AsyncWrite + Unpin + Send + 'static,
    mut raw: RawSink,
    redactor: Redactor,
) -> mpsc::UnboundedSender<String> {
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let mut stdin = MaskedWriter::pipe(stdin);
    tokio::spawn(async move {
        let mut broken = false;
        while let Some(mut line) = rx.recv().await {
            line.push('\n');
            let masked = redactor.mask(line.as_bytes());
            let logged = [SENT_MARK.as_bytes(), masked.as_bytes()].concat();
            if let Err(e) = raw.file.write_all(&Masked::made_of_masked(&logged)) {
                raw.failed(e);
            }
            if broken {
                continue;
            }
            // An agent that closed its stdin is gone or going: its exit tells the rest.
            broken = stdin.write_all_async(&masked).await.is_err();
        }
        let _ = stdin.shutdown().await;
    });
    tx
}

/// The options a permission request offers: (id, name, kind) each.
fn options(params: &Value) -> Vec<(String, String, String)> {
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    params
        .get("options")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|o| {
            Some((
                text(o, "optionId")?,
                text(o, "name").unwrap_or_default(),
                text(o, "kind").unwrap_or_default(),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests;
