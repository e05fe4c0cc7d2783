#!/usr/bin/env python3
"""Generates runbook's npm packages from built binaries: one package per platform (the binary
alone, with `os`, `cpu` and `libc` set, as biome, esbuild and OpenCode publish theirs) and the
main package `runbook-cli`, whose `optionalDependencies` name them all and whose launcher
(`npm/runbook.js`) runs the one npm installed. Nothing here is edited by hand: a release runs

    python3 npm/build.py --out target/npm --require-all \\
        --binary x86_64-unknown-linux-gnu=path/to/runbook ...

then `npm publish` in each platform directory and in `runbook-cli/` last. Each binary is checked
to be a Linux ELF of the platform it is packaged for (its machine, and glibc's or musl's loader).
docs/development.md, "Releasing", says more.
"""

import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAIN = "runbook-cli"
# Rust target -> (npm package, cpu, libc, what a person calls it).
PLATFORMS = {
    "x86_64-unknown-linux-gnu": (f"{MAIN}-linux-x64", "x64", "glibc", "Linux x64 (glibc)"),
    "aarch64-unknown-linux-gnu": (f"{MAIN}-linux-arm64", "arm64", "glibc", "Linux arm64 (glibc)"),
    "x86_64-unknown-linux-musl": (f"{MAIN}-linux-x64-musl", "x64", "musl", "Linux x64 (musl)"),
    "aarch64-unknown-linux-musl": (f"{MAIN}-linux-arm64-musl", "arm64", "musl", "Linux arm64 (musl)"),
}
ELF_MACHINE = {"x64": 0x3E, "arm64": 0xB7}
COMMON = {
    "license": "MIT OR Apache-2.0",
    "homepage": "https://github.com/runbook-cli/runbook",
    "repository": {"type": "git", "url": "git+https://github.com/runbook-cli/runbook.git"},
}


def fail(message):
    print(f"npm/build.py: {message}", file=sys.stderr)
    sys.exit(1)


def cargo_version():
    text = (ROOT / "Cargo.toml").read_text()
    found = re.search(r'^version\s*=\s*"([^"]+)"', text, re.M)
    return found.group(1) if found else fail("no version in Cargo.toml; give --version")


def elf_facts(path):
    """(machine, interpreter or None) of an ELF executable, or a reason it is not one."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None, None, "not a 64-bit little-endian ELF executable"
    machine = struct.unpack_from("<H", data, 18)[0]
    phoff = struct.unpack_from("<Q", data, 32)[0]
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    interp = None
    for i in range(phnum):
        at = phoff + i * phentsize
        kind, = struct.unpack_from("<I", data, at)
        if kind == 3:  # PT_INTERP
            offset, = struct.unpack_from("<Q", data, at + 8)
            size, = struct.unpack_from("<Q", data, at + 32)
            interp = data[offset:offset + size].rstrip(b"\0").decode("ascii", "replace")
    return machine, interp, None


def check_binary(target, path):
    """Refuses a binary built for another platform than the package it would go in."""
    if not path.is_file():
        fail(f"{path}: no such file (the runbook binary for {target})")
    _, cpu, libc, _ = PLATFORMS[target]
    machine, interp, problem = elf_facts(path)
    if problem:
        fail(f"{path}: {problem}")
    if machine != ELF_MACHINE[cpu]:
        fail(f"{path}: built for ELF machine {machine:#x}, not {cpu} ({target})")
    # glibc's binaries name its loader; musl's are static or name musl's.
    built_for = "glibc" if interp and "ld-linux" in interp else "musl"
    if built_for != libc:
        fail(f"{path}: a {built_for} binary (loader {interp or 'none'}), not {libc} ({target})")


def write_json(path, value):
    path.write_text(json.dumps(value, indent=2) + "\n")


def platform_package(out, target, binary, version, strip):
    name, cpu, libc, label = PLATFORMS[target]
    folder = out / name
    (folder / "bin").mkdir(parents=True)
    shutil.copyfile(binary, folder / "bin" / "runbook")
    os.chmod(folder / "bin" / "runbook", 0o755)
    if strip:
        # The debug information of a release build is most of its size.
        subprocess.run(["strip", str(folder / "bin" / "runbook")], check=True)
    write_json(folder / "package.json", {
        "name": name,
        "version": version,
        "description": f"The runbook binary for {label}; installed by {MAIN}.",
        **COMMON,
        "os": ["linux"],
        "cpu": [cpu],
        "libc": [libc],
        "preferUnplugged": True,
        "files": ["bin/runbook"],
    })
    return folder


def main_package(out, version):
    folder = out / MAIN
    (folder / "bin").mkdir(parents=True)
    launcher = (ROOT / "npm" / "runbook.js").read_text()
    table = {target: {"package": name, "cpu": cpu, "libc": libc, "label": label}
             for target, (name, cpu, libc, label) in PLATFORMS.items()}
    marker = "const PLATFORMS = {}; // filled in by npm/build.py"
    if marker not in launcher:
        fail("npm/runbook.js lost the line build.py fills in")
    launcher = launcher.replace(marker, f"const PLATFORMS = {json.dumps(table, indent=2)};")
    launcher = launcher.replace('const VERSION = "";', f"const VERSION = {json.dumps(version)};")
    (folder / "bin" / "runbook.js").write_text(launcher)
    os.chmod(folder / "bin" / "runbook.js", 0o755)
    write_json(folder / "package.json", {
        "name": MAIN,
        "version": version,
        "description": "Supervise a coding agent's headless run: live view, watchdog, budget, "
                       "event log and receipt.",
        **COMMON,
        "keywords": ["agent", "opencode", "claude-code", "codex", "supervisor"],
        "bin": {"runbook": "bin/runbook.js"},
        "files": ["bin/runbook.js", "README.md"],
        "engines": {"node": ">=18"},
        "os": ["linux"],
        "optionalDependencies": {name: version for name, _, _, _ in PLATFORMS.values()},
    })
    shutil.copyfile(ROOT / "npm" / "README.md", folder / "README.md")
    return folder


def parse_binaries(pairs):
    binaries = {}
    for pair in pairs:
        target, sep, path = pair.partition("=")
        if not sep or target not in PLATFORMS:
            fail(f"--binary {pair!r}: give TARGET=PATH, TARGET one of {', '.join(PLATFORMS)}")
        binaries[target] = Path(path)
    return binaries


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", action="append", default=[], metavar="TARGET=PATH",
                        help="a built runbook binary and the Rust target it was built for")
    parser.add_argument("--version", help="the packages' version [default: Cargo.toml's]")
    parser.add_argument("--out", type=Path, default=ROOT / "target" / "npm",
                        help="where the packages go (emptied first) [default: target/npm]")
    parser.add_argument("--strip", action="store_true",
                        help="strip each binary's debug information (the pipeline's are stripped)")
    parser.add_argument("--require-all", action="store_true",
                        help="refuse unless every platform has a binary (for a release)")
    args = parser.parse_args()
    binaries = parse_binaries(args.binary)
    version = args.version or cargo_version()
    missing = [t for t in PLATFORMS if t not in binaries]
    if args.require_all and missing:
        fail(f"no binary for {', '.join(missing)} (--require-all)")
    if not binaries:
        fail("no --binary given: nothing to package")
    for target, path in binaries.items():
        check_binary(target, path)
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    for target, path in binaries.items():
        folder = platform_package(args.out, target, path, version, args.strip)
        print(f"{folder}  ({target})")
    print(main_package(args.out, version))
    for target in missing:
        print(f"not packaged: {PLATFORMS[target][0]} (no binary for {target})", file=sys.stderr)


if __name__ == "__main__":
    main()
