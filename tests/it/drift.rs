//! The drift check: the conformance scenarios run live against whichever agent CLIs
//! `RUNBOOK_TEST_OPENCODE` / `RUNBOOK_TEST_CLAUDE` / `RUNBOOK_TEST_CODEX` name (the pinned ones by
//! default). Each release is judged by its own truth: runbook's receipt against what the release
//! itself reported (Claude Code's last `result`: `total_cost_usd`, `modelUsage`, `num_turns`) and
//! what the scripted provider served (tokens, tool calls, outcome), and Claude Code's own cost of
//! each model against runbook's price table; never against another release's numbers. What
//! differs from the pinned release (its default model, its cost, its tokens, its denials' words)
//! is information, not drift. Drift is a receipt that does not match its own release, a line
//! runbook could not read, a price runbook's table disagrees with, and event types or fields no
//! recording has (`fixtures/`). `.ci/drift-check` installs the releases and runs
//! [`every_scenario_against_the_installed_agents`]; the smoke test runs the same against the
//! pinned versions, which must show neither drift nor information, so the check cannot rot.

use std::collections::{BTreeMap, BTreeSet};
use std::panic::AssertUnwindSafe;
use std::path::Path;

use runbook::event::{EventKind, ToolStatus};
use serde_json::Value;

use crate::conformance::{
    Expected, Scenario, assert_facts, claude_own, facts, price_disagreements,
};
use crate::live::{self, Prepared, Ran};
use crate::support;

type Prepare = fn(Scenario) -> Option<Prepared>;

/// The agents, how to prepare a live run of each, and their recordings' directory.
fn agents() -> [(&'static str, Prepare); 3] {
    [
        ("opencode", live::opencode_with_snapshots as Prepare),
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

/// What a release does that runbook misreads or does not know, by heading (`findings`: drift),
/// and how it differs from the pinned release (`info`: not drift); empty when nothing does.
#[derive(Default)]
struct Drift {
    findings: BTreeMap<String, Vec<String>>,
    info: Vec<String>,
    /// The releases run, with how many scenarios each.
    checked: BTreeMap<String, usize>,
}

impl Drift {
    fn note(&mut self, heading: &str, finding: String) {
        self.findings
            .entry(heading.to_owned())
            .or_default()
            .push(finding);
    }

    /// A difference from the pinned release, said once.
    fn inform(&mut self, line: String) {
        if !self.info.contains(&line) {
            self.info.push(line);
        }
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

    fn information(&self) -> String {
        let mut out = String::new();
        for (release, scenarios) in &self.checked {
            out.push_str(&format!(
                "- information: checked {release} in {scenarios} scenarios\n"
            ));
        }
        for line in &self.info {
            out.push_str(&format!("- information: {line}\n"));
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
    *drift
        .checked
        .entry(format!("{agent} {version}"))
        .or_default() += 1;
    // The release's own truth: what it reported, and what the provider served.
    let own = std::panic::catch_unwind(AssertUnwindSafe(|| check_own_truth(agent, &ran, scenario)));
    if let Err(panic) = own {
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
            "Receipts that do not match their own release",
            format!("{what} ({version}): {first}"),
        );
    }
    if agent == "claude"
        && let Some(own) = claude_own(&native_stdout(&ran))
    {
        for line in price_disagreements(&own) {
            drift.note(
                "Prices that differ from runbook's table",
                format!("{what} ({version}): {line}"),
            );
        }
    }
    // A major version runbook was tested with none of: drift until it is adopted, whatever the
    // scenarios show (runbook's own warning says so, and its receipt says `untested`).
    if ran
        .receipt
        .warnings
        .samples
        .iter()
        .any(|w| w.contains("a major version it has never run"))
    {
        drift.note(
            "Untested major versions",
            format!("{agent} {version}: runs of it say `fidelity: \"untested\"`"),
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
    // The live run was the pinned version's: running it again would only repeat it.
    let pinned = (!runs_pinned(agent))
        .then(|| support::pinned(|| live::run(agent, scenario, prepare, &[])))
        .flatten();
    match &pinned {
        Some(pinned) => {
            shapes(&native_stdout(pinned), &mut known);
            for line in differences(pinned, &ran) {
                drift.inform(format!("{what}: {line}"));
            }
        }
        None => shapes(&native_stdout(&ran), &mut known),
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
    // Denials worded otherwise than in the pinned recording: still counted as denials (the
    // receipt's own check above), so the words are information.
    if scenario == Scenario::PermissionDenied {
        let now = denials(&ran.events);
        let then = recorded_denials(agent, recording);
        if now != then {
            drift.inform(format!(
                "{what}: the denial text changed from {then:?} to {now:?}"
            ));
        }
    }
}

/// How a release's run differs from the pinned release's run of the same scenario: its model,
/// its cost and its tokens, each said with both values.
fn differences(pinned: &Ran, now: &Ran) -> Vec<String> {
    let (a, b) = (&pinned.receipt, &now.receipt);
    let version = |r: &runbook::receipt::Receipt| {
        r.agent
            .version
            .clone()
            .unwrap_or_else(|| "version unknown".to_owned())
    };
    let (va, vb) = (version(a), version(b));
    let mut out = Vec::new();
    if a.model != b.model {
        out.push(format!(
            "the default model changed from {} ({va}) to {} ({vb})",
            a.model.as_deref().unwrap_or("unknown"),
            b.model.as_deref().unwrap_or("unknown")
        ));
    }
    if let (Some(x), Some(y)) = (a.cost.usd, b.cost.usd)
        && (x - y).abs() > 1e-9
    {
        let factor = if x > 0.0 {
            format!(" (×{:.2})", y / x)
        } else {
            String::new()
        };
        out.push(format!(
            "the cost changed from ${x} ({va}) to ${y} ({vb}){factor}"
        ));
    }
    let tokens = |r: &runbook::receipt::Receipt| (!r.tokens.incomplete).then_some(r.tokens.total);
    if let (Some(x), Some(y)) = (tokens(a), tokens(b))
        && x != y
    {
        out.push(format!("the tokens changed from {x} ({va}) to {y} ({vb})"));
    }
    out
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

/// The receipt against the release's own truth: the tool calls and outcome of the script, the
/// tokens the provider served, the cost the release reported (Claude Code's last `result`; Codex
/// reports none, so its served usage priced), and for Claude Code its model calls as its results
/// count them.
fn check_own_truth(agent: &str, ran: &Ran, scenario: Scenario) {
    let script = ran.expected();
    let served = ran.served_tokens.as_ref().map(|f| f());
    let claude = (agent == "claude")
        .then(|| claude_own(&native_stdout(ran)))
        .flatten();
    let want = Expected {
        tools: script.tools.clone(),
        outcome: script.outcome,
        tokens: script.tokens.and(served).or(script.tokens),
        steps_known: script.steps_known,
        cost: match &claude {
            Some(own) if script.cost.is_some() => own.cost,
            _ => script.cost,
        },
        cost_source: script.cost_source,
    };
    assert_facts(
        &facts(&ran.events, &ran.receipt),
        &want,
        scenario == Scenario::ProviderError,
        scenario == Scenario::Subagent,
        &ran.why,
    );
    if let Some(own) = claude {
        assert_eq!(ran.receipt.steps, Some(own.steps), "{}: steps", ran.why);
        if want.tokens.is_some() {
            assert_eq!(
                Some(own.tokens),
                served,
                "{}: tokens Claude reported",
                ran.why
            );
        }
    }
}

/// The drift of every agent in `scenarios`, as a Markdown report (empty: none), and the
/// information lines (empty: no difference from the pinned releases).
fn drift_of(scenarios: &[Scenario]) -> (String, String) {
    // `RUNBOOK_DRIFT_AGENTS` (`claude codex`) names the agents checked; all by default.
    let only = std::env::var("RUNBOOK_DRIFT_AGENTS").ok();
    drift_of_agents(scenarios, |agent| {
        only.as_deref()
            .is_none_or(|o| o.split_whitespace().any(|a| a == agent))
    })
}

/// [`drift_of`] the agents `which` keeps.
fn drift_of_agents(scenarios: &[Scenario], which: impl Fn(&str) -> bool) -> (String, String) {
    let mut drift = Drift::default();
    for (agent, prepare) in agents().into_iter().filter(|(a, _)| which(a)) {
        let known = recorded_shapes(agent);
        for (scenario, recording) in recorded(agent) {
            if scenarios.contains(&scenario) {
                compare(agent, prepare, scenario, recording, &known, &mut drift);
            }
        }
    }
    (drift.report(), drift.information())
}

/// Run by `.ci/drift-check` (and by hand): every recorded scenario against the installed
/// agents; the report goes to stdout and to `RUNBOOK_DRIFT_REPORT` when set. Fails when there is
/// drift.
#[test]
#[ignore = "the drift check: run by .ci/drift-check against the newest agent releases"]
fn every_scenario_against_the_installed_agents() {
    let all: Vec<Scenario> = recorded("codex").into_iter().map(|(s, _)| s).collect();
    let (report, info) = drift_of(&all);
    let mut text = if report.is_empty() {
        "No drift: every scenario's receipt matches its own release.\n".to_owned()
    } else {
        format!("# Drift: what runbook misreads or does not know\n\n{report}")
    };
    if !info.is_empty() {
        text.push_str(&format!(
            "\n## Differences from the pinned releases (information, not drift)\n\n{info}"
        ));
    }
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
        let (report, info) = drift_of_agents(&scenarios, |a| a == agent);
        assert!(report.is_empty(), "{report}");
        // Nothing but what was checked: the agent in both scenarios.
        let differences: Vec<&str> = info
            .lines()
            .filter(|l| !l.starts_with("- information: checked "))
            .collect();
        assert!(differences.is_empty(), "{info}");
        assert_eq!(info.lines().count(), 1, "{info}");
        assert!(info.contains("in 2 scenarios"), "{info}");
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

    /// OpenCode 2 is driven with its own tools' calls (`shell`, `subagent`, `path`), and judged
    /// by what it does: it goes on to an answer after a refused call.
    #[test]
    fn opencode_2_cli() {
        use Scenario::*;
        let mut drift = Drift::default();
        let known = recorded_shapes("opencode");
        for (scenario, recording) in recorded("opencode") {
            if matches!(scenario, ReadEdit | PermissionDenied | Subagent) {
                let prepare = live::opencode_2_with_snapshots as Prepare;
                compare("opencode", prepare, scenario, recording, &known, &mut drift);
            }
        }
        let report = drift.report();
        assert!(report.is_empty(), "{report}");
        let info = drift.information();
        assert!(info.contains("opencode v2.1.2 in 3 scenarios"), "{info}");
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

/// `.ci/drift-check` copied into a scratch checkout made by `setup`, run with `path` as its PATH:
/// its exit code and stderr.
fn drift_check_in(setup: impl Fn(&Path), path: &str) -> (Option<i32>, String) {
    let root = tempfile::tempdir().expect("a scratch checkout");
    let ci = root.path().join(".ci");
    std::fs::create_dir_all(root.path().join("src/agent")).expect("src/agent");
    std::fs::create_dir_all(&ci).expect(".ci");
    let script = ci.join("drift-check");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/drift-check"),
        &script,
    )
    .expect("copy the drift check");
    setup(root.path());
    let out = std::process::Command::new(on_path("bash"))
        .arg(&script)
        .arg("--since-pinned")
        .env("PATH", path)
        .env("RUNBOOK_DRIFT_REPORT", root.path().join("report.md"))
        .output()
        .expect("run the drift check");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_drift_check_that_cannot_run_says_why_with_its_own_exit_code() {
    let path = std::env::var("PATH").unwrap_or_default();
    // The agents' test setup missing: told before anything is installed or judged.
    let (code, stderr) = drift_check_in(|_| {}, &path);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains(".agents/opencode-config is missing: run .ci/install-agents first"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // npm missing: the same code, never 0 (no drift) nor 101 (drift).
    let bare = tempfile::tempdir().expect("a PATH without npm");
    std::os::unix::fs::symlink(on_path("dirname"), bare.path().join("dirname")).expect("dirname");
    let (code, stderr) = drift_check_in(
        |root| {
            std::fs::create_dir_all(root.join(".agents/opencode-config")).expect("config");
        },
        &bare.path().display().to_string(),
    );
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stderr.contains("npm is not installed"), "{stderr}");
}

/// Where `program` is on this process's PATH.
fn on_path(program: &str) -> std::path::PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{program} on PATH"))
}
