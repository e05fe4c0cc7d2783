//! `runbook fleet` writes what can be committed and run as it is: it refuses the values it
//! cannot know (the bucket, the image) rather than write a placeholder; it names the task file
//! from the top of its repository wherever the shell stood; and the GitHub Actions workflow
//! installs runbook and the agent, gives each step only the secrets it uses, and, run step by
//! step with the fake agent standing in for the installed one, leaves a receipt per leg that
//! its `stats` job counts.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{self, TestContext};

const LIST: &str = "[[task]]\nid = \"a\"\nprompt = \"Task a\"\n\n\
[[task]]\nid = \"b\"\nprompt = \"Task b\"\nrepeat = 2\n";

/// A task file of three tasks, with `defaults` in its `[defaults]`.
fn tasks(defaults: &str) -> String {
    format!("[defaults]\ninactivity_timeout = \"60s\"\n{defaults}\n{LIST}")
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A repository in the work dir holding `ci/tasks.toml` (`tasks`), committed, and a
/// subdirectory `sub` of it.
fn repository(tasks: &str) -> TestContext {
    let ctx = TestContext::new();
    git(&ctx.work, &["init", "-q", "-b", "main"]);
    std::fs::create_dir_all(ctx.work.join("ci")).unwrap();
    std::fs::create_dir_all(ctx.work.join("sub")).unwrap();
    std::fs::write(ctx.work.join("sub/README"), "a subdirectory\n").unwrap();
    std::fs::write(ctx.work.join("ci/tasks.toml"), tasks).unwrap();
    git(&ctx.work, &["add", "."]);
    git(&ctx.work, &["commit", "-q", "-m", "start"]);
    ctx
}

/// `runbook ARGS` run from `dir`.
fn run_in(ctx: &TestContext, dir: &Path, args: &[&str]) -> support::Outcome {
    let mut cmd = ctx.runbook(args);
    cmd.current_dir(dir);
    support::run(&mut cmd, std::time::Duration::from_secs(60))
}

/// The workflow in `out`: its comment lines dropped, the rest JSON (which is YAML).
fn workflow(out: &str) -> Value {
    let json: String = out.lines().filter(|l| !l.starts_with('#')).collect();
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// The step of `job` named `name`.
fn step<'a>(workflow: &'a Value, job: &str, name: &str) -> &'a Value {
    workflow["jobs"][job]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no step {name} in {job}: {workflow:#}"))
}

#[test]
fn what_fleet_cannot_know_is_refused_naming_the_flag_not_written_as_a_placeholder() {
    let ctx = repository(&tasks(""));
    for engine in ["slurm", "gha", "k8s"] {
        let out = ctx.run(&["fleet", engine, "ci/tasks.toml"]);
        out.assert_exit(2).assert_stderr_has("give --upload URL");
        assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
        assert!(out.stdout.is_empty(), "{engine}: {}", out.stdout);
    }
    let bucket = ["--upload", "s3://team-runs/nightly"];
    let k8s = |extra: &[&str]| {
        ctx.run(&[&["fleet", "k8s", "ci/tasks.toml"], &bucket[..], extra].concat())
    };
    let out = k8s(&[]);
    out.assert_exit(2).assert_stderr_has("give --image IMAGE");
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    for bad in [
        "ghcr.io/OWNER/runbook-agent:latest",
        "acme/agent:",
        "acme//agent",
    ] {
        let out = k8s(&["--image", bad]);
        out.assert_exit(2)
            .assert_stderr_has("not an image reference");
        assert!(out.stdout.is_empty(), "{bad}: {}", out.stdout);
    }
    let out = k8s(&["--image", "ghcr.io/acme/runbook-agent:1"]);
    out.assert_exit(0);
    assert!(
        out.stdout
            .contains("\"image\": \"ghcr.io/acme/runbook-agent:1\"")
    );
    for engine in ["slurm", "gha"] {
        let out = ctx.run(&[&["fleet", engine, "ci/tasks.toml"], &bucket[..]].concat());
        out.assert_exit(0);
        for placeholder in ["BUCKET", "OWNER"] {
            assert!(
                !out.stdout.contains(placeholder),
                "{engine}: {}",
                out.stdout
            );
        }
    }
}

#[test]
fn the_task_files_path_is_written_from_the_repository_root_whatever_the_shells_directory() {
    let ctx = repository(&tasks(""));
    let sub = ctx.work.join("sub");
    let bucket = ["--upload", "s3://team-runs/nightly"];
    let slurm = run_in(
        &ctx,
        &sub,
        &[&["fleet", "slurm", "../ci/tasks.toml"], &bucket[..]].concat(),
    );
    slurm.assert_exit(0);
    assert!(
        slurm
            .stdout
            .contains("runbook batch ci/tasks.toml --task-index-from-env"),
        "{}",
        slurm.stdout
    );
    let gha = run_in(
        &ctx,
        &sub,
        &[&["fleet", "gha", "../ci/tasks.toml"], &bucket[..]].concat(),
    );
    gha.assert_exit(0);
    let run = step(&workflow(&gha.stdout), "task", "Run the task")["run"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        run.contains("runbook batch ci/tasks.toml --task-index"),
        "{run}"
    );
    assert!(!gha.stdout.contains("../"), "{}", gha.stdout);

    let outside = ctx.root().join("tasks.toml");
    std::fs::write(&outside, tasks("")).unwrap();
    for engine in ["slurm", "gha"] {
        let out = run_in(
            &ctx,
            &sub,
            &[&["fleet", engine, outside.to_str().unwrap()], &bucket[..]].concat(),
        );
        out.assert_exit(2)
            .assert_stderr_has("is not in a git repository");
        assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
        assert!(out.stdout.is_empty());
    }
}

/// Every place a job or a step could be given an environment.
fn envs_of(job: &Value) -> Vec<&Value> {
    let mut out = vec![&job["env"]];
    out.extend(job["steps"].as_array().unwrap().iter().map(|s| &s["env"]));
    out
}

#[test]
fn each_step_gets_only_the_secrets_it_uses_and_the_stats_job_no_api_key() {
    let ctx = repository(&tasks("agent = \"claude\""));
    let out = ctx.run(&[
        "fleet",
        "gha",
        "ci/tasks.toml",
        "--upload",
        "s3://team-runs/nightly",
    ]);
    out.assert_exit(0);
    let workflow = workflow(&out.stdout);
    let stats = &workflow["jobs"]["stats"];
    for env in envs_of(stats) {
        let text = env.to_string();
        for key in ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"] {
            assert!(!text.contains(key), "the stats job gets {key}: {stats:#}");
        }
    }
    let sum = step(&workflow, "stats", "Sum up the batch");
    assert!(sum["env"]["AWS_SECRET_ACCESS_KEY"].is_string(), "{sum:#}");
    let task = &workflow["jobs"]["task"];
    assert!(
        task["env"].is_null(),
        "no secret for the whole job: {task:#}"
    );
    for name in ["Install runbook", "Install the agent"] {
        assert!(
            step(&workflow, "task", name)["env"].is_null(),
            "{name} sees a secret"
        );
    }
    let run = step(&workflow, "task", "Run the task");
    assert!(run["env"]["ANTHROPIC_API_KEY"].is_string(), "{run:#}");
    assert!(
        run["env"]["OPENAI_API_KEY"].is_null(),
        "Claude reads no OpenAI key: {run:#}"
    );
}

#[test]
fn each_leg_installs_runbook_pinned_to_this_build_and_the_agent_at_a_tested_version() {
    let ctx = repository(&tasks("agent = \"claude\""));
    let out = ctx.run(&["fleet", "gha", "ci/tasks.toml", "--upload", "s3://b/p"]);
    out.assert_exit(0);
    let flow = workflow(&out.stdout);
    let runbook = step(&flow, "task", "Install runbook")["run"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(runbook, install_command(&ctx));
    assert!(
        !out.stdout.contains("runbook-cli\"")
            && !out.stdout.contains("npm install --global runbook")
    );
    let agent = step(&flow, "task", "Install the agent")["run"]
        .as_str()
        .unwrap();
    assert!(
        agent.contains("npm install --global @anthropic-ai/claude-code@2.1.197"),
        "{agent}"
    );
    assert!(agent.contains("command -v claude"), "{agent}");

    // A program of the task file's own: said on stderr, in a comment, and a step that fails.
    let own = "agent = \"claude\"\n[defaults.agents.claude]\nbin = \"/opt/my-claude\"\n";
    let ctx = repository(&tasks(own));
    let out = ctx.run(&["fleet", "gha", "ci/tasks.toml", "--upload", "s3://b/p"]);
    out.assert_exit(0).assert_stderr_has("agents.claude.bin");
    assert!(
        out.stdout
            .contains("# TO DO: the task file sets agents.claude.bin"),
        "{}",
        out.stdout
    );
    let agent = step(&workflow(&out.stdout), "task", "Install the agent")["run"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        agent.contains("::error::") && agent.contains("exit 1"),
        "{agent}"
    );
}

/// The install command the workflow must hold for this build: from runbook's repository at the
/// commit `runbook --version` names.
fn install_command(ctx: &TestContext) -> String {
    let version = ctx.run(&["--version"]).stdout;
    let commit = version
        .split("(commit ")
        .nth(1)
        .expect("a build from git names its commit");
    let commit = commit.trim().trim_end_matches(')');
    format!(
        "cargo install --locked --git https://github.com/runbook-cli/runbook --rev {commit} runbook-cli --bin runbook"
    )
}

/// A program on PATH standing in for `name`: records its arguments in `name.args`, then runs
/// `body`.
fn stub(dir: &Path, name: &str, body: &str) {
    let path = dir.join(name);
    let args = dir.join(format!("{name}.args"));
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\n{body}\n",
            args.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `text` with the expressions GitHub Actions would evaluate before the shell sees it.
fn evaluated(text: &str, index: usize) -> String {
    let mut out = text
        .replace("${{ matrix.index }}", &index.to_string())
        .replace("${{ github.run_id }}", "777")
        .replace("${{ vars.AWS_REGION }}", "us-east-1");
    while let Some(at) = out.find("${{ secrets.") {
        let end = at + out[at..].find("}}").unwrap() + 2;
        let name = out[at + 12..end - 2].trim().to_owned();
        out.replace_range(at..end, &format!("secret-{name}"));
    }
    assert!(
        !out.contains("${{"),
        "an expression the test does not know: {out}"
    );
    out
}

/// Runs the `run:` steps of `job` as a runner does (bash -eo pipefail, the step's env, in the
/// checkout), skipping the `uses:` steps (the test's repository is the checkout); the output
/// of each, or the first failure.
fn run_job(
    ctx: &TestContext,
    env: &[(String, String)],
    job: &Value,
    index: usize,
) -> Result<Vec<String>, String> {
    let mut outputs = Vec::new();
    for step in job["steps"].as_array().unwrap() {
        let Some(script) = step["run"].as_str() else {
            continue;
        };
        let mut cmd = Command::new("bash");
        cmd.args([
            "--noprofile",
            "--norc",
            "-eo",
            "pipefail",
            "-c",
            &evaluated(script, index),
        ])
        .current_dir(&ctx.work)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)));
        if let Some(vars) = step["env"].as_object() {
            for (k, v) in vars {
                cmd.env(k, evaluated(v.as_str().unwrap(), index));
            }
        }
        let out = support::run(&mut cmd, std::time::Duration::from_secs(120));
        if out.code() != Some(0) {
            return Err(format!(
                "{}: exit {:?}\n{}\n{}",
                step["name"],
                out.code(),
                out.stdout,
                out.stderr
            ));
        }
        outputs.push(out.stdout);
    }
    Ok(outputs)
}

/// The environment a runner gives every step here: PATH with the stubs first, then the system's;
/// runbook's homes as the tests pin them; the fake agent's recording.
fn runner_env(ctx: &TestContext, stubs: &Path) -> Vec<(String, String)> {
    let scenario =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/opencode/a_text.stdout.ndjson");
    let mut env: Vec<(String, String)> = ctx
        .runbook(&[])
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_str()?.to_owned(), v?.to_str()?.to_owned())))
        .filter(|(k, _)| k != "PATH")
        .collect();
    env.push((
        "PATH".into(),
        format!("{}:/usr/local/bin:/usr/bin:/bin", stubs.display()),
    ));
    env.push(("FAKE_AGENT_SCENARIO".into(), scenario.display().to_string()));
    env.push(("FAKE_AGENT_VERSION".into(), "1.18.33".into()));
    env
}

/// The workflow run step by step, every leg then the `stats` job, as a runner would: only the
/// two installs that would reach the network are stood in for, by a `cargo` that links the
/// runbook under test and an `npm` that links the fake agent as the agent's program; each
/// records what it was asked, which must be the pinned install.
#[test]
fn the_workflows_steps_run_with_the_fake_agent_leave_a_receipt_per_leg_that_stats_counts() {
    let ctx = repository(&tasks(""));
    let bucket = ctx.root().join("bucket");
    let url = format!("file://{}", bucket.display());
    let out = run_in(
        &ctx,
        &ctx.work.join("sub"),
        &["fleet", "gha", "../ci/tasks.toml", "--upload", &url],
    );
    out.assert_exit(0);
    let workflow = workflow(&out.stdout);
    let stubs: PathBuf = ctx.root().join("stubs");
    std::fs::create_dir_all(&stubs).unwrap();
    let link = |target: &Path, name: &str| {
        format!(
            "ln -sf '{}' '{}'",
            target.display(),
            stubs.join(name).display()
        )
    };
    stub(&stubs, "cargo", &link(&support::runbook_bin(), "runbook"));
    stub(&stubs, "npm", &link(&support::fake_agent_bin(), "opencode"));
    let env = runner_env(&ctx, &stubs);

    // Without the agent, the leg fails and says why.
    let leg = step(&workflow, "task", "Run the task");
    let alone = serde_json::json!({ "steps": [leg] });
    stub(
        &stubs,
        "runbook",
        &format!("exec '{}' \"$@\"", support::runbook_bin().display()),
    );
    let missing = run_job(&ctx, &env, &alone, 0).unwrap_err();
    assert!(
        !missing.contains("exit Some(0)")
            && missing.contains("opencode (looked on PATH) not found"),
        "{missing}"
    );
    std::fs::remove_file(stubs.join("runbook")).unwrap();

    for index in 0..3 {
        run_job(&ctx, &env, &workflow["jobs"]["task"], index)
            .unwrap_or_else(|e| panic!("leg {index}: {e}"));
    }
    let said = run_job(&ctx, &env, &workflow["jobs"]["stats"], 0).unwrap();
    assert!(said.concat().contains('3'), "{said:?}");

    let cargo = std::fs::read_to_string(stubs.join("cargo.args")).unwrap();
    let pinned = install_command(&ctx);
    assert!(
        cargo.lines().all(|l| format!("cargo {l}") == pinned),
        "{cargo}"
    );
    assert_eq!(
        cargo.lines().count(),
        4,
        "three legs and the stats job install runbook"
    );
    let npm = std::fs::read_to_string(stubs.join("npm.args")).unwrap();
    assert_eq!(npm, "install --global opencode-ai@1.18.33\n".repeat(3));
    let runs: Vec<_> = std::fs::read_dir(bucket.join("gha-777"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(runs.len(), 3, "one run per leg under the workflow run's id");
    for run in &runs {
        assert!(
            run.path().join("result.json").is_file(),
            "{:?} has no receipt",
            run.path()
        );
    }
    let stats = ctx.run(&["stats", &format!("{url}/gha-777"), "--json"]);
    let stats: Value = serde_json::from_str(&stats.stdout).unwrap();
    assert_eq!(stats["runs"], 3, "{stats:#}");
    assert_eq!(stats["outcomes"]["completed"], 3, "{stats:#}");
}
