#!/usr/bin/env python3
"""Counts the eval answers that state a value of the system prompt's worked examples.

    python3 bench/example-values.py RUN.json [RUN.json ...]

The examples in prompts/system.md use the values of an imagined project (a version, a port, a
path). An answer that writes one of them, where the fixture project has no such file name or
text, passed a made-up value off as the project's. For each `lantern eval --json` output given,
this prints how many of its runs' answers (the model's own words) do, and which.

A value is a word of the examples, split as the engine splits facts, of three characters or
more, with a digit, a slash, a dot, an underscore or a dash in it.
"""

import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEPARATORS = r"[\s\"'`,;:()\[\]{}<>=*|\\]+"


def example_values():
    with open(os.path.join(ROOT, "prompts", "system.md"), encoding="utf-8") as f:
        examples = f.read().split("EXAMPLES:", 1)[1]
    values = set()
    for word in re.split(SEPARATORS, examples):
        word = word.rstrip(".,")
        has_mark = any(c.isdigit() or c in "/._-" for c in word)
        if len(word) >= 3 and has_mark and any(c.isalnum() for c in word):
            values.add(word)
    return values


def fixture_text(fixture, cache={}):
    """Every file name and every text of a fixture project, joined."""
    if fixture not in cache:
        parts = []
        top = os.path.join(ROOT, "tests", "fixtures", fixture)
        for folder, _, files in os.walk(top):
            for name in files:
                path = os.path.join(folder, name)
                parts.append(os.path.relpath(path, top))
                try:
                    with open(path, encoding="utf-8", errors="ignore") as f:
                        parts.append(f.read())
                except OSError:
                    pass
        cache[fixture] = "\n".join(parts)
    return cache[fixture]


def main(paths):
    if not paths:
        sys.exit(__doc__)
    values = example_values()
    for path in paths:
        with open(path, encoding="utf-8") as f:
            outcomes = json.load(f)["outcomes"]
        hits = []
        for outcome in outcomes:
            answer = outcome["model_answer"]
            project = fixture_text(outcome["fixture"])
            stated = sorted(v for v in values if v in answer and v not in project)
            if stated:
                hits.append(f"{outcome['id']} ({', '.join(stated)})")
        print(f"{path}: {len(hits)} of {len(outcomes)} answers state an example's value")
        for hit in hits:
            print(f"  {hit}")


if __name__ == "__main__":
    main(sys.argv[1:])
