//! A GitHub Actions workflow: one matrix leg per task, then a job that sums them up with
//! `runbook stats` over the bucket. Each leg installs runbook (pinned to this build) and the
//! agents the task file runs (pinned to tested versions); each step is given only the secrets
//! it uses, and an install step sees none.

use serde_json::{Map, Value, json};

use super::Plan;
use super::install;
use super::policy::{Retry, codes};

/// The bucket's credentials: what the legs upload with and `stats` reads with.
const BUCKET_SECRETS: [&str; 2] = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"];

/// The workflow.
pub(super) fn render(plan: &Plan<'_>) -> String {
    let a = plan.args;
    // Every leg uploads under one id: the workflow run's (a re-run leg joins it), unless one
    // was given.
    let run_id = "gha-${{ github.run_id }}";
    let install_runbook = json!({ "name": "Install runbook", "run": install::runbook() });
    let stats = format!("runbook stats {}", super::quoted(&super::url_of(a, run_id)));
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
                "steps": [
                    { "uses": "actions/checkout@v4" },
                    install_runbook,
                    { "name": "Install the agent", "run": install_agents(plan) },
                    { "name": "Run the task", "env": env(&agent_keys(plan)), "run": leg(plan, run_id) },
                ],
            },
            "stats": {
                "needs": "task",
                "if": "${{ always() }}",
                "runs-on": "ubuntu-latest",
                "steps": [
                    install_runbook,
                    { "name": "Sum up the batch", "env": env(&[]), "run": stats },
                ],
            },
        },
    });
    format!("{}{}\n", header(plan), super::yaml(&workflow))
}

/// The step's environment: the secrets named, then the bucket's.
fn env(keys: &[&str]) -> Value {
    let mut out = Map::new();
    for key in keys.iter().chain(&BUCKET_SECRETS) {
        out.insert(
            (*key).to_owned(),
            json!(format!("${{{{ secrets.{key} }}}}")),
        );
    }
    out.insert("AWS_REGION".to_owned(), json!("${{ vars.AWS_REGION }}"));
    Value::Object(out)
}

/// The API keys the task file's agents read (both, when it runs a program of its own).
fn agent_keys(plan: &Plan<'_>) -> Vec<&'static str> {
    let mut keys: Vec<&str> = Vec::new();
    let all = [
        crate::agent_kind::AgentKind::Claude,
        crate::agent_kind::AgentKind::Codex,
    ];
    let agents = if plan.agents.own.is_empty() {
        plan.agents.known.as_slice()
    } else {
        &all
    };
    for agent in agents {
        for key in install::keys_of(*agent) {
            if !keys.contains(key) {
                keys.push(key);
            }
        }
    }
    keys
}

/// The install of each agent from npm, then a check that its program is on PATH; a step that
/// fails until edited when the task file runs a program of its own.
fn install_agents(plan: &Plan<'_>) -> String {
    let mut lines = Vec::new();
    let known = &plan.agents.known;
    if !known.is_empty() {
        let packages: Vec<String> = known.iter().map(|a| install::package(*a)).collect();
        lines.push(format!("npm install --global {}", packages.join(" ")));
        for agent in known {
            lines.push(format!("command -v {}", agent.adapter().program()));
        }
    }
    for setting in &plan.agents.own {
        lines.push(format!(
            "echo '::error::the task file sets {setting}, a program of its own: install it on the runner in this step, then remove this line'"
        ));
        lines.push("exit 1".to_owned());
    }
    lines.join("\n") + "\n"
}

/// The leg's script: the task, and exit 127 (the agent not found) told as the missing install
/// it is rather than a task's final outcome.
fn leg(plan: &Plan<'_>, run_id: &str) -> String {
    let a = plan.args;
    let batch_id = a.batch_id.as_deref().unwrap_or(run_id);
    format!(
        "code=0\n\
         runbook batch {} --task-index ${{{{ matrix.index }}}} --in-place --upload {} --batch-id {} || code=$?\n\
         if [ \"$code\" -eq 127 ]; then\n\
         \x20 echo '::error::runbook exited 127: the agent is not installed on this runner (see the step Install the agent), so the task did not run'\n\
         fi\n\
         exit \"$code\"\n",
        super::quoted(&plan.path),
        super::quoted(plan.upload),
        super::quoted(batch_id)
    )
}

/// What the user must still do when the task file runs a program of its own (`setting`).
pub(super) fn own_agent_note(setting: &str) -> String {
    format!(
        "the task file sets {setting}: the workflow cannot install that program; install it in the step `Install the agent`, which fails until you do"
    )
}

/// What the file is, what it installs, the secrets it expects, and what is left to do.
fn header(plan: &Plan<'_>) -> String {
    let a = plan.args;
    let agents: Vec<String> = plan
        .agents
        .known
        .iter()
        .map(|k| format!("{} ({})", install::name(*k), install::package(*k)))
        .collect();
    let mut text = format!(
        "# runbook fleet gha: {tasks} tasks of {file}, one matrix leg each (index 0 to {last}).\n\
         # Save as .github/workflows/{name}.yml; run it from the Actions tab.\n\
         # Each leg installs runbook {version} (`{install}`)\n\
         # and the agent: {agents}.\n\
         # Secrets it expects (Settings > Secrets and variables > Actions): the agent's API key\n\
         # ({keys}), given to the step that runs the task alone, and the bucket's credentials\n\
         # (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY; the variable AWS_REGION), given to it and to\n\
         # the `stats` job.\n\
         # A leg that exits {final_:?} failed for good ({missing} means the agent is not installed:\n\
         # the leg says so); {again:?} are worth re-running (Re-run failed jobs).\n",
        tasks = plan.tasks,
        file = plan.path,
        last = plan.tasks - 1,
        name = a.name,
        version = env!("CARGO_PKG_VERSION"),
        install = install::runbook(),
        agents = if agents.is_empty() {
            "none known".to_owned()
        } else {
            agents.join(", ")
        },
        keys = agent_keys(plan).join(", "),
        final_ = codes(Retry::Final),
        missing = crate::exit::ExitStatus::AgentNotFound as u8,
        again = codes(Retry::Again),
    );
    for setting in &plan.agents.own {
        text.push_str(&format!("# TO DO: {}.\n", own_agent_note(setting)));
    }
    text
}
