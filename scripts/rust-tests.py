#!/usr/bin/env python3
"""Runs the Rust workspace's tests the way `cargo test` does, and times every test.

    scripts/rust-tests.py [--times FILE] [-- CARGO-TEST-ARGS ...]

Builds the test binaries of the Cargo workspace in src-tauri/ with `cargo test --no-run`, runs each one in its package's folder (one
binary at a time and one test at a time, so that a test's time is its own), then the documentation tests. Every
test's own time comes from libtest's JSON report; the stable toolchain only gives it to a
binary that is told it may (RUSTC_BOOTSTRAP, set for the test processes alone, never for the
compiler, so nothing is built differently). A failing test's output is printed in full.

Prints a `test result:` line per binary, the ten slowest tests, and `N passed, N failed` last;
with --times, writes "seconds<TAB>test" lines to FILE for a caller's own summary. Exits 1 when a
test failed or a binary could not run.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

WORKSPACE = Path(__file__).resolve().parent.parent / "src-tauri"


def parse_args(argv):
    times_file = None
    cargo_args = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--times":
            times_file = argv[i + 1]
            i += 2
        elif arg == "--":
            cargo_args = argv[i + 1:]
            break
        elif arg in ("-h", "--help"):
            print(__doc__.strip())
            sys.exit(0)
        else:
            sys.exit(f"rust-tests: unknown argument {arg} (see --help)")
    return times_file, cargo_args


def build(cargo_args):
    """The test binaries cargo built: (label, executable, package folder)."""
    command = ["cargo", "test", "--no-run", "--message-format=json-render-diagnostics", *cargo_args]
    proc = subprocess.Popen(command, cwd=WORKSPACE, stdout=subprocess.PIPE, text=True)
    binaries = []
    for line in proc.stdout:
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        if message.get("reason") != "compiler-artifact":
            continue
        if not message.get("profile", {}).get("test") or not message.get("executable"):
            continue
        target = message["target"]
        package = message["package_id"]
        # "path+file:///…/crates/core#lantern-core@0.1.0" → lantern-core
        name = package.split("#")[-1].split("@")[0].rsplit("/", 1)[-1]
        kind = "lib" if target["kind"] in (["lib"], ["rlib"], ["cdylib"]) else target["name"]
        label = f"{name}" if kind == "lib" else f"{name}/{kind}"
        folder = str(Path(message["manifest_path"]).parent)
        binaries.append((label, message["executable"], folder))
    if proc.wait() != 0:
        sys.exit("rust-tests: the tests did not build")
    return binaries


def run_binary(label, executable, folder):
    """Runs one test binary; returns (results, ok) with results as (name, outcome, seconds)."""
    env = dict(os.environ, CARGO_MANIFEST_DIR=folder, RUSTC_BOOTSTRAP="1")
    # One test at a time: each test's time is then its own, not time spent waiting for the one
    # model a binary's tests share.
    command = [
        executable, "--test-threads=1", "-Z", "unstable-options", "--format", "json", "--report-time",
    ]
    started = time.monotonic()
    proc = subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.PIPE, text=True)
    results = []
    summary = None
    for line in proc.stdout:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            print(line, end="")
            continue
        if event.get("type") == "test" and event.get("event") in ("ok", "failed", "ignored"):
            name = f"{label}::{event['name']}"
            seconds = float(event.get("exec_time", 0.0))
            results.append((name, event["event"], seconds))
            if event["event"] == "failed":
                print(f"---- {name} ({seconds:.1f} s) ----")
                print(event.get("stdout", "").rstrip())
                print(f"test {name} ... FAILED")
        elif event.get("type") == "suite" and event.get("event") in ("ok", "failed"):
            summary = event
    code = proc.wait()
    wall = time.monotonic() - started
    if summary is None:
        print(f"rust-tests: {label} ended without a report (exit {code})")
        return results, False
    outcome = "ok" if summary["event"] == "ok" and code == 0 else "FAILED"
    print(
        f"test result: {outcome}. {summary['passed']} passed; {summary['failed']} failed; "
        f"{summary['ignored']} ignored; {label} in {wall:.1f} s"
    )
    return results, outcome == "ok"


def run_doc_tests(cargo_args):
    started = time.monotonic()
    # Doc tests are libraries' only; cargo rejects --features of a package it has no doc tests for
    # when that package is not selected, so the same arguments are passed on.
    code = subprocess.call(["cargo", "test", "--doc", *cargo_args], cwd=WORKSPACE)
    return time.monotonic() - started, code == 0


def main():
    times_file, cargo_args = parse_args(sys.argv[1:])
    binaries = build(cargo_args)
    all_results = []
    broken = []
    for label, executable, folder in binaries:
        results, ok = run_binary(label, executable, folder)
        all_results.extend(results)
        if not ok:
            broken.append(label)
    doc_seconds, doc_ok = run_doc_tests(cargo_args)
    if not doc_ok:
        broken.append("doc tests")
    all_results.append(("doc tests (all crates, built and run)", "ok" if doc_ok else "failed", doc_seconds))

    timed = sorted((r for r in all_results if r[1] != "ignored"), key=lambda r: -r[2])
    print("\nslowest Rust tests:")
    for name, _, seconds in timed[:10]:
        print(f"  {seconds:7.1f} s  {name}")
    if times_file:
        with open(times_file, "w") as out:
            for name, _, seconds in timed:
                out.write(f"{seconds:.2f}\t{name}\n")
    passed = sum(1 for r in all_results if r[1] == "ok")
    failed = sum(1 for r in all_results if r[1] == "failed")
    if broken:
        print(f"rust-tests: failed in {', '.join(broken)}")
    print(f"{passed} passed, {failed} failed")
    return 1 if broken or failed else 0


if __name__ == "__main__":
    sys.exit(main())
