"""Resets a person can live with: skipped when the session goes on, closed at the end.

An open reset is completed by the hooks (tests/hooks), skipped when the same
session checkpoints again without it, and closed by `loop finish` and
`loop doctor --repair`; `loop status` counts the skipped ones.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.hooks import history
from helpers.project import Spec, ok, project_copy, reset_records, run

NEXT = "implement task 2: the retry ledger in ledger.py"


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = project_copy(tmp_path_factory, tmp_path / "project")
    ok(root, "execute-tasks", "7")
    return root


def mid(root: Path, session: str, percent: str = "95") -> None:
    ok(
        root,
        "checkpoint",
        "7",
        "--mid-task",
        "--percent",
        percent,
        "--did",
        "half of it",
        "--next",
        "finish the config key: the schema default",
        "--session",
        session,
    )


def test_the_next_checkpoint_of_the_same_session_skips_the_reset_it_owed(project: Path) -> None:
    mid(project, "s1")
    (first,) = reset_records(project)

    mid(project, "s1")  # s1 went on without compacting

    (second,) = reset_records(project)
    assert second["checkpoint"] != first["checkpoint"]
    skipped = history(project)[-1]
    assert (skipped["checkpoint"], skipped["state"]) == (first["checkpoint"], "skipped")
    assert skipped["note"] == "a later checkpoint came first and no compaction was seen"


def test_another_sessions_checkpoint_leaves_the_reset_open(project: Path) -> None:
    mid(project, "s1")
    mid(project, "s2")
    assert sorted(r["session"] for r in reset_records(project)) == ["s1", "s2"]


def test_a_checkpoint_without_a_reset_still_skips(project: Path) -> None:
    mid(project, "s1")
    mid(project, "s1", percent="10")  # no_op: no new reset, but s1 went on all the same
    assert reset_records(project) == []
    assert history(project)[-1]["state"] == "skipped"


def test_status_counts_the_skipped_resets(project: Path) -> None:
    for _ in range(3):
        mid(project, "s1")

    shown = ok(project, "status", "7").stdout
    data = json.loads(ok(project, "--json", "status", "7").stdout)

    assert data["skippedResets"] == 2
    assert "  resets     2 skipped (the session went on without the reset)" in shown.splitlines()


def test_doctor_repair_closes_what_is_left(project: Path) -> None:
    mid(project, "s1")
    mid(project, "s2")
    assert run(project, "doctor").exit_code == 1

    repair = run(project, "doctor", "--repair")

    assert repair.exit_code == 0, repair.output
    closed = [line for line in repair.stdout.splitlines() if line.startswith("closed open reset")]
    assert len(closed) == 2
    assert reset_records(project) == []
    assert [h["state"] for h in history(project)[-2:]] == ["aborted", "aborted"]
    assert history(project)[-1]["note"] == "closed by `loop doctor --repair`: never confirmed"


def test_finish_closes_the_items_open_resets(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = project_copy(tmp_path_factory, tmp_path / "one", tasks=(Spec("1", "only task"),))
    ok(root, "execute-tasks", "7")
    review = "review the work: `loop work-on issue-7`"
    ok(root, "task", "done", "7", "1", "--did", "all of it", "--next", review, "--session", "s1")
    # the last task's checkpoint is also the boundary into review: one reset for both
    assert [r["mode"] for r in reset_records(root)] == ["clear"]

    finished = ok(root, "--json", "finish", "7", "--by", "@rev")

    assert reset_records(root) == []
    # the finishing checkpoint settles it (and says so in the log's Corrections: line)
    assert json.loads(finished.stdout)["closedResets"] == []
    closed = history(root)[-1]
    assert (closed["mode"], closed["state"]) == ("clear", "superseded")
    assert closed["note"] == "the work item is complete, so nothing is left to reset"
