# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_runbook_global_optspecs
    string join \n color= width= h/help V/version
end

function __fish_runbook_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_runbook_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_runbook_using_subcommand
    set -l cmd (__fish_runbook_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c runbook -n "__fish_runbook_needs_command" -l color -d 'When to use colour [default: auto] [env: RUNBOOK_COLOR]' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_needs_command" -l width -d 'Lay the view out for this many columns [default: $COLUMNS, else the terminal\'s width]' -r
complete -c runbook -n "__fish_runbook_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_needs_command" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "run" -d 'Run an agent on a task and supervise it to the end'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "status" -d 'Show how a run went (the latest by default), or follow it live from another terminal'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "list" -d 'List runs, newest first'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "stats" -d 'The numbers over all runs (or those of the filters): outcomes, cost, tokens, durations, the tools that fail, per day, agent, model and project'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "report" -d 'Tell one run for a pull request: its summary, changes, checks and cost, as Markdown or JSON'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "replay" -d 'Show a recorded agent transcript or runbook event log as `runbook run` showed it'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "config" -d 'Show the configuration in effect and where each value comes from; or write a starter runbook.toml'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "doctor" -d 'Check each agent: its binary (found as `run` finds it), its version and whether runbook was tested with it, its model and whether runbook can price it, and what to do'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "trust" -d 'Trust a repository\'s runbook.toml, runbook.local.toml, .env and .env.local at their current content, so that the commands they set may run (a changed file needs trusting again); or list or forget trusted files'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "completions" -d 'Print a shell completion script (e.g. `runbook completions bash > ~/.local/share/bash-completion/completions/runbook`)'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c runbook -n "__fish_runbook_using_subcommand run" -l agent -d 'Which agent to run [default: opencode] [env: RUNBOOK_AGENT]' -r -f -a "opencode\t'OpenCode (`opencode run --format json`)'
claude\t'Claude Code (`claude -p --output-format stream-json`)'
codex\t'Codex (`codex exec --json`)'"
complete -c runbook -n "__fish_runbook_using_subcommand run" -l agent-cmd -d 'Run this command instead, an agent that prints runbook\'s universal events as NDJSON (docs/events.md); the prompt is its last argument. E.g. `--agent-cmd \'uvx my-agent --fast\'` [env: RUNBOOK_AGENT_CMD]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l via -d 'How runbook talks to the agent: native (its own headless JSON output) or acp (the Agent Client Protocol, on the agent\'s stdin and stdout: tools shown as they start, permissions asked live) [default: native] [env: RUNBOOK_VIA]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l acp-cmd -d 'Run this command instead, an agent that speaks the Agent Client Protocol on its stdin and stdout. E.g. `--acp-cmd \'npx my-acp-agent\'` [env: RUNBOOK_ACP_CMD]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -s m -l model -d 'The model, as the agent names it (OpenCode: provider/model) [env: RUNBOOK_MODEL]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l permissions -d 'What the agent may do without asking: agent (its own settings), read-only, workspace (edit files and run commands in the work dir) or bypass (everything; throwaway machines only) [default: agent] [env: RUNBOOK_PERMISSIONS]' -r -f -a "agent\t'Whatever the agent\'s own configuration says (nothing is passed)'
read-only\t'Look, don\'t touch: no edits, no commands that change anything'
workspace\t'Edit files and run commands inside the work dir'
bypass\t'Everything, without asking. Only for a throwaway machine or container'"
complete -c runbook -n "__fish_runbook_using_subcommand run" -l agent-bin -d 'The agent\'s binary [default: the agent\'s program on PATH] [env: RUNBOOK_<AGENT>_BIN]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l inactivity-timeout -d 'Stop the agent after this long without any activity (output, or its processes using 20% of a core or more); at most a day, or `off` [default: 3m] [env: RUNBOOK_INACTIVITY_TIMEOUT]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l kill-grace -d 'How long the agent gets to exit after SIGTERM before SIGKILL [default: 10s] [env: RUNBOOK_KILL_GRACE]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l finish-grace -d 'How long an agent that printed its final result may take to exit before it is ended (its turn still counts as completed) [default: 5s] [env: RUNBOOK_FINISH_GRACE]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l permission-timeout -d 'Over ACP at a terminal: how long a permission request waits for a key before it is refused [default: 5m] [env: RUNBOOK_PERMISSION_TIMEOUT]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l timeout -d 'Stop the agent when the whole run has taken this long [env: RUNBOOK_TIMEOUT]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l max-cost -d 'Stop the agent once its reported cost crosses this many US dollars [env: RUNBOOK_MAX_COST]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l stuck -d 'What to do about an agent going round in circles (the same call with the same result, the same failure after each patch, two calls in turn, empty steps): off, warn, or stop it (the run ends `stuck`, exit code 10) [default: stop] [env: RUNBOOK_STUCK]' -r -f -a "off\t'Nothing: no rule is looked at'
warn\t'Warn, and let the agent go on'
stop\t'Warn, then stop the agent at a rule\'s stop threshold (the run ends `stuck`)'"
complete -c runbook -n "__fish_runbook_using_subcommand run" -l stuck-repeat -d 'Stop the agent when it makes the same call with the same result this many times in a row, with a warning two before (0: never) [default: 5] [env: RUNBOOK_STUCK_REPEAT]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l stuck-same-failure -d 'Stop the agent when a shell command fails the same way this many times in a turn, whatever ran between, with a warning two before (0: never) [default: 5] [env: RUNBOOK_STUCK_SAME_FAILURE]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l stuck-same-error -d 'Stop the agent when the same call ends in the same error this many times in a row (0: never) [default: 3] [env: RUNBOOK_STUCK_SAME_ERROR]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l stuck-ping-pong -d 'Stop the agent after this many cycles of two calls in turn (A, B, A, B, …) with unchanged results (0: never) [default: 3] [env: RUNBOOK_STUCK_PING_PONG]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l stuck-monologue -d 'Stop the agent after this many steps in a row without a tool call whose text is empty or the same (0: never) [default: 3] [env: RUNBOOK_STUCK_MONOLOGUE]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l check-timeout -d 'End a check that runs longer than this, with its whole tree (unless the check sets its own) [default: 30m] [env: RUNBOOK_CHECK_TIMEOUT]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l repair-attempts -d 'When checks fail after a completed task, resume the same session this many times to fix them, running the checks again after each (0: never) [default: 2] [env: RUNBOOK_REPAIR_ATTEMPTS]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l repair-budget -d 'What repair attempts and the pass after a permission stall may spend together, on top of the task [default with --max-cost B: the larger of 0.2 × B and $1; without: no cap] [env: RUNBOOK_REPAIR_BUDGET]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l events-to -d 'Append every event as a JSON line to this file, or write it to this FIFO without ever waiting for its reader [env: RUNBOOK_EVENTS_TO]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l runs-dir -d 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l then -d 'Once the agent has finished, continue its session with this prompt, as a new turn of the same run (repeatable; stops at the first turn that does not complete)' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l on-event -d 'Start this command once for the run and write every event to its stdin as a JSON line, with `meta` (run id and name, agent, turn index and kind); best-effort: an observer that falls behind misses events, it never slows the run (repeatable; after those of `[[observers]]` in runbook.toml). E.g. `--on-event \'jq -c "select(.type==\\"tool.completed\\")" >> tools.log\'`' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l name -d 'A name for the run, in its record and in every observer line\'s `meta` [default: the run id]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l check -d 'Once the task completed, run this project check in the agent\'s working directory (`sh -c`, repeatable, in the order given, after those of `[checks]` in runbook.toml; one of the same name replaces it): the run completes only if every check passes, else it ends `checks_failed`. E.g. `--check test=\'cargo test\'`' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l max-revisions -d 'How many times a plan may be revised before only execute or abort is offered' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l cwd -d 'The directory the agent works in, and where runbook.toml is looked for [default: the current one]' -r -F
complete -c runbook -n "__fish_runbook_using_subcommand run" -l env-file -d 'Set the agent\'s variables from FILE, over .env, .env.local and the shell (repeatable: the last one wins)' -r -F
complete -c runbook -n "__fish_runbook_using_subcommand run" -l color -d 'When to use colour [default: auto] [env: RUNBOOK_COLOR]' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand run" -l width -d 'Lay the view out for this many columns [default: $COLUMNS, else the terminal\'s width]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l plan -d 'Plan first: a read-only turn that writes a plan, your decision (execute, revise, abort), then execution in the same agent session [default: false] [env: RUNBOOK_PLAN]'
complete -c runbook -n "__fish_runbook_using_subcommand run" -l retry-denied -d 'When the agent stalls because its tools were refused permission, give its session one more pass that names what was refused and asks it to reach the goal without them (or to say what it needs) [default: false] [env: RUNBOOK_RETRY_DENIED]'
complete -c runbook -n "__fish_runbook_using_subcommand run" -l on-event-raw -d 'Each line to an `--on-event` observer also holds `raw`, the agent\'s own line the event came from [default: false] [env: RUNBOOK_ON_EVENT_RAW]'
complete -c runbook -n "__fish_runbook_using_subcommand run" -l summary -d 'Once the work is done, ask the same session for a 2–4 sentence summary of it, as one more turn (its cost counts); without it the summary is the agent\'s final message, trimmed'
complete -c runbook -n "__fish_runbook_using_subcommand run" -l no-checks -d 'Run no checks, neither `--check` nor `[checks]` in runbook.toml'
complete -c runbook -n "__fish_runbook_using_subcommand run" -l plan-only -d 'Stop after the plan (implies --plan): the plan goes to stdout'
complete -c runbook -n "__fish_runbook_using_subcommand run" -s y -l yes -d 'Execute the plan without asking (what happens anyway without a terminal)'
complete -c runbook -n "__fish_runbook_using_subcommand run" -l trust -d 'Trust this repository\'s runbook.toml, runbook.local.toml, .env and .env.local as they are, for this run only, without asking (for CI; `runbook trust` records trust). Or set RUNBOOK_TRUST to the files (or directories) to trust, separated by `:`'
complete -c runbook -n "__fish_runbook_using_subcommand run" -l json -d 'Print every event as a JSON line on stdout, then the receipt; nothing else on stdout'
complete -c runbook -n "__fish_runbook_using_subcommand run" -s q -l quiet -d 'Show only what needs attention: failures, denials, warnings and the summary'
complete -c runbook -n "__fish_runbook_using_subcommand run" -s v -l verbose -d 'Show everything: all of the agent\'s text, reasoning, steps and the command line'
complete -c runbook -n "__fish_runbook_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand run" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand status" -l runs-dir -d 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]' -r
complete -c runbook -n "__fish_runbook_using_subcommand status" -l color -d 'When to use colour [default: auto] [env: RUNBOOK_COLOR]' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand status" -l width -d 'Lay the view out for this many columns [default: $COLUMNS, else the terminal\'s width]' -r
complete -c runbook -n "__fish_runbook_using_subcommand status" -l live -d 'Follow the run as it happens, then exit with its exit code'
complete -c runbook -n "__fish_runbook_using_subcommand status" -l next -d 'Wait for the next run to start, then follow it live (implies --live)'
complete -c runbook -n "__fish_runbook_using_subcommand status" -l here -d 'Only runs started in the current directory: the latest of them, or with --next the next one'
complete -c runbook -n "__fish_runbook_using_subcommand status" -l json -d 'Print the receipt as JSON (with --live: every event as a JSON line, then the receipt)'
complete -c runbook -n "__fish_runbook_using_subcommand status" -s q -l quiet -d 'Show only what needs attention: failures, denials, warnings and the summary'
complete -c runbook -n "__fish_runbook_using_subcommand status" -s v -l verbose -d 'Show everything: all of the agent\'s text, reasoning, steps and the command line'
complete -c runbook -n "__fish_runbook_using_subcommand status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand status" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand list" -s n -l limit -d 'Show at most this many runs' -r
complete -c runbook -n "__fish_runbook_using_subcommand list" -l outcome -d 'Only runs that ended so (repeatable): completed, truncated, agent_error, killed, hung, budget_exceeded, timed_out, interrupted, aborted, checks_failed, storage_error, running, abandoned' -r
complete -c runbook -n "__fish_runbook_using_subcommand list" -l agent -d 'Only runs of this agent' -r
complete -c runbook -n "__fish_runbook_using_subcommand list" -l runs-dir -d 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]' -r
complete -c runbook -n "__fish_runbook_using_subcommand list" -l color -d 'When to use colour [default: auto] [env: RUNBOOK_COLOR]' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand list" -l width -d 'Lay the view out for this many columns [default: $COLUMNS, else the terminal\'s width]' -r
complete -c runbook -n "__fish_runbook_using_subcommand list" -l all -d 'Show every run'
complete -c runbook -n "__fish_runbook_using_subcommand list" -l here -d 'Only runs started in the current directory'
complete -c runbook -n "__fish_runbook_using_subcommand list" -l json -d 'One receipt per line, as JSON'
complete -c runbook -n "__fish_runbook_using_subcommand list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand list" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l since -d 'Only runs started since then: a time ago (`7d`, `12h`) or a date (`2026-11-01`)' -r
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l until -d 'Only runs started before then: a time ago or a date' -r
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l agent -d 'Only runs of this agent (repeatable)' -r
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l model -d 'Only runs of this model, as the agent names it (repeatable)' -r
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l project -d 'Only runs of this project: the git root of the directory they ran in' -r -F
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l outcome -d 'Only runs that ended so (repeatable)' -r
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l html -d 'Write the numbers as one self-contained HTML page of charts and tables to this file' -r -F
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l runs-dir -d 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]' -r
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l color -d 'When to use colour [default: auto] [env: RUNBOOK_COLOR]' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l width -d 'Lay the view out for this many columns [default: $COLUMNS, else the terminal\'s width]' -r
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l json -d 'Print the numbers as JSON (docs/stats.schema.json)'
complete -c runbook -n "__fish_runbook_using_subcommand stats" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand stats" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand report" -l format -d 'How to tell it' -r -f -a "markdown\t'Paste-ready Markdown, without links'
json\t'The same facts as JSON'"
complete -c runbook -n "__fish_runbook_using_subcommand report" -l runs-dir -d 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]' -r
complete -c runbook -n "__fish_runbook_using_subcommand report" -l color -d 'When to use colour [default: auto] [env: RUNBOOK_COLOR]' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand report" -l width -d 'Lay the view out for this many columns [default: $COLUMNS, else the terminal\'s width]' -r
complete -c runbook -n "__fish_runbook_using_subcommand report" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand report" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand replay" -l agent -d 'Read the file as this agent\'s native output [default: detected from its content; a runbook events.ndjson is always recognised]' -r -f -a "opencode\t'OpenCode (`opencode run --format json`)'
claude\t'Claude Code (`claude -p --output-format stream-json`)'
codex\t'Codex (`codex exec --json`)'"
complete -c runbook -n "__fish_runbook_using_subcommand replay" -s m -l model -d 'The model the recording used, for estimating costs the agent did not report (Codex)' -r
complete -c runbook -n "__fish_runbook_using_subcommand replay" -l speed -d 'Play the recording this many times faster (0.001 to 1000000)' -r
complete -c runbook -n "__fish_runbook_using_subcommand replay" -l runs-dir -d 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]' -r
complete -c runbook -n "__fish_runbook_using_subcommand replay" -l color -d 'When to use colour [default: auto] [env: RUNBOOK_COLOR]' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand replay" -l width -d 'Lay the view out for this many columns [default: $COLUMNS, else the terminal\'s width]' -r
complete -c runbook -n "__fish_runbook_using_subcommand replay" -l instant -d 'Don\'t wait between events'
complete -c runbook -n "__fish_runbook_using_subcommand replay" -l json -d 'Print the universal events as JSON lines instead'
complete -c runbook -n "__fish_runbook_using_subcommand replay" -s q -l quiet -d 'Show only what needs attention: failures, denials, warnings and the summary'
complete -c runbook -n "__fish_runbook_using_subcommand replay" -s v -l verbose -d 'Show everything: all of the agent\'s text, reasoning, steps and the command line'
complete -c runbook -n "__fish_runbook_using_subcommand replay" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand replay" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand config" -l agent -d 'Which agent to run [default: opencode] [env: RUNBOOK_AGENT]' -r -f -a "opencode\t'OpenCode (`opencode run --format json`)'
claude\t'Claude Code (`claude -p --output-format stream-json`)'
codex\t'Codex (`codex exec --json`)'"
complete -c runbook -n "__fish_runbook_using_subcommand config" -l agent-cmd -d 'Run this command instead, an agent that prints runbook\'s universal events as NDJSON (docs/events.md); the prompt is its last argument. E.g. `--agent-cmd \'uvx my-agent --fast\'` [env: RUNBOOK_AGENT_CMD]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l via -d 'How runbook talks to the agent: native (its own headless JSON output) or acp (the Agent Client Protocol, on the agent\'s stdin and stdout: tools shown as they start, permissions asked live) [default: native] [env: RUNBOOK_VIA]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l acp-cmd -d 'Run this command instead, an agent that speaks the Agent Client Protocol on its stdin and stdout. E.g. `--acp-cmd \'npx my-acp-agent\'` [env: RUNBOOK_ACP_CMD]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -s m -l model -d 'The model, as the agent names it (OpenCode: provider/model) [env: RUNBOOK_MODEL]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l permissions -d 'What the agent may do without asking: agent (its own settings), read-only, workspace (edit files and run commands in the work dir) or bypass (everything; throwaway machines only) [default: agent] [env: RUNBOOK_PERMISSIONS]' -r -f -a "agent\t'Whatever the agent\'s own configuration says (nothing is passed)'
read-only\t'Look, don\'t touch: no edits, no commands that change anything'
workspace\t'Edit files and run commands inside the work dir'
bypass\t'Everything, without asking. Only for a throwaway machine or container'"
complete -c runbook -n "__fish_runbook_using_subcommand config" -l agent-bin -d 'The agent\'s binary [default: the agent\'s program on PATH] [env: RUNBOOK_<AGENT>_BIN]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l inactivity-timeout -d 'Stop the agent after this long without any activity (output, or its processes using 20% of a core or more); at most a day, or `off` [default: 3m] [env: RUNBOOK_INACTIVITY_TIMEOUT]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l kill-grace -d 'How long the agent gets to exit after SIGTERM before SIGKILL [default: 10s] [env: RUNBOOK_KILL_GRACE]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l finish-grace -d 'How long an agent that printed its final result may take to exit before it is ended (its turn still counts as completed) [default: 5s] [env: RUNBOOK_FINISH_GRACE]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l permission-timeout -d 'Over ACP at a terminal: how long a permission request waits for a key before it is refused [default: 5m] [env: RUNBOOK_PERMISSION_TIMEOUT]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l timeout -d 'Stop the agent when the whole run has taken this long [env: RUNBOOK_TIMEOUT]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l max-cost -d 'Stop the agent once its reported cost crosses this many US dollars [env: RUNBOOK_MAX_COST]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l stuck -d 'What to do about an agent going round in circles (the same call with the same result, the same failure after each patch, two calls in turn, empty steps): off, warn, or stop it (the run ends `stuck`, exit code 10) [default: stop] [env: RUNBOOK_STUCK]' -r -f -a "off\t'Nothing: no rule is looked at'
warn\t'Warn, and let the agent go on'
stop\t'Warn, then stop the agent at a rule\'s stop threshold (the run ends `stuck`)'"
complete -c runbook -n "__fish_runbook_using_subcommand config" -l stuck-repeat -d 'Stop the agent when it makes the same call with the same result this many times in a row, with a warning two before (0: never) [default: 5] [env: RUNBOOK_STUCK_REPEAT]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l stuck-same-failure -d 'Stop the agent when a shell command fails the same way this many times in a turn, whatever ran between, with a warning two before (0: never) [default: 5] [env: RUNBOOK_STUCK_SAME_FAILURE]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l stuck-same-error -d 'Stop the agent when the same call ends in the same error this many times in a row (0: never) [default: 3] [env: RUNBOOK_STUCK_SAME_ERROR]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l stuck-ping-pong -d 'Stop the agent after this many cycles of two calls in turn (A, B, A, B, …) with unchanged results (0: never) [default: 3] [env: RUNBOOK_STUCK_PING_PONG]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l stuck-monologue -d 'Stop the agent after this many steps in a row without a tool call whose text is empty or the same (0: never) [default: 3] [env: RUNBOOK_STUCK_MONOLOGUE]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l check-timeout -d 'End a check that runs longer than this, with its whole tree (unless the check sets its own) [default: 30m] [env: RUNBOOK_CHECK_TIMEOUT]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l repair-attempts -d 'When checks fail after a completed task, resume the same session this many times to fix them, running the checks again after each (0: never) [default: 2] [env: RUNBOOK_REPAIR_ATTEMPTS]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l repair-budget -d 'What repair attempts and the pass after a permission stall may spend together, on top of the task [default with --max-cost B: the larger of 0.2 × B and $1; without: no cap] [env: RUNBOOK_REPAIR_BUDGET]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l events-to -d 'Append every event as a JSON line to this file, or write it to this FIFO without ever waiting for its reader [env: RUNBOOK_EVENTS_TO]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l runs-dir -d 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l cwd -d 'The directory the agent works in, and where runbook.toml is looked for [default: the current one]' -r -F
complete -c runbook -n "__fish_runbook_using_subcommand config" -l env-file -d 'Set the agent\'s variables from FILE, over .env, .env.local and the shell (repeatable: the last one wins)' -r -F
complete -c runbook -n "__fish_runbook_using_subcommand config" -l color -d 'When to use colour [default: auto] [env: RUNBOOK_COLOR]' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand config" -l width -d 'Lay the view out for this many columns [default: $COLUMNS, else the terminal\'s width]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l init -d 'Write a commented runbook.toml in the repository root (never over an existing one)'
complete -c runbook -n "__fish_runbook_using_subcommand config" -l json -d 'Print the configuration as JSON'
complete -c runbook -n "__fish_runbook_using_subcommand config" -l plan -d 'Plan first: a read-only turn that writes a plan, your decision (execute, revise, abort), then execution in the same agent session [default: false] [env: RUNBOOK_PLAN]'
complete -c runbook -n "__fish_runbook_using_subcommand config" -l retry-denied -d 'When the agent stalls because its tools were refused permission, give its session one more pass that names what was refused and asks it to reach the goal without them (or to say what it needs) [default: false] [env: RUNBOOK_RETRY_DENIED]'
complete -c runbook -n "__fish_runbook_using_subcommand config" -l on-event-raw -d 'Each line to an `--on-event` observer also holds `raw`, the agent\'s own line the event came from [default: false] [env: RUNBOOK_ON_EVENT_RAW]'
complete -c runbook -n "__fish_runbook_using_subcommand config" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand config" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l agent -d 'Which agent to run [default: opencode] [env: RUNBOOK_AGENT]' -r -f -a "opencode\t'OpenCode (`opencode run --format json`)'
claude\t'Claude Code (`claude -p --output-format stream-json`)'
codex\t'Codex (`codex exec --json`)'"
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l agent-cmd -d 'Run this command instead, an agent that prints runbook\'s universal events as NDJSON (docs/events.md); the prompt is its last argument. E.g. `--agent-cmd \'uvx my-agent --fast\'` [env: RUNBOOK_AGENT_CMD]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l via -d 'How runbook talks to the agent: native (its own headless JSON output) or acp (the Agent Client Protocol, on the agent\'s stdin and stdout: tools shown as they start, permissions asked live) [default: native] [env: RUNBOOK_VIA]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l acp-cmd -d 'Run this command instead, an agent that speaks the Agent Client Protocol on its stdin and stdout. E.g. `--acp-cmd \'npx my-acp-agent\'` [env: RUNBOOK_ACP_CMD]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -s m -l model -d 'The model, as the agent names it (OpenCode: provider/model) [env: RUNBOOK_MODEL]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l permissions -d 'What the agent may do without asking: agent (its own settings), read-only, workspace (edit files and run commands in the work dir) or bypass (everything; throwaway machines only) [default: agent] [env: RUNBOOK_PERMISSIONS]' -r -f -a "agent\t'Whatever the agent\'s own configuration says (nothing is passed)'
read-only\t'Look, don\'t touch: no edits, no commands that change anything'
workspace\t'Edit files and run commands inside the work dir'
bypass\t'Everything, without asking. Only for a throwaway machine or container'"
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l agent-bin -d 'The agent\'s binary [default: the agent\'s program on PATH] [env: RUNBOOK_<AGENT>_BIN]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l inactivity-timeout -d 'Stop the agent after this long without any activity (output, or its processes using 20% of a core or more); at most a day, or `off` [default: 3m] [env: RUNBOOK_INACTIVITY_TIMEOUT]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l kill-grace -d 'How long the agent gets to exit after SIGTERM before SIGKILL [default: 10s] [env: RUNBOOK_KILL_GRACE]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l finish-grace -d 'How long an agent that printed its final result may take to exit before it is ended (its turn still counts as completed) [default: 5s] [env: RUNBOOK_FINISH_GRACE]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l permission-timeout -d 'Over ACP at a terminal: how long a permission request waits for a key before it is refused [default: 5m] [env: RUNBOOK_PERMISSION_TIMEOUT]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l timeout -d 'Stop the agent when the whole run has taken this long [env: RUNBOOK_TIMEOUT]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l max-cost -d 'Stop the agent once its reported cost crosses this many US dollars [env: RUNBOOK_MAX_COST]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l stuck -d 'What to do about an agent going round in circles (the same call with the same result, the same failure after each patch, two calls in turn, empty steps): off, warn, or stop it (the run ends `stuck`, exit code 10) [default: stop] [env: RUNBOOK_STUCK]' -r -f -a "off\t'Nothing: no rule is looked at'
warn\t'Warn, and let the agent go on'
stop\t'Warn, then stop the agent at a rule\'s stop threshold (the run ends `stuck`)'"
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l stuck-repeat -d 'Stop the agent when it makes the same call with the same result this many times in a row, with a warning two before (0: never) [default: 5] [env: RUNBOOK_STUCK_REPEAT]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l stuck-same-failure -d 'Stop the agent when a shell command fails the same way this many times in a turn, whatever ran between, with a warning two before (0: never) [default: 5] [env: RUNBOOK_STUCK_SAME_FAILURE]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l stuck-same-error -d 'Stop the agent when the same call ends in the same error this many times in a row (0: never) [default: 3] [env: RUNBOOK_STUCK_SAME_ERROR]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l stuck-ping-pong -d 'Stop the agent after this many cycles of two calls in turn (A, B, A, B, …) with unchanged results (0: never) [default: 3] [env: RUNBOOK_STUCK_PING_PONG]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l stuck-monologue -d 'Stop the agent after this many steps in a row without a tool call whose text is empty or the same (0: never) [default: 3] [env: RUNBOOK_STUCK_MONOLOGUE]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l check-timeout -d 'End a check that runs longer than this, with its whole tree (unless the check sets its own) [default: 30m] [env: RUNBOOK_CHECK_TIMEOUT]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l repair-attempts -d 'When checks fail after a completed task, resume the same session this many times to fix them, running the checks again after each (0: never) [default: 2] [env: RUNBOOK_REPAIR_ATTEMPTS]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l repair-budget -d 'What repair attempts and the pass after a permission stall may spend together, on top of the task [default with --max-cost B: the larger of 0.2 × B and $1; without: no cap] [env: RUNBOOK_REPAIR_BUDGET]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l events-to -d 'Append every event as a JSON line to this file, or write it to this FIFO without ever waiting for its reader [env: RUNBOOK_EVENTS_TO]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l runs-dir -d 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l color -d 'When to use colour [default: auto] [env: RUNBOOK_COLOR]' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l width -d 'Lay the view out for this many columns [default: $COLUMNS, else the terminal\'s width]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l json -d 'Print the findings as one JSON object: `ok`, and per agent `agent`, `default`, `binary`, `version`, `tested`, `tested_versions`, `model`, `model_from`, `price`, `problems`'
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l plan -d 'Plan first: a read-only turn that writes a plan, your decision (execute, revise, abort), then execution in the same agent session [default: false] [env: RUNBOOK_PLAN]'
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l retry-denied -d 'When the agent stalls because its tools were refused permission, give its session one more pass that names what was refused and asks it to reach the goal without them (or to say what it needs) [default: false] [env: RUNBOOK_RETRY_DENIED]'
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l on-event-raw -d 'Each line to an `--on-event` observer also holds `raw`, the agent\'s own line the event came from [default: false] [env: RUNBOOK_ON_EVENT_RAW]'
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand trust" -l color -d 'When to use colour [default: auto] [env: RUNBOOK_COLOR]' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand trust" -l width -d 'Lay the view out for this many columns [default: $COLUMNS, else the terminal\'s width]' -r
complete -c runbook -n "__fish_runbook_using_subcommand trust" -l show -d 'List the trusted files and whether each still has the content that was trusted'
complete -c runbook -n "__fish_runbook_using_subcommand trust" -l forget -d 'Forget the trust in PATH (or in the repository\'s files)'
complete -c runbook -n "__fish_runbook_using_subcommand trust" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand trust" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand completions" -l color -d 'When to use colour [default: auto] [env: RUNBOOK_COLOR]' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand completions" -l width -d 'Lay the view out for this many columns [default: $COLUMNS, else the terminal\'s width]' -r
complete -c runbook -n "__fish_runbook_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand completions" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status list stats report replay config doctor trust completions help" -f -a "run" -d 'Run an agent on a task and supervise it to the end'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status list stats report replay config doctor trust completions help" -f -a "status" -d 'Show how a run went (the latest by default), or follow it live from another terminal'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status list stats report replay config doctor trust completions help" -f -a "list" -d 'List runs, newest first'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status list stats report replay config doctor trust completions help" -f -a "stats" -d 'The numbers over all runs (or those of the filters): outcomes, cost, tokens, durations, the tools that fail, per day, agent, model and project'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status list stats report replay config doctor trust completions help" -f -a "report" -d 'Tell one run for a pull request: its summary, changes, checks and cost, as Markdown or JSON'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status list stats report replay config doctor trust completions help" -f -a "replay" -d 'Show a recorded agent transcript or runbook event log as `runbook run` showed it'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status list stats report replay config doctor trust completions help" -f -a "config" -d 'Show the configuration in effect and where each value comes from; or write a starter runbook.toml'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status list stats report replay config doctor trust completions help" -f -a "doctor" -d 'Check each agent: its binary (found as `run` finds it), its version and whether runbook was tested with it, its model and whether runbook can price it, and what to do'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status list stats report replay config doctor trust completions help" -f -a "trust" -d 'Trust a repository\'s runbook.toml, runbook.local.toml, .env and .env.local at their current content, so that the commands they set may run (a changed file needs trusting again); or list or forget trusted files'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status list stats report replay config doctor trust completions help" -f -a "completions" -d 'Print a shell completion script (e.g. `runbook completions bash > ~/.local/share/bash-completion/completions/runbook`)'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status list stats report replay config doctor trust completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
