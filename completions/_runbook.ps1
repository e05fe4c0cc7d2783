
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
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Run an agent on a task and supervise it to the end')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show how a run went (the latest by default), or follow it live from another terminal')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List runs, newest first')
            [CompletionResult]::new('replay', 'replay', [CompletionResultType]::ParameterValue, 'Show a recorded agent transcript or runbook event log as `runbook run` showed it')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script (e.g. `runbook completions bash > ~/.local/share/bash-completion/completions/runbook`)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'runbook;run' {
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Which agent to run')
            [CompletionResult]::new('--agent-cmd', '--agent-cmd', [CompletionResultType]::ParameterName, 'Run this command instead, an agent that prints runbook''s universal events as NDJSON (docs/events.md); the prompt is its last argument. E.g. `--agent-cmd ''uvx my-agent --fast''`')
            [CompletionResult]::new('--agent-bin', '--agent-bin', [CompletionResultType]::ParameterName, 'The agent''s binary [default: from PATH; or RUNBOOK_OPENCODE_BIN, RUNBOOK_CLAUDE_BIN, RUNBOOK_CODEX_BIN]')
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'The model, as the agent names it (OpenCode: provider/model)')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The model, as the agent names it (OpenCode: provider/model)')
            [CompletionResult]::new('--permissions', '--permissions', [CompletionResultType]::ParameterName, 'What the agent may do without asking: agent (its own settings), read-only, workspace (edit files and run commands in the work dir) or bypass (everything; throwaway machines only)')
            [CompletionResult]::new('--then', '--then', [CompletionResultType]::ParameterName, 'Once the agent has finished, continue its session with this prompt, as a new turn of the same run (repeatable; stops at the first turn that does not complete)')
            [CompletionResult]::new('--max-revisions', '--max-revisions', [CompletionResultType]::ParameterName, 'How many times a plan may be revised before only execute or abort is offered')
            [CompletionResult]::new('--cwd', '--cwd', [CompletionResultType]::ParameterName, 'The directory the agent works in [default: the current one]')
            [CompletionResult]::new('--inactivity-timeout', '--inactivity-timeout', [CompletionResultType]::ParameterName, 'Stop the agent after this long without any activity (output, or CPU use of its processes)')
            [CompletionResult]::new('--kill-grace', '--kill-grace', [CompletionResultType]::ParameterName, 'How long the agent gets to exit after SIGTERM before SIGKILL')
            [CompletionResult]::new('--finish-grace', '--finish-grace', [CompletionResultType]::ParameterName, 'How long an agent that printed its final result may take to exit before it is ended (its turn still counts as completed)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stop the agent when the whole run has taken this long')
            [CompletionResult]::new('--max-cost', '--max-cost', [CompletionResultType]::ParameterName, 'Stop the agent once its reported cost crosses this many US dollars')
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour on stderr')
            [CompletionResult]::new('--plan', '--plan', [CompletionResultType]::ParameterName, 'Plan first: a read-only turn that writes a plan, your decision (execute, revise, abort), then execution in the same agent session')
            [CompletionResult]::new('--plan-only', '--plan-only', [CompletionResultType]::ParameterName, 'Stop after the plan (implies --plan): the plan goes to stdout')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Execute the plan without asking (what happens anyway without a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Execute the plan without asking (what happens anyway without a terminal)')
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
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour on stderr')
            [CompletionResult]::new('--live', '--live', [CompletionResultType]::ParameterName, 'Follow the run as it happens, then exit with its exit code')
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
            [CompletionResult]::new('--outcome', '--outcome', [CompletionResultType]::ParameterName, 'Only runs that ended so (repeatable): completed, truncated, agent_error, killed, hung, budget_exceeded, timed_out, interrupted, running, abandoned')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Only runs of this agent')
            [CompletionResult]::new('--runs-dir', '--runs-dir', [CompletionResultType]::ParameterName, 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour on stderr')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Show every run')
            [CompletionResult]::new('--here', '--here', [CompletionResultType]::ParameterName, 'Only runs started in the current directory')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'One receipt per line, as JSON')
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
            [CompletionResult]::new('--speed', '--speed', [CompletionResultType]::ParameterName, 'Play the recording this many times faster')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour on stderr')
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
        'runbook;completions' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour on stderr')
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
            [CompletionResult]::new('replay', 'replay', [CompletionResultType]::ParameterValue, 'Show a recorded agent transcript or runbook event log as `runbook run` showed it')
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
        'runbook;help;replay' {
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
