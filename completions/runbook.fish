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

complete -c runbook -n "__fish_runbook_needs_command" -l color -d 'When to use colour: auto, always, never' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_needs_command" -l width -d 'Lay the view out for this many columns' -r
complete -c runbook -n "__fish_runbook_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_needs_command" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "run" -d 'Run an agent on a task and supervise it to the end'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "status" -d 'Show how a run went (the latest by default), or follow it live from another terminal'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "batch" -d 'Run many tasks at once, each in a git worktree of its own, within one budget'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "list" -d 'List runs, newest first'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "stats" -d 'The numbers over all runs: outcomes, cost, tokens, durations, failing tools'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "report" -d 'Tell one run for a pull request, as Markdown or JSON'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "fleet" -d 'Print what a scheduler needs to run a task file\'s tasks, one per index'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "upload" -d 'Upload runs made earlier or offline to object storage'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "replay" -d 'Show a recorded agent transcript or runbook event log as `runbook run` showed it'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "demo" -d 'See runbook supervise a recorded agent session: no agent or API key needed'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "config" -d 'Show the configuration in effect and where each value comes from'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "doctor" -d 'Check each agent: its binary, version, model and price'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "trust" -d 'Trust a repository\'s configuration files, so that the commands they set may run'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c runbook -n "__fish_runbook_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c runbook -n "__fish_runbook_using_subcommand run" -l agent -d 'Which agent to run: opencode, claude, codex' -r -f -a "opencode\t'OpenCode (`opencode run --format json`)'
claude\t'Claude Code (`claude -p --output-format stream-json`)'
codex\t'Codex (`codex exec --json`)'"
complete -c runbook -n "__fish_runbook_using_subcommand run" -s m -l model -d 'The model, as the agent names it' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l permissions -d 'What the agent may do without asking' -r -f -a "agent\t'Whatever the agent\'s own configuration says (nothing is passed)'
read-only\t'Look, don\'t touch: no edits, no commands that change anything'
workspace\t'Edit files and run commands inside the work dir'
bypass\t'Everything, without asking. Only for a throwaway machine or container'"
complete -c runbook -n "__fish_runbook_using_subcommand run" -l agent-bin -d 'The agent\'s binary [default: on PATH]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l agent-cmd -d 'Run this command instead; it prints events' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l via -d 'How to talk to the agent: native or acp' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l acp-cmd -d 'Run this command instead, an ACP agent' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l sandbox -d 'Sandbox the agent: auto, landlock, bwrap, off' -r -f -a "auto\t''
landlock\t''
bwrap\t''
off\t''"
complete -c runbook -n "__fish_runbook_using_subcommand run" -l allow-port -d 'Let the sandboxed agent connect to port N' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l timeout -d 'Stop the run after this long' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l max-cost -d 'Stop once it cost this many US dollars' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l inactivity-timeout -d 'Stop after this long idle, or `off`' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l permission-timeout -d 'Time to answer a permission request (ACP)' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l kill-grace -d 'Time between SIGTERM and SIGKILL' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l finish-grace -d 'Time to exit after the final result' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l stuck -d 'When the agent goes round in circles' -r -f -a "off\t'Nothing: no rule is looked at'
warn\t'Warn, and let the agent go on'
stop\t'Warn, then stop the agent at a rule\'s stop threshold (the run ends `stuck`)'
nudge\t'As `stop`, but the first time the agent\'s session goes on with one prompt that says what it repeated; stuck again after it, the run ends `stuck`'"
complete -c runbook -n "__fish_runbook_using_subcommand run" -l stuck-repeat -d 'Stop at this many same calls and results' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l stuck-same-failure -d 'Stop at this many same shell failures' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l stuck-same-error -d 'Stop at this many same errors in a row' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l stuck-ping-pong -d 'Stop at this many A, B, A, B cycles' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l stuck-monologue -d 'Stop at this many empty or same steps' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l check-timeout -d 'End a check that runs longer than this' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l repair-attempts -d 'Times to resume the session to fix checks' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l repair-budget -d 'What repairs may spend, on top of the task' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l events-to -d 'Write every event to this file or FIFO' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l upload -d 'Upload the run to object storage' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l then -d 'Then continue with this prompt (repeatable)' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l on-event -d 'Pipe every event to this command (repeatable)' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l name -d 'A name for the run [default: the run id]' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l check -d 'Run this check when done (repeatable)' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l max-revisions -d 'How many times a plan may be revised' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l cwd -d 'The directory the agent works in' -r -F
complete -c runbook -n "__fish_runbook_using_subcommand run" -l env-file -d 'Read agent variables from FILE (repeatable)' -r -F
complete -c runbook -n "__fish_runbook_using_subcommand run" -l task-file -d 'The task file of the batch this run is a task of (set by `runbook batch`)' -r -F
complete -c runbook -n "__fish_runbook_using_subcommand run" -l task-id -d 'The task of `--task-file` this run is' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l runs-dir -d 'Where run directories go' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l color -d 'When to use colour: auto, always, never' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand run" -l width -d 'Lay the view out for this many columns' -r
complete -c runbook -n "__fish_runbook_using_subcommand run" -l plan -d 'Plan first, then execute on your approval'
complete -c runbook -n "__fish_runbook_using_subcommand run" -l retry-denied -d 'Retry once, without the refused tools'
complete -c runbook -n "__fish_runbook_using_subcommand run" -l on-event-raw -d 'Add the agent\'s own line to observer lines'
complete -c runbook -n "__fish_runbook_using_subcommand run" -l summary -d 'Ask for a summary of the work (one more turn)'
complete -c runbook -n "__fish_runbook_using_subcommand run" -l no-checks -d 'Run no checks'
complete -c runbook -n "__fish_runbook_using_subcommand run" -l plan-only -d 'Print the plan and stop (implies --plan)'
complete -c runbook -n "__fish_runbook_using_subcommand run" -s y -l yes -d 'Execute the plan without asking'
complete -c runbook -n "__fish_runbook_using_subcommand run" -l trust -d 'Trust the repository\'s config, for this run'
complete -c runbook -n "__fish_runbook_using_subcommand run" -l json -d 'Print events as JSON lines, then the receipt'
complete -c runbook -n "__fish_runbook_using_subcommand run" -s q -l quiet -d 'Show only what needs attention'
complete -c runbook -n "__fish_runbook_using_subcommand run" -s v -l verbose -d 'Show everything, the agent\'s reasoning too'
complete -c runbook -n "__fish_runbook_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand run" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand status" -l runs-dir -d 'Where run directories go' -r
complete -c runbook -n "__fish_runbook_using_subcommand status" -l color -d 'When to use colour: auto, always, never' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand status" -l width -d 'Lay the view out for this many columns' -r
complete -c runbook -n "__fish_runbook_using_subcommand status" -l live -d 'Follow the run as it happens, then exit with its exit code'
complete -c runbook -n "__fish_runbook_using_subcommand status" -l next -d 'Wait for the next run to start, then follow it live (implies --live)'
complete -c runbook -n "__fish_runbook_using_subcommand status" -l here -d 'Only runs started in the current directory'
complete -c runbook -n "__fish_runbook_using_subcommand status" -l json -d 'Print the receipt, or a batch\'s record, as JSON'
complete -c runbook -n "__fish_runbook_using_subcommand status" -s q -l quiet -d 'Show only what needs attention'
complete -c runbook -n "__fish_runbook_using_subcommand status" -s v -l verbose -d 'Show everything, the agent\'s reasoning too'
complete -c runbook -n "__fish_runbook_using_subcommand status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand status" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand batch; and not __fish_seen_subcommand_from clean help" -l tasks -d 'Read the tasks from this file instead; `-` reads JSON lines from stdin' -r -F
complete -c runbook -n "__fish_runbook_using_subcommand batch; and not __fish_seen_subcommand_from clean help" -s j -l jobs -d 'Run at most this many tasks at once [default: min(4, cores)]' -r
complete -c runbook -n "__fish_runbook_using_subcommand batch; and not __fish_seen_subcommand_from clean help" -l max-fail -d 'Start no more tasks once this many have not completed' -r
complete -c runbook -n "__fish_runbook_using_subcommand batch; and not __fish_seen_subcommand_from clean help" -l max-cost -d 'The whole batch\'s budget in US dollars' -r
complete -c runbook -n "__fish_runbook_using_subcommand batch; and not __fish_seen_subcommand_from clean help" -l keep -d 'Which worktrees to keep at the end (branches with changes are always kept)' -r -f -a "none\t'None: every worktree is removed (the branches with changes stay)'
failed\t'Those of the tasks that did not complete'
all\t'Every one'"
complete -c runbook -n "__fish_runbook_using_subcommand batch; and not __fish_seen_subcommand_from clean help" -l junit -d 'Write a JUnit XML report of the tasks to FILE' -r -F
complete -c runbook -n "__fish_runbook_using_subcommand batch; and not __fish_seen_subcommand_from clean help" -l task-index -d 'Run only task N of the file (from 0, after `repeat` and `agents` make their copies)' -r
complete -c runbook -n "__fish_runbook_using_subcommand batch; and not __fish_seen_subcommand_from clean help" -l task-index-from-env -d 'Run only the task whose index a scheduler gives in VAR' -r
complete -c runbook -n "__fish_runbook_using_subcommand batch; and not __fish_seen_subcommand_from clean help" -l upload -d 'Upload each task\'s run to s3://bucket/prefix, gs://…, az://… or file:///path, under the batch\'s id [default: the `upload` setting]' -r
complete -c runbook -n "__fish_runbook_using_subcommand batch; and not __fish_seen_subcommand_from clean help" -l batch-id -d 'The id the runs are uploaded under, URL/ID/<run id>/ [default: the batch\'s own]' -r
complete -c runbook -n "__fish_runbook_using_subcommand batch; and not __fish_seen_subcommand_from clean help" -l runs-dir -d 'Where run directories go' -r
complete -c runbook -n "__fish_runbook_using_subcommand batch; and not __fish_seen_subcommand_from clean help" -l color -d 'When to use colour: auto, always, never' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand batch; and not __fish_seen_subcommand_from clean help" -l width -d 'Lay the view out for this many columns' -r
complete -c runbook -n "__fish_runbook_using_subcommand batch; and not __fish_seen_subcommand_from clean help" -l fail-fast -d 'Start no more tasks once one has not completed (--max-fail 1)'
complete -c runbook -n "__fish_runbook_using_subcommand batch; and not __fish_seen_subcommand_from clean help" -l trust -d 'Trust the repository\'s config and the task file, for this batch'
complete -c runbook -n "__fish_runbook_using_subcommand batch; and not __fish_seen_subcommand_from clean help" -l json -d 'Print every task\'s events as JSON lines, tagged with `task`, then the batch record'
complete -c runbook -n "__fish_runbook_using_subcommand batch; and not __fish_seen_subcommand_from clean help" -l in-place -d 'With a task index: run in this checkout instead of a worktree of its own'
complete -c runbook -n "__fish_runbook_using_subcommand batch; and not __fish_seen_subcommand_from clean help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand batch; and not __fish_seen_subcommand_from clean help" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand batch; and not __fish_seen_subcommand_from clean help" -a "clean" -d 'Remove the worktrees and unchanged branches a batch left (every batch by default)'
complete -c runbook -n "__fish_runbook_using_subcommand batch; and not __fish_seen_subcommand_from clean help" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c runbook -n "__fish_runbook_using_subcommand batch; and __fish_seen_subcommand_from clean" -l runs-dir -d 'Where run directories go' -r
complete -c runbook -n "__fish_runbook_using_subcommand batch; and __fish_seen_subcommand_from clean" -l color -d 'When to use colour: auto, always, never' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand batch; and __fish_seen_subcommand_from clean" -l width -d 'Lay the view out for this many columns' -r
complete -c runbook -n "__fish_runbook_using_subcommand batch; and __fish_seen_subcommand_from clean" -l force -d 'Remove worktrees that hold changes not committed to their branch too (they are kept otherwise)'
complete -c runbook -n "__fish_runbook_using_subcommand batch; and __fish_seen_subcommand_from clean" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand batch; and __fish_seen_subcommand_from clean" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand batch; and __fish_seen_subcommand_from help" -f -a "clean" -d 'Remove the worktrees and unchanged branches a batch left (every batch by default)'
complete -c runbook -n "__fish_runbook_using_subcommand batch; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c runbook -n "__fish_runbook_using_subcommand list" -s n -l limit -d 'Show at most this many runs' -r
complete -c runbook -n "__fish_runbook_using_subcommand list" -l outcome -d 'Only runs that ended so (repeatable)' -r
complete -c runbook -n "__fish_runbook_using_subcommand list" -l agent -d 'Only runs of this agent' -r
complete -c runbook -n "__fish_runbook_using_subcommand list" -l runs-dir -d 'Where run directories go' -r
complete -c runbook -n "__fish_runbook_using_subcommand list" -l color -d 'When to use colour: auto, always, never' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand list" -l width -d 'Lay the view out for this many columns' -r
complete -c runbook -n "__fish_runbook_using_subcommand list" -l all -d 'Show every run'
complete -c runbook -n "__fish_runbook_using_subcommand list" -l here -d 'Only runs started in the current directory'
complete -c runbook -n "__fish_runbook_using_subcommand list" -l json -d 'One receipt per line, as JSON'
complete -c runbook -n "__fish_runbook_using_subcommand list" -l wide -d 'Show every column whole, however wide [default: fit the terminal, or 80 columns]'
complete -c runbook -n "__fish_runbook_using_subcommand list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand list" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l since -d 'Only runs started since then: `7d`, `12h`, `2026-11-01`' -r
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l until -d 'Only runs started before then: a time ago or a date' -r
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l agent -d 'Only runs of this agent (repeatable)' -r
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l model -d 'Only runs of this model, as the agent names it (repeatable)' -r
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l project -d 'Only runs of this project (its git root)' -r -F
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l outcome -d 'Only runs that ended so (repeatable)' -r
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l html -d 'Write the numbers as one HTML page of charts and tables to this file' -r -F
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l runs-dir -d 'Where run directories go' -r
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l color -d 'When to use colour: auto, always, never' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l width -d 'Lay the view out for this many columns' -r
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l json -d 'Print the numbers as JSON (docs/stats.schema.json)'
complete -c runbook -n "__fish_runbook_using_subcommand stats" -l wide -d 'Show every column whole, however wide [default: fit the terminal, or 80 columns]'
complete -c runbook -n "__fish_runbook_using_subcommand stats" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand stats" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand report" -l format -d 'How to tell it' -r -f -a "markdown\t'Paste-ready Markdown, without links'
json\t'The same facts as JSON'"
complete -c runbook -n "__fish_runbook_using_subcommand report" -l runs-dir -d 'Where run directories go' -r
complete -c runbook -n "__fish_runbook_using_subcommand report" -l color -d 'When to use colour: auto, always, never' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand report" -l width -d 'Lay the view out for this many columns' -r
complete -c runbook -n "__fish_runbook_using_subcommand report" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand report" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand fleet" -l upload -d 'Where each task uploads its run, and `stats` reads them (required)' -r
complete -c runbook -n "__fish_runbook_using_subcommand fleet" -l name -d 'The name of the job (letters, digits, `-`)' -r
complete -c runbook -n "__fish_runbook_using_subcommand fleet" -l image -d 'The container image (Kubernetes, required): runbook, the agent and the repository at /work' -r
complete -c runbook -n "__fish_runbook_using_subcommand fleet" -l deadline -d 'How long the job may take, in seconds (Kubernetes, Slurm, GitHub Actions)' -r
complete -c runbook -n "__fish_runbook_using_subcommand fleet" -l retries -d 'How many times one task is tried again after a failure worth retrying' -r
complete -c runbook -n "__fish_runbook_using_subcommand fleet" -l batch-id -d 'The id every task uploads its run under, URL/ID/ [default: the engine\'s job id]' -r
complete -c runbook -n "__fish_runbook_using_subcommand fleet" -l color -d 'When to use colour: auto, always, never' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand fleet" -l width -d 'Lay the view out for this many columns' -r
complete -c runbook -n "__fish_runbook_using_subcommand fleet" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand fleet" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand upload" -l to -d 'Where to: s3://bucket/prefix, gs://…, az://…, file:///path [default: the `upload` setting]' -r
complete -c runbook -n "__fish_runbook_using_subcommand upload" -l runs-dir -d 'Where run directories go' -r
complete -c runbook -n "__fish_runbook_using_subcommand upload" -l color -d 'When to use colour: auto, always, never' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand upload" -l width -d 'Lay the view out for this many columns' -r
complete -c runbook -n "__fish_runbook_using_subcommand upload" -l all -d 'Upload every finished run whose receipt is not in the bucket yet'
complete -c runbook -n "__fish_runbook_using_subcommand upload" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand upload" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand replay" -l agent -d 'Read the file as this agent\'s output [default: detected]' -r -f -a "opencode\t'OpenCode (`opencode run --format json`)'
claude\t'Claude Code (`claude -p --output-format stream-json`)'
codex\t'Codex (`codex exec --json`)'"
complete -c runbook -n "__fish_runbook_using_subcommand replay" -l agent-version -d 'The agent version that made the recording, e.g. 2.1.2 [default: told from the file]' -r
complete -c runbook -n "__fish_runbook_using_subcommand replay" -s m -l model -d 'The model the recording used, to price it' -r
complete -c runbook -n "__fish_runbook_using_subcommand replay" -l speed -d 'Play the recording this many times faster (0.001 to 1000000)' -r
complete -c runbook -n "__fish_runbook_using_subcommand replay" -l runs-dir -d 'Where run directories go' -r
complete -c runbook -n "__fish_runbook_using_subcommand replay" -l color -d 'When to use colour: auto, always, never' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand replay" -l width -d 'Lay the view out for this many columns' -r
complete -c runbook -n "__fish_runbook_using_subcommand replay" -l instant -d 'Don\'t wait between events'
complete -c runbook -n "__fish_runbook_using_subcommand replay" -l json -d 'Print the universal events as JSON lines instead'
complete -c runbook -n "__fish_runbook_using_subcommand replay" -s q -l quiet -d 'Show only what needs attention'
complete -c runbook -n "__fish_runbook_using_subcommand replay" -s v -l verbose -d 'Show everything, the agent\'s reasoning too'
complete -c runbook -n "__fish_runbook_using_subcommand replay" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand replay" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand demo" -l speed -d 'Play the session this many times faster (0.001 to 1000000) [default: its recorded pace, at most 15 s]' -r
complete -c runbook -n "__fish_runbook_using_subcommand demo" -l color -d 'When to use colour: auto, always, never' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand demo" -l width -d 'Lay the view out for this many columns' -r
complete -c runbook -n "__fish_runbook_using_subcommand demo" -l fast -d 'Don\'t wait between events'
complete -c runbook -n "__fish_runbook_using_subcommand demo" -l json -d 'Print the run\'s events and then its receipt as JSON lines, as `runbook run --json` does'
complete -c runbook -n "__fish_runbook_using_subcommand demo" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand demo" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand config" -l agent -d 'Which agent to run: opencode, claude, codex' -r -f -a "opencode\t'OpenCode (`opencode run --format json`)'
claude\t'Claude Code (`claude -p --output-format stream-json`)'
codex\t'Codex (`codex exec --json`)'"
complete -c runbook -n "__fish_runbook_using_subcommand config" -s m -l model -d 'The model, as the agent names it' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l permissions -d 'What the agent may do without asking' -r -f -a "agent\t'Whatever the agent\'s own configuration says (nothing is passed)'
read-only\t'Look, don\'t touch: no edits, no commands that change anything'
workspace\t'Edit files and run commands inside the work dir'
bypass\t'Everything, without asking. Only for a throwaway machine or container'"
complete -c runbook -n "__fish_runbook_using_subcommand config" -l agent-bin -d 'The agent\'s binary [default: on PATH]' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l agent-cmd -d 'Run this command instead; it prints events' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l via -d 'How to talk to the agent: native or acp' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l acp-cmd -d 'Run this command instead, an ACP agent' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l sandbox -d 'Sandbox the agent: auto, landlock, bwrap, off' -r -f -a "auto\t''
landlock\t''
bwrap\t''
off\t''"
complete -c runbook -n "__fish_runbook_using_subcommand config" -l allow-port -d 'Let the sandboxed agent connect to port N' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l timeout -d 'Stop the run after this long' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l max-cost -d 'Stop once it cost this many US dollars' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l inactivity-timeout -d 'Stop after this long idle, or `off`' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l permission-timeout -d 'Time to answer a permission request (ACP)' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l kill-grace -d 'Time between SIGTERM and SIGKILL' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l finish-grace -d 'Time to exit after the final result' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l stuck -d 'When the agent goes round in circles' -r -f -a "off\t'Nothing: no rule is looked at'
warn\t'Warn, and let the agent go on'
stop\t'Warn, then stop the agent at a rule\'s stop threshold (the run ends `stuck`)'
nudge\t'As `stop`, but the first time the agent\'s session goes on with one prompt that says what it repeated; stuck again after it, the run ends `stuck`'"
complete -c runbook -n "__fish_runbook_using_subcommand config" -l stuck-repeat -d 'Stop at this many same calls and results' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l stuck-same-failure -d 'Stop at this many same shell failures' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l stuck-same-error -d 'Stop at this many same errors in a row' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l stuck-ping-pong -d 'Stop at this many A, B, A, B cycles' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l stuck-monologue -d 'Stop at this many empty or same steps' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l check-timeout -d 'End a check that runs longer than this' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l repair-attempts -d 'Times to resume the session to fix checks' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l repair-budget -d 'What repairs may spend, on top of the task' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l events-to -d 'Write every event to this file or FIFO' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l upload -d 'Upload the run to object storage' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l cwd -d 'The directory the agent works in' -r -F
complete -c runbook -n "__fish_runbook_using_subcommand config" -l env-file -d 'Read agent variables from FILE (repeatable)' -r -F
complete -c runbook -n "__fish_runbook_using_subcommand config" -l runs-dir -d 'Where run directories go' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l color -d 'When to use colour: auto, always, never' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand config" -l width -d 'Lay the view out for this many columns' -r
complete -c runbook -n "__fish_runbook_using_subcommand config" -l init -d 'Write a starter runbook.toml in the repository root'
complete -c runbook -n "__fish_runbook_using_subcommand config" -l keys -d 'List the keys a configuration file can set'
complete -c runbook -n "__fish_runbook_using_subcommand config" -l wide -d 'Show every value whole, however wide [default: fit the terminal, or 80 columns]'
complete -c runbook -n "__fish_runbook_using_subcommand config" -l plan -d 'Plan first, then execute on your approval'
complete -c runbook -n "__fish_runbook_using_subcommand config" -l retry-denied -d 'Retry once, without the refused tools'
complete -c runbook -n "__fish_runbook_using_subcommand config" -l on-event-raw -d 'Add the agent\'s own line to observer lines'
complete -c runbook -n "__fish_runbook_using_subcommand config" -l json -d 'Print the configuration as JSON'
complete -c runbook -n "__fish_runbook_using_subcommand config" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand config" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l agent -d 'Which agent to run: opencode, claude, codex' -r -f -a "opencode\t'OpenCode (`opencode run --format json`)'
claude\t'Claude Code (`claude -p --output-format stream-json`)'
codex\t'Codex (`codex exec --json`)'"
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -s m -l model -d 'The model, as the agent names it' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l permissions -d 'What the agent may do without asking' -r -f -a "agent\t'Whatever the agent\'s own configuration says (nothing is passed)'
read-only\t'Look, don\'t touch: no edits, no commands that change anything'
workspace\t'Edit files and run commands inside the work dir'
bypass\t'Everything, without asking. Only for a throwaway machine or container'"
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l agent-bin -d 'The agent\'s binary [default: on PATH]' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l agent-cmd -d 'Run this command instead; it prints events' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l via -d 'How to talk to the agent: native or acp' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l acp-cmd -d 'Run this command instead, an ACP agent' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l sandbox -d 'Sandbox the agent: auto, landlock, bwrap, off' -r -f -a "auto\t''
landlock\t''
bwrap\t''
off\t''"
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l allow-port -d 'Let the sandboxed agent connect to port N' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l timeout -d 'Stop the run after this long' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l max-cost -d 'Stop once it cost this many US dollars' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l inactivity-timeout -d 'Stop after this long idle, or `off`' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l permission-timeout -d 'Time to answer a permission request (ACP)' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l kill-grace -d 'Time between SIGTERM and SIGKILL' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l finish-grace -d 'Time to exit after the final result' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l stuck -d 'When the agent goes round in circles' -r -f -a "off\t'Nothing: no rule is looked at'
warn\t'Warn, and let the agent go on'
stop\t'Warn, then stop the agent at a rule\'s stop threshold (the run ends `stuck`)'
nudge\t'As `stop`, but the first time the agent\'s session goes on with one prompt that says what it repeated; stuck again after it, the run ends `stuck`'"
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l stuck-repeat -d 'Stop at this many same calls and results' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l stuck-same-failure -d 'Stop at this many same shell failures' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l stuck-same-error -d 'Stop at this many same errors in a row' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l stuck-ping-pong -d 'Stop at this many A, B, A, B cycles' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l stuck-monologue -d 'Stop at this many empty or same steps' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l check-timeout -d 'End a check that runs longer than this' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l repair-attempts -d 'Times to resume the session to fix checks' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l repair-budget -d 'What repairs may spend, on top of the task' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l events-to -d 'Write every event to this file or FIFO' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l upload -d 'Upload the run to object storage' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l runs-dir -d 'Where run directories go' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l color -d 'When to use colour: auto, always, never' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l width -d 'Lay the view out for this many columns' -r
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l plan -d 'Plan first, then execute on your approval'
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l retry-denied -d 'Retry once, without the refused tools'
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l on-event-raw -d 'Add the agent\'s own line to observer lines'
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -l json -d 'Print the findings as one JSON object'
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand doctor" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand trust" -l color -d 'When to use colour: auto, always, never' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand trust" -l width -d 'Lay the view out for this many columns' -r
complete -c runbook -n "__fish_runbook_using_subcommand trust" -l show -d 'List the trusted files and whether they changed'
complete -c runbook -n "__fish_runbook_using_subcommand trust" -l forget -d 'Forget the trust in PATH (or in the repository\'s files)'
complete -c runbook -n "__fish_runbook_using_subcommand trust" -l wide -d 'With --show: every column whole, however wide [default: fit the terminal, or 80 columns]'
complete -c runbook -n "__fish_runbook_using_subcommand trust" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand trust" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand completions" -l color -d 'When to use colour: auto, always, never' -r -f -a "auto\t'Colour when stderr is a terminal that supports it'
always\t''
never\t''"
complete -c runbook -n "__fish_runbook_using_subcommand completions" -l width -d 'Lay the view out for this many columns' -r
complete -c runbook -n "__fish_runbook_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c runbook -n "__fish_runbook_using_subcommand completions" -s V -l version -d 'Print version'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status batch list stats report fleet upload replay demo config doctor trust completions help" -f -a "run" -d 'Run an agent on a task and supervise it to the end'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status batch list stats report fleet upload replay demo config doctor trust completions help" -f -a "status" -d 'Show how a run went (the latest by default), or follow it live from another terminal'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status batch list stats report fleet upload replay demo config doctor trust completions help" -f -a "batch" -d 'Run many tasks at once, each in a git worktree of its own, within one budget'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status batch list stats report fleet upload replay demo config doctor trust completions help" -f -a "list" -d 'List runs, newest first'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status batch list stats report fleet upload replay demo config doctor trust completions help" -f -a "stats" -d 'The numbers over all runs: outcomes, cost, tokens, durations, failing tools'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status batch list stats report fleet upload replay demo config doctor trust completions help" -f -a "report" -d 'Tell one run for a pull request, as Markdown or JSON'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status batch list stats report fleet upload replay demo config doctor trust completions help" -f -a "fleet" -d 'Print what a scheduler needs to run a task file\'s tasks, one per index'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status batch list stats report fleet upload replay demo config doctor trust completions help" -f -a "upload" -d 'Upload runs made earlier or offline to object storage'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status batch list stats report fleet upload replay demo config doctor trust completions help" -f -a "replay" -d 'Show a recorded agent transcript or runbook event log as `runbook run` showed it'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status batch list stats report fleet upload replay demo config doctor trust completions help" -f -a "demo" -d 'See runbook supervise a recorded agent session: no agent or API key needed'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status batch list stats report fleet upload replay demo config doctor trust completions help" -f -a "config" -d 'Show the configuration in effect and where each value comes from'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status batch list stats report fleet upload replay demo config doctor trust completions help" -f -a "doctor" -d 'Check each agent: its binary, version, model and price'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status batch list stats report fleet upload replay demo config doctor trust completions help" -f -a "trust" -d 'Trust a repository\'s configuration files, so that the commands they set may run'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status batch list stats report fleet upload replay demo config doctor trust completions help" -f -a "completions" -d 'Print a shell completion script'
complete -c runbook -n "__fish_runbook_using_subcommand help; and not __fish_seen_subcommand_from run status batch list stats report fleet upload replay demo config doctor trust completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c runbook -n "__fish_runbook_using_subcommand help; and __fish_seen_subcommand_from batch" -f -a "clean" -d 'Remove the worktrees and unchanged branches a batch left (every batch by default)'
