//! The drift check: the conformance scenarios run live against whichever agent CLIs
//! `RUNBOOK_TEST_OPENCODE` / `RUNBOOK_TEST_CLAUDE` / `RUNBOOK_TEST_CODEX` name (the pinned ones by
//! default), compared with what runbook knows of the pinned versions: the recordings in
//! `fixtures/` (event types and their fields, denial texts) and the facts the live suite expects
//! (tool calls, outcome, tokens, cost, denials). `.ci/drift-check` installs the newest releases
//! and runs [`every_scenario_against_the_installed_agents`]; the smoke test runs the same against
//! the pinned versions, which must show no drift, so the check itself cannot rot.

use std::collections::{BTreeMap, BTreeSet};
use std::panic::AssertUnwindSafe;
use std::path::Path;

use runbook::event::{EventKind, ToolStatus};
use serde_json::Value;

use crate::conformance::Scenario;
use crate::live::{self, Prepared, Ran};
use crate::support;

type Prepare = fn(Scenario) -> Option<Prepared>;

/// The agents, how to prepare a live run of each, and their recordings' directory.
fn agents() -> [(&'static str, Prepare); 3] {
    [
        ("opencode", live::opencode as Prepare),
        ("claude", live::claude as Prepare),
        ("codex", live::codex as Prepare),
    ]
}

/// The scenarios every agent was recorded in, and the name of the recording.
fn recorded(agent: &str) -> Vec<(Scenario, &'static str)> {
    use Scenario::*;
    let opencode = agent == "opencode";
    vec![
        (Text, if opencode { "a_text" } else { "text" }),
        (ReadEdit, if opencode { "b_read_edit" } else { "read_edit" }),
        (Shell, if opencode { "c_bash" } else { "shell" }),
        (
            ToolFail,
            if opencode {
                "d_tool_error"
            } else {
                "tool_fail"
            },
        ),
        (
            ProviderError,
            if opencode { "e1_http500" } else { "http500" },
        ),
        (
            PermissionDenied,
            if opencode {
                "i1_permission_bash_ask"
            } else {
                "permission_denied"
            },
        ),
        (
            Subagent,
            if opencode {
                "h_task_subagent"
            } else {
                "subagent"
            },
        ),
    ]
}

/// The kind of a native line: its `type`, refined by what tells its events apart (Claude's
/// `system` subtype, Codex's item type, OpenCode's part type).
fn line_kind(line: &Value) -> String {
    let kind = line["type"].as_str().unwrap_or("(no type)");
    let sub = line["subtype"]
        .as_str()
        .or_else(|| line["item"]["type"].as_str())
        .or_else(|| line["part"]["type"].as_str())
        .or_else(|| line["event"]["type"].as_str());
    match sub {
        Some(sub) => format!("{kind}/{sub}"),
        None => kind.to_owned(),
    }
}

/// Every field path of `value` (`message.content[].type`), objects' keys joined with dots and
/// arrays as `[]`. Maps keyed by data (a model's name, a subagent's id) are cut at their keys.
fn paths(value: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                let data_key = key.contains(['-', '.', '/', ':']) || key.len() > 40;
                let key = if data_key { "*" } else { key.as_str() };
                let path = if prefix.is_empty() {
                    key.to_owned()
                } else {
                    format!("{prefix}.{key}")
                };
                out.insert(path.clone());
                paths(v, &path, out);
            }
        }
        Value::Array(items) => {
            for v in items {
                paths(v, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

/// The kinds of lines in native output, each with its field paths.
type Shapes = BTreeMap<String, BTreeSet<String>>;

fn shapes(text: &str, into: &mut Shapes) {
    for line in text.lines() {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let mut fields = BTreeSet::new();
        paths(&value, "", &mut fields);
        into.entry(line_kind(&value)).or_default().extend(fields);
    }
}

/// The shapes of all of an agent's recordings: `fixtures/AGENT/`, and those of the other
/// releases it is tested with, `fixtures/AGENT-VERSION/`.
fn recorded_shapes(agent: &str) -> Shapes {
    let mut all = Shapes::new();
    let dirs: Vec<_> = std::fs::read_dir(support::fixtures())
        .expect("the fixtures")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n == agent || n.strip_prefix(agent).is_some_and(|v| v.starts_with('-'))
            })
        })
        .collect();
    let mut files: Vec<_> = dirs
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).expect("the agent's fixtures"))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".stdout.ndjson"))
        .collect();
    files.sort();
    for file in files {
        shapes(
            &std::fs::read_to_string(file).expect("read a fixture"),
            &mut all,
        );
    }
    all
}

/// A text with its absolute paths and numbers replaced, to compare wordings across runs.
fn wording(text: &str) -> String {
    text.split_whitespace()
        .map(|w| {
            let bare = w.trim_matches(|c: char| "'\"`()[],;:".contains(c));
            if bare.starts_with('/') {
                "PATH"
            } else if !bare.is_empty() && bare.chars().all(|c| c.is_ascii_digit() || c == '.') {
                "N"
            } else {
                w
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The wordings of the denials of a run: the tool and what the agent said.
fn denials(events: &[runbook::event::Event]) -> BTreeSet<String> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCompleted(t) if t.status == ToolStatus::Denied => Some(format!(
                "{}: {}",
                t.name,
                wording(t.error.as_deref().unwrap_or(""))
            )),
            _ => None,
        })
        .collect()
}

/// The denials `runbook replay` reads from a recording.
fn recorded_denials(agent: &str, name: &str) -> BTreeSet<String> {
    let ctx = support::TestContext::new();
    let file = support::fixtures().join(format!("{agent}/{name}.stdout.ndjson"));
    let mut args = vec!["replay", "--instant", "--json", "--agent", agent];
    let file = file.to_str().expect("UTF-8 path").to_owned();
    args.push(&file);
    let out = ctx.run(&args);
    let (events, _) = support::events_and_receipt(&out.stdout);
    denials(&events)
}

/// What differs from the pinned version, by heading; empty when nothing does.
#[derive(Default)]
struct Drift {
    findings: BTreeMap<String, Vec<String>>,
}

impl Drift {
    fn note(&mut self, heading: &str, finding: String) {
        self.findings
            .entry(heading.to_owned())
            .or_default()
            .push(finding);
    }

    fn report(&self) -> String {
        let mut out = String::new();
        for (heading, findings) in &self.findings {
            out.push_str(&format!("## {heading}\n\n"));
            for f in findings {
                out.push_str(&format!("- {f}\n"));
            }
            out.push('\n');
        }
        out
    }
}

/// Runs `scenario` live and notes every way it differs from the pinned version.
fn compare(
    agent: &str,
    prepare: Prepare,
    scenario: Scenario,
    recording: &str,
    known: &Shapes,
    drift: &mut Drift,
) {
    let Some(ran) = live::run(agent, scenario, prepare, &[]) else {
        return;
    };
    let what = format!("{agent} {scenario:?}");
    let version = ran
        .receipt
        .agent
        .version
        .clone()
        .unwrap_or_else(|| "version unknown".to_owned());
    // The facts the live suite expects of the pinned version.
    let checked = std::panic::catch_unwind(AssertUnwindSafe(|| check_facts(&ran, scenario)));
    if let Err(panic) = checked {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default();
        // The assertion's own words, without the run's account the live suite adds to them.
        let message = message.replace(&ran.why, "");
        let first = message
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .take(3)
            .collect::<Vec<_>>()
            .join(" / ");
        drift.note(
            "Receipts that do not match",
            format!("{what} ({version}): {first}"),
        );
    }
    // Lines runbook could not read.
    for e in &ran.events {
        if let EventKind::Unparsed(u) = &e.kind {
            drift.note(
                "Lines runbook could not read",
                format!("{what}: {:?} {}", u.reason, u.head),
            );
        }
    }
    // New kinds of lines, and new fields of known ones: known are those of the recordings and
    // of the same scenario run live with the pinned version (the recordings need not hold every
    // field a scenario's lines can have).
    let mut seen = Shapes::new();
    shapes(&native_stdout(&ran), &mut seen);
    let mut known = known.clone();
    if runs_pinned(agent) {
        // The live run was the pinned version's: running it again would only repeat it.
        shapes(&native_stdout(&ran), &mut known);
    } else if let Some(pinned) = support::pinned(|| live::run(agent, scenario, prepare, &[])) {
        shapes(&native_stdout(&pinned), &mut known);
    }
    for (kind, fields) in &seen {
        match known.get(kind) {
            None => drift.note("New event types", format!("{what}: `{kind}`")),
            Some(known_fields) => {
                let new: Vec<&String> = fields.difference(known_fields).collect();
                if !new.is_empty() {
                    let new: Vec<String> = new.iter().map(|f| format!("`{f}`")).collect();
                    drift.note(
                        "New fields",
                        format!("{what}: `{kind}` has {}", new.join(", ")),
                    );
                }
            }
        }
    }
    // Denials worded otherwise than in the recording.
    if scenario == Scenario::PermissionDenied {
        let now = denials(&ran.events);
        let then = recorded_denials(agent, recording);
        if now != then {
            drift.note(
                "Changed denial texts",
                format!("{what}: recorded {then:?}, now {now:?}"),
            );
        }
    }
}

/// Whether `agent`'s live runs use its pinned CLI (no `RUNBOOK_TEST_*` names another one).
fn runs_pinned(agent: &str) -> bool {
    let bin = || match agent {
        "opencode" => support::opencode_bin(),
        "claude" => support::claude_bin(),
        _ => support::codex_bin(),
    };
    bin() == support::pinned(bin)
}

/// The agent's stdout as the run directory keeps it.
fn native_stdout(ran: &Ran) -> String {
    std::fs::read_to_string(ran.ctx.run_dir().join("stdout.log")).unwrap_or_default()
}

/// The facts and the exit status the live suite expects of the pinned version.
fn check_facts(ran: &Ran, scenario: Scenario) {
    live::assert_scenario(ran, scenario);
}

/// The drift of every agent in `scenarios`, as a Markdown report (empty: none).
fn drift_of(scenarios: &[Scenario]) -> String {
    drift_of_agents(scenarios, |_| true)
}

/// [`drift_of`] the agents `which` keeps.
fn drift_of_agents(scenarios: &[Scenario], which: impl Fn(&str) -> bool) -> String {
    let mut drift = Drift::default();
    for (agent, prepare) in agents().into_iter().filter(|(a, _)| which(a)) {
        let known = recorded_shapes(agent);
        for (scenario, recording) in recorded(agent) {
            if scenarios.contains(&scenario) {
                compare(agent, prepare, scenario, recording, &known, &mut drift);
            }
        }
    }
    drift.report()
}

/// Run by `.ci/drift-check` (and by hand): every recorded scenario against the installed
/// agents; the report goes to stdout and to `RUNBOOK_DRIFT_REPORT` when set. Fails when there is
/// drift.
#[test]
#[ignore = "the drift check: run by .ci/drift-check against the newest agent releases"]
fn every_scenario_against_the_installed_agents() {
    let all: Vec<Scenario> = recorded("codex").into_iter().map(|(s, _)| s).collect();
    let report = drift_of(&all);
    let text = if report.is_empty() {
        "No drift: every scenario matches the pinned versions.\n".to_owned()
    } else {
        format!("# Drift from the pinned agent versions\n\n{report}")
    };
    if let Some(path) = std::env::var_os("RUNBOOK_DRIFT_REPORT") {
        std::fs::write(Path::new(&path), &text).expect("write the drift report");
    }
    #[allow(clippy::print_stdout)]
    {
        print!("{text}");
    }
    assert!(report.is_empty(), "{text}");
}

/// The check against the pinned versions themselves finds nothing, in the scenarios that tell
/// most (tool calls, a denial), one test per agent. These are also the live suite's runs of the
/// pinned CLIs in these scenarios (see `live.rs`).
mod the_drift_check_finds_no_drift_in_the_pinned_versions {
    use super::*;

    fn no_drift(agent: &str) {
        let scenarios = [Scenario::ReadEdit, Scenario::PermissionDenied];
        let report = drift_of_agents(&scenarios, |a| a == agent);
        assert!(report.is_empty(), "{report}");
    }

    #[test]
    fn claude_code() {
        no_drift("claude");
    }

    #[test]
    fn codex_cli() {
        no_drift("codex");
    }

    #[test]
    fn opencode_cli() {
        no_drift("opencode");
    }
}

#[test]
fn a_new_event_type_and_a_new_field_are_told_apart_from_known_ones() {
    let mut known = Shapes::new();
    shapes(
        r#"{"type":"system","subtype":"init","model":"m","tools":["a"]}"#,
        &mut known,
    );
    let mut now = Shapes::new();
    shapes(
        "{\"type\":\"system\",\"subtype\":\"init\",\"model\":\"m\",\"tools\":[\"a\"],\"fast_mode\":true}\n\
         {\"type\":\"system\",\"subtype\":\"permission_denied\",\"tool_name\":\"Bash\"}\n\
         {\"modelUsage\":{\"claude-x-1\":{\"inputTokens\":1}},\"type\":\"result\"}",
        &mut now,
    );
    assert!(!known.contains_key("system/permission_denied"));
    assert!(now.contains_key("system/permission_denied"));
    let new: Vec<&String> = now["system/init"]
        .difference(&known["system/init"])
        .collect();
    assert_eq!(new, ["fast_mode"]);
    // A model's name is data, not a field.
    assert!(now["result"].contains("modelUsage.*.inputTokens"));
    assert_eq!(
        wording("Permission to write /tmp/x/a.txt was denied after 3 tries"),
        "Permission to write PATH was denied after N tries"
    );
}
