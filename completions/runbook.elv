
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
            cand --color 'When to use colour [default: auto] [env: RUNBOOK_COLOR]'
            cand --width 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand run 'Run an agent on a task and supervise it to the end'
            cand status 'Show how a run went (the latest by default), or follow it live from another terminal'
            cand list 'List runs, newest first'
            cand stats 'The numbers over all runs (or those of the filters): outcomes, cost, tokens, durations, the tools that fail, per day, agent, model and project'
            cand report 'Tell one run for a pull request: its summary, changes, checks and cost, as Markdown or JSON'
            cand replay 'Show a recorded agent transcript or runbook event log as `runbook run` showed it'
            cand config 'Show the configuration in effect and where each value comes from; or write a starter runbook.toml'
            cand doctor 'Check each agent: its binary (found as `run` finds it), its version and whether runbook was tested with it, its model and whether runbook can price it, and what to do'
            cand trust 'Trust a repository''s runbook.toml, runbook.local.toml, .env and .env.local at their current content, so that the commands they set may run (a changed file needs trusting again); or list or forget trusted files'
            cand completions 'Print a shell completion script (e.g. `runbook completions bash > ~/.local/share/bash-completion/completions/runbook`)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'runbook;run'= {
            cand --agent 'Which agent to run [default: opencode] [env: RUNBOOK_AGENT]'
            cand --agent-cmd 'Run this command instead, an agent that prints runbook''s universal events as NDJSON (docs/events.md); the prompt is its last argument. E.g. `--agent-cmd ''uvx my-agent --fast''` [env: RUNBOOK_AGENT_CMD]'
            cand --via 'How runbook talks to the agent: native (its own headless JSON output) or acp (the Agent Client Protocol, on the agent''s stdin and stdout: tools shown as they start, permissions asked live) [default: native] [env: RUNBOOK_VIA]'
            cand --acp-cmd 'Run this command instead, an agent that speaks the Agent Client Protocol on its stdin and stdout. E.g. `--acp-cmd ''npx my-acp-agent''` [env: RUNBOOK_ACP_CMD]'
            cand -m 'The model, as the agent names it (OpenCode: provider/model) [env: RUNBOOK_MODEL]'
            cand --model 'The model, as the agent names it (OpenCode: provider/model) [env: RUNBOOK_MODEL]'
            cand --permissions 'What the agent may do without asking: agent (its own settings), read-only, workspace (edit files and run commands in the work dir) or bypass (everything; throwaway machines only) [default: agent] [env: RUNBOOK_PERMISSIONS]'
            cand --agent-bin 'The agent''s binary [default: the agent''s program on PATH] [env: RUNBOOK_<AGENT>_BIN]'
            cand --inactivity-timeout 'Stop the agent after this long without any activity (output, or its processes using 20% of a core or more); at most a day, or `off` [default: 3m] [env: RUNBOOK_INACTIVITY_TIMEOUT]'
            cand --kill-grace 'How long the agent gets to exit after SIGTERM before SIGKILL [default: 10s] [env: RUNBOOK_KILL_GRACE]'
            cand --finish-grace 'How long an agent that printed its final result may take to exit before it is ended (its turn still counts as completed) [default: 5s] [env: RUNBOOK_FINISH_GRACE]'
            cand --permission-timeout 'Over ACP at a terminal: how long a permission request waits for a key before it is refused [default: 5m] [env: RUNBOOK_PERMISSION_TIMEOUT]'
            cand --timeout 'Stop the agent when the whole run has taken this long [env: RUNBOOK_TIMEOUT]'
            cand --max-cost 'Stop the agent once its reported cost crosses this many US dollars [env: RUNBOOK_MAX_COST]'
            cand --stuck 'What to do about an agent going round in circles (the same call with the same result, the same failure after each patch, two calls in turn, empty steps): off, warn, or stop it (the run ends `stuck`, exit code 10) [default: stop] [env: RUNBOOK_STUCK]'
            cand --stuck-repeat 'Stop the agent when it makes the same call with the same result this many times in a row, with a warning two before (0: never) [default: 5] [env: RUNBOOK_STUCK_REPEAT]'
            cand --stuck-same-failure 'Stop the agent when a shell command fails the same way this many times in a turn, whatever ran between, with a warning two before (0: never) [default: 5] [env: RUNBOOK_STUCK_SAME_FAILURE]'
            cand --stuck-same-error 'Stop the agent when the same call ends in the same error this many times in a row (0: never) [default: 3] [env: RUNBOOK_STUCK_SAME_ERROR]'
            cand --stuck-ping-pong 'Stop the agent after this many cycles of two calls in turn (A, B, A, B, …) with unchanged results (0: never) [default: 3] [env: RUNBOOK_STUCK_PING_PONG]'
            cand --stuck-monologue 'Stop the agent after this many steps in a row without a tool call whose text is empty or the same (0: never) [default: 3] [env: RUNBOOK_STUCK_MONOLOGUE]'
            cand --check-timeout 'End a check that runs longer than this, with its whole tree (unless the check sets its own) [default: 30m] [env: RUNBOOK_CHECK_TIMEOUT]'
            cand --repair-attempts 'When checks fail after a completed task, resume the same session this many times to fix them, running the checks again after each (0: never) [default: 2] [env: RUNBOOK_REPAIR_ATTEMPTS]'
            cand --repair-budget 'What repair attempts and the pass after a permission stall may spend together, on top of the task [default with --max-cost B: the larger of 0.2 × B and $1; without: no cap] [env: RUNBOOK_REPAIR_BUDGET]'
            cand --events-to 'Append every event as a JSON line to this file, or write it to this FIFO without ever waiting for its reader [env: RUNBOOK_EVENTS_TO]'
            cand --runs-dir 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]'
            cand --then 'Once the agent has finished, continue its session with this prompt, as a new turn of the same run (repeatable; stops at the first turn that does not complete)'
            cand --on-event 'Start this command once for the run and write every event to its stdin as a JSON line, with `meta` (run id and name, agent, turn index and kind); best-effort: an observer that falls behind misses events, it never slows the run (repeatable; after those of `[[observers]]` in runbook.toml). E.g. `--on-event ''jq -c "select(.type==\"tool.completed\")" >> tools.log''`'
            cand --name 'A name for the run, in its record and in every observer line''s `meta` [default: the run id]'
            cand --check 'Once the task completed, run this project check in the agent''s working directory (`sh -c`, repeatable, in the order given, after those of `[checks]` in runbook.toml; one of the same name replaces it): the run completes only if every check passes, else it ends `checks_failed`. E.g. `--check test=''cargo test''`'
            cand --max-revisions 'How many times a plan may be revised before only execute or abort is offered'
            cand --cwd 'The directory the agent works in, and where runbook.toml is looked for [default: the current one]'
            cand --env-file 'Set the agent''s variables from FILE, over .env, .env.local and the shell (repeatable: the last one wins)'
            cand --color 'When to use colour [default: auto] [env: RUNBOOK_COLOR]'
            cand --width 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]'
            cand --plan 'Plan first: a read-only turn that writes a plan, your decision (execute, revise, abort), then execution in the same agent session [default: false] [env: RUNBOOK_PLAN]'
            cand --retry-denied 'When the agent stalls because its tools were refused permission, give its session one more pass that names what was refused and asks it to reach the goal without them (or to say what it needs) [default: false] [env: RUNBOOK_RETRY_DENIED]'
            cand --on-event-raw 'Each line to an `--on-event` observer also holds `raw`, the agent''s own line the event came from [default: false] [env: RUNBOOK_ON_EVENT_RAW]'
            cand --summary 'Once the work is done, ask the same session for a 2–4 sentence summary of it, as one more turn (its cost counts); without it the summary is the agent''s final message, trimmed'
            cand --no-checks 'Run no checks, neither `--check` nor `[checks]` in runbook.toml'
            cand --plan-only 'Stop after the plan (implies --plan): the plan goes to stdout'
            cand -y 'Execute the plan without asking (what happens anyway without a terminal)'
            cand --yes 'Execute the plan without asking (what happens anyway without a terminal)'
            cand --trust 'Trust this repository''s runbook.toml, runbook.local.toml, .env and .env.local as they are, for this run only, without asking (for CI; `runbook trust` records trust). Or set RUNBOOK_TRUST to the files (or directories) to trust, separated by `:`'
            cand --json 'Print every event as a JSON line on stdout, then the receipt; nothing else on stdout'
            cand -q 'Show only what needs attention: failures, denials, warnings and the summary'
            cand --quiet 'Show only what needs attention: failures, denials, warnings and the summary'
            cand -v 'Show everything: all of the agent''s text, reasoning, steps and the command line'
            cand --verbose 'Show everything: all of the agent''s text, reasoning, steps and the command line'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;status'= {
            cand --runs-dir 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]'
            cand --color 'When to use colour [default: auto] [env: RUNBOOK_COLOR]'
            cand --width 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]'
            cand --live 'Follow the run as it happens, then exit with its exit code'
            cand --next 'Wait for the next run to start, then follow it live (implies --live)'
            cand --here 'Only runs started in the current directory: the latest of them, or with --next the next one'
            cand --json 'Print the receipt as JSON (with --live: every event as a JSON line, then the receipt)'
            cand -q 'Show only what needs attention: failures, denials, warnings and the summary'
            cand --quiet 'Show only what needs attention: failures, denials, warnings and the summary'
            cand -v 'Show everything: all of the agent''s text, reasoning, steps and the command line'
            cand --verbose 'Show everything: all of the agent''s text, reasoning, steps and the command line'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;list'= {
            cand -n 'Show at most this many runs'
            cand --limit 'Show at most this many runs'
            cand --outcome 'Only runs that ended so (repeatable): completed, truncated, agent_error, killed, hung, budget_exceeded, timed_out, interrupted, aborted, checks_failed, storage_error, running, abandoned'
            cand --agent 'Only runs of this agent'
            cand --runs-dir 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]'
            cand --color 'When to use colour [default: auto] [env: RUNBOOK_COLOR]'
            cand --width 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]'
            cand --all 'Show every run'
            cand --here 'Only runs started in the current directory'
            cand --json 'One receipt per line, as JSON'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;stats'= {
            cand --since 'Only runs started since then: a time ago (`7d`, `12h`) or a date (`2026-11-01`)'
            cand --until 'Only runs started before then: a time ago or a date'
            cand --agent 'Only runs of this agent (repeatable)'
            cand --model 'Only runs of this model, as the agent names it (repeatable)'
            cand --project 'Only runs of this project: the git root of the directory they ran in'
            cand --outcome 'Only runs that ended so (repeatable)'
            cand --html 'Write the numbers as one self-contained HTML page of charts and tables to this file'
            cand --runs-dir 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]'
            cand --color 'When to use colour [default: auto] [env: RUNBOOK_COLOR]'
            cand --width 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]'
            cand --json 'Print the numbers as JSON (docs/stats.schema.json)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;report'= {
            cand --format 'How to tell it'
            cand --runs-dir 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]'
            cand --color 'When to use colour [default: auto] [env: RUNBOOK_COLOR]'
            cand --width 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;replay'= {
            cand --agent 'Read the file as this agent''s native output [default: detected from its content; a runbook events.ndjson is always recognised]'
            cand -m 'The model the recording used, for estimating costs the agent did not report (Codex)'
            cand --model 'The model the recording used, for estimating costs the agent did not report (Codex)'
            cand --speed 'Play the recording this many times faster (0.001 to 1000000)'
            cand --runs-dir 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]'
            cand --color 'When to use colour [default: auto] [env: RUNBOOK_COLOR]'
            cand --width 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]'
            cand --instant 'Don''t wait between events'
            cand --json 'Print the universal events as JSON lines instead'
            cand -q 'Show only what needs attention: failures, denials, warnings and the summary'
            cand --quiet 'Show only what needs attention: failures, denials, warnings and the summary'
            cand -v 'Show everything: all of the agent''s text, reasoning, steps and the command line'
            cand --verbose 'Show everything: all of the agent''s text, reasoning, steps and the command line'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;config'= {
            cand --agent 'Which agent to run [default: opencode] [env: RUNBOOK_AGENT]'
            cand --agent-cmd 'Run this command instead, an agent that prints runbook''s universal events as NDJSON (docs/events.md); the prompt is its last argument. E.g. `--agent-cmd ''uvx my-agent --fast''` [env: RUNBOOK_AGENT_CMD]'
            cand --via 'How runbook talks to the agent: native (its own headless JSON output) or acp (the Agent Client Protocol, on the agent''s stdin and stdout: tools shown as they start, permissions asked live) [default: native] [env: RUNBOOK_VIA]'
            cand --acp-cmd 'Run this command instead, an agent that speaks the Agent Client Protocol on its stdin and stdout. E.g. `--acp-cmd ''npx my-acp-agent''` [env: RUNBOOK_ACP_CMD]'
            cand -m 'The model, as the agent names it (OpenCode: provider/model) [env: RUNBOOK_MODEL]'
            cand --model 'The model, as the agent names it (OpenCode: provider/model) [env: RUNBOOK_MODEL]'
            cand --permissions 'What the agent may do without asking: agent (its own settings), read-only, workspace (edit files and run commands in the work dir) or bypass (everything; throwaway machines only) [default: agent] [env: RUNBOOK_PERMISSIONS]'
            cand --agent-bin 'The agent''s binary [default: the agent''s program on PATH] [env: RUNBOOK_<AGENT>_BIN]'
            cand --inactivity-timeout 'Stop the agent after this long without any activity (output, or its processes using 20% of a core or more); at most a day, or `off` [default: 3m] [env: RUNBOOK_INACTIVITY_TIMEOUT]'
            cand --kill-grace 'How long the agent gets to exit after SIGTERM before SIGKILL [default: 10s] [env: RUNBOOK_KILL_GRACE]'
            cand --finish-grace 'How long an agent that printed its final result may take to exit before it is ended (its turn still counts as completed) [default: 5s] [env: RUNBOOK_FINISH_GRACE]'
            cand --permission-timeout 'Over ACP at a terminal: how long a permission request waits for a key before it is refused [default: 5m] [env: RUNBOOK_PERMISSION_TIMEOUT]'
            cand --timeout 'Stop the agent when the whole run has taken this long [env: RUNBOOK_TIMEOUT]'
            cand --max-cost 'Stop the agent once its reported cost crosses this many US dollars [env: RUNBOOK_MAX_COST]'
            cand --stuck 'What to do about an agent going round in circles (the same call with the same result, the same failure after each patch, two calls in turn, empty steps): off, warn, or stop it (the run ends `stuck`, exit code 10) [default: stop] [env: RUNBOOK_STUCK]'
            cand --stuck-repeat 'Stop the agent when it makes the same call with the same result this many times in a row, with a warning two before (0: never) [default: 5] [env: RUNBOOK_STUCK_REPEAT]'
            cand --stuck-same-failure 'Stop the agent when a shell command fails the same way this many times in a turn, whatever ran between, with a warning two before (0: never) [default: 5] [env: RUNBOOK_STUCK_SAME_FAILURE]'
            cand --stuck-same-error 'Stop the agent when the same call ends in the same error this many times in a row (0: never) [default: 3] [env: RUNBOOK_STUCK_SAME_ERROR]'
            cand --stuck-ping-pong 'Stop the agent after this many cycles of two calls in turn (A, B, A, B, …) with unchanged results (0: never) [default: 3] [env: RUNBOOK_STUCK_PING_PONG]'
            cand --stuck-monologue 'Stop the agent after this many steps in a row without a tool call whose text is empty or the same (0: never) [default: 3] [env: RUNBOOK_STUCK_MONOLOGUE]'
            cand --check-timeout 'End a check that runs longer than this, with its whole tree (unless the check sets its own) [default: 30m] [env: RUNBOOK_CHECK_TIMEOUT]'
            cand --repair-attempts 'When checks fail after a completed task, resume the same session this many times to fix them, running the checks again after each (0: never) [default: 2] [env: RUNBOOK_REPAIR_ATTEMPTS]'
            cand --repair-budget 'What repair attempts and the pass after a permission stall may spend together, on top of the task [default with --max-cost B: the larger of 0.2 × B and $1; without: no cap] [env: RUNBOOK_REPAIR_BUDGET]'
            cand --events-to 'Append every event as a JSON line to this file, or write it to this FIFO without ever waiting for its reader [env: RUNBOOK_EVENTS_TO]'
            cand --runs-dir 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]'
            cand --cwd 'The directory the agent works in, and where runbook.toml is looked for [default: the current one]'
            cand --env-file 'Set the agent''s variables from FILE, over .env, .env.local and the shell (repeatable: the last one wins)'
            cand --color 'When to use colour [default: auto] [env: RUNBOOK_COLOR]'
            cand --width 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]'
            cand --init 'Write a commented runbook.toml in the repository root (never over an existing one)'
            cand --json 'Print the configuration as JSON'
            cand --plan 'Plan first: a read-only turn that writes a plan, your decision (execute, revise, abort), then execution in the same agent session [default: false] [env: RUNBOOK_PLAN]'
            cand --retry-denied 'When the agent stalls because its tools were refused permission, give its session one more pass that names what was refused and asks it to reach the goal without them (or to say what it needs) [default: false] [env: RUNBOOK_RETRY_DENIED]'
            cand --on-event-raw 'Each line to an `--on-event` observer also holds `raw`, the agent''s own line the event came from [default: false] [env: RUNBOOK_ON_EVENT_RAW]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;doctor'= {
            cand --agent 'Which agent to run [default: opencode] [env: RUNBOOK_AGENT]'
            cand --agent-cmd 'Run this command instead, an agent that prints runbook''s universal events as NDJSON (docs/events.md); the prompt is its last argument. E.g. `--agent-cmd ''uvx my-agent --fast''` [env: RUNBOOK_AGENT_CMD]'
            cand --via 'How runbook talks to the agent: native (its own headless JSON output) or acp (the Agent Client Protocol, on the agent''s stdin and stdout: tools shown as they start, permissions asked live) [default: native] [env: RUNBOOK_VIA]'
            cand --acp-cmd 'Run this command instead, an agent that speaks the Agent Client Protocol on its stdin and stdout. E.g. `--acp-cmd ''npx my-acp-agent''` [env: RUNBOOK_ACP_CMD]'
            cand -m 'The model, as the agent names it (OpenCode: provider/model) [env: RUNBOOK_MODEL]'
            cand --model 'The model, as the agent names it (OpenCode: provider/model) [env: RUNBOOK_MODEL]'
            cand --permissions 'What the agent may do without asking: agent (its own settings), read-only, workspace (edit files and run commands in the work dir) or bypass (everything; throwaway machines only) [default: agent] [env: RUNBOOK_PERMISSIONS]'
            cand --agent-bin 'The agent''s binary [default: the agent''s program on PATH] [env: RUNBOOK_<AGENT>_BIN]'
            cand --inactivity-timeout 'Stop the agent after this long without any activity (output, or its processes using 20% of a core or more); at most a day, or `off` [default: 3m] [env: RUNBOOK_INACTIVITY_TIMEOUT]'
            cand --kill-grace 'How long the agent gets to exit after SIGTERM before SIGKILL [default: 10s] [env: RUNBOOK_KILL_GRACE]'
            cand --finish-grace 'How long an agent that printed its final result may take to exit before it is ended (its turn still counts as completed) [default: 5s] [env: RUNBOOK_FINISH_GRACE]'
            cand --permission-timeout 'Over ACP at a terminal: how long a permission request waits for a key before it is refused [default: 5m] [env: RUNBOOK_PERMISSION_TIMEOUT]'
            cand --timeout 'Stop the agent when the whole run has taken this long [env: RUNBOOK_TIMEOUT]'
            cand --max-cost 'Stop the agent once its reported cost crosses this many US dollars [env: RUNBOOK_MAX_COST]'
            cand --stuck 'What to do about an agent going round in circles (the same call with the same result, the same failure after each patch, two calls in turn, empty steps): off, warn, or stop it (the run ends `stuck`, exit code 10) [default: stop] [env: RUNBOOK_STUCK]'
            cand --stuck-repeat 'Stop the agent when it makes the same call with the same result this many times in a row, with a warning two before (0: never) [default: 5] [env: RUNBOOK_STUCK_REPEAT]'
            cand --stuck-same-failure 'Stop the agent when a shell command fails the same way this many times in a turn, whatever ran between, with a warning two before (0: never) [default: 5] [env: RUNBOOK_STUCK_SAME_FAILURE]'
            cand --stuck-same-error 'Stop the agent when the same call ends in the same error this many times in a row (0: never) [default: 3] [env: RUNBOOK_STUCK_SAME_ERROR]'
            cand --stuck-ping-pong 'Stop the agent after this many cycles of two calls in turn (A, B, A, B, …) with unchanged results (0: never) [default: 3] [env: RUNBOOK_STUCK_PING_PONG]'
            cand --stuck-monologue 'Stop the agent after this many steps in a row without a tool call whose text is empty or the same (0: never) [default: 3] [env: RUNBOOK_STUCK_MONOLOGUE]'
            cand --check-timeout 'End a check that runs longer than this, with its whole tree (unless the check sets its own) [default: 30m] [env: RUNBOOK_CHECK_TIMEOUT]'
            cand --repair-attempts 'When checks fail after a completed task, resume the same session this many times to fix them, running the checks again after each (0: never) [default: 2] [env: RUNBOOK_REPAIR_ATTEMPTS]'
            cand --repair-budget 'What repair attempts and the pass after a permission stall may spend together, on top of the task [default with --max-cost B: the larger of 0.2 × B and $1; without: no cap] [env: RUNBOOK_REPAIR_BUDGET]'
            cand --events-to 'Append every event as a JSON line to this file, or write it to this FIFO without ever waiting for its reader [env: RUNBOOK_EVENTS_TO]'
            cand --runs-dir 'Where run directories go [default: $XDG_STATE_HOME/runbook/runs] [env: RUNBOOK_RUNS_DIR]'
            cand --color 'When to use colour [default: auto] [env: RUNBOOK_COLOR]'
            cand --width 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]'
            cand --json 'Print the findings as one JSON object: `ok`, and per agent `agent`, `default`, `binary`, `version`, `tested`, `tested_versions`, `model`, `model_from`, `price`, `problems`'
            cand --plan 'Plan first: a read-only turn that writes a plan, your decision (execute, revise, abort), then execution in the same agent session [default: false] [env: RUNBOOK_PLAN]'
            cand --retry-denied 'When the agent stalls because its tools were refused permission, give its session one more pass that names what was refused and asks it to reach the goal without them (or to say what it needs) [default: false] [env: RUNBOOK_RETRY_DENIED]'
            cand --on-event-raw 'Each line to an `--on-event` observer also holds `raw`, the agent''s own line the event came from [default: false] [env: RUNBOOK_ON_EVENT_RAW]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;trust'= {
            cand --color 'When to use colour [default: auto] [env: RUNBOOK_COLOR]'
            cand --width 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]'
            cand --show 'List the trusted files and whether each still has the content that was trusted'
            cand --forget 'Forget the trust in PATH (or in the repository''s files)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;completions'= {
            cand --color 'When to use colour [default: auto] [env: RUNBOOK_COLOR]'
            cand --width 'Lay the view out for this many columns [default: $COLUMNS, else the terminal''s width]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'runbook;help'= {
            cand run 'Run an agent on a task and supervise it to the end'
            cand status 'Show how a run went (the latest by default), or follow it live from another terminal'
            cand list 'List runs, newest first'
            cand stats 'The numbers over all runs (or those of the filters): outcomes, cost, tokens, durations, the tools that fail, per day, agent, model and project'
            cand report 'Tell one run for a pull request: its summary, changes, checks and cost, as Markdown or JSON'
            cand replay 'Show a recorded agent transcript or runbook event log as `runbook run` showed it'
            cand config 'Show the configuration in effect and where each value comes from; or write a starter runbook.toml'
            cand doctor 'Check each agent: its binary (found as `run` finds it), its version and whether runbook was tested with it, its model and whether runbook can price it, and what to do'
            cand trust 'Trust a repository''s runbook.toml, runbook.local.toml, .env and .env.local at their current content, so that the commands they set may run (a changed file needs trusting again); or list or forget trusted files'
            cand completions 'Print a shell completion script (e.g. `runbook completions bash > ~/.local/share/bash-completion/completions/runbook`)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'runbook;help;run'= {
        }
        &'runbook;help;status'= {
        }
        &'runbook;help;list'= {
        }
        &'runbook;help;stats'= {
        }
        &'runbook;help;report'= {
        }
        &'runbook;help;replay'= {
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
