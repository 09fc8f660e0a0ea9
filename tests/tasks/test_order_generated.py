"""Generated plans against an independent statement of the order rule.

Each case is a plan model (tasks, sub-tasks, optional tasks, checkpoints, phases,
``[P]`` and cc-sdd's `` (P)`` runs, waves, ticks, checkbox lines that are no task)
drawn from a seeded generator and written out in one of
the forms each format uses (nested or flat sub-tasks, several checkpoint and tick
spellings, fields or waves). The expected ready set is worked out here from the
rule as docs/formats.md states it, in a different shape from the engine's (a
"work order" and a look back over it, not edges), and ``loop`` must give exactly
that set: a task it offers that the rule holds back is two agents on dependent work.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from the_loop.dag.analysis import analyze
from the_loop.tasks import parse_tasks

CASES = 120


@dataclass
class Node:
    """One task of a plan model."""

    id: str
    done: bool = False
    optional: bool = False
    checkpoint: bool = False
    parallel: bool = False
    phase: int = 0
    children: list[Node] = field(default_factory=list)


def effective_done(node: Node) -> bool:
    required = [c for c in node.children if not c.optional]
    return all(effective_done(c) for c in required) if required else node.done


def work_order(nodes: list[Node]) -> list[Node]:
    """Sub-tasks first, then their parent: the order Kiro works a plan in."""
    out: list[Node] = []
    for node in nodes:
        out += work_order(node.children)
        out.append(node)
    return out


def workable(node: Node) -> bool:
    """A parent with required sub-tasks is never work of its own."""
    return not any(not c.optional for c in node.children)


def sequential_ready(top: list[Node]) -> set[str]:
    """Kiro without waves: a task may start when every required task before it is done."""
    ready, blocked = set(), False
    for node in work_order(top):
        if workable(node) and not effective_done(node) and not blocked:
            ready.add(node.id)
        if not node.optional and not effective_done(node):
            blocked = True
    return ready


def spec_kit_ready(top: list[Node]) -> set[str]:
    """Phases in order; in a phase, a `[P]` run waits only for what precedes the run."""
    ready: set[str] = set()
    open_before = False  # a required task before the current run is open
    open_in_run = False
    phase = top[0].phase if top else 0
    for node in top:
        if node.phase != phase or not node.parallel:
            open_before = open_before or open_in_run
            open_in_run = False
            phase = node.phase
        if not node.done and not open_before:
            ready.add(node.id)
        if not node.optional and not node.done:
            if node.parallel:
                open_in_run = True
            else:
                open_before = True
    return ready


def wave_ready(top: list[Node], waves: list[list[str]]) -> set[str]:
    by_id = {n.id: n for n in top}
    ready: set[str] = set()
    for wave in waves:
        nodes = [by_id[i] for i in wave]
        ready |= {n.id for n in nodes if not n.done}
        if any(not n.done and not n.optional for n in nodes):
            break
    return ready


def fields_ready(top: list[Node], deps: dict[str, list[str]]) -> set[str]:
    """the-loop: stated dependencies; a checkpoint waits for every task above it, and a
    task below a checkpoint waits for it and for everything it waits for."""
    by_id = {n.id: n for n in top}
    ready: set[str] = set()
    gate: Node | None = None
    for at, node in enumerate(top):
        waits = [by_id[d] for d in deps[node.id]]
        if node.checkpoint or gate is not None:
            limit = at if node.checkpoint else top.index(gate)  # type: ignore[arg-type]
            waits += [n for n in top[:limit] if not n.optional]
        if gate is not None:
            waits.append(gate)
        if not node.done and all(w.done for w in waits):
            ready.add(node.id)
        if node.checkpoint:
            gate = node
    return ready


# --- drawing a plan ---------------------------------------------------------


def draw_kiro(rng: random.Random) -> list[Node]:
    top = []
    for n in range(1, rng.randint(2, 6) + 1):
        node = Node(str(n), done=rng.random() < 0.4, checkpoint=n > 1 and rng.random() < 0.2)
        if not node.checkpoint and rng.random() < 0.5:
            for m in range(1, rng.randint(1, 4) + 1):
                node.children.append(
                    Node(f"{n}.{m}", done=rng.random() < 0.5, optional=rng.random() < 0.25)
                )
        top.append(node)
    return top


def draw_spec_kit(rng: random.Random) -> list[Node]:
    top, number = [], 0
    for phase in range(1, rng.randint(1, 4) + 1):
        for _ in range(rng.randint(1, 4)):
            number += 1
            top.append(
                Node(
                    str(number),
                    done=rng.random() < 0.35,
                    parallel=rng.random() < 0.5,
                    phase=phase,
                )
            )
    return top


# --- writing it out ---------------------------------------------------------

_CHECKPOINTS = (
    "Checkpoint - Ensure all tests pass, ask the user if questions arise.",
    "Checkpoint: every test passes",
    "**Checkpoint** — run the suite",
)


def box(node: Node, rng: random.Random) -> str:
    mark = rng.choice("xX") if node.done else " "
    return f"[{mark}]" + ("*" if node.optional else "")


def write_kiro(top: list[Node], rng: random.Random, *, nested: bool) -> str:
    lines = ["# Implementation Plan", ""]
    for node in top:
        title = rng.choice(_CHECKPOINTS) if node.checkpoint else f"Build part {node.id}"
        lines.append(f"- {box(node, rng)} {node.id}. {title}")
        lines.append(f"  - _Requirements: {node.id}.1_")
        for child in node.children:
            indent = "  " if nested else ""
            lines.append(f"{indent}- {box(child, rng)} {child.id} Piece {child.id}")
            lines.append(f"{indent}  - detail of {child.id}")
    return "\n".join(lines) + "\n"


def write_spec_kit(top: list[Node], rng: random.Random) -> str:
    lines: list[str] = []
    phase = 0
    for node in top:
        if node.phase != phase:
            phase = node.phase
            lines += ["", f"## Phase {phase}: Stage {phase}", ""]
        tags = ("[P] " if node.parallel else "") + (f"[US{phase}] " if phase > 2 else "")
        mark = "x" if node.done else " "
        lines.append(f"- [{mark}] T{int(node.id):03d} {tags}Make src/part_{node.id}.py")
    return "\n".join(lines).lstrip() + "\n"


def write_waves(top: list[Node], waves: list[list[str]]) -> str:
    lines = ["# Implementation Plan", ""]
    lines += [f"- [{'x' if n.done else ' '}] {n.id}. Part {n.id}" for n in top]
    graph = {"waves": [{"id": i, "tasks": wave} for i, wave in enumerate(waves)]}
    lines += ["", "## Task Dependency Graph", "", "```json", json.dumps(graph), "```"]
    return "\n".join(lines) + "\n"


def write_fields(top: list[Node], deps: dict[str, list[str]]) -> str:
    lines = ["---", "type: tasks", "status: draft", "---", ""]
    for n in top:
        title = "Checkpoint: all tests pass" if n.checkpoint else f"Part {n.id}"
        lines.append(f"- [{'x' if n.done else ' '}] {n.id}. {title}")
        lines.append(f"  - _Depends on:_ {', '.join(deps[n.id]) or 'none'}")
    return "\n".join(lines) + "\n"


def ready_of(text: str, path: str) -> set[str]:
    return set(analyze(parse_tasks(text, Path(path))).ready)


@pytest.mark.parametrize("seed", range(CASES))
def test_kiro_plans_nested_and_flat(seed: int) -> None:
    rng = random.Random(seed)
    top = draw_kiro(rng)
    expected = sequential_ready(top)
    for nested in (True, False):
        text = write_kiro(top, rng, nested=nested)
        assert ready_of(text, ".kiro/specs/f/tasks.md") == expected, text
    # the same plan outside .kiro/ is still read as Kiro's (it writes Kiro's forms)
    assert ready_of(write_kiro(top, rng, nested=True), "docs/specs/f/tasks.md") == expected


@pytest.mark.parametrize("seed", range(CASES))
def test_spec_kit_plans_with_phases_and_parallel_runs(seed: int) -> None:
    rng = random.Random(seed)
    top = draw_spec_kit(rng)
    text = write_spec_kit(top, rng)
    assert ready_of(text, "specs/001-f/tasks.md") == spec_kit_ready(top), text


def draw_waves(rng: random.Random) -> tuple[list[Node], list[list[str]]]:
    """Top-level Kiro tasks, some ticked, cut into waves in file order."""
    top = [Node(str(n), done=rng.random() < 0.4) for n in range(1, rng.randint(2, 8) + 1)]
    ids = [n.id for n in top]
    waves: list[list[str]] = []
    while ids:
        take = rng.randint(1, len(ids))
        waves.append(ids[:take])
        ids = ids[take:]
    return top, waves


@pytest.mark.parametrize("seed", range(CASES // 2))
def test_kiro_plans_with_waves(seed: int) -> None:
    top, waves = draw_waves(random.Random(seed))
    text = write_waves(top, waves)
    assert ready_of(text, ".kiro/specs/f/tasks.md") == wave_ready(top, waves), text


@pytest.mark.parametrize("seed", range(CASES // 2))
def test_the_loop_plans_with_fields_and_checkpoints(seed: int) -> None:
    rng = random.Random(seed)
    top = [
        Node(str(n), done=rng.random() < 0.5, checkpoint=n > 2 and rng.random() < 0.2)
        for n in range(1, rng.randint(2, 8) + 1)
    ]
    deps = {
        n.id: sorted({rng.choice(top[:i]).id for _ in range(rng.randint(0, 2))} if i else set())
        for i, n in enumerate(top)
    }
    text = write_fields(top, deps)
    assert ready_of(text, "docs/specs/issue-1/tasks.md") == fields_ready(top, deps), text


# --- cc-sdd's (P) runs and lines that are no task -----------------------------


def kiro_ready(nodes: list[Node], blocked: bool = False) -> tuple[set[str], bool]:
    """Kiro's order with cc-sdd's ` (P)`: the ready ids, and whether required work is open.

    Siblings go in file order; a run of ` (P)` siblings waits only for what came before
    the run, and the next plain sibling waits for the whole run. A parent is never work
    of its own: its sub-tasks are, starting when the parent could. A node without an id
    (a checkbox loop cannot read) is never ready, and while open it holds back every
    node after it, as a required task would.
    """
    ready: set[str] = set()
    before = False  # required work before the current run is open
    in_run = False  # required work of the current run is open
    for node in nodes:
        if not node.parallel:
            before, in_run = before or in_run, False
        held = blocked or before
        if node.id.startswith("?"):  # no id: never offered, open unless ticked
            open_required = not node.done
        elif workable(node):  # (its sub-tasks, if any, are optional: offered, never waited for)
            ready |= kiro_ready(node.children, held)[0]
            if not node.done and not held:
                ready.add(node.id)
            open_required = not node.optional and not node.done
        else:
            kids, kids_open = kiro_ready(node.children, held)
            ready |= kids
            open_required = not node.optional and kids_open
        if node.parallel:
            in_run = in_run or open_required
        else:
            before = before or open_required
    return ready, before or in_run


def draw_cc_sdd(rng: random.Random) -> list[Node]:
    """Top tasks and sub-tasks, some marked ` (P)`, with id-less checkbox lines between."""
    top: list[Node] = []
    for n in range(1, rng.randint(2, 6) + 1):
        if rng.random() < 0.2:
            top.append(Node(f"?{n}", done=rng.random() < 0.5))
        node = Node(str(n), done=rng.random() < 0.4, parallel=rng.random() < 0.3)
        if rng.random() < 0.5:
            for m in range(1, rng.randint(1, 4) + 1):
                node.children.append(
                    Node(
                        f"{n}.{m}",
                        done=rng.random() < 0.5,
                        optional=rng.random() < 0.2,
                        parallel=rng.random() < 0.5,
                    )
                )
        top.append(node)
    return top


def write_cc_sdd(top: list[Node], rng: random.Random) -> str:
    lines = ["# Implementation Plan", ""]
    for node in top:
        if node.id.startswith("?"):
            lines.append(f"- {box(node, rng)} Remember the release notes")  # no id: no task
            continue
        marker = " (P)" if node.parallel else ""
        lines.append(f"- {box(node, rng)} {node.id}. Build part {node.id}{marker}")
        for child in node.children:
            marker = " (P)" if child.parallel else ""
            lines.append(f"- {box(child, rng)} {child.id} Piece {child.id}{marker}")
            lines.append(f"  - _Requirements: {child.id}_")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(CASES))
def test_cc_sdd_plans_with_parallel_markers_and_unread_lines(seed: int) -> None:
    rng = random.Random(seed)
    top = draw_cc_sdd(rng)
    text = write_cc_sdd(top, rng)
    assert ready_of(text, ".kiro/specs/f/tasks.md") == kiro_ready(top)[0], text
