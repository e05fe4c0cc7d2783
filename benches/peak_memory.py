#!/usr/bin/env python3
"""Peak memory of `runbook run --json > /dev/null` on one stream, several builds in interleaved
rounds, split into what the process maps of its files (its code, mostly) and its heap.

    python3 benches/peak_memory.py ROUNDS KIND AGENT RUNBOOK [RUNBOOK...]

KIND is the agent runbook is told it runs (`codex`, `claude`, `opencode`; `generic` for
`--agent-cmd`), AGENT a program that prints the stream (benches/adapters.py leaves one per
stream in its BENCH_DIR, e.g. agent-codex.sh). Each run is sampled as benches/adapters.py samples
its memory figures (its environment, the loop detector only warning), every 2 ms: the peaks of
VmHWM, RssFile and RssAnon are printed per build, one figure per round, in MiB. Every build's
binary is first dropped from the page cache, so that each is mapped as read back from the disk.
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import adapters  # noqa: E402


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    rounds, kind, agent, builds = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
    adapters.evict(*builds)
    scratch = tempfile.mkdtemp(prefix="peak-memory-")
    runs = os.path.join(scratch, "runs")
    seen = {b: [] for b in builds}
    for _ in range(rounds):
        for b in builds:
            shutil.rmtree(runs, ignore_errors=True)
            top, code = adapters.peaks(adapters.runbook_argv(b, runs, kind, agent), every=0.002)
            # A cycled transcript goes on after its final word, which runbook reports (exit 1).
            if code not in (0, 1):
                sys.exit(f"peak_memory: {b} exited {code}")
            seen[b].append(top)
    shutil.rmtree(scratch, ignore_errors=True)
    for b in builds:
        print(b)
        for key in ("VmHWM", "RssFile", "RssAnon"):
            print(f"  {key:8} " + " ".join(f"{r[key]:.1f}" for r in seen[b]))


if __name__ == "__main__":
    main()
