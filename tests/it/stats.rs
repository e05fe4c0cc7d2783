//! `runbook stats`: the numbers over many runs, checked against a small set of receipts whose
//! every figure is worked out by hand; filters; receipts that cannot be used.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::{self, TestContext, browser};

/// A receipt from the fixture, with `changes` applied to it.
pub(crate) fn receipt(changes: Value) -> Value {
    let mut r: Value = serde_json::from_str(
        &std::fs::read_to_string(support::fixtures().join("receipt.json")).unwrap(),
    )
    .unwrap();
    for (k, v) in changes.as_object().unwrap() {
        r[k] = v.clone();
    }
    r
}

pub(crate) fn put(runs: &Path, id: &str, body: &str) {
    let dir = runs.join(id);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("result.json"), body).unwrap();
}

fn tools(by_name: Value) -> Value {
    json!({"total": 0, "errors": 0, "denied": 0, "by_name": by_name})
}

fn tokens(input: u64, output: u64) -> Value {
    json!({"input": input, "output": output, "reasoning": 0, "cache_read": 10, "cache_write": 0, "total": input + output})
}

/// Five runs over three days, two agents, two models, two projects; and four receipts that cannot
/// be used, and one run without a receipt whose runbook is gone.
fn runs(ctx: &TestContext) -> std::path::PathBuf {
    let runs = ctx.root().join("elsewhere");
    let base = |id: &str,
                day: &str,
                agent: &str,
                model: &str,
                cwd: &str,
                outcome: &str,
                ms: u64,
                usd: Value| {
        receipt(json!({
            "run_id": id, "started_at": format!("2026-11-{day}T10:00:00Z"),
            "agent": {"name": agent}, "model": model, "cwd": cwd, "outcome": outcome,
            "duration_ms": ms, "cost": {"usd": usd, "source": "reported", "known_usd": 0.0},
        }))
    };
    let mut a = base(
        "a",
        "20",
        "opencode",
        "m1",
        "/p/one",
        "completed",
        1000,
        json!(1.0),
    );
    a["tool_calls"] = tools(
        json!({"bash": {"calls": 4, "errors": 2, "denied": 1}, "read": {"calls": 3, "errors": 0, "denied": 0}}),
    );
    a["tokens"] = tokens(100, 10);
    a["permission_denials"] = json!([{"tool": "bash", "detail": "rm -rf x"}]);
    let mut b = base(
        "b",
        "20",
        "opencode",
        "m1",
        "/p/one",
        "hung",
        4000,
        json!(3.0),
    );
    b["tool_calls"] = tools(json!({"bash": {"calls": 1, "errors": 1, "denied": 0}}));
    b["tokens"] = tokens(200, 20);
    b["message"] = json!("no output for 5m: the watchdog stopped the agent");
    b["provider_errors"] = json!([{"name": "rate_limit", "message": "slow down", "status": 429}, {"name": "rate_limit", "message": "again", "status": 429}]);
    let mut c = base(
        "c",
        "21",
        "claude",
        "m2",
        "/p/two",
        "checks_failed",
        2000,
        json!(2.0),
    );
    c["tokens"] = tokens(300, 30);
    c["checks"] = json!([
        {"attempt": 0, "name": "t", "command": "x", "passed": false, "exit": {"code": 1}, "duration_ms": 1, "output_bytes": 0, "tail": [], "log": ""},
        {"attempt": 1, "name": "t", "command": "x", "passed": false, "exit": {"code": 1}, "duration_ms": 1, "output_bytes": 0, "tail": [], "log": ""}
    ]);
    c["repair"] = json!({"stopped": "attempts_exhausted", "attempts": []});
    c["message"] = json!("the checks failed: t");
    c["prompt"] = json!("\n  </td><script>alert(1)</script> make it pass\nsecond line");
    let mut d = base(
        "d",
        "22",
        "claude",
        "m2",
        "/p/two",
        "completed",
        3000,
        json!(null),
    );
    d["tokens"] = tokens(400, 40);
    d["checks"] = json!([
        {"attempt": 0, "name": "t", "command": "x", "passed": false, "exit": {"code": 1}, "duration_ms": 1, "output_bytes": 0, "tail": [], "log": ""},
        {"attempt": 1, "name": "t", "command": "x", "passed": true, "exit": {"code": 0}, "duration_ms": 1, "output_bytes": 0, "tail": [], "log": ""}
    ]);
    d["repair"] = json!({"stopped": "passed", "attempts": []});
    let mut e = base(
        "e",
        "22",
        "opencode",
        "m1",
        "/p/one",
        "completed",
        5000,
        json!(4.0),
    );
    e["tokens"] = tokens(500, 50);
    e["git"] = json!({"root": "/p/two", "dirty": false});
    for (id, r) in [("a", a), ("b", b), ("c", c), ("d", d), ("e", e)] {
        put(&runs, id, &r.to_string());
    }
    let good = receipt(json!({})).to_string();
    put(&runs, "cut", &good[..good.len() / 2]);
    put(&runs, "junk", "{\"hello\": 1}");
    put(
        &runs,
        "future",
        &receipt(json!({"schema_version": 2, "newfield": true})).to_string(),
    );
    put(
        &runs,
        "huge",
        &format!("{}{}", " ".repeat(17 * 1024 * 1024), good),
    );
    // A run whose runbook died before writing its receipt.
    let gone = runs.join("gone");
    std::fs::create_dir_all(&gone).unwrap();
    let started = json!({"seq": 0, "ts": "2026-11-22T10:00:00Z", "turn": {"index": 0, "kind": "start"}, "type": "run.started",
        "schema_version": 1, "run_id": "gone", "runbook_version": "0.2.0", "agent": "opencode", "prompt": "x", "cwd": "/p/one",
        "run_dir": gone.display().to_string(), "pid": 999_999_999u32, "limits": {"inactivity_timeout_ms": 1, "kill_grace_ms": 1, "finish_grace_ms": 1}});
    std::fs::write(gone.join("events.ndjson"), format!("{started}\n")).unwrap();
    runs
}

fn stats(ctx: &TestContext, runs: &Path, extra: &[&str]) -> Value {
    let dir = runs.to_str().unwrap();
    let mut args = vec!["stats", dir, "--json"];
    args.extend_from_slice(extra);
    let out = ctx.run(&args);
    out.assert_exit(0);
    serde_json::from_str(&out.stdout).unwrap()
}

#[test]
fn every_figure_over_a_hand_counted_set_of_runs() {
    let ctx = TestContext::new();
    let runs = runs(&ctx);
    let s = stats(&ctx, &runs, &[]);
    assert_eq!(s["runs"], 5);
    assert_eq!(s["abandoned"], 1);
    assert_eq!(s["running"], 0);
    assert_eq!(
        s["skipped"],
        json!({"cut short": 1, "not a receipt": 1, "of schema version 2": 1, "too large": 1})
    );
    assert_eq!(s["first"], "2026-11-20T10:00:00Z");
    assert_eq!(s["last"], "2026-11-22T10:00:00Z");
    // 3 of 5 completed.
    assert_eq!(s["success_rate"], 0.6);
    assert_eq!(
        s["outcomes"],
        json!({"completed": 3, "hung": 1, "checks_failed": 1, "abandoned": 1})
    );
    // Known costs 1, 3, 2, 4 (d's is unknown): total 10, median (nearest rank) 2, p90 4.
    assert_eq!(
        s["cost"],
        json!({"total_usd": 10.0, "median_usd": 2.0, "p90_usd": 4.0, "unknown": 1})
    );
    assert_eq!(
        s["tokens"],
        json!({"input": 1500, "output": 150, "reasoning": 0, "cache_read": 50, "cache_write": 0, "total": 1650})
    );
    // Durations 1, 2, 3, 4, 5 s.
    assert_eq!(s["duration_ms"], json!({"median": 3000, "p90": 5000}));
    assert_eq!(s["failing_tools"], json!([["bash", 3, 5]]));
    // Twice in one run is one run.
    assert_eq!(s["provider_errors"], json!([["rate_limit (429)", 1]]));
    assert_eq!(s["denials"], json!([["bash", 1]]));
    // c and d failed their first checks; d's passed in the end.
    assert_eq!(
        s["repair"],
        json!({"failing": 2, "repaired": 1, "rate": 0.5})
    );
    // The 22nd's total is unknown (d's is): what is known of it is a lower bound.
    let days: Vec<(String, u64, u64, Option<f64>, f64, u64)> = s["per_day"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["key"].as_str().unwrap().to_owned(),
                d["runs"].as_u64().unwrap(),
                d["completed"].as_u64().unwrap(),
                d["cost_usd"].as_f64(),
                d["known_cost_usd"].as_f64().unwrap(),
                d["cost_unknown"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        days,
        [
            ("2026-11-20".to_owned(), 2, 1, Some(4.0), 4.0, 0),
            ("2026-11-21".to_owned(), 1, 0, Some(2.0), 2.0, 0),
            ("2026-11-22".to_owned(), 2, 2, None, 4.0, 1)
        ]
    );
    assert!(s["per_day"][2]["cost_usd"].is_null());
    let keys = |field: &str| -> Vec<(String, u64)> {
        s[field]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                (
                    g["key"].as_str().unwrap().to_owned(),
                    g["runs"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(
        keys("per_agent"),
        [("opencode".to_owned(), 3), ("claude".to_owned(), 2)]
    );
    assert_eq!(
        keys("per_model"),
        [("m1".to_owned(), 3), ("m2".to_owned(), 2)]
    );
    // e ran in /p/one but its git root is /p/two.
    assert_eq!(
        keys("per_project"),
        [("/p/two".to_owned(), 3), ("/p/one".to_owned(), 2)]
    );
    assert_eq!(s["per_agent"][0]["median_duration_ms"], 4000);
}

#[test]
fn filters_narrow_every_figure() {
    let ctx = TestContext::new();
    let runs = runs(&ctx);
    let n = |extra: &[&str]| stats(&ctx, &runs, extra)["runs"].as_u64().unwrap();
    assert_eq!(n(&["--agent", "claude"]), 2);
    assert_eq!(n(&["--model", "m1"]), 3);
    assert_eq!(n(&["--project", "/p/two"]), 3);
    assert_eq!(n(&["--outcome", "completed"]), 3);
    assert_eq!(n(&["--outcome", "hung", "--outcome", "checks_failed"]), 2);
    assert_eq!(n(&["--since", "2026-11-21"]), 3);
    assert_eq!(n(&["--until", "2026-11-21"]), 2);
    assert_eq!(n(&["--since", "2026-11-21", "--until", "2026-11-22"]), 1);
    // Relative times: all these runs are older than a day from now.
    assert_eq!(n(&["--since", "1d"]), 0);
    let s = stats(&ctx, &runs, &["--agent", "claude"]);
    assert_eq!(s["cost"]["total_usd"], 2.0);
    assert_eq!(
        s["abandoned"], 1,
        "a run without a receipt has no agent to filter by"
    );
}

#[test]
fn the_text_reads_at_a_glance_and_bad_input_is_one_line() {
    let ctx = TestContext::new();
    let runs = runs(&ctx);
    let out = ctx.run(&["stats", "--wide", runs.to_str().unwrap()]);
    out.assert_exit(0)
        .assert_stdout_has("5 runs in ")
        .assert_stdout_has(
            "4 receipts skipped: 1 cut short, 1 not a receipt, 1 of schema version 2, 1 too large",
        )
        .assert_stdout_has("3 of 5 completed (60.0%) · ")
        .assert_stdout_has(
            "at least $10.00 total · median $2.00 · p90 $4.00 per run (unknown for 1 run)",
        )
        .assert_stdout_has("bash 3 of 5")
        .assert_stdout_has("2026-11-20  2     1       $4.00")
        .assert_stdout_has("2026-11-22  2     0       at least $4.00");
    assert!(!out.stdout.contains('█'), "no bars off a terminal");
    let none = ctx.run(&[
        "stats",
        runs.to_str().unwrap(),
        "--agent",
        "nobody",
        "--outcome",
        "completed",
    ]);
    none.assert_exit(0)
        .assert_stdout_has("No runs match: widen the filters");
    // A first run has yet to be made: the runs directory is made, and that is no error.
    let fresh = TestContext::new();
    let first = fresh.run(&["stats"]);
    first
        .assert_exit(0)
        .assert_stdout_has("0 runs in ")
        .assert_stdout_has("No runs yet: `runbook run` makes the first.");
    let bad = ctx.run(&["stats", "--since", "last tuesday"]);
    bad.assert_exit(2)
        .assert_stderr_has("is neither a time ago");
    let missing = ctx.run(&["stats", "/no/such/runs"]);
    missing
        .assert_exit(2)
        .assert_stderr_has("/no/such/runs is not a runs directory");
}

/// Three runs of one project, `/p/far`: two whose receipts claim absurd figures, one sane.
fn absurd_runs(ctx: &TestContext) -> std::path::PathBuf {
    let runs = ctx.root().join("absurd");
    let run = |id: &str, usd: Value, tokens: Value| {
        let r = receipt(json!({
            "run_id": id, "started_at": "2026-11-20T10:00:00Z", "cwd": "/p/far",
            "outcome": "completed", "duration_ms": 1000,
            "cost": {"usd": usd, "source": "reported", "known_usd": 0.0},
            "tokens": tokens,
        }));
        put(&runs, id, &r.to_string());
    };
    let huge = json!({"input": u64::MAX, "output": 0, "reasoning": 0, "cache_read": 0, "cache_write": 0, "total": u64::MAX});
    run("x", json!(1e308), huge.clone());
    run("y", json!(1e308), huge);
    run("z", json!(2.5), tokens(100, 10));
    runs
}

#[test]
fn figures_beyond_their_bounds_are_left_out_with_the_reason_and_nothing_wraps() {
    let ctx = TestContext::new();
    let runs = absurd_runs(&ctx);
    let s = stats(&ctx, &runs, &[]);
    assert_eq!(
        s["cost"],
        json!({"total_usd": 2.5, "median_usd": 2.5, "p90_usd": 2.5, "unknown": 2})
    );
    // Tokens: the sane run's, a lower bound; never a sum that wrapped.
    assert_eq!(s["tokens"]["total"], 110);
    assert_eq!(s["tokens"]["incomplete"], true);
    assert_eq!(
        s["implausible"],
        json!([
            {"figure": "cost", "runs": 2, "example": "$1e308", "bound": "a run costs from $0 to $1e6"},
            {"figure": "tokens", "runs": 2, "example": "18446744073709551615 tokens", "bound": "a run uses at most 1e15 tokens of a kind"}
        ])
    );
    let project = &s["per_project"][0];
    assert_eq!(project["cost_usd"], Value::Null);
    assert_eq!(project["known_cost_usd"], 2.5);
    assert_eq!(project["cost_unknown"], 2);

    let out = ctx.run(&["stats", runs.to_str().unwrap()]);
    out.assert_exit(0)
        .assert_stdout_has(
            "2 runs' cost skipped: implausible ($1e308; a run costs from $0 to $1e6)",
        )
        .assert_stdout_has("2 runs' tokens skipped: implausible (18446744073709551615 tokens;")
        .assert_stdout_has("at least $2.50 total · median $2.50")
        .assert_stdout_has("tokens    at least 110 ");
    assert!(!out.stdout.contains("inf"), "{}", out.stdout);
    assert!(
        out.stdout.lines().all(|l| l.chars().count() < 160),
        "{}",
        out.stdout
    );
}

#[test]
fn a_duration_or_tool_count_beyond_its_bound_is_unknown_never_a_figure() {
    let ctx = TestContext::new();
    let runs = ctx.root().join("long");
    let r = receipt(json!({
        "run_id": "l", "started_at": "2026-11-20T10:00:00Z", "cwd": "/p/long",
        "outcome": "completed", "duration_ms": u64::MAX,
        "cost": {"usd": -0.0, "source": "reported", "known_usd": 0.0},
        "tool_calls": tools(json!({"bash": {"calls": u32::MAX, "errors": u32::MAX, "denied": 0}})),
    }));
    put(&runs, "l", &r.to_string());
    let s = stats(&ctx, &runs, &[]);
    assert_eq!(s["duration_ms"], json!({"median": null, "p90": null}));
    assert_eq!(s["per_project"][0]["median_duration_ms"], Value::Null);
    assert_eq!(s["failing_tools"], json!([]));
    let figures: Vec<&str> = s["implausible"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["figure"].as_str().unwrap())
        .collect();
    assert_eq!(figures, ["duration", "tool calls"]);
    let out = ctx.run(&["stats", "--wide", runs.to_str().unwrap()]);
    out.assert_exit(0)
        .assert_stdout_has("1 run's duration skipped: implausible (18446744073709551615 ms; a run takes at most a year)")
        .assert_stdout_has("median - · p90 -");
    assert!(!out.stdout.contains("$-0"), "{}", out.stdout);
    assert!(!out.stdout.contains("4294967295 of"), "{}", out.stdout);
}

#[test]
fn a_project_whose_cost_is_unknown_shows_it_unknown_never_zero() {
    let ctx = TestContext::new();
    let runs = ctx.root().join("unknown");
    for (id, cwd) in [("u", "/p/unknown"), ("k", "/p/known")] {
        let usd = if id == "u" { json!(null) } else { json!(0.25) };
        let r = receipt(json!({
            "run_id": id, "started_at": "2026-11-20T10:00:00Z", "cwd": cwd,
            "outcome": "completed", "duration_ms": 1000,
            "cost": {"usd": usd, "source": null, "known_usd": 0.0, "incomplete": true},
        }));
        put(&runs, id, &r.to_string());
    }
    let s = stats(&ctx, &runs, &[]);
    let row = |key: &str| {
        s["per_project"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["key"] == key)
            .unwrap()
            .clone()
    };
    assert_eq!(row("/p/unknown")["cost_usd"], Value::Null);
    assert_eq!(row("/p/unknown")["cost_unknown"], 1);
    assert_eq!(row("/p/known")["cost_usd"], 0.25);
    let out = ctx.run(&["stats", runs.to_str().unwrap()]);
    out.assert_exit(0);
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("/p/unknown"))
        .unwrap();
    assert!(line.contains("unknown"), "{line}");
    assert!(!line.contains('$'), "{line}");
}

#[test]
fn the_html_page_shows_the_receipts_numbers_in_chromium() {
    let ctx = TestContext::new();
    let runs = runs(&ctx);
    let page = ctx.work.join("stats.html");
    let out = ctx.run(&[
        "stats",
        runs.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    out.assert_exit(0).assert_stderr_has("wrote ");
    let html = std::fs::read_to_string(&page).unwrap();
    // Nothing is fetched, nothing runs.
    for fetch in ["<script", "<link", "<img", "<iframe"] {
        assert!(!html.contains(fetch), "{fetch} in the page");
    }
    let scratch = ctx.root().join("browser");
    std::fs::create_dir_all(&scratch).unwrap();
    let look = browser::Look {
        width: 1400,
        dark: false,
    };
    let seen = browser::check(&page, &scratch, &look);
    let figures = &seen["figures"];
    let expected = [
        ("card:runs", "5"),
        ("card:success", "60.0%"),
        ("card:failed", "2"),
        ("card:cost", "at least $10.00"),
        ("card:median-cost", "$2.00"),
        ("card:p90-cost", "$4.00"),
        ("card:median-duration", "3.0s"),
        ("abandoned", "1 abandoned (no receipt)"),
        // Counted by hand from the receipts: a, d, e completed; b hung; c's checks failed;
        // `gone` has no receipt.
        ("outcome:completed", "3"),
        ("outcome:hung", "1"),
        ("outcome:checks_failed", "1"),
        ("outcome:abandoned", "1"),
        ("duration:< 1m", "5"),
        ("duration:1–5m", "0"),
        // a $1 + b $3; c $2 + d unknown + e $4 (its git root is /p/two).
        ("cost-project:/p/one", "$4.00"),
        ("cost-project:/p/two", "at least $6.00"),
        ("cost-model:m1", "$8.00"),
        ("cost-model:m2", "at least $2.00"),
        ("cost-agent:opencode", "$8.00"),
        ("cost-agent:claude", "at least $2.00"),
        ("run-outcome:b", "hung"),
        ("run-outcome:c", "checks_failed"),
        (
            "reason:b",
            "no output for 5m: the watchdog stopped the agent",
        ),
        ("reason:c", "the checks failed: t"),
    ];
    for (key, value) in expected {
        assert_eq!(figures[key], value, "{key} in {figures:#}");
    }
    // Only the runs that did not complete have a reason.
    let reasons: Vec<&String> = figures
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| k.starts_with("reason:"))
        .collect();
    assert_eq!(reasons, ["reason:b", "reason:c"]);
    // c's prompt: its first line, as text.
    assert!(
        html.contains("&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt; make it pass<"),
        "the prompt's first line, escaped"
    );
    assert!(!html.contains("second line"), "only the first line");
    assert_eq!(seen["foreign_elements"], 0, "{seen:#}");
    assert_eq!(seen["fetching"], 0, "{seen:#}");
    assert_eq!(seen["problems"], serde_json::json!([]), "{seen:#}");
}

#[test]
fn a_plan_not_approved_or_a_run_a_person_stopped_is_not_counted_failed() {
    let ctx = TestContext::new();
    let runs = ctx.root().join("decided");
    for (id, outcome) in [
        ("p", "aborted"),
        ("q", "interrupted"),
        ("r", "hung"),
        ("s", "completed"),
    ] {
        let r = receipt(json!({
            "run_id": id, "started_at": "2026-11-23T10:00:00Z", "agent": {"name": "opencode"},
            "model": "m1", "cwd": "/p/one", "outcome": outcome, "duration_ms": 1000,
            "cost": {"usd": 1.0, "source": "reported", "known_usd": 1.0},
        }));
        put(&runs, id, &r.to_string());
    }
    let out = ctx.run(&["stats", runs.to_str().unwrap()]);
    out.assert_exit(0)
        .assert_stdout_has("DAY         RUNS  FAILED")
        .assert_stdout_has("2026-11-23  4     1 ");
    let figures = stats(&ctx, &runs, &[]);
    assert_eq!(figures["per_day"][0]["failed"], 1, "{figures}");
}
