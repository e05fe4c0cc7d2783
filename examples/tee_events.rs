//! Runs an agent on a task, as `runbook run` would, and writes every event with its meta to a
//! file as JSON lines while the run goes on.
//!
//! ```sh
//! cargo run --example tee_events -- events.ndjson "Fix the flaky test"
//! ```
//!
//! The agent, its model, limits and checks come from runbook's configuration (`runbook.toml`,
//! `RUNBOOK_*` variables), as for `runbook run`.

#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "a program of the library's user, not runbook: it prints and writes what it likes"
)]
#![allow(clippy::print_stderr, clippy::print_stdout)] // printing is what they are for

use std::io::Write as _;
use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(path), Some(prompt)) = (args.next(), args.next()) else {
        eprintln!("usage: tee_events FILE PROMPT");
        return ExitCode::from(2);
    };
    let mut file = match std::fs::File::create(&path) {
        Ok(file) => std::io::BufWriter::new(file),
        Err(e) => {
            eprintln!("error: cannot create {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let run = runbook::Run::new(prompt)
        .show(true)
        .on_event(move |event, meta| {
            // The run never waits for this: a slow disk only costs this file some events.
            let line = serde_json::json!({ "event": event, "meta": meta });
            let _ = writeln!(file, "{line}").and_then(|()| file.flush());
        });
    match run.run().await {
        Ok(receipt) => {
            eprintln!("{:?}; events in {path}", receipt.outcome);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
