"""Issue 21: a person working by hand, without session ids, does not pile up open resets.

Before, each checkpoint left its reset open (six by review time, ``doctor`` exiting 1,
later driver runs opening with "aborted" lines): ``reset confirm`` refused without a
session id, and only the same known session's next checkpoint closed a reset.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.project import ok, project_copy, reset_records, run

from the_loop.checkpoint.resets import history

DID = ("--did", "the work", "--tests", "true: passed")


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    return project_copy(tmp_path_factory, tmp_path / "p")


def test_a_person_acknowledges_a_reset_without_a_session_id(project: Path) -> None:
    ok(project, "task", "done", "7", "1", *DID, "--next", "implement task 2: the ledger")
    assert len(reset_records(project)) == 1

    done = run(project, "reset", "confirm", "7")

    assert done.exit_code == 0, done.output
    assert "acknowledged by hand without a session id (unverified)" in done.stdout
    assert reset_records(project) == []
    assert run(project, "doctor").exit_code == 0


def test_the_next_checkpoint_by_hand_closes_the_open_reset_as_skipped_once(
    project: Path,
) -> None:
    ok(project, "task", "done", "7", "1", *DID, "--next", "implement task 2: the ledger")
    ok(project, "task", "done", "7", "3", *DID, "--next", "implement task 2: the ledger")
    ok(project, "task", "done", "7", "2", *DID, "--next", "review the work: loop work-on 7")

    states = [h["state"] for h in history(project, "issue-7")]
    assert states.count("skipped") == 2  # tasks 1 and 3, each closed once
    assert len(reset_records(project)) <= 1  # only the newest one is still open
