"""A command killed between a temp-file write and its rename leaves nothing to commit.

Issue 14, defect 6: a kill at that moment left ``.tasks.md.*.tmp`` in the spec
folder, and the next checkpoint's ``git add -A`` committed it. The kill is
injected with a test-side ``sitecustomize`` (tests/helpers/faults.py) at the
exact ``os.replace``/``os.rename`` of the write.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.faults import fault_site, run_faulty
from helpers.project import ITEM_DIR, NEXT, TASKS, git, journal, ok, project_copy, task_states

from the_loop.tasks import TaskState

DONE_3 = ("task", "done", "7", "3", "--did", "the give-up line", "--next", NEXT)


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    return project_copy(tmp_path_factory, tmp_path / "p")


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return fault_site(tmp_path / "site")


def committed_names(root: Path) -> list[str]:
    return git(root, "ls-files").split()


def temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.tmp") if ".git" not in p.parts]


@pytest.mark.parametrize(
    "command",
    [
        ("task", "start", "7", "1"),  # no journal: a plain atomic write
        ("task", "done", "7", "1", "--did", "x", "--next", NEXT),  # inside a checkpoint
    ],
    ids=["task-start", "task-done"],
)
def test_temp_file_of_a_killed_write_is_never_committed(
    project: Path, site: Path, command: tuple[str, ...]
) -> None:
    killed = run_faulty(
        project, *command, site=site, match=r"/tasks\.md$", fault="kill", ops="replace"
    )
    assert killed.returncode == -9, killed.output
    debris = temp_files(project)
    assert [p.parent for p in debris] == [project / ITEM_DIR], "the kill left its temp file"

    ok(project, *DONE_3)

    assert temp_files(project) == []
    assert not [n for n in committed_names(project) if n.endswith(".tmp")]
    assert task_states(project)["3"] is TaskState.DONE
    assert journal(project) is None


def test_staging_folder_debris_is_swept(project: Path, site: Path) -> None:
    killed = run_faulty(
        project,
        "new",
        "another thing",
        "--id",
        "issue-9",
        site=site,
        match=r"/\.issue-9\.[A-Za-z0-9_]{8}/execution-log\.md$",
        fault="kill",
        ops="open",
    )
    assert killed.returncode == -9, killed.output
    staging = [p for p in (project / "docs/specs").iterdir() if p.name.startswith(".issue-9.")]
    assert len(staging) == 1

    ok(project, *DONE_3)

    assert not any(p.name.startswith(".issue-9.") for p in (project / "docs/specs").iterdir())
    assert not [n for n in committed_names(project) if ".issue-9." in n]


def test_a_users_own_tmp_file_is_left_alone(project: Path) -> None:
    mine = project / ITEM_DIR / "notes.tmp"
    mine.write_text("mine")
    lookalike = project / ITEM_DIR / ".tasks.md.notmine.tmp"  # not mkstemp's 8 characters
    lookalike.write_text("mine too")

    ok(project, *DONE_3)

    assert mine.read_text() == "mine"
    assert lookalike.read_text() == "mine too"
    assert (project / TASKS).is_file()


def test_a_cache_write_cut_short_is_swept_once_its_writer_is_gone(project: Path) -> None:
    """A read command killed while it wrote the parse cache or a kept answer (no lock held)."""
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead_pid = int(gone.stdout)  # that process has exited
    cache = project / ".the-loop/state/cache"
    answers = cache / "answers"
    answers.mkdir(parents=True)
    dead = [
        cache / f".tasks-0123abcd.entry.{dead_pid}.0a1b2c3d.tmp",
        answers / f".0123abcd0123abcd.answer.{dead_pid}.89abcdef.tmp",
    ]
    alive = cache / f".tasks-4567abcd.entry.{os.getpid()}.0a1b2c3d.tmp"  # a writer still at work
    for path in (*dead, alive):
        path.write_bytes(b"half an entry")

    ok(project, *DONE_3)

    assert [p for p in dead if p.exists()] == []
    assert alive.read_bytes() == b"half an entry"
    assert "cache" not in " ".join(committed_names(project))
