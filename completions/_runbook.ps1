
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'runbook' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'runbook'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'runbook' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto, always, never')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Run an agent on a task and supervise it to the end')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show how a run went (the latest by default), or follow it live from another terminal')
            [CompletionResult]::new('batch', 'batch', [CompletionResultType]::ParameterValue, 'Run many tasks at once, each in a git worktree of its own, within one budget')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List runs, newest first')
            [CompletionResult]::new('stats', 'stats', [CompletionResultType]::ParameterValue, 'The numbers over all runs: outcomes, cost, tokens, durations, failing tools')
            [CompletionResult]::new('report', 'report', [CompletionResultType]::ParameterValue, 'Tell one run for a pull request, as Markdown or JSON')
            [CompletionResult]::new('fleet', 'fleet', [CompletionResultType]::ParameterValue, 'Print what a scheduler needs to run a task file''s tasks, one per index')
            [CompletionResult]::new('upload', 'upload', [CompletionResultType]::ParameterValue, 'Upload runs made earlier or offline to object storage')
            [CompletionResult]::new('replay', 'replay', [CompletionResultType]::ParameterValue, 'Show a recorded agent transcript or runbook event log as `runbook run` showed it')
            [CompletionResult]::new('demo', 'demo', [CompletionResultType]::ParameterValue, 'See runbook supervise a recorded agent session: no agent or API key needed')
            [CompletionResult]::new('config', 'config', [CompletionResultType]::ParameterValue, 'Show the configuration in effect and where each value comes from')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Check each agent: its binary, version, model and price')
            [CompletionResult]::new('trust', 'trust', [CompletionResultType]::ParameterValue, 'Trust a repository''s configuration files, so that the commands they set may run')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'runbook;run' {
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Which agent to run: opencode, claude, codex')
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'The model, as the agent names it')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The model, as the agent names it')
            [CompletionResult]::new('--permissions', '--permissions', [CompletionResultType]::ParameterName, 'What the agent may do without asking')
            [CompletionResult]::new('--agent-bin', '--agent-bin', [CompletionResultType]::ParameterName, 'The agent''s binary [default: on PATH]')
            [CompletionResult]::new('--agent-cmd', '--agent-cmd', [CompletionResultType]::ParameterName, 'Run this command instead; it prints events')
            [CompletionResult]::new('--via', '--via', [CompletionResultType]::ParameterName, 'How to talk to the agent: native or acp')
            [CompletionResult]::new('--acp-cmd', '--acp-cmd', [CompletionResultType]::ParameterName, 'Run this command instead, an ACP agent')
            [CompletionResult]::new('--sandbox', '--sandbox', [CompletionResultType]::ParameterName, 'Sandbox the agent: auto, landlock, bwrap, off')
            [CompletionResult]::new('--allow-port', '--allow-port', [CompletionResultType]::ParameterName, 'Let the sandboxed agent connect to port N')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stop the run after this long')
            [CompletionResult]::new('--max-cost', '--max-cost', [CompletionResultType]::ParameterName, 'Stop once it cost this many US dollars')
            [CompletionResult]::new('--inactivity-timeout', '--inactivity-timeout', [CompletionResultType]::ParameterName, 'Stop after this long idle, or `off`')
            [CompletionResult]::new('--permission-timeout', '--permission-timeout', [CompletionResultType]::ParameterName, 'Time to answer a permission request (ACP)')
            [CompletionResult]::new('--kill-grace', '--kill-grace', [CompletionResultType]::ParameterName, 'Time between SIGTERM and SIGKILL')
            [CompletionResult]::new('--finish-grace', '--finish-grace', [CompletionResultType]::ParameterName, 'Time to exit after the final result')
            [CompletionResult]::new('--stuck', '--stuck', [CompletionResultType]::ParameterName, 'When the agent goes round in circles')
            [CompletionResult]::new('--stuck-repeat', '--stuck-repeat', [CompletionResultType]::ParameterName, 'Stop at this many same calls and results')
            [CompletionResult]::new('--stuck-same-failure', '--stuck-same-failure', [CompletionResultType]::ParameterName, 'Stop at this many same shell failures')
            [CompletionResult]::new('--stuck-same-error', '--stuck-same-error', [CompletionResultType]::ParameterName, 'Stop at this many same errors in a row')
            [CompletionResult]::new('--stuck-ping-pong', '--stuck-ping-pong', [CompletionResultType]::ParameterName, 'Stop at this many A, B, A, B cycles')
            [CompletionResult]::new('--stuck-monologue', '--stuck-monologue', [CompletionResultType]::ParameterName, 'Stop at this many empty or same steps')
            [CompletionResult]::new('--check-timeout', '--check-timeout', [CompletionResultType]::ParameterName, 'End a check that runs longer than this')
            [CompletionResult]::new('--repair-attempts', '--repair-attempts', [CompletionResultType]::ParameterName, 'Times to resume the session to fix checks')
            [CompletionResult]::new('--repair-budget', '--repair-budget', [CompletionResultType]::ParameterName, 'What repairs may spend, on top of the task')
            [CompletionResult]::new('--events-to', '--events-to', [CompletionResultType]::ParameterName, 'Write every event to this file or FIFO')
            [CompletionResult]::new('--upload', '--upload', [CompletionResultType]::ParameterName, 'Upload the run to object storage')
            [CompletionResult]::new('--then', '--then', [CompletionResultType]::ParameterName, 'Then continue with this prompt (repeatable)')
            [CompletionResult]::new('--on-event', '--on-event', [CompletionResultType]::ParameterName, 'Pipe every event to this command (repeatable)')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'A name for the run [default: the run id]')
            [CompletionResult]::new('--check', '--check', [CompletionResultType]::ParameterName, 'Run this check when done (repeatable)')
            [CompletionResult]::new('--max-revisions', '--max-revisions', [CompletionResultType]::ParameterName, 'How many times a plan may be revised')
            [CompletionResult]::new('--cwd', '--cwd', [CompletionResultType]::ParameterName, 'The directory the agent works in')
            [CompletionResult]::new('--env-file', '--env-file', [CompletionResultType]::ParameterName, 'Read agent variables from FILE (repeatable)')
            [CompletionResult]::new('--task-file', '--task-file', [CompletionResultType]::ParameterName, 'The task file of the batch this run is a task of (set by `runbook batch`)')
            [CompletionResult]::new('--task-id', '--task-id', [CompletionResultType]::ParameterName, 'The task of `--task-file` this run is')
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto, always, never')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns')
            [CompletionResult]::new('--plan', '--plan', [CompletionResultType]::ParameterName, 'Plan first, then execute on your approval')
            [CompletionResult]::new('--retry-denied', '--retry-denied', [CompletionResultType]::ParameterName, 'Retry once, without the refused tools')
            [CompletionResult]::new('--on-event-raw', '--on-event-raw', [CompletionResultType]::ParameterName, 'Add the agent''s own line to observer lines')
            [CompletionResult]::new('--summary', '--summary', [CompletionResultType]::ParameterName, 'Ask for a summary of the work (one more turn)')
            [CompletionResult]::new('--no-checks', '--no-checks', [CompletionResultType]::ParameterName, 'Run no checks')
            [CompletionResult]::new('--plan-only', '--plan-only', [CompletionResultType]::ParameterName, 'Print the plan and stop (implies --plan)')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Execute the plan without asking')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Execute the plan without asking')
            [CompletionResult]::new('--trust', '--trust', [CompletionResultType]::ParameterName, 'Trust the repository''s config, for this run')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print events as JSON lines, then the receipt')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Show only what needs attention')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Show only what needs attention')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show everything, the agent''s reasoning too')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show everything, the agent''s reasoning too')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;status' {
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto, always, never')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns')
            [CompletionResult]::new('--live', '--live', [CompletionResultType]::ParameterName, 'Follow the run as it happens, then exit with its exit code')
            [CompletionResult]::new('--next', '--next', [CompletionResultType]::ParameterName, 'Wait for the next run to start, then follow it live (implies --live)')
            [CompletionResult]::new('--here', '--here', [CompletionResultType]::ParameterName, 'Only runs started in the current directory')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the receipt, or a batch''s record, as JSON')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Show only what needs attention')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Show only what needs attention')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show everything, the agent''s reasoning too')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show everything, the agent''s reasoning too')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;batch' {
            [CompletionResult]::new('--tasks', '--tasks', [CompletionResultType]::ParameterName, 'Read the tasks from this file instead; `-` reads JSON lines from stdin')
            [CompletionResult]::new('-j', '-j', [CompletionResultType]::ParameterName, 'Run at most this many tasks at once [default: min(4, cores)]')
            [CompletionResult]::new('--jobs', '--jobs', [CompletionResultType]::ParameterName, 'Run at most this many tasks at once [default: min(4, cores)]')
            [CompletionResult]::new('--max-fail', '--max-fail', [CompletionResultType]::ParameterName, 'Start no more tasks once this many have not completed')
            [CompletionResult]::new('--max-cost', '--max-cost', [CompletionResultType]::ParameterName, 'The whole batch''s budget in US dollars')
            [CompletionResult]::new('--keep', '--keep', [CompletionResultType]::ParameterName, 'Which worktrees to keep at the end (branches with changes are always kept)')
            [CompletionResult]::new('--junit', '--junit', [CompletionResultType]::ParameterName, 'Write a JUnit XML report of the tasks to FILE')
            [CompletionResult]::new('--task-index', '--task-index', [CompletionResultType]::ParameterName, 'Run only task N of the file (from 0, after `repeat` and `agents` make their copies)')
            [CompletionResult]::new('--task-index-from-env', '--task-index-from-env', [CompletionResultType]::ParameterName, 'Run only the task whose index a scheduler gives in VAR')
            [CompletionResult]::new('--upload', '--upload', [CompletionResultType]::ParameterName, 'Upload each task''s run to s3://bucket/prefix, gs://…, az://… or file:///path, under the batch''s id [default: the `upload` setting]')
            [CompletionResult]::new('--batch-id', '--batch-id', [CompletionResultType]::ParameterName, 'The id the runs are uploaded under, URL/ID/<run id>/ [default: the batch''s own]')
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto, always, never')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns')
            [CompletionResult]::new('--fail-fast', '--fail-fast', [CompletionResultType]::ParameterName, 'Start no more tasks once one has not completed (--max-fail 1)')
            [CompletionResult]::new('--trust', '--trust', [CompletionResultType]::ParameterName, 'Trust the repository''s config and the task file, for this batch')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print every task''s events as JSON lines, tagged with `task`, then the batch record')
            [CompletionResult]::new('--in-place', '--in-place', [CompletionResultType]::ParameterName, 'With a task index: run in this checkout instead of a worktree of its own')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('clean', 'clean', [CompletionResultType]::ParameterValue, 'Remove the worktrees and unchanged branches a batch left (every batch by default)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'runbook;batch;clean' {
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto, always, never')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Remove worktrees that hold changes not committed to their branch too (they are kept otherwise)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;batch;help' {
            [CompletionResult]::new('clean', 'clean', [CompletionResultType]::ParameterValue, 'Remove the worktrees and unchanged branches a batch left (every batch by default)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'runbook;batch;help;clean' {
            break
        }
        'runbook;batch;help;help' {
            break
        }
        'runbook;list' {
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Show at most this many runs')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Show at most this many runs')
            [CompletionResult]::new('--outcome', '--outcome', [CompletionResultType]::ParameterName, 'Only runs that ended so (repeatable)')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Only runs of this agent')
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto, always, never')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Show every run')
            [CompletionResult]::new('--here', '--here', [CompletionResultType]::ParameterName, 'Only runs started in the current directory')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'One receipt per line, as JSON')
            [CompletionResult]::new('--wide', '--wide', [CompletionResultType]::ParameterName, 'Show every column whole, however wide [default: fit the terminal, or 80 columns]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;stats' {
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Only runs started since then: `7d`, `12h`, `2026-11-01`')
            [CompletionResult]::new('--until', '--until', [CompletionResultType]::ParameterName, 'Only runs started before then: a time ago or a date')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Only runs of this agent (repeatable)')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'Only runs of this model, as the agent names it (repeatable)')
            [CompletionResult]::new('--project', '--project', [CompletionResultType]::ParameterName, 'Only runs of this project (its git root)')
            [CompletionResult]::new('--outcome', '--outcome', [CompletionResultType]::ParameterName, 'Only runs that ended so (repeatable)')
            [CompletionResult]::new('--html', '--html', [CompletionResultType]::ParameterName, 'Write the numbers as one HTML page of charts and tables to this file')
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto, always, never')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the numbers as JSON (docs/stats.schema.json)')
            [CompletionResult]::new('--wide', '--wide', [CompletionResultType]::ParameterName, 'Show every column whole, however wide [default: fit the terminal, or 80 columns]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;report' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'How to tell it')
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto, always, never')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;fleet' {
            [CompletionResult]::new('--upload', '--upload', [CompletionResultType]::ParameterName, 'Where each task uploads its run, and `stats` reads them (required)')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'The name of the job (letters, digits, `-`)')
            [CompletionResult]::new('--image', '--image', [CompletionResultType]::ParameterName, 'The container image (Kubernetes, required): runbook, the agent and the repository at /work')
            [CompletionResult]::new('--deadline', '--deadline', [CompletionResultType]::ParameterName, 'How long the job may take, in seconds (Kubernetes, Slurm, GitHub Actions)')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'How many times one task is tried again after a failure worth retrying')
            [CompletionResult]::new('--batch-id', '--batch-id', [CompletionResultType]::ParameterName, 'The id every task uploads its run under, URL/ID/ [default: the engine''s job id]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto, always, never')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;upload' {
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Where to: s3://bucket/prefix, gs://…, az://…, file:///path [default: the `upload` setting]')
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto, always, never')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Upload every finished run whose receipt is not in the bucket yet')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;replay' {
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Read the file as this agent''s output [default: detected]')
            [CompletionResult]::new('--agent-version', '--agent-version', [CompletionResultType]::ParameterName, 'The agent version that made the recording, e.g. 2.1.2 [default: told from the file]')
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'The model the recording used, to price it')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The model the recording used, to price it')
            [CompletionResult]::new('--speed', '--speed', [CompletionResultType]::ParameterName, 'Play the recording this many times faster (0.001 to 1000000)')
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto, always, never')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns')
            [CompletionResult]::new('--instant', '--instant', [CompletionResultType]::ParameterName, 'Don''t wait between events')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the universal events as JSON lines instead')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Show only what needs attention')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Show only what needs attention')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show everything, the agent''s reasoning too')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show everything, the agent''s reasoning too')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;demo' {
            [CompletionResult]::new('--speed', '--speed', [CompletionResultType]::ParameterName, 'Play the session this many times faster (0.001 to 1000000) [default: its recorded pace, at most 15 s]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto, always, never')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns')
            [CompletionResult]::new('--fast', '--fast', [CompletionResultType]::ParameterName, 'Don''t wait between events')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the run''s events and then its receipt as JSON lines, as `runbook run --json` does')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;config' {
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Which agent to run: opencode, claude, codex')
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'The model, as the agent names it')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The model, as the agent names it')
            [CompletionResult]::new('--permissions', '--permissions', [CompletionResultType]::ParameterName, 'What the agent may do without asking')
            [CompletionResult]::new('--agent-bin', '--agent-bin', [CompletionResultType]::ParameterName, 'The agent''s binary [default: on PATH]')
            [CompletionResult]::new('--agent-cmd', '--agent-cmd', [CompletionResultType]::ParameterName, 'Run this command instead; it prints events')
            [CompletionResult]::new('--via', '--via', [CompletionResultType]::ParameterName, 'How to talk to the agent: native or acp')
            [CompletionResult]::new('--acp-cmd', '--acp-cmd', [CompletionResultType]::ParameterName, 'Run this command instead, an ACP agent')
            [CompletionResult]::new('--sandbox', '--sandbox', [CompletionResultType]::ParameterName, 'Sandbox the agent: auto, landlock, bwrap, off')
            [CompletionResult]::new('--allow-port', '--allow-port', [CompletionResultType]::ParameterName, 'Let the sandboxed agent connect to port N')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stop the run after this long')
            [CompletionResult]::new('--max-cost', '--max-cost', [CompletionResultType]::ParameterName, 'Stop once it cost this many US dollars')
            [CompletionResult]::new('--inactivity-timeout', '--inactivity-timeout', [CompletionResultType]::ParameterName, 'Stop after this long idle, or `off`')
            [CompletionResult]::new('--permission-timeout', '--permission-timeout', [CompletionResultType]::ParameterName, 'Time to answer a permission request (ACP)')
            [CompletionResult]::new('--kill-grace', '--kill-grace', [CompletionResultType]::ParameterName, 'Time between SIGTERM and SIGKILL')
            [CompletionResult]::new('--finish-grace', '--finish-grace', [CompletionResultType]::ParameterName, 'Time to exit after the final result')
            [CompletionResult]::new('--stuck', '--stuck', [CompletionResultType]::ParameterName, 'When the agent goes round in circles')
            [CompletionResult]::new('--stuck-repeat', '--stuck-repeat', [CompletionResultType]::ParameterName, 'Stop at this many same calls and results')
            [CompletionResult]::new('--stuck-same-failure', '--stuck-same-failure', [CompletionResultType]::ParameterName, 'Stop at this many same shell failures')
            [CompletionResult]::new('--stuck-same-error', '--stuck-same-error', [CompletionResultType]::ParameterName, 'Stop at this many same errors in a row')
            [CompletionResult]::new('--stuck-ping-pong', '--stuck-ping-pong', [CompletionResultType]::ParameterName, 'Stop at this many A, B, A, B cycles')
            [CompletionResult]::new('--stuck-monologue', '--stuck-monologue', [CompletionResultType]::ParameterName, 'Stop at this many empty or same steps')
            [CompletionResult]::new('--check-timeout', '--check-timeout', [CompletionResultType]::ParameterName, 'End a check that runs longer than this')
            [CompletionResult]::new('--repair-attempts', '--repair-attempts', [CompletionResultType]::ParameterName, 'Times to resume the session to fix checks')
            [CompletionResult]::new('--repair-budget', '--repair-budget', [CompletionResultType]::ParameterName, 'What repairs may spend, on top of the task')
            [CompletionResult]::new('--events-to', '--events-to', [CompletionResultType]::ParameterName, 'Write every event to this file or FIFO')
            [CompletionResult]::new('--upload', '--upload', [CompletionResultType]::ParameterName, 'Upload the run to object storage')
            [CompletionResult]::new('--cwd', '--cwd', [CompletionResultType]::ParameterName, 'The directory the agent works in')
            [CompletionResult]::new('--env-file', '--env-file', [CompletionResultType]::ParameterName, 'Read agent variables from FILE (repeatable)')
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto, always, never')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns')
            [CompletionResult]::new('--init', '--init', [CompletionResultType]::ParameterName, 'Write a starter runbook.toml in the repository root')
            [CompletionResult]::new('--keys', '--keys', [CompletionResultType]::ParameterName, 'List the keys a configuration file can set')
            [CompletionResult]::new('--wide', '--wide', [CompletionResultType]::ParameterName, 'Show every value whole, however wide [default: fit the terminal, or 80 columns]')
            [CompletionResult]::new('--plan', '--plan', [CompletionResultType]::ParameterName, 'Plan first, then execute on your approval')
            [CompletionResult]::new('--retry-denied', '--retry-denied', [CompletionResultType]::ParameterName, 'Retry once, without the refused tools')
            [CompletionResult]::new('--on-event-raw', '--on-event-raw', [CompletionResultType]::ParameterName, 'Add the agent''s own line to observer lines')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the configuration as JSON')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;doctor' {
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Which agent to run: opencode, claude, codex')
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'The model, as the agent names it')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The model, as the agent names it')
            [CompletionResult]::new('--permissions', '--permissions', [CompletionResultType]::ParameterName, 'What the agent may do without asking')
            [CompletionResult]::new('--agent-bin', '--agent-bin', [CompletionResultType]::ParameterName, 'The agent''s binary [default: on PATH]')
            [CompletionResult]::new('--agent-cmd', '--agent-cmd', [CompletionResultType]::ParameterName, 'Run this command instead; it prints events')
            [CompletionResult]::new('--via', '--via', [CompletionResultType]::ParameterName, 'How to talk to the agent: native or acp')
            [CompletionResult]::new('--acp-cmd', '--acp-cmd', [CompletionResultType]::ParameterName, 'Run this command instead, an ACP agent')
            [CompletionResult]::new('--sandbox', '--sandbox', [CompletionResultType]::ParameterName, 'Sandbox the agent: auto, landlock, bwrap, off')
            [CompletionResult]::new('--allow-port', '--allow-port', [CompletionResultType]::ParameterName, 'Let the sandboxed agent connect to port N')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stop the run after this long')
            [CompletionResult]::new('--max-cost', '--max-cost', [CompletionResultType]::ParameterName, 'Stop once it cost this many US dollars')
            [CompletionResult]::new('--inactivity-timeout', '--inactivity-timeout', [CompletionResultType]::ParameterName, 'Stop after this long idle, or `off`')
            [CompletionResult]::new('--permission-timeout', '--permission-timeout', [CompletionResultType]::ParameterName, 'Time to answer a permission request (ACP)')
            [CompletionResult]::new('--kill-grace', '--kill-grace', [CompletionResultType]::ParameterName, 'Time between SIGTERM and SIGKILL')
            [CompletionResult]::new('--finish-grace', '--finish-grace', [CompletionResultType]::ParameterName, 'Time to exit after the final result')
            [CompletionResult]::new('--stuck', '--stuck', [CompletionResultType]::ParameterName, 'When the agent goes round in circles')
            [CompletionResult]::new('--stuck-repeat', '--stuck-repeat', [CompletionResultType]::ParameterName, 'Stop at this many same calls and results')
            [CompletionResult]::new('--stuck-same-failure', '--stuck-same-failure', [CompletionResultType]::ParameterName, 'Stop at this many same shell failures')
            [CompletionResult]::new('--stuck-same-error', '--stuck-same-error', [CompletionResultType]::ParameterName, 'Stop at this many same errors in a row')
            [CompletionResult]::new('--stuck-ping-pong', '--stuck-ping-pong', [CompletionResultType]::ParameterName, 'Stop at this many A, B, A, B cycles')
            [CompletionResult]::new('--stuck-monologue', '--stuck-monologue', [CompletionResultType]::ParameterName, 'Stop at this many empty or same steps')
            [CompletionResult]::new('--check-timeout', '--check-timeout', [CompletionResultType]::ParameterName, 'End a check that runs longer than this')
            [CompletionResult]::new('--repair-attempts', '--repair-attempts', [CompletionResultType]::ParameterName, 'Times to resume the session to fix checks')
            [CompletionResult]::new('--repair-budget', '--repair-budget', [CompletionResultType]::ParameterName, 'What repairs may spend, on top of the task')
            [CompletionResult]::new('--events-to', '--events-to', [CompletionResultType]::ParameterName, 'Write every event to this file or FIFO')
            [CompletionResult]::new('--upload', '--upload', [CompletionResultType]::ParameterName, 'Upload the run to object storage')
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto, always, never')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns')
            [CompletionResult]::new('--plan', '--plan', [CompletionResultType]::ParameterName, 'Plan first, then execute on your approval')
            [CompletionResult]::new('--retry-denied', '--retry-denied', [CompletionResultType]::ParameterName, 'Retry once, without the refused tools')
            [CompletionResult]::new('--on-event-raw', '--on-event-raw', [CompletionResultType]::ParameterName, 'Add the agent''s own line to observer lines')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the findings as one JSON object')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;trust' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto, always, never')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns')
            [CompletionResult]::new('--show', '--show', [CompletionResultType]::ParameterName, 'List the trusted files and whether they changed')
            [CompletionResult]::new('--forget', '--forget', [CompletionResultType]::ParameterName, 'Forget the trust in PATH (or in the repository''s files)')
            [CompletionResult]::new('--wide', '--wide', [CompletionResultType]::ParameterName, 'With --show: every column whole, however wide [default: fit the terminal, or 80 columns]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;completions' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto, always, never')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;help' {
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Run an agent on a task and supervise it to the end')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show how a run went (the latest by default), or follow it live from another terminal')
            [CompletionResult]::new('batch', 'batch', [CompletionResultType]::ParameterValue, 'Run many tasks at once, each in a git worktree of its own, within one budget')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List runs, newest first')
            [CompletionResult]::new('stats', 'stats', [CompletionResultType]::ParameterValue, 'The numbers over all runs: outcomes, cost, tokens, durations, failing tools')
            [CompletionResult]::new('report', 'report', [CompletionResultType]::ParameterValue, 'Tell one run for a pull request, as Markdown or JSON')
            [CompletionResult]::new('fleet', 'fleet', [CompletionResultType]::ParameterValue, 'Print what a scheduler needs to run a task file''s tasks, one per index')
            [CompletionResult]::new('upload', 'upload', [CompletionResultType]::ParameterValue, 'Upload runs made earlier or offline to object storage')
            [CompletionResult]::new('replay', 'replay', [CompletionResultType]::ParameterValue, 'Show a recorded agent transcript or runbook event log as `runbook run` showed it')
            [CompletionResult]::new('demo', 'demo', [CompletionResultType]::ParameterValue, 'See runbook supervise a recorded agent session: no agent or API key needed')
            [CompletionResult]::new('config', 'config', [CompletionResultType]::ParameterValue, 'Show the configuration in effect and where each value comes from')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Check each agent: its binary, version, model and price')
            [CompletionResult]::new('trust', 'trust', [CompletionResultType]::ParameterValue, 'Trust a repository''s configuration files, so that the commands they set may run')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'runbook;help;run' {
            break
        }
        'runbook;help;status' {
            break
        }
        'runbook;help;batch' {
            [CompletionResult]::new('clean', 'clean', [CompletionResultType]::ParameterValue, 'Remove the worktrees and unchanged branches a batch left (every batch by default)')
            break
        }
        'runbook;help;batch;clean' {
            break
        }
        'runbook;help;list' {
            break
        }
        'runbook;help;stats' {
            break
        }
        'runbook;help;report' {
            break
        }
        'runbook;help;fleet' {
            break
        }
        'runbook;help;upload' {
            break
        }
        'runbook;help;replay' {
            break
        }
        'runbook;help;demo' {
            break
        }
        'runbook;help;config' {
            break
        }
        'runbook;help;doctor' {
            break
        }
        'runbook;help;trust' {
            break
        }
        'runbook;help;completions' {
            break
        }
        'runbook;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
