#!/usr/bin/env python3
"""Generate benchmark repositories: one approved work item with an N-task DAG.

    python bench/gen.py OUT_DIR --n 1000 10000 100000 [--seed 7]
                        [--shape random|ladder] [--broken]

For each N this writes a complete tiny repository ``OUT_DIR/n-N/``::

    .the-loop/config.yaml                  version: "0.1.0"
    docs/specs/bench-N/requirements.md     approved, R1..R20
    docs/specs/bench-N/design.md           approved
    docs/specs/bench-N/tasks.md            approved, N tasks in the template form
    docs/specs/bench-N/execution-log.md    phase implementation, one progress entry

The graph. ``random``: each task depends on 0-3 distinct earlier tasks; half of
the picks come from the 20 tasks just before it (real plans are mostly local),
the rest from anywhere earlier, so the graph is acyclic by construction.
``ladder``: each task depends on the two before it, the shape that makes a
memo-less cycle check exponential. The done tasks are the first 30% of a
topological order that picks uniformly among the available tasks, so no done
task has an open dependency. ``--broken`` then adds one cycle (an early task of
a dependency chain is made to depend on the chain's last task) and one
dependency on an id that does not exist.

Every draw comes from ``random.Random`` seeded from ``--seed`` and N, and files
are written with ``\\n`` line ends in UTF-8: the same arguments give
byte-identical output. Stdlib only, so it runs without the project installed.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

DONE_FRACTION = 0.30
REQUIREMENTS = 20
LOCAL_WINDOW = 20
MAX_DEPS = 3
WORK_ITEM = "bench-{n}"
ENTRY_HEADING = "### 2026-11-30T10:00Z — started"

VERBS = (
    "add build cache check clean define document emit expose extract handle "
    "index load measure merge migrate parse record refactor render report "
    "resolve retry split store test trace validate wire"
).split()
NOUNS = (
    "adapter archive budget checkpoint client config cursor digest event "
    "fixture graph hook index journal ledger lock manifest parser queue "
    "renderer schema session snapshot store template token watcher worker"
).split()


@dataclass(frozen=True)
class PlannedTask:
    """One generated task: ids are 1-based ints, ``deps`` in ascending order."""

    id: int
    title: str
    deps: tuple[int, ...]
    requirement: str
    done: bool


@dataclass(frozen=True)
class Plan:
    """A generated task graph plus what ``--broken`` injected into it.

    ``cycle`` lists the injected cycle in edge order (each member is needed by
    the next, the last by the first); ``dangling`` is ``(task, missing id)``.
    """

    n: int
    seed: int
    shape: str
    tasks: tuple[PlannedTask, ...]
    cycle: tuple[int, ...] = ()
    dangling: tuple[int, int] | None = None

    @property
    def edges(self) -> int:
        return sum(len(t.deps) for t in self.tasks)


def make_plan(n: int, seed: int, shape: str = "random", broken: bool = False) -> Plan:
    """Build the task graph for one N; deterministic in all four arguments."""
    if n < 1:
        raise ValueError("n must be at least 1")
    if broken and n < 10:
        raise ValueError("--broken needs n of at least 10")
    # One generator per (seed, N, shape): sizes do not disturb each other's draws.
    rng = random.Random(seed * 1_000_003 + n * 7 + (shape == "ladder"))
    deps = [_draw_deps(rng, i, shape) for i in range(1, n + 1)]
    titles = [_title(rng, i) for i in range(1, n + 1)]
    done = _done_prefix(rng, deps, round(DONE_FRACTION * n))
    cycle: tuple[int, ...] = ()
    dangling: tuple[int, int] | None = None
    if broken:
        cycle = _inject_cycle(rng, deps)
        dangling = _inject_dangling(rng, deps, set(cycle))
    tasks = tuple(
        PlannedTask(
            id=i,
            title=titles[i - 1],
            deps=tuple(sorted(deps[i - 1])),
            requirement=f"R{(i - 1) % REQUIREMENTS + 1}",
            done=done[i - 1],
        )
        for i in range(1, n + 1)
    )
    return Plan(n=n, seed=seed, shape=shape, tasks=tasks, cycle=cycle, dangling=dangling)


def _draw_deps(rng: random.Random, task: int, shape: str) -> list[int]:
    """The dependencies of task ``task`` (1-based), all on earlier tasks."""
    if shape == "ladder":
        return [d for d in (task - 2, task - 1) if d >= 1]
    picks: set[int] = set()
    for _ in range(rng.randint(0, MAX_DEPS)):
        if task == 1:
            break
        low = max(1, task - LOCAL_WINDOW) if rng.random() < 0.5 else 1
        picks.add(rng.randint(low, task - 1))
    return sorted(picks)


def _title(rng: random.Random, task: int) -> str:
    return f"{rng.choice(VERBS).capitalize()} the {rng.choice(NOUNS)} {rng.choice(NOUNS)} ({task})"


def _done_prefix(rng: random.Random, deps: list[list[int]], count: int) -> list[bool]:
    """Mark the first ``count`` tasks of a random topological order as done.

    Kahn's algorithm drawing uniformly from the available tasks (swap-remove
    keeps each draw O(1)); any prefix of a topological order is closed under
    dependencies, so a done task never waits on an open one.
    """
    n = len(deps)
    waiting = [len(d) for d in deps]
    users: list[list[int]] = [[] for _ in range(n)]
    for i, ds in enumerate(deps):
        for d in ds:
            users[d - 1].append(i)
    available = [i for i in range(n) if waiting[i] == 0]
    done = [False] * n
    for _ in range(count):
        at = rng.randrange(len(available))
        available[at], available[-1] = available[-1], available[at]
        task = available.pop()
        done[task] = True
        for u in users[task]:
            waiting[u] -= 1
            if waiting[u] == 0:
                available.append(u)
    return done


def _inject_cycle(rng: random.Random, deps: list[list[int]]) -> tuple[int, ...]:
    """Close a dependency chain of 2-4 tasks into a cycle; return it in edge order.

    Start at a task in the second half that has dependencies, walk back along
    its latest dependency up to three times, then make the task reached depend
    on the starting one.
    """
    n = len(deps)
    first = rng.randrange(n // 2, n)
    candidates = [(first + k) % n for k in range(n)]
    end = next((i for i in candidates if deps[i]), None)
    if end is None:
        raise ValueError("no task has a dependency; cannot inject a cycle")
    chain = [end + 1]  # 1-based ids from here on
    while len(chain) < 4 and deps[chain[-1] - 1]:
        chain.append(max(deps[chain[-1] - 1]))
    head = chain[-1]
    deps[head - 1].append(end + 1)
    # chain runs dependent → dependency; edge order is the reverse.
    return tuple(reversed(chain))


def _inject_dangling(rng: random.Random, deps: list[list[int]], avoid: set[int]) -> tuple[int, int]:
    """Make one task outside the cycle depend on the id one past the last task."""
    n = len(deps)
    task = rng.randrange(1, n + 1)
    while task in avoid:
        task = task % n + 1
    missing = n + 1
    deps[task - 1].append(missing)
    return (task, missing)


# --- rendering ---------------------------------------------------------------------


def front_matter(**fields: str) -> str:
    """A YAML front-matter block from already-quoted scalar values."""
    body = "".join(f"{key}: {value}\n" for key, value in fields.items())
    return f"---\n{body}---\n"


def _approved(kind: str, phase: str, item: str) -> str:
    return front_matter(
        type=kind,
        phase=phase,
        workItem=f'"{item}"',
        status="approved",
        approvedBy='["@bench-generator"]',
        overrides="{}",
    )


def render_requirements(plan: Plan) -> str:
    """``requirements.md`` with ``### R1 — …`` through ``### R20 — …``."""
    item = WORK_ITEM.format(n=plan.n)
    rng = random.Random(plan.seed)
    parts = [
        _approved("requirements", "requirements-definition", item),
        f"\n# Requirements: synthetic benchmark ({plan.n} tasks)\n\n"
        "## Introduction\n\n"
        "Generated by `bench/gen.py` to measure `loop` on large task graphs.\n\n"
        "## Requirements\n",
    ]
    for k in range(1, REQUIREMENTS + 1):
        verb, noun = rng.choice(VERBS), rng.choice(NOUNS)
        parts.append(
            f"\n### R{k} — {verb.capitalize()} the {noun}\n\n"
            f"**User story:** As a maintainer, I want to {verb} the {noun}, "
            "so that the work item can ship.\n\n"
            "#### Acceptance criteria\n\n"
            f"1. WHEN the {noun} changes THEN the system SHALL {verb} it.\n"
        )
    return "".join(parts)


def render_design(plan: Plan) -> str:
    """A short approved ``design.md``."""
    item = WORK_ITEM.format(n=plan.n)
    return (
        _approved("design", "design", item)
        + f"\n# Design: synthetic benchmark ({plan.n} tasks)\n\n"
        "## Overview\n\n"
        "Each requirement is delivered by the tasks that cite it.\n\n"
        "## Testing strategy\n\n"
        "Every task is proven by `pytest -q`.\n"
    )


def render_tasks(plan: Plan) -> str:
    """``tasks.md`` in the canonical template form, one block per task."""
    item = WORK_ITEM.format(n=plan.n)
    lines = [
        _approved("tasks", "tasks-breakdown", item),
        f"# Tasks: synthetic benchmark ({plan.n} tasks)\n",
        "## Task list\n",
    ]
    for task in plan.tasks:
        depends = ", ".join(str(d) for d in task.deps) or "none"
        lines.append(
            f"- [{'x' if task.done else ' '}] {task.id}. {task.title}\n"
            f"  - _Depends on:_ {depends}\n"
            f"  - _Requirements:_ {task.requirement}\n"
            "  - _Test:_ `pytest -q`"
        )
    return "\n".join(lines) + "\n"


def render_log(plan: Plan) -> str:
    """``execution-log.md`` in the implementation phase with one progress entry."""
    item = WORK_ITEM.format(n=plan.n)
    return (
        front_matter(
            type="execution-log",
            workItem=f'"{item}"',
            phase="implementation",
            status="in-progress",
        )
        + f"\n# Execution Log: synthetic benchmark ({plan.n} tasks)\n\n"
        "## Progress entries\n\n"
        f"{ENTRY_HEADING}\n\n"
        "- **Phase:** implementation\n"
        f"- **Did:** generated {plan.n} tasks ({plan.shape}, seed {plan.seed})\n"
        "- **Next:** implement the ready tasks\n"
    )


def render_repo(plan: Plan) -> dict[str, str]:
    """Every file of one benchmark repository: ``{relative path: text}``."""
    spec = f"docs/specs/{WORK_ITEM.format(n=plan.n)}"
    return {
        ".the-loop/config.yaml": 'version: "0.1.0"\n',
        f"{spec}/requirements.md": render_requirements(plan),
        f"{spec}/design.md": render_design(plan),
        f"{spec}/tasks.md": render_tasks(plan),
        f"{spec}/execution-log.md": render_log(plan),
    }


def write_repo(out_dir: Path, plan: Plan) -> Path:
    """Write one repository under ``out_dir/n-N``; return its root."""
    root = out_dir / f"n-{plan.n}"
    for rel, text in render_repo(plan).items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        # Bytes, not text mode: the output must not depend on the platform's newline.
        target.write_bytes(text.encode("utf-8"))
    return root


def _summary(root: Path, plan: Plan) -> str:
    done = sum(t.done for t in plan.tasks)
    text = f"{root}: {plan.n} tasks, {plan.edges} edges, {done} done"
    if plan.cycle:
        cycle = " → ".join(str(t) for t in (*plan.cycle, plan.cycle[0]))
        text += f"; injected cycle {cycle}"
    if plan.dangling:
        text += f"; task {plan.dangling[0]} depends on missing {plan.dangling[1]}"
    return text


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path, help="folder that receives n-N/ repositories")
    parser.add_argument("--n", type=int, nargs="+", default=[1000], help="task counts")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--shape", choices=("random", "ladder"), default="random")
    parser.add_argument("--broken", action="store_true", help="inject a cycle and a dangling dep")
    args = parser.parse_args(argv)
    for n in args.n:
        try:
            plan = make_plan(n, args.seed, args.shape, args.broken)
        except ValueError as e:
            parser.error(str(e))
        print(_summary(write_repo(args.out_dir, plan), plan))
    return 0


if __name__ == "__main__":
    sys.exit(main())
