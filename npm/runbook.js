#!/usr/bin/env node
// The `runbook` command of the npm package runbook-cli: finds the runbook binary that npm
// installed for this platform (one of the optional dependencies, each a package holding only
// the binary) and runs it with the same arguments, terminal, environment and exit status.
// RUNBOOK_BINARY names another binary to run instead. npm/build.py fills in the table below.
"use strict";

const childProcess = require("child_process");
const fs = require("fs");
const path = require("path");

const PLATFORMS = {}; // filled in by npm/build.py
const VERSION = "";

function fail(message) {
  process.stderr.write(`runbook: ${message}\n`);
  process.exit(1);
}

// musl or glibc, found as esbuild and biome find it: Node's own report names the glibc it runs
// on; without one, ldd says which C library it belongs to.
function libc() {
  try {
    // The report need not look up the network interfaces (slow on some machines).
    if ("excludeNetwork" in process.report) process.report.excludeNetwork = true;
    const raw = process.report.getReport();
    const report = typeof raw === "string" ? JSON.parse(raw) : raw;
    if (report.header.glibcVersionRuntime) return "glibc";
    const objects = Array.isArray(report.sharedObjects) ? report.sharedObjects : [];
    if (objects.some((o) => o.includes("musl"))) return "musl";
  } catch (_) {
    // No report: ask ldd below.
  }
  try {
    const ldd = fs.readFileSync("/usr/bin/ldd", "latin1");
    if (ldd.includes("musl")) return "musl";
    if (ldd.includes("GNU C Library") || ldd.includes("glibc")) return "glibc";
  } catch (_) {
    // No ldd either.
  }
  return fs.existsSync("/etc/alpine-release") ? "musl" : "glibc";
}

// The packages that may hold this platform's binary, best first. A musl binary is static and
// runs on glibc too; a glibc one does not run on musl.
function candidates() {
  if (process.platform !== "linux") return [];
  const c = libc();
  const mine = Object.values(PLATFORMS).filter((p) => p.cpu === process.arch);
  const exact = mine.filter((p) => p.libc === c);
  const other = c === "glibc" ? mine.filter((p) => p.libc === "musl") : [];
  return [...exact, ...other];
}

function installedBinary(pkg) {
  try {
    const manifest = require.resolve(`${pkg.package}/package.json`);
    const binary = path.join(path.dirname(manifest), "bin", "runbook");
    return fs.existsSync(binary) ? binary : null;
  } catch (_) {
    return null;
  }
}

function findBinary() {
  const override = process.env.RUNBOOK_BINARY;
  if (override) {
    if (!fs.existsSync(override)) fail(`RUNBOOK_BINARY is ${override}, which does not exist`);
    return override;
  }
  const options = candidates();
  if (options.length === 0) {
    fail(
      `runbook-cli ${VERSION} has no binary for ${process.platform} ${process.arch}: runbook ` +
        "runs on Linux x64 and arm64 (docs/platforms.md); elsewhere build it with " +
        "`cargo install runbook-cli`, or set RUNBOOK_BINARY to a runbook binary",
    );
  }
  for (const pkg of options) {
    const binary = installedBinary(pkg);
    if (binary) return binary;
  }
  const wanted = options[0];
  fail(
    `the package ${wanted.package}@${VERSION} (runbook for ${wanted.label}) is not installed: ` +
      "npm skips optional dependencies when told to (--omit=optional, --no-optional) or when " +
      "the lock file was made on another platform. Install it with " +
      `\`npm install -g runbook-cli@${VERSION}\` on this machine, or \`npm install ` +
      `${wanted.package}@${VERSION}\`, or set RUNBOOK_BINARY to a runbook binary`,
  );
}

// Signals a terminal sends to its whole foreground group (Ctrl-C, Ctrl-\, a resize) reach
// runbook by themselves: passing them on again would be a second Ctrl-C, which runbook takes as
// "stop at once". Those sent to this process alone (kill, a supervisor, a closed terminal) are
// passed on.
const GROUP_SIGNALS = ["SIGINT", "SIGQUIT", "SIGWINCH"];
const PASSED_ON = ["SIGTERM", "SIGHUP", "SIGUSR1", "SIGUSR2"];

function run(binary, args) {
  // Where Node can replace itself (22.15 and later), runbook takes this process's place: its
  // pid, its signals and its exit status are then runbook's own.
  if (typeof process.execve === "function") {
    try {
      process.execve(binary, [binary, ...args], process.env);
    } catch (err) {
      fail(`cannot run ${binary}: ${err.message}`);
    }
  }
  const child = childProcess.spawn(binary, args, { stdio: "inherit" });
  const handlers = {};
  for (const signal of GROUP_SIGNALS) {
    handlers[signal] = () => {};
  }
  for (const signal of PASSED_ON) {
    handlers[signal] = () => child.kill(signal);
  }
  for (const [signal, handler] of Object.entries(handlers)) process.on(signal, handler);
  child.on("error", (err) => fail(`cannot run ${binary}: ${err.message}`));
  child.on("exit", (code, signal) => {
    for (const [name, handler] of Object.entries(handlers)) process.removeListener(name, handler);
    if (signal) {
      // Die of the same signal, so that a shell sees what runbook died of.
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code === null ? 1 : code);
  });
}

run(findBinary(), process.argv.slice(2));
