#!/usr/bin/env python3
"""Generate benchmark repositories: one approved work item with an N-task DAG.

    python bench/gen.py OUT_DIR --n 1000 10000 100000 [--seed 7]
                        [--shape random|local|ladder|chain|wide] [--broken] [--hashes]

For each N this writes a complete tiny repository ``OUT_DIR/n-N/``::

    .the-loop/config.yaml                  version: "0.1.0"
    docs/specs/bench-N/requirements.md     approved, R1..R20
    docs/specs/bench-N/design.md           approved
    docs/specs/bench-N/tasks.md            approved, N tasks in the template form
    docs/specs/bench-N/execution-log.md    phase implementation, one progress entry

The graph (every edge points to an earlier task, so it is acyclic by construction):

- ``random`` (the peer study's shape): task i depends on 0-3 distinct earlier
  tasks drawn uniformly from all of them.
- ``local``: 0-3 earlier tasks, half of the picks from the 20 tasks just before
  it (real plans are mostly local), the rest from anywhere earlier.
- ``ladder`` (the peer study's shape): each task depends on the two before it,
  the shape that makes a memo-less cycle check exponential.
- ``chain``: each task depends on the one before it; the deepest graph, its
  critical path is every open task.
- ``wide``: every task after the first depends on task 1 alone; the widest ready
  set and one task with N-1 dependents.

The done tasks are the first 30% of a topological order that picks uniformly
among the available tasks, so no done task has an open dependency. ``--broken``
then adds one cycle (an early task of a dependency chain is made to depend on
the chain's last task) and one dependency on an id that does not exist.
``--hashes`` records an approval hash in each artifact's front matter, computed
as loop computes it (see :func:`body_hash`), so ``loop check`` finds the locks
intact instead of reporting approvals without a hash.

Every draw comes from ``random.Random`` seeded from ``--seed`` and N, and files
are written with ``\\n`` line ends in UTF-8: the same arguments give
byte-identical output. Stdlib only, so it runs without the project installed.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import re
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
SHAPES = ("random", "local", "ladder", "chain", "wide")
# Added to the seed per shape; ``local`` and ``ladder`` keep the draws they had
# when they were the only shapes.
_SHAPE_SALT = {"local": 0, "ladder": 1, "random": 2, "chain": 3, "wide": 4}
APPROVED_AT = "2026-11-30T10:00Z"

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
    item: str = ""

    @property
    def edges(self) -> int:
        return sum(len(t.deps) for t in self.tasks)

    @property
    def work_item(self) -> str:
        """The work item id: ``item`` when given, else ``bench-N``."""
        return self.item or WORK_ITEM.format(n=self.n)


def make_plan(
    n: int,
    seed: int,
    shape: str = "random",
    broken: bool = False,
    item: str = "",
    done_fraction: float = DONE_FRACTION,
) -> Plan:
    """Build the task graph for one N; deterministic in all arguments."""
    if n < 1:
        raise ValueError("n must be at least 1")
    if broken and n < 10:
        raise ValueError("--broken needs n of at least 10")
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; one of {', '.join(SHAPES)}")
    # One generator per (seed, N, shape): sizes do not disturb each other's draws.
    rng = random.Random(seed * 1_000_003 + n * 7 + _SHAPE_SALT[shape])
    deps = [_draw_deps(rng, i, shape) for i in range(1, n + 1)]
    titles = [_title(rng, i) for i in range(1, n + 1)]
    done = _done_prefix(rng, deps, round(done_fraction * n))
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
    return Plan(n=n, seed=seed, shape=shape, tasks=tasks, cycle=cycle, dangling=dangling, item=item)


def _draw_deps(rng: random.Random, task: int, shape: str) -> list[int]:
    """The dependencies of task ``task`` (1-based), all on earlier tasks."""
    if shape == "ladder":
        return [d for d in (task - 2, task - 1) if d >= 1]
    if shape == "chain":
        return [task - 1] if task > 1 else []
    if shape == "wide":
        return [1] if task > 1 else []
    if shape == "random":
        count = min(rng.randint(0, MAX_DEPS), task - 1)
        return sorted(rng.sample(range(1, task), count)) if count else []
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

# How an artifact is marked: approved without a hash (the default), approved with
# the hash loop would record ("hashed"), or a draft for `loop approve` to lock.
LOCK_MODES = ("approved", "hashed", "draft")
ARTIFACTS = (  # kind, front-matter phase, file name; upstream before downstream
    ("requirements", "requirements-definition", "requirements.md"),
    ("design", "design", "design.md"),
    ("tasks", "tasks-breakdown", "tasks.md"),
)
# A markdown list item's checkbox, for the hash that must not see ticks.
_CHECKBOX = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+)\[[ xX\-]\]", re.MULTILINE)


def front_matter(**fields: str) -> str:
    """A YAML front-matter block from already-formatted scalar values."""
    # A value that starts on its own line (a nested mapping) takes no space after the colon.
    body = "".join(
        f"{key}:{'' if value.startswith(chr(10)) else ' '}{value}\n"
        for key, value in fields.items()
    )
    return f"---\n{body}---\n"


def body_hash(body: str) -> str:
    """loop's lock hash of an artifact body (the text after the front matter).

    Line ends become LF and every checkbox reads ``[ ]``, so ticking a task never
    changes the hash; then the first 16 hex digits of its SHA-256.
    """
    body = _CHECKBOX.sub(lambda m: m.group(1) + "[ ]", body.replace("\r\n", "\n"))
    return "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]


def _header(kind: str, phase: str, item: str, mode: str, upstream: dict[str, str]) -> str:
    """The front matter of one artifact; ``upstream`` maps file name to hash, own last."""
    if mode == "draft":
        return front_matter(
            type=kind, phase=phase, workItem=f'"{item}"', status="draft", overrides="{}"
        )
    fields = {
        "type": kind,
        "phase": phase,
        "workItem": f'"{item}"',
        "status": "approved",
        "approvedBy": '["@bench-generator"]',
        "overrides": "{}",
    }
    if mode == "approved":
        return front_matter(**fields)
    *ups, (_, own) = upstream.items()
    approval = f"\n  hash: {own}\n  at: {APPROVED_AT}"
    if ups:
        approval += "\n  upstream:" + "".join(f"\n    {name}: {h}" for name, h in ups)
    return front_matter(**fields, approval=approval)


def requirements_body(plan: Plan) -> str:
    """The body of ``requirements.md``: ``### R1 — …`` through ``### R20 — …``."""
    rng = random.Random(plan.seed)
    parts = [
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


def design_body(plan: Plan) -> str:
    """The body of a short ``design.md``."""
    return (
        f"\n# Design: synthetic benchmark ({plan.n} tasks)\n\n"
        "## Overview\n\n"
        "Each requirement is delivered by the tasks that cite it.\n\n"
        "## Testing strategy\n\n"
        "Every task is proven by `pytest -q`.\n"
    )


def tasks_body(plan: Plan) -> str:
    """The body of ``tasks.md`` in the canonical template form, one block per task."""
    lines = [f"\n# Tasks: synthetic benchmark ({plan.n} tasks)\n", "## Task list\n"]
    for task in plan.tasks:
        depends = ", ".join(str(d) for d in task.deps) or "none"
        lines.append(
            f"- [{'x' if task.done else ' '}] {task.id}. {task.title}\n"
            f"  - _Depends on:_ {depends}\n"
            f"  - _Requirements:_ {task.requirement}\n"
            "  - _Test:_ `pytest -q`"
        )
    return "\n".join(lines) + "\n"


def render_artifacts(plan: Plan, mode: str = "approved") -> dict[str, str]:
    """``{file name: text}`` for requirements.md, design.md and tasks.md."""
    if mode not in LOCK_MODES:
        raise ValueError(f"unknown lock mode {mode!r}")
    bodies = {"requirements": requirements_body, "design": design_body, "tasks": tasks_body}
    hashes: dict[str, str] = {}
    files = {}
    for kind, phase, name in ARTIFACTS:
        body = bodies[kind](plan)
        hashes[name] = body_hash(body)
        files[name] = _header(kind, phase, plan.work_item, mode, dict(hashes)) + body
    return files


def render_requirements(plan: Plan) -> str:
    """``requirements.md``, approved without a hash."""
    return render_artifacts(plan)["requirements.md"]


def render_design(plan: Plan) -> str:
    """``design.md``, approved without a hash."""
    return render_artifacts(plan)["design.md"]


def render_tasks(plan: Plan) -> str:
    """``tasks.md``, approved without a hash."""
    return render_artifacts(plan)["tasks.md"]


def render_log(plan: Plan) -> str:
    """``execution-log.md`` in the implementation phase with one progress entry."""
    return (
        front_matter(
            type="execution-log",
            workItem=f'"{plan.work_item}"',
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


def render_item(plan: Plan, mode: str = "approved") -> dict[str, str]:
    """The files of one work item, relative to the repository root.

    A draft item has no execution log: `loop execute-tasks` starts one when the
    item enters implementation.
    """
    spec = f"docs/specs/{plan.work_item}"
    files = {f"{spec}/{name}": text for name, text in render_artifacts(plan, mode).items()}
    if mode != "draft":
        files[f"{spec}/execution-log.md"] = render_log(plan)
    return files


def render_repo(plan: Plan, mode: str = "approved") -> dict[str, str]:
    """Every file of one benchmark repository: ``{relative path: text}``."""
    return {".the-loop/config.yaml": 'version: "0.1.0"\n', **render_item(plan, mode)}


def write_files(root: Path, files: dict[str, str]) -> None:
    """Write ``{relative path: text}`` under ``root`` as UTF-8 with LF line ends."""
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        # Bytes, not text mode: the output must not depend on the platform's newline.
        target.write_bytes(text.encode("utf-8"))


def write_repo(out_dir: Path, plan: Plan, mode: str = "approved") -> Path:
    """Write one repository under ``out_dir/n-N``; return its root."""
    root = out_dir / f"n-{plan.n}"
    write_files(root, render_repo(plan, mode))
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
    parser.add_argument("--shape", choices=SHAPES, default="random")
    parser.add_argument("--broken", action="store_true", help="inject a cycle and a dangling dep")
    parser.add_argument("--hashes", action="store_true", help="record approval hashes")
    args = parser.parse_args(argv)
    for n in args.n:
        try:
            plan = make_plan(n, args.seed, args.shape, args.broken)
        except ValueError as e:
            parser.error(str(e))
        mode = "hashed" if args.hashes else "approved"
        print(_summary(write_repo(args.out_dir, plan, mode), plan))
    return 0


if __name__ == "__main__":
    sys.exit(main())
