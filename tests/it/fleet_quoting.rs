//! `runbook fleet`: what it writes into a Slurm script, a GitHub Actions workflow or a Kubernetes
//! manifest from its command line stays the one value it was given: a path with quotes, `$(…)`
//! and spaces reaches `runbook batch` as one argument when the script runs; a newline, a control
//! character, a GitHub Actions expression or a credential in the URL is refused before anything
//! is printed.

use std::os::unix::fs::PermissionsExt as _;

use crate::support::TestContext;

const TASKS: &str = "[[task]]\nid = \"a\"\nprompt = \"x\"\n";

/// The image the Kubernetes Job is given.
const IMAGE: &str = "ghcr.io/acme/runbook-agent:1";

/// A test context whose work dir is a git repository, where a task file is from its top.
fn repository() -> TestContext {
    let ctx = TestContext::new();
    let out = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&ctx.work)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    ctx
}

/// A `runbook` on PATH that writes each argument it is given on a line of `args.txt`.
fn recording_runbook(ctx: &TestContext) -> String {
    let bin = ctx.root().join("stub-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let stub = bin.join("runbook");
    std::fs::write(
        &stub,
        format!(
            "#!/bin/sh\nfor a; do printf '%s\\n' \"$a\"; done > '{}'\nexit 0\n",
            ctx.root().join("args.txt").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Runs `script` with bash in the work dir, the recording `runbook` first on PATH; the
/// arguments `runbook` was given.
fn run_script(ctx: &TestContext, script: &str) -> Vec<String> {
    let path = recording_runbook(ctx);
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(&ctx.work)
        .env("PATH", path)
        .env("SLURM_ARRAY_TASK_ID", "0")
        .env("SLURM_ARRAY_JOB_ID", "4242")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(ctx.root().join("args.txt"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The argument after `flag`.
fn after<'a>(args: &'a [String], flag: &str) -> &'a str {
    let at = args.iter().position(|a| a == flag);
    at.and_then(|i| args.get(i + 1))
        .unwrap_or_else(|| panic!("no {flag} in {args:?}"))
}

#[test]
fn a_path_with_quotes_and_substitutions_reaches_runbook_as_one_argument() {
    let ctx = repository();
    let name = "tasks $(touch pwned) `touch pwned2` 'q' \"d\" ; x.toml";
    std::fs::write(ctx.work.join(name), TASKS).unwrap();
    let url = "s3://team-runs/night $(touch pwned3)";
    let slurm = ctx.run(&["fleet", "slurm", name, "--upload", url]);
    slurm.assert_exit(0);
    let args = run_script(&ctx, &slurm.stdout);
    assert_eq!(args[0], "batch");
    assert_eq!(args[1], name);
    assert_eq!(after(&args, "--upload"), url);
    assert_eq!(after(&args, "--batch-id"), "slurm-4242");

    let gha = ctx.run(&["fleet", "gha", name, "--upload", url]);
    gha.assert_exit(0);
    let json: String = gha.stdout.lines().filter(|l| !l.starts_with('#')).collect();
    let workflow: serde_json::Value = serde_json::from_str(&json).unwrap();
    let steps = workflow["jobs"]["task"]["steps"].as_array().unwrap();
    let run = steps.last().unwrap()["run"].as_str().unwrap();
    let args = run_script(&ctx, &run.replace("${{ matrix.index }}", "0"));
    assert_eq!(args[1], name);
    assert_eq!(after(&args, "--upload"), url);

    let k8s = ctx.run(&["fleet", "k8s", name, "--upload", url, "--image", IMAGE]);
    k8s.assert_exit(0);
    for doc in k8s.stdout.split("\n---\n").skip(1) {
        serde_json::from_str::<serde_json::Value>(doc).unwrap_or_else(|e| panic!("{e}: {doc}"));
    }
    for made in ["pwned", "pwned2", "pwned3"] {
        assert!(!ctx.work.join(made).exists(), "{made}: a substitution ran");
    }
}

#[test]
fn a_newline_an_expression_or_a_credential_is_refused_before_anything_is_printed() {
    let ctx = TestContext::new();
    let names = [
        "t\ntouch pwned\n#.toml",
        "t\rx.toml",
        "t\u{1b}[2Jx.toml",
        "t\u{202e}lmot.toml",
        "t ${{ github.event.issue.title }}.toml",
    ];
    for name in names {
        std::fs::write(ctx.work.join(name), TASKS).unwrap();
        for engine in ["slurm", "gha", "k8s"] {
            let out = ctx.run(&["fleet", engine, name, "--upload", "s3://b/p"]);
            out.assert_exit(2).assert_stderr_has("the task file's path");
            assert!(out.stdout.is_empty(), "{engine} {name:?}: {}", out.stdout);
        }
    }
    std::fs::write(ctx.work.join("tasks.toml"), TASKS).unwrap();
    let secrets = [
        (
            "s3://AKIAFLEET0001:fleet-secret-91Xq@bucket/p",
            "fleet-secret-91Xq",
        ),
        (
            "s3://bucket/p?X-Amz-Signature=sig-secret-44Lm",
            "sig-secret-44Lm",
        ),
        ("gs://bucket/p#frag-secret-12Ab", "frag-secret-12Ab"),
    ];
    for (url, secret) in secrets {
        for engine in ["slurm", "gha", "k8s"] {
            let out = ctx.run(&["fleet", engine, "tasks.toml", "--upload", url]);
            out.assert_exit(2)
                .assert_stderr_has("--upload holds credentials")
                .assert_hides(secret);
            assert!(out.stdout.is_empty(), "{engine} {url}: {}", out.stdout);
        }
    }
    for url in [
        "s3://b/p\necho owned",
        "s3://b/${{ secrets.X }}",
        "/local/dir",
    ] {
        let out = ctx.run(&["fleet", "slurm", "tasks.toml", "--upload", url]);
        out.assert_exit(2).assert_stderr_has("--upload");
        assert!(out.stdout.is_empty(), "{url:?}: {}", out.stdout);
    }
    assert!(!ctx.work.join("pwned").exists());
}

/// `input` as Kubernetes expands a container's command, args and env values: `$(NAME)` becomes
/// the variable's value when it is set (left as written when not), `$$` becomes `$`, and any
/// other `$` stays (k8s.io/kubernetes third_party/forked/golang/expansion).
fn k8s_expand(input: &str, vars: &[(&str, &str)]) -> String {
    let bytes = input.as_bytes();
    let mut out = String::new();
    let mut checkpoint = 0;
    let mut cursor = 0;
    while cursor < bytes.len() {
        if bytes[cursor] == b'$' && cursor + 1 < bytes.len() {
            out.push_str(&input[checkpoint..cursor]);
            let rest = &input[cursor + 1..];
            let advance = match rest.as_bytes()[0] {
                b'$' => {
                    out.push('$');
                    1
                }
                b'(' => match rest.find(')') {
                    Some(close) => {
                        let name = &rest[1..close];
                        match vars.iter().find(|(n, _)| *n == name) {
                            Some((_, value)) => out.push_str(value),
                            None => out.push_str(&format!("$({name})")),
                        }
                        close + 1
                    }
                    None => {
                        out.push_str("$(");
                        1
                    }
                },
                _ => {
                    let c = rest.chars().next().unwrap();
                    out.push('$');
                    out.push(c);
                    c.len_utf8()
                }
            };
            cursor += advance;
            checkpoint = cursor + 1;
        }
        cursor += 1;
    }
    out.push_str(&input[checkpoint..]);
    out
}

/// The ConfigMap and the Job `runbook fleet k8s ARGS` printed.
fn k8s_documents(ctx: &TestContext, args: &[&str]) -> (serde_json::Value, serde_json::Value) {
    let out = ctx.run(&[&["fleet", "k8s", "--image", IMAGE], args].concat());
    out.assert_exit(0);
    let docs: Vec<serde_json::Value> = out
        .stdout
        .split("\n---\n")
        .skip(1)
        .map(|d| serde_json::from_str(d).unwrap_or_else(|e| panic!("{e}: {d}")))
        .collect();
    (docs[0].clone(), docs[1].clone())
}

/// The Job's command as the container is given it, once Kubernetes expanded it in a pod whose
/// environment holds a secret.
fn pod_command(job: &serde_json::Value) -> Vec<String> {
    let vars = [
        ("AWS_SECRET_ACCESS_KEY", "leaked-secret-value"),
        ("RUNBOOK_JOB_UID", "uid-77"),
        ("JOB_COMPLETION_INDEX", "0"),
    ];
    job["spec"]["template"]["spec"]["containers"][0]["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| k8s_expand(a.as_str().unwrap(), &vars))
        .collect()
}

#[test]
fn kubernetes_gives_the_pod_the_url_and_the_prompt_as_written_whatever_dollars_they_hold() {
    assert_eq!(
        k8s_expand("a$(X)b$$(X)c$d$(", &[("X", "1")]),
        "a1b$(X)c$d$("
    );
    let ctx = TestContext::new();
    let tasks =
        "[[task]]\nid = \"a\"\nprompt = \"print $(AWS_SECRET_ACCESS_KEY), $$ and $(HOME)\"\n";
    std::fs::write(ctx.work.join("tasks.toml"), tasks).unwrap();
    let url = "s3://team-runs/n$(AWS_SECRET_ACCESS_KEY)/$$x/$(";
    let (config_map, job) = k8s_documents(&ctx, &["tasks.toml", "--upload", url]);
    assert_eq!(
        config_map["data"]["tasks.toml"], tasks,
        "a ConfigMap is not expanded"
    );
    let args = pod_command(&job);
    assert_eq!(after(&args, "--upload"), url);
    assert_eq!(
        after(&args, "--batch-id"),
        "k8s-uid-77",
        "the Job's uid is expanded"
    );
    assert_eq!(args[2], "/tasks/tasks.toml");
    assert!(!args.concat().contains("leaked-secret-value"), "{args:?}");

    let (_, job) = k8s_documents(
        &ctx,
        &["tasks.toml", "--upload", url, "--batch-id", "night.1"],
    );
    let args = pod_command(&job);
    assert_eq!(after(&args, "--upload"), url);
    assert_eq!(after(&args, "--batch-id"), "night.1");
}

#[test]
fn a_json_lines_task_file_is_mounted_under_its_own_name_and_read_as_json_lines() {
    let ctx = TestContext::new();
    let tasks = "{\"id\":\"a\",\"prompt\":\"x\"}\n{\"id\":\"b\",\"prompt\":\"y\",\"repeat\":2}\n";
    std::fs::write(ctx.work.join("nightly.ndjson"), tasks).unwrap();
    let (config_map, job) = k8s_documents(&ctx, &["nightly.ndjson", "--upload", "s3://b/p"]);
    assert_eq!(job["spec"]["completions"], 3);
    let data = config_map["data"].as_object().unwrap();
    assert_eq!(data.keys().collect::<Vec<_>>(), ["tasks.ndjson"]);
    // The volume as the pod sees it: each key of the ConfigMap a file under /tasks.
    let mount = ctx.root().join("mounted-tasks");
    std::fs::create_dir_all(&mount).unwrap();
    for (name, text) in data {
        std::fs::write(mount.join(name), text.as_str().unwrap()).unwrap();
    }
    let args = pod_command(&job);
    let path = args[2].strip_prefix("/tasks/").unwrap();
    let mounted = mount.join(path).display().to_string();
    // runbook reads the file the pod is given as it read the one on the command line.
    let (_, again) = k8s_documents(&ctx, &[mounted.as_str(), "--upload", "s3://b/p"]);
    assert_eq!(again["spec"]["completions"], 3);
}

#[test]
fn the_stats_command_a_comment_gives_runs_no_substitution_when_copied_into_a_shell() {
    let ctx = repository();
    std::fs::write(ctx.work.join("tasks.toml"), TASKS).unwrap();
    let url = "s3://team-runs/night $(touch pwned)";
    for (engine, placeholder) in [("slurm", "slurm-<job id>"), ("k8s", "k8s-<the Job's uid>")] {
        let out = ctx.run(&[
            "fleet",
            engine,
            "tasks.toml",
            "--upload",
            url,
            "--image",
            IMAGE,
        ]);
        out.assert_exit(0);
        let told = out.stdout.split("`runbook stats ").nth(1).unwrap();
        let command = format!("runbook stats {}", &told[..told.find('`').unwrap()]);
        let args = run_script(&ctx, &command.replace(placeholder, "id-1"));
        assert_eq!(
            args,
            ["stats", &format!("{url}/id-1")],
            "{engine}: {command}"
        );
    }
    assert!(!ctx.work.join("pwned").exists(), "a substitution ran");
}
