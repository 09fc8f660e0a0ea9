"""One command, one object: ``task done``, ``task start`` and ``checkpoint`` read the
item once and take the project lock once.

The real CLI runs in-process on a real project in a real git repository; only
loop's own item loader and lock are wrapped, to count their calls (each still
does its work). A second load would mean a decision taken on one copy of the
files and acted on with another; a second lock, a window in which another
command could change them in between.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers.project import NEXT, Spec, ok, project_copy, reset_records

import the_loop.checkpoint.lock
import the_loop.cli.cmd_tasks  # the commands, imported before counting
import the_loop.spec.items
import the_loop.workflow.task_transitions  # bound before the counting starts


class Counted:
    """Calls to one of loop's functions, wherever a module imported it from."""

    def __init__(self) -> None:
        self.calls = 0


def _count(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> Counted:
    original = getattr(module, name)
    counted = Counted()

    def wrapper(*args: object, **kwargs: object) -> object:
        counted.calls += 1
        return original(*args, **kwargs)

    # `from x import f` binds f in the importing module: replace every binding (the
    # defining module's too, so a module imported later binds the wrapper).
    for loaded in list(sys.modules.values()):
        if getattr(loaded, "__name__", "").startswith("the_loop") and (
            getattr(loaded, name, None) is original
        ):
            monkeypatch.setattr(loaded, name, wrapper)
    return counted


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], tuple[int, int]]]:
    """``counts()`` → (item loads, project locks) since the last call."""
    loads = _count(monkeypatch, the_loop.spec.items, "load_item")
    locks = _count(monkeypatch, the_loop.checkpoint.lock, "project_lock")

    def take() -> tuple[int, int]:
        found = (loads.calls, locks.calls)
        loads.calls = locks.calls = 0
        return found

    yield take


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    return project_copy(tmp_path_factory, tmp_path / "p")


def test_task_done_loads_the_item_once_and_locks_once(
    project: Path, counts: Callable[[], tuple[int, int]]
) -> None:
    counts()
    ok(project, "task", "done", "7", "1", "--did", "wrote the config key", "--next", NEXT)
    assert counts() == (1, 1)
    # The directive was printed and the reset is the harness's: marked by the core.
    (record,) = reset_records(project)
    assert record["state"] == "dispatched"


def test_task_done_with_its_test_runs_the_test_inside_the_one_lock(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    hermetic_env: Path,
    counts: Callable[[], tuple[int, int]],
) -> None:
    root = project_copy(
        tmp_path_factory,
        tmp_path / "p",
        tasks=(Spec("1", "passes", test="true"), Spec("2", "next", ("1",), test="true")),
    )
    counts()
    ran = ok(root, "task", "done", "7", "1", "--verify", "--did", "did it", "--next", NEXT)
    assert "running: true" in ran.output  # the test ran, shown by the CLI
    assert counts() == (1, 1)


def test_task_done_json_marks_the_reset_dispatched_in_the_core(
    project: Path, counts: Callable[[], tuple[int, int]]
) -> None:
    counts()
    ran = ok(project, "task", "done", "7", "1", "--did", "did it", "--next", NEXT, "--json")
    assert json.loads(ran.output)["reset"] == "compact"
    assert counts() == (1, 1)
    assert [r["state"] for r in reset_records(project)] == ["dispatched"]


def test_task_start_and_a_mid_task_checkpoint_load_once_and_lock_once(
    project: Path, counts: Callable[[], tuple[int, int]]
) -> None:
    counts()
    ok(project, "task", "start", "7", "1")
    assert counts() == (1, 1)
    ok(
        project,
        "checkpoint",
        "7",
        "--mid-task",
        "--tokens",
        "250000",
        "--window",
        "400000",
        "--did",
        "half of the config key",
        "--next",
        NEXT,
    )
    assert counts() == (1, 1)
    assert [r["state"] for r in reset_records(project)] == ["dispatched"]
