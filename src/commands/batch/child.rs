//! One task's run: `runbook run --json` of this same binary as a child process in a process
//! group of its own (Ctrl-C at the terminal reaches the batch, which passes it on), its events
//! read from its stdout as it goes, its receipt from the last line.

use std::ffi::OsString;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::Stdio;

use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, BufReader};

use crate::event::Event;
use crate::receipt::Receipt;

/// The longest line read from a run's stdout; longer ones are skipped.
const MAX_LINE: usize = 16 * 1024 * 1024;
/// How much of a run's stderr is kept, to say why it ended without a receipt.
const STDERR_TAIL: usize = 4096;

/// What a running task tells the batch.
#[derive(Debug)]
pub(super) enum Said {
    /// Its process started.
    Spawned(u32),
    /// One of its events, and the line it came as.
    Event(Box<Event>, String),
    /// Its receipt, and the line it came as.
    Receipt(Box<Receipt>, String),
    /// It exited: its exit code, and the end of what it wrote on stderr.
    Exited(Option<i32>, String),
}

/// Starts the run and tells `said` what it says until it exits. An error: it could not be
/// started.
pub(super) async fn run(
    argv: Vec<OsString>,
    cwd: &Path,
    env: Vec<(String, OsString)>,
    said: impl Fn(Said),
) -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    let mut command = std::process::Command::new(exe);
    command
        .args(argv)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for (name, value) in env {
        command.env(name, value);
    }
    crate::linux::die_with_parent(&mut command);
    let mut child = tokio::process::Command::from(command).spawn()?;
    said(Said::Spawned(child.id().unwrap_or(0)));
    let stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let tail = tokio::spawn(async move {
        let mut all = Vec::new();
        let mut buf = [0u8; 8192];
        while let Ok(n) = stderr.read(&mut buf).await {
            if n == 0 {
                break;
            }
            all.extend_from_slice(&buf[..n]);
            if all.len() > 2 * STDERR_TAIL {
                all.drain(..all.len() - STDERR_TAIL);
            }
        }
        String::from_utf8_lossy(&all).into_owned()
    });
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader)
            .take(MAX_LINE as u64)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => break,
            Ok(_) if line.last() != Some(&b'\n') && line.len() >= MAX_LINE => {
                skip_rest(&mut reader).await;
            }
            Ok(_) => {
                if let Some(line) = read(&line) {
                    said(line);
                }
            }
        }
    }
    let status = child.wait().await.ok();
    let tail = tail.await.unwrap_or_default();
    let code = status.and_then(|s| s.code());
    said(Said::Exited(code, tail));
    Ok(())
}

/// Reads past the rest of an overlong line.
async fn skip_rest<R: tokio::io::AsyncBufRead + Unpin>(reader: &mut R) {
    let mut sink = Vec::new();
    loop {
        sink.clear();
        match reader.take(1 << 20).read_until(b'\n', &mut sink).await {
            Ok(0) | Err(_) => return,
            Ok(_) if sink.last() == Some(&b'\n') => return,
            Ok(_) => {}
        }
    }
}

/// A line of `runbook run --json`: an event, or the receipt (`"type": "receipt"`).
fn read(line: &[u8]) -> Option<Said> {
    let text = std::str::from_utf8(line).ok()?.trim_end();
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    if value.get("type").and_then(serde_json::Value::as_str) == Some("receipt") {
        let receipt: Receipt = serde_json::from_value(value).ok()?;
        Some(Said::Receipt(Box::new(receipt), text.to_owned()))
    } else {
        let event: Event = serde_json::from_value(value).ok()?;
        Some(Said::Event(Box::new(event), text.to_owned()))
    }
}
