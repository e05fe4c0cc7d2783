//! What each generator writes for a small task file, as snapshots.

use std::path::Path;

use super::*;
use crate::cli::FleetArgs;

const TASKS: &str = "[defaults]\nagent = \"claude\"\n\n\
[[task]]\nid = \"fix-login\"\nprompt = \"Fix the login bug\"\n\n\
[[task]]\nid = \"docs\"\nprompt = \"Document the API\"\nrepeat = 2\n";

fn args(engine: FleetEngine) -> FleetArgs {
    FleetArgs {
        engine,
        file: "tasks/nightly.toml".into(),
        upload: Some("s3://team-runs/nightly".into()),
        name: "nightly".into(),
        image: Some("ghcr.io/acme/runbook-agent:1".into()),
        deadline: 7200,
        retries: 2,
        batch_id: None,
    }
}

fn rendered(engine: FleetEngine, tasks: usize) -> anyhow::Result<String> {
    let args = args(engine);
    // The commit runbook is installed at changes with every commit.
    let commit = crate::version::commit();
    let out = render(&plan(&args, tasks), engine)?;
    Ok(if commit.is_empty() {
        out
    } else {
        out.replace(commit, "COMMIT")
    })
}

/// The plan of the small task file, at tasks/nightly.toml in its repository.
fn plan(args: &FleetArgs, tasks: usize) -> Plan<'_> {
    let file = crate::config::tasks::parse_tasks(Path::new("/t/nightly.toml"), TASKS).unwrap();
    Plan {
        args,
        file: Path::new("tasks/nightly.toml"),
        path: "tasks/nightly.toml".to_owned(),
        upload: args.upload.as_deref().unwrap(),
        agents: install::agents(&file),
        text: TASKS,
        tasks,
    }
}

/// The small task file makes three tasks: one, and two copies of another.
fn count() -> usize {
    let file = crate::config::tasks::parse_tasks(Path::new("/t/nightly.toml"), TASKS).unwrap();
    crate::commands::batch::task_count(&file)
}

#[test]
fn kubernetes_indexed_job() {
    assert_eq!(count(), 3);
    insta::assert_snapshot!(rendered(FleetEngine::K8s, count()).unwrap());
}

#[test]
fn github_actions_matrix() {
    insta::assert_snapshot!(rendered(FleetEngine::Gha, count()).unwrap());
}

#[test]
fn slurm_array() {
    insta::assert_snapshot!(rendered(FleetEngine::Slurm, count()).unwrap());
}

#[test]
fn github_actions_refuses_more_legs_than_a_matrix_has() {
    assert!(rendered(FleetEngine::Gha, 256).is_ok());
    let e = rendered(FleetEngine::Gha, 257).unwrap_err().to_string();
    assert!(e.contains("257 tasks") && e.contains("256"), "{e}");
}

/// Each YAML document is JSON, which YAML 1.2 reads as it is.
#[test]
fn kubernetes_documents_parse_and_map_every_exit_code() {
    let out = rendered(FleetEngine::K8s, 3).unwrap();
    let docs: Vec<serde_json::Value> = out
        .split("\n---\n")
        .skip(1)
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(docs[0]["kind"], "ConfigMap");
    assert_eq!(docs[0]["data"]["tasks.toml"], TASKS);
    let spec = &docs[1]["spec"];
    assert_eq!(spec["completions"], 3);
    let mut mapped: Vec<u64> = spec["podFailurePolicy"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| {
            r["onExitCodes"]["values"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|v| v.as_u64().unwrap())
        .collect();
    mapped.sort_unstable();
    let every: Vec<u64> = policy::EVERY
        .iter()
        .filter(|s| **s != ExitStatus::Completed)
        .map(|s| *s as u64)
        .collect();
    let mut every = every;
    every.sort_unstable();
    assert_eq!(mapped, every, "each failing exit code has one rule");
}

/// Every index of one submission uploads under one id: the engine's, or the one given.
#[test]
fn every_index_uploads_under_the_engines_id_or_the_one_given() {
    let engines = [
        (FleetEngine::Slurm, "\"slurm-${SLURM_ARRAY_JOB_ID:?"),
        (FleetEngine::Gha, "--batch-id 'gha-${{ github.run_id }}'"),
        (FleetEngine::K8s, "\"k8s-$(RUNBOOK_JOB_UID)\""),
    ];
    for (engine, id) in engines {
        let out = rendered(engine, 3).unwrap();
        assert!(out.contains(id), "{engine:?}: {out}");
        let mut given = args(engine);
        given.batch_id = Some("nightly-1".into());
        let out = render(&plan(&given, 3), engine).unwrap();
        assert!(out.contains("nightly-1"), "{engine:?}: {out}");
        assert!(
            out.contains("s3://team-runs/nightly/nightly-1"),
            "{engine:?}: {out}"
        );
        for engine_id in ["SLURM_ARRAY_JOB_ID", "github.run_id", "RUNBOOK_JOB_UID"] {
            assert!(!out.contains(engine_id), "{engine:?}: {out}");
        }
    }
}
