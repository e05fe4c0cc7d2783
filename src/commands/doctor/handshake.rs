//! The Agent Client Protocol handshake doctor makes with an ACP adapter: it starts the adapter,
//! sends `initialize`, and reads the answer (the protocol version and the agent's info) within
//! a time limit; then it ends the adapter with its process group. Everything the adapter says
//! is foreign: it is kept only escaped and cut to a line.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};

/// The most of the adapter's output read while waiting for its answer.
const ANSWER_BYTES: u64 = 1 << 20;
/// The longest a piece of foreign text is kept.
const FOREIGN_CHARS: usize = 200;

/// Who the adapter says it is (its `agentInfo`), escaped.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub(super) struct AgentInfo {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

impl AgentInfo {
    /// `Claude Agent 0.23.1`: its title (else name) and version, as far as it said them.
    pub(super) fn line(&self) -> Option<String> {
        let who = self.title.as_ref().or(self.name.as_ref());
        let words: Vec<&str> = [who, self.version.as_ref()]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        (!words.is_empty()).then(|| words.join(" "))
    }
}

/// How the handshake went.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Handshake {
    /// It answered `initialize`.
    Answered {
        protocol_version: Option<u64>,
        agent: Option<AgentInfo>,
    },
    /// It answered with a JSON-RPC error (escaped).
    Refused(String),
    /// It could not be started (why).
    NotStarted(String),
    /// Its output ended before it answered; its exit code if it had one by then.
    Ended(Option<i32>),
    /// No answer within the time given.
    Silent,
}

/// `text` as doctor may keep it: control characters made visible, on one line, cut short.
fn foreign(text: &str) -> String {
    crate::format::truncate(&crate::foreign::term::escape_line(text), FOREIGN_CHARS)
}

/// Starts `program args` and makes the handshake, for at most `timeout`.
pub(super) async fn initialize(program: &Path, args: &[String], timeout: Duration) -> Handshake {
    let spawned = tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => return Handshake::NotStarted(e.to_string()),
    };
    let group = child.id().and_then(|g| i32::try_from(g).ok());
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Handshake::NotStarted("its pipes could not be opened".to_owned());
    };
    let request = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": crate::supervisor::ACP_PROTOCOL_VERSION,
            "clientCapabilities": {
                "fs": {"readTextFile": false, "writeTextFile": false},
                "terminal": false,
            },
            "clientInfo": {"name": "runbook", "version": env!("CARGO_PKG_VERSION")},
        },
    });
    let answer = tokio::time::timeout(timeout, async {
        // An adapter that cannot take the request says so by not answering it.
        let _ = stdin.write_all(format!("{request}\n").as_bytes()).await;
        let _ = stdin.flush().await;
        let mut lines = BufReader::new(stdout.take(ANSWER_BYTES)).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message.get("id") == Some(&json!(1)) {
                return Some(message);
            }
        }
        None
    })
    .await;
    let handshake = match answer {
        Err(_) => Handshake::Silent,
        Ok(Some(message)) => read_answer(&message),
        Ok(None) => {
            let exited = tokio::time::timeout(Duration::from_millis(500), child.wait()).await;
            Handshake::Ended(exited.ok().and_then(Result::ok).and_then(|s| s.code()))
        }
    };
    drop(stdin);
    if let Some(group) = group {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(group),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let _ = child.kill().await;
    handshake
}

/// What an answer to `initialize` says.
fn read_answer(message: &Value) -> Handshake {
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(foreign);
    if let Some(error) = message.get("error") {
        let code = error
            .get("code")
            .and_then(Value::as_i64)
            .unwrap_or_default();
        let said = text(error, "message").unwrap_or_default();
        return Handshake::Refused(format!("{said} (JSON-RPC error {code})"));
    }
    let result = message.get("result").unwrap_or(&Value::Null);
    let agent = result.get("agentInfo").map(|info| AgentInfo {
        name: text(info, "name"),
        title: text(info, "title"),
        version: text(info, "version"),
    });
    Handshake::Answered {
        protocol_version: result.get("protocolVersion").and_then(Value::as_u64),
        agent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_read_with_its_foreign_text_escaped() {
        let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {
            "protocolVersion": 1,
            "agentInfo": {"name": "evil\u{1b}[31m", "title": "Line\nbreak\u{202e}", "version": "1.0"},
        }});
        let Handshake::Answered {
            protocol_version,
            agent: Some(agent),
        } = read_answer(&answer)
        else {
            panic!("not answered");
        };
        assert_eq!(protocol_version, Some(1));
        let line = agent.line().unwrap();
        assert!(!line.contains(['\u{1b}', '\n', '\u{202e}']), "{line}");
        assert!(
            line.starts_with("Line\\nbreak") && line.ends_with(" 1.0"),
            "{line}"
        );
        assert!(agent.name.unwrap().starts_with("evil\\e"));
        let refused = json!({"id": 1, "error": {"code": -32600, "message": "no\u{7}"}});
        assert_eq!(
            read_answer(&refused),
            Handshake::Refused("no\\a (JSON-RPC error -32600)".to_owned())
        );
    }
}
