
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
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour [default: auto] [env: RUNBOOK_COLOR]')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Run an agent on a task and supervise it to the end')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show how a run went (the latest by default), or follow it live from another terminal')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List runs, newest first')
            [CompletionResult]::new('stats', 'stats', [CompletionResultType]::ParameterValue, 'The numbers over all runs (or those of the filters): outcomes, cost, tokens, durations, the tools that fail, per day, agent, model and project')
            [CompletionResult]::new('report', 'report', [CompletionResultType]::ParameterValue, 'Tell one run for a pull request: its summary, changes, checks and cost, as Markdown or JSON')
            [CompletionResult]::new('replay', 'replay', [CompletionResultType]::ParameterValue, 'Show a recorded agent transcript or runbook event log as `runbook run` showed it')
            [CompletionResult]::new('config', 'config', [CompletionResultType]::ParameterValue, 'Show the configuration in effect and where each value comes from; or write a starter runbook.toml')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Check each agent: its binary (found as `run` finds it), its version and whether runbook was tested with it, its model and whether runbook can price it, and what to do')
            [CompletionResult]::new('trust', 'trust', [CompletionResultType]::ParameterValue, 'Trust a repository''s runbook.toml, runbook.local.toml, .env and .env.local at their current content, so that the commands they set may run (a changed file needs trusting again); or list or forget trusted files')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script (e.g. `runbook completions bash > ~/.local/share/bash-completion/completions/runbook`)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'runbook;run' {
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Which agent to run [default: opencode] [env: RUNBOOK_AGENT]')
            [CompletionResult]::new('--agent-cmd', '--agent-cmd', [CompletionResultType]::ParameterName, 'Run this command instead, an agent that prints runbook''s universal events as NDJSON (docs/events.md); the prompt is its last argument. E.g. `--agent-cmd ''uvx my-agent --fast''` [env: RUNBOOK_AGENT_CMD]')
            [CompletionResult]::new('--via', '--via', [CompletionResultType]::ParameterName, 'How runbook talks to the agent: native (its own headless JSON output) or acp (the Agent Client Protocol, on the agent''s stdin and stdout: tools shown as they start, permissions asked live) [default: native] [env: RUNBOOK_VIA]')
            [CompletionResult]::new('--acp-cmd', '--acp-cmd', [CompletionResultType]::ParameterName, 'Run this command instead, an agent that speaks the Agent Client Protocol on its stdin and stdout. E.g. `--acp-cmd ''npx my-acp-agent''` [env: RUNBOOK_ACP_CMD]')
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'The model, as the agent names it (OpenCode: provider/model) [env: RUNBOOK_MODEL]')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The model, as the agent names it (OpenCode: provider/model) [env: RUNBOOK_MODEL]')
            [CompletionResult]::new('--permissions', '--permissions', [CompletionResultType]::ParameterName, 'What the agent may do without asking: agent (its own settings), read-only, workspace (edit files and run commands in the work dir) or bypass (everything; throwaway machines only) [default: agent] [env: RUNBOOK_PERMISSIONS]')
            [CompletionResult]::new('--agent-bin', '--agent-bin', [CompletionResultType]::ParameterName, 'The agent''s binary [default: the agent''s program on PATH] [env: RUNBOOK_<AGENT>_BIN]')
            [CompletionResult]::new('--inactivity-timeout', '--inactivity-timeout', [CompletionResultType]::ParameterName, 'Stop the agent after this long without any activity (output, or its processes using 20% of a core or more); at most a day, or `off` [default: 3m] [env: RUNBOOK_INACTIVITY_TIMEOUT]')
            [CompletionResult]::new('--kill-grace', '--kill-grace', [CompletionResultType]::ParameterName, 'How long the agent gets to exit after SIGTERM before SIGKILL [default: 10s] [env: RUNBOOK_KILL_GRACE]')
            [CompletionResult]::new('--finish-grace', '--finish-grace', [CompletionResultType]::ParameterName, 'How long an agent that printed its final result may take to exit before it is ended (its turn still counts as completed) [default: 5s] [env: RUNBOOK_FINISH_GRACE]')
            [CompletionResult]::new('--permission-timeout', '--permission-timeout', [CompletionResultType]::ParameterName, 'Over ACP at a terminal: how long a permission request waits for a key before it is refused [default: 5m] [env: RUNBOOK_PERMISSION_TIMEOUT]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stop the agent when the whole run has taken this long [env: RUNBOOK_TIMEOUT]')
            [CompletionResult]::new('--max-cost', '--max-cost', [CompletionResultType]::ParameterName, 'Stop the agent once its reported cost crosses this many US dollars [env: RUNBOOK_MAX_COST]')
            [CompletionResult]::new('--stuck', '--stuck', [CompletionResultType]::ParameterName, 'What to do about an agent going round in circles (the same call with the same result, the same failure after each patch, two calls in turn, empty steps): off, warn, or stop it (the run ends `stuck`, exit code 10) [default: stop] [env: RUNBOOK_STUCK]')
            [CompletionResult]::new('--stuck-repeat', '--stuck-repeat', [CompletionResultType]::ParameterName, 'Stop the agent when it makes the same call with the same result this many times in a row, with a warning two before (0: never) [default: 5] [env: RUNBOOK_STUCK_REPEAT]')
            [CompletionResult]::new('--stuck-same-failure', '--stuck-same-failure', [CompletionResultType]::ParameterName, 'Stop the agent when a shell command fails the same way this many times in a turn, whatever ran between, with a warning two before (0: never) [default: 5] [env: RUNBOOK_STUCK_SAME_FAILURE]')
            [CompletionResult]::new('--stuck-same-error', '--stuck-same-error', [CompletionResultType]::ParameterName, 'Stop the agent when the same call ends in the same error this many times in a row (0: never) [default: 3] [env: RUNBOOK_STUCK_SAME_ERROR]')
            [CompletionResult]::new('--stuck-ping-pong', '--stuck-ping-pong', [CompletionResultType]::ParameterName, 'Stop the agent after this many cycles of two calls in turn (A, B, A, B, …) with unchanged results (0: never) [default: 3] [env: RUNBOOK_STUCK_PING_PONG]')
            [CompletionResult]::new('--stuck-monologue', '--stuck-monologue', [CompletionResultType]::ParameterName, 'Stop the agent after this many steps in a row without a tool call whose text is empty or the same (0: never) [default: 3] [env: RUNBOOK_STUCK_MONOLOGUE]')
            [CompletionResult]::new('--check-timeout', '--check-timeout', [CompletionResultType]::ParameterName, 'End a check that runs longer than this, with its whole tree (unless the check sets its own) [default: 30m] [env: RUNBOOK_CHECK_TIMEOUT]')
            [CompletionResult]::new('--repair-attempts', '--repair-attempts', [CompletionResultType]::ParameterName, 'When checks fail after a completed task, resume the same session this many times to fix them, running the checks again after each (0: never) [default: 2] [env: RUNBOOK_REPAIR_ATTEMPTS]')
            [CompletionResult]::new('--repair-budget', '--repair-budget', [CompletionResultType]::ParameterName, 'What repair attempts and the pass after a permission stall may spend together, on top of the task [default with --max-cost B: the larger of 0.2 × B and $1; without: no cap] [env: RUNBOOK_REPAIR_BUDGET]')
            [CompletionResult]::new('--events-to', '--events-to', [CompletionResultType]::ParameterName, 'Append every event as a JSON line to this file, or write it to this FIFO without ever waiting for its reader [env: RUNBOOK_EVENTS_TO]')
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]')
            [CompletionResult]::new('--then', '--then', [CompletionResultType]::ParameterName, 'Once the agent has finished, continue its session with this prompt, as a new turn of the same run (repeatable; stops at the first turn that does not complete)')
            [CompletionResult]::new('--on-event', '--on-event', [CompletionResultType]::ParameterName, 'Start this command once for the run and write every event to its stdin as a JSON line, with `meta` (run id and name, agent, turn index and kind); best-effort: an observer that falls behind misses events, it never slows the run (repeatable; after those of `[[observers]]` in runbook.toml). E.g. `--on-event ''jq -c "select(.type==\"tool.completed\")" >> tools.log''`')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'A name for the run, in its record and in every observer line''s `meta` [default: the run id]')
            [CompletionResult]::new('--check', '--check', [CompletionResultType]::ParameterName, 'Once the task completed, run this project check in the agent''s working directory (`sh -c`, repeatable, in the order given, after those of `[checks]` in runbook.toml; one of the same name replaces it): the run completes only if every check passes, else it ends `checks_failed`. E.g. `--check test=''cargo test''`')
            [CompletionResult]::new('--max-revisions', '--max-revisions', [CompletionResultType]::ParameterName, 'How many times a plan may be revised before only execute or abort is offered')
            [CompletionResult]::new('--cwd', '--cwd', [CompletionResultType]::ParameterName, 'The directory the agent works in, and where runbook.toml is looked for [default: the current one]')
            [CompletionResult]::new('--env-file', '--env-file', [CompletionResultType]::ParameterName, 'Set the agent''s variables from FILE, over .env, .env.local and the shell (repeatable: the last one wins)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour [default: auto] [env: RUNBOOK_COLOR]')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]')
            [CompletionResult]::new('--plan', '--plan', [CompletionResultType]::ParameterName, 'Plan first: a read-only turn that writes a plan, your decision (execute, revise, abort), then execution in the same agent session [default: false] [env: RUNBOOK_PLAN]')
            [CompletionResult]::new('--retry-denied', '--retry-denied', [CompletionResultType]::ParameterName, 'When the agent stalls because its tools were refused permission, give its session one more pass that names what was refused and asks it to reach the goal without them (or to say what it needs) [default: false] [env: RUNBOOK_RETRY_DENIED]')
            [CompletionResult]::new('--on-event-raw', '--on-event-raw', [CompletionResultType]::ParameterName, 'Each line to an `--on-event` observer also holds `raw`, the agent''s own line the event came from [default: false] [env: RUNBOOK_ON_EVENT_RAW]')
            [CompletionResult]::new('--summary', '--summary', [CompletionResultType]::ParameterName, 'Once the work is done, ask the same session for a 2–4 sentence summary of it, as one more turn (its cost counts); without it the summary is the agent''s final message, trimmed')
            [CompletionResult]::new('--no-checks', '--no-checks', [CompletionResultType]::ParameterName, 'Run no checks, neither `--check` nor `[checks]` in runbook.toml')
            [CompletionResult]::new('--plan-only', '--plan-only', [CompletionResultType]::ParameterName, 'Stop after the plan (implies --plan): the plan goes to stdout')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Execute the plan without asking (what happens anyway without a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Execute the plan without asking (what happens anyway without a terminal)')
            [CompletionResult]::new('--trust', '--trust', [CompletionResultType]::ParameterName, 'Trust this repository''s runbook.toml, runbook.local.toml, .env and .env.local as they are, for this run only, without asking (for CI; `runbook trust` records trust). Or set RUNBOOK_TRUST to the files (or directories) to trust, separated by `:`')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print every event as a JSON line on stdout, then the receipt; nothing else on stdout')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Show only what needs attention: failures, denials, warnings and the summary')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Show only what needs attention: failures, denials, warnings and the summary')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show everything: all of the agent''s text, reasoning, steps and the command line')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show everything: all of the agent''s text, reasoning, steps and the command line')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;status' {
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour [default: auto] [env: RUNBOOK_COLOR]')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]')
            [CompletionResult]::new('--live', '--live', [CompletionResultType]::ParameterName, 'Follow the run as it happens, then exit with its exit code')
            [CompletionResult]::new('--next', '--next', [CompletionResultType]::ParameterName, 'Wait for the next run to start, then follow it live (implies --live)')
            [CompletionResult]::new('--here', '--here', [CompletionResultType]::ParameterName, 'Only runs started in the current directory: the latest of them, or with --next the next one')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the receipt as JSON (with --live: every event as a JSON line, then the receipt)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Show only what needs attention: failures, denials, warnings and the summary')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Show only what needs attention: failures, denials, warnings and the summary')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show everything: all of the agent''s text, reasoning, steps and the command line')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show everything: all of the agent''s text, reasoning, steps and the command line')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;list' {
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Show at most this many runs')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Show at most this many runs')
            [CompletionResult]::new('--outcome', '--outcome', [CompletionResultType]::ParameterName, 'Only runs that ended so (repeatable): completed, truncated, agent_error, killed, hung, budget_exceeded, timed_out, interrupted, aborted, checks_failed, storage_error, running, abandoned')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Only runs of this agent')
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour [default: auto] [env: RUNBOOK_COLOR]')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Show every run')
            [CompletionResult]::new('--here', '--here', [CompletionResultType]::ParameterName, 'Only runs started in the current directory')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'One receipt per line, as JSON')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;stats' {
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Only runs started since then: a time ago (`7d`, `12h`) or a date (`2026-11-01`)')
            [CompletionResult]::new('--until', '--until', [CompletionResultType]::ParameterName, 'Only runs started before then: a time ago or a date')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Only runs of this agent (repeatable)')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'Only runs of this model, as the agent names it (repeatable)')
            [CompletionResult]::new('--project', '--project', [CompletionResultType]::ParameterName, 'Only runs of this project: the git root of the directory they ran in')
            [CompletionResult]::new('--outcome', '--outcome', [CompletionResultType]::ParameterName, 'Only runs that ended so (repeatable)')
            [CompletionResult]::new('--html', '--html', [CompletionResultType]::ParameterName, 'Write the numbers as one self-contained HTML page of charts and tables to this file')
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour [default: auto] [env: RUNBOOK_COLOR]')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the numbers as JSON (docs/stats.schema.json)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;report' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'How to tell it')
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour [default: auto] [env: RUNBOOK_COLOR]')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;replay' {
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Read the file as this agent''s native output [default: detected from its content; a runbook events.ndjson is always recognised]')
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'The model the recording used, for estimating costs the agent did not report (Codex)')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The model the recording used, for estimating costs the agent did not report (Codex)')
            [CompletionResult]::new('--speed', '--speed', [CompletionResultType]::ParameterName, 'Play the recording this many times faster (0.001 to 1000000)')
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour [default: auto] [env: RUNBOOK_COLOR]')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]')
            [CompletionResult]::new('--instant', '--instant', [CompletionResultType]::ParameterName, 'Don''t wait between events')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the universal events as JSON lines instead')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Show only what needs attention: failures, denials, warnings and the summary')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Show only what needs attention: failures, denials, warnings and the summary')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show everything: all of the agent''s text, reasoning, steps and the command line')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show everything: all of the agent''s text, reasoning, steps and the command line')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;config' {
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Which agent to run [default: opencode] [env: RUNBOOK_AGENT]')
            [CompletionResult]::new('--agent-cmd', '--agent-cmd', [CompletionResultType]::ParameterName, 'Run this command instead, an agent that prints runbook''s universal events as NDJSON (docs/events.md); the prompt is its last argument. E.g. `--agent-cmd ''uvx my-agent --fast''` [env: RUNBOOK_AGENT_CMD]')
            [CompletionResult]::new('--via', '--via', [CompletionResultType]::ParameterName, 'How runbook talks to the agent: native (its own headless JSON output) or acp (the Agent Client Protocol, on the agent''s stdin and stdout: tools shown as they start, permissions asked live) [default: native] [env: RUNBOOK_VIA]')
            [CompletionResult]::new('--acp-cmd', '--acp-cmd', [CompletionResultType]::ParameterName, 'Run this command instead, an agent that speaks the Agent Client Protocol on its stdin and stdout. E.g. `--acp-cmd ''npx my-acp-agent''` [env: RUNBOOK_ACP_CMD]')
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'The model, as the agent names it (OpenCode: provider/model) [env: RUNBOOK_MODEL]')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The model, as the agent names it (OpenCode: provider/model) [env: RUNBOOK_MODEL]')
            [CompletionResult]::new('--permissions', '--permissions', [CompletionResultType]::ParameterName, 'What the agent may do without asking: agent (its own settings), read-only, workspace (edit files and run commands in the work dir) or bypass (everything; throwaway machines only) [default: agent] [env: RUNBOOK_PERMISSIONS]')
            [CompletionResult]::new('--agent-bin', '--agent-bin', [CompletionResultType]::ParameterName, 'The agent''s binary [default: the agent''s program on PATH] [env: RUNBOOK_<AGENT>_BIN]')
            [CompletionResult]::new('--inactivity-timeout', '--inactivity-timeout', [CompletionResultType]::ParameterName, 'Stop the agent after this long without any activity (output, or its processes using 20% of a core or more); at most a day, or `off` [default: 3m] [env: RUNBOOK_INACTIVITY_TIMEOUT]')
            [CompletionResult]::new('--kill-grace', '--kill-grace', [CompletionResultType]::ParameterName, 'How long the agent gets to exit after SIGTERM before SIGKILL [default: 10s] [env: RUNBOOK_KILL_GRACE]')
            [CompletionResult]::new('--finish-grace', '--finish-grace', [CompletionResultType]::ParameterName, 'How long an agent that printed its final result may take to exit before it is ended (its turn still counts as completed) [default: 5s] [env: RUNBOOK_FINISH_GRACE]')
            [CompletionResult]::new('--permission-timeout', '--permission-timeout', [CompletionResultType]::ParameterName, 'Over ACP at a terminal: how long a permission request waits for a key before it is refused [default: 5m] [env: RUNBOOK_PERMISSION_TIMEOUT]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stop the agent when the whole run has taken this long [env: RUNBOOK_TIMEOUT]')
            [CompletionResult]::new('--max-cost', '--max-cost', [CompletionResultType]::ParameterName, 'Stop the agent once its reported cost crosses this many US dollars [env: RUNBOOK_MAX_COST]')
            [CompletionResult]::new('--stuck', '--stuck', [CompletionResultType]::ParameterName, 'What to do about an agent going round in circles (the same call with the same result, the same failure after each patch, two calls in turn, empty steps): off, warn, or stop it (the run ends `stuck`, exit code 10) [default: stop] [env: RUNBOOK_STUCK]')
            [CompletionResult]::new('--stuck-repeat', '--stuck-repeat', [CompletionResultType]::ParameterName, 'Stop the agent when it makes the same call with the same result this many times in a row, with a warning two before (0: never) [default: 5] [env: RUNBOOK_STUCK_REPEAT]')
            [CompletionResult]::new('--stuck-same-failure', '--stuck-same-failure', [CompletionResultType]::ParameterName, 'Stop the agent when a shell command fails the same way this many times in a turn, whatever ran between, with a warning two before (0: never) [default: 5] [env: RUNBOOK_STUCK_SAME_FAILURE]')
            [CompletionResult]::new('--stuck-same-error', '--stuck-same-error', [CompletionResultType]::ParameterName, 'Stop the agent when the same call ends in the same error this many times in a row (0: never) [default: 3] [env: RUNBOOK_STUCK_SAME_ERROR]')
            [CompletionResult]::new('--stuck-ping-pong', '--stuck-ping-pong', [CompletionResultType]::ParameterName, 'Stop the agent after this many cycles of two calls in turn (A, B, A, B, …) with unchanged results (0: never) [default: 3] [env: RUNBOOK_STUCK_PING_PONG]')
            [CompletionResult]::new('--stuck-monologue', '--stuck-monologue', [CompletionResultType]::ParameterName, 'Stop the agent after this many steps in a row without a tool call whose text is empty or the same (0: never) [default: 3] [env: RUNBOOK_STUCK_MONOLOGUE]')
            [CompletionResult]::new('--check-timeout', '--check-timeout', [CompletionResultType]::ParameterName, 'End a check that runs longer than this, with its whole tree (unless the check sets its own) [default: 30m] [env: RUNBOOK_CHECK_TIMEOUT]')
            [CompletionResult]::new('--repair-attempts', '--repair-attempts', [CompletionResultType]::ParameterName, 'When checks fail after a completed task, resume the same session this many times to fix them, running the checks again after each (0: never) [default: 2] [env: RUNBOOK_REPAIR_ATTEMPTS]')
            [CompletionResult]::new('--repair-budget', '--repair-budget', [CompletionResultType]::ParameterName, 'What repair attempts and the pass after a permission stall may spend together, on top of the task [default with --max-cost B: the larger of 0.2 × B and $1; without: no cap] [env: RUNBOOK_REPAIR_BUDGET]')
            [CompletionResult]::new('--events-to', '--events-to', [CompletionResultType]::ParameterName, 'Append every event as a JSON line to this file, or write it to this FIFO without ever waiting for its reader [env: RUNBOOK_EVENTS_TO]')
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]')
            [CompletionResult]::new('--cwd', '--cwd', [CompletionResultType]::ParameterName, 'The directory the agent works in, and where runbook.toml is looked for [default: the current one]')
            [CompletionResult]::new('--env-file', '--env-file', [CompletionResultType]::ParameterName, 'Set the agent''s variables from FILE, over .env, .env.local and the shell (repeatable: the last one wins)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour [default: auto] [env: RUNBOOK_COLOR]')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]')
            [CompletionResult]::new('--init', '--init', [CompletionResultType]::ParameterName, 'Write a commented runbook.toml in the repository root (never over an existing one)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the configuration as JSON')
            [CompletionResult]::new('--plan', '--plan', [CompletionResultType]::ParameterName, 'Plan first: a read-only turn that writes a plan, your decision (execute, revise, abort), then execution in the same agent session [default: false] [env: RUNBOOK_PLAN]')
            [CompletionResult]::new('--retry-denied', '--retry-denied', [CompletionResultType]::ParameterName, 'When the agent stalls because its tools were refused permission, give its session one more pass that names what was refused and asks it to reach the goal without them (or to say what it needs) [default: false] [env: RUNBOOK_RETRY_DENIED]')
            [CompletionResult]::new('--on-event-raw', '--on-event-raw', [CompletionResultType]::ParameterName, 'Each line to an `--on-event` observer also holds `raw`, the agent''s own line the event came from [default: false] [env: RUNBOOK_ON_EVENT_RAW]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;doctor' {
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Which agent to run [default: opencode] [env: RUNBOOK_AGENT]')
            [CompletionResult]::new('--agent-cmd', '--agent-cmd', [CompletionResultType]::ParameterName, 'Run this command instead, an agent that prints runbook''s universal events as NDJSON (docs/events.md); the prompt is its last argument. E.g. `--agent-cmd ''uvx my-agent --fast''` [env: RUNBOOK_AGENT_CMD]')
            [CompletionResult]::new('--via', '--via', [CompletionResultType]::ParameterName, 'How runbook talks to the agent: native (its own headless JSON output) or acp (the Agent Client Protocol, on the agent''s stdin and stdout: tools shown as they start, permissions asked live) [default: native] [env: RUNBOOK_VIA]')
            [CompletionResult]::new('--acp-cmd', '--acp-cmd', [CompletionResultType]::ParameterName, 'Run this command instead, an agent that speaks the Agent Client Protocol on its stdin and stdout. E.g. `--acp-cmd ''npx my-acp-agent''` [env: RUNBOOK_ACP_CMD]')
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'The model, as the agent names it (OpenCode: provider/model) [env: RUNBOOK_MODEL]')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The model, as the agent names it (OpenCode: provider/model) [env: RUNBOOK_MODEL]')
            [CompletionResult]::new('--permissions', '--permissions', [CompletionResultType]::ParameterName, 'What the agent may do without asking: agent (its own settings), read-only, workspace (edit files and run commands in the work dir) or bypass (everything; throwaway machines only) [default: agent] [env: RUNBOOK_PERMISSIONS]')
            [CompletionResult]::new('--agent-bin', '--agent-bin', [CompletionResultType]::ParameterName, 'The agent''s binary [default: the agent''s program on PATH] [env: RUNBOOK_<AGENT>_BIN]')
            [CompletionResult]::new('--inactivity-timeout', '--inactivity-timeout', [CompletionResultType]::ParameterName, 'Stop the agent after this long without any activity (output, or its processes using 20% of a core or more); at most a day, or `off` [default: 3m] [env: RUNBOOK_INACTIVITY_TIMEOUT]')
            [CompletionResult]::new('--kill-grace', '--kill-grace', [CompletionResultType]::ParameterName, 'How long the agent gets to exit after SIGTERM before SIGKILL [default: 10s] [env: RUNBOOK_KILL_GRACE]')
            [CompletionResult]::new('--finish-grace', '--finish-grace', [CompletionResultType]::ParameterName, 'How long an agent that printed its final result may take to exit before it is ended (its turn still counts as completed) [default: 5s] [env: RUNBOOK_FINISH_GRACE]')
            [CompletionResult]::new('--permission-timeout', '--permission-timeout', [CompletionResultType]::ParameterName, 'Over ACP at a terminal: how long a permission request waits for a key before it is refused [default: 5m] [env: RUNBOOK_PERMISSION_TIMEOUT]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stop the agent when the whole run has taken this long [env: RUNBOOK_TIMEOUT]')
            [CompletionResult]::new('--max-cost', '--max-cost', [CompletionResultType]::ParameterName, 'Stop the agent once its reported cost crosses this many US dollars [env: RUNBOOK_MAX_COST]')
            [CompletionResult]::new('--stuck', '--stuck', [CompletionResultType]::ParameterName, 'What to do about an agent going round in circles (the same call with the same result, the same failure after each patch, two calls in turn, empty steps): off, warn, or stop it (the run ends `stuck`, exit code 10) [default: stop] [env: RUNBOOK_STUCK]')
            [CompletionResult]::new('--stuck-repeat', '--stuck-repeat', [CompletionResultType]::ParameterName, 'Stop the agent when it makes the same call with the same result this many times in a row, with a warning two before (0: never) [default: 5] [env: RUNBOOK_STUCK_REPEAT]')
            [CompletionResult]::new('--stuck-same-failure', '--stuck-same-failure', [CompletionResultType]::ParameterName, 'Stop the agent when a shell command fails the same way this many times in a turn, whatever ran between, with a warning two before (0: never) [default: 5] [env: RUNBOOK_STUCK_SAME_FAILURE]')
            [CompletionResult]::new('--stuck-same-error', '--stuck-same-error', [CompletionResultType]::ParameterName, 'Stop the agent when the same call ends in the same error this many times in a row (0: never) [default: 3] [env: RUNBOOK_STUCK_SAME_ERROR]')
            [CompletionResult]::new('--stuck-ping-pong', '--stuck-ping-pong', [CompletionResultType]::ParameterName, 'Stop the agent after this many cycles of two calls in turn (A, B, A, B, …) with unchanged results (0: never) [default: 3] [env: RUNBOOK_STUCK_PING_PONG]')
            [CompletionResult]::new('--stuck-monologue', '--stuck-monologue', [CompletionResultType]::ParameterName, 'Stop the agent after this many steps in a row without a tool call whose text is empty or the same (0: never) [default: 3] [env: RUNBOOK_STUCK_MONOLOGUE]')
            [CompletionResult]::new('--check-timeout', '--check-timeout', [CompletionResultType]::ParameterName, 'End a check that runs longer than this, with its whole tree (unless the check sets its own) [default: 30m] [env: RUNBOOK_CHECK_TIMEOUT]')
            [CompletionResult]::new('--repair-attempts', '--repair-attempts', [CompletionResultType]::ParameterName, 'When checks fail after a completed task, resume the same session this many times to fix them, running the checks again after each (0: never) [default: 2] [env: RUNBOOK_REPAIR_ATTEMPTS]')
            [CompletionResult]::new('--repair-budget', '--repair-budget', [CompletionResultType]::ParameterName, 'What repair attempts and the pass after a permission stall may spend together, on top of the task [default with --max-cost B: the larger of 0.2 × B and $1; without: no cap] [env: RUNBOOK_REPAIR_BUDGET]')
            [CompletionResult]::new('--events-to', '--events-to', [CompletionResultType]::ParameterName, 'Append every event as a JSON line to this file, or write it to this FIFO without ever waiting for its reader [env: RUNBOOK_EVENTS_TO]')
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour [default: auto] [env: RUNBOOK_COLOR]')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the findings as one JSON object: `ok`, and per agent `agent`, `default`, `binary`, `version`, `tested`, `tested_versions`, `model`, `model_from`, `price`, `problems`')
            [CompletionResult]::new('--plan', '--plan', [CompletionResultType]::ParameterName, 'Plan first: a read-only turn that writes a plan, your decision (execute, revise, abort), then execution in the same agent session [default: false] [env: RUNBOOK_PLAN]')
            [CompletionResult]::new('--retry-denied', '--retry-denied', [CompletionResultType]::ParameterName, 'When the agent stalls because its tools were refused permission, give its session one more pass that names what was refused and asks it to reach the goal without them (or to say what it needs) [default: false] [env: RUNBOOK_RETRY_DENIED]')
            [CompletionResult]::new('--on-event-raw', '--on-event-raw', [CompletionResultType]::ParameterName, 'Each line to an `--on-event` observer also holds `raw`, the agent''s own line the event came from [default: false] [env: RUNBOOK_ON_EVENT_RAW]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;trust' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour [default: auto] [env: RUNBOOK_COLOR]')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]')
            [CompletionResult]::new('--show', '--show', [CompletionResultType]::ParameterName, 'List the trusted files and whether each still has the content that was trusted')
            [CompletionResult]::new('--forget', '--forget', [CompletionResultType]::ParameterName, 'Forget the trust in PATH (or in the repository''s files)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;completions' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour [default: auto] [env: RUNBOOK_COLOR]')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'runbook;help' {
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Run an agent on a task and supervise it to the end')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show how a run went (the latest by default), or follow it live from another terminal')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List runs, newest first')
            [CompletionResult]::new('stats', 'stats', [CompletionResultType]::ParameterValue, 'The numbers over all runs (or those of the filters): outcomes, cost, tokens, durations, the tools that fail, per day, agent, model and project')
            [CompletionResult]::new('report', 'report', [CompletionResultType]::ParameterValue, 'Tell one run for a pull request: its summary, changes, checks and cost, as Markdown or JSON')
            [CompletionResult]::new('replay', 'replay', [CompletionResultType]::ParameterValue, 'Show a recorded agent transcript or runbook event log as `runbook run` showed it')
            [CompletionResult]::new('config', 'config', [CompletionResultType]::ParameterValue, 'Show the configuration in effect and where each value comes from; or write a starter runbook.toml')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Check each agent: its binary (found as `run` finds it), its version and whether runbook was tested with it, its model and whether runbook can price it, and what to do')
            [CompletionResult]::new('trust', 'trust', [CompletionResultType]::ParameterValue, 'Trust a repository''s runbook.toml, runbook.local.toml, .env and .env.local at their current content, so that the commands they set may run (a changed file needs trusting again); or list or forget trusted files')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script (e.g. `runbook completions bash > ~/.local/share/bash-completion/completions/runbook`)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'runbook;help;run' {
            break
        }
        'runbook;help;status' {
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
        'runbook;help;replay' {
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
