"""Kiro and Spec Kit task lists: what ``loop`` reports, checked against a second reader.

The items under ``tests/oracle/items/`` are written for this test in the layouts the
formats use (``kiro/.kiro/specs/<feature>/tasks.md``, ``spec-kit/specs/NNN-feature/
tasks.md``), each project with a two-line ``.the-loop/config.yaml`` naming its spec
folder, so ``loop -C tests/oracle/items/kiro graph csv-import`` works by hand too.

For every item the real CLI runs in-process (the ``loop`` fixture; ``--no-cache``, so
nothing is written into the tree) and ``order_oracle`` reads the file from the order
rule of ``docs/formats.md``, sharing no code with ``the_loop``. Checks, each its own
test:

* ``tasks``: the same task ids, in file order.
* ``done``: the same done flags (a parent is done exactly when its required sub-tasks are).
* ``edges``: the same order, compared as reachability (loop may draw ``1 → 3`` beside
  ``1 → 2 → 3``); a stated edge loop lacks must carry a loop finding on its line.
* ``held``: the tasks loop holds back for good (``unschedulable``) are the ones the
  oracle holds back (an unread statement, a wave naming an unknown task).
* ``ready``: ``next --all-ready`` offers only tasks the oracle says may start, and
  all of them unless the item is in ``AMBIGUOUS``; ``graph``'s ready set is the same.
* ``optional``: the open optional tasks are not counted in ``next``'s total, and rank
  after the required tasks ready beside them.

Two more tests work on a temporary copy of each item: one unticks every box (with
nothing done, only the first tasks of the order may start); the other plays the
parallel runner, ticking every task ``next --all-ready`` offers, and compares the
ready set at every step until the plan is done or nothing more may start. A last one
ticks each item's boxes at random, 40 times, and compares the engine's ready set
(``parse_tasks`` and ``analyze`` in-process, for speed) with the oracle's.

A difference goes into ``GAPS`` as a strict ``xfail`` with its reason, so this file
documents it; when loop is fixed the XPASS fails and the mark goes.
"""

from __future__ import annotations

import json
import random
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from order_oracle import Plan, closure, detect, parse_plan, read_plan

from the_loop.dag.analysis import analyze
from the_loop.tasks import parse_tasks

ITEMS_ROOT = Path(__file__).resolve().parent / "items"
PROJECTS = {"kiro": ".kiro/specs", "spec-kit": "specs"}
TICK_PATTERNS = 40  # random tick states per item, read in-process

# (item, check) → why loop differs from the oracle today, as a strict xfail.
# Fixed since the first run: Spec Kit's `(depends on T003)` kept its `)` and held the
# task back for good (002-cli-export); a task the waves leave out waited only for the
# one just above it (docs-site); a task a wave lists did not wait for an unlisted task
# above it (onboarding-emails); a checkpoint sub-task gated only its parent's work, so
# the waves let the task below it start (payment-refunds).
GAPS: dict[tuple[str, str], str] = {}

# item → why its ready set is only checked to be safe (a subset), not equal.
AMBIGUOUS: dict[str, str] = {}

Runner = Callable[..., Any]  # the ``loop`` fixture: (*args) -> Result(exit_code, stdout, …)


@dataclass(frozen=True)
class Item:
    """One work item of one of the two projects under ``items/``."""

    project: str
    name: str

    @property
    def root(self) -> Path:
        return ITEMS_ROOT / self.project

    @property
    def tasks(self) -> Path:
        return self.root / PROJECTS[self.project] / self.name / "tasks.md"

    def copied(self, tmp_path: Path) -> tuple[Path, Path]:
        """A copy of the item's project under ``tmp_path``, and its tasks.md there."""
        repo = tmp_path / self.project
        shutil.copytree(self.root, repo)
        return repo, repo / self.tasks.relative_to(self.root)


def _items() -> list[Item]:
    return [
        Item(project, p.name)
        for project, spec_dir in PROJECTS.items()
        for p in sorted((ITEMS_ROOT / project / spec_dir).iterdir())
        if (p / "tasks.md").is_file()
    ]


ITEMS = _items()


def _params(checks: tuple[str, ...]) -> list[Any]:
    out = []
    for item in ITEMS:
        for check in checks:
            gap = GAPS.get((item.name, check))
            marks = [pytest.mark.xfail(reason=gap, strict=True)] if gap else []
            out.append(pytest.param(item, check, id=f"{item.name}-{check}", marks=marks))
    return out


@dataclass(frozen=True)
class Answers:
    """What loop says about one item: ``graph --json``, ``next --all-ready --json``, findings."""

    graph: dict[str, Any]
    next: dict[str, Any]
    findings: dict[int, list[str]]  # line → codes of the task and DAG warnings and errors


_ANSWERS: dict[tuple[Path, str], Answers] = {}


def ask_loop(loop: Runner, root: Path, name: str) -> Answers:
    """Run the three commands once per project and item (the CLI is deterministic)."""
    key = (root, name)
    if key not in _ANSWERS:
        base = ("--no-cache", "-C", str(root), "--json")
        graph = loop(*base, "graph", name)
        assert graph.exit_code == 0, graph.output
        nxt = loop(*base, "next", name, "--all-ready")
        assert nxt.exit_code in (0, 1), nxt.output
        check = loop(*base, "check", name)
        findings: dict[int, list[str]] = {}
        for f in json.loads(check.stdout)["findings"]:
            if f["level"] in ("warning", "error") and f["code"].startswith(("tasks.", "dag.")):
                findings.setdefault(f.get("line") or 0, []).append(f["code"])
        _ANSWERS[key] = Answers(json.loads(graph.stdout), json.loads(nxt.stdout), findings)
    return _ANSWERS[key]


def held_back(plan: Plan) -> set[str]:
    """Tasks that can never start while the file reads as it does."""
    held = {u.task for u in plan.unread}
    known = set(plan.ids)
    return {
        t
        for t in plan.ids
        if t in held or any(d not in known or d in held for d in plan.waits_for(t))
    }


def same_tasks(plan: Plan, got: Answers, ambiguous: bool) -> list[str]:
    """The same task ids, in file order."""
    ids = [t["id"] for t in sorted(got.graph["tasks"], key=lambda t: t["line"])]
    return [] if ids == plan.ids else [f"loop {ids} != oracle {plan.ids}"]


def same_done(plan: Plan, got: Answers, ambiguous: bool) -> list[str]:
    """The same done flags (``state`` is ``done``)."""
    loop_done = {t["id"]: t["state"] == "done" for t in got.graph["tasks"]}
    flips = sorted(k for k, v in plan.done().items() if loop_done.get(k) != v)
    return [f"done flag differs for {flips}"] if flips else []


def same_order(plan: Plan, got: Answers, ambiguous: bool) -> list[str]:
    """The same reachability; what loop leaves out, it reports at the stating line."""
    theirs = closure(plan.ids, {(a, b) for a, b in got.graph["edges"]})
    ours = closure(plan.ids, plan.known_edges())
    reported = got.findings.keys()
    out = []
    if extra := sorted(theirs - ours):
        out.append(f"loop orders pairs the rule does not: {extra}")
    if missing := [p for p in sorted(ours - theirs) if not plan.stated.get(p, set()) & reported]:
        out.append(f"the rule orders pairs loop does not (no finding on their line): {missing}")
    wave_lines = set(plan.wave_lines)
    if silent := [
        p
        for p in sorted(plan.dangling())
        if not (plan.stated.get(p, set()) | wave_lines) & reported
    ]:
        out.append(f"edges from tasks the file does not list, unreported: {silent}")
    if unread := [u.line for u in plan.unread if u.line not in reported]:
        out.append(f"statements the oracle cannot read, unreported by loop: lines {unread}")
    return out


def same_held(plan: Plan, got: Answers, ambiguous: bool) -> list[str]:
    """The same tasks held back for good (``unschedulable``)."""
    theirs, ours = set(got.graph["unschedulable"]), held_back(plan)
    return [] if theirs == ours else [f"held back: loop {sorted(theirs)}, oracle {sorted(ours)}"]


def safe_ready(plan: Plan, got: Answers, ambiguous: bool) -> list[str]:
    """Only tasks that may start are offered; all of them where the rule is unambiguous."""
    offered = [t["id"] for t in got.next["ready"]]
    out = []
    if unsafe := sorted(set(offered) - plan.ready()):
        out.append(f"offered before it may start: {unsafe}")
    if not ambiguous and (withheld := sorted(plan.ready() - set(offered))):
        out.append(f"may start but not offered: {withheld}")
    if set(got.graph["ready"]) != set(offered):
        out.append(f"graph ready {sorted(got.graph['ready'])} != next ready {sorted(offered)}")
    return out


def optional_last(plan: Plan, got: Answers, ambiguous: bool) -> list[str]:
    """Open optional tasks are not counted, and rank after required ready work."""
    out = []
    counted = len(got.graph["tasks"]) - plan.optional_open()
    if got.next["total"] != counted:
        out.append(f"next counts {got.next['total']} tasks, the oracle {counted} required")
    optional = {t.id for t in plan.tasks if t.optional}
    offered = [t["id"] for t in got.next["ready"]]
    ranks = [i in optional for i in offered]
    if ranks != sorted(ranks):
        out.append(f"an optional task ranks before required work: {offered}")
    return out


Check = Callable[[Plan, Answers, bool], list[str]]
CHECKS: dict[str, Check] = {
    "tasks": same_tasks,
    "done": same_done,
    "edges": same_order,
    "held": same_held,
    "ready": safe_ready,
    "optional": optional_last,
}


def differences(check: str, plan: Plan, got: Answers, *, ambiguous: bool) -> list[str]:
    """How loop's answers differ from the oracle's for ``check``; empty when they agree."""
    return CHECKS[check](plan, got, ambiguous)


def test_there_are_enough_items_of_each_format() -> None:
    assert len([i for i in ITEMS if i.project == "kiro"]) >= 6
    assert len([i for i in ITEMS if i.project == "spec-kit"]) >= 6
    assert set(AMBIGUOUS) | {name for name, _ in GAPS} <= {i.name for i in ITEMS}


@pytest.mark.parametrize(("item", "check"), _params(tuple(CHECKS)))
def test_loop_agrees_with_the_oracle(loop: Runner, item: Item, check: str) -> None:
    plan = read_plan(item.tasks)
    got = ask_loop(loop, item.root, item.name)
    assert differences(check, plan, got, ambiguous=item.name in AMBIGUOUS) == []


_TICKED = re.compile(r"^(\s*[-*+]\s+)\[[xX]\]", re.MULTILINE)


@pytest.mark.parametrize(("item", "check"), _params(("unticked",)))
def test_with_nothing_ticked_only_the_first_tasks_may_start(
    loop: Runner, item: Item, check: str, tmp_path: Path
) -> None:
    repo, tasks = item.copied(tmp_path)
    tasks.write_text(_TICKED.sub(r"\1[ ]", tasks.read_text(encoding="utf-8")), encoding="utf-8")
    plan = read_plan(tasks)
    assert not any(plan.done().values())
    got = ask_loop(loop, repo, item.name)
    assert differences("ready", plan, got, ambiguous=item.name in AMBIGUOUS) == []


_BOX = re.compile(r"\[[ \-]\]")


def tick(path: Path, lines: list[int]) -> None:
    """Tick the boxes on ``lines`` of ``path`` (one character each)."""
    text = path.read_text(encoding="utf-8").split("\n")
    for n in lines:
        text[n - 1] = _BOX.sub("[x]", text[n - 1], count=1)
    path.write_text("\n".join(text), encoding="utf-8")


@pytest.mark.parametrize(("item", "check"), _params(("walk",)))
def test_ticking_what_loop_offers_walks_the_plan_in_the_rule_s_order(
    loop: Runner, item: Item, check: str, tmp_path: Path
) -> None:
    repo, tasks = item.copied(tmp_path)
    ambiguous = item.name in AMBIGUOUS
    for step in range(len(read_plan(tasks).ids) + 1):
        plan = read_plan(tasks)
        res = loop("--no-cache", "-C", str(repo), "--json", "next", item.name, "--all-ready")
        assert res.exit_code in (0, 1), res.output
        offered = {t["id"]: t["line"] for t in json.loads(res.stdout)["ready"]}
        assert set(offered) <= plan.ready(), f"step {step}: {sorted(offered)}"
        assert ambiguous or set(offered) == plan.ready(), f"step {step}: {sorted(offered)}"
        if not offered:
            break
        tick(tasks, list(offered.values()))
    done = plan.done()
    left = {t.id for t in plan.tasks if not t.optional and not done[t.id]}
    assert left == held_back(plan) & left, f"never offered: {sorted(left - held_back(plan))}"


def _tick_pattern(text: str, rng: random.Random) -> str:
    """Every box of ``text`` ticked or opened at random (optional marks kept)."""
    return _ANY_BOX.sub(lambda m: m.group(1) + ("[x]" if rng.random() < 0.5 else "[ ]"), text)


_ANY_BOX = re.compile(r"^(\s*[-*+]\s+)\[[ xX-]\]", re.MULTILINE)


@pytest.mark.parametrize(("item", "check"), _params(("ticks",)))
def test_random_ticks_never_open_a_task_the_rule_holds_back(item: Item, check: str) -> None:
    """Ticks in any order (a parent before its sub-tasks, a later task before an earlier
    one): the engine's ready set, read in-process for speed, stays the oracle's."""
    text = item.tasks.read_text(encoding="utf-8")
    where = item.tasks.relative_to(item.root)
    rng = random.Random(item.name)
    for _ in range(TICK_PATTERNS):
        ticked = _tick_pattern(text, rng)
        plan = parse_plan(ticked, detect(item.tasks))
        ready = set(analyze(parse_tasks(ticked, where)).ready)
        assert ready <= plan.ready(), ticked
        assert item.name in AMBIGUOUS or ready == plan.ready(), ticked
