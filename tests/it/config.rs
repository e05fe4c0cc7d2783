//! Configuration layers and the agent's environment, through the real binary: which layer wins
//! for every kind of key, what `runbook config` shows, how the agent's variables are layered and
//! kept out of everything a run writes, and the one-line errors for bad configuration.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{Outcome, TestContext, run};

const LIMIT: Duration = Duration::from_secs(60);

/// The layers, lowest first, as `runbook config` names them.
const LAYERS: [&str; 6] = ["default", "global", "repo", "local", "env", "flag"];

/// One key: how each layer sets it, and the value `runbook config --json` then shows.
struct Case {
    key: &'static str,
    /// A file's TOML for the key, `{}` standing for the layer's value.
    toml: &'static str,
    /// The TOML value the global, repo and local files give.
    files: [&'static str; 3],
    /// The variable and its value.
    env: Option<(&'static str, &'static str)>,
    /// The flag (or `--` and arguments).
    flag: &'static [&'static str],
    /// What each layer, lowest first, makes the value; `[WORK]` is the work dir.
    expect: [Value; 6],
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            key: "agent",
            toml: "agent = {}",
            files: ["\"claude\"", "\"codex\"", "\"opencode\""],
            env: Some(("RUNBOOK_AGENT", "claude")),
            flag: &["--agent", "codex"],
            expect: [
                json!("opencode"),
                json!("claude"),
                json!("codex"),
                json!("opencode"),
                json!("claude"),
                json!("codex"),
            ],
        },
        Case {
            key: "agent_cmd",
            toml: "agent_cmd = {}",
            files: ["\"g-agent\"", "\"r-agent --x\"", "\"l-agent\""],
            env: Some(("RUNBOOK_AGENT_CMD", "e-agent")),
            flag: &["--agent-cmd", "f-agent 'a b'"],
            expect: [
                Value::Null,
                json!("g-agent"),
                json!("r-agent --x"),
                json!("l-agent"),
                json!("e-agent"),
                json!("f-agent 'a b'"),
            ],
        },
        Case {
            key: "model",
            toml: "model = {}",
            files: ["\"g/m\"", "\"r/m\"", "\"l/m\""],
            env: Some(("RUNBOOK_MODEL", "e/m")),
            flag: &["-m", "f/m"],
            expect: [
                Value::Null,
                json!("g/m"),
                json!("r/m"),
                json!("l/m"),
                json!("e/m"),
                json!("f/m"),
            ],
        },
        Case {
            key: "permissions",
            toml: "permissions = {}",
            files: ["\"read-only\"", "\"workspace\"", "\"bypass\""],
            env: Some(("RUNBOOK_PERMISSIONS", "read-only")),
            flag: &["--permissions", "workspace"],
            expect: [
                json!("agent"),
                json!("read-only"),
                json!("workspace"),
                json!("bypass"),
                json!("read-only"),
                json!("workspace"),
            ],
        },
        Case {
            key: "agents.claude.bin",
            toml: "[agents.claude]\nbin = {}",
            files: ["\"/g/claude\"", "\"/r/claude\"", "\"/l/claude\""],
            env: Some(("RUNBOOK_CLAUDE_BIN", "/e/claude")),
            // The flag is for the agent that runs.
            flag: &["--agent", "claude", "--agent-bin", "/f/claude"],
            expect: [
                Value::Null,
                json!("/g/claude"),
                json!("/r/claude"),
                json!("/l/claude"),
                json!("/e/claude"),
                json!("/f/claude"),
            ],
        },
        Case {
            key: "agents.opencode.bin",
            toml: "[agents.opencode]\nbin = {}",
            files: ["\"/g/oc\"", "\"bin/oc\"", "\"oc-local\""],
            env: Some(("RUNBOOK_OPENCODE_BIN", "/e/oc")),
            flag: &["--agent-bin", "/f/oc"],
            expect: [
                Value::Null,
                json!("/g/oc"),
                json!("[WORK]/bin/oc"),
                json!("oc-local"),
                json!("/e/oc"),
                json!("/f/oc"),
            ],
        },
        Case {
            key: "agents.opencode.args",
            toml: "[agents.opencode]\nargs = {}",
            files: ["[\"--g\"]", "[\"--r\", \"x\"]", "[]"],
            env: None,
            flag: &["--", "--f"],
            expect: [
                Value::Null,
                json!(["--g"]),
                json!(["--r", "x"]),
                json!([]),
                Value::Null,
                json!(["--f"]),
            ],
        },
        Case {
            key: "inactivity_timeout",
            toml: "inactivity_timeout = {}",
            files: ["\"1m\"", "120", "\"1h30m\""],
            env: Some(("RUNBOOK_INACTIVITY_TIMEOUT", "45")),
            flag: &["--inactivity-timeout", "5s"],
            expect: [
                json!("3m"),
                json!("1m"),
                json!("2m"),
                json!("1h30m"),
                json!("45s"),
                json!("5s"),
            ],
        },
        Case {
            key: "kill_grace",
            toml: "kill_grace = {}",
            files: ["\"1s\"", "\"2s\"", "\"3s\""],
            env: Some(("RUNBOOK_KILL_GRACE", "4s")),
            flag: &["--kill-grace", "5s"],
            expect: [
                json!("10s"),
                json!("1s"),
                json!("2s"),
                json!("3s"),
                json!("4s"),
                json!("5s"),
            ],
        },
        Case {
            key: "finish_grace",
            toml: "finish_grace = {}",
            files: ["\"1s\"", "2", "\"3s\""],
            env: Some(("RUNBOOK_FINISH_GRACE", "4s")),
            flag: &["--finish-grace", "6s"],
            expect: [
                json!("5s"),
                json!("1s"),
                json!("2s"),
                json!("3s"),
                json!("4s"),
                json!("6s"),
            ],
        },
        Case {
            key: "timeout",
            toml: "timeout = {}",
            files: ["\"10m\"", "\"20m\"", "\"30m\""],
            env: Some(("RUNBOOK_TIMEOUT", "40m")),
            flag: &["--timeout", "50m"],
            expect: [
                Value::Null,
                json!("10m"),
                json!("20m"),
                json!("30m"),
                json!("40m"),
                json!("50m"),
            ],
        },
        Case {
            key: "max_cost",
            toml: "max_cost = {}",
            files: ["1", "2.5", "\"$3\""],
            env: Some(("RUNBOOK_MAX_COST", "$4.25")),
            flag: &["--max-cost", "5"],
            expect: [
                Value::Null,
                json!(1.0),
                json!(2.5),
                json!(3.0),
                json!(4.25),
                json!(5.0),
            ],
        },
        Case {
            key: "plan",
            toml: "plan = {}",
            files: ["true", "false", "true"],
            env: Some(("RUNBOOK_PLAN", "false")),
            flag: &[],
            expect: [
                json!(false),
                json!(true),
                json!(false),
                json!(true),
                json!(false),
                Value::Null,
            ],
        },
        Case {
            key: "runs_dir",
            toml: "runs_dir = {}",
            files: ["\"/g/runs\"", "\"runs\"", "\"/l/runs\""],
            env: Some(("RUNBOOK_RUNS_DIR", "/e/runs")),
            flag: &["--runs-dir", "/f/runs"],
            expect: [
                Value::Null,
                json!("/g/runs"),
                json!("[WORK]/runs"),
                json!("/l/runs"),
                json!("/e/runs"),
                json!("/f/runs"),
            ],
        },
        Case {
            key: "color",
            toml: "color = {}",
            files: ["\"always\"", "\"never\"", "\"always\""],
            env: Some(("RUNBOOK_COLOR", "never")),
            flag: &["--color", "always"],
            expect: [
                json!("auto"),
                json!("always"),
                json!("never"),
                json!("always"),
                json!("never"),
                json!("always"),
            ],
        },
        Case {
            key: "prices.\"my-llama\"",
            toml: "[prices.\"my-llama\"]\n{}",
            files: [
                "input = 1\ncached_input = 0.1\noutput = 2",
                "input = 3\ncached_input = 0.3\noutput = 4\ncache_write = 5",
                "input = 0\ncached_input = 0\noutput = 0",
            ],
            env: None,
            flag: &[],
            expect: [
                Value::Null,
                json!({"input": 1.0, "cached_input": 0.1, "output": 2.0}),
                json!({"input": 3.0, "cached_input": 0.3, "output": 4.0, "cache_write": 5.0}),
                json!({"input": 0.0, "cached_input": 0.0, "output": 0.0}),
                Value::Null,
                Value::Null,
            ],
        },
    ]
}

/// `runbook config --json ARGS` in `ctx`, parsed.
fn config_json(ctx: &TestContext, args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut cmd = ctx.runbook(&[&["config", "--json"], args].concat());
    cmd.env_remove("RUNBOOK_RUNS_DIR").envs(env.iter().copied());
    let out = run(&mut cmd, LIMIT);
    assert_eq!(out.code(), Some(0), "{args:?}: {}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout))
}

fn find_setting<'a>(config: &'a Value, key: &str) -> Option<&'a Value> {
    config["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == key)
}

fn setting<'a>(config: &'a Value, key: &str) -> &'a Value {
    find_setting(config, key).unwrap_or_else(|| panic!("no {key} in {config:#}"))
}

#[test]
fn each_kind_of_key_comes_from_the_highest_layer_that_sets_it() {
    for case in cases() {
        for (top, top_name) in LAYERS.iter().enumerate() {
            let missing = (top == 4 && case.env.is_none()) || (top == 5 && case.flag.is_empty());
            if missing {
                continue;
            }
            let ctx = TestContext::new();
            let toml = |i: usize| format!("{}\n", case.toml.replace("{}", case.files[i]));
            ctx.write_work("runbook.toml", "");
            if top >= 1 {
                ctx.write_global_config(&toml(0));
            }
            if top >= 2 {
                ctx.write_work("runbook.toml", toml(1));
            }
            if top >= 3 {
                ctx.write_work("runbook.local.toml", toml(2));
            }
            let env: Vec<(&str, &str)> = case.env.filter(|_| top >= 4).into_iter().collect();
            let flags = if top >= 5 { case.flag } else { &[] };

            let config = config_json(&ctx, flags, &env);
            // A table's entry that no layer gives is not listed at all.
            let unset = json!({"value": null, "from": {"layer": "default"}});
            let got = find_setting(&config, case.key).unwrap_or(&unset);
            let work = ctx.work.to_str().unwrap();
            let expected: Value =
                serde_json::from_str(&case.expect[top].to_string().replace("[WORK]", work))
                    .unwrap();
            let layer = if expected.is_null() {
                "default"
            } else {
                top_name
            };
            let what = format!("{} with layers up to {top_name}", case.key);
            assert_eq!(got["value"], expected, "{what}");
            assert_eq!(got["from"]["layer"], layer, "{what}");
        }
    }
}

/// Replaces the temporary directory with `[TMP]`.
fn filtered(ctx: &TestContext, text: &str) -> String {
    text.replace(ctx.root().to_str().unwrap(), "[TMP]")
}

#[test]
fn runbook_config_shows_every_value_and_where_it_was_set() {
    let mut ctx = TestContext::new();
    ctx.write_global_config(
        "max_cost = 2\n[prices.\"my-llama\"]\ninput = 1\ncached_input = 0.1\noutput = 2\n",
    );
    ctx.write_work(
        "runbook.toml",
        "model = \"anthropic/claude-sonnet-4-5\"\ninactivity_timeout = \"90s\"\n\n[agents.opencode]\nargs = [\"--agent\", \"build\"]\n\n[env]\nRUST_BACKTRACE = \"1\"\n",
    );
    ctx.write_work("runbook.local.toml", "model = \"openai/gpt-5\"\n");
    ctx.write_work(".env", "DATABASE_URL=postgres://localhost/dev\n");
    ctx.write_work(".env.local", "# mine\nACME_API_KEY=sk-acme-local-0123\n");
    ctx.env("RUNBOOK_TIMEOUT", "20m");
    ctx.env("RUNBOOK_RUNS_DIR", "/srv/runbook/runs");
    let out = ctx.run(&["config", "--wide", "--kill-grace", "3s"]);
    out.assert_exit(0);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    assert!(
        !out.stdout.contains("sk-acme-local-0123"),
        "values of the environment are never shown"
    );
    insta::assert_snapshot!("config", filtered(&ctx, &out.stdout));
}

#[test]
fn the_agents_variables_are_layered_config_dotenv_dotenv_local_shell_env_file() {
    let mut ctx = TestContext::new();
    ctx.write_work(
        "runbook.toml",
        "[env]\nA = \"cfg\"\nB = \"cfg\"\nC = \"cfg\"\nD = \"cfg\"\nE = \"cfg\"\nREF = \"${FROM_SHELL}-suffix\"\n",
    );
    ctx.write_work(".env", "B=dot\nC=dot\nD=dot\nE=dot\n");
    ctx.write_work(".env.local", "C=local\nD=local\nE=local\n");
    let (one, two) = (ctx.root().join("one.env"), ctx.root().join("two.env"));
    std::fs::write(&one, "E=one\nF=one\n").unwrap();
    std::fs::write(&two, "F=two\n").unwrap();
    ctx.env("D", "shell")
        .env("E", "shell")
        .env("FROM_SHELL", "from-shell");

    let config = config_json(
        &ctx,
        &[
            "--env-file",
            one.to_str().unwrap(),
            "--env-file",
            two.to_str().unwrap(),
        ],
        &[],
    );
    let layers: Vec<(String, String)> = config["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_owned(),
                v["layer"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected = [
        ("A", "config"),
        ("B", "dotenv"),
        ("C", "dotenv_local"),
        ("D", "shell"),
        ("E", "env_file"),
        ("F", "env_file"),
        ("REF", "config"),
    ]
    .map(|(n, l)| (n.to_owned(), l.to_owned()));
    assert_eq!(layers, expected);
    let f = config["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "F")
        .unwrap();
    assert_eq!(f["file"], two.to_str().unwrap(), "the last --env-file wins");

    // The values themselves, as the agent sees them.
    let scenario = [
        "{\"$stderr\":\"A={{ENV:A}} B={{ENV:B}} C={{ENV:C}} D={{ENV:D}} E={{ENV:E}} F={{ENV:F}} REF={{ENV:REF}}\"}",
        FINISHED,
    ]
    .join("\n");
    let mut cmd = ctx.fake_run(
        &scenario,
        &[
            "--env-file",
            one.to_str().unwrap(),
            "--env-file",
            two.to_str().unwrap(),
        ],
    );
    let out = run(&mut cmd, LIMIT);
    out.assert_exit(0);
    let stderr_log = std::fs::read_to_string(ctx.run_dir().join("stderr.log")).unwrap();
    // Values shorter than six characters are not masked (masking `1` everywhere would garble
    // output), so the short ones can be checked here; the long one is masked.
    assert_eq!(
        stderr_log,
        "A=cfg B=dot C=local D=shell E=one F=two REF=[REDACTED]\n"
    );
}

/// A step that ends the run as completed.
const FINISHED: &str = r#"{"type":"step_finish","timestamp":1,"sessionID":"ses_test","part":{"id":"prt_5","reason":"stop","snapshot":"5743","messageID":"msg_1","sessionID":"ses_test","type":"step-finish","tokens":{"total":10,"input":5,"output":5,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.001}}"#;

#[test]
fn values_set_for_the_agent_reach_it_but_no_file_of_the_run_nor_the_terminal() {
    let mut ctx = TestContext::new();
    ctx.write_work(
        "runbook.toml",
        "[env]\nDATABASE_URL = \"postgres://u:hunter22@db/app\"\n",
    );
    ctx.write_work(".env.local", "ACME_TOKEN=tok-dotenv-local-0123\n");
    let extra = ctx.root().join("ci.env");
    std::fs::write(
        &extra,
        "PLAIN_SETTING=value-from-env-file\nFORWARDED=${SHELL_SECRET}\n",
    )
    .unwrap();
    ctx.env("SHELL_SECRET", "shell-secret-4567");
    let secrets = [
        "postgres://u:hunter22@db/app",
        "tok-dotenv-local-0123",
        "value-from-env-file",
        "shell-secret-4567",
    ];

    let text = |body: &str| {
        format!(
            r#"{{"type":"text","timestamp":1,"sessionID":"ses_test","part":{{"id":"p","messageID":"msg_1","sessionID":"ses_test","type":"text","text":"{body}"}}}}"#
        )
    };
    let scenario = [
        text("db {{ENV:DATABASE_URL}} token {{ENV:ACME_TOKEN}}"),
        text("plain {{ENV:PLAIN_SETTING}} forwarded {{ENV:FORWARDED}}"),
        r#"{"$stderr":"stderr {{ENV:ACME_TOKEN}} {{ENV:FORWARDED}}"}"#.to_owned(),
        FINISHED.to_owned(),
    ]
    .join("\n");
    for json in [false, true] {
        let mut args = vec!["-v", "--env-file", extra.to_str().unwrap()];
        if json {
            args.push("--json");
        }
        let out = ctx.run_fake(&scenario, &args);
        out.assert_exit(0);
        for secret in secrets {
            out.assert_hides(secret);
        }
        let shown = if json { &out.stdout } else { &out.stderr };
        assert!(
            shown.contains("db [REDACTED] token [REDACTED]"),
            "the values reached the agent: {shown}"
        );
        assert!(
            shown.contains("plain [REDACTED] forwarded [REDACTED]"),
            "{shown}"
        );
    }
    for secret in secrets {
        ctx.assert_no_run_file_holds(secret);
    }
    for dir in ctx.run_dirs() {
        let stdout_log = std::fs::read_to_string(dir.join("stdout.log")).unwrap();
        assert!(
            stdout_log.contains("db [REDACTED] token [REDACTED]"),
            "{stdout_log}"
        );
    }

    let receipt = &ctx.run_dirs()[0].join("result.json");
    let receipt: runbook::receipt::Receipt =
        serde_json::from_str(&std::fs::read_to_string(receipt).unwrap()).unwrap();
    let env: Vec<(&str, &str, Option<&str>)> = receipt
        .env
        .iter()
        .map(|v| (v.name.as_str(), v.layer.as_str(), v.file.as_deref()))
        .collect();
    let toml = ctx.work.join("runbook.toml");
    let local = ctx.work.join(".env.local");
    assert_eq!(
        env,
        [
            ("ACME_TOKEN", "dotenv_local", Some(local.to_str().unwrap())),
            ("DATABASE_URL", "config", Some(toml.to_str().unwrap())),
            ("FORWARDED", "env_file", Some(extra.to_str().unwrap())),
            ("PLAIN_SETTING", "env_file", Some(extra.to_str().unwrap())),
        ]
    );
}

#[test]
fn the_receipt_says_where_each_setting_came_from() {
    let ctx = TestContext::new();
    ctx.write_work("runbook.toml", "model = \"team/model\"\nmax_cost = 7\n");
    ctx.write_work("runbook.local.toml", "max_cost = 8\n");
    let out = ctx.run_fake(FINISHED, &["--timeout", "10m"]);
    out.assert_exit(0);
    let receipt = ctx.receipt();
    assert_eq!(receipt.model.as_deref(), Some("team/model"));
    assert_eq!(receipt.limits.max_cost_usd, Some(8.0));
    let from: Vec<(String, String)> = receipt
        .settings
        .iter()
        .map(|s| (s.key.clone(), s.from.to_string()))
        .collect();
    let (repo, local) = (
        ctx.work.join("runbook.toml"),
        ctx.work.join("runbook.local.toml"),
    );
    assert_eq!(
        from,
        [
            ("model".to_owned(), format!("repo {}:1:1", repo.display())),
            (
                "agents.opencode.bin".to_owned(),
                "flag --agent-bin".to_owned()
            ),
            (
                "inactivity_timeout".to_owned(),
                "flag --inactivity-timeout".to_owned()
            ),
            ("kill_grace".to_owned(), "flag --kill-grace".to_owned()),
            ("timeout".to_owned(), "flag --timeout".to_owned()),
            (
                "max_cost".to_owned(),
                format!("local {}:1:1", local.display())
            ),
            ("runs_dir".to_owned(), "env RUNBOOK_RUNS_DIR".to_owned()),
        ]
    );
}

/// Runs `runbook run` against a fake agent that must never start, and returns the error line.
fn refused(ctx: &TestContext) -> Outcome {
    let out = ctx.run_fake(FINISHED, &[]);
    out.assert_exit(2);
    assert_eq!(out.stderr.lines().count(), 1, "one line: {}", out.stderr);
    assert!(ctx.run_dirs().is_empty(), "nothing was started");
    out
}

#[test]
fn bad_configuration_is_one_line_saying_where_and_what_was_expected() {
    let cases: &[(&str, &str)] = &[
        (
            "modle = \"x\"\n",
            "runbook.toml:1:1: unknown key `modle`; did you mean `model`?\n",
        ),
        (
            "model = \"x\"\nmax_cost = true\n",
            "runbook.toml:2:12: `max_cost`: expected a positive amount of US dollars such as 2.5, found true",
        ),
        (
            "timeout = \"soon\"\n",
            "runbook.toml:1:11: `timeout`: expected a duration above zero and at most a year, such as \"90s\", \"3m\" or \"1h30m\", found \"soon\"",
        ),
        (
            "timeout = 0\n",
            "runbook.toml:1:11: `timeout`: expected a duration above zero",
        ),
        (
            "agent = \"emacs\"\n",
            "runbook.toml:1:9: `agent`: expected one of \"opencode\"",
        ),
        (
            "[agents.vim]\nbin = \"vim\"\n",
            "runbook.toml:1:9: unknown agent `vim`; expected one of opencode, claude, codex",
        ),
        (
            "[agents.opencode]\nbinary = \"x\"\n",
            "runbook.toml:2:1: unknown key `binary` in [agents.opencode]; expected one of bin, args",
        ),
        (
            "[agents.opencode]\nargs = \"--x\"\n",
            "runbook.toml:2:8: `agents.opencode.args`: expected an array of strings, found \"--x\"",
        ),
        (
            "[prices.m]\ninput = 1\noutput = 2\n",
            "runbook.toml:1:1: `prices.\"m\"`: expected a table of USD per million tokens: input, cached_input, output and optionally cache_write: missing field `cached_input`",
        ),
        (
            "[env]\n\"NOT-A-NAME\" = \"x\"\n",
            "runbook.toml:2:1: `NOT-A-NAME` is not a variable name",
        ),
        (
            "[env]\nX = \"${UNSET_IN_THE_SHELL}\"\n",
            "runbook.toml:2:5: env.X: ${UNSET_IN_THE_SHELL} is not set in the environment runbook was started from",
        ),
        ("model = \"unterminated\n", "runbook.toml:1:"),
        ("plan = yes\n", "runbook.toml:1:8: "),
    ];
    for (toml, needle) in cases {
        let ctx = TestContext::new();
        ctx.write_work("runbook.toml", toml);
        let out = refused(&ctx);
        let expected = format!("error: {}/{needle}", ctx.work.display());
        assert!(
            out.stderr.starts_with(&expected),
            "{toml:?}:\n  got {}\n want {expected}",
            out.stderr.trim()
        );
    }
}

#[test]
fn a_misspelt_key_or_name_says_the_one_it_is_close_to_else_where_the_keys_are_listed() {
    let files: &[(&str, &str)] = &[
        (
            "inactivty_timeout = \"5m\"\n",
            "runbook.toml:1:1: unknown key `inactivty_timeout`; did you mean `inactivity_timeout`?",
        ),
        (
            "model = \"m\"\nmax-cost = 2\n",
            "runbook.toml:2:1: unknown key `max-cost`; did you mean `max_cost`?",
        ),
        (
            "Timout = \"5m\"\n",
            "runbook.toml:1:1: unknown key `Timout`; did you mean `timeout`?",
        ),
        (
            "[chekcs]\ntest = \"true\"\n",
            "runbook.toml:1:2: unknown key `chekcs`; did you mean `checks`?",
        ),
        (
            "[agents.claud]\nbin = \"x\"\n",
            "runbook.toml:1:9: unknown agent `claud`; did you mean `claude`?",
        ),
        (
            "[agents.claude]\nbni = \"x\"\n",
            "runbook.toml:2:1: unknown key `bni` in [agents.claude]; did you mean `bin`?",
        ),
        (
            "agent = \"claud\"\n",
            "runbook.toml:1:9: `agent`: expected one of \"opencode\", \"claude\", \"codex\", found \"claud\"; did you mean `claude`?",
        ),
        (
            "permissions = \"readonly\"\n",
            "runbook.toml:1:15: `permissions`: expected one of \"agent\", \"read-only\", \"workspace\", \"bypass\", found \"readonly\"; did you mean `read-only`?",
        ),
        (
            "bin = \"/usr/bin/x\"\n",
            "runbook.toml:1:1: unknown key `bin`; `bin` is set per agent, under [agents.NAME]",
        ),
        (
            "frobnicate = 1\n",
            "runbook.toml:1:1: unknown key `frobnicate`; `runbook config --keys` lists the keys",
        ),
        (
            "repair = 1\n",
            "runbook.toml:1:1: unknown key `repair`; `runbook config --keys` lists the keys",
        ),
    ];
    for (toml, needle) in files {
        let ctx = TestContext::new();
        ctx.write_work("runbook.toml", toml);
        let out = refused(&ctx);
        let expected = format!("error: {}/{needle}\n", ctx.work.display());
        assert_eq!(out.stderr, expected, "{toml:?}");
    }
    // The fields of a check's or an observer's table.
    for (toml, needle) in [
        (
            "[checks]\ntest = { command = \"x\", timout = \"1m\" }\n",
            "unknown field `timout`; did you mean `timeout`?",
        ),
        (
            "[[observers]]\ncomand = \"cat\"\n",
            "unknown field `comand` of an observer; did you mean `command`?",
        ),
        (
            "[[observers]]\nprogram = \"cat\"\n",
            "unknown field `program` of an observer; expected command or raw",
        ),
    ] {
        let ctx = TestContext::new();
        ctx.write_work("runbook.toml", toml);
        refused(&ctx).assert_stderr_has(needle);
    }
    // The list of keys is where the error says, and it answers although the file is wrong.
    let ctx = TestContext::new();
    ctx.write_work("runbook.toml", "frobnicate = 1\n");
    let keys = ctx.run(&["config", "--keys"]);
    keys.assert_exit(0);
    for key in [
        "inactivity_timeout",
        "max_cost",
        "agents.NAME.bin",
        "checks.NAME",
    ] {
        assert!(
            keys.stdout
                .lines()
                .any(|l| l.starts_with(&format!("{key} "))),
            "{key}: {}",
            keys.stdout
        );
    }

    // Variables and flags whose values runbook checks itself.
    for (var, value, needle) in [
        ("RUNBOOK_AGENT", "claud", "did you mean `claude`?"),
        (
            "RUNBOOK_PERMISSIONS",
            "readonly",
            "did you mean `read-only`?",
        ),
        ("RUNBOOK_COLOR", "allways", "did you mean `always`?"),
        ("RUNBOOK_VIA", "acpp", "did you mean `acp`?"),
    ] {
        let mut ctx = TestContext::new();
        ctx.env(var, value);
        let out = refused(&ctx);
        out.assert_stderr_has(var).assert_stderr_has(needle);
    }
    // A variable that misspells a key's is not read: said, with the one meant.
    let mut ctx = TestContext::new();
    ctx.env("RUNBOOK_INACTIVTY_TIMEOUT", "5m");
    let out = ctx.run(&["config"]);
    out.assert_exit(0).assert_stderr_has(
        "warning: RUNBOOK_INACTIVTY_TIMEOUT is not a runbook variable, so it is ignored; did you mean RUNBOOK_INACTIVITY_TIMEOUT?",
    );
    let ctx = TestContext::new();
    let out = ctx.run_fake(FINISHED, &["--via", "natve"]);
    out.assert_exit(2)
        .assert_stderr_has("--via is \"natve\"; use native or acp (did you mean `native`?)");
    assert!(ctx.run_dirs().is_empty(), "nothing was started");
    let out = ctx.run(&["list", "--outcome", "complted"]);
    out.assert_exit(2)
        .assert_stderr_has("`complted` is not an outcome; did you mean `completed`?");
    let out = ctx.run(&["run", "--agent", "claud", "x"]);
    out.assert_exit(2)
        .assert_stderr_has("a similar value exists: 'claude'");
}

#[test]
fn the_other_files_the_environment_and_unreadable_files_are_refused_the_same_way() {
    let repo = |ctx: &TestContext| ctx.work.join("runbook.toml");
    let ctx = TestContext::new();
    let global = ctx.write_global_config("inactivity_timeout = \"3 fortnights\"\n");
    let out = refused(&ctx);
    assert!(
        out.stderr.starts_with(&format!(
            "error: {}:1:22: `inactivity_timeout`: expected a duration",
            global.display()
        )),
        "{}",
        out.stderr
    );

    let ctx = TestContext::new();
    ctx.write_work("runbook.local.toml", "[agents]\nopencode = 3\n");
    let out = refused(&ctx);
    out.assert_stderr_has(
        "runbook.local.toml:2:12: `opencode` must be a table of the agent's settings, found a integer",
    );

    let mut ctx = TestContext::new();
    ctx.env("RUNBOOK_MAX_COST", "a lot");
    let out = refused(&ctx);
    assert_eq!(
        out.stderr.trim(),
        "error: RUNBOOK_MAX_COST: expected a positive amount of US dollars such as 2.5, found \"a lot\""
    );

    let ctx = TestContext::new();
    ctx.write_work(".env", "GOOD=1\nexport BAD VALUE\n");
    let out = refused(&ctx);
    assert_eq!(
        out.stderr.trim(),
        format!(
            "error: {}:2:12: expected `=` after `BAD`",
            ctx.work.join(".env").display()
        )
    );

    let ctx = TestContext::new();
    std::fs::create_dir(repo(&ctx)).unwrap();
    let out = refused(&ctx);
    assert!(
        out.stderr
            .starts_with(&format!("error: {}: cannot read it:", repo(&ctx).display())),
        "{}",
        out.stderr
    );

    let ctx = TestContext::new();
    ctx.write_work("runbook.toml", b"model = \"caf\xe9\"\n");
    let out = refused(&ctx);
    assert_eq!(
        out.stderr.trim(),
        format!("error: {}:1:13: expected UTF-8 text", repo(&ctx).display())
    );

    let ctx = TestContext::new();
    ctx.write_work("runbook.toml", "agent_cmd = \"\"\n");
    let out = refused(&ctx);
    assert_eq!(
        out.stderr.trim(),
        format!(
            "error: `agent_cmd` at {}:1:1 is empty: give the command that starts the agent",
            repo(&ctx).display()
        )
    );

    let ctx = TestContext::new();
    let missing = ctx.root().join("missing.env");
    let out = ctx.run_fake(FINISHED, &["--env-file", missing.to_str().unwrap()]);
    out.assert_exit(2);
    assert!(
        out.stderr
            .starts_with(&format!("error: {}: cannot read it", missing.display())),
        "{}",
        out.stderr
    );
}

#[test]
fn init_writes_a_starter_once_and_it_reads_back() {
    let ctx = TestContext::new();
    std::fs::create_dir(ctx.work.join(".git")).unwrap();
    let sub = ctx.work.join("src");
    std::fs::create_dir(&sub).unwrap();
    let mut cmd = ctx.runbook(&["config", "--init"]);
    cmd.current_dir(&sub);
    let out = run(&mut cmd, LIMIT);
    out.assert_exit(0);
    let written = ctx.work.join("runbook.toml");
    out.assert_stderr_has(written.to_str().unwrap());
    let text = std::fs::read_to_string(&written).unwrap();
    assert!(text.contains("#inactivity_timeout = \"3m\""), "{text}");

    // A file of comments sets nothing.
    let config = config_json(&ctx, &[], &[]);
    assert_eq!(setting(&config, "model")["from"]["layer"], "default");

    let mut cmd = ctx.runbook(&["config", "--init"]);
    cmd.current_dir(&sub);
    let again = run(&mut cmd, LIMIT);
    assert_eq!(
        again.code(),
        Some(2),
        "never over an existing file: {}",
        again.stderr
    );
    again.assert_stderr_has("already exists");
    assert_eq!(std::fs::read_to_string(&written).unwrap(), text);
}

#[test]
fn runbook_toml_is_found_from_a_subdirectory_and_status_uses_its_runs_dir() {
    let ctx = TestContext::new();
    ctx.write_work("runbook.toml", "runs_dir = \"team-runs\"\n");
    let sub = ctx.work.join("deep/er");
    std::fs::create_dir_all(&sub).unwrap();
    let mut cmd = ctx.fake_run(FINISHED, &["--cwd", sub.to_str().unwrap()]);
    cmd.env_remove("RUNBOOK_RUNS_DIR");
    let out = run(&mut cmd, LIMIT);
    out.assert_exit(0);
    let runs = ctx.work.join("team-runs");
    assert_eq!(
        std::fs::read_dir(&runs).map(Iterator::count).unwrap_or(0),
        1,
        "the run went to {}",
        runs.display()
    );

    let mut cmd = ctx.runbook(&["status", "--json"]);
    cmd.env_remove("RUNBOOK_RUNS_DIR").current_dir(&sub);
    let out = run(&mut cmd, LIMIT);
    out.assert_exit(0);
    out.assert_stdout_has("\"outcome\": \"completed\"");
    assert!(Path::new(&runs).is_dir());
}

#[test]
fn durations_in_months_days_or_years_are_refused_with_what_was_meant() {
    let cases: &[(&[&str], &str)] = &[
        (&["--timeout", "3M"], "did you mean 3m (minutes)?"),
        (
            &["--inactivity-timeout", "3M"],
            "did you mean 3m (minutes)?",
        ),
        (
            &["--timeout", "1d"],
            "days are not taken; did you mean 24h?",
        ),
        (
            &["--timeout", "1day"],
            "days are not taken; did you mean 24h?",
        ),
        (&["--timeout", "2y"], "years are not taken"),
        (&["--finish-grace", "5S"], "did you mean 5s?"),
        (
            &["--inactivity-timeout", "25h"],
            "write `off` to turn it off",
        ),
    ];
    for (flags, needle) in cases {
        let ctx = TestContext::new();
        let out = ctx.run_fake(FINISHED, flags);
        out.assert_exit(2);
        let first = out.stderr.lines().next().unwrap_or_default();
        assert!(first.contains(needle), "{flags:?}: {}", out.stderr);
        assert!(ctx.run_dirs().is_empty(), "{flags:?}: nothing was started");
    }
    let ctx = TestContext::new();
    ctx.write_work("runbook.toml", "inactivity_timeout = \"2 months\"\n");
    let out = refused(&ctx);
    out.assert_stderr_has("runbook.toml:1:22: `inactivity_timeout`: expected a duration");
    out.assert_stderr_has("did you mean 2m (minutes)?");
}

#[test]
fn the_watchdog_is_turned_off_only_in_words() {
    let ctx = TestContext::new();
    let out = ctx.run_fake(FINISHED, &["--inactivity-timeout", "off"]);
    out.assert_exit(0);
    let config = config_json(&ctx, &["--inactivity-timeout", "off"], &[]);
    assert_eq!(
        setting(&config, "inactivity_timeout")["value"],
        json!("off")
    );
}
