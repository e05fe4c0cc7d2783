//! A GitHub Actions workflow: one matrix leg per task, then a job that sums them up with
//! `runbook stats` over the bucket.

use serde_json::json;

use super::Plan;
use super::policy::{Retry, codes};

/// The workflow.
pub(super) fn render(plan: &Plan<'_>) -> String {
    let a = plan.args;
    let file = plan.file.display().to_string();
    let secrets = json!({
        "ANTHROPIC_API_KEY": "${{ secrets.ANTHROPIC_API_KEY }}",
        "OPENAI_API_KEY": "${{ secrets.OPENAI_API_KEY }}",
        "AWS_ACCESS_KEY_ID": "${{ secrets.AWS_ACCESS_KEY_ID }}",
        "AWS_SECRET_ACCESS_KEY": "${{ secrets.AWS_SECRET_ACCESS_KEY }}",
        "AWS_REGION": "${{ vars.AWS_REGION }}",
    });
    let install = json!({ "name": "Install runbook", "run": "npm install --global runbook-cli" });
    // Every leg uploads under one id: the workflow run's (a re-run leg joins it), unless one
    // was given.
    let run_id = "gha-${{ github.run_id }}";
    let batch_id = a.batch_id.as_deref().unwrap_or(run_id);
    let run = format!(
        "runbook batch {} --task-index ${{{{ matrix.index }}}} --in-place --upload {} --batch-id {}",
        super::quoted(&file),
        super::quoted(&a.upload),
        super::quoted(batch_id)
    );
    let workflow = json!({
        "name": a.name,
        "on": { "workflow_dispatch": {} },
        "permissions": { "contents": "read" },
        "jobs": {
            "task": {
                "runs-on": "ubuntu-latest",
                "timeout-minutes": a.deadline.div_ceil(60),
                "strategy": {
                    "fail-fast": false,
                    "matrix": { "index": (0..plan.tasks).collect::<Vec<_>>() },
                },
                "env": secrets,
                "steps": [
                    { "uses": "actions/checkout@v4" },
                    install,
                    { "name": "Run the task", "run": run },
                ],
            },
            "stats": {
                "needs": "task",
                "if": "${{ always() }}",
                "runs-on": "ubuntu-latest",
                "env": secrets,
                "steps": [
                    install,
                    { "name": "Sum up the batch", "run": format!("runbook stats {}", super::quoted(&super::url_of(a, run_id))) },
                ],
            },
        },
    });
    format!(
        "# runbook fleet gha: {tasks} tasks of {file}, one matrix leg each (index 0 to {last}).\n\
         # Save as .github/workflows/{name}.yml; run it from the Actions tab.\n\
         # Secrets it expects (Settings > Secrets and variables > Actions): the agent's API key\n\
         # (ANTHROPIC_API_KEY, OPENAI_API_KEY) and the bucket's credentials (AWS_ACCESS_KEY_ID,\n\
         # AWS_SECRET_ACCESS_KEY; the variable AWS_REGION).\n\
         # A leg that exits {final_:?} failed for good; {again:?} are worth re-running (Re-run failed jobs).\n\
         {}\n",
        super::yaml(&workflow),
        tasks = plan.tasks,
        last = plan.tasks - 1,
        name = a.name,
        final_ = codes(Retry::Final),
        again = codes(Retry::Again),
    )
}
