//! `runbook doctor`: each agent's version against the versions runbook was tested with, its
//! model's price, what to do, and the exit code that sums it up; and the one warning a run of an
//! untested version prints.

use serde_json::{Value, json};

use crate::support::{TestContext, fake_responses as responses};

// Real OpenCode lines, trimmed to what the adapter reads: one step that answers.
const STEP_START: &str = r#"{"type":"step_start","timestamp":1,"sessionID":"ses_v","part":{"id":"p1","messageID":"m1","sessionID":"ses_v","type":"step-start"}}"#;
const TEXT: &str = r#"{"type":"text","timestamp":2,"sessionID":"ses_v","part":{"id":"p2","messageID":"m1","sessionID":"ses_v","type":"text","text":"Done.","time":{"start":1,"end":2}}}"#;
const STEP_STOP: &str = r#"{"type":"step_finish","timestamp":3,"sessionID":"ses_v","part":{"id":"p3","reason":"stop","messageID":"m1","sessionID":"ses_v","type":"step-finish","tokens":{"total":1540,"input":1500,"output":40,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.0051}}"#;

/// A stand-in for an agent binary that answers `--version` with `version`, and, started as an
/// ACP server (`opencode acp`), answers `initialize` naming the same version.
fn agent(ctx: &TestContext, name: &str, version: &str) -> String {
    let answer = acp_answer(&format!(r#"{{"name":"{name}","version":"{version}"}}"#));
    ctx.agent_script(
        name,
        &format!("if [ \"$1\" = acp ]; then read -r _; printf '%s\\n' '{answer}'; else echo '{version}'; fi"),
    )
}

/// An answer to ACP `initialize` (request id 1) with `agent_info` as the agent's info.
fn acp_answer(agent_info: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":1,"agentInfo":{agent_info}}}}}"#
    )
}

/// The finding about `agent`'s ACP adapter.
fn adapter_finding<'a>(report: &'a Value, agent: &str) -> &'a Value {
    report["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .find(|a| a["agent"] == agent && a["via"] == "acp")
        .expect("the finding about the agent's ACP adapter")
}

/// A context whose three agents answer with the versions given (`None`: not installed).
fn with_agents(opencode: Option<&str>, claude: Option<&str>, codex: Option<&str>) -> TestContext {
    let mut ctx = TestContext::new();
    for (name, var, version) in [
        ("opencode", "RUNBOOK_OPENCODE_BIN", opencode),
        ("claude", "RUNBOOK_CLAUDE_BIN", claude),
        ("codex", "RUNBOOK_CODEX_BIN", codex),
    ] {
        let bin = match version {
            Some(v) => agent(&ctx, name, v),
            None => ctx.root().join(format!("no-{name}")).display().to_string(),
        };
        ctx.env(var, bin);
    }
    ctx
}

fn json(ctx: &TestContext) -> (Option<i32>, Value) {
    let out = ctx.run(&["doctor", "--json"]);
    let value = serde_json::from_str(out.stdout.trim()).expect("one JSON object");
    (out.code(), value)
}

fn finding<'a>(report: &'a Value, agent: &str) -> &'a Value {
    report["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .find(|a| a["agent"] == agent)
        .expect("the agent's finding")
}

#[test]
fn tested_versions_pass_and_the_exit_code_is_0() {
    let ctx = with_agents(
        Some("1.18.33"),
        Some("2.1.197 (Claude Code)"),
        Some("codex-cli 0.169.0"),
    );
    let (code, report) = json(&ctx);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["ok"], true);
    for agent in ["opencode", "claude", "codex"] {
        let f = finding(&report, agent);
        assert_eq!(f["tested"], true, "{f}");
        assert_eq!(f["problems"], Value::Array(vec![]), "{f}");
    }
    assert_eq!(finding(&report, "opencode")["default"], true);
    let out = ctx.run(&["doctor"]);
    out.assert_exit(0);
    assert!(
        out.stdout.contains("✓ codex: codex-cli 0.169.0 · tested"),
        "{}",
        out.stdout
    );
}

#[test]
fn doctor_takes_the_flags_it_recommends() {
    let ctx = with_agents(None, None, None);
    let out = ctx.run(&["doctor"]);
    out.assert_exit(1);
    assert!(out.stdout.contains("--agent-bin"), "{}", out.stdout);
    let bin = agent(&ctx, "my-opencode", "1.18.33");
    let out = ctx.run(&["doctor", "--agent-bin", &bin]);
    out.assert_exit(0);
    assert!(
        out.stdout
            .contains("✓ opencode (default): 1.18.33 · tested"),
        "{}",
        out.stdout
    );
    let claude = agent(&ctx, "my-claude", "2.1.197 (Claude Code)");
    let out = ctx.run(&[
        "doctor",
        "--agent",
        "claude",
        "--agent-bin",
        &claude,
        "--json",
    ]);
    let report: Value = serde_json::from_str(out.stdout.trim()).expect("one JSON object");
    let f = finding(&report, "claude");
    assert_eq!(f["default"], true, "{f}");
    assert_eq!(f["binary"], Value::String(claude.clone()), "{f}");
    assert_eq!(report["ok"], true, "{report}");
}

#[test]
fn an_untested_version_is_said_with_what_to_do_and_exits_1() {
    let ctx = with_agents(
        Some("1.18.33"),
        Some("2.1.331 (Claude Code)"),
        Some("codex-cli 0.169.0"),
    );
    let (code, report) = json(&ctx);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(report["ok"], false);
    let claude = finding(&report, "claude");
    assert_eq!(claude["version"], "2.1.331 (Claude Code)");
    assert_eq!(claude["tested"], false);
    // Between two tested releases: untested, not newer.
    assert_eq!(claude["newer"], false);
    assert_eq!(claude["tested_versions"][0], "2.1.197");
    let problem = &claude["problems"][0];
    assert!(
        problem["what"]
            .as_str()
            .is_some_and(|w| w.contains("not tested")),
        "{problem}"
    );
    assert!(problem["todo"].as_str().is_some_and(|t| !t.is_empty()));

    let out = ctx.run(&["doctor"]);
    out.assert_exit(1);
    assert!(
        out.stdout
            .contains("! claude: 2.1.331 (Claude Code) · not tested (tested: 2.1.197"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("    → "), "{}", out.stdout);
}

/// A release after the newest one in runbook's table is said to be newer than runbook knows,
/// with the newest it was tested with, from the table in the binary alone: no network (every
/// proxy points at a closed port).
#[test]
fn a_release_newer_than_runbook_knows_is_said_so_offline() {
    let mut ctx = with_agents(
        Some("1.18.33"),
        Some("2.1.999 (Claude Code)"),
        Some("codex-cli 0.172.0"),
    );
    for var in [
        "http_proxy",
        "https_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
    ] {
        ctx.env(var, "http://127.0.0.1:9");
    }
    let (code, report) = json(&ctx);
    assert_eq!(code, Some(1), "{report}");
    for (agent, newest) in [("claude", "2.1.337"), ("codex", "0.171.0")] {
        let f = finding(&report, agent);
        assert_eq!(f["tested"], false, "{f}");
        assert_eq!(f["newer"], true, "{f}");
        let what = f["problems"][0]["what"].as_str().unwrap_or_default();
        assert_eq!(
            what,
            format!("newer than runbook knows (tested up to {newest})"),
            "{f}"
        );
        let todo = f["problems"][0]["todo"].as_str().unwrap_or_default();
        assert!(todo.contains("a newer runbook may know"), "{f}");
    }
    let out = ctx.run(&["doctor"]);
    out.assert_exit(1);
    assert!(
        out.stdout.contains(
            "! claude: 2.1.999 (Claude Code) · newer than runbook knows (tested up to 2.1.337)"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "! codex: codex-cli 0.172.0 · newer than runbook knows (tested up to 0.171.0)"
        ),
        "{}",
        out.stdout
    );
}

/// Each of OpenCode's generations (1.x `opencode-ai`, 2.x `@opencode/cli`) is judged against
/// its own newest tested release; a third major version is said to be one runbook was not tested
/// with; the package an installed binary came from is shown.
#[test]
fn each_opencode_generation_is_judged_on_its_own_and_a_new_major_is_told() {
    let ctx = with_agents(Some("1.19.0"), None, None);
    let (_, report) = json(&ctx);
    let f = finding(&report, "opencode");
    assert_eq!(
        (&f["newer"], &f["newest_tested"]),
        (&json!(true), &json!("1.18.33")),
        "{f}"
    );
    assert!(f.get("major_tested").is_none(), "{f}");

    let ctx = with_agents(Some("opencode v3.0.0"), None, None);
    let (code, report) = json(&ctx);
    assert_eq!(code, Some(1), "{report}");
    let f = finding(&report, "opencode");
    assert_eq!(f["major_tested"], false, "{f}");
    let what = f["problems"][0]["what"].as_str().unwrap_or_default();
    assert!(
        what.starts_with("a major version runbook was not tested with"),
        "{f}"
    );
    let out = ctx.run(&["doctor"]);
    assert!(
        out.stdout.contains("! opencode (default): opencode v3.0.0 · a major version runbook was not tested with (tested: 1.18.33, 2.1.2, 2.2.5)"),
        "{}",
        out.stdout
    );

    // Installed by npm: the `.bin` link into the package's own folder.
    let mut ctx = TestContext::new();
    let package = ctx.root().join("prefix/node_modules/@opencode/cli/bin");
    std::fs::create_dir_all(&package).unwrap();
    let real = package.join("opencode");
    std::fs::write(&real, "#!/bin/sh\necho 'opencode v2.1.2'\n").unwrap();
    std::fs::set_permissions(&real, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let bin = ctx.root().join("prefix/node_modules/.bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink("../@opencode/cli/bin/opencode", bin.join("opencode")).unwrap();
    ctx.env(
        "RUNBOOK_OPENCODE_BIN",
        bin.join("opencode").display().to_string(),
    );
    let (_, report) = json(&ctx);
    assert_eq!(
        finding(&report, "opencode")["package"],
        "@opencode/cli",
        "{report}"
    );
    let out = ctx.run(&["doctor"]);
    assert!(
        out.stdout
            .contains("✓ opencode (default): opencode v2.1.2 (@opencode/cli) · tested"),
        "{}",
        out.stdout
    );
}

#[test]
fn only_the_default_agent_must_be_installed() {
    let ctx = with_agents(Some("1.18.33"), None, None);
    let (code, report) = json(&ctx);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(finding(&report, "codex")["binary"], Value::Null);

    let mut ctx = with_agents(Some("1.18.33"), None, None);
    ctx.env("RUNBOOK_AGENT", "codex");
    let (code, report) = json(&ctx);
    assert_eq!(code, Some(1), "{report}");
    let codex = finding(&report, "codex");
    assert_eq!(codex["default"], true);
    let todo = codex["problems"][0]["todo"].as_str().unwrap_or_default();
    assert!(todo.contains("npm install -g @openai/codex"), "{codex}");
}

#[test]
fn codexs_configured_model_is_priced_or_said_to_have_no_price() {
    let mut ctx = with_agents(Some("1.18.33"), None, Some("codex-cli 0.169.0"));
    let home = responses::CodexHome::new("http://127.0.0.1:9", &responses::CodexConfig::default())
        .expect("a Codex home");
    ctx.env("CODEX_HOME", home.path().display().to_string());
    let (code, report) = json(&ctx);
    assert_eq!(code, Some(0), "{report}");
    let codex = finding(&report, "codex");
    assert_eq!(codex["model"], responses::MODEL);
    assert_eq!(
        codex["model_from"],
        home.path().join("config.toml").display().to_string()
    );
    assert_eq!(codex["price"], "known");

    let config = responses::CodexConfig {
        model: "gpt-9-preview".to_owned(),
        ..responses::CodexConfig::default()
    };
    std::fs::write(
        home.path().join("config.toml"),
        responses::codex_config_toml("http://127.0.0.1:9", &config),
    )
    .expect("rewrite config.toml");
    let (code, report) = json(&ctx);
    assert_eq!(code, Some(1), "{report}");
    let codex = finding(&report, "codex");
    assert_eq!(codex["price"], "unknown");
    let todo = codex["problems"][0]["todo"].as_str().unwrap_or_default();
    assert!(todo.contains("[prices.\"gpt-9-preview\"]"), "{codex}");

    // A price of the user's own makes it known.
    std::fs::write(
        ctx.work.join("runbook.toml"),
        "[prices.\"gpt-9-preview\"]\ninput = 1.0\ncached_input = 0.1\noutput = 8.0\n",
    )
    .expect("write runbook.toml");
    let (code, report) = json(&ctx);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(finding(&report, "codex")["price"], "user");
}

#[test]
fn a_run_of_an_untested_agent_version_warns_once_and_the_receipt_keeps_it() {
    let scenario = [STEP_START, TEXT, STEP_STOP].join("\n");
    let mut ctx = TestContext::new();
    ctx.env("FAKE_AGENT_VERSION", "1.99.0");
    let out = ctx.run_fake(&scenario, &["--then", "and again"]);
    out.assert_exit(0);
    let warning =
        "runbook was not tested with this agent version (1.99.0; tested: 1.18.33, 2.1.2, 2.2.5)";
    let lines: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("not tested with this agent version"))
        .collect();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(lines[0].contains(warning), "{}", out.stderr);
    let r = ctx.receipt();
    assert_eq!(r.warnings.count, 1, "{:?}", r.warnings);
    assert!(r.warnings.samples[0].contains(warning));

    // A tested version: no warning.
    let mut ctx = TestContext::new();
    ctx.env("FAKE_AGENT_VERSION", "1.18.33");
    let out = ctx.run_fake(&scenario, &[]);
    out.assert_exit(0);
    assert!(!out.stderr.contains("not tested"), "{}", out.stderr);
    assert_eq!(ctx.receipt().warnings.count, 0);
}

#[test]
fn doctor_starts_each_real_acp_adapter_and_reads_its_answer_to_initialize() {
    let Some(claude) = crate::acp_adapters::adapter_bin("claude-agent-acp") else {
        return;
    };
    let dir = claude.parent().expect("the adapters' directory").to_owned();
    let mut ctx = with_agents(Some("1.18.33"), None, None);
    let path = std::env::var("PATH").unwrap_or_default();
    ctx.env("PATH", format!("{}:{path}", dir.display()));
    let (code, report) = json(&ctx);
    assert_eq!(code, Some(0), "{report}");
    for (agent, program) in [("claude", "claude-agent-acp"), ("codex", "codex-acp")] {
        let f = adapter_finding(&report, agent);
        assert_eq!(f["binary"], dir.join(program).display().to_string(), "{f}");
        assert_eq!(f["protocol_version"], 1, "{f}");
        let name = f["agent_info"]["name"].as_str().unwrap_or_default();
        assert!(name.contains(agent), "{f}");
        let version = f["agent_info"]["version"].as_str().unwrap_or_default();
        assert!(
            version.chars().next().is_some_and(|c| c.is_ascii_digit()),
            "{f}"
        );
        assert_eq!(f["problems"], Value::Array(vec![]), "{f}");
    }
    // OpenCode's adapter is its own binary, `opencode acp`.
    let opencode = adapter_finding(&report, "opencode");
    assert_eq!(opencode["args"], serde_json::json!(["acp"]), "{opencode}");
    assert_eq!(opencode["agent_info"]["version"], "1.18.33", "{opencode}");

    let out = ctx.run(&["doctor"]);
    out.assert_exit(0);
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("✓ claude over ACP: protocol 1 · "))
        .unwrap_or_else(|| panic!("no line for claude's adapter:\n{}", out.stdout));
    assert!(line.ends_with(&format!("· {}", claude.display())), "{line}");
    assert!(
        out.stdout.contains(" acp\n") && out.stdout.contains("✓ opencode over ACP: protocol 1"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_missing_or_mute_acp_adapter_is_told_with_what_to_do() {
    // OpenCode is there; no adapter is on PATH, and no setting names one.
    let mut ctx = TestContext::new();
    let opencode = agent(&ctx, "opencode", "1.18.33");
    ctx.env("RUNBOOK_OPENCODE_BIN", opencode);
    ctx.env("PATH", "/usr/bin:/bin");
    let (code, report) = json(&ctx);
    assert_eq!(
        code,
        Some(0),
        "only what a run here starts must be installed: {report}"
    );
    let claude = adapter_finding(&report, "claude");
    assert_eq!(claude["binary"], Value::Null, "{claude}");
    let hint = claude["hint"].as_str().unwrap_or_default();
    assert!(
        hint.contains("npm install -g @zed-industries/claude-agent-acp"),
        "{claude}"
    );
    let out = ctx.run(&["doctor"]);
    out.assert_exit(0);
    assert!(out.stdout.contains("- claude over ACP: not installed\n    → install it with `npm install -g @zed-industries/claude-agent-acp`"), "{}", out.stdout);

    // Runs go over ACP: the adapter they start must be there.
    let out = ctx.run(&["doctor", "--via", "acp", "--agent", "codex"]);
    out.assert_exit(1);
    assert!(
        out.stdout
            .contains("! codex over ACP (default): not installed"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("not found: codex-acp (looked on PATH)\n    → install it with `npm install -g @zed-industries/codex-acp`"), "{}", out.stdout);

    // One that starts but never answers, and one whose answer carries terminal controls.
    let mute = ctx.agent_script("mute-acp", "read -r _; echo 'not JSON-RPC'; exit 3");
    let out = ctx.run(&[
        "doctor",
        "--via",
        "acp",
        "--agent",
        "claude",
        "--agent-bin",
        &mute,
    ]);
    out.assert_exit(1);
    assert!(
        out.stdout.contains(&format!(
            "`{mute}` ended without answering ACP initialize (exit code 3)"
        )),
        "{}",
        out.stdout
    );
    let evil = acp_answer(
        r#"{"name":"x","title":"Evil\u001b]0;owned\u0007\u001b[2J\u202e","version":"9\n9"}"#,
    );
    let loud = ctx.agent_script(
        "loud-acp",
        &format!("read -r _; printf '%s\\n' '{evil}'; sleep 30"),
    );
    let out = ctx.run(&[
        "doctor",
        "--via",
        "acp",
        "--agent",
        "claude",
        "--agent-bin",
        &loud,
    ]);
    out.assert_exit(0);
    assert!(
        !out.stdout.contains(['\u{1b}', '\u{7}', '\u{202e}']),
        "{:?}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "✓ claude over ACP (default): protocol 1 · Evil\\e]0;owned\\a\\e[2J\\u{202e} 9\\n9 · "
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn doctor_asks_the_acp_cmd_agent_a_run_would_start_for_its_answer_to_initialize() {
    let mut ctx = with_agents(Some("1.18.33"), None, None);
    ctx.env("PATH", "/usr/bin:/bin");
    let answer = acp_answer(r#"{"name":"mine","title":"My Agent","version":"0.3.0"}"#);
    let mine = ctx.agent_script(
        "my-acp-agent",
        &format!("[ \"$1\" = --stdio ] || exit 9; read -r _; printf '%s\\n' '{answer}'; sleep 30"),
    );
    let cmd = format!("{mine} --stdio");
    let out = ctx.run(&["doctor", "--acp-cmd", &cmd]);
    out.assert_exit(0);
    assert!(
        out.stdout.contains(&format!(
            "✓ acp_cmd over ACP (default): protocol 1 · My Agent 0.3.0 · {cmd}\n"
        )),
        "{}",
        out.stdout
    );
    let out = ctx.run(&["doctor", "--acp-cmd", "no-such-acp-agent --stdio", "--json"]);
    out.assert_exit(1);
    let report: Value = serde_json::from_str(out.stdout.trim()).expect("one JSON object");
    let custom = adapter_finding(&report, "acp_cmd");
    assert_eq!(custom["default"], true, "{custom}");
    let what = custom["problems"][0]["what"].as_str().unwrap_or_default();
    assert_eq!(what, "not found: no-such-acp-agent", "{custom}");
    assert!(
        custom["problems"][0]["todo"]
            .as_str()
            .is_some_and(|t| t.contains("--acp-cmd")),
        "{custom}"
    );
}

/// The problems of the native OpenCode finding, as one text.
fn opencode_problems(report: &Value) -> String {
    finding(report, "opencode")["problems"].to_string()
}

#[test]
fn two_opencode_generations_in_one_home_are_said_with_what_to_do() {
    let tested = || {
        with_agents(
            Some("1.18.33"),
            Some("2.1.197 (Claude Code)"),
            Some("codex-cli 0.169.0"),
        )
    };
    // The home's database is OpenCode 2.x's (no `session` table): read from the file.
    let mut ctx = tested();
    let data = ctx.root().join("data");
    std::fs::create_dir_all(data.join("opencode")).expect("the data dir");
    std::fs::write(
        data.join("opencode/opencode.db"),
        "SQLite format 3\0 CREATE TABLE `event` (id text) CREATE TABLE `project` (id text)",
    )
    .expect("a 2.x database");
    ctx.env("XDG_DATA_HOME", data.display().to_string());
    let (code, report) = json(&ctx);
    assert_eq!(code, Some(1), "{report}");
    let problems = opencode_problems(&report);
    assert!(
        problems.contains("is OpenCode 2.x's database"),
        "{problems}"
    );
    assert!(problems.contains("no session table"), "{problems}");
    assert!(problems.contains("its own XDG_DATA_HOME"), "{problems}");
    let out = ctx.run(&["doctor"]);
    let lines: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("OpenCode 2.x's database"))
        .collect();
    assert_eq!(lines.len(), 1, "{}", out.stdout);

    // Its own 1.x database: nothing to say.
    std::fs::write(
        data.join("opencode/opencode.db"),
        "SQLite format 3\0 CREATE TABLE `session` (id text) CREATE TABLE `message` (id text)",
    )
    .expect("a 1.x database");
    let (code, report) = json(&ctx);
    assert_eq!(code, Some(0), "{report}");

    // OpenCode 2.x installed beside 1.x (its `opencode2`): they would share the home.
    let mut ctx = tested();
    let other = ctx.root().join("v2-bin");
    std::fs::create_dir_all(&other).expect("a bin dir");
    let opencode2 = ctx.agent_script("opencode2", "echo 'opencode v2.1.2'");
    std::fs::copy(&opencode2, other.join("opencode2")).expect("opencode2 on PATH");
    let path = std::env::var("PATH").unwrap_or_default();
    ctx.env("PATH", format!("{}:{path}", other.display()));
    let (code, report) = json(&ctx);
    assert_eq!(code, Some(1), "{report}");
    let problems = opencode_problems(&report);
    assert!(problems.contains("OpenCode 2.x ("), "{problems}");
    assert!(problems.contains("is installed too"), "{problems}");
}

#[test]
fn doctor_shows_what_it_checks_on_a_terminal_and_says_each_hint_once() {
    use crate::support::pty::Pty;
    let ctx = with_agents(None, None, None);
    let mut cmd = ctx.runbook(&["doctor"]);
    cmd.env("TERM", "xterm-256color");
    let (_, screen, raw) = Pty::spawn(cmd, 200).finish_raw();
    let raw = String::from_utf8_lossy(&raw);
    assert!(raw.contains("checking the agents"), "{raw}");
    let text = screen.text();
    assert!(!text.contains("checking the agents"), "erased: {text}");
    let hints: Vec<&str> = screen
        .rows()
        .iter()
        .map(|r| r.trim())
        .filter(|r| r.starts_with('→'))
        .collect();
    assert!(!hints.is_empty(), "{text}");
    for hint in &hints {
        assert_eq!(
            hints.iter().filter(|h| *h == hint).count(),
            1,
            "{hint} said more than once:\n{text}"
        );
    }
    // Not on a terminal, and never with --json: nothing but the report.
    for args in [&["doctor"][..], &["doctor", "--json"]] {
        let out = ctx.run(args);
        assert!(!out.stderr.contains("checking"), "{}", out.stderr);
    }
}

#[test]
fn doctor_says_a_reason_the_sandbox_choices_share_once() {
    use crate::support::pty::Pty;
    let ctx = with_agents(Some("1.18.33"), None, None);
    std::fs::create_dir_all(ctx.home.join(".ssh")).unwrap();
    let mut cmd = ctx.runbook(&["doctor"]);
    cmd.current_dir(&ctx.home).env("TERM", "xterm-256color");
    let (_, screen) = Pty::spawn(cmd, 200).finish();
    let joined = screen.joined();
    assert_eq!(
        joined.matches("a path it must not read").count(),
        1,
        "{}",
        screen.text()
    );
}
