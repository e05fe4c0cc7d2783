//! Synthetic receipts for the benchmarks that read many of them: the fixture's receipt with its
//! outcome, agent, model, project, day, duration and cost varied, the same `n` every time.

use std::fs;
use std::path::Path;

/// Writes `n` receipts, each in its run directory, into every one of `roots`.
pub fn write(roots: &[&Path], n: usize) {
    let fixture =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/receipt.json"))
            .unwrap();
    let base: serde_json::Value = serde_json::from_str(&fixture).unwrap();
    let outcomes = [
        "completed",
        "completed",
        "completed",
        "hung",
        "agent_error",
        "checks_failed",
        "truncated",
        "budget_exceeded",
    ];
    let agents = ["opencode", "claude", "codex"];
    let mut rng = fastrand::Rng::with_seed(7);
    for i in 0..n {
        let id = format!("202611{:02}-{:06}-{:05}", 1 + i % 28, i % 1_000_000, i);
        let mut r = base.clone();
        r["run_id"] = id.clone().into();
        r["outcome"] = outcomes[rng.usize(..outcomes.len())].into();
        r["agent"]["name"] = agents[rng.usize(..agents.len())].into();
        r["model"] = format!("model-{}", rng.usize(..6)).into();
        r["cwd"] = format!("/src/project-{}", rng.usize(..20)).into();
        r["started_at"] = format!("2026-11-{:02}T{:02}:00:00Z", 1 + i % 28, i % 24).into();
        r["duration_ms"] = rng.u64(1_000..900_000).into();
        r["cost"]["usd"] = (rng.f64() * 2.0).into();
        let bytes = serde_json::to_vec_pretty(&r).unwrap();
        for root in roots {
            let dir = root.join(&id);
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join("result.json"), &bytes).unwrap();
        }
    }
}
