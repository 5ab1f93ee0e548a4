#!/usr/bin/env python3
"""The code index's scale: for each corpus, the time to build it from nothing, to bring it up
to date when nothing changed, and when one source file changed, with the peak memory of each
run (`lantern index --workspace DIR [--rebuild] --json`, a process of its own, its own
LANTERN_HOME so that the user's saved indexes are not touched).

    scripts/bench-index.py --lantern BIN --out-md FILE --out-json FILE [--corpus NAME ...]

Corpora: this repository, the crate sources in the cargo registry ($CARGO_HOME/registry/src)
and the generated tree of 100,000 files scripts/bench-search.py makes. The changed file is
only touched (its time set one second later, then set back), never rewritten. Called by
scripts/bench.sh.
"""

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_EXTS = (".rs", ".py", ".js", ".ts", ".tsx", ".go")


def say(text):
    print(f"bench-index: {text}", file=sys.stderr, flush=True)


def search_bench():
    spec = importlib.util.spec_from_file_location("bench_search", os.path.join(HERE, "bench-search.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def index_run(lantern, root, home, rebuild):
    """Runs `lantern index` once; returns its JSON report, its wall time in seconds and its
    peak resident memory in MiB (the kernel's count for this one child, from wait4)."""
    cmd = [lantern, "index", "--workspace", root, "--json"] + (["--rebuild"] if rebuild else [])
    env = dict(os.environ, LANTERN_HOME=home)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            tail = err.read().decode(errors="replace")[-500:]
            raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {tail}")
        return json.loads(out.read()), wall, usage.ru_maxrss / 1024


def a_source_file(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in ("target", "node_modules", "build"))
        for name in sorted(filenames):
            if name.endswith(SOURCE_EXTS):
                return os.path.join(dirpath, name)
    return None


def measure(lantern, name, root):
    home = tempfile.mkdtemp(prefix="lantern-bench-index-")
    say(f"{name}: building from nothing")
    built, build_s, build_rss = index_run(lantern, root, home, rebuild=True)
    say(f"{name}: {built['files']} files, {built['definitions']} definitions in {build_s:.1f} s")
    unchanged, unchanged_s, refresh_rss = index_run(lantern, root, home, rebuild=False)
    row = {
        "corpus": name,
        "files": built["files"],
        "definitions": built["definitions"],
        "skipped": built["skipped"],
        "build_s": build_s,
        "build_rss_mib": build_rss,
        "unchanged_s": unchanged_s,
        "unchanged_parsed": unchanged["parsed"],
    }
    # One file's stamp moves forward and back: its text is never changed, so even files that
    # are not ours (the registry's crate sources) are left as they were.
    touched = a_source_file(root)
    if touched and os.access(touched, os.W_OK):
        st = os.stat(touched)
        os.utime(touched, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        try:
            changed, changed_s, _ = index_run(lantern, root, home, rebuild=False)
        finally:
            os.utime(touched, ns=(st.st_atime_ns, st.st_mtime_ns))
        row["one_changed_s"] = changed_s
        row["one_changed_parsed"] = changed["parsed"]
    row["refresh_rss_mib"] = refresh_rss
    shutil.rmtree(home, ignore_errors=True)
    return row


def markdown(rows):
    lines = [
        "| corpus | source files indexed | definitions | build from nothing | peak memory | refresh, nothing changed | refresh, one file changed | peak memory (refresh) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['corpus']} | not measured: {r['error']} | | | | | | |")
            continue
        one = f"{r['one_changed_s']:.2f} s ({r['one_changed_parsed']} read)" if "one_changed_s" in r else "not measured (no writable source file)"
        lines.append(
            f"| {r['corpus']} | {r['files']:,} | {r['definitions']:,} | {r['build_s']:.1f} s | {r['build_rss_mib']:.0f} MiB "
            f"| {r['unchanged_s']:.2f} s ({r['unchanged_parsed']} read) | {one} | {r['refresh_rss_mib']:.0f} MiB |"
        )
    lines.append("")
    lines.append("Each figure is one run of `lantern index` (a process of its own, so the time includes starting it and, after a build, loading the saved index). Peak memory is the process's maximum resident set.")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lantern", required=True)
    ap.add_argument("--corpus", action="append", choices=["repo", "registry", "generated"])
    ap.add_argument("--out-md", required=True)
    ap.add_argument("--out-json", required=True)
    args = ap.parse_args()
    corpora = args.corpus or ["repo", "registry", "generated"]
    search = search_bench()
    rows = []
    for corpus in corpora:
        if corpus == "repo":
            name, root = "this repository", os.path.dirname(HERE)
        elif corpus == "registry":
            name, root = "cargo registry", search.registry_corpus()
        else:
            name, root = "generated 100k files", search.generated_corpus()
        if not root:
            rows.append({"corpus": name, "error": "not found"})
            continue
        try:
            rows.append(measure(args.lantern, name, root))
        except (RuntimeError, OSError, ValueError) as e:
            rows.append({"corpus": name, "error": str(e)[:300]})
    with open(args.out_json, "w") as f:
        json.dump(rows, f, indent=2)
    with open(args.out_md, "w") as f:
        f.write(markdown(rows))
    print(markdown(rows))


if __name__ == "__main__":
    main()
