//! Integration tests: the real `runbook` binary against the fake agent and the real OpenCode,
//! Claude Code and Codex CLIs driven by fake model providers.
#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests write their own fixtures, and print and read the streams as they like"
)]

mod acp;
mod acp_adapters;
mod acp_opencode_v2;
mod acp_scripted;
mod batch;
mod batch_opencode;
mod bucket;
mod bucket_foreign;
mod checks;
mod config;
mod conformance;
mod conformance_v2;
mod demo;
mod docs_shape;
mod doctor;
mod drift;
mod fakes;
mod faults_budget;
mod faults_edges;
mod faults_input;
mod faults_known;
mod faults_observers;
mod faults_procs;
mod faults_storage;
mod fidelity;
mod first_run;
mod fleet_gha;
mod fleet_quoting;
mod generic;
mod git_planted;
mod guide_examples;
mod help;
mod idle_cpu;
mod install_commands;
mod layout;
mod live;
mod live_codex;
mod live_opencode_v2;
mod live_stuck;
mod masking;
mod next_run;
mod observers;
mod opencode;
mod opencode_service;
mod plan;
mod planted;
mod produced;
mod readme;
mod record;
mod report_markdown;
mod run;
mod sandbox;
mod sandbox_bwrap;
mod sandbox_live;
mod sandbox_seen;
mod stats;
mod stats_page;
mod status;
mod stuck;
mod stuck_acp;
mod summary;
mod support;
mod terminal;
mod terminal_injection;
mod trust;
mod unknown_lines;
mod unknown_tokens;
mod view;
mod watchdog_cpu;
