//! A Slurm batch script: `sbatch --array` runs one task per array index, retrying the exit
//! codes worth another try.

use super::Plan;
use super::policy::{Retry, codes};

/// The script.
pub(super) fn render(plan: &Plan<'_>) -> String {
    let a = plan.args;
    let join = |kind| {
        codes(kind)
            .iter()
            .map(u8::to_string)
            .collect::<Vec<_>>()
            .join("|")
    };
    let mut again = codes(Retry::Again);
    again.extend(codes(Retry::Ignore));
    let again = again
        .iter()
        .map(u8::to_string)
        .collect::<Vec<_>>()
        .join("|");
    format!(
        "#!/bin/bash\n\
         # runbook fleet slurm: {tasks} tasks of {file}, one per array index (0 to {last}).\n\
         # Submit from the repository's checkout on a shared filesystem: sbatch {name}.sbatch\n\
         # then `runbook stats {stats_url}`. Each index runs from the top of the\n\
         # repository it is submitted from, where {file} is.\n\
         # Secrets it expects in the environment sbatch passes on (--export=ALL): the agent's\n\
         # API key (ANTHROPIC_API_KEY, OPENAI_API_KEY, ...) and the bucket's credentials\n\
         # (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or the provider's usual files).\n\
         #SBATCH --job-name={name}\n\
         #SBATCH --array=0-{last}\n\
         #SBATCH --time={minutes}\n\
         #SBATCH --output={name}-%A_%a.out\n\
         set -u\n\
         cd \"$(git rev-parse --show-toplevel)\" || exit 2\n\
         # Every index uploads its run under one id: the array job's, unless one was given.\n\
         batch={batch}\n\
         # Final exit codes: {final_}; worth another try: {again}.\n\
         code=0\n\
         for try in $(seq 0 {retries}); do\n\
         \x20 runbook batch {quoted} --task-index-from-env SLURM_ARRAY_TASK_ID --upload {quoted_url} --batch-id \"$batch\"\n\
         \x20 code=$?\n\
         \x20 case $code in\n\
         \x20   {again}) echo \"runbook exited $code: try $((try + 1)) of {tries}\" >&2 ;;\n\
         \x20   *) exit $code ;;\n\
         \x20 esac\n\
         done\n\
         exit $code\n",
        tasks = plan.tasks,
        file = plan.path,
        last = plan.tasks - 1,
        name = a.name,
        minutes = a.deadline.div_ceil(60),
        final_ = join(Retry::Final),
        retries = a.retries,
        tries = a.retries + 1,
        quoted = super::quoted(&plan.path),
        quoted_url = super::quoted(plan.upload),
        stats_url = super::stats_url(a, "slurm-<job id>"),
        batch = a.batch_id.as_deref().map_or_else(
            || "\"slurm-${SLURM_ARRAY_JOB_ID:?submit this script with sbatch}\"".to_owned(),
            super::quoted
        ),
    )
}
