//! A Kubernetes Indexed Job running one task per completion index, and the ConfigMap that
//! holds its task file.

use std::path::Path;

use serde_json::json;

use super::Plan;
use super::policy::{Retry, codes};

/// The container's name, which the pod failure policy's rules name.
const CONTAINER: &str = "runbook";

/// How long a finished Job stays (a day), for its logs.
const TTL_SECONDS: u64 = 86_400;

/// The variable the Job's uid is given in.
const UID_VAR: &str = "RUNBOOK_JOB_UID";

/// At most this many pods run at once.
const PARALLELISM: usize = 10;

/// The ConfigMap and the Job, as two YAML documents.
pub(super) fn render(plan: &Plan<'_>) -> String {
    let a = plan.args;
    let key = mounted_as(plan.file);
    let config_map = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": { "name": format!("{}-tasks", a.name) },
        "data": { key: plan.text },
    });
    format!(
        "{}---\n{}\n---\n{}\n",
        header(plan),
        super::yaml(&config_map),
        super::yaml(&job(plan, key)),
    )
}

/// The name the task file is mounted under, in its own format: runbook reads a file ending in
/// `.jsonl` or `.ndjson` as JSON lines, any other as TOML.
fn mounted_as(file: &Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()) {
        Some("jsonl") => "tasks.jsonl",
        Some("ndjson") => "tasks.ndjson",
        _ => "tasks.toml",
    }
}

/// `text` as a container's command must hold it for the container to be given `text`:
/// Kubernetes expands `$(NAME)` there (to a variable's value, a secret's included), and reads
/// `$$` as one `$`.
fn literal(text: &str) -> String {
    text.replace('$', "$$")
}

/// The Indexed Job: one pod per task, its exit code mapped to final, retried or ignored.
fn job(plan: &Plan<'_>, key: &str) -> serde_json::Value {
    let a = plan.args;
    let exit_rule = |action: &str, kind: Retry| {
        json!({
            "action": action,
            "onExitCodes": { "containerName": CONTAINER, "operator": "In", "values": codes(kind) },
        })
    };
    // Every pod uploads under one id: the Job's uid (through the downward API), unless one
    // was given.
    let (env, batch_id) = match &a.batch_id {
        Some(id) => (json!([]), literal(id)),
        None => (
            json!([{ "name": UID_VAR, "valueFrom": { "fieldRef": {
                "fieldPath": "metadata.labels['batch.kubernetes.io/controller-uid']",
            }}}]),
            format!("k8s-$({UID_VAR})"),
        ),
    };
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": { "name": a.name },
        "spec": {
            "completionMode": "Indexed",
            "completions": plan.tasks,
            "parallelism": plan.tasks.min(PARALLELISM),
            "backoffLimitPerIndex": a.retries,
            "activeDeadlineSeconds": a.deadline,
            "ttlSecondsAfterFinished": TTL_SECONDS,
            "podFailurePolicy": { "rules": [
                { "action": "Ignore", "onPodConditions": [{ "type": "DisruptionTarget" }] },
                exit_rule("Ignore", Retry::Ignore),
                exit_rule("FailIndex", Retry::Final),
                exit_rule("Count", Retry::Again),
            ]},
            "template": { "spec": {
                "restartPolicy": "Never",
                "containers": [{
                    "name": CONTAINER,
                    "image": a.image.as_deref().unwrap_or_default(),
                    "workingDir": "/work",
                    "command": [
                        "runbook", "batch", literal(&format!("/tasks/{key}")),
                        "--task-index-from-env", "JOB_COMPLETION_INDEX",
                        "--in-place", "--upload", literal(plan.upload), "--batch-id", batch_id,
                    ],
                    "env": env,
                    "envFrom": [{ "secretRef": { "name": format!("{}-secrets", a.name) } }],
                    "volumeMounts": [{ "name": "tasks", "mountPath": "/tasks", "readOnly": true }],
                }],
                "volumes": [{ "name": "tasks", "configMap": { "name": format!("{}-tasks", a.name) } }],
            }},
        },
    })
}

/// What the file is, how to apply it, and the secrets it expects, as comment lines.
fn header(plan: &Plan<'_>) -> String {
    let a = plan.args;
    format!(
        "# runbook fleet k8s: {tasks} tasks of {file}, one per completion index (0 to {last}).\n\
         # kubectl apply -f this file; then `runbook stats {stats_url}`\n\
         # (the Job's uid: kubectl get job {name} -o jsonpath='{{.metadata.uid}}').\n\
         # The image runs runbook and the agent, with the repository checked out at /work.\n\
         # Secrets it expects, in the Secret `{name}-secrets` (kubectl create secret generic\n\
         # {name}-secrets --from-literal=...): the agent's API key (ANTHROPIC_API_KEY,\n\
         # OPENAI_API_KEY, ...) and the bucket's credentials (AWS_ACCESS_KEY_ID and\n\
         # AWS_SECRET_ACCESS_KEY, GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_ACCOUNT_KEY...).\n\
         # Exit codes: {final_:?} are final (FailIndex), {again:?} are retried up to\n\
         # backoffLimitPerIndex times, {ignore:?} (interrupted) and evictions are retried freely.\n",
        tasks = plan.tasks,
        file = plan.path,
        last = plan.tasks - 1,
        stats_url = super::stats_url(a, "k8s-<the Job's uid>"),
        name = a.name,
        final_ = codes(Retry::Final),
        again = codes(Retry::Again),
        ignore = codes(Retry::Ignore),
    )
}
