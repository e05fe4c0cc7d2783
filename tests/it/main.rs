//! Integration tests: the real `runbook` binary against the fake agent and the real OpenCode CLI,
//! and the fake providers against the real Claude Code and Codex CLIs.

mod fakes;
mod opencode;
mod run;
mod status;
mod support;
