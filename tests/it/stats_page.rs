//! `runbook stats --html`: the page over a realistic set of runs (every outcome, long paths,
//! models and prompts, hostile text) laid out by headless Chromium from 800 to 1400 pixels wide,
//! light and dark, and measured in its DOM: nothing leaves the window or its box, no two texts
//! overlap, outcomes are coloured by meaning, axes step nicely, labels are told apart with the
//! whole on hover, and every run that did not complete says why.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::stats::{put, receipt};
use crate::support::{TestContext, browser};

const OUTCOMES: [&str; 11] = [
    "completed",
    "checks_failed",
    "hung",
    "budget_exceeded",
    "timed_out",
    "interrupted",
    "agent_error",
    "truncated",
    "killed",
    "storage_error",
    "aborted",
];

fn projects() -> Vec<String> {
    let mut all: Vec<String> = (0..6)
        .map(|i| {
            format!(
                "/home/alexandra.konstantinopoulou/src/github.com/acme-corporation/platform-infrastructure-{i}/services/billing-reconciliation"
            )
        })
        .collect();
    all.push("/home/用户/项目/非常长的项目名称-数据处理管道".to_owned());
    all.push("/tmp/</text><b>bold</b>&amp;\"quote\"".to_owned());
    all
}

const MODELS: [Option<&str>; 4] = [
    Some("anthropic/claude-sonnet-4-5-20250929"),
    Some("openrouter/meta-llama/llama-3.1-405b-instruct:free"),
    Some("gpt-5.1-codex-max"),
    None,
];

const DURATIONS: [u64; 6] = [4_000, 90_000, 400_000, 1_200_000, 2_500_000, 5_000_000];

const AGENTS: [&str; 4] = [
    "opencode",
    "claude",
    "codex",
    "my-custom-agent-with-a-rather-long-name",
];

fn prompts() -> Vec<String> {
    vec![
        format!(
            "{}\nand a second line",
            "Refactor the billing reconciliation service so that every currency conversion goes through the shared rates cache, then update the tests. ".repeat(4)
        ),
        "x".repeat(400),
        "</title></text><script>alert(1)</script><img src=x onerror=alert(2)> fix it".to_owned(),
        "fix the flaky test \u{1b}[31mred\u{1b}[0m \u{202e}gnp.exe".to_owned(),
        "Short one".to_owned(),
    ]
}

/// One run of the set: its id, outcome, message.
struct Made {
    id: String,
    outcome: &'static str,
    message: String,
}

/// 48 runs over 30 days, one with names longer than any real one, and one abandoned.
fn realistic(root: &Path) -> (PathBuf, Vec<Made>) {
    let runs = root.join("runs");
    let (projects, prompts) = (projects(), prompts());
    let costs = [0.0003, 0.012, 0.25, 1.7, 4.2, 12.5, 0.07];
    let mut made = Vec::new();
    for i in 0..48usize {
        let outcome = if i % 3 == 0 {
            "completed"
        } else {
            OUTCOMES[i % OUTCOMES.len()]
        };
        let id = format!(
            "202611{:02}-{:06}-{:04x}",
            1 + i % 28,
            100_000 + i * 7,
            i * 97
        );
        let message = if outcome == "completed" {
            "the agent finished".to_owned()
        } else {
            format!(
                "{outcome} after run {i}: the check `cargo test --workspace --all-features -- --include-ignored` failed with exit code 101 in crates/billing/src/reconcile.rs"
            )
        };
        let cost = if i % 13 == 5 {
            json!(null)
        } else {
            json!(costs[i % costs.len()] * (1.0 + (i % 5) as f64))
        };
        let r = receipt(json!({
            "run_id": id,
            "started_at": format!("2026-10-{:02}T{:02}:{:02}:00Z", 1 + (i * 29) / 47, (i * 5) % 24, (i * 7) % 60),
            "outcome": outcome,
            "message": message,
            "cwd": projects[i % projects.len()],
            "model": MODELS[i % MODELS.len()],
            "agent": {"name": AGENTS[i % AGENTS.len()]},
            "prompt": prompts[i % prompts.len()],
            "duration_ms": DURATIONS[i % DURATIONS.len()],
            "cost": {"usd": cost, "source": "reported", "known_usd": 0.0},
        }));
        put(&runs, &id, &r.to_string());
        made.push(Made {
            id,
            outcome,
            message,
        });
    }
    // Foreign names far longer than any real one, in proportional glyphs at their widest.
    let id = format!("{}-{}", "R".repeat(120), "x");
    let message = format!("{} and so on", "W".repeat(300));
    let r = receipt(json!({
        "run_id": id, "started_at": "2026-10-30T23:00:00Z", "outcome": "killed", "message": message,
        "agent": {"name": format!("\u{202e}{}", "W".repeat(200))}, "model": format!("\u{1b}[2J{}", "m".repeat(90)),
        "cwd": format!("/{}", "M".repeat(300)), "prompt": "😀".repeat(300),
    }));
    put(&runs, &id, &r.to_string());
    made.push(Made {
        id,
        outcome: "killed",
        message,
    });
    let gone = runs.join("gone");
    std::fs::create_dir_all(&gone).unwrap();
    let started = json!({"seq": 0, "ts": "2026-10-30T10:00:00Z", "turn": {"index": 0, "kind": "start"}, "type": "run.started",
        "schema_version": 1, "run_id": "gone", "runbook_version": "0.2.0", "agent": "opencode", "prompt": "x", "cwd": "/p/one",
        "run_dir": gone.display().to_string(), "pid": 999_999_999u32, "limits": {"inactivity_timeout_ms": 1, "kill_grace_ms": 1, "finish_grace_ms": 1}});
    std::fs::write(gone.join("events.ndjson"), format!("{started}\n")).unwrap();
    (runs, made)
}

/// The luminance of a computed colour, 0 to 255.
fn light(css: &Value) -> f64 {
    let (r, g, b) = browser::rgb(css);
    0.2126 * f64::from(r) + 0.7152 * f64::from(g) + 0.0722 * f64::from(b)
}

/// `runbook stats RUNS --html PAGE` under the usual umask: the page's text, once it is found
/// readable as any file the user writes (it is made to be shared), not the user's alone.
fn shared_page(ctx: &TestContext, runs: &Path, page: &Path) -> String {
    let mut cmd = ctx.runbook(&[
        "stats",
        runs.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    // SAFETY: umask is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            libc::umask(0o022);
            Ok(())
        });
    }
    assert!(cmd.status().unwrap().success());
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(page).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o644, "{mode:o}");
    std::fs::read_to_string(page).unwrap()
}

#[test]
fn the_stats_page_reads_well_from_800_to_1400_pixels_light_and_dark() {
    let ctx = TestContext::new();
    let (runs, made) = realistic(ctx.root());
    let page = ctx.work.join("stats.html");
    let html = shared_page(&ctx, &runs, &page);
    for fetch in ["<script", "<link", "<img", "<iframe"] {
        assert!(!html.contains(fetch), "{fetch} in the page");
    }
    let scratch = ctx.root().join("browser");
    std::fs::create_dir_all(&scratch).unwrap();
    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    for (width, dark) in [(800, false), (1400, false), (800, true), (1400, true)] {
        let look = browser::Look { width, dark };
        let seen = browser::check(&page, &scratch, &look);
        let at = format!("at {width}px, {}", if dark { "dark" } else { "light" });
        assert_eq!(seen["problems"], json!([]), "{at}");
        assert_eq!(
            seen["foreign_elements"], 0,
            "{at}: escaped text made no element"
        );
        assert_eq!(seen["fetching"], 0, "{at}: the page fetches nothing");
        assert_eq!(seen["scripts"], 1, "{at}: the checker's script alone");
        let (background, text) = (light(&seen["background"]), light(&seen["text"]));
        if dark {
            assert!(background < 60.0 && text > 180.0, "{at}: {seen:#}");
        } else {
            assert!(background > 200.0 && text < 80.0, "{at}: {seen:#}");
        }
        outcomes_are_coloured_by_meaning(&seen["fills"], &at);
        axes_step_nicely(&seen["charts"], &at);
        if width == 800 {
            figures_match_the_receipts(&seen["figures"], &made);
        }
        let png = artifacts.join(format!(
            "stats-{width}-{}.png",
            if dark { "dark" } else { "light" }
        ));
        browser::screenshot(&page, &scratch, &look, 2400, &png);
    }
}

/// Completed green; interrupted, truncated and aborted (a plan not approved) yellow; every other
/// ending red: as on a terminal.
fn outcomes_are_coloured_by_meaning(fills: &Value, at: &str) {
    let fills = fills.as_object().unwrap();
    assert_eq!(fills.len(), OUTCOMES.len() + 1, "{at}: {fills:?}");
    for (outcome, fill) in fills {
        let (r, g, b) = browser::rgb(fill);
        let (r, g, b) = (i32::from(r), i32::from(g), i32::from(b));
        match outcome.as_str() {
            "completed" => assert!(g > r + 40 && g > b + 40, "{at}: {outcome} {fill}"),
            "interrupted" | "truncated" | "aborted" => {
                assert!(
                    r > b + 80 && g > b + 40 && r > 120,
                    "{at}: {outcome} {fill}"
                );
            }
            _ => assert!(r > g + 80 && r > b + 80, "{at}: {outcome} {fill}"),
        }
    }
}

/// Every value axis steps by 1, 2 or 5 × 10ⁿ, with no label twice; money as runbook shows it.
fn axes_step_nicely(charts: &Value, at: &str) {
    for chart in charts.as_array().unwrap() {
        let name = chart["name"].as_str().unwrap();
        let axis: Vec<&str> = chart["axis"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        assert!(axis.len() >= 2, "{at}: {name}: {axis:?}");
        let mut unique = axis.clone();
        unique.dedup();
        assert_eq!(unique, axis, "{at}: {name}: a label twice");
        let money = name.starts_with("Cost");
        let values: Vec<f64> = axis
            .iter()
            .map(|t| {
                if money {
                    let (dollars, cents) = t
                        .strip_prefix('$')
                        .and_then(|t| t.split_once('.'))
                        .unwrap_or_else(|| panic!("{at}: {name}: {t} is not money"));
                    assert!(
                        dollars.chars().all(|c| c.is_ascii_digit())
                            && (cents.len() == 2 || cents.len() == 4),
                        "{at}: {name}: {t}"
                    );
                }
                t.trim_start_matches('$').replace(',', "").parse().unwrap()
            })
            .collect();
        let step = values[1] - values[0];
        let mantissa = step / 10f64.powf(step.log10().floor());
        assert!(
            [1.0, 2.0, 5.0, 10.0]
                .iter()
                .any(|m| (m - mantissa).abs() < 1e-6),
            "{at}: {name}: step {step} of {axis:?}"
        );
        for pair in values.windows(2) {
            assert!(
                ((pair[1] - pair[0]) - step).abs() < 1e-9,
                "{at}: {name}: {axis:?}"
            );
        }
        labels_are_told_apart(chart, name, at);
    }
}

/// A chart's labels: each the whole text or a shortening of it marked `…`, the whole on hover,
/// no two alike.
fn labels_are_told_apart(chart: &Value, name: &str, at: &str) {
    let labels = chart["labels"].as_array().unwrap();
    let mut shown: Vec<&str> = Vec::new();
    for label in labels {
        let (short, whole) = (
            label["shown"].as_str().unwrap(),
            label["whole"].as_str().unwrap(),
        );
        assert!(
            short == whole || short.contains('…'),
            "{at}: {name}: {short} for {whole}"
        );
        assert!(short.chars().count() <= 26, "{at}: {name}: {short}");
        for part in short.split('…').filter(|p| p.len() > 1) {
            assert!(whole.contains(part), "{at}: {name}: {short} for {whole}");
        }
        shown.push(short);
    }
    let mut unique = shown.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), shown.len(), "{at}: {name}: {shown:?}");
}

/// The outcome counts, and the reason of every run listed as not completed, as the receipts say.
fn figures_match_the_receipts(figures: &Value, made: &[Made]) {
    let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
    for m in made {
        *counts.entry(m.outcome).or_default() += 1;
    }
    counts.insert("abandoned", 1);
    for (outcome, n) in &counts {
        assert_eq!(
            figures[format!("outcome:{outcome}")],
            n.to_string(),
            "{outcome}"
        );
    }
    let failed = made.iter().filter(|m| m.outcome != "completed").count();
    assert_eq!(figures["card:failed"], failed.to_string());
    assert_eq!(figures["card:runs"], made.len().to_string());
    let listed: Vec<&Made> = figures
        .as_object()
        .unwrap()
        .keys()
        .filter_map(|k| k.strip_prefix("reason:"))
        .map(|id| made.iter().find(|m| m.id == id).unwrap())
        .collect();
    assert_eq!(listed.len(), 15, "the 15 newest of {failed}");
    for m in listed {
        assert_ne!(m.outcome, "completed");
        assert_eq!(figures[format!("reason:{}", m.id)], m.message.as_str());
        assert_eq!(figures[format!("run-outcome:{}", m.id)], m.outcome);
    }
}

#[test]
fn a_secret_in_what_the_page_shortens_is_masked_whole_before_it_is_cut_and_the_page_is_shareable() {
    const TOKEN: &str = "Zq9XvB7pLm3K8wRt2YhN5cJd";
    let mut ctx = TestContext::new();
    ctx.env("MY_API_TOKEN", TOKEN);
    let runs = ctx.root().join("runs");
    // Each is cut by the page near the secret: a prompt at 240 columns, a model at 28 from its
    // end, a project's label at 26 from its end and at 60 in the table.
    let prompt = format!("{} {TOKEN} and more words after it", "a".repeat(230));
    let model = format!("provider/{TOKEN}-model-name");
    let project = format!("/home/someone/{TOKEN}/the/project");
    for (id, outcome) in [("r1", "hung"), ("r2", "completed")] {
        let r = receipt(json!({
            "run_id": id, "outcome": outcome, "prompt": prompt, "model": model, "cwd": project,
            "message": format!("stopped while {TOKEN} was in use"),
        }));
        put(&runs, id, &r.to_string());
    }
    let page = ctx.work.join("stats.html");
    let html = shared_page(&ctx, &runs, &page);
    let chars: Vec<char> = TOKEN.chars().collect();
    for part in chars.windows(6) {
        let part: String = part.iter().collect();
        assert!(!html.contains(&part), "{part} of the secret in the page");
    }
    assert!(
        html.contains("and more words"),
        "the prompt is there, masked"
    );
}
