#!/usr/bin/env python3
"""The same runs of `lantern eval --json`, scored by the old ruler and by today's.

    python3 bench/eval-rulers.py RUN.json [RUN.json ...]

The old ruler counted a task right when the answer shown to the user (with Lantern's notes)
contained any expected string anywhere, case aside: `2` in "v20", `0.2` in "0.25", `ff` in
"off". Today's counts the model's own words, whole words and numbers only, fails an answer that
contradicts a note and a run that edited a file the task did not concern. Only tasks judged by
their answer are compared (an edit is judged by its files either way). Prints a markdown table.
"""

import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tasks():
    found = {}
    for path in glob.glob(os.path.join(ROOT, "tests/eval/tasks/*.json")):
        for task in json.load(open(path)):
            found[task["id"]] = task
    return found


def old_ruler(outcome, task):
    expected = task["success"].get("answer_contains_any") or task["success"].get("answer_contains_all")
    answer = outcome["answer"].lower()
    return outcome["finish_reason"] == "answer" and any(e.lower() in answer for e in expected)


def main(paths):
    known = tasks()
    print("| run | set | runs judged by the answer | old ruler (shown, anywhere) | today (model's own words, whole) | today, as shown |")
    print("|---|---|---|---|---|---|")
    for path in paths:
        report = json.load(open(path))
        for split in ("dev", "test"):
            judged = [
                o for o in report["outcomes"]
                if o["split"] == split and o["task"] in known
                and (known[o["task"]]["success"].get("answer_contains_any")
                     or known[o["task"]]["success"].get("answer_contains_all"))
            ]
            if not judged:
                continue
            old = sum(old_ruler(o, known[o["task"]]) for o in judged)
            new = sum(o["success"] for o in judged)
            shown = sum(o["shown_success"] for o in judged)
            print(f"| {report['label']} | {split} | {len(judged)} | {old} | {new} | {shown} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip())
    main(sys.argv[1:])
