//! Runs an agent on a task and counts its tool calls live: each finished call prints the count
//! so far on stderr, and the run's receipt the total.
//!
//! ```sh
//! cargo run --example count_tools -- "Fix the flaky test"
//! ```

#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "a program of the library's user, not runbook: it prints and writes what it likes"
)]
#![allow(clippy::print_stderr, clippy::print_stdout)] // printing is what they are for

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use runbook::event::{EventKind, ToolStatus};

#[tokio::main]
async fn main() -> ExitCode {
    let Some(prompt) = std::env::args().nth(1) else {
        eprintln!("usage: count_tools PROMPT");
        return ExitCode::from(2);
    };
    let calls = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicU64::new(0));
    let (seen, seen_failed) = (Arc::clone(&calls), Arc::clone(&failed));
    let run = runbook::Run::new(prompt).on_event_async(move |event, meta| {
        let (calls, failed) = (Arc::clone(&seen), Arc::clone(&seen_failed));
        async move {
            if let EventKind::ToolCompleted(end) = event.kind {
                let n = calls.fetch_add(1, Ordering::Relaxed) + 1;
                if end.status != ToolStatus::Ok {
                    failed.fetch_add(1, Ordering::Relaxed);
                }
                eprintln!(
                    "turn {}: {} {} — {n} tool calls so far ({} not ok)",
                    meta.turn_index,
                    end.name,
                    end.input,
                    failed.load(Ordering::Relaxed)
                );
            }
        }
    });
    match run.run().await {
        Ok(receipt) => {
            println!(
                "{} tool calls ({} seen live); outcome {:?}",
                receipt.tool_calls.total,
                calls.load(Ordering::Relaxed),
                receipt.outcome
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
