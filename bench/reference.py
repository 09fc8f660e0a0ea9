#!/usr/bin/env python3
"""The floor: a plain stdlib reader of tasks.md that answers what ``loop next`` answers.

    python bench/reference.py path/to/tasks.md

It reads the template form (``- [ ] N. title`` with a ``  - _Depends on:_ 1, 3``
sub-bullet; ``[x]`` done, ``[ ]`` open, any other mark in progress; fenced code
blocks skipped), then reports duplicate ids, dependencies on unknown ids and
cycles (one iterative three-colour depth-first search over the whole graph), the
ready tasks and the next one, chosen by loop's documented rule: in progress
first, then the task heading the longest chain of remaining work, then the one
with the most open dependents, then the lowest id. It prints one JSON object and
exits 1 when the graph has errors.

Nothing else: no front matter, no requirements, no config, no locks. That is the
point: it is what any tool must at least do to answer "what next?", so loop's
time divided by this script's is loop's overhead. Stdlib only, one file, no
imports beyond what the answer needs, so its start-up is the interpreter's.
"""

from __future__ import annotations

import json
import re
import sys

TASK = re.compile(r"- \[(.)\] (\d+)\. (.*)")
DEPENDS = re.compile(r"\s+- _Depends on:_ (.*)")
FENCE = re.compile(r"\s*(```|~~~)")


def parse(text: str) -> tuple[dict[str, tuple[str, str, list[str]]], list[str]]:
    """``{id: (mark, title, deps)}`` in file order, and the duplicated ids."""
    tasks: dict[str, tuple[str, str, list[str]]] = {}
    duplicates: list[str] = []
    current: list[str] | None = None
    fenced = False
    for line in text.splitlines():
        # Cheap tests before any regex: most lines are neither fences nor task lines.
        if ("``" in line or "~~" in line) and FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        if line.startswith("- ["):
            task = TASK.match(line)
            if task:
                mark, tid, title = task.groups()
                current = []
                if tid in tasks:
                    duplicates.append(tid)
                else:
                    tasks[tid] = (mark, title, current)
                continue
        if current is not None and "_Depends on:_" in line:
            deps = DEPENDS.match(line)
            if deps:
                value = deps.group(1).strip()
                if value.lower() != "none":
                    current.extend(d.strip() for d in value.split(",") if d.strip())
    return tasks, duplicates


def find_cycles(tasks: dict[str, tuple[str, str, list[str]]]) -> list[list[str]]:
    """One cycle per back edge found by a single iterative depth-first search."""
    white, grey, black = 0, 1, 2
    colour = dict.fromkeys(tasks, white)
    cycles: list[list[str]] = []
    for root in tasks:
        if colour[root] != white:
            continue
        colour[root] = grey
        path = [root]
        stack = [iter(tasks[root][2])]
        while stack:
            dep = next(stack[-1], None)
            if dep is None:
                colour[path.pop()] = black
                stack.pop()
            elif dep not in colour:
                continue  # unknown id: reported as dangling
            elif colour[dep] == white:
                colour[dep] = grey
                path.append(dep)
                stack.append(iter(tasks[dep][2]))
            elif colour[dep] == grey:
                cycles.append(path[path.index(dep) :])
    return cycles


def choose_next(tasks: dict[str, tuple[str, str, list[str]]], ready: list[str]) -> str | None:
    """The ready task loop's rule picks (the graph must be acyclic)."""
    if not ready:
        return None
    # Open tasks only: done ones are neither remaining work nor open dependents.
    users: dict[str, list[str]] = {t: [] for t, v in tasks.items() if v[0] not in "xX"}
    waiting = dict.fromkeys(users, 0)
    for t in users:
        for d in tasks[t][2]:
            if d in users:
                users[d].append(t)
                waiting[t] += 1
    # Kahn's order over the open tasks; chain lengths fill in from its end.
    order = [t for t, w in waiting.items() if w == 0]
    for t in order:
        for u in users[t]:
            waiting[u] -= 1
            if waiting[u] == 0:
                order.append(u)
    chain: dict[str, int] = {}
    for t in reversed(order):
        after = users[t]
        chain[t] = 1 + max([chain[u] for u in after]) if after else 1

    def rank(t: str) -> tuple[bool, int, int, int]:
        return (tasks[t][0] == " ", -chain[t], -len(users[t]), int(t))

    return min(ready, key=rank)


def main(argv: list[str]) -> int:
    """Read the tasks.md named by ``argv[0]`` and print the JSON answer."""
    with open(argv[0], encoding="utf-8") as handle:
        tasks, duplicates = parse(handle.read())
    dangling = [[t, d] for t, (_, _, deps) in tasks.items() for d in deps if d not in tasks]
    cycles = find_cycles(tasks)
    done = {t for t, (mark, _, _) in tasks.items() if mark in "xX"}
    ready = [
        t for t, (mark, _, deps) in tasks.items() if t not in done and all(d in done for d in deps)
    ]
    errors = bool(duplicates or dangling or cycles)
    chosen = None if errors else choose_next(tasks, ready)
    answer = {
        "next": None
        if chosen is None
        else {"id": chosen, "title": tasks[chosen][1], "dependsOn": tasks[chosen][2]},
        "ready": len(ready),
        "done": len(done),
        "total": len(tasks),
        "duplicates": duplicates,
        "dangling": dangling,
        "cycles": cycles,
    }
    json.dump(answer, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
