"""Random Kiro and Spec Kit plans: the engine's ready set against the oracle's.

The generator test (``tests/tasks/test_order_generated.py``) draws plans of one shape
per rule. These mix the rules in one file: sub-tasks nested or flat, optional leaves,
checkpoints (also as sub-tasks), stated dependencies beside the order, waves that list
only the first tasks (so the rest keep the file order), ``[P]`` runs across phases
with ``(depends on T…)`` clauses, and ticks anywhere. Each plan is read in-process
(``parse_tasks`` and ``analyze``, for speed) and by ``order_oracle``.

Two shapes are left out because the order rule leaves them open, and
``test_order_oracle_items`` holds them as strict xfails: a wave listing a task below
one it does not list (onboarding-emails), and a checkpoint sub-task beside waves
(payment-refunds).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from order_oracle import KIRO, SPEC_KIT, parse_plan

from the_loop.dag.analysis import analyze
from the_loop.tasks import parse_tasks

SEEDS = range(120)


def _box(rng: random.Random, p: float = 0.4) -> str:
    return "[x]" if rng.random() < p else "[ ]"


def draw_kiro(rng: random.Random) -> str:
    """A Kiro plan: top-level tasks, families, checkpoints, fields, maybe waves."""
    waves = rng.random() < 0.6
    lines = ["# Implementation Plan", ""]
    top: list[str] = []
    for n in range(1, rng.randint(2, 6) + 1):
        checkpoint = n > 1 and rng.random() < 0.15
        family = not checkpoint and rng.random() < 0.5
        star = "*" if not checkpoint and not family and rng.random() < 0.15 else ""
        title = "Checkpoint - Ensure all tests pass" if checkpoint else f"Build part {n}"
        lines.append(f"- {_box(rng)}{star} {n}. {title}")
        top.append(str(n))
        if n > 1 and rng.random() < 0.3:
            lines.append(f"  - _Depends on: {rng.randint(1, n - 1)}_")
        indent = "  " if rng.random() < 0.5 else ""
        for m in range(1, (rng.randint(1, 3) if family else 0) + 1):
            gate = not waves and rng.random() < 0.1
            star = "*" if not gate and rng.random() < 0.25 else ""
            title = "Checkpoint - the part's tests pass" if gate else f"Piece {n}.{m}"
            lines.append(f"{indent}- {_box(rng, 0.5)}{star} {n}.{m} {title}")
    if waves:
        listed = top[: rng.randint(1, len(top))]  # the rest keep the file order
        groups: list[list[str]] = []
        while listed:
            take = rng.randint(1, len(listed))
            groups.append(listed[:take])
            listed = listed[take:]
        block = {"waves": [{"id": i, "tasks": g} for i, g in enumerate(groups)]}
        lines += ["", "## Task Dependency Graph", "", "```json", json.dumps(block), "```"]
    return "\n".join(lines) + "\n"


def draw_spec_kit(rng: random.Random) -> str:
    """A Spec Kit plan: phases, ``[P]`` runs, ``[USn]`` tags, clauses, ticks."""
    lines: list[str] = []
    number = 0
    for phase in range(1, rng.randint(1, 4) + 1):
        lines += ["", f"## Phase {phase}: Stage {phase}", ""]
        for _ in range(rng.randint(1, 4)):
            number += 1
            tags = ("[P] " if rng.random() < 0.5 else "") + (f"[US{phase}] " if phase > 2 else "")
            clause = ""
            if number > 1 and rng.random() < 0.25:
                dep = f"T{rng.randint(1, number - 1):03d}"
                clause = rng.choice((f" (depends on {dep})", f" — depends on {dep}."))
            lines.append(
                f"- {_box(rng, 0.35)} T{number:03d} {tags}Make src/part_{number}.py{clause}"
            )
    return "\n".join(lines).lstrip() + "\n"


def _engine_ready(text: str, path: str) -> set[str]:
    return set(analyze(parse_tasks(text, Path(path))).ready)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_kiro_plans(seed: int) -> None:
    text = draw_kiro(random.Random(seed))
    assert _engine_ready(text, ".kiro/specs/f/tasks.md") == parse_plan(text, KIRO).ready(), text


@pytest.mark.parametrize("seed", SEEDS)
def test_random_spec_kit_plans(seed: int) -> None:
    text = draw_spec_kit(random.Random(seed))
    assert _engine_ready(text, "specs/001-f/tasks.md") == parse_plan(text, SPEC_KIT).ready(), text
