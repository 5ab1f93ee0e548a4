#!/usr/bin/env python3
"""How much one build's evaluation moves between runs: the same tasks run several times
(prompt cache cold or warm, one or two threads), compared task by task.

    python3 bench/eval-spread.py LABEL=RUN.json [LABEL=RUN.json ...]

For each run: tool tasks right in the model's own words (the headline's count) and what was
shown. Then the spread (most minus fewest right), and every task whose verdict or whose
answer text differs between the runs, with the answers side by side; a run in which a checker
was stopped at its time box is marked, since what it saw depended on the machine's load. A
lever is worth keeping only when its gain is larger than this spread. Prints markdown.
"""

import json
import sys


def load(arg):
    label, _, path = arg.partition("=")
    if not path:
        raise SystemExit(f"expected LABEL=RUN.json, got {arg!r}")
    with open(path) as f:
        outcomes = json.load(f)["outcomes"]
    return label, {o["id"]: o for o in outcomes}


def is_true(value):
    return value is True or value == "True" or value == "true"


def main(args):
    if len(args) < 2:
        raise SystemExit(__doc__)
    runs = [load(a) for a in args]
    ids = sorted(set.intersection(*(set(r) for _, r in runs)))
    tool_ids = [i for i in ids if is_true(runs[0][1][i]["needs_tool"])]
    print(f"{len(ids)} runs in common ({len(tool_ids)} tool tasks)\n")
    print("| run | tool tasks right (model's words) | shown right | mean s/run |")
    print("|---|---|---|---|")
    rights = []
    for label, run in runs:
        right = sum(is_true(run[i]["success"]) for i in tool_ids)
        shown = sum(is_true(run[i]["shown_success"]) for i in tool_ids)
        mean = sum(float(run[i]["seconds"]) for i in ids) / max(len(ids), 1)
        rights.append(right)
        print(f"| {label} | {right} of {len(tool_ids)} | {shown} | {mean:.1f} |")
    print(f"\nSpread: {max(rights) - min(rights)} tool tasks (most {max(rights)}, fewest {min(rights)}).\n")
    verdicts = [i for i in ids if len({is_true(r[i]["success"]) for _, r in runs}) > 1]
    answers = [i for i in ids if len({r[i]["model_answer"] for _, r in runs}) > 1]
    print(f"Runs whose verdict differs: {len(verdicts)}; whose answer text differs: {len(answers)} of {len(ids)}.\n")
    for i in answers:
        mark = " (verdict differs)" if i in verdicts else ""
        if any(int(r[i].get("checks_out_of_time", 0)) > 0 for _, r in runs):
            mark += " (a check stopped at its time box)"
        print(f"- `{i}`{mark}")
        for label, run in runs:
            text = " ".join(str(run[i]["model_answer"]).split())[:160]
            print(f"  - {label}: {'right' if is_true(run[i]['success']) else 'wrong'}: {text}")


if __name__ == "__main__":
    main(sys.argv[1:])
