//! Integration tests: the real `runbook` binary against the fake agent and the real OpenCode CLI.

mod conformance;
mod generic;
mod opencode;
mod run;
mod status;
mod support;
