//! An S3-compatible server on 127.0.0.1 for scripts that need a real bucket offline
//! (`.ci/slurm-check`): the tests' server (`tests/it/support/s3.rs`: `s3s-fs` keeps the objects
//! as files under DIR, `s3s` checks every request's SigV4 signature against one access key).
//! It prints the variables a client needs, `NAME=VALUE` one per line (`AWS_ENDPOINT`, the key,
//! `RUNBOOK_S3_BUCKET`), then serves until it is killed.
//!
//! ```sh
//! cargo run --example s3_server -- DIR
//! ```

#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "a program of the library's user, not runbook: it prints and writes what it likes"
)]
#![allow(clippy::print_stderr, clippy::print_stdout)] // printing is what they are for

use std::process::ExitCode;

#[allow(dead_code, reason = "the tests' server: this program uses part of it")]
#[path = "../tests/it/support/s3.rs"]
mod s3;

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1) else {
        eprintln!("usage: s3_server DIR");
        return ExitCode::from(2);
    };
    let server = s3::S3Server::start(std::path::Path::new(&dir));
    for (name, value) in server.env() {
        println!("{name}={value}");
    }
    println!("RUNBOOK_S3_BUCKET={}", s3::BUCKET);
    loop {
        std::thread::park();
    }
}
