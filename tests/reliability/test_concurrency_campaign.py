"""Campaign: eight ``task done`` at once, twenty rounds; and eight on the same task.

tests/checkpoint/test_concurrency.py races two processes a few times. Here
eight run together: on eight different tasks for 20 rounds (every update
must land: eight ticks, eight entries, eight commits), and on one task (one
lands, seven are refused with a clear message). Half the rounds are gated:
the test holds the lock while all eight start, so each plans against the same
files before any may write. No process may hang (deadlock) or fail otherwise.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.project import (
    NEXT,
    Spec,
    commits,
    entries,
    journal,
    project_copy,
    spawn,
    task_states,
)

from the_loop.checkpoint.lock import project_lock
from the_loop.tasks import TaskState

pytestmark = [pytest.mark.slow, pytest.mark.campaign]

WIDTH = 8
ROUNDS = 20
SAME_TASK_ROUNDS = 4
GATE_SECONDS = 1.5


def done_args(task: int, did: str) -> tuple[str, ...]:
    return ("task", "done", "7", str(task), "--did", did, "--next", NEXT)


def race(root: Path, commands: list[tuple[str, ...]], *, gated: bool) -> list[tuple[int, str]]:
    """Start every command at once; wait for all (a hang fails the test)."""
    if gated:
        with project_lock(root):
            children = [spawn(root, *args) for args in commands]
            time.sleep(GATE_SECONDS)
    else:
        children = [spawn(root, *args) for args in commands]
    results = []
    for child in children:
        try:
            _out, err = child.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            for other in children:
                other.kill()
            raise AssertionError("a task done hung: deadlock?") from None
        results.append((child.returncode, err))
    return results


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    count = WIDTH * (ROUNDS + SAME_TASK_ROUNDS)
    tasks = tuple(Spec(str(i), f"step {i}") for i in range(1, count + 1))
    return project_copy(tmp_path_factory, tmp_path / "p", tasks=tasks)


def test_eight_at_once_lose_no_update(
    project: Path, record_property: Callable[[str, object], None]
) -> None:
    landed = 0
    started = time.monotonic()
    for round_ in range(ROUNDS):
        tasks = range(round_ * WIDTH + 1, (round_ + 1) * WIDTH + 1)
        results = race(project, [done_args(t, f"did {t}") for t in tasks], gated=round_ % 2 == 1)
        assert [code for code, _ in results] == [0] * WIDTH, [err for _, err in results]
        landed += WIDTH
        states = task_states(project)
        found = {e.summary: e for e in entries(project)}
        history = commits(project)
        for task in tasks:
            assert states[str(task)] is TaskState.DONE
            assert found[f"task {task} done: step {task}"].fields["did"] == f"did {task}"
            assert sum(f"Loop-Task: {task}" in m.splitlines() for m in history) == 1
        assert journal(project) is None
    elapsed = time.monotonic() - started
    total_entries = sum(e.summary.startswith("task ") for e in entries(project))
    assert total_entries == landed
    record_property(
        "campaign",
        f"concurrency, different tasks: {ROUNDS} rounds x {WIDTH} processes = {landed} "
        f"task done, {landed} ticks, entries and commits, 0 lost, 0 hangs ({elapsed:.0f}s)",
    )

    refused = 0
    for round_ in range(SAME_TASK_ROUNDS):
        task = (ROUNDS + round_) * WIDTH + 1
        commands = [done_args(task, f"agent {n}") for n in range(WIDTH)]
        results = race(project, commands, gated=round_ % 2 == 1)
        winners = [n for n, (code, _) in enumerate(results) if code == 0]
        losers = [err for code, err in results if code != 0]
        assert len(winners) == 1, results
        assert all(code in (0, 1) for code, _ in results), results
        for err in losers:
            assert err.splitlines()[0] == f"error: task {task} is already done", err
            assert re.search(r"^hint: `loop next issue-7` shows what is left$", err, re.M)
        refused += len(losers)
        (entry,) = [e for e in entries(project) if e.summary == f"task {task} done: step {task}"]
        assert entry.fields["did"] == f"agent {winners[0]}"
        assert sum(f"Loop-Task: {task}" in m.splitlines() for m in commits(project)) == 1
        assert journal(project) is None
    record_property(
        "campaign",
        f"concurrency, same task: {SAME_TASK_ROUNDS} rounds x {WIDTH} processes: "
        f"{SAME_TASK_ROUNDS} landed once each, {refused} refused with "
        "'task N is already done', 0 hangs",
    )
