#!/usr/bin/env bash
# Seeds fuzz/seeds/<target>/ from the recorded transcripts in fixtures/: each line on its own and
# each transcript whole; event logs and receipts from replaying them; the starter configuration.
# Run from the repository root after `cargo build`; then `cargo +nightly fuzz cmin <target>
# fuzz/seeds/<target>` (see docs/RELIABILITY.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/debug/runbook
out=fuzz/seeds
rm -rf "$out"
mkdir -p "$out"/{opencode,claude,codex,generic,event_log,receipt,config,dotenv}
seed() { # seed DIR < content: named after its hash, as libFuzzer names inputs
    local tmp
    tmp=$(mktemp)
    cat > "$tmp"
    mv "$tmp" "$1/$(sha1sum < "$tmp" | cut -c1-40)"
}
lines() { # lines FILE DIR...: each non-empty line of FILE as a seed in each DIR
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        for dir in "${@:2}"; do printf '%s\n' "$line" | seed "$dir"; done
    done < "$1"
}
for agent in opencode claude codex; do
    dirs=("$out/$agent")
    for f in fixtures/$agent/*.stdout.ndjson; do
        lines "$f" "${dirs[@]}"
        for dir in "${dirs[@]}"; do seed "$dir" < "$f"; done
        stderr=${f%.stdout.ndjson}.stderr.txt
        [ -s "$stderr" ] && seed "$out/$agent" < "$stderr"
        log=$(mktemp)
        "$bin" replay --json --instant "$f" > "$log" 2> /dev/null || true
        head -n -1 "$log" | seed "$out/event_log"
        head -n -1 "$log" | seed "$out/generic"
        tail -n 1 "$log" | seed "$out/receipt"
        head -n -1 "$log" | head -n 12 > "$log.head"
        lines "$log.head" "$out/event_log"
        rm -f "$log" "$log.head"
    done
done
seed "$out/receipt" < fixtures/receipt.json
starter=$(mktemp -d)
(cd "$starter" && git init -q && "$OLDPWD/$bin" config --init > /dev/null 2>&1)
sed -n 's/^#\([A-Za-z_"-]* = .*\)/\1/p; s/^#\(\[.*\]\)$/\1/p' "$starter/runbook.toml" | seed "$out/config"
grep -v '^#\[' "$starter/runbook.toml" | sed -n 's/^#\([a-z_]* = .*\)/\1/p' | seed "$out/config"
printf 'timeout = "30m"\nmax_cost = 5.0\n#RUNBOOK_AGENT=claude\n[agents.claude]\nargs = ["--x"]\n[env]\nA = "${HOME}/a"\n' | seed "$out/config"
rm -rf "$starter"
printf 'A=1\nexport B=two\n' | seed "$out/dotenv"
printf "C='single \${X}'\n# comment\nD=\"double\\\\n\${HOME}\"\n" | seed "$out/dotenv"
printf 'E="multi\nline" # note\nF= spaced\nG=${A}\n' | seed "$out/dotenv"
for dir in "$out"/*; do echo "$(basename "$dir"): $(ls "$dir" | wc -l) seeds"; done
