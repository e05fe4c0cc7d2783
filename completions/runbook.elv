
use builtin;
use str;

set edit:completion:arg-completer[runbook] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'runbook'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'runbook'= {
            cand --color 'When to use colour: auto, always, never'
            cand --width 'Lay the view out for this many columns'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand run 'Run an agent on a task and supervise it to the end'
            cand status 'Show how a run went (the latest by default), or follow it live from another terminal'
            cand batch 'Run many tasks at once, each in a git worktree of its own, within one budget'
            cand list 'List runs, newest first'
            cand stats 'The numbers over all runs: outcomes, cost, tokens, durations, failing tools'
            cand report 'Tell one run for a pull request, as Markdown or JSON'
            cand fleet 'Print what a scheduler needs to run a task file''s tasks, one per index'
            cand upload 'Upload runs made earlier or offline to object storage'
            cand replay 'Show a recorded agent transcript or runbook event log as `runbook run` showed it'
            cand demo 'See runbook supervise a recorded agent session: no agent or API key needed'
            cand config 'Show the configuration in effect and where each value comes from'
            cand doctor 'Check each agent: its binary, version, model and price'
            cand trust 'Trust a repository''s configuration files, so that the commands they set may run'
            cand completions 'Print a shell completion script'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'runbook;run'= {
            cand --agent 'Which agent to run: opencode, claude, codex'
            cand -m 'The model, as the agent names it'
            cand --model 'The model, as the agent names it'
            cand --permissions 'What the agent may do without asking'
            cand --agent-bin 'The agent''s binary [default: on PATH]'
            cand --agent-cmd 'Run this command instead; it prints events'
            cand --via 'How to talk to the agent: native or acp'
            cand --acp-cmd 'Run this command instead, an ACP agent'
            cand --sandbox 'Sandbox the agent: auto, landlock, bwrap, off'
            cand --allow-port 'Let the sandboxed agent connect to port N'
            cand --timeout 'Stop the run after this long'
            cand --max-cost 'Stop once it cost this many US dollars'
            cand --inactivity-timeout 'Stop after this long idle, or `off`'
            cand --permission-timeout 'Time to answer a permission request (ACP)'
            cand --kill-grace 'Time between SIGTERM and SIGKILL'
            cand --finish-grace 'Time to exit after the final result'
            cand --stuck 'When the agent goes round in circles'
            cand --stuck-repeat 'Stop at this many same calls and results'
            cand --stuck-same-failure 'Stop at this many same shell failures'
            cand --stuck-same-error 'Stop at this many same errors in a row'
            cand --stuck-ping-pong 'Stop at this many A, B, A, B cycles'
            cand --stuck-monologue 'Stop at this many empty or same steps'
            cand --check-timeout 'End a check that runs longer than this'
            cand --repair-attempts 'Times to resume the session to fix checks'
            cand --repair-budget 'What repairs may spend, on top of the task'
            cand --events-to 'Write every event to this file or FIFO'
            cand --upload 'Upload the run to object storage'
            cand --then 'Then continue with this prompt (repeatable)'
            cand --on-event 'Pipe every event to this command (repeatable)'
            cand --name 'A name for the run [default: the run id]'
            cand --check 'Run this check when done (repeatable)'
            cand --max-revisions 'How many times a plan may be revised'
            cand --cwd 'The directory the agent works in'
            cand --env-file 'Read agent variables from FILE (repeatable)'
            cand --task-file 'The task file of the batch this run is a task of (set by `runbook batch`)'
            cand --task-id 'The task of `--task-file` this run is'
            cand --runs-dir 'Where run directories go'
            cand --color 'When to use colour: auto, always, never'
            cand --width 'Lay the view out for this many columns'
            cand --plan 'Plan first, then execute on your approval'
            cand --retry-denied 'Retry once, without the refused tools'
            cand --on-event-raw 'Add the agent''s own line to observer lines'
            cand --summary 'Ask for a summary of the work (one more turn)'
            cand --no-checks 'Run no checks'
            cand --plan-only 'Print the plan and stop (implies --plan)'
            cand -y 'Execute the plan without asking'
            cand --yes 'Execute the plan without asking'
            cand --trust 'Trust the repository''s config, for this run'
            cand --json 'Print events as JSON lines, then the receipt'
            cand -q 'Show only what needs attention'
            cand --quiet 'Show only what needs attention'
            cand -v 'Show everything, the agent''s reasoning too'
            cand --verbose 'Show everything, the agent''s reasoning too'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;status'= {
            cand --runs-dir 'Where run directories go'
            cand --color 'When to use colour: auto, always, never'
            cand --width 'Lay the view out for this many columns'
            cand --live 'Follow the run as it happens, then exit with its exit code'
            cand --next 'Wait for the next run to start, then follow it live (implies --live)'
            cand --here 'Only runs started in the current directory'
            cand --json 'Print the receipt, or a batch''s record, as JSON'
            cand -q 'Show only what needs attention'
            cand --quiet 'Show only what needs attention'
            cand -v 'Show everything, the agent''s reasoning too'
            cand --verbose 'Show everything, the agent''s reasoning too'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;batch'= {
            cand --tasks 'Read the tasks from this file instead; `-` reads JSON lines from stdin'
            cand -j 'Run at most this many tasks at once [default: min(4, cores)]'
            cand --jobs 'Run at most this many tasks at once [default: min(4, cores)]'
            cand --max-fail 'Start no more tasks once this many have not completed'
            cand --max-cost 'The whole batch''s budget in US dollars'
            cand --keep 'Which worktrees to keep at the end (branches with changes are always kept)'
            cand --junit 'Write a JUnit XML report of the tasks to FILE'
            cand --task-index 'Run only task N of the file (from 0, after `repeat` and `agents` make their copies)'
            cand --task-index-from-env 'Run only the task whose index a scheduler gives in VAR'
            cand --upload 'Upload each task''s run to s3://bucket/prefix, gs://…, az://… or file:///path, under the batch''s id [default: the `upload` setting]'
            cand --batch-id 'The id the runs are uploaded under, URL/ID/<run id>/ [default: the batch''s own]'
            cand --runs-dir 'Where run directories go'
            cand --color 'When to use colour: auto, always, never'
            cand --width 'Lay the view out for this many columns'
            cand --fail-fast 'Start no more tasks once one has not completed (--max-fail 1)'
            cand --trust 'Trust the repository''s config and the task file, for this batch'
            cand --json 'Print every task''s events as JSON lines, tagged with `task`, then the batch record'
            cand --in-place 'With a task index: run in this checkout instead of a worktree of its own'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand clean 'Remove the worktrees and unchanged branches a batch left (every batch by default)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'runbook;batch;clean'= {
            cand --runs-dir 'Where run directories go'
            cand --color 'When to use colour: auto, always, never'
            cand --width 'Lay the view out for this many columns'
            cand --force 'Remove worktrees that hold changes not committed to their branch too (they are kept otherwise)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;batch;help'= {
            cand clean 'Remove the worktrees and unchanged branches a batch left (every batch by default)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'runbook;batch;help;clean'= {
        }
        &'runbook;batch;help;help'= {
        }
        &'runbook;list'= {
            cand -n 'Show at most this many runs'
            cand --limit 'Show at most this many runs'
            cand --outcome 'Only runs that ended so (repeatable)'
            cand --agent 'Only runs of this agent'
            cand --runs-dir 'Where run directories go'
            cand --color 'When to use colour: auto, always, never'
            cand --width 'Lay the view out for this many columns'
            cand --all 'Show every run'
            cand --here 'Only runs started in the current directory'
            cand --json 'One receipt per line, as JSON'
            cand --wide 'Show every column whole, however wide [default: fit the terminal, or 80 columns]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;stats'= {
            cand --since 'Only runs started since then: `7d`, `12h`, `2026-11-01`'
            cand --until 'Only runs started before then: a time ago or a date'
            cand --agent 'Only runs of this agent (repeatable)'
            cand --model 'Only runs of this model, as the agent names it (repeatable)'
            cand --project 'Only runs of this project (its git root)'
            cand --outcome 'Only runs that ended so (repeatable)'
            cand --html 'Write the numbers as one HTML page of charts and tables to this file'
            cand --runs-dir 'Where run directories go'
            cand --color 'When to use colour: auto, always, never'
            cand --width 'Lay the view out for this many columns'
            cand --json 'Print the numbers as JSON (docs/stats.schema.json)'
            cand --wide 'Show every column whole, however wide [default: fit the terminal, or 80 columns]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;report'= {
            cand --format 'How to tell it'
            cand --runs-dir 'Where run directories go'
            cand --color 'When to use colour: auto, always, never'
            cand --width 'Lay the view out for this many columns'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;fleet'= {
            cand --upload 'Where each task uploads its run, and `stats` reads them (required)'
            cand --name 'The name of the job (letters, digits, `-`)'
            cand --image 'The container image (Kubernetes, required): runbook, the agent and the repository at /work'
            cand --deadline 'How long the job may take, in seconds (Kubernetes, Slurm, GitHub Actions)'
            cand --retries 'How many times one task is tried again after a failure worth retrying'
            cand --batch-id 'The id every task uploads its run under, URL/ID/ [default: the engine''s job id]'
            cand --color 'When to use colour: auto, always, never'
            cand --width 'Lay the view out for this many columns'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;upload'= {
            cand --to 'Where to: s3://bucket/prefix, gs://…, az://…, file:///path [default: the `upload` setting]'
            cand --runs-dir 'Where run directories go'
            cand --color 'When to use colour: auto, always, never'
            cand --width 'Lay the view out for this many columns'
            cand --all 'Upload every finished run whose receipt is not in the bucket yet'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;replay'= {
            cand --agent 'Read the file as this agent''s output [default: detected]'
            cand --agent-version 'The agent version that made the recording, e.g. 2.1.2 [default: told from the file]'
            cand -m 'The model the recording used, to price it'
            cand --model 'The model the recording used, to price it'
            cand --speed 'Play the recording this many times faster (0.001 to 1000000)'
            cand --runs-dir 'Where run directories go'
            cand --color 'When to use colour: auto, always, never'
            cand --width 'Lay the view out for this many columns'
            cand --instant 'Don''t wait between events'
            cand --json 'Print the universal events as JSON lines instead'
            cand -q 'Show only what needs attention'
            cand --quiet 'Show only what needs attention'
            cand -v 'Show everything, the agent''s reasoning too'
            cand --verbose 'Show everything, the agent''s reasoning too'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;demo'= {
            cand --speed 'Play the session this many times faster (0.001 to 1000000) [default: its recorded pace, at most 15 s]'
            cand --color 'When to use colour: auto, always, never'
            cand --width 'Lay the view out for this many columns'
            cand --fast 'Don''t wait between events'
            cand --json 'Print the run''s events and then its receipt as JSON lines, as `runbook run --json` does'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;config'= {
            cand --agent 'Which agent to run: opencode, claude, codex'
            cand -m 'The model, as the agent names it'
            cand --model 'The model, as the agent names it'
            cand --permissions 'What the agent may do without asking'
            cand --agent-bin 'The agent''s binary [default: on PATH]'
            cand --agent-cmd 'Run this command instead; it prints events'
            cand --via 'How to talk to the agent: native or acp'
            cand --acp-cmd 'Run this command instead, an ACP agent'
            cand --sandbox 'Sandbox the agent: auto, landlock, bwrap, off'
            cand --allow-port 'Let the sandboxed agent connect to port N'
            cand --timeout 'Stop the run after this long'
            cand --max-cost 'Stop once it cost this many US dollars'
            cand --inactivity-timeout 'Stop after this long idle, or `off`'
            cand --permission-timeout 'Time to answer a permission request (ACP)'
            cand --kill-grace 'Time between SIGTERM and SIGKILL'
            cand --finish-grace 'Time to exit after the final result'
            cand --stuck 'When the agent goes round in circles'
            cand --stuck-repeat 'Stop at this many same calls and results'
            cand --stuck-same-failure 'Stop at this many same shell failures'
            cand --stuck-same-error 'Stop at this many same errors in a row'
            cand --stuck-ping-pong 'Stop at this many A, B, A, B cycles'
            cand --stuck-monologue 'Stop at this many empty or same steps'
            cand --check-timeout 'End a check that runs longer than this'
            cand --repair-attempts 'Times to resume the session to fix checks'
            cand --repair-budget 'What repairs may spend, on top of the task'
            cand --events-to 'Write every event to this file or FIFO'
            cand --upload 'Upload the run to object storage'
            cand --cwd 'The directory the agent works in'
            cand --env-file 'Read agent variables from FILE (repeatable)'
            cand --runs-dir 'Where run directories go'
            cand --color 'When to use colour: auto, always, never'
            cand --width 'Lay the view out for this many columns'
            cand --init 'Write a starter runbook.toml in the repository root'
            cand --keys 'List the keys a configuration file can set'
            cand --wide 'Show every value whole, however wide [default: fit the terminal, or 80 columns]'
            cand --plan 'Plan first, then execute on your approval'
            cand --retry-denied 'Retry once, without the refused tools'
            cand --on-event-raw 'Add the agent''s own line to observer lines'
            cand --json 'Print the configuration as JSON'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;doctor'= {
            cand --agent 'Which agent to run: opencode, claude, codex'
            cand -m 'The model, as the agent names it'
            cand --model 'The model, as the agent names it'
            cand --permissions 'What the agent may do without asking'
            cand --agent-bin 'The agent''s binary [default: on PATH]'
            cand --agent-cmd 'Run this command instead; it prints events'
            cand --via 'How to talk to the agent: native or acp'
            cand --acp-cmd 'Run this command instead, an ACP agent'
            cand --sandbox 'Sandbox the agent: auto, landlock, bwrap, off'
            cand --allow-port 'Let the sandboxed agent connect to port N'
            cand --timeout 'Stop the run after this long'
            cand --max-cost 'Stop once it cost this many US dollars'
            cand --inactivity-timeout 'Stop after this long idle, or `off`'
            cand --permission-timeout 'Time to answer a permission request (ACP)'
            cand --kill-grace 'Time between SIGTERM and SIGKILL'
            cand --finish-grace 'Time to exit after the final result'
            cand --stuck 'When the agent goes round in circles'
            cand --stuck-repeat 'Stop at this many same calls and results'
            cand --stuck-same-failure 'Stop at this many same shell failures'
            cand --stuck-same-error 'Stop at this many same errors in a row'
            cand --stuck-ping-pong 'Stop at this many A, B, A, B cycles'
            cand --stuck-monologue 'Stop at this many empty or same steps'
            cand --check-timeout 'End a check that runs longer than this'
            cand --repair-attempts 'Times to resume the session to fix checks'
            cand --repair-budget 'What repairs may spend, on top of the task'
            cand --events-to 'Write every event to this file or FIFO'
            cand --upload 'Upload the run to object storage'
            cand --runs-dir 'Where run directories go'
            cand --color 'When to use colour: auto, always, never'
            cand --width 'Lay the view out for this many columns'
            cand --plan 'Plan first, then execute on your approval'
            cand --retry-denied 'Retry once, without the refused tools'
            cand --on-event-raw 'Add the agent''s own line to observer lines'
            cand --json 'Print the findings as one JSON object'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;trust'= {
            cand --color 'When to use colour: auto, always, never'
            cand --width 'Lay the view out for this many columns'
            cand --show 'List the trusted files and whether they changed'
            cand --forget 'Forget the trust in PATH (or in the repository''s files)'
            cand --wide 'With --show: every column whole, however wide [default: fit the terminal, or 80 columns]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;completions'= {
            cand --color 'When to use colour: auto, always, never'
            cand --width 'Lay the view out for this many columns'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;help'= {
            cand run 'Run an agent on a task and supervise it to the end'
            cand status 'Show how a run went (the latest by default), or follow it live from another terminal'
            cand batch 'Run many tasks at once, each in a git worktree of its own, within one budget'
            cand list 'List runs, newest first'
            cand stats 'The numbers over all runs: outcomes, cost, tokens, durations, failing tools'
            cand report 'Tell one run for a pull request, as Markdown or JSON'
            cand fleet 'Print what a scheduler needs to run a task file''s tasks, one per index'
            cand upload 'Upload runs made earlier or offline to object storage'
            cand replay 'Show a recorded agent transcript or runbook event log as `runbook run` showed it'
            cand demo 'See runbook supervise a recorded agent session: no agent or API key needed'
            cand config 'Show the configuration in effect and where each value comes from'
            cand doctor 'Check each agent: its binary, version, model and price'
            cand trust 'Trust a repository''s configuration files, so that the commands they set may run'
            cand completions 'Print a shell completion script'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'runbook;help;run'= {
        }
        &'runbook;help;status'= {
        }
        &'runbook;help;batch'= {
            cand clean 'Remove the worktrees and unchanged branches a batch left (every batch by default)'
        }
        &'runbook;help;batch;clean'= {
        }
        &'runbook;help;list'= {
        }
        &'runbook;help;stats'= {
        }
        &'runbook;help;report'= {
        }
        &'runbook;help;fleet'= {
        }
        &'runbook;help;upload'= {
        }
        &'runbook;help;replay'= {
        }
        &'runbook;help;demo'= {
        }
        &'runbook;help;config'= {
        }
        &'runbook;help;doctor'= {
        }
        &'runbook;help;trust'= {
        }
        &'runbook;help;completions'= {
        }
        &'runbook;help;help'= {
        }
    ]
    $completions[$command]
}
