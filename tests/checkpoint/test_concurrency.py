"""Concurrent commands: one lock per project serializes every checkpoint.

Two ``loop task done`` processes are started together. On different ready
tasks both must land (two ticks, two entries, two commits); on the same task
exactly one must, and the other is refused. The races repeat a few times so a
lucky schedule cannot hide a lost update. A command that waits for the lock
longer than ``LOOP_LOCK_TIMEOUT`` gives up and names the holder.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest
from helpers.project import (
    NEXT,
    commits,
    entries_for,
    every_reset_record,
    journal,
    project_copy,
    reset_records,
    snapshot,
    spawn,
    task_states,
)

from the_loop.checkpoint.lock import project_lock
from the_loop.tasks import TaskState

SAME_TASK_ROUNDS = 3  # the interesting race: repeat it, free-running and gated
DIFFERENT_TASK_ROUNDS = 1
GATE_SECONDS = 1.0  # long enough for both children to start and block on the lock


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    """issue-7 in implementation: tasks 1 and 3 ready, 2 waits for 1."""
    return project_copy(tmp_path_factory, tmp_path / "p")


def done_args(task: str, did: str) -> tuple[str, ...]:
    return ("task", "done", "7", task, "--did", did, "--next", NEXT)


def race(
    root: Path, *commands: tuple[str, ...], gated: bool
) -> list[subprocess.CompletedProcess[str]]:
    """Start every command at once, then wait for all of them.

    ``gated``: the test holds the lock while the commands start, so each has
    read tasks.md and planned its checkpoint before any of them may write:
    the schedule where a check made outside the lock would let both through.
    """
    if gated:
        with project_lock(root):
            children = [spawn(root, *args) for args in commands]
            time.sleep(GATE_SECONDS)
    else:
        children = [spawn(root, *args) for args in commands]
    results = []
    for child in children:
        out, err = child.communicate(timeout=60)
        results.append(subprocess.CompletedProcess(child.args, child.returncode, out, err))
    return results


@pytest.mark.slow  # rounds of racing processes
@pytest.mark.parametrize("gated", (False, True), ids=("free", "gated"))
@pytest.mark.parametrize("round_", range(DIFFERENT_TASK_ROUNDS))
def test_two_task_done_on_different_tasks_both_land(
    project: Path, round_: int, gated: bool
) -> None:
    commits_before = len(commits(project))

    results = race(project, done_args("1", "did one"), done_args("3", "did three"), gated=gated)

    assert [r.returncode for r in results] == [0, 0], [r.stderr for r in results]
    states = task_states(project)
    assert (states["1"], states["2"], states["3"]) == (
        TaskState.DONE,
        TaskState.OPEN,
        TaskState.DONE,
    )
    history = commits(project)
    assert len(history) == commits_before + 2
    for task, did in (("1", "did one"), ("3", "did three")):
        (entry,) = entries_for(project, f"task {task} done")
        assert entry.fields["did"] == did
        ck = re.fullmatch(
            r"committed with this entry \(Loop-Checkpoint: (.+)\)", entry.fields["wip"]
        )
        assert ck is not None
        tagged = [m for m in history if f"Loop-Checkpoint: {ck[1]}" in m.splitlines()]
        assert len(tagged) == 1
        assert f"Loop-Task: {task}" in tagged[0].splitlines()
    assert journal(project) is None
    assert [r["mode"] for r in every_reset_record(project)].count("compact") == 2


@pytest.mark.slow  # rounds of racing processes
@pytest.mark.parametrize("gated", (False, True), ids=("free", "gated"))
@pytest.mark.parametrize("round_", range(SAME_TASK_ROUNDS))
def test_two_task_done_on_the_same_task_exactly_one_lands(
    project: Path, round_: int, gated: bool
) -> None:
    commits_before = len(commits(project))

    results = race(
        project, done_args("1", "first agent"), done_args("1", "second agent"), gated=gated
    )

    codes = sorted(r.returncode for r in results)
    assert codes == [0, 1], [r.stderr for r in results]
    (winner,) = [r for r in results if r.returncode == 0]
    (loser,) = [r for r in results if r.returncode == 1]
    assert loser.stderr.splitlines()[0] == "error: task 1 is already done"
    assert loser.stdout == ""
    assert "reset:" in winner.stdout
    (entry,) = entries_for(project, "task 1 done")
    assert entry.fields["did"] == ("first agent" if results[0] is winner else "second agent")
    assert len(commits(project)) == commits_before + 1
    assert task_states(project)["1"] is TaskState.DONE
    assert journal(project) is None
    assert len(reset_records(project)) == 1


@pytest.mark.slow
def test_waiting_longer_than_the_timeout_fails_and_names_the_holder(project: Path) -> None:
    before = snapshot(project)
    with project_lock(project):
        started = time.monotonic()
        child = spawn(project, *done_args("1", "did one"), env={"LOOP_LOCK_TIMEOUT": "1"})
        out, err = child.communicate(timeout=60)
        waited = time.monotonic() - started

    assert child.returncode == 1
    assert out == ""
    lines = err.splitlines()
    assert re.fullmatch(
        r"error: (?:.*/)?\.the-loop/state/lock: another loop command "
        rf"holds this project's lock \(pid {os.getpid()}, since \d\d:\d\d:\d\d(: loop .*)?\); "
        r"gave up after 1s",
        lines[0],
    ), lines[0]
    assert lines[-1] == (
        "hint: wait for it to finish and run the command again "
        "(LOOP_LOCK_TIMEOUT sets how long to wait)"
    )
    assert waited >= 1.0  # it did wait out LOOP_LOCK_TIMEOUT (communicate() bounds a hang)
    after = snapshot(project)
    for key in ("tasks", "log", "index", "head", "resets"):
        assert after[key] == before[key], key
    assert journal(project) is None


@pytest.mark.slow
def test_waiting_within_the_timeout_gets_the_lock(project: Path) -> None:
    with project_lock(project):
        child = spawn(project, *done_args("1", "did one"), env={"LOOP_LOCK_TIMEOUT": "30"})
        time.sleep(0.8)
        assert child.poll() is None, "the command must wait for the lock, not skip it"
    out, err = child.communicate(timeout=60)

    assert child.returncode == 0, err
    assert "reset: compact" in out
    assert task_states(project)["1"] is TaskState.DONE
