"""Campaign: ``task done`` SIGKILLed at random moments, each followed by the next command.

Unlike tests/checkpoint/test_checkpoint_crash.py, which kills at each named
step, the kills here land wherever the clock says: during start-up, inside a
write, inside ``git commit``, during the recovery of the previous kill. A third
land anywhere in the run; the rest within 0.3 s of the checkpoint's journal
appearing, so that most of those hit the checkpoint itself. After
each one the next ``task done`` (on another task) must succeed, and then:
every file parses; each task is ticked exactly when it has exactly one log
entry and exactly one commit; no journal, restore copy, temporary file or
staging folder is left; the index matches HEAD and the tree is clean.
"""

from __future__ import annotations

import random
import signal
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.project import (
    NEXT,
    STATE,
    Spec,
    commits,
    entries,
    git,
    journal,
    project_copy,
    run,
    spawn,
    task_states,
)

from the_loop.tasks import TaskState

pytestmark = [pytest.mark.slow, pytest.mark.campaign]

KILLS = 100  # kills that land on a running process
TASKS = 26  # per project: 13 kills, each followed by a clean task done
SEED = 1414
INDEPENDENT = tuple(Spec(str(i), f"step {i}") for i in range(1, TASKS + 1))


def done_args(task: int) -> tuple[str, ...]:
    return ("task", "done", "7", str(task), "--did", f"did step {task}", "--next", NEXT)


def kill_after(
    root: Path, args: tuple[str, ...], delay: float, *, after_journal: bool = False
) -> tuple[int, float]:
    """Start ``loop args…`` and SIGKILL it ``delay`` seconds later — counted from the
    moment its checkpoint journal appears, with ``after_journal``. Returns the
    return code and how long the command ran."""
    started = time.monotonic()
    child = spawn(root, *args)
    if after_journal:
        while child.poll() is None and not (root / STATE / "checkpoint.json").exists():
            time.sleep(0.003)
    try:
        child.wait(delay)
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGKILL)
    child.communicate(timeout=60)
    return child.returncode, time.monotonic() - started


def check(root: Path, upto: int) -> None:
    """The invariants after a kill and the command that followed it."""
    assert journal(root) is None
    states = task_states(root)  # parses, or fails the test
    found = entries(root)  # parses too
    history = commits(root)
    for task in range(1, upto + 1):
        ticked = states[str(task)] is TaskState.DONE
        logged = sum(e.summary == f"task {task} done: step {task}" for e in found)
        committed = sum(f"Loop-Task: {task}" in m.splitlines() for m in history)
        assert (logged, committed) == ((1, 1) if ticked else (0, 0)), (task, ticked)
    debris = [p for p in root.rglob("*") if ".git" not in p.parts and p.name.endswith(".tmp")]
    assert debris == [], debris
    assert list((root / STATE).glob("*.orig")) == []
    assert not (root / STATE / "kept").exists()
    staging = [p for p in (root / "docs/specs").iterdir() if p.name.startswith(".")]
    assert staging == []
    assert git(root, "status", "--porcelain") == ""
    assert git(root, "diff", "--cached", "--name-only") == ""


def test_random_kills_lose_and_duplicate_nothing(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    hermetic_env: Path,
    record_property: Callable[[str, object], None],
) -> None:
    rng = random.Random(SEED)
    timing = project_copy(tmp_path_factory, tmp_path / "timing", tasks=INDEPENDENT)
    durations = [kill_after(timing, done_args(task), 120)[1] for task in (1, 2, 3)]

    landed = sent = projects = rounds = interrupted = 0
    while landed < KILLS and sent < 4 * KILLS:  # faster runs miss more kills
        projects += 1
        root = project_copy(tmp_path_factory, tmp_path / f"p{projects}", tasks=INDEPENDENT)
        for task in range(1, TASKS, 2):
            if landed >= KILLS:
                break
            # A third of the kills anywhere in the run; the rest while the checkpoint
            # itself writes (from its journal's appearance, for about 0.3 s).
            if rng.random() < 1 / 3:
                delay = rng.uniform(0.0, statistics.median(durations[-9:]))
                code, took = kill_after(root, done_args(task), delay)
                if code == 0:
                    durations.append(took)  # it finished first: runs are this quick now
            else:
                code, _ = kill_after(
                    root, done_args(task), rng.uniform(0.0, 0.3), after_journal=True
                )
            sent += 1
            landed += code == -signal.SIGKILL
            interrupted += journal(root) is not None
            nxt = run(root, *done_args(task + 1))
            assert nxt.exit_code == 0, nxt.output
            rounds += 1
            check(root, task + 1)
    record_property(
        "campaign",
        f"random SIGKILL: {landed} kills landed of {sent} sent ({rounds} rounds in {projects} "
        f"projects; {interrupted} left a journal the next command finished or undid); "
        "0 corrupt files, 0 lost or duplicated entries or commits, 0 debris, index clean",
    )
    assert landed >= KILLS
